/* What every command shares: --quiet, and printing an error or a warning;
 * ns_cli_fail is the only place that maps errors to exit codes. */
#include <errno.h>
#include <stdio.h>

#include "cli/cli.h"
#include "common/jobs.h"
#include "common/vec.h"
#include "pipeline/load.h"

bool ns_cli_quiet;
long ns_cli_opt_jobs;

unsigned ns_cli_jobs(void)
{
	return ns_cli_opt_jobs > 0 ? (unsigned)ns_cli_opt_jobs : ns_jobs_default();
}

const struct ns_command ns_cli_commands[] = {
	{ &cmd_report_spec, cmd_report, 1 },
	{ &cmd_ingest_spec, cmd_ingest, 0 },
	{ &cmd_merge_spec, cmd_merge, 0 },
	{ &cmd_diff_spec, cmd_diff, 2 },
	{ &cmd_sql_spec, cmd_sql, 0 },
	{ &cmd_neff_spec, cmd_neff, 0 },
	{ &cmd_ls_spec, cmd_ls, 0 },
	{ &cmd_stacks_spec, cmd_stacks, 1 },
	{ &cmd_counters_spec, cmd_counters, 1 },
	{ &cmd_launches_spec, cmd_launches, 1 },
	{ &cmd_kernels_spec, cmd_kernels, 1 },
	{ &cmd_breakdown_spec, cmd_breakdown, 1 },
	{ &cmd_overlap_spec, cmd_overlap, 1 },
	{ &cmd_stragglers_spec, cmd_stragglers, 1 },
	{ &cmd_ranks_spec, cmd_ranks, 1 },
	{ &cmd_html_spec, cmd_html, 1 },
	{ &cmd_completion_spec, cmd_completion, 0 },
};
const size_t ns_cli_n_commands = NS_ARRAY_SIZE(ns_cli_commands);

int ns_cli_fail(const struct ns_error *err)
{
	fprintf(stderr, "neuron-stats: error: %s\n", err->msg[0] ? err->msg : "unknown error");
	if (err->hint[0])
		fprintf(stderr, "hint: %s\n", err->hint);
	switch (err->status) {
	case NS_OK: return NS_EXIT_INPUT;
	case NS_ERR_INPUT: return NS_EXIT_INPUT;
	case NS_ERR_USAGE: return NS_EXIT_USAGE;
	case NS_ERR_UNSUPPORTED: return NS_EXIT_UNSUPPORTED;
	case NS_ERR_REGRESSION: return NS_EXIT_REGRESSION;
	case NS_ERR_IO: return NS_EXIT_IO;
	case NS_ERR_NOMEM: return NS_EXIT_NOMEM;
	}
	return NS_EXIT_INPUT;
}

void ns_cli_warn(const struct ns_error *warn)
{
	if (!ns_cli_quiet && warn->msg[0])
		fprintf(stderr, "neuron-stats: warning: %s\n", warn->msg);
}

int ns_cli_each_trace(const char *path, const struct ns_load_opts *lo, const struct ns_cli_select *sel,
		      ns_cli_trace_fn each, void *ctx)
{
	struct ns_error err = { 0 };
	struct ns_run run = { 0 };
	struct ns_cli_selection s;
	int rc = ns_cli_select_parse(sel, &s, &err);
	if (!rc)
		rc = ns_run_load(path, lo, &run, &err);
	if (!rc)
		rc = ns_cli_select_run(&s, path, &run, &err);
	for (size_t i = 0; rc == 0 && i < run.n; i++)
		rc = each(&run.traces[i], i, run.n, ctx, &err);
	if (rc)
		rc = ns_cli_fail(&err);
	ns_run_release(&run);
	return rc;
}

void ns_cli_trace_header(const struct ns_trace *t, size_t i, size_t n, enum ns_format fmt)
{
	if (n < 2 || fmt == NS_FMT_JSON || fmt == NS_FMT_CSV)
		return;
	printf("%s%s", i ? "\n" : "", t->path);
	if (t->rank != NS_NONE)
		printf(" (rank %lld)", (long long)t->rank);
	putchar('\n');
}

static int stdout_errno;

void ns_cli_stdout_write(const void *p, size_t len)
{
	if (fwrite(p, 1, len, stdout) != len && !stdout_errno)
		stdout_errno = errno;
}

int ns_cli_stdout_errno(void)
{
	return stdout_errno;
}
