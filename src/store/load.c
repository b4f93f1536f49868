/* Reading a database back: recognising one, opening it read-only, and
 * rebuilding the ns_trace models ingest produced (ns_store_load). */
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/i64map.h"
#include "common/vec.h"
#include "store/store-internal.h"

int ns_store_sqlite_error(struct ns_error *err, sqlite3 *db, int rc, const char *path, const char *what)
{
	/* the connection's message only when it is about rc: a code the caller
	 * set itself (SQLITE_NOMEM when sqlite3_str_finish failed) leaves it
	 * saying "not an error" */
	bool about_rc = db && (sqlite3_errcode(db) & 0xff) == (rc & 0xff);
	return ns_store_sqlite_failure(err, rc, about_rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc), path, what);
}

int ns_store_sqlite_failure(struct ns_error *err, int rc, const char *msg, const char *path, const char *what)
{
	enum ns_status status;
	switch (rc & 0xff) {
	case SQLITE_FULL:
		return ns_error_set(err, NS_ERR_IO, "%s: %s: the disk is full (%s)", path, what, msg);
	case SQLITE_NOMEM:
	case SQLITE_TOOBIG:
		status = NS_ERR_NOMEM;
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		status = NS_ERR_INPUT;
		break;
	default:
		status = NS_ERR_IO;
		break;
	}
	return ns_error_set(err, status, "%s: %s: %s", path, what, msg);
}

/* Whether opening db_path read-only could leave files beside it or fail
 * for want of them: a WAL-mode database (header bytes 18 and 19 are 2)
 * makes SQLite create "-wal" and "-shm" files, even to read it, and on a
 * read-only medium without them it cannot be read at all. It is opened
 * "immutable" then (no locks, no side files), which reads exactly what the
 * file holds: when the file or its folder cannot be written, or when there
 * is no "-wal" with pages not yet in the file. */
static bool open_immutable(const char *db_path)
{
	unsigned char header[20];
	struct stat st;
	char *wal = NULL, *dir = NULL;
	bool immutable = false;
	int fd = open(db_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return false;
	bool wal_mode = read(fd, header, sizeof(header)) == (ssize_t)sizeof(header) && header[18] == 2 &&
			header[19] == 2;
	close(fd);
	const char *slash = strrchr(db_path, '/');
	if (!(dir = slash ? strndup(db_path, (size_t)(slash - db_path) + 1) : strdup(".")) ||
	    asprintf(&wal, "%s-wal", db_path) < 0) {
		wal = NULL;
		goto out;
	}
	if (access(db_path, W_OK) < 0 || access(dir, W_OK) < 0)
		immutable = true;
	else if (wal_mode)
		immutable = stat(wal, &st) < 0 || st.st_size == 0;
out:
	free(wal);
	free(dir);
	return immutable;
}

/* db_path as an SQLite URI ("file:" and the path, with ?, # and % escaped)
 * asking for an immutable database. */
static char *immutable_uri(const char *db_path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(db_path);
	char *uri = malloc(3 * len + 32), *p = uri;
	if (!uri)
		return NULL;
	/* "file:///abs" for an absolute path, so that "//x" is not a host */
	p += sprintf(p, db_path[0] == '/' ? "file://" : "file:");
	for (const unsigned char *c = (const unsigned char *)db_path; *c; c++) {
		if (*c == '?' || *c == '#' || *c == '%') {
			*p++ = '%';
			*p++ = hex[*c >> 4];
			*p++ = hex[*c & 15];
		} else {
			*p++ = (char)*c;
		}
	}
	strcpy(p, "?immutable=1");
	return uri;
}

int ns_store_open_readonly(const char *db_path, sqlite3 **out, struct ns_error *err)
{
	struct stat st;
	sqlite3 *db = NULL;
	char *uri = NULL;
	int rc, flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
	*out = NULL;
	/* SQLite's "unable to open database file" does not say why */
	if (stat(db_path, &st) < 0)
		return ns_error_set(err, NS_ERR_IO, "%s: cannot open the database: %s", db_path, strerror(errno));
	if (open_immutable(db_path)) {
		if (!(uri = immutable_uri(db_path)))
			return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory opening the database", db_path);
		flags |= SQLITE_OPEN_URI;
	}
	rc = sqlite3_open_v2(uri ? uri : db_path, &db, flags, NULL);
	free(uri);
	if (rc != SQLITE_OK) {
		int status = ns_store_sqlite_error(err, db, rc, db_path, "cannot open the database");
		sqlite3_close(db);
		return status;
	}
	*out = db;
	return 0;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool ns_store_read_header(const char *db_path, uint32_t *application_id, uint32_t *user_version)
{
	static const char magic[16] = "SQLite format 3";
	unsigned char header[100];
	struct stat st;
	/* Only a regular file, checked before opening: opening a FIFO would
	 * wait for a writer (or, closed again, leave its writer without a
	 * reader), and reading a pipe takes the bytes the trace reader needs. */
	if (stat(db_path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	int fd = open(db_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return false;
	ssize_t got = read(fd, header, sizeof(header));
	close(fd);
	if (got != (ssize_t)sizeof(header) || memcmp(header, magic, sizeof(magic)) != 0)
		return false;
	*user_version = be32(header + 60);
	*application_id = be32(header + 68);
	return true;
}

bool ns_store_is_db(const char *db_path)
{
	uint32_t application_id, user_version;
	return ns_store_read_header(db_path, &application_id, &user_version) &&
	       application_id == NS_APPLICATION_ID;
}

int ns_store_check_schema(const char *db_path, struct ns_error *err)
{
	uint32_t application_id, user_version;
	if (!ns_store_read_header(db_path, &application_id, &user_version)) {
		if (access(db_path, R_OK) < 0)
			return ns_error_set(err, NS_ERR_IO, "%s: cannot open the database: %s", db_path,
					    strerror(errno));
		return ns_error_set(err, NS_ERR_INPUT, "%s: not an SQLite database", db_path);
	}
	if (application_id != NS_APPLICATION_ID)
		return ns_error_set(err, NS_ERR_INPUT, "%s: an SQLite database, but not a neuron-stats one",
				    db_path);
	if (user_version != NS_SCHEMA_VERSION) {
		ns_error_set(err, NS_ERR_UNSUPPORTED,
			     "%s: database schema version %u; this neuron-stats reads version %d", db_path,
			     user_version, NS_SCHEMA_VERSION);
		ns_error_hint(err, "run `neuron-stats ingest` on the original traces again");
		return NS_ERR_UNSUPPORTED;
	}
	return 0;
}

/* The tables ns_store_load reads. */
static const char *const loaded_tables[] = { "traces", "strings", "trace_strings", "threads", "metadata", "events",
					     "explorer_warnings" };

int ns_store_check_tables(const char *db_path, sqlite3 *db, const char *const *names, size_t n, struct ns_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = 0, sqlite_rc = sqlite3_prepare_v2(db, "SELECT type FROM sqlite_master WHERE name = ?1", -1, &st, NULL);
	for (size_t i = 0; sqlite_rc == SQLITE_OK && i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
		sqlite_rc = sqlite3_step(st);
		if (sqlite_rc != SQLITE_ROW && sqlite_rc != SQLITE_DONE)
			break;
		const char *type = sqlite_rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
		if (!type || strcmp(type, "table") != 0) {
			rc = ns_error_set(err, NS_ERR_INPUT, "%s: damaged database: \"%s\" is %s%s, not a table", db_path,
					  names[i], type ? "a " : "missing", type ? type : "");
			goto out;
		}
		sqlite_rc = SQLITE_OK;
	}
	if (sqlite_rc != SQLITE_OK)
		rc = ns_store_sqlite_error(err, db, sqlite_rc, db_path, "cannot read the database");
out:
	sqlite3_finalize(st);
	return rc;
}

enum load_stmt { LOAD_TRACES, LOAD_STRINGS, LOAD_THREADS, LOAD_META, LOAD_XWARN, LOAD_EVENTS, LOAD__COUNT };

static const char *const load_sql[LOAD__COUNT] = {
	[LOAD_TRACES] = "SELECT id, path, rank, world_size, base_time_ns, ts_has_fraction, profile_memory,"
			" legacy_array, activity_mask, n_trace_events, truncated_at, first_event_id,"
			" lead(first_event_id, 1, 9223372036854775807) OVER (ORDER BY id), abspath FROM traces ORDER BY id",
	[LOAD_STRINGS] = "SELECT ts.local_id, ts.string_id, s.text FROM trace_strings ts"
			 " JOIN strings s ON s.id = ts.string_id WHERE ts.trace_id = ? ORDER BY ts.local_id",
	[LOAD_THREADS] = "SELECT id, pid, tid, pid_text, tid_text, name FROM threads"
			 " WHERE trace_id = ? ORDER BY id",
	[LOAD_META] = "SELECT key, value_json FROM metadata WHERE trace_id = ? ORDER BY ord",
	[LOAD_XWARN] = "SELECT file, pid, category, message, byte_offset FROM explorer_warnings WHERE trace_id = ?"
		       " ORDER BY ord",
	/* a trace's events are the ids from its first_event_id to the next trace's */
	[LOAD_EVENTS] = "SELECT id - ?2, activity, kind, flags, name_id, thread_id, ts_ns, dur_ns, external_id,"
			" correlation, bytes, mem_device_type, input_dims_id, stack_id, neff, stream, args IS NOT NULL, flops FROM events"
			" WHERE id >= ?2 AND id < ?3 AND trace_id = ?1 AND kept ORDER BY id",
};

struct loader {
	const char *path;
	sqlite3 *db;
	sqlite3_stmt *stmt[LOAD__COUNT];
	struct ns_i64map to_local; /* database string id -> trace string id (only this trace's) */
	int64_t trace_id;
	int64_t first_event_id;
	int64_t dur_sum, bytes_sum; /* over the trace's events, up to NS_SUM_LIMIT */
};

static int64_t column_opt(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NS_NONE : sqlite3_column_int64(st, i);
}

/* Interns a text column into t's string table (which already holds it when
 * the database is consistent, so the ids do not move). */
static int intern_column(sqlite3_stmt *st, int i, struct ns_trace *t, ns_str *out)
{
	const char *text = (const char *)sqlite3_column_text(st, i);
	*out = ns_strtab_intern(&t->strings, text ? text : "", (size_t)sqlite3_column_bytes(st, i));
	return *out == UINT32_MAX ? -1 : 0;
}

/* Translates a database string id of this trace (NULL: absent -> 0). */
static int local_string(const struct loader *l, sqlite3_stmt *st, int i, ns_str *out, struct ns_error *err)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL) {
		*out = 0;
		return 0;
	}
	int64_t sid = sqlite3_column_int64(st, i), local = ns_i64map_get(&l->to_local, sid, -1);
	if (local < 0)
		return ns_error_set(err, NS_ERR_INPUT,
				    "%s: damaged database: trace %lld refers to string %lld, which it does not have",
				    l->path, (long long)l->trace_id, (long long)sid);
	*out = (ns_str)local;
	return 0;
}

static int load_oom(const struct loader *l, struct ns_error *err)
{
	return ns_error_set(err, NS_ERR_NOMEM, "out of memory loading %s", l->path);
}

static int step_error(const struct loader *l, int rc, struct ns_error *err)
{
	return ns_store_sqlite_error(err, l->db, rc, l->path, "cannot read the database");
}

static int load_strings(struct loader *l, struct ns_trace *t, struct ns_error *err)
{
	sqlite3_stmt *st = l->stmt[LOAD_STRINGS];
	int rc;
	ns_i64map_release(&l->to_local); /* (the last trace's) */
	ns_i64map_init(&l->to_local);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t local = sqlite3_column_int64(st, 0), sid = sqlite3_column_int64(st, 1);
		ns_str got;
		if (intern_column(st, 2, t, &got) < 0)
			return load_oom(l, err);
		if ((int64_t)got != local)
			return ns_error_set(err, NS_ERR_INPUT,
					    "%s: damaged database: the strings of trace %lld are not numbered 0..n-1",
					    l->path, (long long)l->trace_id);
		if (ns_i64map_set(&l->to_local, sid, local) < 0)
			return load_oom(l, err);
	}
	return rc == SQLITE_DONE ? 0 : step_error(l, rc, err);
}

static int load_threads(struct loader *l, struct ns_trace *t, struct ns_error *err)
{
	sqlite3_stmt *st = l->stmt[LOAD_THREADS];
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ns_str pid_text, tid_text, name = 0;
		int64_t pid = sqlite3_column_type(st, 1) == SQLITE_INTEGER ? sqlite3_column_int64(st, 1) : NS_NONE;
		int64_t tid = sqlite3_column_type(st, 2) == SQLITE_INTEGER ? sqlite3_column_int64(st, 2) : NS_NONE;
		if (intern_column(st, 3, t, &pid_text) < 0 || intern_column(st, 4, t, &tid_text) < 0 ||
		    (sqlite3_column_type(st, 5) != SQLITE_NULL && intern_column(st, 5, t, &name) < 0))
			return load_oom(l, err);
		int64_t index = ns_trace_thread(t, pid_text, pid, tid_text, tid);
		if (index < 0)
			return load_oom(l, err);
		if (index != sqlite3_column_int64(st, 0))
			return ns_error_set(err, NS_ERR_INPUT,
					    "%s: damaged database: the threads of trace %lld are not numbered 0..n-1",
					    l->path, (long long)l->trace_id);
		t->threads[index].name = name;
	}
	return rc == SQLITE_DONE ? 0 : step_error(l, rc, err);
}

static int load_meta(struct loader *l, struct ns_trace *t, struct ns_error *err)
{
	sqlite3_stmt *st = l->stmt[LOAD_META];
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (t->n_meta == t->cap_meta) {
			size_t cap = t->cap_meta ? t->cap_meta * 2 : 16;
			ns_str *meta = realloc(t->meta, cap * 2 * sizeof(*meta));
			if (!meta)
				return load_oom(l, err);
			t->meta = meta;
			t->cap_meta = cap;
		}
		if (intern_column(st, 0, t, &t->meta[2 * t->n_meta]) < 0 ||
		    intern_column(st, 1, t, &t->meta[2 * t->n_meta + 1]) < 0)
			return load_oom(l, err);
		t->n_meta++;
	}
	return rc == SQLITE_DONE ? 0 : step_error(l, rc, err);
}

static int load_xwarn(struct loader *l, struct ns_trace *t, struct ns_error *err)
{
	sqlite3_stmt *st = l->stmt[LOAD_XWARN];
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ns_xwarn_ref w = { 0, 0, 0, sqlite3_column_int64(st, 4), column_opt(st, 1) };
		if (intern_column(st, 0, t, &w.file) < 0 || intern_column(st, 3, t, &w.message) < 0 ||
		    (sqlite3_column_type(st, 2) != SQLITE_NULL && intern_column(st, 2, t, &w.category) < 0) ||
		    ns_trace_push_xwarn(t, &w))
			return load_oom(l, err);
	}
	return rc == SQLITE_DONE ? 0 : step_error(l, rc, err);
}

/* A value of table `table`, row `rowid`, that no ingest writes. */
static int bad_value(const struct loader *l, const char *table, int64_t rowid, const char *what, struct ns_error *err)
{
	return ns_error_set(err, NS_ERR_INPUT, "%s: damaged database: table %s, row %lld: %s", l->path, table,
			    (long long)rowid, what);
}

/* Column i (`name`) of table `table`, row `rowid`, as an integer within
 * [lo, hi) (NULL allowed when null_ok, as NS_NONE), else the error. */
static int ranged(const struct loader *l, sqlite3_stmt *st, int i, const char *table, int64_t rowid, const char *name,
		  int64_t lo, int64_t hi, bool null_ok, int64_t *out, struct ns_error *err)
{
	int type = sqlite3_column_type(st, i);
	const char *why = NULL;
	char what[120];
	*out = NS_NONE;
	if (type == SQLITE_NULL) {
		why = null_ok ? NULL : "is NULL";
	} else if (type != SQLITE_INTEGER) {
		why = "is not an integer";
	} else {
		*out = sqlite3_column_int64(st, i);
		why = *out >= lo && *out < hi ? NULL : "is out of range";
	}
	if (!why)
		return 0;
	snprintf(what, sizeof(what), "%s %s", name, why);
	return bad_value(l, table, rowid, what, err);
}

/* The checks of one events row: each column within what ingest writes, and
 * the durations and |bytes| of the trace within NS_SUM_LIMIT (so no sum
 * the analysis takes overflows). */
static int check_event(struct loader *l, sqlite3_stmt *st, int64_t rowid, struct ns_error *err)
{
	static const struct {
		int column;
		const char *name;
		int64_t lo, hi;
		bool null_ok;
	} cols[] = {
		{ 1, "activity", 0, NS_CAT__COUNT, false },
		{ 2, "kind", NS_KIND_SLICE, NS_KIND_FLOW_F + 1, false },
		{ 3, "flags", 0, 256, false },
		{ 6, "ts_ns", -NS_TIME_LIMIT_NS + 1, NS_TIME_LIMIT_NS, false },
		{ 7, "dur_ns", 0, NS_TIME_LIMIT_NS, false },
		{ 10, "bytes", -NS_SUM_LIMIT, NS_SUM_LIMIT + 1, true },
		{ 11, "mem_device_type", -1, 100, true },
	};
	int64_t v[NS_ARRAY_SIZE(cols)];
	int rc;
	for (size_t k = 0; k < NS_ARRAY_SIZE(cols); k++)
		if ((rc = ranged(l, st, cols[k].column, "events", rowid, cols[k].name, cols[k].lo, cols[k].hi,
				 cols[k].null_ok, &v[k], err)))
			return rc;
	int64_t dur = v[4], bytes = v[5] == NS_NONE ? 0 : v[5] < 0 ? -v[5] : v[5];
	if (dur > NS_SUM_LIMIT - l->dur_sum || bytes > NS_SUM_LIMIT - l->bytes_sum)
		return bad_value(l, "events", rowid,
				 dur > NS_SUM_LIMIT - l->dur_sum ? "the durations add up to more than 2^56 ns"
								  : "the bytes add up to more than 2^56",
				 err);
	l->dur_sum += dur;
	l->bytes_sum += bytes;
	return 0;
}

/* The ns_dev_args of the event just pushed, as ingest made them: for a
 * device slice that had args. */
static int push_dev_args(sqlite3_stmt *st, struct ns_trace *t, const struct ns_event *ev, int64_t bytes)
{
	if (ev->kind != NS_KIND_SLICE || !ns_cat_on_stream(ev->cat) || !sqlite3_column_int(st, 16))
		return 0;
	struct ns_dev_args a = { (uint32_t)(t->n_events - 1), column_opt(st, 15), bytes };
	return ns_trace_push_dev_args(t, &a);
}

static int load_events(struct loader *l, struct ns_trace *t, struct ns_error *err)
{
	sqlite3_stmt *st = l->stmt[LOAD_EVENTS];
	int rc;
	l->dur_sum = l->bytes_sum = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ns_event ev;
		memset(&ev, 0, sizeof(ev));
		int64_t thread = column_opt(st, 5), bytes = column_opt(st, 10), mem_type = column_opt(st, 11);
		int64_t idx = sqlite3_column_int64(st, 0);
		if (idx < 0 || idx > UINT32_MAX)
			return ns_error_set(err, NS_ERR_INPUT,
					    "%s: damaged database: event %lld of trace %lld is outside its id range",
					    l->path, (long long)(idx + l->first_event_id), (long long)l->trace_id);
		if ((rc = check_event(l, st, idx + l->first_event_id, err)))
			return rc;
		ev.idx = (uint32_t)idx;
		ev.cat = (uint8_t)sqlite3_column_int(st, 1);
		ev.kind = (uint8_t)sqlite3_column_int(st, 2);
		ev.flags = (uint8_t)sqlite3_column_int(st, 3);
		if ((rc = local_string(l, st, 4, &ev.name, err)) || (rc = local_string(l, st, 12, &ev.input_dims, err)) ||
		    (rc = local_string(l, st, 13, &ev.stack, err)))
			return rc;
		/* the model's own strings are loaded already: this finds the id */
		if (sqlite3_column_type(st, 14) != SQLITE_NULL && intern_column(st, 14, t, &ev.neff) < 0)
			return load_oom(l, err);
		if (thread < 0 || (uint64_t)thread >= t->n_threads)
			return ns_error_set(err, NS_ERR_INPUT,
					    "%s: damaged database: event %lld of trace %lld has no thread", l->path,
					    (long long)(idx + l->first_event_id), (long long)l->trace_id);
		ev.thread = (uint32_t)thread;
		ev.ts_ns = column_opt(st, 6);
		ev.dur_ns = column_opt(st, 7);
		if (ns_event_is_memory(&ev)) {
			ev.mem.bytes = bytes == NS_NONE ? 0 : bytes;
			ev.mem.device_type = mem_type == NS_NONE ? -1 : mem_type;
		} else {
			ev.external_id = column_opt(st, 8);
			ev.correlation = column_opt(st, 9);
		}
		int64_t flops = column_opt(st, 17);
		if (ns_trace_push(t, &ev) < 0 || push_dev_args(st, t, &ev, bytes) < 0 ||
		    (flops != NS_NONE && ns_trace_push_flops(t, flops) < 0))
			return load_oom(l, err);
	}
	return rc == SQLITE_DONE ? 0 : step_error(l, rc, err);
}

/* Fills t from the current row of LOAD_TRACES and the per-trace tables. */
static int load_trace(struct loader *l, struct ns_trace *t, struct ns_error *err)
{
	sqlite3_stmt *tr = l->stmt[LOAD_TRACES];
	int rc;
	l->trace_id = sqlite3_column_int64(tr, 0);
	const char *path = (const char *)sqlite3_column_text(tr, 1);
	const char *abspath = (const char *)sqlite3_column_text(tr, 13);
	if (!(t->path = strdup(path ? path : "")) || (abspath && !(t->abspath = strdup(abspath))))
		return load_oom(l, err);
	int64_t n_trace_events, truncated_at;
	if ((rc = ranged(l, tr, 4, "traces", l->trace_id, "base_time_ns", 0, NS_TIME_LIMIT_NS, true,
			 &t->base_time_ns, err)) ||
	    (rc = ranged(l, tr, 9, "traces", l->trace_id, "n_trace_events", 0, INT64_MAX, false, &n_trace_events,
			 err)) ||
	    (rc = ranged(l, tr, 10, "traces", l->trace_id, "truncated_at", 0, INT64_MAX, true, &truncated_at, err)))
		return rc;
	t->rank = column_opt(tr, 2);
	t->world_size = column_opt(tr, 3);
	t->has_base_time = t->base_time_ns != NS_NONE;
	t->ts_has_fraction = sqlite3_column_int(tr, 5);
	t->profile_memory = sqlite3_column_int(tr, 6);
	t->legacy_array = sqlite3_column_int(tr, 7);
	int64_t mask = sqlite3_column_int64(tr, 8);
	for (int cat = 0; cat < NS_CAT__COUNT && cat < 63; cat++)
		t->has_cat[cat] = (mask >> cat) & 1;
	t->n_trace_events = (uint64_t)n_trace_events;
	t->truncated_at = truncated_at == NS_NONE ? -1 : truncated_at;
	l->first_event_id = sqlite3_column_int64(tr, 11);
	for (int i = LOAD_STRINGS; i < LOAD__COUNT; i++) {
		sqlite3_reset(l->stmt[i]);
		sqlite3_bind_int64(l->stmt[i], 1, l->trace_id);
	}
	sqlite3_bind_int64(l->stmt[LOAD_EVENTS], 2, l->first_event_id);
	sqlite3_bind_int64(l->stmt[LOAD_EVENTS], 3, sqlite3_column_int64(tr, 12));
	if ((rc = load_strings(l, t, err)) || (rc = load_threads(l, t, err)) || (rc = load_meta(l, t, err)) ||
	    (rc = load_xwarn(l, t, err)))
		return rc;
	return load_events(l, t, err);
}

int ns_store_load(const char *db_path, struct ns_trace **out, size_t *n, struct ns_error *err)
{
	struct loader l = { .path = db_path };
	struct ns_trace *traces = NULL;
	size_t n_traces = 0, cap_traces = 0;
	int rc, sqlite_rc;
	*out = NULL;
	*n = 0;
	ns_i64map_init(&l.to_local);
	if ((rc = ns_store_check_schema(db_path, err)) || (rc = ns_store_open_readonly(db_path, &l.db, err)) ||
	    (rc = ns_store_check_tables(db_path, l.db, loaded_tables, NS_ARRAY_SIZE(loaded_tables), err)))
		goto out;
	for (int i = 0; i < LOAD__COUNT; i++) {
		sqlite_rc = sqlite3_prepare_v2(l.db, load_sql[i], -1, &l.stmt[i], NULL);
		if (sqlite_rc != SQLITE_OK) {
			rc = ns_store_sqlite_error(err, l.db, sqlite_rc, db_path, "cannot read the database");
			goto out;
		}
	}
	while ((sqlite_rc = sqlite3_step(l.stmt[LOAD_TRACES])) == SQLITE_ROW) {
		if (n_traces == cap_traces) {
			size_t cap = cap_traces ? cap_traces * 2 : 4;
			struct ns_trace *grown = realloc(traces, cap * sizeof(*traces));
			if (!grown) {
				rc = load_oom(&l, err);
				goto out;
			}
			traces = grown;
			cap_traces = cap;
		}
		ns_trace_init(&traces[n_traces++]);
		if ((rc = load_trace(&l, &traces[n_traces - 1], err)))
			goto out;
	}
	if (sqlite_rc != SQLITE_DONE) {
		rc = step_error(&l, sqlite_rc, err);
		goto out;
	}
	*out = traces;
	*n = n_traces;
	traces = NULL;
	n_traces = 0;
out:
	for (size_t i = 0; i < n_traces; i++)
		ns_trace_release(&traces[i]);
	free(traces);
	ns_i64map_release(&l.to_local);
	for (int i = 0; i < LOAD__COUNT; i++)
		sqlite3_finalize(l.stmt[i]);
	sqlite3_close(l.db);
	return rc;
}
