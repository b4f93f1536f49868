/* neuron-stats sql DB_OR_TRACE QUERY: one read-only query over a database
 * (docs/schema.md, worked examples in docs/queries.md). A trace or capture
 * directory is ingested into the cache database first, or the cached one
 * is reused while its sources are unchanged; a stream (standard input, a
 * pipe), or a trace whose cache cannot be written, goes to a private
 * temporary database that is deleted after the query. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/vec.h"
#include "pipeline/env.h"
#include "pipeline/load.h"
#include "report/sqlout.h"
#include "store/store.h"

static const char *opt_format, *opt_max_memory;
static long opt_timeout = NS_SQL_TIMEOUT_DEFAULT;
static bool opt_quiet;

static const char *const formats[] = { "table", "csv", "json", NULL }; /* enum ns_sql_format's order */

static const struct ns_opt sql_opts[] = {
	NS_ENUM('f', "format", "FMT", "table (default), csv or json", &opt_format, formats),
	NS_INT(0, "timeout", "SECONDS", "stop the query after SECONDS (default 60; 0: none)", &opt_timeout, 0,
	       86400),
	NS_STRING(0, "max-memory", "SIZE", "memory for the query, K/M/G suffixes (default 2G; 0: none)",
		  &opt_max_memory),
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_sql_spec = {
	.name = "sql",
	.usage = "neuron-stats sql DB_OR_TRACE QUERY [--format table|csv|json]",
	.summary = "Run one read-only SQL query on a database, or on a trace through the cache.",
	.details = "QUERY is a single SELECT (or WITH ... SELECT); anything that would write, ATTACH\n"
		   "or PRAGMA is refused. Tables and views: docs/schema.md; examples: docs/queries.md.\n"
		   "table: aligned columns, numbers right-aligned, NULL empty; csv: RFC 4180 with a\n"
		   "header row; json: an array of objects. A trace or directory is ingested into the\n"
		   "cache ($NEURON_STATS_CACHE_DIR, else $XDG_CACHE_HOME/neuron-stats, else\n"
		   "~/.cache/neuron-stats) and reused while its files are unchanged; standard input\n"
		   "(-) or a pipe into a temporary database. A query past --timeout or --max-memory\n"
		   "stops with exit 6. Functions: all of SQLite's but fts3_tokenizer and load_extension.",
	.opts = sql_opts,
	.min_args = 2,
	.max_args = 2,
	.complete_args = NS_COMPLETE_FILE,
};

/* --timeout and --max-memory. */
static int parse_limits(struct ns_sql_limits *limits, struct ns_error *err)
{
	limits->timeout_s = (unsigned)opt_timeout;
	limits->max_memory = NS_SQL_MAX_MEMORY_DEFAULT;
	if (opt_max_memory && !ns_parse_size(opt_max_memory, INT64_MAX, &limits->max_memory))
		return ns_error_set(err, NS_ERR_USAGE, "sql: --max-memory '%s' is not a size (bytes, or with K, M, G)",
				    opt_max_memory);
	return 0;
}

int cmd_sql(int argc, char **argv)
{
	struct ns_error err = { 0 };
	struct ns_sql_limits limits;
	int fmt = 0;
	char **pos, *db = NULL;
	bool temporary = false;
	int npos, rc;

	struct ns_sql_result result = { 0 };
	ns_sql_init(); /* (before any use of SQLite, the cache's included) */
	rc = ns_opt_parse(&cmd_sql_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? 0 : rc;
	ns_cli_quiet = opt_quiet;
	const char *input = pos[0], *query = pos[1];
	struct ns_load_opts lo = { .use_cache = true, .ui = ns_cli_load_ui() };
	while (opt_format && formats[fmt] != opt_format) /* (--format stores the entry itself) */
		fmt++;
	if ((rc = parse_limits(&limits, &err)) ||
	    (rc = ns_run_query_db(input, &lo, &db, &temporary, &err)) ||
	    (rc = ns_sql_query(db ? db : input, query, &limits, &result, &err)) ||
	    (rc = ns_sql_write(stdout, &result, (enum ns_sql_format)fmt, db ? db : input, &err)))
		rc = ns_cli_fail(&err);
	ns_sql_result_release(&result);
	if (temporary)
		unlink(db);
	free(db);
	return rc;
}
