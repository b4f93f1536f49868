/* neuron-stats kernels, breakdown, overlap, stragglers and ranks PATH: the
 * HTA-style analyses (docs/analyses.md), one row set per trace (rank) of
 * PATH; stragglers and ranks compare the traces (ranks) with each other. */
#include <stdlib.h>
#include <string.h>

#include "aggregate/breakdown.h"
#include "aggregate/kernels.h"
#include "aggregate/overlap.h"
#include "aggregate/stragglers.h"
#include "cli/cli.h"
#include "pipeline/load.h"
#include "pipeline/neuron.h"
#include "report/analyses.h"

static const char *opt_format;
static bool opt_quiet, opt_by_type, opt_by_neff, opt_idle, opt_per_step, opt_no_cache, opt_steps, opt_ranks,
	opt_collectives, opt_bytes;
static bool opt_summary;
static const char *opt_metric;
static bool opt_by_engine, opt_by_opcode;
static const char *opt_device_time_unit;
static long opt_kernel_wait_us = 30, opt_row_limit = 100;
static struct ns_cli_select opt_select;

static const struct ns_opt kernels_opts[] = {
	NS_ENUM('f', "format", "FMT", "table (default), csv, json or markdown", &opt_format, ns_cli_formats),
	NS_FLAG(0, "by-type", "one row per kernel type (compute, communication, memory, other)", &opt_by_type),
	NS_FLAG(0, "by-neff", "Neuron: one row per NEFF hash too (a NEFF column)", &opt_by_neff),
	NS_FLAG(0, "by-engine", "Neuron: device-profile instructions per NeuronCore engine, not kernels", &opt_by_engine),
	NS_FLAG(0, "by-opcode", "Neuron: as --by-engine, one row per engine and opcode", &opt_by_opcode),
	NS_ENUM(0, "device-time-unit", "UNIT", "--by-engine: time unit of device-profile exports: ns, us, ms or s "
		"(default: detect)", &opt_device_time_unit, ns_cli_device_time_units),
	NS_FLAG(0, "bytes", "memcpy and memset: bytes and bandwidth (GB/s) per row", &opt_bytes),
	NS_CLI_SELECT_OPTS(opt_select),
	NS_CLI_SELECT_NAME_OPTS(opt_select),
	NS_FLAG(0, "no-cache", "parse the traces, ignoring and not writing the cache", &opt_no_cache),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

static const struct ns_opt breakdown_opts[] = {
	NS_ENUM('f', "format", "FMT", "table (default), csv, json or markdown", &opt_format, ns_cli_formats),
	NS_FLAG(0, "idle", "the idle-time breakdown per stream (host wait, kernel wait, other)", &opt_idle),
	NS_FLAG(0, "per-step", "a row per profiler step too (the kernels launched in it)", &opt_per_step),
	NS_INT(0, "kernel-wait-us", "US", "idle: a gap under US between kernels is kernel wait (default 30)",
	       &opt_kernel_wait_us, 0, 1e9),
	NS_CLI_SELECT_OPTS(opt_select),
	NS_CLI_SELECT_NAME_OPTS(opt_select),
	NS_FLAG(0, "no-cache", "parse the traces, ignoring and not writing the cache", &opt_no_cache),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

static const struct ns_opt overlap_opts[] = {
	NS_ENUM('f', "format", "FMT", "table (default), csv, json or markdown", &opt_format, ns_cli_formats),
	NS_FLAG(0, "steps", "a row per profiler step too (the kernels launched in it)", &opt_steps),
	NS_CLI_SELECT_CATEGORY_OPT(opt_select),
	NS_CLI_SELECT_RANK_OPT(opt_select),
	NS_CLI_SELECT_NAME_OPTS(opt_select),
	NS_FLAG(0, "no-cache", "parse the traces, ignoring and not writing the cache", &opt_no_cache),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

static const struct ns_opt stragglers_opts[] = {
	NS_ENUM('f', "format", "FMT", "table (default), csv, json or markdown", &opt_format, ns_cli_formats),
	NS_FLAG(0, "ranks", "a row per step and rank (start, end, duration, behind the median)", &opt_ranks),
	NS_FLAG(0, "collectives", "per rank: communication kernels, and their wait for the last rank", &opt_collectives),
	NS_CLI_SELECT_OPTS(opt_select),
	NS_CLI_SELECT_NAME_OPTS(opt_select),
	NS_FLAG(0, "no-cache", "parse the traces, ignoring and not writing the cache", &opt_no_cache),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

static const struct ns_opt ranks_opts[] = {
	NS_ENUM('f', "format", "FMT", "table (default), csv, json or markdown", &opt_format, ns_cli_formats),
	NS_ENUM('m', "metric", "WHAT",
		"self_device (default; self_cpu without a device), self_cpu, device_total, cpu_total or calls",
		&opt_metric, ns_rank_metric_names),
	NS_FLAG(0, "per-step", "a row per profiler step: each rank's step duration", &opt_per_step),
	NS_FLAG(0, "summary", "min, median and max over the ranks, not each rank (always above 16 ranks)",
		&opt_summary),
	NS_INT('n', "row-limit", "N", "print at most N ops (-1: all; default 100)", &opt_row_limit, -1, NS_NO_MAX),
	NS_CLI_SELECT_OPTS(opt_select),
	NS_CLI_SELECT_NAME_OPTS(opt_select),
	NS_FLAG(0, "no-cache", "parse the traces, ignoring and not writing the cache", &opt_no_cache),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_kernels_spec = {
	.name = "kernels",
	.usage = "neuron-stats kernels PATH [--by-type|--by-engine|--by-opcode] [--by-neff] [--bytes] [--format "
		 "table|csv|json|markdown]",
	.summary = "Device kernel statistics per kernel or type, per rank (as nsys cuda_gpu_kern_sum, HTA).",
	.details = "Count, total, mean, median, min, max, sample standard deviation and share of the\n"
		   "rank's kernel time, per kernel name; kernel types and the events counted are HTA's\n"
		   "(docs/analyses.md). --bytes: the rows of calls with a size (memcpy, memset), with\n"
		   "their bytes and bandwidth: bytes over the calls' time in all (nsys's\n"
		   "cuda_gpu_mem_size_sum over cuda_gpu_mem_time_sum). --by-neff (Neuron): the rows\n"
		   "split by the NEFF hash of the device work, in a NEFF column. --by-engine (Neuron):\n"
		   "the same statistics over the instructions of the capture's device profiles, per\n"
		   "NeuronCore engine (PE, ACT, DVE, POOL, SP, DMA), the share of all their time;\n"
		   "--by-opcode: per engine and opcode, the share of the engine's time\n"
		   "(docs/neuron.md \"Engine statistics\").",
	.opts = kernels_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

const struct ns_cmd_spec cmd_breakdown_spec = {
	.name = "breakdown",
	.usage = "neuron-stats breakdown PATH [--idle|--per-step] [--format table|csv|json|markdown]",
	.summary = "Temporal (idle/compute/non-compute) or idle-time breakdown of device time, per rank (HTA).",
	.details = "Without --idle: HTA's get_temporal_breakdown per rank; with --idle: its\n"
		   "get_idle_time_breakdown per rank and stream; --per-step: the temporal breakdown\n"
		   "per rank and profiler step too, over the kernels launched in each step\n"
		   "(docs/analyses.md).",
	.opts = breakdown_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

const struct ns_cmd_spec cmd_overlap_spec = {
	.name = "overlap",
	.usage = "neuron-stats overlap PATH [--steps] [--format table|csv|json|markdown]",
	.summary = "Communication time overlapped with compute, per rank (and step) (HTA get_comm_comp_overlap).",
	.details = "Per rank: the union of the communication kernels' intervals, the part of it when a\n"
		   "compute kernel runs too, and that part's percentage; --steps: also per profiler\n"
		   "step, over the kernels launched in it (docs/analyses.md).",
	.opts = overlap_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

const struct ns_cmd_spec cmd_stragglers_spec = {
	.name = "stragglers",
	.usage = "neuron-stats stragglers PATH [--ranks|--collectives] [--format table|csv|json|markdown]",
	.summary = "Cross-rank stragglers: per step the rank that ended last; collectives' wait per rank.",
	.details = "PATH holds the ranks of one job (one trace each). Per profiler step: the rank whose\n"
		   "step ended last, by how much after the median end; --ranks: every rank's step;\n"
		   "--collectives: per rank, its communication kernels and their wait for the last rank\n"
		   "to arrive (matched by name and order across ranks; docs/analyses.md).",
	.opts = stragglers_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

const struct ns_cmd_spec cmd_ranks_spec = {
	.name = "ranks",
	.usage = "neuron-stats ranks PATH [--metric WHAT] [--per-step] [--format table|csv|json|markdown]",
	.summary = "Cross-rank view: each op's time on every rank side by side, the slowest rank, max/median.",
	.details = "PATH holds the ranks of one job (one trace each). Per op (the report's key, as\n"
		   "--merge): the metric on each rank, its total, the rank with the most (the slowest)\n"
		   "and max/median over the ranks (an op missing on a rank counts 0 there); largest\n"
		   "total first. --per-step: per profiler step, each rank's step duration, the slowest\n"
		   "rank, the rank that ended last (as stragglers) and max/median. Above 16 ranks, or\n"
		   "with --summary, min, median and max replace the ranks' columns (docs/analyses.md).",
	.opts = ranks_opts,
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
	struct ns_load_opts lo = { .jobs = ns_cli_jobs(), .use_cache = !opt_no_cache, .ui = ns_cli_load_ui() };
	struct ns_cli_selection sel;
	if (ns_cli_select_parse(&opt_select, &sel, err) || ns_run_load(pos[0], &lo, run, err) ||
	    ns_cli_select_run(&sel, pos[0], run, err))
		return ns_cli_fail(err);
	return 0;
}

static int64_t rank_of(const struct ns_run *run, size_t i)
{
	return run->traces[i].rank != NS_NONE ? run->traces[i].rank : (int64_t)i;
}

/* kernels --by-engine / --by-opcode: each trace's device profiles. */
static int kernels_by_engine(const struct ns_run *run, struct ns_error *err)
{
	struct ns_load_opts lo = { .device_time_unit = opt_device_time_unit, .ui = ns_cli_load_ui() };
	struct ns_neuron_detail *d = calloc(run->n + 1, sizeof(*d));
	struct ns_engine_stats *stats = calloc(run->n + 1, sizeof(*stats));
	struct ns_rank_engine_stats *rows = calloc(run->n + 1, sizeof(*rows));
	int rc = d && stats && rows ? 0 : ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	/* (--category, --steps and the name filters select trace events; the
	 * instructions are the device profiles') */
	const char *other = opt_by_type ? "--by-type" : opt_bytes ? "--bytes" : opt_select.category ? "--category"
			    : opt_select.steps ? "--steps" : opt_select.include.n ? "--include"
			    : opt_select.exclude.n ? "--exclude" : opt_select.hide_annotations ? "--hide-annotations" : NULL;
	if (rc == 0 && other)
		rc = ns_error_set(err, NS_ERR_USAGE, "kernels: --by-engine and --by-opcode cannot be combined with %s",
				  other);
	for (size_t i = 0; rc == 0 && i < run->n; i++) {
		if ((rc = ns_cli_neuron_profiles(&run->traces[i], &lo, opt_by_opcode ? "--by-opcode" : "--by-engine",
						 &d[i], err)) == 0)
			rc = ns_engine_stats_compute(d[i].v, d[i].n, opt_by_neff, opt_by_opcode, &stats[i], err);
		rows[i] = (struct ns_rank_engine_stats){ run->traces[i].path, rank_of(run, i), &stats[i] };
	}
	if (rc == 0)
		rc = ns_report_engine_stats(stdout, rows, run->n, ns_cli_format(opt_format), err);
	for (size_t i = 0; d && stats && i < run->n; i++) {
		ns_engine_stats_release(&stats[i]);
		ns_cli_neuron_detail_release(&d[i]);
	}
	free(d);
	free(stats);
	free(rows);
	return rc;
}

int cmd_kernels(int argc, char **argv)
{
	struct ns_error err = { 0 };
	struct ns_run run = { 0 };
	int rc = load(argv, argc, &cmd_kernels_spec, &run, &err);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (opt_by_engine || opt_by_opcode)
		rc = kernels_by_engine(&run, &err);
	if (rc || opt_by_engine || opt_by_opcode) {
		rc = rc ? ns_cli_fail(&err) : 0;
		ns_run_release(&run);
		return rc;
	}
	struct ns_kstats *stats = calloc(run.n + 1, sizeof(*stats));
	struct ns_rank_kstats *rows = calloc(run.n + 1, sizeof(*rows));
	if (!stats || !rows)
		rc = ns_error_set(&err, NS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < run.n; i++) {
		struct ns_kevents k;
		if ((rc = ns_kevents_collect(&run.traces[i], &k, &err)))
			break;
		rc = ns_kstats_compute(&run.traces[i], &k, opt_by_type, opt_by_neff, &stats[i], &err);
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

/* The device events and profiler steps of every trace of a run. */
struct run_device {
	struct ns_kevents *k;
	struct ns_psteps *steps;
	size_t n;
};

static void run_device_release(struct run_device *d)
{
	for (size_t i = 0; i < d->n; i++) {
		ns_kevents_release(&d->k[i]);
		ns_psteps_release(&d->steps[i]);
	}
	free(d->k);
	free(d->steps);
}

static int run_device_collect(const struct ns_run *run, struct run_device *d, struct ns_error *err)
{
	d->n = 0;
	d->k = calloc(run->n + 1, sizeof(*d->k));
	d->steps = calloc(run->n + 1, sizeof(*d->steps));
	if (!d->k || !d->steps)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (; d->n < run->n; d->n++) {
		int rc = ns_kevents_collect(&run->traces[d->n], &d->k[d->n], err);
		if (rc == 0 && (rc = ns_psteps_collect(&run->traces[d->n], &d->steps[d->n], err)))
			ns_kevents_release(&d->k[d->n]);
		if (rc)
			return rc;
	}
	return 0;
}

int cmd_breakdown(int argc, char **argv)
{
	struct ns_error err = { 0 };
	struct ns_run run = { 0 };
	struct run_device d = { 0 };
	int rc = load(argv, argc, &cmd_breakdown_spec, &run, &err);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct ns_breakdown *b = calloc(run.n + 1, sizeof(*b));
	struct ns_rank_breakdown *rows = calloc(run.n + 1, sizeof(*rows));
	if (opt_idle && opt_per_step)
		rc = ns_error_set(&err, NS_ERR_USAGE, "breakdown: --idle and --per-step are two different tables; give one");
	else
		rc = b && rows ? run_device_collect(&run, &d, &err) : ns_error_set(&err, NS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < run.n; i++) {
		rc = ns_breakdown_compute(&d.k[i], (int64_t)opt_kernel_wait_us * 1000, &b[i], &err);
		if (rc == 0 && opt_per_step)
			rc = ns_breakdown_steps(&d.k[i], &d.steps[i], &b[i], &err);
		rows[i] = (struct ns_rank_breakdown){ run.traces[i].path, rank_of(&run, i), &b[i] };
	}
	int what = opt_idle ? NS_BREAKDOWN_IDLE : opt_per_step ? NS_BREAKDOWN_STEPS : NS_BREAKDOWN_TEMPORAL;
	if (rc == 0)
		rc = ns_report_breakdown(stdout, rows, run.n, what, ns_cli_format(opt_format), &err);
	if (rc)
		rc = ns_cli_fail(&err);
	for (size_t i = 0; b && i < run.n; i++)
		ns_breakdown_release(&b[i]);
	free(b);
	free(rows);
	run_device_release(&d);
	ns_run_release(&run);
	return rc;
}

int cmd_overlap(int argc, char **argv)
{
	struct ns_error err = { 0 };
	struct ns_run run = { 0 };
	struct run_device d = { 0 };
	int rc = load(argv, argc, &cmd_overlap_spec, &run, &err);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct ns_overlap *o = calloc(run.n + 1, sizeof(*o));
	struct ns_rank_overlap *rows = calloc(run.n + 1, sizeof(*rows));
	rc = o && rows ? run_device_collect(&run, &d, &err) : ns_error_set(&err, NS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < run.n; i++) {
		rc = ns_overlap_compute(&d.k[i], &d.steps[i], &o[i], &err);
		rows[i] = (struct ns_rank_overlap){ run.traces[i].path, rank_of(&run, i), &o[i] };
	}
	if (rc == 0)
		rc = ns_report_overlap(stdout, rows, run.n, opt_steps, ns_cli_format(opt_format), &err);
	if (rc)
		rc = ns_cli_fail(&err);
	for (size_t i = 0; o && i < run.n; i++)
		ns_overlap_release(&o[i]);
	free(o);
	free(rows);
	run_device_release(&d);
	ns_run_release(&run);
	return rc;
}

int cmd_stragglers(int argc, char **argv)
{
	struct ns_error err = { 0 };
	struct ns_run run = { 0 };
	struct run_device d = { 0 };
	struct ns_stragglers s = { 0 };
	int rc = load(argv, argc, &cmd_stragglers_spec, &run, &err);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct ns_straggler_input *in = calloc(run.n + 1, sizeof(*in));
	rc = in ? run_device_collect(&run, &d, &err) : ns_error_set(&err, NS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < run.n; i++)
		in[i] = (struct ns_straggler_input){ &run.traces[i], rank_of(&run, i), &d.k[i], &d.steps[i] };
	if (rc == 0)
		rc = ns_stragglers_compute(in, run.n, &s, &err);
	enum ns_straggler_view view = opt_collectives ? NS_STRAGGLERS_COLLECTIVES
				      : opt_ranks     ? NS_STRAGGLERS_RANKS
						      : NS_STRAGGLERS_STEPS;
	if (rc == 0)
		rc = ns_report_stragglers(stdout, &s, view, ns_cli_format(opt_format), &err);
	if (rc)
		rc = ns_cli_fail(&err);
	ns_stragglers_release(&s);
	free(in);
	run_device_release(&d);
	ns_run_release(&run);
	return rc;
}

/* The ranks of a run, in its order. */
static int64_t *run_ranks(const struct ns_run *run)
{
	int64_t *ranks = malloc((run->n ? run->n : 1) * sizeof(*ranks));
	for (size_t i = 0; ranks && i < run->n; i++)
		ranks[i] = rank_of(run, i);
	return ranks;
}

/* ranks --per-step: the steps of stragglers, with each rank's duration. */
static int rank_steps(const struct ns_run *run, const int64_t *ranks, struct ns_error *err)
{
	struct run_device d = { 0 };
	struct ns_stragglers s = { 0 };
	struct ns_straggler_input *in = calloc(run->n + 1, sizeof(*in));
	int rc = in ? run_device_collect(run, &d, err) : ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < run->n; i++)
		in[i] = (struct ns_straggler_input){ &run->traces[i], ranks[i], &d.k[i], &d.steps[i] };
	if (rc == 0)
		rc = ns_stragglers_compute(in, run->n, &s, err);
	if (rc == 0)
		rc = ns_report_rank_steps(stdout, &s, ranks, run->n, opt_summary, ns_cli_format(opt_format), err);
	ns_stragglers_release(&s);
	free(in);
	run_device_release(&d);
	return rc;
}

/* ranks: each trace aggregated, the ops matched across them. */
static int rank_ops(struct ns_run *run, const int64_t *ranks, struct ns_error *err)
{
	struct ns_agg_opts ao = { .backend_override = -1, .threads = ns_cli_jobs() }; /* (one trace at a time) */
	struct ns_agg *aggs = calloc(run->n + 1, sizeof(*aggs));
	struct ns_rank_ops r = { 0 };
	bool use_device = false;
	int rc = aggs ? 0 : ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < run->n; i++) {
		rc = ns_aggregate(&run->traces[i], &ao, &aggs[i], err);
		use_device |= rc == 0 && aggs[i].use_device;
	}
	enum ns_rank_metric m = use_device ? NS_RANK_SELF_DEVICE : NS_RANK_SELF_CPU;
	for (int k = 0; opt_metric && k < NS_RANK_METRIC__COUNT; k++)
		if (strcmp(opt_metric, ns_rank_metric_names[k]) == 0)
			m = (enum ns_rank_metric)k;
	if (rc == 0)
		rc = ns_rank_ops_compute(aggs, run->n, m, &r, err);
	if (rc == 0)
		rc = ns_report_rank_ops(stdout, &r, ranks, m, opt_summary, opt_row_limit, ns_cli_format(opt_format), err);
	ns_rank_ops_release(&r);
	for (size_t i = 0; aggs && i < run->n; i++)
		ns_agg_release(&aggs[i]);
	free(aggs);
	return rc;
}

int cmd_ranks(int argc, char **argv)
{
	struct ns_error err = { 0 };
	struct ns_run run = { 0 };
	int rc = load(argv, argc, &cmd_ranks_spec, &run, &err);
	if (rc)
		return rc < 0 ? 0 : rc;
	int64_t *ranks = run_ranks(&run);
	rc = !ranks ? ns_error_set(&err, NS_ERR_NOMEM, "out of memory")
	     : opt_per_step ? rank_steps(&run, ranks, &err)
			    : rank_ops(&run, ranks, &err);
	if (rc)
		rc = ns_cli_fail(&err);
	free(ranks);
	ns_run_release(&run);
	return rc;
}
