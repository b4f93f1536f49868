/* Reading a database back: recognising one, opening it read-only, and
 * rebuilding the ns_trace models ingest produced (ns_store_load). */
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store-internal.h"

int ns_store_sqlite_error(struct ns_error *err, sqlite3 *db, int rc, const char *path, const char *what)
{
	return ns_store_sqlite_failure(err, rc, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), path, what);
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

int ns_store_open_readonly(const char *db_path, sqlite3 **out, struct ns_error *err)
{
	struct stat st;
	sqlite3 *db = NULL;
	*out = NULL;
	/* SQLite's "unable to open database file" does not say why */
	if (stat(db_path, &st) < 0)
		return ns_error_set(err, NS_ERR_IO, "%s: cannot open the database: %s", db_path, strerror(errno));
	int rc = sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
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
	int fd = open(db_path, O_RDONLY | O_CLOEXEC);
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

/* Checks that db_path holds a database of the schema this build reads. */
static int check_schema(const char *db_path, struct ns_error *err)
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

enum load_stmt { LOAD_TRACES, LOAD_STRINGS, LOAD_THREADS, LOAD_META, LOAD_EVENTS, LOAD__COUNT };

static const char *const load_sql[LOAD__COUNT] = {
	[LOAD_TRACES] = "SELECT id, path, rank, world_size, base_time_ns, ts_has_fraction, profile_memory,"
			" legacy_array, activity_mask, n_trace_events, truncated_at, first_event_id,"
			" lead(first_event_id, 1, 9223372036854775807) OVER (ORDER BY id), abspath FROM traces ORDER BY id",
	[LOAD_STRINGS] = "SELECT ts.local_id, ts.string_id, s.text FROM trace_strings ts"
			 " JOIN strings s ON s.id = ts.string_id WHERE ts.trace_id = ? ORDER BY ts.local_id",
	[LOAD_THREADS] = "SELECT id, pid, tid, pid_text, tid_text, name FROM threads"
			 " WHERE trace_id = ? ORDER BY id",
	[LOAD_META] = "SELECT key, value_json FROM metadata WHERE trace_id = ? ORDER BY ord",
	/* a trace's events are the ids from its first_event_id to the next trace's */
	[LOAD_EVENTS] = "SELECT id - ?2, activity, kind, flags, name_id, thread_id, ts_ns, dur_ns, external_id,"
			" correlation, bytes, mem_device_type, input_dims_id, stack_id, neff FROM events"
			" WHERE id >= ?2 AND id < ?3 AND trace_id = ?1 AND kept ORDER BY id",
};

struct loader {
	const char *path;
	sqlite3 *db;
	sqlite3_stmt *stmt[LOAD__COUNT];
	uint32_t *to_local;  /* database string id -> trace string id + 1 (0: not in this trace) */
	size_t n_to_local;
	int64_t trace_id;
	int64_t first_event_id;
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
	int64_t sid = sqlite3_column_int64(st, i);
	if (sid < 0 || (uint64_t)sid >= l->n_to_local || !l->to_local[sid])
		return ns_error_set(err, NS_ERR_INPUT,
				    "%s: damaged database: trace %lld refers to string %lld, which it does not have",
				    l->path, (long long)l->trace_id, (long long)sid);
	*out = l->to_local[sid] - 1;
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
	memset(l->to_local, 0, l->n_to_local * sizeof(*l->to_local));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t local = sqlite3_column_int64(st, 0), sid = sqlite3_column_int64(st, 1);
		ns_str got;
		if (intern_column(st, 2, t, &got) < 0)
			return load_oom(l, err);
		if ((int64_t)got != local || sid < 0 || (uint64_t)sid >= l->n_to_local)
			return ns_error_set(err, NS_ERR_INPUT,
					    "%s: damaged database: the strings of trace %lld are not numbered 0..n-1",
					    l->path, (long long)l->trace_id);
		l->to_local[sid] = (uint32_t)local + 1;
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

static int load_events(struct loader *l, struct ns_trace *t, struct ns_error *err)
{
	sqlite3_stmt *st = l->stmt[LOAD_EVENTS];
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ns_event ev;
		memset(&ev, 0, sizeof(ev));
		int64_t thread = column_opt(st, 5), bytes = column_opt(st, 10), mem_type = column_opt(st, 11);
		int64_t idx = sqlite3_column_int64(st, 0);
		if (idx < 0 || idx > UINT32_MAX)
			return ns_error_set(err, NS_ERR_INPUT,
					    "%s: damaged database: event %lld of trace %lld is outside its id range",
					    l->path, (long long)(idx + l->first_event_id), (long long)l->trace_id);
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
		if (ns_trace_push(t, &ev) < 0)
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
	t->rank = column_opt(tr, 2);
	t->world_size = column_opt(tr, 3);
	t->base_time_ns = column_opt(tr, 4);
	t->has_base_time = t->base_time_ns != NS_NONE;
	t->ts_has_fraction = sqlite3_column_int(tr, 5);
	t->profile_memory = sqlite3_column_int(tr, 6);
	t->legacy_array = sqlite3_column_int(tr, 7);
	int64_t mask = sqlite3_column_int64(tr, 8);
	for (int cat = 0; cat < NS_CAT__COUNT && cat < 63; cat++)
		t->has_cat[cat] = (mask >> cat) & 1;
	t->n_trace_events = (uint64_t)sqlite3_column_int64(tr, 9);
	int64_t truncated_at = column_opt(tr, 10);
	t->truncated_at = truncated_at == NS_NONE ? -1 : truncated_at;
	l->first_event_id = sqlite3_column_int64(tr, 11);
	for (int i = LOAD_STRINGS; i < LOAD__COUNT; i++) {
		sqlite3_reset(l->stmt[i]);
		sqlite3_bind_int64(l->stmt[i], 1, l->trace_id);
	}
	sqlite3_bind_int64(l->stmt[LOAD_EVENTS], 2, l->first_event_id);
	sqlite3_bind_int64(l->stmt[LOAD_EVENTS], 3, sqlite3_column_int64(tr, 12));
	if ((rc = load_strings(l, t, err)) || (rc = load_threads(l, t, err)) || (rc = load_meta(l, t, err)))
		return rc;
	return load_events(l, t, err);
}

int ns_store_load(const char *db_path, struct ns_trace **out, size_t *n, struct ns_error *err)
{
	struct loader l = { .path = db_path };
	struct ns_trace *traces = NULL;
	size_t n_traces = 0, cap_traces = 0;
	sqlite3_stmt *max_string = NULL;
	int rc, sqlite_rc;
	*out = NULL;
	*n = 0;
	if ((rc = check_schema(db_path, err)) || (rc = ns_store_open_readonly(db_path, &l.db, err)))
		goto out;
	for (int i = 0; i < LOAD__COUNT; i++) {
		sqlite_rc = sqlite3_prepare_v2(l.db, load_sql[i], -1, &l.stmt[i], NULL);
		if (sqlite_rc != SQLITE_OK) {
			rc = ns_store_sqlite_error(err, l.db, sqlite_rc, db_path, "cannot read the database");
			goto out;
		}
	}
	/* to_local is indexed by database string id */
	sqlite_rc = sqlite3_prepare_v2(l.db, "SELECT coalesce(max(id), 0) + 1 FROM strings", -1, &max_string, NULL);
	if (sqlite_rc == SQLITE_OK && (sqlite_rc = sqlite3_step(max_string)) == SQLITE_ROW)
		l.n_to_local = (size_t)sqlite3_column_int64(max_string, 0);
	if (sqlite_rc != SQLITE_ROW) {
		rc = ns_store_sqlite_error(err, l.db, sqlite_rc, db_path, "cannot read the database");
		goto out;
	}
	if (!(l.to_local = calloc(l.n_to_local, sizeof(*l.to_local)))) {
		rc = load_oom(&l, err);
		goto out;
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
	free(l.to_local);
	sqlite3_finalize(max_string);
	for (int i = 0; i < LOAD__COUNT; i++)
		sqlite3_finalize(l.stmt[i]);
	sqlite3_close(l.db);
	return rc;
}
