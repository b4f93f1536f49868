/* neuron-stats sql DB_OR_TRACE QUERY: one read-only query over a database
 * (docs/schema.md, worked examples in docs/queries.md). A trace or capture
 * directory is ingested into the cache database first, or the cached one
 * is reused while its sources are unchanged. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ingest/ingest.h"
#include "store/store.h"

static const char *opt_format;
static bool opt_quiet;

static const struct ns_opt sql_opts[] = {
	NS_STRING('f', "format", "FMT", "table (default), csv or json", &opt_format),
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
		   "~/.cache/neuron-stats) and reused while its files are unchanged.",
	.opts = sql_opts,
	.min_args = 2,
	.max_args = 2,
};

static int parse_format(const char *name, enum ns_sql_format *out, struct ns_error *err)
{
	static const struct {
		const char *name;
		enum ns_sql_format fmt;
	} formats[] = { { "table", NS_SQL_TABLE }, { "csv", NS_SQL_CSV }, { "json", NS_SQL_JSON } };
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (strcmp(name, formats[i].name) == 0) {
			*out = formats[i].fmt;
			return 0;
		}
	}
	return ns_error_set(err, NS_ERR_USAGE, "sql: unknown --format '%s' (table, csv or json)", name);
}

/* The cache database for the traces of input, ingested now unless the
 * cached copy is still valid. */
static int cached_db(const char *input, char **db_path, struct ns_error *err)
{
	char **paths = NULL;
	size_t n = 0;
	struct ns_source_id *ids = NULL;
	int rc;
	*db_path = NULL;
	if ((rc = ns_find_traces(input, &paths, &n, err)) || (rc = ns_source_ids(paths, n, &ids, err)))
		goto out;
	if (!(*db_path = ns_cache_path(ids, n))) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: no cache directory to ingest into", input);
		ns_error_hint(err, "set NEURON_STATS_CACHE_DIR, or run `neuron-stats ingest %s -o DB` and query DB",
			      input);
		goto out;
	}
	if (!ns_cache_valid(*db_path, ids, n))
		rc = ns_cli_ingest_to_db(input, *db_path, err);
out:
	ns_source_ids_free(ids, n);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

int cmd_sql(int argc, char **argv)
{
	struct ns_error err = { 0 };
	enum ns_sql_format fmt = NS_SQL_TABLE;
	char **pos, *cache = NULL;
	int npos, rc;

	rc = ns_opt_parse(&cmd_sql_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? 0 : rc;
	ns_cli_quiet = opt_quiet;
	const char *input = pos[0], *query = pos[1];
	if ((opt_format && (rc = parse_format(opt_format, &fmt, &err))) ||
	    (!ns_store_is_db(input) && (rc = cached_db(input, &cache, &err))) ||
	    (rc = ns_sql_run(cache ? cache : input, query, fmt, stdout, &err)))
		rc = ns_cli_fail(&err);
	free(cache);
	return rc;
}
