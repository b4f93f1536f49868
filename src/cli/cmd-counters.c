/* neuron-stats counters PATH: the CUPTI range-profiler ranges of a trace
 * with their launching ops and counters (docs/report.md "Counter-mode
 * traces"). */
#include <stdlib.h>

#include "aggregate/counters.h"
#include "cli/cli.h"
#include "pipeline/load.h"
#include "report/counters.h"

static const char *opt_format;
static bool opt_strict, opt_quiet;
static struct ns_cli_select opt_select;

static const struct ns_opt counters_opts[] = {
	NS_ENUM('f', "format", "FMT", "table (default), csv, json or markdown", &opt_format, ns_cli_formats),
	NS_CLI_SELECT_OPTS(opt_select),
	NS_CLI_SELECT_NAME_OPTS(opt_select),
	NS_FLAG(0, "strict", "a truncated trace is an error, not a warning", &opt_strict),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings on stderr", &opt_quiet),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_counters_spec = {
	.name = "counters",
	.usage = "neuron-stats counters PATH [options]",
	.summary = "CUPTI range-profiler counters per kernel, with the ops that launched it.",
	.details = "A trace recorded with CUPTI's range profiler (experimental_config profiler_metrics)\n"
		   "has a \"cuda_profiler_range\" event per kernel: counters, not times. Each is paired\n"
		   "with the cudaLaunchKernel call of the same rank in time order, as HTA does\n"
		   "(get_cupti_counter_data_with_operators); the outermost and innermost cpu_op around\n"
		   "that call are its top-level and bottom-level ops (csv and json: the whole op stack).\n"
		   "Rules: docs/report.md.",
	.opts = counters_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

static int counters_trace(struct ns_trace *t, size_t i, size_t n, void *ctx, struct ns_error *err)
{
	enum ns_format fmt = *(const enum ns_format *)ctx;
	struct ns_agg_opts ao = { .backend_override = -1 };
	struct ns_agg agg;
	struct ns_counter_ranges ranges;
	int rc = ns_aggregate(t, &ao, &agg, err);
	if (rc)
		return rc;
	if (!(rc = ns_counter_ranges(&agg, &ranges, err))) {
		ns_cli_trace_header(t, i, n, fmt);
		rc = ns_report_counters(stdout, &agg, &ranges, fmt, err);
		ns_counter_ranges_release(&ranges);
	}
	ns_agg_release(&agg);
	return rc;
}

int cmd_counters(int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ns_opt_parse(&cmd_counters_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? 0 : rc;
	ns_cli_quiet = opt_quiet;
	enum ns_format fmt = ns_cli_format(opt_format);
	struct ns_load_ui ui = *ns_cli_load_ui();
	ui.parsed = NULL; /* (its note sums the counters this command lists) */
	struct ns_load_opts lo = { .jobs = ns_cli_jobs(), .strict = opt_strict, .ui = &ui };
	return ns_cli_each_trace(pos[0], &lo, &opt_select, counters_trace, &fmt);
}
