/* Neuron capture directories: discovery, classification and pairing
 * (docs/neuron.md "Capture directories"; neuron-formats.md §2). */
#include "ntff/capture.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/vec.h"
#include "ingest/ingest.h" /* ns_dirset */
#include "ingest/source.h"
#include "neff/neff.h"

#define SNIFF_BYTES 65536
#define MAX_DEPTH 16

static const char *const kind_names[NS_CAP__COUNT] = {
	[NS_CAP_TRACE] = "framework trace",
	[NS_CAP_NEFF] = "NEFF",
	[NS_CAP_NTFF] = "NTFF",
	[NS_CAP_PB] = "runtime trace",
	[NS_CAP_SYSTEM_JSON] = "system-profile export",
	[NS_CAP_DEVICE_JSON] = "device-profile export",
	[NS_CAP_SUMMARY_JSON] = "summary-json export",
	[NS_CAP_PARQUET] = "Parquet export",
	[NS_CAP_PERFETTO] = "Perfetto export",
};

const char *ns_cap_kind_name(enum ns_cap_kind k)
{
	return k < NS_CAP__COUNT ? kind_names[k] : "";
}

/* Top-level keys that identify a JSON export (§3.4); the first match wins,
 * so Kineto's keys come first. */
static const struct {
	const char *key;
	enum ns_cap_kind kind;
} json_markers[] = {
	{ "traceEvents", NS_CAP_TRACE },
	{ "schemaVersion", NS_CAP_TRACE },
	{ "system_profile_metadata", NS_CAP_SYSTEM_JSON },
	{ "device_profile_list", NS_CAP_SYSTEM_JSON },
	{ "trace_event", NS_CAP_SYSTEM_JSON },
	{ "trace_events", NS_CAP_SYSTEM_JSON },
	{ "data_version", NS_CAP_SYSTEM_JSON }, /* nrt_sys_trace_fetch_events */
	{ "instruction", NS_CAP_DEVICE_JSON },
	{ "active_time", NS_CAP_DEVICE_JSON },
	{ "profile_info", NS_CAP_DEVICE_JSON },
	{ "layer_summary", NS_CAP_DEVICE_JSON },
	{ "dma", NS_CAP_DEVICE_JSON },
	{ "neff_node", NS_CAP_DEVICE_JSON },
	{ "summary", NS_CAP_DEVICE_JSON },
};

static const char *const pb_names[] = {
	[NS_PB_NTRACE] = "ntrace.pb",
	[NS_PB_TRACE_INFO] = "trace_info.pb",
	[NS_PB_CPU_UTIL] = "cpu_util.pb",
	[NS_PB_HOST_MEM] = "host_mem.pb",
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Parses decimal digits at *p (advancing it); -1 if there are none. */
static int64_t digits(const char **p)
{
	int64_t v = 0;
	const char *s = *p;
	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) /* saturates: hashes are u64 text, kept as text */
		v = v < (INT64_MAX - 9) / 10 ? v * 10 + (*s - '0') : INT64_MAX;
	*p = s;
	return v;
}

/* Matches lit at *p (advancing it). */
static bool eat(const char **p, const char *lit)
{
	size_t n = strlen(lit);
	if (strncmp(*p, lit, n) != 0)
		return false;
	*p += n;
	return true;
}

static void copy_text(char *out, size_t n, const char *s, size_t len)
{
	if (len >= n)
		len = n - 1;
	memcpy(out, s, len);
	out[len] = '\0';
}

/* NTFF names of §2.2. */
static void parse_ntff_name(const char *name, struct ns_cap_file *f)
{
	size_t len = strlen(name) - 5; /* without ".ntff" */
	const char *p = name;
	int64_t a, b, c;
	copy_text(f->stem, sizeof(f->stem), name, len);
	f->naming = NS_NTFF_OTHER;
	if (eat(&p, "profile_nc_") && (a = digits(&p)) >= 0 && eat(&p, "_session_") &&
	    (b = digits(&p)) >= 0 && strcmp(p, ".ntff") == 0) {
		f->naming = NS_NTFF_SESSION;
		f->nc = a;
		f->session = b;
		return;
	}
	p = name;
	const char *hash = p;
	if ((a = digits(&p)) >= 0) {
		size_t hash_len = (size_t)(p - hash);
		if (eat(&p, "_instid_") && (b = digits(&p)) >= 0 && eat(&p, "_vnc_") && (c = digits(&p)) >= 0 &&
		    strcmp(p, ".ntff") == 0) {
			f->naming = NS_NTFF_MODEL;
			copy_text(f->hash, sizeof(f->hash), hash, hash_len);
			f->instid = b;
			f->nc = c;
		}
		return;
	}
	p = name;
	if (eat(&p, "profile")) {
		if (strcmp(p, ".ntff") == 0) {
			f->naming = NS_NTFF_CLI;
		} else if (eat(&p, "_rank_") && (a = digits(&p)) >= 0 && strcmp(p, ".ntff") == 0) {
			f->naming = NS_NTFF_CLI;
			f->cli_rank = a;
		} else if (eat(&p, "_exec_") && (a = digits(&p)) >= 0 && strcmp(p, ".ntff") == 0) {
			f->naming = NS_NTFF_CLI;
			f->exec = a;
		}
		return;
	}
	p = name;
	if (eat(&p, "model_") && digits(&p) >= 0 && eat(&p, "_pid_") && digits(&p) >= 0 && eat(&p, "_vnc_") &&
	    (a = digits(&p)) >= 0 && (*p == '_' || *p == '.')) {
		f->naming = NS_NTFF_CONTINUOUS;
		f->nc = a;
	}
}

/* Export names: "<ntff stem>__neff_<hash>[.summary].json" (what neuron-stats
 * converts to), "..._nc_<N>_session_<S>.json", "..._nc_<N>_model_<hash>.json". */
static void parse_export_name(const char *name, struct ns_cap_file *f)
{
	const char *sep = strstr(name, "__neff_");
	if (sep) {
		const char *h = sep + 7, *e = h;
		while (isalnum((unsigned char)*e))
			e++;
		copy_text(f->stem, sizeof(f->stem), name, (size_t)(sep - name));
		copy_text(f->hash, sizeof(f->hash), h, (size_t)(e - h));
		return;
	}
	const char *nc = NULL, *m = name;
	int64_t id;
	if (eat(&m, "device_profile_model_") && (id = digits(&m)) >= 0 && *m == '.') {
		f->model_id = id; /* the NEFF comes from model_name inside (sniff_model_name) */
		return;
	}
	for (const char *p = strstr(name, "_nc_"); p; p = strstr(p + 1, "_nc_"))
		nc = p;
	if (!nc)
		return;
	/* "<instance>_pid_<pid>_nc_...": whose process it is (neuron-explorer
	 * view -d writes these at the top of the capture folder) */
	const char *pid = strstr(name, "_pid_");
	if (pid && pid < nc && pid > name) {
		const char *q = pid + 5;
		int64_t v = digits(&q);
		if (v >= 0 && q == nc) {
			copy_text(f->instance, sizeof(f->instance), name, (size_t)(pid - name));
			f->pid = v;
		}
	}
	const char *p = nc + 4;
	int64_t n = digits(&p), s;
	if (n < 0)
		return;
	if (eat(&p, "_session_") && (s = digits(&p)) >= 0) {
		f->nc = n;
		f->session = s;
	} else if (eat(&p, "_model_")) {
		const char *h = p;
		while (isalnum((unsigned char)*p))
			p++;
		f->nc = n;
		copy_text(f->hash, sizeof(f->hash), h, (size_t)(p - h));
	}
}

/* A file that cannot be read is no capture file of its kind, but an
 * allocation that failed while reading it must not pass for that: the
 * sniffers below return -1 then (exit 6, not a file silently left out). */
static bool source_oom(const struct ns_error *err)
{
	return err->status == NS_ERR_NOMEM;
}

/* Reads up to SNIFF_BYTES (decompressed) of path into buf; *len: the
 * length. -1 on OOM. */
static int sniff(const char *path, char *buf, size_t *len)
{
	struct ns_source *src = NULL;
	struct ns_error err = { 0 };
	*len = 0;
	if (ns_source_open(path, 0, 0, &src, &err) == 0) {
		while (*len < SNIFF_BYTES) {
			ssize_t got = ns_source_read(src, buf + *len, SNIFF_BYTES - *len, &err);
			if (got <= 0)
				break;
			*len += (size_t)got;
		}
	}
	ns_source_close(src);
	buf[*len] = '\0';
	return source_oom(&err) ? -1 : 0;
}

static bool is_summary_id(const char *k, size_t len)
{
	if (len < 10 || (k[0] != 'n' && k[0] != 's') || k[1] != '_')
		return false;
	for (size_t i = 2; i < len; i++)
		if (!isxdigit((unsigned char)k[i]))
			return false;
	return true;
}

/* A streaming walk over the top-level keys of a JSON object: one byte at a
 * time, holding only the key being read (keys longer than the buffer match
 * nothing). */
struct key_walk {
	int depth;
	bool in_str, esc, want_key, in_key, started, not_object;
	char key[64];
	size_t key_len;
	bool key_long;
};

/* Feeds one byte; true when it completed a top-level key (in w->key). */
static bool key_walk_byte(struct key_walk *w, char c)
{
	if (w->in_str) {
		if (w->esc) {
			w->esc = false;
		} else if (c == '\\') {
			w->esc = true;
		} else if (c == '"') {
			w->in_str = false;
			if (w->in_key) {
				w->in_key = false;
				return !w->key_long;
			}
			return false;
		}
		if (w->in_key) {
			if (w->key_len + 1 < sizeof(w->key))
				w->key[w->key_len++] = c;
			else
				w->key_long = true;
			w->key[w->key_len] = '\0';
		}
		return false;
	}
	if (isspace((unsigned char)c))
		return false;
	if (!w->started) {
		w->started = true;
		w->not_object = c != '{';
	}
	switch (c) {
	case '"':
		w->in_str = true;
		if (w->depth == 1 && w->want_key) {
			w->in_key = true;
			w->want_key = false;
			w->key_len = 0;
			w->key_long = false;
			w->key[0] = '\0';
		}
		break;
	case '{':
	case '[':
		if (++w->depth == 1)
			w->want_key = c == '{';
		break;
	case '}':
	case ']':
		w->depth--;
		break;
	case ',':
		w->want_key = w->depth == 1;
		break;
	default:
		break;
	}
	return false;
}

/* The export kind from the top-level keys (docs/neuron.md "File names"):
 * a node id as the first key is summary-json; otherwise the best marker
 * among the keys of the first SNIFF_BYTES, else the first marker after
 * them, at any position in the file (read streaming, to its end if need
 * be: a fetch-events export may hold megabytes of events before its
 * data_version, a sorted system export its cpu_util before the rest). */
static int sniff_json(const char *path, enum ns_cap_kind *kind_out)
{
	enum { N_MARKERS = NS_ARRAY_SIZE(json_markers) };
	struct ns_source *src = NULL;
	struct ns_error err = { 0 };
	struct key_walk w = { 0 };
	char *buf = malloc(SNIFF_BYTES);
	size_t best = N_MARKERS, keys = 0;
	uint64_t at = 0;
	enum ns_cap_kind kind = NS_CAP__COUNT;
	if (!buf)
		err.status = NS_ERR_NOMEM;
	if (!buf || ns_source_open(path, 0, 0, &src, &err) != 0)
		goto out;
	for (;;) {
		ssize_t got = ns_source_read(src, buf, SNIFF_BYTES, &err);
		if (got <= 0)
			break;
		for (ssize_t i = 0; i < got; i++) {
			if (!key_walk_byte(&w, buf[i])) {
				if (w.not_object || (w.started && w.depth == 0))
					goto decide;
				continue;
			}
			if (keys++ == 0 && is_summary_id(w.key, w.key_len)) {
				kind = NS_CAP_SUMMARY_JSON;
				goto out;
			}
			for (size_t m = 0; m < best; m++)
				if (strcmp(json_markers[m].key, w.key) == 0)
					best = m;
			if (best < N_MARKERS && at + (uint64_t)i >= SNIFF_BYTES)
				goto decide;
		}
		at += (uint64_t)got;
		if (best < N_MARKERS && at >= SNIFF_BYTES)
			break;
	}
decide:
	if (best < N_MARKERS)
		kind = json_markers[best].kind;
out:
	ns_source_close(src);
	free(buf);
	*kind_out = kind;
	return source_oom(&err) ? -1 : 0;
}

/* Explorer writes a processed profile as a folder of tables (parquet.c,
 * pqexport.c). Its one-row metadata table stands for the whole folder: a
 * device-profile export (Metadata.parquet) or a system-profile export
 * (SystemProfileMetadata.parquet), named after the folder
 * ("<ntff stem>__neff_<hash>[@latest]", as --output-file DIR writes it).
 * The folder's other tables are part of that export (not listed); a table
 * in a folder without one is a Parquet file (listed, not read). */
static bool parquet_anchor(const char *name, enum ns_cap_kind *kind)
{
	if (strcmp(name, "Metadata.parquet") == 0)
		*kind = NS_CAP_DEVICE_JSON;
	else if (strcmp(name, "SystemProfileMetadata.parquet") == 0)
		*kind = NS_CAP_SYSTEM_JSON;
	else
		return false;
	return true;
}

static enum ns_cap_kind parquet_profile_kind(const char *path, const char *name, struct ns_cap_file *f)
{
	enum ns_cap_kind kind;
	char folder[256];
	if (!parquet_anchor(name, &kind))
		return NS_CAP_PARQUET;
	if (kind == NS_CAP_DEVICE_JSON && name > path + 1) {
		const char *end = name - 1, *start = end;
		while (start > path && start[-1] != '/')
			start--;
		copy_text(folder, sizeof(folder), start, (size_t)(end - start));
		char *at = strstr(folder, "@latest");
		if (at)
			*at = '\0';
		parse_export_name(folder, f);
	}
	return kind;
}

/* The NEFF of a device export whose name does not say it: the first
 * "model_name" string holding a NEFF path (AWS's exports carry the path
 * there), read streaming; hash "" when there is none. -1 on OOM. */
static int sniff_model_name(const char *path, char *hash, size_t n)
{
	static const char key[] = "\"model_name\"";
	enum { KEEP = 1024 };
	struct ns_source *src = NULL;
	struct ns_error err = { 0 };
	char *buf = malloc(SNIFF_BYTES + KEEP + 1);
	size_t have = 0;
	hash[0] = '\0';
	if (!buf)
		err.status = NS_ERR_NOMEM;
	if (!buf || ns_source_open(path, 0, 0, &src, &err) != 0)
		goto out;
	for (;;) {
		ssize_t got = ns_source_read(src, buf + have, SNIFF_BYTES, &err);
		if (got <= 0)
			break;
		have += (size_t)got;
		buf[have] = '\0';
		for (const char *k = memmem(buf, have, key, sizeof(key) - 1); k;
		     k = memmem(k + 1, have - (size_t)(k + 1 - buf), key, sizeof(key) - 1)) {
			const char *v = k + sizeof(key) - 1, *end = buf + have;
			while (v < end && (isspace((unsigned char)*v) || *v == ':'))
				v++;
			const char *close = v < end && *v == '"' ? memchr(v + 1, '"', (size_t)(end - v - 1)) : NULL;
			if (!close)
				continue; /* cut by the read (looked at again with the next) or not a string */
			if (memmem(v + 1, (size_t)(close - v - 1), ".neff", 5)) {
				ns_neff_hash_normalize(v + 1, (size_t)(close - v - 1), hash, n);
				goto out;
			}
		}
		/* keep the tail: a key or value cut by the read */
		if (have > KEEP) {
			memmove(buf, buf + have - KEEP, KEEP);
			have = KEEP;
		}
	}
out:
	ns_source_close(src);
	free(buf);
	return source_oom(&err) ? -1 : 0;
}

int ns_capture_classify(const char *path, struct ns_cap_file *f, struct ns_error *err)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	struct ns_neff_filename nf;
	memset(f, 0, sizeof(*f));
	f->nc = f->session = f->instid = f->cli_rank = f->exec = f->model_id = f->pid = -1;
	if (ends_with(name, ".neff")) {
		f->kind = NS_CAP_NEFF;
		if (ns_neff_parse_filename(name, &nf)) {
			snprintf(f->hash, sizeof(f->hash), "%s", nf.hash);
			f->nc = nf.vnc;
		}
	} else if (ends_with(name, ".ntff")) {
		f->kind = NS_CAP_NTFF;
		parse_ntff_name(name, f);
	} else if (ends_with(name, ".pb")) {
		f->kind = NS_CAP_PB;
		f->naming = NS_PB_OTHER;
		for (size_t i = 0; i < NS_ARRAY_SIZE(pb_names); i++)
			if (strcmp(name, pb_names[i]) == 0)
				f->naming = (uint8_t)i;
	} else if (ends_with(name, ".parquet")) {
		f->kind = parquet_profile_kind(path, name, f);
	} else if (ends_with(name, ".pftrace")) {
		f->kind = NS_CAP_PERFETTO;
	} else if (ends_with(name, ".json") || ends_with(name, ".json.gz") || ends_with(name, ".json.zst")) {
		if (sniff_json(path, &f->kind))
			goto oom;
		if (f->kind == NS_CAP__COUNT)
			return 0;
		if (f->kind == NS_CAP_DEVICE_JSON || f->kind == NS_CAP_SUMMARY_JSON)
			parse_export_name(name, f);
		if (f->kind == NS_CAP_DEVICE_JSON && !f->stem[0] && !f->hash[0] && f->session < 0 &&
		    sniff_model_name(path, f->hash, sizeof(f->hash)))
			goto oom;
	} else {
		return 0;
	}
	return 1;
oom:
	ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
	return -1;
}

/* ---- walking ---- */

struct file_list {
	struct ns_cap_file *v;
	size_t n, cap;
};

static int push_file(struct file_list *l, const struct ns_cap_file *f)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		struct ns_cap_file *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *f;
	return 0;
}

static void set_name(struct ns_cap_file *f)
{
	const char *slash = strrchr(f->path, '/');
	enum ns_cap_kind anchor;
	f->name = slash ? slash + 1 : f->path;
	if (slash && parquet_anchor(f->name, &anchor)) { /* "<profile folder>/Metadata.parquet" */
		const char *p = slash;
		while (p > f->path && p[-1] != '/')
			p--;
		f->name = p;
	}
}

/* A table of a Parquet profile folder other than its metadata table: part
 * of the export its metadata table stands for, not a file of its own.
 * 1 when it is, 0 when not, -1 on OOM. */
static int parquet_table_of_profile(const char *path)
{
	static const char *const anchors[] = { "Metadata.parquet", "SystemProfileMetadata.parquet" };
	char *dir = ns_capture_folder(path);
	int found = dir ? 0 : -1;
	for (size_t i = 0; dir && i < NS_ARRAY_SIZE(anchors) && !found; i++) {
		char *meta;
		if (asprintf(&meta, "%s/%s", dir, anchors[i]) < 0) {
			found = -1;
			break;
		}
		found = access(meta, F_OK) == 0 ? 1 : errno == ENOMEM ? -1 : 0;
		free(meta);
	}
	free(dir);
	return found;
}

/* Adds the capture file at path (stat'ed as st) to l, if it is one. -1 on
 * OOM. */
static int add_if_capture(struct file_list *l, const char *path, const struct stat *st, bool converted)
{
	struct ns_cap_file f;
	int is = ns_capture_classify(path, &f, NULL);
	if (is <= 0)
		return is;
	if (f.kind == NS_CAP_PARQUET && (is = parquet_table_of_profile(path)) != 0)
		return is < 0 ? -1 : 0;
	if (converted && f.kind != NS_CAP_SYSTEM_JSON && f.kind != NS_CAP_DEVICE_JSON &&
	    f.kind != NS_CAP_SUMMARY_JSON)
		return 0;
	f.size = (uint64_t)st->st_size;
	f.converted = converted;
	if (!(f.path = strdup(path)))
		return -1;
	set_name(&f);
	if (push_file(l, &f)) {
		free(f.path);
		return -1;
	}
	return 0;
}

static int visit_capture_file(void *ctx, const char *path, const char *name, const struct stat *st,
			      struct ns_error *err)
{
	(void)name;
	return add_if_capture(ctx, path, st, false) ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
}

/* A shallow scan: the folder's own files, and the Parquet profile folders
 * in it (their metadata tables). */
struct shallow_ctx {
	struct file_list *l;
	const char *root;
};

static int visit_shallow(void *ctx, const char *path, const char *name, const struct stat *st, struct ns_error *err)
{
	struct shallow_ctx *c = ctx;
	size_t n = strlen(c->root);
	enum ns_cap_kind kind;
	bool own = strncmp(path, c->root, n) == 0 && path[n] == '/' && !strchr(path + n + 1, '/');
	if (!own && !parquet_anchor(name, &kind))
		return 0;
	return visit_capture_file(c->l, path, name, st, err);
}

static int cmp_files(const void *a, const void *b)
{
	const struct ns_cap_file *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->path, y->path);
}

char *ns_capture_folder(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* "<instance>_pid_<pid>" (docs) or "<instance>-<pid>" (RE). */
static bool parse_process_dir(const char *name, struct ns_cap_unit *u)
{
	const char *sep = strstr(name, "_pid_"), *num;
	if (sep) {
		num = sep + 5;
	} else {
		sep = strrchr(name, '-');
		if (!sep)
			return false;
		num = sep + 1;
	}
	if (sep == name || !all_digits(num))
		return false;
	copy_text(u->instance, sizeof(u->instance), name, (size_t)(sep - name));
	u->pid = strtoll(num, NULL, 10);
	return true;
}

/* distributedInfo.rank of the trace at path into *rank (-1 if none); -1
 * on OOM. */
static int sniff_rank(const char *path, int64_t *rank)
{
	char *buf = malloc(SNIFF_BYTES + 1);
	size_t n;
	*rank = -1;
	if (!buf || sniff(path, buf, &n)) {
		free(buf);
		return -1;
	}
	const char *di = memmem(buf, n, "\"distributedInfo\"", 17);
	if (di) {
		const char *end = memchr(di, '}', n - (size_t)(di - buf));
		const char *r = memmem(di, (size_t)((end ? end : buf + n) - di), "\"rank\"", 6);
		if (r) {
			r += 6;
			while (*r == ' ' || *r == ':' || *r == '\t' || *r == '\n' || *r == '\r')
				r++;
			*rank = digits(&r);
		}
	}
	free(buf);
	return 0;
}

/* The instance, pid and session of a unit from its folder's name; -1 on
 * OOM. */
static int describe_unit(struct ns_cap_unit *u)
{
	const char *name = base_of(u->dir);
	u->pid = -1;
	u->rank = -1;
	if (all_digits(name) && strlen(name) >= 9) {
		char *parent = ns_capture_folder(u->dir);
		if (!parent)
			return -1;
		copy_text(u->session, sizeof(u->session), name, strlen(name));
		parse_process_dir(base_of(parent), u);
		free(parent);
	} else {
		parse_process_dir(name, u);
	}
	return 0;
}

/* ---- pairing ---- */

static int add_pair(struct ns_cap_unit *u, size_t neff, size_t ntff)
{
	struct ns_cap_pair *v = realloc(u->pairs, (u->n_pairs + 1) * sizeof(*v));
	if (!v)
		return -1;
	u->pairs = v;
	u->pairs[u->n_pairs++] = (struct ns_cap_pair){ neff, ntff, -1, -1 };
	return 0;
}

static int add_gap(struct ns_cap_unit *u, enum ns_cap_gap_kind kind, int64_t file, int64_t pair)
{
	struct ns_cap_gap *v = realloc(u->gaps, (u->n_gaps + 1) * sizeof(*v));
	if (!v)
		return -1;
	u->gaps = v;
	u->gaps[u->n_gaps++] = (struct ns_cap_gap){ kind, file, pair };
	return 0;
}

/* NEFF <-> NTFF (§2.3): model mode by the hash in both names (same vnc
 * preferred); session and continuous mode with every NEFF of the NTFF's
 * core (or every NEFF when the NEFF names carry no vnc); CLI and other
 * names only when there is exactly one NEFF. */
static int pair_ntff(struct ns_cap_unit *u, size_t t)
{
	const struct ns_cap_file *ntff = &u->files[t];
	size_t n_neff = 0, only = 0;
	int64_t best = -1;
	if (ntff->size == 0)
		return 0; /* an empty NTFF (a capture that never wrote) is no device trace */
	for (size_t k = 0; k < u->n_files; k++)
		if (u->files[k].kind == NS_CAP_NEFF) {
			n_neff++;
			only = k;
		}
	if (ntff->hash[0]) {
		for (size_t k = 0; k < u->n_files; k++) {
			const struct ns_cap_file *f = &u->files[k];
			if (f->kind != NS_CAP_NEFF || strcmp(f->hash, ntff->hash) != 0)
				continue;
			if (best < 0 || (f->nc == ntff->nc && u->files[best].nc != ntff->nc))
				best = (int64_t)k;
		}
		return best >= 0 ? add_pair(u, (size_t)best, t) : 0;
	}
	if (ntff->nc >= 0) {
		bool any_nc = false;
		for (size_t k = 0; k < u->n_files; k++)
			any_nc |= u->files[k].kind == NS_CAP_NEFF && u->files[k].nc == ntff->nc;
		for (size_t k = 0; k < u->n_files; k++) {
			const struct ns_cap_file *f = &u->files[k];
			if (f->kind == NS_CAP_NEFF && (any_nc ? f->nc == ntff->nc : f->nc < 0) && add_pair(u, k, t))
				return -1;
		}
		return 0;
	}
	return n_neff == 1 ? add_pair(u, only, t) : 0;
}

static bool export_matches(const struct ns_cap_file *e, const struct ns_cap_file *neff,
			   const struct ns_cap_file *ntff, int how)
{
	switch (how) {
	case 0: /* names the NTFF (and the NEFF, when it names one) */
		return e->stem[0] && strcmp(e->stem, ntff->stem) == 0 && (!e->hash[0] || strcmp(e->hash, neff->hash) == 0);
	case 1: /* names the NEFF hash (and the core, when both say) */
		return !e->stem[0] && e->hash[0] && strcmp(e->hash, neff->hash) == 0 &&
		       (e->nc < 0 || ntff->nc < 0 || e->nc == ntff->nc);
	default: /* names the session NTFF's core and session */
		return !e->stem[0] && !e->hash[0] && e->session >= 0 && e->session == ntff->session && e->nc == ntff->nc;
	}
}

static void pair_exports(struct ns_cap_unit *u, bool *claimed)
{
	for (int how = 0; how < 3; how++) {
		for (size_t p = 0; p < u->n_pairs; p++) {
			struct ns_cap_pair *pr = &u->pairs[p];
			for (size_t k = 0; k < u->n_files; k++) {
				const struct ns_cap_file *e = &u->files[k];
				int64_t *slot = e->kind == NS_CAP_DEVICE_JSON ? &pr->device_json
						: e->kind == NS_CAP_SUMMARY_JSON ? &pr->summary_json : NULL;
				if (!slot || *slot >= 0 || !export_matches(e, &u->files[pr->neff], &u->files[pr->ntff], how))
					continue;
				*slot = (int64_t)k;
				claimed[k] = true;
			}
		}
	}
	/* one pair and one export of a kind whose name says nothing (ntff.json,
	 * summary.json, ...): they belong together */
	if (u->n_pairs != 1)
		return;
	for (int kind = NS_CAP_DEVICE_JSON; kind <= NS_CAP_SUMMARY_JSON; kind++) {
		int64_t *slot = kind == NS_CAP_DEVICE_JSON ? &u->pairs[0].device_json : &u->pairs[0].summary_json;
		int64_t found = -1;
		size_t count = 0;
		for (size_t k = 0; k < u->n_files; k++)
			if ((int)u->files[k].kind == kind && !claimed[k] && !u->files[k].stem[0] && !u->files[k].hash[0] &&
			    u->files[k].session < 0) {
				found = (int64_t)k;
				count++;
			}
		if (*slot < 0 && count == 1) {
			*slot = found;
			claimed[found] = true;
		}
	}
}

static int find_gaps(struct ns_cap_unit *u, const bool *claimed)
{
	int64_t ntrace = -1, trace_info = -1;
	bool neuron = false; /* raw files or exports that only make sense with a trace */
	for (size_t k = 0; k < u->n_files; k++) {
		const struct ns_cap_file *f = &u->files[k];
		neuron |= f->kind == NS_CAP_NTFF || f->kind == NS_CAP_PB || f->kind == NS_CAP_SYSTEM_JSON ||
			  f->kind == NS_CAP_DEVICE_JSON || f->kind == NS_CAP_SUMMARY_JSON ||
			  (f->kind == NS_CAP_NEFF && !f->shared);
		if (f->kind == NS_CAP_PB && f->naming == NS_PB_NTRACE)
			ntrace = (int64_t)k;
		if (f->kind == NS_CAP_PB && f->naming == NS_PB_TRACE_INFO)
			trace_info = (int64_t)k;
	}
	if (neuron && u->trace < 0 && add_gap(u, NS_GAP_NO_TRACE, -1, -1))
		return -1;
	for (size_t k = 0; k < u->n_files; k++) {
		const struct ns_cap_file *f = &u->files[k];
		bool paired = false;
		for (size_t p = 0; p < u->n_pairs; p++)
			paired |= u->pairs[p].neff == k || u->pairs[p].ntff == k;
		if (f->kind == NS_CAP_NTFF && !paired &&
		    add_gap(u, f->size == 0 ? NS_GAP_NTFF_EMPTY : NS_GAP_NTFF_NO_NEFF, (int64_t)k, -1))
			return -1;
		if (f->kind == NS_CAP_NEFF && !f->shared && !paired && add_gap(u, NS_GAP_NEFF_NO_NTFF, (int64_t)k, -1))
			return -1;
		if ((f->kind == NS_CAP_DEVICE_JSON || f->kind == NS_CAP_SUMMARY_JSON) && !claimed[k] &&
		    add_gap(u, f->model_id >= 0 ? NS_GAP_EXPORT_MODEL_ID : NS_GAP_EXPORT_UNPAIRED, (int64_t)k, -1))
			return -1;
	}
	for (size_t p = 0; p < u->n_pairs; p++)
		if ((u->pairs[p].device_json < 0 && add_gap(u, NS_GAP_PAIR_NO_DEVICE, -1, (int64_t)p)) ||
		    (u->pairs[p].summary_json < 0 && add_gap(u, NS_GAP_PAIR_NO_SUMMARY, -1, (int64_t)p)))
			return -1;
	if (ntrace >= 0 && u->system_json < 0 && add_gap(u, NS_GAP_PB_NO_EXPORT, ntrace, -1))
		return -1;
	if (ntrace >= 0 && trace_info < 0 && add_gap(u, NS_GAP_NO_TRACE_INFO, ntrace, -1))
		return -1;
	if (trace_info >= 0 && ntrace < 0 && add_gap(u, NS_GAP_NO_NTRACE, trace_info, -1))
		return -1;
	return 0;
}

int ns_capture_model_export_gap(const struct ns_cap_unit *u, size_t file, char *out, size_t n,
				struct ns_error *err)
{
	const struct ns_cap_file *f = &u->files[file];
	size_t len = 0;
	out[0] = '\0';
	for (size_t p = 0; p < u->n_pairs; p++) {
		const char *name = u->files[u->pairs[p].neff].name;
		bool listed = false;
		if (u->pairs[p].device_json >= 0)
			continue;
		for (size_t q = 0; q < p; q++) /* a NEFF of two pairs (two cores) once */
			listed |= u->pairs[q].device_json < 0 && u->pairs[q].neff == u->pairs[p].neff;
		if (!listed && len < n)
			len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", name);
	}
	if (!err)
		return NS_ERR_UNSUPPORTED;
	ns_error_set(err, NS_ERR_UNSUPPORTED,
		     "%s: not used: its NEFF is named only by its model id (%lld), and the Neuron docs tie a model "
		     "id to no NEFF file; %s%s",
		     f->path, (long long)f->model_id, out[0] ? "it may belong to " : "no NEFF here lacks a device export",
		     out);
	ns_error_hint(err, "rename it <ntff stem>__neff_<hash>.json (as neuron-stats writes) for the pair it "
			   "belongs to, or convert that pair (`neuron-stats ls` gives the commands)");
	return NS_ERR_UNSUPPORTED;
}

/* Indexes, pairs and gaps of a unit whose files are all added. */
static int finish_unit(struct ns_cap_unit *u)
{
	bool *claimed = NULL;
	int rc = -1;
	qsort(u->files, u->n_files, sizeof(*u->files), cmp_files);
	for (size_t k = 0; k < u->n_files; k++)
		set_name(&u->files[k]);
	u->trace = u->system_json = -1;
	for (size_t k = 0; k < u->n_files; k++) {
		const struct ns_cap_file *f = &u->files[k];
		if (f->kind == NS_CAP_TRACE && u->trace < 0)
			u->trace = (int64_t)k;
		/* an export in the capture wins over a converted one, the process's
		 * own over one it shares with other processes */
		const struct ns_cap_file *cur = u->system_json < 0 ? NULL : &u->files[u->system_json];
		if (f->kind == NS_CAP_SYSTEM_JSON &&
		    (!cur || (cur->converted && !f->converted) || (cur->split && !f->split && !f->converted)))
			u->system_json = (int64_t)k;
	}
	if (u->trace >= 0 && sniff_rank(u->files[u->trace].path, &u->rank))
		goto out;
	for (size_t k = 0; k < u->n_files; k++)
		if (u->files[k].kind == NS_CAP_NTFF && pair_ntff(u, k))
			goto out;
	if (!(claimed = calloc(u->n_files + 1, sizeof(*claimed))))
		goto out;
	pair_exports(u, claimed);
	rc = find_gaps(u, claimed);
out:
	free(claimed);
	return rc;
}

void ns_capture_key(const char *dir, char out[17])
{
	char *real = realpath(dir, NULL);
	const char *s = real ? real : dir;
	uint64_t h = 14695981039346656037ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
	free(real);
}

/* Adds the exports converted earlier for u (from its cache folder). */
static int add_converted(struct ns_cap_unit *u, const char *export_root, struct ns_error *err)
{
	char key[17];
	struct file_list l = { u->files, u->n_files, u->n_files };
	DIR *d;
	int rc = 0;
	ns_capture_key(u->dir, key);
	if (asprintf(&u->export_dir, "%s/%s", export_root, key) < 0) {
		u->export_dir = NULL;
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	if (!(d = opendir(u->export_dir)))
		return errno == ENOMEM ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
	for (struct dirent *de; (de = readdir(d)) != NULL && !rc;) {
		struct stat st;
		char *child;
		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&child, "%s/%s", u->export_dir, de->d_name) < 0) {
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			break;
		}
		if (stat(child, &st) == 0 && S_ISREG(st.st_mode) && add_if_capture(&l, child, &st, true))
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		free(child);
	}
	closedir(d);
	u->files = l.v;
	u->n_files = l.n;
	return rc;
}

static int cmp_units(const void *a, const void *b)
{
	return strcmp(((const struct ns_cap_unit *)a)->dir, ((const struct ns_cap_unit *)b)->dir);
}

/* True if dir is path or below it. */
static bool under(const char *dir, const char *path)
{
	size_t n = strlen(path);
	return strncmp(dir, path, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

static bool is_export(enum ns_cap_kind k)
{
	return k == NS_CAP_SYSTEM_JSON || k == NS_CAP_DEVICE_JSON || k == NS_CAP_SUMMARY_JSON;
}

/* A unit that only holds exports (the folder neuron-explorer view -d wrote
 * them into, beside the process folders). */
static bool only_exports(const struct ns_cap_unit *u)
{
	for (size_t k = 0; k < u->n_files; k++)
		if (!is_export(u->files[k].kind))
			return false;
	return true;
}

/* The process unit an export of an exports-only folder belongs to: by the
 * instance and pid its name carries (the session folder holding the
 * NTFF of its core and session, when several); a system export without
 * them to the only process folder below, when there is one. -1: none. */
static int64_t export_home(const struct ns_capture *c, size_t from, const struct ns_cap_file *f)
{
	int64_t best = -1, procs = 0, proc = -1;
	for (size_t u = 0; u < c->n_units; u++) {
		const struct ns_cap_unit *d = &c->units[u];
		/* an export naming its instance and pid finds that process anywhere
		 * in the capture; one without, only below its folder */
		if (u == from || only_exports(d) || (!f->instance[0] && !under(d->dir, c->units[from].dir)))
			continue;
		if (d->instance[0] || d->pid >= 0) {
			procs++;
			proc = (int64_t)u;
		}
		if (!f->instance[0] || strcmp(d->instance, f->instance) != 0 || d->pid != f->pid)
			continue;
		bool has_ntff = false;
		for (size_t k = 0; k < d->n_files; k++)
			has_ntff |= d->files[k].kind == NS_CAP_NTFF && d->files[k].nc == f->nc &&
				    (f->session < 0 || d->files[k].session == f->session);
		if (best < 0 || has_ntff)
			best = (int64_t)u;
	}
	if (best < 0 && !f->instance[0] && f->kind == NS_CAP_SYSTEM_JSON && procs == 1)
		best = proc;
	return best;
}

static int move_file(struct ns_cap_unit *from, size_t k, struct ns_cap_unit *to)
{
	struct file_list ul = { to->files, to->n_files, to->n_files };
	if (push_file(&ul, &from->files[k]))
		return -1;
	to->files = ul.v;
	to->n_files = ul.n;
	memmove(&from->files[k], &from->files[k + 1], (from->n_files - k - 1) * sizeof(*from->files));
	from->n_files--;
	return 0;
}

/* A system export without an instance and pid in its name, in an
 * exports-only folder above several process folders (neuron-explorer view
 * -d of the whole capture): a copy joins every process folder below, marked
 * split (each takes its own pid's events). False when there are not several. */
static int share_system_export(struct ns_capture *c, size_t from, size_t k, bool *shared)
{
	const struct ns_cap_file *f = &c->units[from].files[k];
	size_t procs = 0;
	*shared = false;
	if (f->kind != NS_CAP_SYSTEM_JSON || f->instance[0])
		return 0;
	for (size_t u = 0; u < c->n_units; u++) {
		const struct ns_cap_unit *d = &c->units[u];
		procs += u != from && !only_exports(d) && under(d->dir, c->units[from].dir) && (d->instance[0] || d->pid >= 0);
	}
	if (procs < 2)
		return 0;
	for (size_t u = 0; u < c->n_units; u++) {
		struct ns_cap_unit *d = &c->units[u];
		if (u == from || only_exports(d) || !under(d->dir, c->units[from].dir) || !(d->instance[0] || d->pid >= 0))
			continue;
		struct ns_cap_file copy = c->units[from].files[k];
		struct file_list ul = { d->files, d->n_files, d->n_files };
		copy.split = true;
		if (!(copy.path = strdup(copy.path)) || push_file(&ul, &copy)) {
			free(copy.path);
			return -1;
		}
		d->files = ul.v;
		d->n_files = ul.n;
	}
	struct ns_cap_unit *src = &c->units[from];
	free(src->files[k].path);
	memmove(&src->files[k], &src->files[k + 1], (src->n_files - k - 1) * sizeof(*src->files));
	src->n_files--;
	*shared = true;
	return 0;
}

/* Exports written beside the process folders join their process; the
 * neuron-profile guide's CLI layout (file.neff beside output/profile_rank_N.ntff)
 * gets the NEFF of the parent folder when that has exactly one. */
static int relocate(struct ns_capture *c)
{
	for (size_t s = 0; s < c->n_units; s++) {
		struct ns_cap_unit *src = &c->units[s];
		if (!only_exports(src))
			continue;
		for (size_t k = 0; k < src->n_files;) {
			bool shared;
			if (share_system_export(c, s, k, &shared))
				return -1;
			if (shared)
				continue;
			int64_t home = export_home(c, s, &src->files[k]);
			if (home < 0) {
				k++;
				continue;
			}
			if (move_file(src, k, &c->units[home]))
				return -1;
		}
	}
	for (size_t u = 0; u < c->n_units; u++) {
		struct ns_cap_unit *dst = &c->units[u];
		bool ntff = false, neff = false;
		for (size_t k = 0; k < dst->n_files; k++) {
			ntff |= dst->files[k].kind == NS_CAP_NTFF && dst->files[k].naming == NS_NTFF_CLI;
			neff |= dst->files[k].kind == NS_CAP_NEFF;
		}
		char *parent = ntff && !neff ? ns_capture_folder(dst->dir) : NULL;
		if (ntff && !neff && !parent)
			return -1;
		for (size_t p = 0; parent && p < c->n_units; p++) {
			struct ns_cap_unit *up = &c->units[p];
			size_t n_neff = 0, only = 0;
			if (strcmp(up->dir, parent) != 0)
				continue;
			for (size_t k = 0; k < up->n_files; k++)
				if (up->files[k].kind == NS_CAP_NEFF) {
					n_neff++;
					only = k;
				}
			if (n_neff != 1)
				break;
			struct ns_cap_file f = up->files[only];
			struct file_list ul = { dst->files, dst->n_files, dst->n_files };
			up->files[only].shared = f.shared = true; /* no "NEFF without NTFF" in either */
			if (!(f.path = strdup(f.path)) || push_file(&ul, &f)) {
				free(f.path);
				free(parent);
				return -1;
			}
			dst->files = ul.v;
			dst->n_files = ul.n;
			break;
		}
		free(parent);
	}
	/* folders left empty are no unit */
	size_t out = 0;
	for (size_t u = 0; u < c->n_units; u++) {
		if (c->units[u].n_files) {
			c->units[out++] = c->units[u];
			continue;
		}
		free(c->units[u].files);
		free(c->units[u].dir);
	}
	c->n_units = out;
	return 0;
}

/* Groups the files by folder into units; NEFFs of a neffs/ folder (vLLM)
 * are copied into every unit below the neffs folder's parent. */
static int group(struct ns_capture *c, struct file_list *l, const struct ns_capture_opts *o, struct ns_error *err)
{
	for (size_t i = 0; i < l->n; i++) {
		struct ns_cap_file *f = &l->v[i];
		char *dir = ns_capture_folder(f->path);
		enum ns_cap_kind anchor;
		size_t u;
		if (dir && parquet_anchor(base_of(f->path), &anchor)) { /* its profile folder is the export */
			char *parent = ns_capture_folder(dir);
			free(dir);
			dir = parent;
		}
		if (!dir)
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		f->shared = f->kind == NS_CAP_NEFF && strcmp(base_of(dir), "neffs") == 0;
		for (u = 0; u < c->n_units && strcmp(c->units[u].dir, dir) != 0; u++)
			;
		if (u == c->n_units) {
			struct ns_cap_unit *v = realloc(c->units, (c->n_units + 1) * sizeof(*v));
			if (!v) {
				free(dir);
				return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			}
			c->units = v;
			memset(&c->units[u], 0, sizeof(c->units[u]));
			c->units[u].dir = dir;
			c->n_units++;
			if (describe_unit(&c->units[u]))
				return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		} else {
			free(dir);
		}
		struct file_list ul = { c->units[u].files, c->units[u].n_files, c->units[u].n_files };
		if (push_file(&ul, f))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		c->units[u].files = ul.v;
		c->units[u].n_files = ul.n;
		f->path = NULL; /* moved */
	}
	/* shared NEFFs join the units beside their folder */
	for (size_t s = 0; s < c->n_units; s++) {
		struct ns_cap_unit *src = &c->units[s];
		if (strcmp(base_of(src->dir), "neffs") != 0)
			continue;
		char *parent = ns_capture_folder(src->dir);
		if (!parent)
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		for (size_t u = 0; u < c->n_units; u++) {
			struct ns_cap_unit *dst = &c->units[u];
			if (u == s || !under(dst->dir, parent))
				continue;
			for (size_t k = 0; k < src->n_files; k++) {
				struct ns_cap_file f = src->files[k];
				struct file_list ul = { dst->files, dst->n_files, dst->n_files };
				if (f.kind != NS_CAP_NEFF)
					continue;
				if (!(f.path = strdup(f.path)) || push_file(&ul, &f)) {
					free(f.path);
					free(parent);
					return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
				}
				dst->files = ul.v;
				dst->n_files = ul.n;
			}
		}
		free(parent);
	}
	if (relocate(c))
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (size_t u = 0; u < c->n_units; u++) {
		if (o && o->export_root && add_converted(&c->units[u], o->export_root, err))
			return err->status;
		if (finish_unit(&c->units[u]))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	if (c->n_units > 1) /* units is NULL when there are none (qsort's argument is nonnull) */
		qsort(c->units, c->n_units, sizeof(*c->units), cmp_units);
	return 0;
}

/* The number of process folders ("<instance>_pid_<pid>") in dir, up to 2;
 * -1 on OOM. */
static int process_dirs(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct ns_cap_unit probe;
	if (!d)
		return errno == ENOMEM ? -1 : 0;
	for (struct dirent *de; n < 2 && (de = readdir(d)) != NULL;)
		n += de->d_name[0] != '.' && parse_process_dir(de->d_name, &probe);
	closedir(d);
	return n;
}

#define EXPORT_ANCESTORS 3

#define BESIDE_ENTRIES 4096 /* a folder with more is not an export folder */

/* An exports-only folder beside the process folders (a --output-file of
 * another folder): its exports that name their instance and pid join the
 * list; nothing when the folder holds a trace.json or a raw capture file (a
 * capture unit of its own). Only *_pid_*.json files are opened. -1 on OOM. */
static int add_sibling_exports(const char *dir, struct file_list *l)
{
	DIR *d = opendir(dir);
	struct file_list found = { 0 };
	bool other = false;
	int rc = !d && errno == ENOMEM ? -1 : 0, seen = 0;
	for (struct dirent *de; d && !other && !rc && (de = readdir(d)) != NULL;) {
		struct ns_cap_file f;
		struct stat st;
		char *child;
		bool json = ends_with(de->d_name, ".json");
		if (de->d_name[0] == '.')
			continue;
		if (++seen > BESIDE_ENTRIES || strcmp(de->d_name, "trace.json") == 0) {
			other = true;
			break;
		}
		if (json && !strstr(de->d_name, "_pid_"))
			continue; /* no sniffing of every JSON beside */
		if (asprintf(&child, "%s/%s", dir, de->d_name) < 0) {
			rc = -1;
			break;
		}
		int is = stat(child, &st) == 0 && S_ISREG(st.st_mode) ? ns_capture_classify(child, &f, NULL) : 0;
		rc = is < 0 ? -1 : 0;
		if (is > 0) {
			other = !is_export(f.kind) && (!json || f.kind == NS_CAP_TRACE);
			if (!other && json && is_export(f.kind) && f.instance[0])
				rc = add_if_capture(&found, child, &st, false);
		}
		free(child);
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < found.n; i++) {
		if (!rc && !other && push_file(l, &found.v[i]) == 0)
			continue;
		rc = rc ? rc : other ? 0 : -1;
		free(found.v[i].path);
	}
	free(found.v);
	return rc;
}

/* The subfolders of dir that may hold exports of -d with another
 * --output-file: not dot folders, process or session folders, nor skip
 * (the way down to the process folder). -1 on OOM. */
static int add_beside_exports(const char *dir, const char *skip, struct file_list *l)
{
	DIR *d = opendir(dir);
	int rc = !d && errno == ENOMEM ? -1 : 0;
	for (struct dirent *de; d && !rc && (de = readdir(d)) != NULL;) {
		struct ns_cap_unit probe;
		struct stat st;
		char *child;
		size_t digits = strspn(de->d_name, "0123456789");
		if (de->d_name[0] == '.' || parse_process_dir(de->d_name, &probe) ||
		    (digits >= 9 && !de->d_name[digits]))
			continue;
		if (asprintf(&child, "%s/%s", dir, de->d_name) < 0) {
			rc = -1;
			break;
		}
		if (strcmp(child, skip) != 0 && stat(child, &st) == 0 && S_ISDIR(st.st_mode))
			rc = add_sibling_exports(child, l);
		free(child);
	}
	if (d)
		closedir(d);
	return rc;
}

/* A shallow scan of a process folder also takes the exports that
 * neuron-explorer view -d wrote into the folders above it (up to
 * EXPORT_ANCESTORS levels): those naming an instance and pid, and a system
 * export above process folders (marked split above several). relocate()
 * hands them over. */
static int add_ancestor_exports(const char *dir, struct file_list *l)
{
	char *cur = strdup(dir), *below = NULL;
	int rc = cur ? 0 : -1;
	for (int level = 0; cur && level < EXPORT_ANCESTORS && !rc; level++) {
		char *parent = ns_capture_folder(cur);
		free(below);
		below = cur;
		cur = parent;
		if (!cur)
			rc = -1;
		if (!cur || strcmp(cur, ".") == 0)
			break;
		int procs = process_dirs(cur);
		if ((rc = procs < 0 ? -1 : 0) || (procs >= 1 && (rc = add_beside_exports(cur, below, l))))
			break;
		DIR *d = opendir(cur);
		if (!d && errno == ENOMEM)
			rc = -1;
		for (struct dirent *de; d && (de = readdir(d)) != NULL && !rc;) {
			struct ns_cap_file f;
			struct stat st;
			char *child;
			/* only names an export of -d can have: no sniffing of every JSON above */
			if (de->d_name[0] == '.' || !ends_with(de->d_name, ".json") ||
			    (!strstr(de->d_name, "_pid_") && strcmp(de->d_name, "system_profile.json") != 0 &&
			     strcmp(de->d_name, "profile.json") != 0))
				continue;
			if (asprintf(&child, "%s/%s", cur, de->d_name) < 0) {
				rc = -1;
				break;
			}
			/* a system export above several process folders covers them all */
			size_t before = l->n;
			int is = stat(child, &st) == 0 && S_ISREG(st.st_mode) ? ns_capture_classify(child, &f, NULL) : 0;
			if (is < 0)
				rc = -1;
			else if (is > 0 && is_export(f.kind) &&
				 (f.instance[0] || (f.kind == NS_CAP_SYSTEM_JSON && procs >= 1)))
				rc = add_if_capture(l, child, &st, false);
			if (!rc && l->n > before && !f.instance[0] && f.kind == NS_CAP_SYSTEM_JSON && procs > 1)
				l->v[l->n - 1].split = true;
			free(child);
		}
		if (d)
			closedir(d);
	}
	free(below);
	free(cur);
	return rc;
}

int ns_capture_scan(const char *path, const struct ns_capture_opts *o, struct ns_capture **out,
		    struct ns_error *err)
{
	struct ns_dirset seen = { 0 };
	struct ns_capture *c = calloc(1, sizeof(*c));
	struct file_list l = { 0 };
	struct stat st;
	int rc = 0;
	*out = NULL;
	if (!c || !(c->root = strdup(path))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (size_t n = strlen(c->root); n > 1 && c->root[n - 1] == '/';)
		c->root[--n] = '\0';
	if (stat(path, &st) != 0) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
		goto out;
	}
	struct shallow_ctx sc = { &l, c->root };
	if (S_ISDIR(st.st_mode) && o && o->shallow)
		rc = ns_walk_files(c->root, 1, &seen, visit_shallow, &sc, err);
	else if (S_ISDIR(st.st_mode))
		rc = ns_walk_files(c->root, MAX_DEPTH, &seen, visit_capture_file, &l, err);
	if (!rc && S_ISDIR(st.st_mode) && o && o->shallow && add_ancestor_exports(c->root, &l))
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	else if (add_if_capture(&l, c->root, &st, false))
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	if (!rc)
		rc = group(c, &l, o, err);
out:
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].path);
	free(l.v);
	ns_dirset_release(&seen);
	if (rc) {
		ns_capture_free(c);
		c = NULL;
	}
	*out = c;
	return rc;
}

void ns_capture_free(struct ns_capture *c)
{
	if (!c)
		return;
	for (size_t u = 0; u < c->n_units; u++) {
		struct ns_cap_unit *un = &c->units[u];
		for (size_t k = 0; k < un->n_files; k++)
			free(un->files[k].path);
		free(un->files);
		free(un->pairs);
		free(un->gaps);
		free(un->dir);
		free(un->export_dir);
	}
	free(c->units);
	free(c->root);
	free(c);
}

int ns_capture_find(const struct ns_capture *c, const char *dir, const struct ns_cap_unit **found,
		    struct ns_error *err)
{
	char *want = realpath(dir, NULL);
	bool oom = !want && errno == ENOMEM;
	*found = NULL;
	for (size_t u = 0; c && want && u < c->n_units && !*found && !oom; u++) {
		char *real = realpath(c->units[u].dir, NULL);
		oom = !real && errno == ENOMEM;
		if (real && strcmp(real, want) == 0)
			*found = &c->units[u];
		free(real);
	}
	free(want);
	return oom ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
}
