/* neuron-stats kernels PATH and neuron-stats breakdown PATH: the HTA-style
 * analyses (docs/analyses.md), one row set per trace (rank) of PATH. */
#include <stdlib.h>

#include "aggregate/breakdown.h"
#include "aggregate/kernels.h"
#include "cli/cli.h"
#include "pipeline/load.h"
#include "report/analyses.h"

static const char *opt_format;
static bool opt_quiet, opt_by_type, opt_idle, opt_no_cache, opt_bytes;
static long opt_kernel_wait_us = 30;

static const struct ns_opt kernels_opts[] = {
	NS_ENUM('f', "format", "FMT", "table (default), csv, json or markdown", &opt_format, ns_cli_formats),
	NS_FLAG(0, "by-type", "one row per kernel type (compute, communication, memory, other)", &opt_by_type),
	NS_FLAG(0, "bytes", "memcpy and memset: bytes and bandwidth (GB/s) per row", &opt_bytes),
	NS_FLAG(0, "no-cache", "parse the traces, ignoring and not writing the cache", &opt_no_cache),
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

static const struct ns_opt breakdown_opts[] = {
	NS_ENUM('f', "format", "FMT", "table (default), csv, json or markdown", &opt_format, ns_cli_formats),
	NS_FLAG(0, "idle", "the idle-time breakdown per stream (host wait, kernel wait, other)", &opt_idle),
	NS_INT(0, "kernel-wait-us", "US", "idle: a gap under US between kernels is kernel wait (default 30)",
	       &opt_kernel_wait_us, 0, 1e9),
	NS_FLAG(0, "no-cache", "parse the traces, ignoring and not writing the cache", &opt_no_cache),
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_kernels_spec = {
	.name = "kernels",
	.usage = "neuron-stats kernels PATH [--by-type] [--bytes] [--format table|csv|json|markdown]",
	.summary = "Device kernel statistics per kernel or type, per rank (as nsys cuda_gpu_kern_sum, HTA).",
	.details = "Count, total, mean, median, min, max, sample standard deviation and share of the\n"
		   "rank's kernel time, per kernel name; kernel types and the events counted are HTA's\n"
		   "(docs/analyses.md). --bytes: the rows of calls with a size (memcpy, memset), with\n"
		   "their bytes and bandwidth: bytes over the calls' time in all (nsys's\n"
		   "cuda_gpu_mem_size_sum over cuda_gpu_mem_time_sum).",
	.opts = kernels_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

const struct ns_cmd_spec cmd_breakdown_spec = {
	.name = "breakdown",
	.usage = "neuron-stats breakdown PATH [--idle] [--format table|csv|json|markdown]",
	.summary = "Temporal (idle/compute/non-compute) or idle-time breakdown of device time, per rank (HTA).",
	.details = "Without --idle: HTA's get_temporal_breakdown per rank; with --idle: its\n"
		   "get_idle_time_breakdown per rank and stream (docs/analyses.md).",
	.opts = breakdown_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

static int load(char **argv, int argc, const struct ns_cmd_spec *spec, struct ns_run *run, struct ns_error *err)
{
	char **pos;
	int npos;
	int rc = ns_opt_parse(spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? -1 : rc;
	ns_cli_quiet = opt_quiet;
	struct ns_load_opts lo = { .use_cache = !opt_no_cache, .ui = ns_cli_load_ui() };
	if (ns_run_load(pos[0], &lo, run, err))
		return ns_cli_fail(err);
	return 0;
}

static int64_t rank_of(const struct ns_run *run, size_t i)
{
	return run->traces[i].rank != NS_NONE ? run->traces[i].rank : (int64_t)i;
}

int cmd_kernels(int argc, char **argv)
{
	struct ns_error err = { 0 };
	struct ns_run run = { 0 };
	int rc = load(argv, argc, &cmd_kernels_spec, &run, &err);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct ns_kstats *stats = calloc(run.n + 1, sizeof(*stats));
	struct ns_rank_kstats *rows = calloc(run.n + 1, sizeof(*rows));
	if (!stats || !rows)
		rc = ns_error_set(&err, NS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < run.n; i++) {
		struct ns_kevents k;
		if ((rc = ns_kevents_collect(&run.traces[i], &k, &err)))
			break;
		rc = ns_kstats_compute(&run.traces[i], &k, opt_by_type, &stats[i], &err);
		ns_kevents_release(&k);
		rows[i] = (struct ns_rank_kstats){ run.traces[i].path, rank_of(&run, i), &stats[i] };
	}
	if (rc == 0)
		rc = (opt_bytes ? ns_report_kernel_bytes : ns_report_kernels)(stdout, rows, run.n, ns_cli_format(opt_format),
									     &err);
	if (rc)
		rc = ns_cli_fail(&err);
	for (size_t i = 0; stats && i < run.n; i++)
		ns_kstats_release(&stats[i]);
	free(stats);
	free(rows);
	ns_run_release(&run);
	return rc;
}

int cmd_breakdown(int argc, char **argv)
{
	struct ns_error err = { 0 };
	struct ns_run run = { 0 };
	int rc = load(argv, argc, &cmd_breakdown_spec, &run, &err);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct ns_breakdown *b = calloc(run.n + 1, sizeof(*b));
	struct ns_rank_breakdown *rows = calloc(run.n + 1, sizeof(*rows));
	if (!b || !rows)
		rc = ns_error_set(&err, NS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < run.n; i++) {
		struct ns_kevents k;
		if ((rc = ns_kevents_collect(&run.traces[i], &k, &err)))
			break;
		rc = ns_breakdown_compute(&k, (int64_t)opt_kernel_wait_us * 1000, &b[i], &err);
		ns_kevents_release(&k);
		rows[i] = (struct ns_rank_breakdown){ run.traces[i].path, rank_of(&run, i), &b[i] };
	}
	if (rc == 0)
		rc = ns_report_breakdown(stdout, rows, run.n, opt_idle, ns_cli_format(opt_format), &err);
	if (rc)
		rc = ns_cli_fail(&err);
	for (size_t i = 0; b && i < run.n; i++)
		ns_breakdown_release(&b[i]);
	free(b);
	free(rows);
	ns_run_release(&run);
	return rc;
}
