/* Merging databases into one (ns_store_merge; docs/schema.md "Merging
 * databases").
 *
 * Every row of every trace is copied as it is, with the ids that are the
 * database's renumbered: traces.id (1, 2, ... in the new order), events.id
 * and the columns that hold one (shifted by the same amount for the whole
 * trace, so that id - first_event_id, the position in traceEvents, stays),
 * and strings.id (interned again: the shard's ids of one trace are mapped
 * to the new database's). The per-trace numberings (threads, rows,
 * trace_strings.local_id) are the trace's own and stay. Nothing is
 * recomputed: the new database holds what ingesting the traces together
 * would have written, and every command reads it as it reads them.
 *
 * Streaming: one shard is open at a time and its rows go through the
 * store's row queue as they are read; what is held is the list of traces
 * (one line each), the string map of the trace being copied, and the new
 * database's strings (as for an ingest of the same traces).
 */
#include "store/store.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/i64map.h"
#include "common/sort.h"
#include "common/vec.h"
#include "store/rowq.h"
#include "store/store-internal.h"

/* How a column is copied: as it is, the new trace id, an events.id
 * (shifted), an events.id that is the table's rowid (shifted; the row
 * queue numbers it when it is the next one), a strings.id (mapped). */
enum { COL_COPY = 'c', COL_TRACE = 't', COL_EVENT = 'e', COL_ROWID = 'r', COL_STRING = 's' };

/* One table of a trace: its rows in the shard (?1: the trace id; ?2, ?3:
 * its events.id range), in the order they go in, one letter per column
 * of the table (SELECT * of a database of the same schema version). */
struct table_copy {
	int stmt; /* enum stmt_id: the table in the new database */
	const char *name, *select, *cols;
};

#define WHERE_TRACE " WHERE trace_id = ?1"
#define EVENT_RANGE(col) " WHERE " col " >= ?2 AND " col " < ?3 AND trace_id = ?1 ORDER BY " col
static const struct table_copy copies[] = {
	{ STMT_EVENT, "events", "SELECT * FROM events" EVENT_RANGE("id"), "trccsccc" "s" "ccccccccccccccc" "sss" "cccc" },
	{ STMT_THREAD, "threads", "SELECT * FROM threads" WHERE_TRACE " ORDER BY id", "tccccccc" },
	{ STMT_PROCESS, "processes", "SELECT * FROM processes" WHERE_TRACE " ORDER BY rowid", "tcccc" },
	{ STMT_META, "metadata", "SELECT * FROM metadata" WHERE_TRACE " ORDER BY ord", "tccc" },
	{ STMT_XWARN, "explorer_warnings", "SELECT * FROM explorer_warnings" WHERE_TRACE " ORDER BY ord", "tcccccc" },
	{ STMT_FLOW, "flows", "SELECT * FROM flows" WHERE_TRACE " ORDER BY rowid", "tcceccccecccc" },
	{ STMT_CORRELATION_INDEX, NULL, NULL, NULL },
	{ STMT_STATS, "event_stats", "SELECT * FROM event_stats" EVENT_RANGE("event_id"), "treccsccccccce" },
	{ STMT_MEMORY, "event_memory", "SELECT * FROM event_memory" EVENT_RANGE("event_id"), "tecccc" },
	{ STMT_AVG, "key_averages_rows", "SELECT * FROM key_averages_rows" WHERE_TRACE " ORDER BY row",
	  "t" "cccccccccccccccccc" "e" },
	{ STMT_DETAIL, "device_detail", "SELECT * FROM device_detail" WHERE_TRACE " ORDER BY rowid", "tcccccc" },
	{ STMT_NEFF_SUMMARY, "neff_summary", "SELECT * FROM neff_summary" WHERE_TRACE " ORDER BY rowid",
	  "tccccccccccccc" },
	{ STMT_ENGINE_OPCODES, "engine_opcodes", "SELECT * FROM engine_opcodes" WHERE_TRACE " ORDER BY rowid",
	  "tccccccccccc" },
	{ STMT_TRACE_STRING, "trace_strings", "SELECT * FROM trace_strings" WHERE_TRACE " ORDER BY local_id", "tcs" },
	{ STMT_TRACE, "traces", "SELECT * FROM traces WHERE id = ?1", "t" "cccccccccccccc" "e" "c" },
};
#define N_COPIES NS_ARRAY_SIZE(copies)

/* The shard's strings, in the shard's order: for a shard of one trace,
 * the order an ingest of the traces together numbers them in. */
static const char strings_sql[] = "SELECT id, text FROM strings ORDER BY id";
/* The traces of a shard, with the end of each one's events.id range. */
static const char traces_sql[] = "SELECT id, path, first_event_id, coalesce(rank, 9223372036854775807),"
				 " lead(first_event_id, 1, (SELECT coalesce(max(id) + 1, 0) FROM events)) OVER (ORDER BY id)"
				 " FROM traces ORDER BY id";
static const char *const shard_tables[] = { "traces", "strings", "trace_strings", "threads", "processes", "metadata",
					    "explorer_warnings", "events", "flows", "event_stats", "event_memory",
					    "key_averages_rows", "device_detail", "neff_summary", "engine_opcodes" };

/* A trace of a shard. */
struct shard_trace {
	size_t shard;        /* index into the shard list */
	int64_t id;          /* traces.id in the shard */
	int64_t first, end;  /* its events.id range there: [first, end) */
	char *path;          /* traces.path, then rank: the order of the merged traces */
	int64_t rank;        /* INT64_MAX: none */
};

struct merger {
	struct ns_store *store;
	struct ns_rowq *rows;
	char *const *shards;
	size_t open_shard;                /* the shard db is, or SIZE_MAX */
	sqlite3 *db;
	sqlite3_stmt *stmt[N_COPIES], *strings;
	struct ns_i64map string_map;      /* the open shard's strings.id -> the new database's */
	int64_t end_rowid[N_COPIES];      /* one past the largest rowid queued, per COL_ROWID table */
	/* the trace being copied */
	const struct shard_trace *from;
	int64_t trace_id, first_event_id; /* in the new database */
};

/* A value of a row being copied, read before the row is queued. */
struct value {
	int type; /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT (also for a BLOB), SQLITE_NULL */
	int64_t i;
	double d;
	const char *text;
	size_t len;
};

static const char *shard_path(const struct merger *m)
{
	return m->shards[m->open_shard];
}

static int damaged(const struct merger *m, const char *table, const char *what, int64_t v, struct ns_error *err)
{
	return ns_error_set(err, NS_ERR_INPUT, "%s: damaged database: table %s, trace %lld: %s %lld", shard_path(m),
			    table, (long long)m->from->id, what, (long long)v);
}

/* An events.id of the trace, in the new database. */
static int event_id(const struct merger *m, const char *table, int64_t id, int64_t *out, struct ns_error *err)
{
	const struct shard_trace *t = m->from;
	/* (a trace without events has its first_event_id, but no range) */
	if (id < t->first || (id >= t->end && id != t->first) ||
	    __builtin_add_overflow(id - t->first, m->first_event_id, out))
		return damaged(m, table, "an event id outside the trace's range:", id, err);
	return 0;
}

/* Column i of the shard's row, as it goes into the new database. */
static int read_value(struct merger *m, size_t k, sqlite3_stmt *st, int i, struct value *v, struct ns_error *err)
{
	char how = copies[k].cols[i];
	*v = (struct value){ .type = sqlite3_column_type(st, i) };
	if (how == COL_TRACE) {
		*v = (struct value){ .type = SQLITE_INTEGER, .i = m->trace_id };
		return 0;
	}
	if (v->type == SQLITE_NULL)
		return 0;
	if (how != COL_COPY && v->type != SQLITE_INTEGER)
		return damaged(m, copies[k].name, "an id that is not an integer in column", i, err);
	switch (v->type) {
	case SQLITE_INTEGER:
		v->i = sqlite3_column_int64(st, i);
		break;
	case SQLITE_FLOAT:
		v->d = sqlite3_column_double(st, i);
		return 0;
	default: /* text, or a blob's bytes as text */
		v->type = SQLITE_TEXT;
		v->text = (const char *)sqlite3_column_text(st, i);
		v->len = (size_t)sqlite3_column_bytes(st, i);
		return v->text || !v->len ? 0 : ns_error_set(err, NS_ERR_NOMEM, "out of memory merging %s", shard_path(m));
	}
	if (how == COL_STRING) {
		int64_t sid = ns_i64map_get(&m->string_map, v->i, -1);
		if (sid < 0)
			return damaged(m, copies[k].name, "refers to a string the database does not have:", v->i, err);
		v->i = sid;
		return 0;
	}
	return how == COL_EVENT || how == COL_ROWID ? event_id(m, copies[k].name, v->i, &v->i, err) : 0;
}

static void put_value(struct merger *m, size_t k, const struct value *v, char how)
{
	switch (v->type) {
	case SQLITE_NULL:
		ns_rowq_null(m->rows);
		break;
	case SQLITE_FLOAT:
		ns_rowq_real(m->rows, v->d);
		break;
	case SQLITE_TEXT:
		ns_rowq_text(m->rows, v->text ? v->text : "", v->len);
		break;
	default:
		/* the next rowid is left to SQLite (store.c put_rowid) */
		if (how == COL_ROWID && v->i > 0 && v->i == m->end_rowid[k])
			ns_rowq_null(m->rows);
		else
			ns_rowq_int(m->rows, v->i);
		if (how == COL_ROWID && v->i >= m->end_rowid[k])
			m->end_rowid[k] = v->i + 1;
		break;
	}
}

/* Copies table copies[k] of the trace. */
static int copy_table(struct merger *m, size_t k, struct ns_error *err)
{
	struct value values[32]; /* (the widest table, events, has 31 columns) */
	sqlite3_stmt *st = m->stmt[k];
	int n = st ? (int)strlen(copies[k].cols) : 0, rc = 0, step = SQLITE_DONE;
	if (!st) { /* (a statement without a table) */
		ns_rowq_row(m->rows, copies[k].stmt);
		return ns_rowq_end_row(m->rows, err);
	}
	if (sqlite3_column_count(st) != n)
		return damaged(m, copies[k].name, "the table's columns are not the schema's:", sqlite3_column_count(st), err);
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, m->from->id);
	sqlite3_bind_int64(st, 2, m->from->first);
	sqlite3_bind_int64(st, 3, m->from->end);
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < n && !rc; i++)
			rc = read_value(m, k, st, i, &values[i], err);
		if (rc)
			break;
		ns_rowq_row(m->rows, copies[k].stmt);
		for (int i = 0; i < n; i++)
			put_value(m, k, &values[i], copies[k].cols[i]);
		rc = ns_rowq_end_row(m->rows, err);
	}
	if (!rc && step != SQLITE_DONE)
		rc = ns_store_sqlite_error(err, m->db, step, shard_path(m), "cannot read the database");
	sqlite3_reset(st);
	return rc;
}

/* The open shard's strings, interned into the new database (string_map). */
static int map_strings(struct merger *m, struct ns_error *err)
{
	sqlite3_stmt *st = m->strings;
	int step;
	ns_i64map_release(&m->string_map);
	ns_i64map_init(&m->string_map);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(st, 1);
		uint32_t sid = ns_store_intern(m->store, text ? text : "", (size_t)sqlite3_column_bytes(st, 1));
		if (sid == UINT32_MAX || ns_i64map_set(&m->string_map, sqlite3_column_int64(st, 0), sid) < 0)
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory merging %s", shard_path(m));
	}
	sqlite3_reset(st);
	return step == SQLITE_DONE ? 0 : ns_store_sqlite_error(err, m->db, step, shard_path(m), "cannot read the database");
}

static void close_shard(struct merger *m)
{
	for (size_t k = 0; k < N_COPIES; k++) {
		sqlite3_finalize(m->stmt[k]);
		m->stmt[k] = NULL;
	}
	sqlite3_finalize(m->strings);
	m->strings = NULL;
	sqlite3_close(m->db);
	m->db = NULL;
	m->open_shard = SIZE_MAX;
}

/* Opens shard i (checked) with its statements, unless it is open. */
static int open_shard(struct merger *m, size_t i, struct ns_error *err)
{
	const char *path = m->shards[i];
	int rc, sqlite_rc = SQLITE_OK;
	if (m->open_shard == i)
		return 0;
	close_shard(m);
	if ((rc = ns_store_check_schema(path, err)) || (rc = ns_store_open_readonly(path, &m->db, err)) ||
	    (rc = ns_store_check_tables(path, m->db, shard_tables, NS_ARRAY_SIZE(shard_tables), err)))
		return rc;
	/* one read transaction: the shard's rows as of one moment (and one
	 * lock taken, not one per statement) */
	sqlite_rc = sqlite3_exec(m->db, "BEGIN", NULL, NULL, NULL);
	for (size_t k = 0; k < N_COPIES && sqlite_rc == SQLITE_OK; k++)
		if (copies[k].select)
			sqlite_rc = sqlite3_prepare_v2(m->db, copies[k].select, -1, &m->stmt[k], NULL);
	if (sqlite_rc == SQLITE_OK)
		sqlite_rc = sqlite3_prepare_v2(m->db, strings_sql, -1, &m->strings, NULL);
	if (sqlite_rc != SQLITE_OK)
		return ns_store_sqlite_error(err, m->db, sqlite_rc, path, "cannot read the database");
	m->open_shard = i;
	return map_strings(m, err);
}

/* Copies one trace, the next of the new database. */
static int copy_trace(struct merger *m, const struct shard_trace *t, struct ns_error *err)
{
	int rc;
	m->from = t;
	m->trace_id++;
	m->first_event_id = m->end_rowid[0]; /* (copies[0] is events: one past its largest id) */
	if ((rc = open_shard(m, t->shard, err)))
		return rc;
	for (size_t k = 0; k < N_COPIES; k++) {
		if (copies[k].stmt == STMT_TRACE && (rc = ns_store_write_strings(m->store, err)))
			return rc;
		if ((rc = copy_table(m, k, err)))
			return rc;
	}
	return 0;
}

static int cmp_traces(const void *pa, const void *pb)
{
	const struct shard_trace *a = pa, *b = pb;
	int by_path = strcmp(a->path, b->path);
	if (by_path)
		return by_path;
	if (a->rank != b->rank) /* (the same path: every machine wrote trace.json) */
		return a->rank < b->rank ? -1 : 1;
	if (a->shard != b->shard)
		return a->shard < b->shard ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static void free_traces(struct shard_trace *traces, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(traces[i].path);
	free(traces);
}

/* Appends the traces of shard i (checked: schema version, tables) to
 * *traces; *bytes adds its size. */
static int list_shard(struct merger *m, size_t i, struct shard_trace **traces, size_t *n, size_t *cap,
		      int64_t *bytes, struct ns_error *err)
{
	const char *path = m->shards[i];
	sqlite3_stmt *st = NULL;
	struct stat sb;
	int rc, step = SQLITE_DONE;
	if ((rc = ns_store_check_schema(path, err)) || (rc = ns_store_open_readonly(path, &m->db, err)) ||
	    (rc = ns_store_check_tables(path, m->db, shard_tables, NS_ARRAY_SIZE(shard_tables), err)))
		goto out;
	if (stat(path, &sb) == 0)
		*bytes += sb.st_size;
	if ((step = sqlite3_prepare_v2(m->db, traces_sql, -1, &st, NULL)) != SQLITE_OK)
		goto out;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *trace_path = (const char *)sqlite3_column_text(st, 1);
		char *copy = strdup(trace_path ? trace_path : "");
		if (!copy || NS_GROW(*traces, *cap, *n + 1) < 0) {
			free(copy);
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory listing the traces of %s", path);
			goto out;
		}
		(*traces)[(*n)++] = (struct shard_trace){ i, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 2),
							  sqlite3_column_int64(st, 4), copy, sqlite3_column_int64(st, 3) };
	}
out:
	if (!rc && step != SQLITE_DONE)
		rc = ns_store_sqlite_error(err, m->db, step, path, "cannot read the database");
	sqlite3_finalize(st);
	sqlite3_close(m->db);
	m->db = NULL;
	return rc;
}

int ns_store_merge(const char *db_path, char *const *shards, size_t n, struct ns_error *err)
{
	struct merger m = { .shards = shards, .open_shard = SIZE_MAX };
	struct shard_trace *traces = NULL;
	size_t n_traces = 0, cap_traces = 0;
	int64_t bytes = 0;
	int rc = 0;
	ns_i64map_init(&m.string_map);
	for (size_t i = 0; i < n && !rc; i++) /* (every shard checked before any work) */
		rc = list_shard(&m, i, &traces, &n_traces, &cap_traces, &bytes, err);
	if (rc || (rc = ns_store_create(db_path, &m.store, err)))
		goto out;
	ns_store_reserve(m.store, bytes);
	m.rows = ns_store_rows(m.store);
	/* in path order, as a directory's traces (ties: by rank, then in the order given) */
	if (n_traces)
		ns_sort(traces, n_traces, sizeof(*traces), cmp_traces);
	for (size_t i = 0; i < n_traces && !rc; i++)
		rc = copy_trace(&m, &traces[i], err);
	close_shard(&m);
	if (!rc)
		rc = ns_store_commit(m.store, err); /* (which frees the store) */
	else
		ns_store_abort(m.store);
out:
	close_shard(&m);
	ns_i64map_release(&m.string_map);
	free_traces(traces, n_traces);
	return rc;
}
