/* Neuron Explorer's Parquet output (profile schema 7.4.0, aws-neuron-sdk
 * tools/neuron-explorer/profile-schema-reference.rst) read through the same
 * code as its JSON exports: a profile folder holds one file per table
 * (<Table>.parquet, or <Table>_<k>.parquet when split), and each table the
 * readers need is streamed as the JSON export's array of the same content,
 * one row as one object (docs/neuron.md "Parquet"). devprof.c and sysprof.c
 * then see the rows exactly as they see JSON elements, so units, engines,
 * correlation and everything after them are shared. */
#include "ntff/ntff-internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "common/vec.h"
#include "ntff/parquet.h"

#define PQ_EXT ".parquet"

/* The columns read from the big timeline tables (NULL: every column). */
static const char *const timeline_cols[] = { "start_ts", "end_ts", "duration_ns", "engine", "timeline_track", NULL };
/* Instruction adds the fields --device-detail groups by (docs/neuron.md "Device detail"). */
static const char *const instruction_cols[] = { "start_ts", "end_ts", "duration_ns", "engine", "timeline_track",
						"opcode", "hlo_name", "layer", NULL };

/* Table -> the JSON export's key. A set is read in this order; a table
 * with a fallback is read only when the one before it is absent. */
static const struct pq_table {
	const char *table;
	const char *key;
	bool system;                 /* a system-profile table */
	bool fallback;               /* read only if the previous table has no file */
	const char *const *cols;
} tables[] = {
	{ "Summary", "summary", false, false, NULL },
	{ "Metadata", "metadata", false, false, NULL },
	{ "ExecutionInfo", "profile_info", false, false, NULL },
	{ "Instruction", "instruction", false, false, instruction_cols },
	{ "DmaPacket", "dma", false, false, timeline_cols },
	{ "DmaPacketAggregated", "dma", false, true, timeline_cols },
	{ "ActiveTime", "active_time", false, false, NULL },
	{ "Warning", "warnings", false, false, NULL },
	{ "ThrottleSummary", "throttle_summary", false, false, NULL },
	{ "SystemProfileMetadata", "system_profile_metadata", true, false, NULL },
	{ "DeviceProfileList", "device_profile_list", true, false, NULL },
	{ "SystemProfileEvents", "trace_event", true, false, NULL },
};
#define N_TABLES NS_ARRAY_SIZE(tables)

bool pq_export_is(const char *path)
{
	size_t n = strlen(path);
	return n > strlen(PQ_EXT) && strcmp(path + n - strlen(PQ_EXT), PQ_EXT) == 0;
}

/* "<table>.parquet" or "<table>_<k>.parquet" -> the table's index and k. */
static bool table_of(const char *name, size_t *t, long *k)
{
	size_t n = strlen(name);
	if (n <= strlen(PQ_EXT) || strcmp(name + n - strlen(PQ_EXT), PQ_EXT) != 0)
		return false;
	n -= strlen(PQ_EXT);
	for (size_t i = 0; i < N_TABLES; i++) {
		size_t l = strlen(tables[i].table);
		if (n < l || strncmp(name, tables[i].table, l) != 0)
			continue;
		if (n == l) {
			*t = i;
			*k = -1;
			return true;
		}
		if (name[l] != '_' || n == l + 1 || n - l - 1 > 9)
			continue;
		long v = 0;
		size_t j = l + 1;
		for (; j < n && name[j] >= '0' && name[j] <= '9'; j++)
			v = v * 10 + (name[j] - '0');
		if (j == n) {
			*t = i;
			*k = v;
			return true;
		}
	}
	return false;
}

bool pq_export_system(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t t;
	long k;
	return table_of(slash ? slash + 1 : path, &t, &k) && tables[t].system;
}

struct part {
	size_t table;
	long k;
	char *path;
};

static int cmp_parts(const void *a, const void *b)
{
	const struct part *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* Streams one table file's rows as objects to cb. */
static int stream_file(const char *path, const struct pq_table *tb, const struct ns_json_stream_cb *cb, void *ctx,
		       struct ns_error *err)
{
	struct ns_pq_file *f = NULL;
	struct ns_pq_cells *cells = NULL;
	size_t *cols = NULL, n_cols = 0;
	struct ns_pq_text row = { 0 };
	int rc;
	if ((rc = ns_pq_open(path, &f, err)))
		return rc;
	if (!(cols = calloc(f->n_cols + 1, sizeof(*cols))) || !(cells = calloc(f->n_cols + 1, sizeof(*cells)))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
		goto out;
	}
	for (size_t c = 0; c < f->n_cols; c++) {
		/* every column of a small table, but those of a type outside the
		 * subset (a later schema may add one); the columns a reader needs,
		 * whatever their type (ns_pq_read refuses what it cannot decode) */
		bool want = !tb->cols && !f->cols[c].unsupported;
		for (size_t w = 0; tb->cols && tb->cols[w] && !want; w++)
			want = strcmp(tb->cols[w], f->cols[c].name) == 0;
		if (want)
			cols[n_cols++] = c;
	}
	/* rows are counted by the columns read (the footer's count alone is not trusted) */
	for (size_t g = 0; g < f->n_groups && n_cols && !rc; g++) {
		for (size_t c = 0; c < n_cols && !rc; c++)
			rc = ns_pq_read(f, g, cols[c], &cells[c], err);
		uint64_t offset = f->groups[g].chunks[0].start;
		for (size_t r = 0; r < (size_t)f->groups[g].n_rows && !rc; r++) {
			row.n = 0;
			bool first = true;
			rc = ns_pq_text_add(&row, "{", 1);
			for (size_t c = 0; c < n_cols && !rc; c++) {
				const char *name = f->cols[cols[c]].name;
				if (ns_pq_cell_null(f, cols[c], &cells[c], r))
					continue; /* absent, as a JSON export leaves out a key it has no value for */
				rc = (!first && ns_pq_text_add(&row, ",", 1)) ||
				     ns_pq_text_string(&row, (const unsigned char *)name, strlen(name)) ||
				     ns_pq_text_add(&row, ":", 1) || ns_pq_cell_json(f, cols[c], &cells[c], r, &row);
				first = false;
			}
			if (rc || ns_pq_text_add(&row, "}", 1)) {
				rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
				break;
			}
			struct ns_jv v = { row.p, row.n, 'o', false };
			rc = cb->on_elem(ctx, tb->key, &v, offset, err);
		}
		for (size_t c = 0; c < n_cols; c++)
			ns_pq_cells_release(&cells[c]);
	}
out:
	ns_pq_text_release(&row);
	free(cells);
	free(cols);
	ns_pq_close(f);
	return rc;
}

int pq_export_stream(const char *path, const struct ns_json_stream_cb *cb, void *ctx, int64_t *truncated_at,
		     struct ns_error *err)
{
	bool system = pq_export_system(path);
	char *dir = ns_capture_folder(path);
	struct part *parts = NULL;
	size_t n = 0, cap = 0;
	DIR *d = NULL;
	int rc = 0;
	*truncated_at = -1;
	if (!dir || !(d = opendir(dir))) {
		rc = dir ? ns_error_set(err, NS_ERR_IO, "%s: cannot read its folder", path)
			 : ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (struct dirent *de; (de = readdir(d)) != NULL;) {
		size_t t;
		long k;
		if (!table_of(de->d_name, &t, &k) || tables[t].system != system)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct part *grown = realloc(parts, cap * sizeof(*grown));
			if (!grown) {
				rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
				goto out;
			}
			parts = grown;
		}
		parts[n].table = t;
		parts[n].k = k;
		if (asprintf(&parts[n].path, "%s/%s", dir, de->d_name) < 0) {
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			goto out;
		}
		n++;
	}
	ns_sort(parts, n, sizeof(*parts), cmp_parts);
	for (size_t i = 0; i < n && !rc;) {
		size_t t = parts[i].table, end = i;
		while (end < n && parts[end].table == t)
			end++;
		bool skip = tables[t].fallback && i > 0 && parts[i - 1].table == t - 1;
		int how = skip ? NS_JS_SKIP : cb->on_key(ctx, tables[t].key);
		for (size_t j = i; j < end && !rc && how != NS_JS_SKIP; j++)
			rc = stream_file(parts[j].path, &tables[t], cb, ctx, err);
		i = end;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(parts[i].path);
	free(parts);
	if (d)
		closedir(d);
	free(dir);
	return rc;
}
