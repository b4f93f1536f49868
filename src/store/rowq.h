/* A queue of INSERT rows run by a writer thread, so that SQLite's work on
 * one core overlaps the parsing and aggregating on the other.
 *
 * The producer encodes each row's values into a chunk (copying text, so the
 * caller's buffers may change at once); full chunks go to the writer
 * thread, which inserts them in order. A few chunks bound the memory, and a
 * producer that gets ahead waits. The writer stops at its first failure;
 * the producer learns of it at the next hand-over or at ns_rowq_finish.
 * Between ns_rowq_start and ns_rowq_finish only the writer thread may use
 * the connection. If the thread cannot be started, chunks run in the
 * producer's thread. */
#ifndef NS_STORE_ROWQ_H
#define NS_STORE_ROWQ_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/error.h"
#include "common/trace.h"

struct ns_rowq;

/* A statement the writer runs, and what a failure of it is called ("cannot
 * store an event"). With a table, each row is one row of that table, its
 * values given for every column in order; otherwise sql is a statement
 * without parameters (a CREATE INDEX) run once per row. */
struct ns_rowq_stmt {
	const char *table, *sql, *what;
};

/* Prepares defs[0 .. n_stmts) on db (statement id i is defs[i]; defs and
 * path outlive the queue) and starts the writer. path names the database in
 * messages. Without use_thread, chunks run in the producer's thread.
 * Returns 0, or sets err (NS_ERR_NOMEM, or SQLite's refusal to prepare). */
int ns_rowq_start(struct ns_rowq **out, sqlite3 *db, const struct ns_rowq_stmt *defs, int n_stmts,
		  const char *path, bool use_thread, struct ns_error *err);

/* A row: ns_rowq_row, then one value per column of the statement's table,
 * in order, then ns_rowq_end_row. A statement without a table is a row
 * without values. */
void ns_rowq_row(struct ns_rowq *q, int stmt);
void ns_rowq_text(struct ns_rowq *q, const char *text, size_t len);
static inline void ns_rowq_int(struct ns_rowq *q, int64_t v);
static inline void ns_rowq_opt(struct ns_rowq *q, int64_t v); /* NS_NONE is NULL */
static inline void ns_rowq_null(struct ns_rowq *q);
static inline void ns_rowq_real(struct ns_rowq *q, double v);
/* Returns 0, or the writer's first failure, or NS_ERR_NOMEM. */
int ns_rowq_end_row(struct ns_rowq *q, struct ns_error *err);

/* The rows of statement stmt queued so far (0 for a NULL q). */
int64_t ns_rowq_count(const struct ns_rowq *q, int stmt);

/* Hands the rows queued so far to the writer now (rather than when the
 * chunk is full). Returns 0 or the writer's first failure. */
int ns_rowq_flush(struct ns_rowq *q, struct ns_error *err);

/* Runs every queued row, stops the thread, finalizes the statements and
 * frees q (NULL is fine).
 * Returns the first failure, if any; err may be NULL when the caller is
 * giving up anyway. */
int ns_rowq_finish(struct ns_rowq *q, struct ns_error *err);

/* ---- inline: an events row is 30 of these calls ---- */

/* A value's slot in a queued row: a tag byte, then the integer (or a
 * text's offset and length, or a double). */
enum { NS_ROWQ_NULL, NS_ROWQ_INT, NS_ROWQ_TEXT, NS_ROWQ_REAL };
#define NS_ROWQ_SLOT 9

/* The first member of struct ns_rowq: where the row being queued takes its
 * next value. After a failure, slot == end (NULL), and values given are
 * only counted. */
struct ns_rowq_cursor {
	unsigned char *slot, *end; /* the next value's slot; past the row's last */
	int extra;                 /* values given when there was no slot */
};

/* The next value's slot, or NULL when the row has none left (the value is
 * then only counted). */
static inline unsigned char *ns_rowq_slot_(struct ns_rowq *q)
{
	struct ns_rowq_cursor *c = (struct ns_rowq_cursor *)(void *)q;
	if (c->slot == c->end) {
		c->extra++; /* (ns_rowq_end_row reports it) */
		return NULL;
	}
	unsigned char *slot = c->slot;
	c->slot += NS_ROWQ_SLOT;
	return slot;
}

static inline void ns_rowq_null(struct ns_rowq *q)
{
	unsigned char *slot = ns_rowq_slot_(q);
	if (slot)
		slot[0] = NS_ROWQ_NULL;
}

static inline void ns_rowq_int(struct ns_rowq *q, int64_t v)
{
	unsigned char *slot = ns_rowq_slot_(q);
	if (slot) {
		slot[0] = NS_ROWQ_INT;
		memcpy(slot + 1, &v, sizeof(v));
	}
}

static inline void ns_rowq_real(struct ns_rowq *q, double v)
{
	unsigned char *slot = ns_rowq_slot_(q);
	if (slot) {
		slot[0] = NS_ROWQ_REAL;
		memcpy(slot + 1, &v, sizeof(v));
	}
}

static inline void ns_rowq_opt(struct ns_rowq *q, int64_t v)
{
	if (v == NS_NONE)
		ns_rowq_null(q);
	else
		ns_rowq_int(q, v);
}

#endif
