/* Writing a database (docs/schema.md).
 *
 * Design notes:
 * - Speed: every traceEvents element becomes one events row, inside a
 *   single transaction, with journaling and syncing off (the file is a
 *   private temp file until commit, so a crash can only lose the temp
 *   file). A writer thread (rowq.h) inserts the rows, a run of rows of one
 *   table per statement, while this thread parses and aggregates.
 *   events.id and event_stats.event_id are rowids, numbered across the
 *   database, so rows append to their b-trees and need no index of their
 *   own; event_stats rows go in events.id order for the same reason, and
 *   a row whose id is the next one leaves the numbering to SQLite
 *   (put_rowid). The other indexes are built once, after the rows they
 *   cover.
 * - Strings: the model interns strings per trace; the database has one
 *   strings table shared by all traces. gmap translates a trace's string ids
 *   to the database's on first use, so the hot path is an array lookup.
 *   trace_strings records the trace's own numbering so ns_store_load can
 *   rebuild the model's string table with the same ids.
 * - Atomicity: the database is built in "<db>.tmp-<pid>-<random>" beside
 *   the target and renamed over it after an fsync. Temp files left by a
 *   killed writer (their pid is gone) are removed by the next create.
 * - The disk: blocks for about the whole file are reserved up front
 *   (ns_store_reserve), and the pages written so far go out while the
 *   event statistics are written (start_flush), so that the fsync has
 *   little left to do.
 */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/assert.h"
#include "common/sort.h"
#include "common/vec.h"
#include "ntff/engstats.h"
#include "store/rowq.h"
#include "store/store-internal.h"

/* memory_events (schema.c) selects these kinds by number. */
_Static_assert(NS_KIND_MEMORY == 1 && NS_KIND_OOM == 2, "schema.c memory_events view");

_Static_assert(STMT__COUNT < 256, "rowq.c keeps a statement id in a byte");

/* What the writer thread runs: the INSERT of each table it fills, and the
 * correlation index, which it builds once a trace's events are in (while
 * the trace is being aggregated); and what a failure of each is called. */
static const struct ns_rowq_stmt stmt_def[STMT__COUNT] = {
	[STMT_EVENT] = { .table = "events", .what = "cannot store an event" },
	[STMT_STRING] = { .table = "strings", .what = "cannot store strings" },
	[STMT_TRACE_STRING] = { .table = "trace_strings", .what = "cannot store strings" },
	[STMT_THREAD] = { .table = "threads", .what = "cannot store a thread" },
	[STMT_PROCESS] = { .table = "processes", .what = "cannot store a process" },
	[STMT_META] = { .table = "metadata", .what = "cannot store trace metadata" },
	[STMT_XWARN] = { .table = "explorer_warnings", .what = "cannot store an Explorer warning" },
	[STMT_FLOW] = { .table = "flows", .what = "cannot store a flow" },
	[STMT_STATS] = { .table = "event_stats", .what = "cannot store event statistics" },
	[STMT_MEMORY] = { .table = "event_memory", .what = "cannot store event statistics" },
	[STMT_AVG] = { .table = "key_averages_rows", .what = "cannot store a key_averages row" },
	[STMT_TRACE] = { .table = "traces", .what = "cannot store the trace" },
	[STMT_DETAIL] = { .table = "device_detail", .what = "cannot store device detail" },
	[STMT_NEFF_SUMMARY] = { .table = "neff_summary", .what = "cannot store a NEFF summary" },
	[STMT_ENGINE_OPCODES] = { .table = "engine_opcodes", .what = "cannot store engine statistics" },
	[STMT_CORRELATION_INDEX] = { .sql = ns_schema_correlation_index, .what = "cannot build the correlation index" },
};

#define NO_STRING UINT32_MAX /* an absent database string id */
#define NO_THREAD UINT32_MAX

/* One side of a flow. */
struct flow_end {
	int64_t ts_ns;
	uint32_t event;   /* position in traceEvents */
	uint32_t thread;  /* index into ns_trace.threads, or NO_THREAD */
	bool present;
};

/* A flow, kept until the trace's events end: the rows go in ordered by
 * (cat, id) in the database's string ids, then file order. */
struct flow {
	int64_t id_int;   /* the flow id, when it is an integer */
	ns_str cat;       /* database string id of the category */
	ns_str id_text;   /* database string id of a non-integer flow id */
	bool id_is_int;
	struct flow_end start, end;
};

/* A process seen in process_* metadata events, keyed by its pid as written. */
struct process {
	ns_str pid_text;  /* the trace's string id */
	int64_t pid;      /* NS_NONE when not an integer */
	ns_str name, labels; /* database string ids, or NO_STRING */
	int64_t sort_index;
};

struct ns_store {
	char *db_path, *tmp_path;
	int tmp_fd;                /* holds the flock that marks tmp_path as in use, or -1 */
	pthread_t flusher;         /* sending the pages written so far to disk (start_flush) */
	bool flushing;             /* flusher is to be joined */
	sqlite3 *db;
	struct ns_rowq *rows;      /* runs stmt_def; while it lives, only it uses db */
	struct ns_strtab strings;  /* mirrors the strings table */
	uint32_t strings_written;  /* ids below this are already in the table */
	int64_t next_trace_id;
	/* the trace being written (trace_id 0: none) */
	int64_t trace_id;
	int64_t first_event_id;    /* events.id of its traceEvents[0] */
	int64_t end_event_id;      /* one past its highest events.id so far (the next trace's first) */
	int64_t end_stats_id;      /* one past the highest event_stats.event_id so far */
	char *src_path, *src_abspath;
	int64_t src_size, src_mtime_ns;
	uint32_t *gmap;            /* trace string id -> database string id + 1 (0: not yet) */
	size_t gmap_cap;
	struct flow *flows;        /* until ns_store_end_events */
	size_t n_flows, cap_flows;
	bool events_ended;         /* ns_store_end_events ran for this trace */
	bool stats_written;        /* ns_store_event_stats ran for this trace */
	struct process *procs;
	size_t n_procs, cap_procs;
	int64_t *thread_sort;      /* thread index -> thread_sort_index, NS_NONE if unset */
	size_t cap_thread_sort;
};

static int nomem(struct ns_error *err, const char *what)
{
	return ns_error_set(err, NS_ERR_NOMEM, "out of memory while %s", what);
}

/* Grows *ptr to hold at least need elements (doubling, new space zeroed). */
static int grow_zeroed(void **ptr, size_t *cap, size_t elem, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t new_cap = *cap ? *cap : 64;
	while (new_cap < need) {
		if (new_cap > SIZE_MAX / 2 / elem)
			return -1;
		new_cap *= 2;
	}
	char *p = realloc(*ptr, new_cap * elem);
	if (!p)
		return -1;
	memset(p + *cap * elem, 0, (new_cap - *cap) * elem);
	*ptr = p;
	*cap = new_cap;
	return 0;
}

static int exec_sql(struct ns_store *s, const char *sql, const char *what, struct ns_error *err)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return ns_store_sqlite_error(err, s->db, rc, s->db_path, what);
	return 0;
}

/* A database string id, NULL for NO_STRING. */
static void put_sid(struct ns_rowq *q, ns_str sid)
{
	if (sid == NO_STRING)
		ns_rowq_null(q);
	else
		ns_rowq_int(q, sid);
}

/* One of the model's strings as text. */
static void put_model_text(struct ns_rowq *q, const struct ns_trace *t, ns_str id)
{
	ns_rowq_text(q, ns_strtab_get(&t->strings, id), ns_strtab_len(&t->strings, id));
}

/* One of the model's strings, NULL for its id 0 ("absent"). */
static void put_model_text_opt(struct ns_rowq *q, const struct ns_trace *t, ns_str id)
{
	if (id)
		put_model_text(q, t, id);
	else
		ns_rowq_null(q);
}

/* A pid/tid as the trace wrote it: the integer, else the text. */
static void put_track(struct ns_rowq *q, const struct ns_trace *t, ns_str text, int64_t value)
{
	if (value != NS_NONE)
		ns_rowq_int(q, value);
	else
		put_model_text(q, t, text);
}

static ns_str map_string_slow(struct ns_store *s, const struct ns_trace *t, ns_str local)
{
	if (local >= t->strings.count)
		return NO_STRING;
	if (grow_zeroed((void **)&s->gmap, &s->gmap_cap, sizeof(*s->gmap), (size_t)local + 1) < 0)
		return NO_STRING;
	ns_str sid = ns_strtab_intern(&s->strings, ns_strtab_get(&t->strings, local),
				      ns_strtab_len(&t->strings, local));
	if (sid != NO_STRING)
		s->gmap[local] = sid + 1;
	return sid;
}

/* The database string id of one of the trace's strings (NO_STRING on OOM). */
static inline ns_str map_string(struct ns_store *s, const struct ns_trace *t, ns_str local)
{
	if (local < s->gmap_cap && s->gmap[local])
		return s->gmap[local] - 1;
	return map_string_slow(s, t, local);
}

/* As map_string, but the trace's string 0 ("absent") maps to NO_STRING. */
static inline ns_str map_optional(struct ns_store *s, const struct ns_trace *t, ns_str local,
				  bool *oom)
{
	if (!local)
		return NO_STRING;
	ns_str sid = map_string(s, t, local);
	if (sid == NO_STRING)
		*oom = true;
	return sid;
}

/* A database string as text, NULL for NO_STRING. */
static void put_database_text(struct ns_store *s, ns_str sid)
{
	if (sid == NO_STRING)
		ns_rowq_null(s->rows);
	else
		ns_rowq_text(s->rows, ns_strtab_get(&s->strings, sid), ns_strtab_len(&s->strings, sid));
}

/* Queues a row's INTEGER PRIMARY KEY id, given *end, one past the largest
 * id queued to its table so far. Where id is *end, the row gives NULL
 * instead: SQLite then numbers it the same (one past the largest id in
 * the table; in an empty one, 1) and appends it without searching the
 * b-tree for the id. Ids follow file order, so that is most rows. */
static void put_rowid(struct ns_rowq *q, int64_t *end, int64_t id)
{
	if (id > 0 && id == *end)
		ns_rowq_null(q);
	else
		ns_rowq_int(q, id);
	if (id >= *end)
		*end = id + 1;
}

/* events.id of a model event index (NS_NONE stays NS_NONE). */
static int64_t event_id(const struct ns_store *s, int64_t idx)
{
	return idx == NS_NONE ? NS_NONE : s->first_event_id + idx;
}

/* A temporary database whose writer is gone. A writer holds an exclusive
 * flock on its temp file until it renames or removes it, and the kernel
 * drops the lock when the writer dies however it dies: a file we can lock
 * has no writer. (The pid in the name is only for people: pids say nothing
 * across pid namespaces, locks do.) On a filesystem without locks, age
 * decides: untouched for a day. */
#define STALE_UNLOCKABLE_SECONDS (24 * 3600)

static bool is_stale_temp(int fd)
{
	struct stat st;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return true;
	if (errno == EWOULDBLOCK || errno == EINTR)
		return false;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && time(NULL) - st.st_mtim.tv_sec > STALE_UNLOCKABLE_SECONDS;
}

void ns_store_remove_stale_temps(const char *dir, bool (*is_temp_name)(const char *name, void *ctx), void *ctx)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *de; (de = readdir(d));) {
		if (!is_temp_name(de->d_name, ctx))
			continue;
		int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			continue;
		if (is_stale_temp(fd))
			unlinkat(dirfd(d), de->d_name, 0);
		close(fd); /* (and with it the lock) */
	}
	closedir(d);
}

/* "<name>.tmp-...": a temporary database of name. */
static bool is_temp_of(const char *entry, void *name)
{
	size_t len = strlen(name);
	return strncmp(entry, name, len) == 0 && strncmp(entry + len, ".tmp-", 5) == 0;
}

/* Removes "<db_path>.tmp-<pid>-..." files whose writer is gone. */
static void remove_stale_temps(const char *db_path)
{
	const char *slash = strrchr(db_path, '/');
	char *dir = slash ? strndup(db_path, (size_t)(slash - db_path) + 1) : strdup(".");
	if (dir)
		ns_store_remove_stale_temps(dir, is_temp_of, (void *)(slash ? slash + 1 : db_path));
	free(dir);
}

/* Whether fd is still the file at path (a cleaner may have removed it
 * between our create and our lock). */
static bool still_at(int fd, const char *path)
{
	struct stat by_fd, by_path;
	return fstat(fd, &by_fd) == 0 && stat(path, &by_path) == 0 && by_fd.st_dev == by_path.st_dev &&
	       by_fd.st_ino == by_path.st_ino;
}

int ns_store_create_temp(const char *path, int flags, char **tmp)
{
	for (int attempt = 0; attempt < 16; attempt++) {
		uint32_t random_part;
		if (getrandom(&random_part, sizeof(random_part), GRND_NONBLOCK) != sizeof(random_part))
			random_part = (uint32_t)time(NULL) ^ ((uint32_t)attempt << 24) ^ (uint32_t)clock();
		if (asprintf(tmp, "%s.tmp-%ld-%08x", path, (long)getpid(), random_part) < 0) {
			*tmp = NULL;
			errno = ENOMEM;
			return -1;
		}
		int fd = open(*tmp, flags | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && still_at(fd, *tmp))
			return fd;
		int saved = errno;
		if (fd >= 0)
			close(fd); /* removed (or being removed) by another writer's cleanup: another name */
		free(*tmp);
		*tmp = NULL;
		if (fd < 0 && saved != EEXIST) {
			errno = saved;
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

/* The store's temp file, locked for as long as the store lives (see
 * remove_stale_temps). */
static int create_temp_file(struct ns_store *s, struct ns_error *err)
{
	free(s->tmp_path);
	s->tmp_fd = ns_store_create_temp(s->db_path, O_RDWR, &s->tmp_path);
	if (s->tmp_fd >= 0)
		return 0;
	if (errno == ENOMEM)
		return nomem(err, "naming the temporary database");
	if (errno == EEXIST)
		return ns_error_set(err, NS_ERR_IO, "%s: cannot create a unique temporary file beside it", s->db_path);
	return ns_error_set(err, NS_ERR_IO, "%s: cannot create the database: %s", s->db_path, strerror(errno));
}

/* What a file that is not a regular file is, for messages. */
static const char *file_kind(mode_t mode)
{
	return S_ISDIR(mode) ? "a directory" : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
	       : S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket" : S_ISLNK(mode) ? "a symbolic link"
	       : "not a regular file";
}

int ns_store_check_output(const char *db_path, bool force, const struct ns_source_id *inputs, size_t n,
			  char **target, struct ns_error *err)
{
	struct stat st;
	char *path = NULL;
	int rc = 0;
	*target = NULL;
	if (lstat(db_path, &st) < 0) {
		if (errno != ENOENT)
			return ns_error_set(err, NS_ERR_IO, "%s: cannot check the output: %s", db_path, strerror(errno));
		/* (a missing folder is reported by the create, before any work) */
		if (!(*target = strdup(db_path)))
			return nomem(err, "checking the output");
		return 0;
	}
	if (S_ISLNK(st.st_mode)) { /* written through: the file it names is replaced, the link stays */
		if (!(path = realpath(db_path, NULL)) || stat(path, &st) < 0) {
			rc = ns_error_set(err, errno == ENOMEM ? NS_ERR_NOMEM : NS_ERR_USAGE,
					  "%s: a symbolic link to no file (%s); the database is not written through it",
					  db_path, strerror(errno));
			goto out;
		}
	} else if (!(path = strdup(db_path))) {
		rc = nomem(err, "checking the output");
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = ns_error_set(err, NS_ERR_USAGE, "%s: is %s; a database is written only to a regular file",
				  db_path, file_kind(st.st_mode));
		if (S_ISDIR(st.st_mode))
			ns_error_hint(err, "name the database file, e.g. -o %s/trace.db", db_path);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (inputs[i].dev == (uint64_t)st.st_dev && inputs[i].ino == (uint64_t)st.st_ino) {
			if (strcmp(inputs[i].path, db_path) == 0)
				rc = ns_error_set(err, NS_ERR_USAGE, "%s: is one of the inputs; the database would "
						  "replace it", db_path);
			else
				rc = ns_error_set(err, NS_ERR_USAGE, "%s: is the input %s; the database would replace it",
						  db_path, inputs[i].path);
			ns_error_hint(err, "choose another -o, e.g. %s.db", inputs[i].path);
			goto out;
		}
	}
	if (!force && !ns_store_is_db(path)) {
		rc = ns_error_set(err, NS_ERR_USAGE, "%s: exists and is not a neuron-stats database; not replaced",
				  db_path);
		ns_error_hint(err, "add --force to replace it, or choose another -o");
		goto out;
	}
	*target = path;
	path = NULL;
out:
	free(path);
	return rc;
}

/* Fails unless db_path is a regular file or nothing (st: what is there;
 * st_mode 0 for nothing): nothing else is ever renamed over. */
static int check_replaceable(const char *db_path, struct stat *st, struct ns_error *err)
{
	if (lstat(db_path, st) < 0) {
		st->st_mode = 0;
		return errno == ENOENT ? 0
				       : ns_error_set(err, NS_ERR_IO, "%s: cannot check the output: %s", db_path,
						      strerror(errno));
	}
	if (!S_ISREG(st->st_mode))
		return ns_error_set(err, NS_ERR_IO, "%s: is %s; not replaced", db_path, file_kind(st->st_mode));
	return 0;
}

/* Gives the new database the mode and owner of the file it replaces (or
 * the ones a new file gets when there is none). A device, FIFO, socket,
 * directory or symbolic link that appeared at db_path since the create
 * stays. */
static int take_over_identity(struct ns_store *s, struct ns_error *err)
{
	struct stat st;
	int rc = check_replaceable(s->db_path, &st, err);
	if (rc || !st.st_mode)
		return rc;
	if (fchown(s->tmp_fd, st.st_uid, st.st_gid) < 0 && fchown(s->tmp_fd, (uid_t)-1, st.st_gid) < 0)
		errno = 0; /* (not root, nor in the file's group: the new file stays ours) */
	if (fchmod(s->tmp_fd, st.st_mode & 07777) < 0)
		return ns_error_set(err, NS_ERR_IO, "%s: cannot set the database's mode: %s", s->db_path,
				    strerror(errno));
	return 0;
}

/* Fills the lookup tables and store_info of a new database. */
static int write_constants(struct ns_store *s, struct ns_error *err)
{
	static const char *const device_types[] = { "CPU", "CUDA", "PrivateUse1", "XPU", "MTIA", "HPU" };
	char *buf = NULL;
	size_t buf_len = 0;
	int rc = 0;
	FILE *f = open_memstream(&buf, &buf_len);
	if (!f)
		return nomem(err, "creating the schema");
	fprintf(f, "INSERT INTO activities VALUES (%d, 'other')", NS_CAT_OTHER);
	for (int cat = NS_CAT_OTHER + 1; cat < NS_CAT__COUNT; cat++)
		fprintf(f, ", (%d, '%s')", cat, ns_cat_name((enum ns_cat)cat));
	fputs(";\nINSERT INTO device_types VALUES ", f);
	for (size_t i = 0; i < NS_ARRAY_SIZE(device_types); i++)
		fprintf(f, "%s(%zu, '%s')", i ? ", " : "", i, device_types[i]);
	fprintf(f,
		";\nINSERT INTO store_info VALUES ('schema_version', '%d'), "
		"('writer', '%s');\n"
		"PRAGMA user_version = %d;\nPRAGMA application_id = %d;\n",
		NS_SCHEMA_VERSION, NS_STORE_WRITER, NS_SCHEMA_VERSION, (int32_t)NS_APPLICATION_ID);
	if (fclose(f) != 0 || !buf) {
		rc = nomem(err, "creating the schema");
		goto out;
	}
	rc = exec_sql(s, buf, "cannot create the schema", err);
out:
	free(buf);
	return rc;
}

int ns_store_create(const char *db_path, struct ns_store **out, struct ns_error *err)
{
	struct ns_store *s = calloc(1, sizeof(*s));
	int rc = 0;
	*out = NULL;
	if (s)
		s->tmp_fd = -1;
	if (!s || !(s->db_path = strdup(db_path))) {
		rc = nomem(err, "creating the database");
		goto out;
	}
	ns_strtab_init(&s->strings);
	s->next_trace_id = 1;
	/* Memory statistics cost a global mutex per allocation (~5% of an
	 * ingest). This only takes effect before SQLite's first use in the
	 * process and fails harmlessly after it. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	struct stat existing; /* (a cache path taken by a directory fails now, not after the work) */
	if ((rc = check_replaceable(db_path, &existing, err)))
		goto out;
	remove_stale_temps(db_path);
	if ((rc = create_temp_file(s, err)))
		goto out;
	int sqlite_rc = sqlite3_open_v2(s->tmp_path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (sqlite_rc != SQLITE_OK) {
		rc = ns_store_sqlite_error(err, s->db, sqlite_rc, db_path, "cannot open the new database");
		goto out;
	}
	/* The temp file is private until the rename, so nothing needs a
	 * journal or a sync before then. page_size must precede the first
	 * write. A 4 MiB page cache and a single-threaded sorter, its sorts
	 * spilling to temp files, keep a large ingest within the memory bound:
	 * the correlation index is sorted at the aggregation's peak, where
	 * 8 MiB and 2 sorter threads took a 1 GB ingest to 300.7 MiB, at the
	 * same speed (docs/performance.md). */
	if ((rc = exec_sql(s,
			   "PRAGMA page_size = 16384; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
			   "PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = FILE;"
			   "PRAGMA cache_size = -4096; PRAGMA threads = 0; BEGIN;",
			   "cannot configure the new database", err)) ||
	    (rc = exec_sql(s, ns_schema_tables, "cannot create the schema", err)) ||
	    (rc = exec_sql(s, ns_schema_views, "cannot create the schema views", err)) ||
	    (rc = write_constants(s, err)))
		goto out;
	if ((rc = ns_rowq_start(&s->rows, s->db, stmt_def, STMT__COUNT, s->db_path, true, err)))
		goto out;
	*out = s;
out:
	if (rc)
		ns_store_abort(s);
	return rc;
}

void ns_store_reserve(struct ns_store *s, int64_t bytes)
{
	if (bytes > 0)
		fallocate(s->tmp_fd, FALLOC_FL_KEEP_SIZE, 0, bytes);
}

static void forget_flows(struct ns_store *s)
{
	free(s->flows);
	s->flows = NULL;
	s->n_flows = s->cap_flows = 0;
}

/* Forgets everything about the trace being written. */
static void reset_trace_state(struct ns_store *s)
{
	free(s->src_path);
	free(s->src_abspath);
	s->src_path = s->src_abspath = NULL;
	s->trace_id = 0;
	if (s->gmap)
		memset(s->gmap, 0, s->gmap_cap * sizeof(*s->gmap));
	forget_flows(s);
	s->events_ended = false;
	s->stats_written = false;
	s->n_procs = 0;
	for (size_t i = 0; i < s->cap_thread_sort; i++)
		s->thread_sort[i] = NS_NONE;
}

int ns_store_begin_trace(struct ns_store *s, const struct ns_source_id *src, int64_t *trace_id,
			 struct ns_error *err)
{
	NS_ASSERT(!s->trace_id); /* the previous trace was ended */
	reset_trace_state(s);
	s->src_path = strdup(src->path);
	s->src_abspath = strdup(src->abspath ? src->abspath : src->path);
	if (!s->src_path || !s->src_abspath) {
		reset_trace_state(s);
		return nomem(err, "starting a trace");
	}
	s->src_size = src->size;
	s->src_mtime_ns = src->mtime_ns;
	s->trace_id = s->next_trace_id++;
	s->first_event_id = s->end_event_id;
	*trace_id = s->trace_id;
	return 0;
}

/* One side of a flow row, with its thread checked. */
static struct flow_end flow_end_of(const struct ns_trace *t, const struct ns_row_flow_end *e)
{
	return (struct flow_end){ .ts_ns = e->ts_ns, .event = e->event,
				  .thread = e->thread < t->n_threads ? e->thread : NO_THREAD, .present = e->present };
}

int ns_store_flow(void *ctx, const struct ns_trace *t, const struct ns_row_flow *row, struct ns_error *err)
{
	struct ns_store *s = ctx;
	if (s->n_flows == s->cap_flows &&
	    grow_zeroed((void **)&s->flows, &s->cap_flows, sizeof(*s->flows), s->n_flows + 1) < 0)
		return nomem(err, "recording flows");
	struct flow f = {
		.id_int = row->id.is_int ? row->id.num : 0,
		.cat = map_string(s, t, row->cat),
		.id_text = row->id.is_int ? NO_STRING : ns_strtab_intern(&s->strings, row->id.text, row->id.len),
		.id_is_int = row->id.is_int,
		.start = flow_end_of(t, &row->start),
		.end = flow_end_of(t, &row->end),
	};
	if (f.cat == NO_STRING || (!f.id_is_int && f.id_text == NO_STRING))
		return nomem(err, "recording flows");
	s->flows[s->n_flows++] = f;
	return 0;
}

/* The process entry for a pid as written, added if new; NULL on OOM. */
static struct process *find_process(struct ns_store *s, const struct ns_thread *th)
{
	for (size_t i = 0; i < s->n_procs; i++)
		if (s->procs[i].pid_text == th->pid_text)
			return &s->procs[i];
	if (s->n_procs == s->cap_procs &&
	    grow_zeroed((void **)&s->procs, &s->cap_procs, sizeof(*s->procs), s->n_procs + 1) < 0)
		return NULL;
	struct process *p = &s->procs[s->n_procs++];
	*p = (struct process){ th->pid_text, th->pid, NO_STRING, NO_STRING, NS_NONE };
	return p;
}

/* A decoded text of a metadata row as a database string (NO_STRING if
 * none; *oom on allocation failure). */
static ns_str intern_meta_text(struct ns_store *s, const struct ns_row_meta *m, bool *oom)
{
	if (!m->has_text)
		return NO_STRING;
	ns_str sid = ns_strtab_intern(&s->strings, m->text, m->len);
	if (sid == NO_STRING)
		*oom = true;
	return sid;
}

/* thread_sort_index: the threads table's sort_index. */
static int note_thread_sort(struct ns_store *s, uint32_t thread, int64_t sort_index)
{
	size_t old_cap = s->cap_thread_sort;
	if (grow_zeroed((void **)&s->thread_sort, &s->cap_thread_sort, sizeof(*s->thread_sort), (size_t)thread + 1) < 0)
		return -1;
	for (size_t i = old_cap; i < s->cap_thread_sort; i++)
		s->thread_sort[i] = NS_NONE;
	s->thread_sort[thread] = sort_index;
	return 0;
}

/* process_name / process_labels / process_sort_index / thread_sort_index
 * metadata rows feed the processes and threads tables. */
static int note_metadata(struct ns_store *s, const struct ns_trace *t, const struct ns_row_event *row,
			 struct ns_error *err)
{
	const struct ns_row_meta *m = &row->meta;
	bool oom = false;
	if (m->kind == NS_ROW_META_NONE || row->ev.thread >= t->n_threads)
		return 0;
	if (m->kind == NS_ROW_META_THREAD_SORT_INDEX) {
		oom = m->has_sort_index && note_thread_sort(s, row->ev.thread, m->sort_index) < 0;
	} else {
		struct process *p = find_process(s, &t->threads[row->ev.thread]);
		if (!p)
			oom = true;
		else if (m->kind == NS_ROW_META_PROCESS_NAME)
			p->name = intern_meta_text(s, m, &oom);
		else if (m->kind == NS_ROW_META_PROCESS_LABELS)
			p->labels = intern_meta_text(s, m, &oom);
		else if (m->kind == NS_ROW_META_PROCESS_SORT_INDEX && m->has_sort_index)
			p->sort_index = m->sort_index;
	}
	return oom ? nomem(err, "recording process metadata") : 0;
}

/* A flow event's id: an integer, or a text (without its quotes). */
struct flow_id {
	bool is_int;
	int64_t num;
	ns_str text; /* NO_STRING for none */
};

/* Reads row's flow id into *fid; false when interning its text ran out of
 * memory. */
static bool read_flow_id(struct ns_store *s, const struct ns_row_event *row, struct flow_id *fid)
{
	*fid = (struct flow_id){ .text = NO_STRING };
	if (!row->flow_id.present)
		return true;
	fid->is_int = row->flow_id.is_int;
	fid->num = row->flow_id.num;
	if (fid->is_int)
		return true;
	fid->text = ns_strtab_intern(&s->strings, row->flow_id.text, row->flow_id.len);
	return fid->text != NO_STRING;
}

/* The strings of an event row, mapped to the database's ids. */
struct event_strings {
	ns_str name, cat, dims, types, stack;
};

/* Queues the `events` row. */
static int put_event_row(struct ns_store *s, const struct ns_trace *t, const struct ns_row_event *row,
			 const struct event_strings *str, const struct flow_id *fid, struct ns_error *err)
{
	static const char *const ph_text[] = { [NS_PH_X] = "X", [NS_PH_I] = "i", [NS_PH_S] = "s",
					       [NS_PH_F] = "f", [NS_PH_M] = "M", [NS_PH_C] = "C",
					       [NS_PH_B] = "B", [NS_PH_E] = "E", [NS_PH_OTHER] = "?" };
	const struct ns_event *ev = &row->ev;
	const struct ns_thread *th = ev->thread < t->n_threads ? &t->threads[ev->thread] : NULL;
	struct ns_rowq *q = s->rows;
	int64_t id = event_id(s, ev->idx);
	ns_rowq_row(q, STMT_EVENT);
	ns_rowq_int(q, s->trace_id);
	put_rowid(q, &s->end_event_id, id);
	ns_rowq_int(q, row->kept);
	ns_rowq_text(q, ph_text[row->ph <= NS_PH_OTHER ? row->ph : NS_PH_OTHER], 1);
	put_sid(q, str->cat);
	ns_rowq_int(q, ev->cat);
	ns_rowq_opt(q, row->kept ? ev->kind : NS_NONE);
	ns_rowq_int(q, ev->flags);
	ns_rowq_int(q, str->name);
	if (th) {
		put_track(q, t, th->pid_text, th->pid);
		put_track(q, t, th->tid_text, th->tid);
		ns_rowq_int(q, ev->thread);
	} else {
		ns_rowq_null(q);
		ns_rowq_null(q);
		ns_rowq_null(q);
	}
	ns_rowq_opt(q, ev->ts_ns);
	ns_rowq_opt(q, ev->dur_ns);
	bool mem = row->kept && ns_event_is_memory(ev);
	ns_rowq_opt(q, mem ? NS_NONE : ev->external_id); /* (the union holds ev->mem there) */
	ns_rowq_opt(q, mem ? NS_NONE : ev->correlation);
	ns_rowq_opt(q, row->rf_id);
	ns_rowq_opt(q, row->seq_nr);
	ns_rowq_opt(q, row->fwd_tid);
	ns_rowq_opt(q, row->device);
	ns_rowq_opt(q, row->stream);
	ns_rowq_opt(q, row->ev_idx);
	/* args.Bytes of memory events, args.bytes of memcpy/memset (the copy's
	 * size; ns_dev_args), else NULL */
	bool on_stream = row->kept && ev->kind == NS_KIND_SLICE && ns_cat_on_stream(ev->cat);
	ns_rowq_opt(q, mem || row->bytes != 0 ? row->bytes : on_stream ? row->copy_bytes : NS_NONE);
	ns_rowq_opt(q, row->mem_device_type < 0 ? NS_NONE : row->mem_device_type);
	put_sid(q, str->dims);
	put_sid(q, str->types);
	put_sid(q, str->stack);
	if (fid->is_int)
		ns_rowq_int(q, fid->num);
	else
		put_database_text(s, fid->text);
	if (row->args)
		ns_rowq_text(q, row->args, row->args_len);
	else
		ns_rowq_null(q);
	put_model_text_opt(q, t, ev->neff);
	ns_rowq_opt(q, row->flops);
	return ns_rowq_end_row(q, err);
}

int ns_store_event(void *ctx, const struct ns_trace *t, const struct ns_row_event *row, struct ns_error *err)
{
	struct ns_store *s = ctx;
	const struct ns_event *ev = &row->ev;
	bool is_flow = row->ph == NS_PH_S || row->ph == NS_PH_F;
	bool oom = false;
	struct flow_id fid = { .text = NO_STRING };
	int rc;

	struct event_strings str = {
		.name = map_string(s, t, ev->name),
		.cat = map_optional(s, t, row->cat_text, &oom),
		.dims = map_optional(s, t, ev->input_dims, &oom),
		.types = map_optional(s, t, row->input_types, &oom),
		.stack = map_optional(s, t, ev->stack, &oom),
	};
	if (is_flow && !read_flow_id(s, row, &fid))
		oom = true;
	if (str.name == NO_STRING || oom)
		return nomem(err, "storing events");
	if ((rc = put_event_row(s, t, row, &str, &fid, err)))
		return rc;
	return row->ph == NS_PH_M ? note_metadata(s, t, row, err) : 0;
}

static int write_threads(struct ns_store *s, const struct ns_trace *t, struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	for (size_t i = 0; i < t->n_threads; i++) {
		const struct ns_thread *th = &t->threads[i];
		ns_rowq_row(q, STMT_THREAD);
		ns_rowq_int(q, s->trace_id);
		ns_rowq_int(q, (int64_t)i);
		put_track(q, t, th->pid_text, th->pid);
		put_track(q, t, th->tid_text, th->tid);
		put_model_text(q, t, th->pid_text);
		put_model_text(q, t, th->tid_text);
		put_model_text_opt(q, t, th->name);
		ns_rowq_opt(q, i < s->cap_thread_sort ? s->thread_sort[i] : NS_NONE);
		int rc = ns_rowq_end_row(q, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int write_processes(struct ns_store *s, const struct ns_trace *t, struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	for (size_t i = 0; i < s->n_procs; i++) {
		const struct process *p = &s->procs[i];
		ns_rowq_row(q, STMT_PROCESS);
		ns_rowq_int(q, s->trace_id);
		put_track(q, t, p->pid_text, p->pid);
		put_database_text(s, p->name);
		put_database_text(s, p->labels);
		ns_rowq_opt(q, p->sort_index);
		int rc = ns_rowq_end_row(q, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int write_metadata(struct ns_store *s, const struct ns_trace *t, struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	for (size_t i = 0; i < t->n_meta; i++) {
		ns_rowq_row(q, STMT_META);
		ns_rowq_int(q, s->trace_id);
		ns_rowq_int(q, (int64_t)i);
		put_model_text(q, t, t->meta[2 * i]);     /* key */
		put_model_text(q, t, t->meta[2 * i + 1]); /* value */
		int rc = ns_rowq_end_row(q, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* neuron-explorer's own warnings of the export the device events came from. */
static int write_xwarnings(struct ns_store *s, const struct ns_trace *t, struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	for (size_t i = 0; i < t->n_xwarn; i++) {
		const struct ns_xwarn_ref *w = &t->xwarn[i];
		ns_rowq_row(q, STMT_XWARN);
		ns_rowq_int(q, s->trace_id);
		ns_rowq_int(q, (int64_t)i);
		put_model_text(q, t, w->file);
		ns_rowq_opt(q, w->pid);
		put_model_text_opt(q, t, w->category);
		put_model_text(q, t, w->message);
		ns_rowq_int(q, w->offset);
		int rc = ns_rowq_end_row(q, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* The event a flow row is ordered by: its start's, else its end's. */
static uint32_t flow_event(const struct flow *f)
{
	return f->start.present ? f->start.event : f->end.event;
}

/* Orders flows by (cat, id), then file order. */
static int cmp_flow(const void *pa, const void *pb)
{
	const struct flow *a = pa, *b = pb;
	if (a->cat != b->cat)
		return a->cat < b->cat ? -1 : 1;
	if (a->id_is_int != b->id_is_int)
		return a->id_is_int ? -1 : 1;
	if (a->id_is_int ? a->id_int != b->id_int : a->id_text != b->id_text) {
		if (a->id_is_int)
			return a->id_int < b->id_int ? -1 : 1;
		return a->id_text < b->id_text ? -1 : 1;
	}
	return flow_event(a) < flow_event(b) ? -1 : flow_event(a) > flow_event(b);
}

/* One side's five columns (NULLs if absent). */
static void put_flow_end(struct ns_store *s, const struct ns_trace *t, const struct flow_end *e)
{
	struct ns_rowq *q = s->rows;
	const struct ns_thread *th = e->present && e->thread != NO_THREAD ? &t->threads[e->thread] : NULL;
	ns_rowq_opt(q, e->present ? event_id(s, e->event) : NS_NONE);
	if (th) {
		ns_rowq_int(q, e->thread);
		put_track(q, t, th->pid_text, th->pid);
		put_track(q, t, th->tid_text, th->tid);
	} else {
		for (int k = 0; k < 3; k++)
			ns_rowq_null(q);
	}
	ns_rowq_opt(q, e->present ? e->ts_ns : NS_NONE);
}

/* The flows rows, in the order of cmp_flow. */
static int write_flows(struct ns_store *s, const struct ns_trace *t, struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	int rc = 0;
	if (s->n_flows)
		ns_sort(s->flows, s->n_flows, sizeof(*s->flows), cmp_flow);
	for (size_t i = 0; i < s->n_flows && !rc; i++) {
		const struct flow *f = &s->flows[i];
		ns_rowq_row(q, STMT_FLOW);
		ns_rowq_int(q, s->trace_id);
		put_database_text(s, f->cat);
		if (f->id_is_int)
			ns_rowq_int(q, f->id_int);
		else
			put_database_text(s, f->id_text);
		put_flow_end(s, t, &f->start);
		put_flow_end(s, t, &f->end);
		rc = ns_rowq_end_row(q, err);
	}
	return rc;
}

/* events.id of a fevent (a memory row's: its record's), or NS_NONE for none. */
static int64_t fevent_event_id(const struct ns_store *s, const struct ns_trace *t, const struct ns_agg *agg,
			       int64_t fevent)
{
	if (fevent < 0 || (size_t)fevent >= agg->n_fevents)
		return NS_NONE;
	int64_t event = agg->fevents[fevent].event;
	if (event < 0 || (size_t)event >= t->n_events)
		return NS_NONE;
	return event_id(s, t->events[event].idx);
}

/* Memory columns of FunctionEvents, held back so that their event_memory
 * rows go in after a run of event_stats rows, not between them. */
#define MEMORY_BATCH 4096
struct memory_row {
	int64_t event_id;
	struct ns_fmem mem;
};

static int write_memory_rows(struct ns_store *s, const struct memory_row *rows, size_t n, struct ns_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		ns_rowq_row(s->rows, STMT_MEMORY);
		ns_rowq_int(s->rows, s->trace_id);
		ns_rowq_int(s->rows, rows[i].event_id);
		ns_rowq_int(s->rows, rows[i].mem.cpu);
		ns_rowq_int(s->rows, rows[i].mem.self_cpu);
		ns_rowq_int(s->rows, rows[i].mem.device);
		ns_rowq_int(s->rows, rows[i].mem.self_device);
		rc = ns_rowq_end_row(s->rows, err);
	}
	return rc;
}

/* One event_stats row per FunctionEvent, in events.id order: then each
 * insert appends to the table's b-tree (in fevent order, a large trace's
 * rows land all over it, and the page cache thrashes). A FunctionEvent
 * without an events row, which only a hand-made ns_agg can have, is
 * skipped. Those with memory also get an event_memory row (a table of its
 * own: in most traces no op has any). */
static int write_event_stats(struct ns_store *s, const struct ns_trace *t, const struct ns_agg *agg,
			     struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	int32_t *depth = malloc((agg->n_fevents + 1) * sizeof(*depth));
	int32_t *fevent_of = malloc((t->n_events + 1) * sizeof(*fevent_of)); /* event index -> fevent */
	struct memory_row *mem_rows = agg->has_mem ? malloc(MEMORY_BATCH * sizeof(*mem_rows)) : NULL;
	size_t n_mem_rows = 0;
	int rc = 0;
	if (!depth || !fevent_of || (agg->has_mem && !mem_rows)) {
		rc = nomem(err, "storing event statistics");
		goto out;
	}
	/* depths in one pass (a parent comes before its children), not by
	 * walking each chain: a deeply nested trace would make that quadratic */
	for (size_t i = 0; i < agg->n_fevents; i++) {
		int32_t parent = ns_fevent_parent(&agg->fevents[i]);
		depth[i] = parent >= 0 ? depth[parent] + 1 : 0;
	}
	memset(fevent_of, 0xff, t->n_events * sizeof(*fevent_of)); /* -1 */
	for (size_t i = 0; i < agg->n_fevents; i++)
		if (fevent_event_id(s, t, agg, (int64_t)i) != NS_NONE)
			fevent_of[agg->fevents[i].event] = (int32_t)i;
	for (size_t e = 0; e < t->n_events && !rc; e++) {
		if (fevent_of[e] < 0)
			continue;
		size_t i = (size_t)fevent_of[e];
		const struct ns_fevent *fe = &agg->fevents[i];
		int64_t id = event_id(s, t->events[e].idx);
		struct ns_fself self = ns_fevent_self(agg, i);
		ns_str key = map_string(s, t, fe->name);
		if (key == NO_STRING) {
			rc = nomem(err, "storing event statistics");
			break;
		}
		ns_rowq_row(q, STMT_STATS);
		ns_rowq_int(q, s->trace_id);
		put_rowid(q, &s->end_stats_id, id);
		ns_rowq_opt(q, fevent_event_id(s, t, agg, ns_fevent_parent(fe)));
		ns_rowq_int(q, depth[i]);
		ns_rowq_int(q, fe->thread);
		ns_rowq_int(q, key);
		ns_rowq_int(q, fe->device_type);
		ns_rowq_int(q, fe->removed);
		ns_rowq_int(q, ns_fevent_start(agg, fe));
		ns_rowq_int(q, ns_fevent_end(agg, fe));
		ns_rowq_int(q, self.self_cpu_ns);
		ns_rowq_int(q, self.self_device_ns);
		ns_rowq_int(q, fe->device_ns);
		ns_rowq_opt(q, fevent_event_id(s, t, agg, ns_fevent_launcher(fe)));
		if ((rc = ns_rowq_end_row(q, err)) || !mem_rows)
			continue;
		struct ns_fmem mem = ns_fevent_mem(agg, i);
		if (mem.cpu || mem.self_cpu || mem.device || mem.self_device)
			mem_rows[n_mem_rows++] = (struct memory_row){ id, mem };
		if (n_mem_rows == MEMORY_BATCH) {
			rc = write_memory_rows(s, mem_rows, n_mem_rows, err);
			n_mem_rows = 0;
		}
	}
	if (!rc)
		rc = write_memory_rows(s, mem_rows, n_mem_rows, err);
out:
	free(mem_rows);
	free(fevent_of);
	free(depth);
	return rc;
}

static int write_key_averages(struct ns_store *s, const struct ns_trace *t, const struct ns_agg *agg,
			      struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	for (size_t i = 0; i < agg->n_avgs; i++) {
		const struct ns_avg *a = &agg->avgs[i];
		ns_rowq_row(q, STMT_AVG);
		ns_rowq_int(q, s->trace_id);
		ns_rowq_int(q, (int64_t)i);
		put_model_text(q, t, a->key);
		put_model_text_opt(q, t, a->overload);
		put_model_text_opt(q, t, a->input_shapes);
		put_model_text_opt(q, t, a->stack);
		put_model_text_opt(q, t, a->neff);
		ns_rowq_int(q, a->device_type);
		ns_rowq_int(q, a->is_user_annotation);
		ns_rowq_int(q, a->is_async);
		ns_rowq_int(q, a->count);
		ns_rowq_int(q, a->self_cpu_ns);
		ns_rowq_int(q, a->cpu_ns);
		ns_rowq_int(q, a->self_device_ns);
		ns_rowq_int(q, a->device_ns);
		ns_rowq_int(q, a->cpu_mem);
		ns_rowq_int(q, a->self_cpu_mem);
		ns_rowq_int(q, a->device_mem);
		ns_rowq_int(q, a->self_device_mem);
		ns_rowq_opt(q, fevent_event_id(s, t, agg, a->first));
		int rc = ns_rowq_end_row(q, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* trace_strings: every string of the model, in the model's own numbering. */
static int write_trace_strings(struct ns_store *s, const struct ns_trace *t, struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	for (ns_str local = 0; local < t->strings.count; local++) {
		ns_str sid = map_string(s, t, local);
		if (sid == NO_STRING)
			return nomem(err, "storing strings");
		ns_rowq_row(q, STMT_TRACE_STRING);
		ns_rowq_int(q, s->trace_id);
		ns_rowq_int(q, local);
		ns_rowq_int(q, sid);
		int rc = ns_rowq_end_row(q, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Appends the strings interned since the last call to the strings table. */
static int write_new_strings(struct ns_store *s, struct ns_error *err)
{
	for (; s->strings_written < s->strings.count; s->strings_written++) {
		ns_rowq_row(s->rows, STMT_STRING);
		ns_rowq_int(s->rows, s->strings_written);
		put_database_text(s, s->strings_written);
		int rc = ns_rowq_end_row(s->rows, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int write_trace_row(struct ns_store *s, const struct ns_trace *t, const struct ns_agg *agg,
			   struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	int64_t activity_mask = 0;
	for (int cat = 0; cat < NS_CAT__COUNT && cat < 63; cat++)
		if (t->has_cat[cat])
			activity_mask |= (int64_t)1 << cat;
	const char *backend = agg ? ns_backend_label(agg->backend) : NULL;
	ns_rowq_row(q, STMT_TRACE);
	ns_rowq_int(q, s->trace_id);
	ns_rowq_text(q, s->src_path, strlen(s->src_path));
	ns_rowq_text(q, s->src_abspath, strlen(s->src_abspath));
	ns_rowq_int(q, s->src_size);
	ns_rowq_int(q, s->src_mtime_ns);
	ns_rowq_opt(q, t->rank);
	ns_rowq_opt(q, t->world_size);
	ns_rowq_opt(q, t->has_base_time ? t->base_time_ns : NS_NONE);
	ns_rowq_int(q, t->ts_has_fraction);
	ns_rowq_int(q, t->profile_memory);
	ns_rowq_int(q, t->legacy_array);
	ns_rowq_int(q, activity_mask);
	if (backend && *backend)
		ns_rowq_text(q, backend, strlen(backend));
	else
		ns_rowq_null(q);
	ns_rowq_int(q, (int64_t)t->n_trace_events);
	ns_rowq_int(q, (int64_t)(t->n_events + t->n_flows)); /* events.kept = 1 */
	ns_rowq_int(q, s->first_event_id);
	ns_rowq_opt(q, t->truncated_at < 0 ? NS_NONE : t->truncated_at);
	return ns_rowq_end_row(q, err);
}

struct ns_rowq *ns_store_rows(struct ns_store *s)
{
	return s->rows;
}

uint32_t ns_store_intern(struct ns_store *s, const char *text, size_t len)
{
	return ns_strtab_intern(&s->strings, text, len);
}

int ns_store_write_strings(struct ns_store *s, struct ns_error *err)
{
	return write_new_strings(s, err);
}

/* A double into a REAL column, as text (rowq has no REAL; SQLite stores
 * the number): the 17 digits that give the double back. */
static void rowq_real(struct ns_rowq *q, double x)
{
	char num[64];
	int len = snprintf(num, sizeof(num), "%.17g", x);
	ns_rowq_text(q, num, (size_t)len);
}

/* engine_opcodes: one profile's statistics per engine (opcode NULL), then
 * per engine and opcode (ntff/engstats.h). */
static int store_engine_opcodes(struct ns_store *s, const struct ns_detail_neff *p, struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	int rc = 0;
	for (int by_opcode = 0; by_opcode < 2 && !rc; by_opcode++) {
		struct ns_engine_stats es;
		if ((rc = ns_engine_stats_compute(p, 1, true, by_opcode, &es, err)))
			break;
		for (size_t r = 0; r < es.n && !rc; r++) {
			const struct ns_engine_stat *e = &es.v[r];
			ns_rowq_row(q, STMT_ENGINE_OPCODES);
			ns_rowq_int(q, s->trace_id);
			ns_rowq_text(q, p->neff, strlen(p->neff));
			ns_rowq_opt(q, p->nc < 0 ? NS_NONE : p->nc);
			ns_rowq_text(q, e->engine, strlen(e->engine));
			if (by_opcode)
				ns_rowq_text(q, e->opcode_text, strlen(e->opcode_text));
			else
				ns_rowq_null(q);
			ns_rowq_int(q, e->k.count);
			ns_rowq_int(q, e->k.total_ns);
			ns_rowq_int(q, e->k.min_ns);
			ns_rowq_int(q, e->k.max_ns);
			rowq_real(q, e->k.mean_ns);
			rowq_real(q, e->k.median_ns);
			rowq_real(q, e->k.stddev_ns);
			rc = ns_rowq_end_row(q, err);
		}
		ns_engine_stats_release(&es);
	}
	return rc;
}

int ns_store_device_detail(struct ns_store *s, const struct ns_detail_neff *v, size_t n, struct ns_error *err)
{
	struct ns_rowq *q = s->rows;
	char num[64];
	int rc = 0;
	NS_ASSERT(s->trace_id); /* ns_store_begin_trace came first */
	for (size_t i = 0; i < n && !rc; i++) {
		const struct ns_devprof *dp = v[i].dp;
		for (int k = 0; k < NS_DETAIL__COUNT && !rc; k++)
			for (size_t r = 0; r < dp->n_detail[k] && !rc; r++) {
				const struct ns_detail_row *row = &dp->detail[k][r];
				ns_rowq_row(q, STMT_DETAIL);
				ns_rowq_int(q, s->trace_id);
				ns_rowq_text(q, v[i].neff, strlen(v[i].neff));
				ns_rowq_opt(q, v[i].nc < 0 ? NS_NONE : v[i].nc);
				ns_rowq_text(q, ns_detail_name((enum ns_detail)k), strlen(ns_detail_name((enum ns_detail)k)));
				ns_rowq_text(q, ns_strtab_get(&dp->detail_names, row->name),
					     ns_strtab_len(&dp->detail_names, row->name));
				ns_rowq_int(q, (int64_t)row->count);
				ns_rowq_int(q, row->total_ns);
				rc = ns_rowq_end_row(q, err);
			}
		if (rc || (rc = store_engine_opcodes(s, &v[i], err)))
			break;
		ns_rowq_row(q, STMT_NEFF_SUMMARY);
		ns_rowq_int(q, s->trace_id);
		ns_rowq_text(q, v[i].neff, strlen(v[i].neff));
		ns_rowq_opt(q, v[i].nc < 0 ? NS_NONE : v[i].nc);
		ns_rowq_text(q, dp->path, strlen(dp->path));
		ns_rowq_int(q, (int64_t)dp->n_instructions);
		ns_rowq_int(q, dp->instruction_ns);
		for (int m = 0; m < NS_MET__COUNT; m++) {
			if (!v[i].m.has[m]) {
				ns_rowq_null(q);
			} else if (ns_metrics[m].kind == 'p') {
				/* text into a REAL column: SQLite stores the number (rowq has no REAL) */
				int len = snprintf(num, sizeof(num), "%.15g", v[i].m.v[m]); /* the digits a double holds */
				ns_rowq_text(q, num, (size_t)len);
			} else {
				ns_rowq_int(q, (int64_t)llround(v[i].m.v[m]));
			}
		}
		rc = ns_rowq_end_row(q, err);
	}
	return rc;
}

int ns_store_end_events(struct ns_store *s, const struct ns_trace *t, struct ns_error *err)
{
	int rc;
	NS_ASSERT(s->trace_id); /* ns_store_begin_trace came first */
	if (s->events_ended)
		return 0;
	if ((rc = write_threads(s, t, err)) || (rc = write_processes(s, t, err)) ||
	    (rc = write_metadata(s, t, err)) || (rc = write_xwarnings(s, t, err)) || (rc = write_flows(s, t, err)))
		return rc;
	ns_rowq_row(s->rows, STMT_CORRELATION_INDEX);
	if ((rc = ns_rowq_end_row(s->rows, err)) || (rc = ns_rowq_flush(s->rows, err)))
		return rc;
	forget_flows(s);
	s->events_ended = true;
	return 0;
}

static void *flush_main(void *arg)
{
	const struct ns_store *s = arg;
	sync_file_range(s->tmp_fd, 0, 0, SYNC_FILE_RANGE_WRITE); /* (blocks: 0.2 s for 800 MB) */
	return NULL;
}

static void join_flush(struct ns_store *s)
{
	if (s->flushing)
		pthread_join(s->flusher, NULL);
	s->flushing = false;
}

/* Starts writing the file's dirty pages out, as ns_store_commit's fsync
 * would, on a thread that mostly waits for the disk. Started while a
 * trace's event_stats rows go in: the disk is idle then, and so is the
 * calling thread, which waits on the writer. The fsync then has only the
 * pages written since (a 1 GB trace's: 0.22 s -> 0.03 s). */
static void start_flush(struct ns_store *s)
{
	join_flush(s);
	s->flushing = pthread_create(&s->flusher, NULL, flush_main, s) == 0;
}

int ns_store_event_stats(struct ns_store *s, const struct ns_trace *t, const struct ns_agg *agg,
			 struct ns_error *err)
{
	int rc;
	if (s->stats_written)
		return 0;
	if ((rc = ns_store_end_events(s, t, err)))
		return rc;
	start_flush(s);
	if ((rc = write_event_stats(s, t, agg, err)))
		return rc;
	s->stats_written = true;
	return 0;
}

int ns_store_end_trace(struct ns_store *s, const struct ns_trace *t, const struct ns_agg *agg,
		       struct ns_error *err)
{
	int rc;
	if ((rc = ns_store_end_events(s, t, err))) /* (which checks that a trace was begun) */
		goto out;
	if (agg && ((rc = ns_store_event_stats(s, t, agg, err)) || (rc = write_key_averages(s, t, agg, err))))
		goto out;
	if ((rc = write_trace_strings(s, t, err)) || (rc = write_new_strings(s, err)) ||
	    (rc = write_trace_row(s, t, agg, err)))
		goto out;
out:
	reset_trace_state(s);
	return rc;
}

/* fsync()s a file or directory by path. */
static int sync_path(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

static void free_store(struct ns_store *s)
{
	join_flush(s); /* (before tmp_fd closes) */
	reset_trace_state(s);
	ns_strtab_release(&s->strings);
	free(s->gmap);
	free(s->flows);
	free(s->procs);
	free(s->thread_sort);
	if (s->tmp_fd >= 0)
		close(s->tmp_fd);
	free(s->tmp_path);
	free(s->db_path);
	free(s);
}

/* Makes the rename into dir durable. A failure leaves a complete database
 * that might not survive a power cut, which is not worth failing for. */
static void sync_parent_dir(const char *path)
{
	char *dir = strdup(path);
	if (!dir)
		return;
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[1] = '\0';
	sync_path(slash ? dir : ".", O_RDONLY | O_DIRECTORY);
	free(dir);
}

/* The tables filled row by row, whose rows the writer counts. */
static const int counted_tables[] = { STMT_EVENT, STMT_STATS, STMT_MEMORY, STMT_FLOW };
#define N_COUNTED NS_ARRAY_SIZE(counted_tables)

/* The planner's statistics (sqlite_stat1) for the views' joins, as ANALYZE
 * writes them. ANALYZE counts a table's rows by reading every page of it,
 * and events is most of the file: the counted tables get the writer's
 * counts, and only the other tables and the indexes are analyzed, with a
 * small sampling limit. */
static int analyze(struct ns_store *s, const int64_t *counted_rows, struct ns_error *err)
{
	sqlite3_str *sql = sqlite3_str_new(s->db);
	sqlite3_str *counted = sqlite3_str_new(s->db);
	sqlite3_stmt *names = NULL;
	int rc, step = SQLITE_DONE;
	for (size_t i = 0; i < N_COUNTED; i++)
		sqlite3_str_appendf(counted, "%s%Q", i ? ", " : "", stmt_def[counted_tables[i]].table);
	sqlite3_str_appendall(sql, "PRAGMA analysis_limit = 1000;");
	char *list = sqlite3_str_finish(counted);
	char *query = sqlite3_mprintf("SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%%' AND "
				      "(type = 'table' AND name NOT IN (%s) OR type = 'index' AND tbl_name IN (%s))",
				      list, list);
	sqlite3_free(list);
	rc = query ? sqlite3_prepare_v2(s->db, query, -1, &names, NULL) : SQLITE_NOMEM;
	sqlite3_free(query);
	while (rc == SQLITE_OK && (step = sqlite3_step(names)) == SQLITE_ROW)
		sqlite3_str_appendf(sql, " ANALYZE \"%w\";", (const char *)sqlite3_column_text(names, 0));
	if (rc == SQLITE_OK && step != SQLITE_DONE)
		rc = step;
	for (size_t i = 0; rc == SQLITE_OK && i < N_COUNTED; i++)
		if (counted_rows[i] > 0)
			sqlite3_str_appendf(sql, " INSERT INTO sqlite_stat1 VALUES (%Q, NULL, '%lld');",
					    stmt_def[counted_tables[i]].table, (long long)counted_rows[i]);
	sqlite3_finalize(names);
	char *text = sqlite3_str_finish(sql);
	if (rc == SQLITE_OK && !text)
		rc = SQLITE_NOMEM;
	if (rc != SQLITE_OK) {
		sqlite3_free(text);
		return ns_store_sqlite_error(err, s->db, rc, s->db_path, "cannot analyze the database");
	}
	rc = exec_sql(s, text, "cannot analyze the database", err);
	sqlite3_free(text);
	return rc;
}

int ns_store_commit(struct ns_store *s, struct ns_error *err)
{
	int64_t counted_rows[N_COUNTED];
	int rc, sqlite_rc;
	NS_ASSERT(!s->trace_id); /* every trace was ended */
	for (size_t i = 0; i < N_COUNTED; i++)
		counted_rows[i] = ns_rowq_count(s->rows, counted_tables[i]);
	rc = ns_rowq_finish(s->rows, err);
	s->rows = NULL;
	if (rc)
		goto out;
	if ((rc = exec_sql(s, ns_schema_indexes, "cannot build the indexes", err)) ||
	    (rc = analyze(s, counted_rows, err)) || (rc = exec_sql(s, "COMMIT;", "cannot finish the database", err)))
		goto out;
	if ((sqlite_rc = sqlite3_close(s->db)) != SQLITE_OK) {
		rc = ns_store_sqlite_error(err, s->db, sqlite_rc, s->db_path, "cannot close the database");
		goto out;
	}
	s->db = NULL;
	join_flush(s);
	if ((rc = take_over_identity(s, err)))
		goto out;
	struct stat st; /* (at its size: the reserved blocks past the end go back) */
	if (fstat(s->tmp_fd, &st) < 0 || ftruncate(s->tmp_fd, st.st_size) < 0 || fsync(s->tmp_fd) < 0) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: cannot sync the database: %s", s->db_path, strerror(errno));
		goto out;
	}
	if (rename(s->tmp_path, s->db_path) < 0) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: cannot move the new database into place: %s", s->db_path,
				  strerror(errno));
		goto out;
	}
	free(s->tmp_path);
	s->tmp_path = NULL; /* now the database itself: abort must not unlink it */
	sync_parent_dir(s->db_path);
out:
	ns_store_abort(s);
	return rc;
}

void ns_store_abort(struct ns_store *s)
{
	if (!s)
		return;
	ns_rowq_finish(s->rows, NULL); /* (and with it the statements) */
	s->rows = NULL;
	if (s->db)
		sqlite3_close(s->db);
	if (s->tmp_path)
		unlink(s->tmp_path);
	free_store(s);
}
