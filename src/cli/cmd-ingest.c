/* neuron-stats ingest PATH -o DB: traces -> SQLite (docs/schema.md). */
#include <string.h>

#include "cli/cli.h"
#include "pipeline/load.h"

static const char *opt_output;
static bool opt_strict, opt_quiet, opt_force;

static const struct ns_opt ingest_opts[] = {
	NS_FILE('o', "output", "DB", "database to write (replaced atomically)", &opt_output),
	NS_FLAG(0, "force", "replace DB even if it is not a neuron-stats database", &opt_force),
	NS_FLAG(0, "strict", "a truncated trace is an error, not a warning", &opt_strict),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_ingest_spec = {
	.name = "ingest",
	.usage = "neuron-stats ingest PATH -o DB [options]",
	.summary = "Write every trace of PATH (a trace file or a capture directory) into a SQLite database.",
	.details = "The database is written to a temporary file beside DB and renamed over it when\n"
		   "complete, so DB is never half-written; it keeps the mode and owner of the file it\n"
		   "replaces, and a symbolic link is written through. Refused before any work (exit 2):\n"
		   "DB is one of the inputs, a directory, a device, FIFO or socket, or (without --force)\n"
		   "an existing file that is not a neuron-stats database. PATH - is standard input.\n"
		   "Schema: docs/schema.md.",
	.opts = ingest_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

static int ingest(const char *input, const struct ns_load_opts *lo, struct ns_error *err)
{
	struct ns_run run;
	int rc = ns_run_load(input, lo, &run, err);
	ns_run_release(&run);
	return rc;
}

int cmd_ingest(int argc, char **argv)
{
	char **pos;
	int npos, rc;
	struct ns_error err = { 0 };

	rc = ns_opt_parse(&cmd_ingest_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? 0 : rc;
	ns_cli_quiet = opt_quiet;
	if (!opt_output) {
		ns_error_set(&err, NS_ERR_USAGE, "ingest: -o DB is required");
		return ns_cli_fail(&err);
	}
	struct ns_load_opts lo = { .jobs = ns_cli_jobs(), .db_out = opt_output, .check_output = true, .force = opt_force,
				   .strict = opt_strict, .db_only = true, .ui = ns_cli_load_ui() };
	if (ingest(pos[0], &lo, &err))
		return ns_cli_fail(&err);
	return 0;
}
