/* neuron-stats launches PATH: launch overhead per op (docs/report.md
 * "Launch overhead"). */
#include <stdlib.h>

#include "cli/cli.h"
#include "pipeline/load.h"
#include "report/launches.h"

static const char *opt_format;
static double opt_runtime_cutoff = 50, opt_delay_cutoff = 100;
static bool opt_each, opt_no_cache, opt_strict, opt_quiet;
static struct ns_cli_select opt_select;

static const struct ns_opt launches_opts[] = {
	NS_FLAG(0, "each", "a row per launch (HTA's get_cuda_kernel_launch_stats table)", &opt_each),
	NS_REAL(0, "runtime-cutoff", "US", "a launch call longer than US microseconds is slow (default 50, as HTA)",
		&opt_runtime_cutoff, 0, 1e12),
	NS_REAL(0, "delay-cutoff", "US", "a launch delay over US microseconds is late (default 100, as HTA)",
		&opt_delay_cutoff, 0, 1e12),
	NS_ENUM('f', "format", "FMT", "table (default), csv, json or markdown", &opt_format, ns_cli_formats),
	NS_CLI_SELECT_OPTS(opt_select),
	NS_CLI_SELECT_NAME_OPTS(opt_select),
	NS_FLAG(0, "no-cache", "neither read nor write the result cache", &opt_no_cache),
	NS_FLAG(0, "strict", "a truncated trace is an error, not a warning", &opt_strict),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_launches_spec = {
	.name = "launches",
	.usage = "neuron-stats launches PATH [options]",
	.summary = "Launch overhead: each launch call's duration, its device work's, and the delay between.",
	.details = "Each cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync or cudaMemsetAsync call\n"
		   "(MTIA: runFunction) is joined on its correlation id with the device work it queued,\n"
		   "as HTA's get_cuda_kernel_launch_stats: delay = work start - call end (0 if negative).\n"
		   "Per op (the op that made the call), largest total delay first: the delays' total,\n"
		   "mean, median and max, mean call and work time, and how many launches had work\n"
		   "shorter than the call, a slow call, or a late start. Rules: docs/report.md.",
	.opts = launches_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

struct launches_ctx {
	struct ns_launch_opts opts;
	enum ns_format fmt;
};

static int launches_trace(struct ns_trace *t, size_t i, size_t n, void *ctx, struct ns_error *err)
{
	const struct launches_ctx *c = ctx;
	struct ns_agg_opts ao = { .backend_override = -1 };
	struct ns_agg agg;
	struct ns_launches l;
	int rc = ns_aggregate(t, &ao, &agg, err);
	if (rc)
		return rc;
	if (!(rc = ns_launches_find(&agg, &l, err))) {
		ns_cli_trace_header(t, i, n, c->fmt);
		rc = ns_report_launches(stdout, &agg, &l, &c->opts, c->fmt, err);
		ns_launches_release(&l);
	}
	ns_agg_release(&agg);
	return rc;
}

int cmd_launches(int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ns_opt_parse(&cmd_launches_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? 0 : rc;
	ns_cli_quiet = opt_quiet;
	struct launches_ctx c = { .fmt = ns_cli_format(opt_format),
				  .opts = { .each = opt_each, .runtime_cutoff_ns = (int64_t)(opt_runtime_cutoff * 1000),
					    .delay_cutoff_ns = (int64_t)(opt_delay_cutoff * 1000) } };
	struct ns_load_opts lo = { .jobs = ns_cli_jobs(), .use_cache = !opt_no_cache, .strict = opt_strict,
				   .ui = ns_cli_load_ui() };
	return ns_cli_each_trace(pos[0], &lo, &opt_select, launches_trace, &c);
}
