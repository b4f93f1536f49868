/* The writer thread's row queue (rowq.h).
 *
 * A chunk is a byte string of rows: a statement id byte, then per value a
 * tag byte and, for an integer, its 8 bytes, for a text, a 4-byte length
 * and the bytes. The statement says how many values a row has. Chunks form
 * a ring: the producer fills chunks[head]; the writer runs chunks[tail]
 * onwards; `pending` counts the chunks handed over and not yet run. */
#include "store/rowq.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace.h"
#include "store/store-internal.h"

#define N_CHUNKS 4
#define CHUNK_BYTES ((size_t)256 << 10) /* a chunk is handed over once it holds this much */

enum tag { TAG_NULL, TAG_INT, TAG_TEXT };

struct chunk {
	unsigned char *buf;
	size_t len, cap;
};

struct ns_rowq {
	sqlite3 *db;
	const struct ns_rowq_stmt *defs;
	sqlite3_stmt **stmts;
	int *n_params; /* per statement */
	int n_stmts;
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
	/* the producer's row */
	int row_stmt, row_values;
	size_t row_start;
	enum { ROW_OK, ROW_NOMEM, ROW_TOO_BIG } row_state;
};

/* Room for `need` more bytes in the producer's chunk (false on OOM). A
 * row reserves room for its integers and NULLs at its start; texts reserve
 * their own. */
static bool reserve(struct ns_rowq *q, size_t need)
{
	struct chunk *c = &q->chunks[q->head];
	if (q->row_state != ROW_OK)
		return false;
	if (c->cap - c->len >= need)
		return true;
	size_t cap = c->cap ? c->cap : CHUNK_BYTES + 4096;
	while (cap - c->len < need) {
		if (cap > SIZE_MAX / 2) {
			q->row_state = ROW_NOMEM;
			return false;
		}
		cap *= 2;
	}
	unsigned char *buf = realloc(c->buf, cap);
	if (!buf) {
		q->row_state = ROW_NOMEM;
		return false;
	}
	c->buf = buf;
	c->cap = cap;
	return true;
}

void ns_rowq_row(struct ns_rowq *q, int stmt)
{
	q->row_stmt = stmt;
	q->row_values = 0;
	q->row_start = q->chunks[q->head].len;
	q->row_state = ROW_OK;
	if (reserve(q, 1 + (size_t)q->n_params[stmt] * (1 + sizeof(int64_t))))
		q->chunks[q->head].buf[q->chunks[q->head].len++] = (unsigned char)stmt;
}

/* Whether the row has room for another value (reserved by ns_rowq_row). */
static bool value_fits(struct ns_rowq *q)
{
	return q->row_state == ROW_OK && q->row_values++ < q->n_params[q->row_stmt];
}

void ns_rowq_null(struct ns_rowq *q)
{
	if (value_fits(q))
		q->chunks[q->head].buf[q->chunks[q->head].len++] = TAG_NULL;
}

void ns_rowq_int(struct ns_rowq *q, int64_t v)
{
	struct chunk *c = &q->chunks[q->head];
	if (!value_fits(q))
		return;
	c->buf[c->len] = TAG_INT;
	memcpy(c->buf + c->len + 1, &v, sizeof(v));
	c->len += 1 + sizeof(v);
}

void ns_rowq_opt(struct ns_rowq *q, int64_t v)
{
	if (v == NS_NONE)
		ns_rowq_null(q);
	else
		ns_rowq_int(q, v);
}

void ns_rowq_text(struct ns_rowq *q, const char *text, size_t len)
{
	struct chunk *c = &q->chunks[q->head];
	uint32_t len32 = (uint32_t)len;
	if (!value_fits(q))
		return;
	if (len > INT_MAX) { /* (sqlite3_bind_text takes an int) */
		q->row_state = ROW_TOO_BIG;
		return;
	}
	/* (and keep the room reserved for the values after it) */
	size_t rest = (size_t)(q->n_params[q->row_stmt] - q->row_values) * (1 + sizeof(int64_t));
	if (!reserve(q, 1 + sizeof(len32) + len + rest))
		return;
	c->buf[c->len] = TAG_TEXT;
	memcpy(c->buf + c->len + 1, &len32, sizeof(len32));
	if (len)
		memcpy(c->buf + c->len + 1 + sizeof(len32), text, len);
	c->len += 1 + sizeof(len32) + len;
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

/* Binds and steps every row of a chunk, up to the first failure. */
static void run_chunk(struct ns_rowq *q, const struct chunk *c)
{
	const unsigned char *p = c->buf, *end = c->buf + c->len;
	while (p < end) {
		int stmt = *p++;
		sqlite3_stmt *st = q->stmts[stmt];
		for (int i = 1; i <= q->n_params[stmt]; i++) {
			int64_t v;
			uint32_t len;
			switch (*p++) {
			case TAG_NULL:
				sqlite3_bind_null(st, i);
				break;
			case TAG_INT:
				memcpy(&v, p, sizeof(v));
				p += sizeof(v);
				sqlite3_bind_int64(st, i, v);
				break;
			default: /* TAG_TEXT */
				memcpy(&len, p, sizeof(len));
				p += sizeof(len);
				sqlite3_bind_text(st, i, (const char *)p, (int)len, SQLITE_STATIC);
				p += len;
				break;
			}
		}
		int rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE) {
			note_failure(q, rc, stmt, sqlite3_errmsg(q->db));
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
	if (q->row_state != ROW_OK || q->row_values != q->n_params[q->row_stmt]) {
		c->len = q->row_start; /* drop the partial row */
		if (q->row_state == ROW_NOMEM)
			return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory while queueing a row", q->path);
		if (q->row_state == ROW_TOO_BIG)
			return ns_error_set(err, NS_ERR_NOMEM, "%s: %s: a value is larger than 2 GiB", q->path,
					    q->defs[q->row_stmt].what);
		return ns_error_set(err, NS_ERR_INPUT, "%s: internal error: %d values for a row of %d", q->path,
				    q->row_values, q->n_params[q->row_stmt]);
	}
	return c->len >= CHUNK_BYTES ? hand_over(q, err) : 0;
}

int ns_rowq_flush(struct ns_rowq *q, struct ns_error *err)
{
	return q->chunks[q->head].len ? hand_over(q, err) : failure(q, err);
}

/* Finalizes the statements and frees q (the thread is not running). */
static void free_rowq(struct ns_rowq *q)
{
	for (int i = 0; i < q->n_stmts; i++)
		sqlite3_finalize(q->stmts[i]);
	for (int i = 0; i < N_CHUNKS; i++)
		free(q->chunks[i].buf);
	free(q->stmts);
	free(q->n_params);
	free(q);
}

int ns_rowq_start(struct ns_rowq **out, sqlite3 *db, const struct ns_rowq_stmt *defs, int n_stmts,
		  const char *path, bool use_thread, struct ns_error *err)
{
	struct ns_rowq *q = calloc(1, sizeof(*q));
	*out = NULL;
	if (!q || !(q->stmts = calloc((size_t)n_stmts, sizeof(*q->stmts))) ||
	    !(q->n_params = malloc((size_t)n_stmts * sizeof(*q->n_params)))) {
		if (q)
			free_rowq(q);
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory while starting the writer", path);
	}
	q->db = db;
	q->defs = defs;
	q->n_stmts = n_stmts;
	q->path = path;
	for (int i = 0; i < n_stmts; i++) {
		int rc = sqlite3_prepare_v3(db, defs[i].sql, -1, SQLITE_PREPARE_PERSISTENT, &q->stmts[i], NULL);
		if (rc != SQLITE_OK) {
			rc = ns_store_sqlite_error(err, db, rc, path, "cannot prepare an insert");
			free_rowq(q);
			return rc;
		}
		q->n_params[i] = sqlite3_bind_parameter_count(q->stmts[i]);
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->threaded = use_thread && pthread_create(&q->thread, NULL, writer_main, q) == 0;
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
