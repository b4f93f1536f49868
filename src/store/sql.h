/* `neuron-stats sql`: one read-only query over a database, its result as
 * typed values (store/sql.c); report/sqlout.h prints it. */
#ifndef NS_STORE_SQL_H
#define NS_STORE_SQL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* The bounds of one query; 0 is no bound. */
struct ns_sql_limits {
	unsigned timeout_s;   /* wall-clock seconds, from the open to the last row */
	uint64_t max_memory;  /* bytes: SQLite's memory and the collected result together */
};
#define NS_SQL_TIMEOUT_DEFAULT 60
#define NS_SQL_MAX_MEMORY_DEFAULT (UINT64_C(2) << 30) /* 2 GiB */
/* Makes SQLite count its memory, which limits->max_memory needs. Call it
 * before any other use of SQLite in the process (later, it does nothing). */
void ns_sql_init(void);

/* A value of a query's result, as SQLite typed it. */
enum ns_sql_type { NS_SQL_NULL = 0, NS_SQL_INTEGER, NS_SQL_REAL, NS_SQL_TEXT, NS_SQL_BLOB };
struct ns_sql_value {
	enum ns_sql_type type;
	/* NUL-terminated: an INTEGER in decimal; a REAL as the shortest of %.15g,
	 * %.16g, %.17g that reads back the same, ".0" added to what looks like an
	 * integer, "Inf" or "-Inf"; TEXT as stored (it may hold NUL bytes: len);
	 * a BLOB in lower-case hex; NULL as "" */
	const char *text;
	size_t len; /* bytes of text */
};
/* A whole result: n_rows * n_cols values, row-major. */
struct ns_sql_result {
	size_t n_cols, n_rows;
	const char **names;          /* the columns' names */
	struct ns_sql_value *values;
	char *text;                  /* holds the names and the values' text */
};
/* Runs one read-only statement (the database is opened read-only, with
 * SQLITE_LIMIT_ATTACHED 0 and an authorizer denying writes and the
 * functions that are not safe, see sql.c) and returns its result in *out
 * (free with ns_sql_result_release; report/sqlout.h prints it). limits
 * may be NULL (no bounds). Past a bound: NS_ERR_NOMEM. An error in the
 * query is NS_ERR_USAGE; a damaged database NS_ERR_INPUT, an I/O error
 * NS_ERR_IO. */
int ns_sql_query(const char *db_path, const char *sql, const struct ns_sql_limits *limits,
		 struct ns_sql_result *out, struct ns_error *err);
void ns_sql_result_release(struct ns_sql_result *r);

#endif
