/* The writer thread's row queue (rowq.h).
 *
 * A chunk is a byte string of rows. A row is a statement id byte, the
 * length of its texts (4 bytes), a 9-byte slot per value (a tag byte, then
 * an integer, or a text's offset among the texts and its length, 4 bytes
 * each), then the texts. The statement says how many values a row has (a
 * statement without a table: none, and the row is the id byte alone).
 * Fixed slots let the writer find a value without reading the ones before
 * it: the writer is the slower side, so the producer does that work. Chunks form
 * a ring: the producer fills chunks[head]; the writer runs chunks[tail]
 * onwards; `pending` counts the chunks handed over and not yet run.
 *
 * The writer gives SQLite each run of consecutive rows of one table in a
 * single statement, "INSERT OR FAIL INTO <table> SELECT * FROM
 * ns_rowq_<id>", where ns_rowq_<id> is a virtual table whose rows are the
 * run's rows, read from the chunk in place. OR FAIL keeps the rows before
 * a failing one and stops there, as a statement per row did. A statement per row would repeat SQLite's
 * per-statement work (opening the table, seeking its b-tree from the root,
 * binding every value): that is a quarter of what an events row costs
 * (docs/performance.md). */
#include "store/rowq.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/trace.h"
#include "store/store-internal.h"

#define N_CHUNKS 4
#define CHUNK_BYTES ((size_t)256 << 10) /* a chunk is handed over once it holds this much */
#define ROW_HEAD 5  /* the statement id and the texts' length */

struct chunk {
	unsigned char *buf;
	size_t len, cap;
};

/* What the virtual table of one statement reads from. */
struct rows_source {
	struct ns_rowq *q;
	int stmt;
};

struct ns_rowq {
	struct ns_rowq_cursor cur; /* first: the inline calls of rowq.h cast to it */
	sqlite3 *db;
	const struct ns_rowq_stmt *defs;
	sqlite3_stmt **stmts;
	int *n_values; /* per statement */
	int64_t *n_rows; /* per statement: queued so far */
	struct rows_source *sources; /* per statement */
	int n_stmts;
	/* the writer's run: its next row, and the end of the chunk */
	const unsigned char *run, *run_end;
	const char *path;
	bool threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct chunk chunks[N_CHUNKS];
	unsigned head, tail; /* the producer's chunk; the writer's next one */
	/* under mu */
	unsigned pending;
	bool closing;
	int fail_rc;      /* the writer's first failure: SQLite result code, 0 if none */
	int fail_stmt;
	char fail_msg[512];
	/* the producer's row: where it and its slots start (chunk offsets), its
	 * text bytes so far (its values: cur) */
	int row_stmt;
	size_t row_start, row_slots, row_texts;
	enum { ROW_OK, ROW_NOMEM, ROW_TOO_BIG } row_state;
};

/* A failed row takes no more values (see ns_rowq_cursor). */
static void fail_row(struct ns_rowq *q, int state)
{
	q->row_state = state;
	q->cur.end = q->cur.slot;
}

/* Room for `need` more bytes in the producer's chunk (false on OOM). A
 * row reserves its head and slots at its start (before it has a cursor);
 * texts reserve their own, and the cursor moves with the chunk. */
static bool reserve(struct ns_rowq *q, size_t need)
{
	struct chunk *c = &q->chunks[q->head];
	if (q->row_state != ROW_OK)
		return false;
	if (c->cap - c->len >= need)
		return true;
	bool has_cursor = q->cur.slot != NULL;
	size_t slot = has_cursor ? (size_t)(q->cur.slot - c->buf) : 0;
	size_t end = has_cursor ? (size_t)(q->cur.end - c->buf) : 0;
	size_t cap = c->cap ? c->cap : CHUNK_BYTES + 4096;
	while (cap - c->len < need) {
		if (cap > SIZE_MAX / 2) {
			fail_row(q, ROW_NOMEM);
			return false;
		}
		cap *= 2;
	}
	unsigned char *buf = realloc(c->buf, cap);
	if (!buf) {
		fail_row(q, ROW_NOMEM);
		return false;
	}
	c->buf = buf;
	c->cap = cap;
	if (has_cursor) {
		q->cur.slot = buf + slot;
		q->cur.end = buf + end;
	}
	return true;
}

void ns_rowq_row(struct ns_rowq *q, int stmt)
{
	struct chunk *c = &q->chunks[q->head];
	size_t n = (size_t)q->n_values[stmt];
	size_t head = n ? ROW_HEAD + n * NS_ROWQ_SLOT : 1;
	q->row_stmt = stmt;
	q->row_texts = 0;
	q->row_start = c->len;
	q->row_state = ROW_OK;
	q->cur = (struct ns_rowq_cursor){ 0 };
	if (reserve(q, head)) {
		c->buf[c->len] = (unsigned char)stmt;
		q->row_slots = c->len + ROW_HEAD;
		if (n) {
			q->cur.slot = c->buf + q->row_slots;
			q->cur.end = q->cur.slot + NS_ROWQ_SLOT * n;
		}
		c->len += head;
	}
}

/* The values given for the producer's row so far. */
static int row_values(const struct ns_rowq *q)
{
	if (!q->cur.slot) /* (no slots: none, or its reserve failed) */
		return q->cur.extra;
	const unsigned char *slots = q->chunks[q->head].buf + q->row_slots;
	return (int)((size_t)(q->cur.slot - slots) / NS_ROWQ_SLOT) + q->cur.extra;
}

void ns_rowq_text(struct ns_rowq *q, const char *text, size_t len)
{
	if (q->cur.slot == q->cur.end) {
		q->cur.extra++;
		return;
	}
	/* (sqlite3_result_text takes an int; the offsets are 32-bit) */
	if (len > INT_MAX || q->row_texts + len > UINT32_MAX) {
		fail_row(q, ROW_TOO_BIG);
		return;
	}
	if (!reserve(q, len))
		return;
	struct chunk *c = &q->chunks[q->head]; /* (after reserve, which may move it) */
	unsigned char *slot = ns_rowq_slot_(q);
	uint32_t off32 = (uint32_t)q->row_texts, len32 = (uint32_t)len;
	slot[0] = NS_ROWQ_TEXT;
	memcpy(slot + 1, &off32, sizeof(off32));
	memcpy(slot + 1 + sizeof(off32), &len32, sizeof(len32));
	if (len)
		memcpy(c->buf + c->len, text, len);
	c->len += len;
	q->row_texts += len;
}

static void note_failure(struct ns_rowq *q, int rc, int stmt, const char *msg)
{
	pthread_mutex_lock(&q->mu);
	if (!q->fail_rc) {
		q->fail_rc = rc;
		q->fail_stmt = stmt;
		snprintf(q->fail_msg, sizeof(q->fail_msg), "%s", msg);
	}
	pthread_mutex_unlock(&q->mu);
}

/* ---- the virtual table ns_rowq_<id>: the run's rows ---- */

struct rows_table {
	sqlite3_vtab base;
	const struct rows_source *src;
};

struct rows_cursor {
	sqlite3_vtab_cursor base;
	const struct rows_source *src;
	sqlite3_int64 n;                  /* rows read so far: the rowid */
	const unsigned char *slots, *texts; /* the current row's */
	const unsigned char *next;        /* past the current row */
	bool eof;
};

static int rows_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
			char **errmsg)
{
	const struct rows_source *src = aux;
	struct rows_table *vt = sqlite3_malloc(sizeof(*vt));
	sqlite3_str *decl = sqlite3_str_new(db);
	(void)argc, (void)argv, (void)errmsg;
	sqlite3_str_appendall(decl, "CREATE TABLE x(c0");
	for (int i = 1; i < src->q->n_values[src->stmt]; i++)
		sqlite3_str_appendf(decl, ", c%d", i);
	sqlite3_str_appendall(decl, ")");
	char *sql = sqlite3_str_finish(decl);
	int rc = vt && sql ? sqlite3_declare_vtab(db, sql) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		sqlite3_free(vt);
		return rc;
	}
	memset(vt, 0, sizeof(*vt));
	vt->src = src;
	*out = &vt->base;
	return SQLITE_OK;
}

static int rows_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int rows_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void)vt;
	info->estimatedCost = 1000;
	return SQLITE_OK;
}

static int rows_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct rows_cursor *cur = sqlite3_malloc(sizeof(*cur));
	if (!cur)
		return SQLITE_NOMEM;
	memset(cur, 0, sizeof(*cur));
	cur->src = ((struct rows_table *)vt)->src;
	*out = &cur->base;
	return SQLITE_OK;
}

static int rows_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

/* Makes the run's next row the current one, if it is the statement's. */
static void rows_load(struct rows_cursor *cur)
{
	const struct ns_rowq *q = cur->src->q;
	const unsigned char *p = q->run;
	uint32_t texts_len;
	cur->eof = p >= q->run_end || *p != cur->src->stmt;
	if (cur->eof)
		return;
	memcpy(&texts_len, p + 1, sizeof(texts_len));
	cur->slots = p + ROW_HEAD;
	cur->texts = cur->slots + NS_ROWQ_SLOT * (size_t)q->n_values[cur->src->stmt];
	cur->next = cur->texts + texts_len;
}

static int rows_filter(sqlite3_vtab_cursor *c, int idx, const char *idx_str, int argc, sqlite3_value **argv)
{
	(void)idx, (void)idx_str, (void)argc, (void)argv;
	rows_load((struct rows_cursor *)c);
	return SQLITE_OK;
}

static int rows_next(sqlite3_vtab_cursor *c)
{
	struct rows_cursor *cur = (struct rows_cursor *)c;
	cur->src->q->run = cur->next; /* the current row is in */
	cur->n++;
	rows_load(cur);
	return SQLITE_OK;
}

static int rows_eof(sqlite3_vtab_cursor *c)
{
	return ((struct rows_cursor *)c)->eof;
}

static int rows_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int i)
{
	const struct rows_cursor *cur = (const struct rows_cursor *)c;
	const unsigned char *v = cur->slots + NS_ROWQ_SLOT * (size_t)i;
	int64_t n;
	double d;
	uint32_t off, len;
	switch (*v) {
	case NS_ROWQ_NULL:
		break; /* (the result is NULL unless set) */
	case NS_ROWQ_INT:
		memcpy(&n, v + 1, sizeof(n));
		sqlite3_result_int64(ctx, n);
		break;
	case NS_ROWQ_REAL:
		memcpy(&d, v + 1, sizeof(d));
		sqlite3_result_double(ctx, d);
		break;
	default: /* NS_ROWQ_TEXT: the chunk outlives the statement */
		memcpy(&off, v + 1, sizeof(off));
		memcpy(&len, v + 1 + sizeof(off), sizeof(len));
		sqlite3_result_text(ctx, (const char *)cur->texts + off, (int)len, SQLITE_STATIC);
		break;
	}
	return SQLITE_OK;
}

static int rows_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *rowid)
{
	*rowid = ((struct rows_cursor *)c)->n;
	return SQLITE_OK;
}

/* Eponymous only (no xCreate): the table exists as soon as the module is
 * registered. */
static const sqlite3_module rows_module = {
	.xConnect = rows_connect,
	.xBestIndex = rows_best_index,
	.xDisconnect = rows_disconnect,
	.xOpen = rows_open,
	.xClose = rows_close,
	.xFilter = rows_filter,
	.xNext = rows_next,
	.xEof = rows_eof,
	.xColumn = rows_column,
	.xRowid = rows_rowid,
};

/* Runs every row of a chunk, up to the first failure: a statement without
 * a table per row, an insert per run of its rows. */
static void run_chunk(struct ns_rowq *q, const struct chunk *c)
{
	q->run = c->buf;
	q->run_end = c->buf + c->len;
	while (q->run < q->run_end) {
		const unsigned char *row = q->run;
		int stmt = *row;
		if (!q->defs[stmt].table)
			q->run++; /* (a row without values) */
		int rc = sqlite3_step(q->stmts[stmt]);
		sqlite3_reset(q->stmts[stmt]);
		if (rc != SQLITE_DONE) {
			note_failure(q, rc, stmt, sqlite3_errmsg(q->db));
			return;
		}
		if (q->run == row) { /* (SQLite read none of them: never seen) */
			note_failure(q, SQLITE_INTERNAL, stmt, "the insert read no rows");
			return;
		}
	}
}

static void *writer_main(void *arg)
{
	struct ns_rowq *q = arg;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->pending && !q->closing)
			pthread_cond_wait(&q->cv, &q->mu);
		if (!q->pending)
			break;
		struct chunk *c = &q->chunks[q->tail];
		bool failed = q->fail_rc != 0; /* after a failure the rest is only drained */
		pthread_mutex_unlock(&q->mu);
		if (!failed)
			run_chunk(q, c);
		pthread_mutex_lock(&q->mu);
		q->tail = (q->tail + 1) % N_CHUNKS;
		q->pending--;
		pthread_cond_broadcast(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* The writer's failure as an ns_error, or 0. */
static int failure(struct ns_rowq *q, struct ns_error *err)
{
	pthread_mutex_lock(&q->mu);
	int rc = q->fail_rc ? ns_store_sqlite_failure(err, q->fail_rc, q->fail_msg, q->path,
						      q->defs[q->fail_stmt].what)
			    : 0;
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* Gives the producer's chunk to the writer and takes the next free one. */
static int hand_over(struct ns_rowq *q, struct ns_error *err)
{
	if (!q->threaded) {
		if (!q->fail_rc) /* (set by this thread: no lock needed) */
			run_chunk(q, &q->chunks[q->head]);
	} else {
		pthread_mutex_lock(&q->mu);
		q->pending++;
		q->head = (q->head + 1) % N_CHUNKS;
		pthread_cond_broadcast(&q->cv);
		while (q->pending == N_CHUNKS) /* chunks[head] is still the writer's */
			pthread_cond_wait(&q->cv, &q->mu);
		pthread_mutex_unlock(&q->mu);
	}
	q->chunks[q->head].len = 0;
	return failure(q, err);
}

int ns_rowq_end_row(struct ns_rowq *q, struct ns_error *err)
{
	struct chunk *c = &q->chunks[q->head];
	int values = row_values(q);
	if (q->row_state != ROW_OK) {
		c->len = q->row_start; /* drop the partial row */
		if (q->row_state == ROW_NOMEM)
			return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory while queueing a row", q->path);
		return ns_error_set(err, NS_ERR_NOMEM, "%s: %s: a value is larger than 2 GiB", q->path,
				    q->defs[q->row_stmt].what);
	}
	/* the caller gave each column of its statement one value */
	NS_ASSERT(values == q->n_values[q->row_stmt]);
	if (values) {
		uint32_t texts_len = (uint32_t)q->row_texts;
		memcpy(c->buf + q->row_start + 1, &texts_len, sizeof(texts_len));
	}
	q->n_rows[q->row_stmt]++;
	return c->len >= CHUNK_BYTES ? hand_over(q, err) : 0;
}

int64_t ns_rowq_count(const struct ns_rowq *q, int stmt)
{
	return q ? q->n_rows[stmt] : 0;
}

int ns_rowq_flush(struct ns_rowq *q, struct ns_error *err)
{
	return q->chunks[q->head].len ? hand_over(q, err) : failure(q, err);
}

/* The name of statement i's virtual table. */
static void module_name(char name[32], int i)
{
	snprintf(name, 32, "ns_rowq_%d", i);
}

/* Finalizes the statements and frees q (the thread is not running). */
static void free_rowq(struct ns_rowq *q)
{
	for (int i = 0; i < q->n_stmts && q->stmts; i++) {
		sqlite3_finalize(q->stmts[i]);
		if (q->defs[i].table) { /* (unregisters the module) */
			char name[32];
			module_name(name, i);
			sqlite3_create_module_v2(q->db, name, NULL, NULL, NULL);
		}
	}
	for (int i = 0; i < N_CHUNKS; i++)
		free(q->chunks[i].buf);
	free(q->stmts);
	free(q->n_values);
	free(q->n_rows);
	free(q->sources);
	free(q);
}

/* Prepares statement i: the insert of its table's rows from its virtual
 * table, or its sql. */
static int prepare(struct ns_rowq *q, int i, struct ns_error *err)
{
	const struct ns_rowq_stmt *def = &q->defs[i];
	sqlite3_stmt *probe = NULL;
	char *sql = NULL;
	const char *msg = NULL; /* for a failure that is not the connection's last */
	int rc = SQLITE_OK;
	if (!def->table) {
		rc = sqlite3_prepare_v3(q->db, def->sql, -1, SQLITE_PREPARE_PERSISTENT, &q->stmts[i], NULL);
		goto out;
	}
	if (!(sql = sqlite3_mprintf("SELECT * FROM \"%w\"", def->table))) {
		rc = SQLITE_NOMEM;
		msg = "out of memory";
		goto out;
	}
	if ((rc = sqlite3_prepare_v2(q->db, sql, -1, &probe, NULL)) != SQLITE_OK)
		goto out;
	q->n_values[i] = sqlite3_column_count(probe);
	q->sources[i] = (struct rows_source){ q, i };
	char name[32];
	module_name(name, i);
	if ((rc = sqlite3_create_module_v2(q->db, name, &rows_module, &q->sources[i], NULL)) != SQLITE_OK)
		goto out;
	sqlite3_free(sql);
	if (!(sql = sqlite3_mprintf("INSERT OR FAIL INTO \"%w\" SELECT * FROM %s", def->table, name))) {
		rc = SQLITE_NOMEM;
		msg = "out of memory";
		goto out;
	}
	rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &q->stmts[i], NULL);
out:
	sqlite3_finalize(probe);
	sqlite3_free(sql);
	if (rc == SQLITE_OK)
		return 0;
	return ns_store_sqlite_failure(err, rc, msg ? msg : sqlite3_errmsg(q->db), q->path, def->what);
}

int ns_rowq_start(struct ns_rowq **out, sqlite3 *db, const struct ns_rowq_stmt *defs, int n_stmts,
		  const char *path, bool use_thread, struct ns_error *err)
{
	struct ns_rowq *q = calloc(1, sizeof(*q));
	*out = NULL;
	if (!q || !(q->stmts = calloc((size_t)n_stmts, sizeof(*q->stmts))) ||
	    !(q->n_values = calloc((size_t)n_stmts, sizeof(*q->n_values))) ||
	    !(q->n_rows = calloc((size_t)n_stmts, sizeof(*q->n_rows))) ||
	    !(q->sources = calloc((size_t)n_stmts, sizeof(*q->sources)))) {
		if (q)
			free_rowq(q);
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory while starting the writer", path);
	}
	q->db = db;
	q->defs = defs;
	q->n_stmts = n_stmts;
	q->path = path;
	for (int i = 0; i < n_stmts; i++) {
		int rc = prepare(q, i, err);
		if (rc) {
			free_rowq(q);
			return rc;
		}
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->threaded = use_thread && pthread_create(&q->thread, NULL, writer_main, q) == 0;
	if (q->threaded)
		pthread_setname_np(q->thread, "ns-writer"); /* (as top and perf show it) */
	*out = q;
	return 0;
}

int ns_rowq_finish(struct ns_rowq *q, struct ns_error *err)
{
	struct ns_error ignored;
	int rc = 0;
	if (!q)
		return 0;
	if (!err)
		err = &ignored;
	rc = ns_rowq_flush(q, err);
	if (q->threaded) {
		pthread_mutex_lock(&q->mu);
		q->closing = true;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
		pthread_join(q->thread, NULL);
	}
	if (!rc)
		rc = failure(q, err);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free_rowq(q);
	return rc;
}
