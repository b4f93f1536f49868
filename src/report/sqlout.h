/* `neuron-stats sql` output: a query's result (store/sql.h) as a layout
 * over the grid engine (grid.h). */
#ifndef NS_SQLOUT_H
#define NS_SQLOUT_H

#include <stdio.h>

#include "common/error.h"
#include "store/sql.h"

enum ns_sql_format { NS_SQL_TABLE = 0, NS_SQL_CSV, NS_SQL_JSON };

/* Writes r to out: table (aligned columns, a column of numbers and NULLs
 * right-aligned, header included; NULL empty; control characters as \n,
 * \r, \t, \xHH), csv (RFC 4180 with a header row; NULL empty) or json (an
 * array of objects; NULL and an infinite real null, a blob a hex string).
 * A result without columns prints nothing. NS_ERR_NOMEM or NS_ERR_IO (a
 * failed write) in err, naming db_path. */
int ns_sql_write(FILE *out, const struct ns_sql_result *r, enum ns_sql_format fmt, const char *db_path,
		 struct ns_error *err);

#endif
