/* `neuron-stats sql`: one read-only query, its result returned as typed
 * values (report/sqlout.c prints it as an aligned table, CSV or JSON).
 *
 * Read-only is enforced three ways: the file is opened SQLITE_OPEN_READONLY,
 * ATTACH is limited to zero databases, and an authorizer allows only
 * reading: SQLITE_READ, SQLITE_SELECT, SQLITE_RECURSIVE and SQLITE_FUNCTION
 * but for the functions of denied_functions. A statement SQLite itself
 * does not call read-only (VACUUM INTO writes a new file) is refused too,
 * and so is more than one statement. The two-argument fts3_tokenizer(),
 * which hands out and takes in raw pointers, is switched off as well
 * (SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER), and the connection is in
 * defensive mode.
 *
 * A query is bounded in time (a progress handler interrupts it past its
 * deadline) and in memory (sqlite3_hard_heap_limit64 for SQLite's own
 * memory, which ns_sql_init makes SQLite count; the collected result counts
 * toward the same limit).
 *
 * The whole result is collected before anything is printed: the table
 * format needs the column widths, and a query that fails half-way prints
 * nothing rather than a truncated CSV or invalid JSON. */
#include "store/store.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/vec.h"
#include "store/store-internal.h"

struct cell {
	size_t off, len;  /* the formatted text, in result.text (NUL-terminated there) */
	uint8_t type;     /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB, SQLITE_NULL */
};

struct result {
	int n_cols;
	struct cell *cells;  /* row-major */
	size_t n_cells, cap_cells;
	char *text;
	size_t text_len, text_cap;
};

/* What the authorizer refused first, for the error message. */
struct refusal {
	int action;
	char arg1[96], arg2[96];
};

/* Functions a query may not call: fts3_tokenizer() reads and writes raw
 * pointers; load_extension() runs code from a file. */
static const char *const denied_functions[] = { "fts3_tokenizer", "load_extension" };

static bool denied_function(const char *name)
{
	for (size_t i = 0; i < NS_ARRAY_SIZE(denied_functions); i++)
		if (name && sqlite3_stricmp(name, denied_functions[i]) == 0)
			return true;
	return false;
}

static int authorize(void *ctx, int action, const char *arg1, const char *arg2, const char *db_name,
		     const char *trigger)
{
	struct refusal *refusal = ctx;
	(void)db_name, (void)trigger;
	switch (action) {
	case SQLITE_FUNCTION: /* (arg2 is the function's name) */
		if (denied_function(arg2))
			break;
		return SQLITE_OK;
	case SQLITE_READ:
	case SQLITE_SELECT:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	default:
		break;
	}
	if (!refusal->action) {
		refusal->action = action;
		snprintf(refusal->arg1, sizeof(refusal->arg1), "%s", arg1 ? arg1 : "");
		snprintf(refusal->arg2, sizeof(refusal->arg2), "%s", arg2 ? arg2 : "");
	}
	return SQLITE_DENY;
}

/* Skips white space, semicolons and SQL comments. */
static const char *skip_space_and_comments(const char *p)
{
	for (;;) {
		while (*p && (isspace((unsigned char)*p) || *p == ';'))
			p++;
		if (p[0] == '-' && p[1] == '-') {
			const char *eol = strchr(p, '\n');
			p = eol ? eol : p + strlen(p);
		} else if (p[0] == '/' && p[1] == '*') {
			const char *end = strstr(p + 2, "*/");
			p = end ? end + 2 : p + strlen(p);
		} else {
			return p;
		}
	}
}

/* The statement's first two words, upper-cased ("DROP TABLE"). */
static void leading_words(const char *sql, char *out, size_t size)
{
	const char *p = skip_space_and_comments(sql);
	size_t n = 0;
	for (int word = 0; word < 2 && isalpha((unsigned char)*p); word++) {
		if (word && n + 1 < size)
			out[n++] = ' ';
		for (; isalpha((unsigned char)*p); p++)
			if (n + 1 < size)
				out[n++] = (char)toupper((unsigned char)*p);
		while (isspace((unsigned char)*p))
			p++;
	}
	out[n] = '\0';
}

/* Names what was refused in the user's terms. A schema change reaches the
 * authorizer as a write to sqlite_master, so it is named by the statement's
 * own first words instead. */
static void describe_refusal(const struct refusal *r, const char *sql, char *out, size_t size)
{
	bool schema_table = strncmp(r->arg1, "sqlite_", 7) == 0 &&
			    (strstr(r->arg1, "master") || strstr(r->arg1, "schema"));
	switch (schema_table ? -1 : r->action) {
	case SQLITE_INSERT: snprintf(out, size, "INSERT into %s", r->arg1); break;
	case SQLITE_UPDATE: snprintf(out, size, "UPDATE of %s", r->arg1); break;
	case SQLITE_DELETE: snprintf(out, size, "DELETE from %s", r->arg1); break;
	case SQLITE_PRAGMA: snprintf(out, size, "PRAGMA %s", r->arg1); break;
	case SQLITE_TRANSACTION: snprintf(out, size, "%s", r->arg1); break;
	case SQLITE_ALTER_TABLE: snprintf(out, size, "ALTER TABLE %s", r->arg2); break;
	case SQLITE_FUNCTION: snprintf(out, size, "the function %s()", r->arg2); break;
	default: leading_words(sql, out, size); break;
	}
}

/* The shortest of %.15g, %.16g, %.17g that reads back as the same double,
 * with ".0" added when that looks like an integer, so a REAL stays
 * recognisable (as in Python's repr and the sqlite3 shell). */
static int format_real(double v, char *buf, size_t size)
{
	if (isinf(v))
		return snprintf(buf, size, "%s", v < 0 ? "-Inf" : "Inf");
	for (int precision = 15; precision <= 17; precision++) {
		snprintf(buf, size, "%.*g", precision, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".en"))
		strncat(buf, ".0", size - strlen(buf) - 1);
	return (int)strlen(buf);
}

static int append_text(struct result *r, const char *s, size_t len)
{
	if (r->text_len + len + 1 > r->text_cap) {
		size_t cap = r->text_cap ? r->text_cap : 4096;
		while (cap < r->text_len + len + 1)
			cap *= 2;
		char *text = realloc(r->text, cap);
		if (!text)
			return -1;
		r->text = text;
		r->text_cap = cap;
	}
	memcpy(r->text + r->text_len, s, len);
	r->text_len += len;
	r->text[r->text_len] = '\0';
	return 0;
}

/* Appends the current row's column i as a formatted cell. */
static int collect_cell(struct result *r, sqlite3_stmt *st, int i)
{
	static const char hex[] = "0123456789abcdef";
	char buf[64];
	struct cell c = { .off = r->text_len, .type = (uint8_t)sqlite3_column_type(st, i) };
	int rc = 0;
	switch (c.type) {
	case SQLITE_INTEGER:
		rc = append_text(r, buf, (size_t)snprintf(buf, sizeof(buf), "%lld", (long long)sqlite3_column_int64(st, i)));
		break;
	case SQLITE_FLOAT:
		rc = append_text(r, buf, (size_t)format_real(sqlite3_column_double(st, i), buf, sizeof(buf)));
		break;
	case SQLITE_TEXT:
		rc = append_text(r, (const char *)sqlite3_column_text(st, i), (size_t)sqlite3_column_bytes(st, i));
		break;
	case SQLITE_BLOB: {
		const unsigned char *blob = sqlite3_column_blob(st, i);
		int n = sqlite3_column_bytes(st, i);
		for (int k = 0; k < n && !rc; k++) {
			char pair[2] = { hex[blob[k] >> 4], hex[blob[k] & 15] };
			rc = append_text(r, pair, 2);
		}
		break;
	}
	default:
		break;
	}
	if (rc < 0 || append_text(r, "", 1) < 0) /* (the NUL after it) */
		return -1;
	c.len = r->text_len - 1 - c.off;
	if (r->n_cells == r->cap_cells) {
		size_t cap = r->cap_cells ? r->cap_cells * 2 : 256;
		struct cell *cells = realloc(r->cells, cap * sizeof(*cells));
		if (!cells)
			return -1;
		r->cells = cells;
		r->cap_cells = cap;
	}
	r->cells[r->n_cells++] = c;
	return 0;
}

/* The bounds of one query (ns_sql_query). */
struct bounds {
	const struct ns_sql_limits *limits;
	struct timespec deadline; /* CLOCK_MONOTONIC; with limits->timeout_s */
	bool timed_out;
};

static bool past_deadline(struct bounds *b)
{
	struct timespec now;
	if (!b->limits || !b->limits->timeout_s)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > b->deadline.tv_sec || (now.tv_sec == b->deadline.tv_sec && now.tv_nsec >= b->deadline.tv_nsec))
		b->timed_out = true;
	return b->timed_out;
}

/* The progress handler: non-zero interrupts the statement. */
static int check_deadline(void *ctx)
{
	return past_deadline(ctx);
}

/* Whether the collected result and SQLite's memory are past the limit. */
static bool over_memory(const struct bounds *b, const struct result *r)
{
	uint64_t held = (uint64_t)r->text_cap + (uint64_t)r->cap_cells * sizeof(*r->cells);
	return b->limits && b->limits->max_memory && (uint64_t)sqlite3_memory_used() + held > b->limits->max_memory;
}

static int timeout_error(const struct bounds *b, const char *db_path, struct ns_error *err)
{
	ns_error_set(err, NS_ERR_NOMEM, "%s: the query ran longer than %u s", db_path, b->limits->timeout_s);
	ns_error_hint(err, "raise the limit with --timeout SECONDS (0: none)");
	return NS_ERR_NOMEM;
}

static int memory_error(const struct bounds *b, const char *db_path, struct ns_error *err)
{
	ns_error_set(err, NS_ERR_NOMEM, "%s: the query needs more than %llu bytes of memory", db_path,
		     (unsigned long long)b->limits->max_memory);
	ns_error_hint(err, "raise the limit with --max-memory SIZE (0: none)");
	return NS_ERR_NOMEM;
}

/* A failed prepare or step: an error in the query itself (a syntax error,
 * no such column, an integer overflow, malformed JSON in json_extract...)
 * is a usage error; anything else is about the file or the machine (a
 * damaged database: 1; an I/O error or a file that cannot be opened: 5;
 * out of memory: 6). */
static int query_failure(sqlite3 *db, int rc, const char *db_path, const char *what, struct ns_error *err)
{
	int code = rc & 0xff;
	if (code == SQLITE_ERROR || code == SQLITE_MISMATCH || code == SQLITE_RANGE || code == SQLITE_CONSTRAINT)
		return ns_error_set(err, NS_ERR_USAGE, "%s: SQL error: %s", db_path, sqlite3_errmsg(db));
	return ns_store_sqlite_error(err, db, rc, db_path, what);
}

/* Prepares the single statement in sql, refusing anything that is not a
 * read-only query. */
static int prepare_query(sqlite3 *db, const char *db_path, const char *sql, struct refusal *refusal,
			 sqlite3_stmt **out, struct ns_error *err)
{
	const char *tail = sql, *statement;
	sqlite3_stmt *st = NULL;
	int rc;
	*out = NULL;
	do { /* skip empty statements such as a leading ";" */
		statement = tail;
		rc = sqlite3_prepare_v2(db, statement, -1, &st, &tail);
	} while (rc == SQLITE_OK && !st && tail && *tail);
	if (rc != SQLITE_OK && refusal->action) {
		char what[128];
		describe_refusal(refusal, statement, what, sizeof(what));
		ns_error_set(err, NS_ERR_USAGE, "%s: query refused: %s is not allowed", db_path, what);
		ns_error_hint(err, "`neuron-stats sql` runs one read-only SELECT; the database is never modified");
		return NS_ERR_USAGE;
	}
	if (rc != SQLITE_OK)
		return query_failure(db, rc, db_path, "cannot prepare the query", err);
	if (!st)
		return ns_error_set(err, NS_ERR_USAGE, "%s: the query is empty", db_path);
	if (tail && *skip_space_and_comments(tail)) {
		sqlite3_finalize(st);
		return ns_error_set(err, NS_ERR_USAGE, "%s: query refused: give one SQL statement, not several",
				    db_path);
	}
	if (!sqlite3_stmt_readonly(st)) {
		sqlite3_finalize(st);
		ns_error_set(err, NS_ERR_USAGE, "%s: query refused: the statement would write", db_path);
		ns_error_hint(err, "`neuron-stats sql` runs one read-only SELECT; the database is never modified");
		return NS_ERR_USAGE;
	}
	*out = st;
	return 0;
}

void ns_sql_init(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1);
}

/* Opens db_path read-only for one query, with every guard of the header
 * comment, and prepares sql. */
static int open_query(const char *db_path, const char *sql, struct bounds *bounds, struct refusal *refusal,
		      sqlite3 **db, sqlite3_stmt **st, struct ns_error *err)
{
	int rc;
	if ((rc = ns_store_open_readonly(db_path, db, err)))
		return rc;
	sqlite3_limit(*db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, (int *)NULL);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_set_authorizer(*db, authorize, refusal);
	if (bounds->limits && bounds->limits->timeout_s)
		sqlite3_progress_handler(*db, 1000, check_deadline, bounds);
	return prepare_query(*db, db_path, sql, refusal, st, err);
}

/* Steps st to the end, collecting every row into r within the bounds. */
static int collect_rows(sqlite3 *db, sqlite3_stmt *st, const char *db_path, struct bounds *bounds,
			struct result *r, struct ns_error *err)
{
	int sqlite_rc;
	r->n_cols = sqlite3_column_count(st);
	while ((sqlite_rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < r->n_cols; c++)
			if (collect_cell(r, st, c) < 0)
				return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory holding the query result",
						    db_path);
		if (over_memory(bounds, r))
			return memory_error(bounds, db_path, err);
		if (past_deadline(bounds))
			return timeout_error(bounds, db_path, err);
	}
	if (sqlite_rc == SQLITE_DONE)
		return 0;
	if (bounds->timed_out)
		return timeout_error(bounds, db_path, err);
	if ((sqlite_rc & 0xff) == SQLITE_NOMEM && bounds->limits && bounds->limits->max_memory)
		return memory_error(bounds, db_path, err);
	return query_failure(db, sqlite_rc, db_path, "cannot run the query", err);
}

static const enum ns_sql_type value_types[] = {
	[SQLITE_INTEGER] = NS_SQL_INTEGER, [SQLITE_FLOAT] = NS_SQL_REAL, [SQLITE_TEXT] = NS_SQL_TEXT,
	[SQLITE_BLOB] = NS_SQL_BLOB, [SQLITE_NULL] = NS_SQL_NULL,
};

/* Hands the collected rows and st's column names over to out (r's text
 * moves there). */
static int give_result(sqlite3_stmt *st, struct result *r, struct ns_sql_result *out)
{
	size_t n_cols = (size_t)r->n_cols, names_at = r->text_len;
	for (size_t c = 0; c < n_cols; c++) {
		const char *name = sqlite3_column_name(st, (int)c);
		if (!name || append_text(r, name, strlen(name) + 1) < 0)
			return -1;
	}
	out->names = calloc(n_cols ? n_cols : 1, sizeof(*out->names));
	out->values = calloc(r->n_cells ? r->n_cells : 1, sizeof(*out->values));
	if (!out->names || !out->values)
		return -1;
	for (size_t c = 0, at = names_at; c < n_cols; c++, at += strlen(r->text + at) + 1)
		out->names[c] = r->text + at;
	for (size_t k = 0; k < r->n_cells; k++) {
		const struct cell *cell = &r->cells[k];
		out->values[k] = (struct ns_sql_value){ value_types[cell->type], r->text + cell->off, cell->len };
	}
	out->n_cols = n_cols;
	out->n_rows = n_cols ? r->n_cells / n_cols : 0;
	out->text = r->text;
	r->text = NULL;
	return 0;
}

int ns_sql_query(const char *db_path, const char *sql, const struct ns_sql_limits *limits,
		 struct ns_sql_result *out, struct ns_error *err)
{
	struct refusal refusal = { 0 };
	struct result r = { 0 };
	struct bounds bounds = { .limits = limits };
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc;
	int64_t previous_heap_limit = -1;
	memset(out, 0, sizeof(*out));
	if (limits && limits->timeout_s) {
		clock_gettime(CLOCK_MONOTONIC, &bounds.deadline);
		bounds.deadline.tv_sec += (time_t)limits->timeout_s;
	}
	if (limits && limits->max_memory)
		previous_heap_limit = sqlite3_hard_heap_limit64((int64_t)(limits->max_memory > INT64_MAX ? INT64_MAX
												: limits->max_memory));
	if ((rc = open_query(db_path, sql, &bounds, &refusal, &db, &st, err)) ||
	    (rc = collect_rows(db, st, db_path, &bounds, &r, err)))
		goto out;
	if (give_result(st, &r, out) < 0) {
		ns_sql_result_release(out);
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory holding the query result", db_path);
	}
out:
	free(r.cells);
	free(r.text);
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (previous_heap_limit >= 0)
		sqlite3_hard_heap_limit64(previous_heap_limit);
	return rc;
}

void ns_sql_result_release(struct ns_sql_result *r)
{
	free(r->names);
	free(r->values);
	free(r->text);
	memset(r, 0, sizeof(*r));
}
