/* neuron-stats stacks PATH: folded stacks for flame graphs, or the call
 * tree with inclusive and self times (docs/report.md "stacks"). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "pipeline/load.h"
#include "report/stacks.h"

static const char *opt_value, *opt_format, *opt_time_unit, *opt_device;
static double opt_percent_limit;
static bool opt_python, opt_no_cache, opt_strict, opt_quiet;
static struct ns_cli_select opt_select;

static const char *const values[] = { "cpu", "device", NULL };       /* enum ns_stack_value's order */
static const char *const forms[] = { "folded", "table", "csv", "json", "markdown", NULL };
static const char *const time_units[] = { "s", "ms", "us", NULL };

static const struct ns_opt stacks_opts[] = {
	NS_ENUM(0, "value", "WHAT", "cpu (self CPU time, default) or device (device time, kernels as leaves)",
		&opt_value, values),
	NS_ENUM('f', "format", "FMT", "folded (default), or the call tree as table, csv, json or markdown",
		&opt_format, forms),
	NS_FLAG(0, "python", "Python frames (python_function calls of a with_stack trace) above the ops", &opt_python),
	NS_PERCENT(0, "percent-limit", "PCT", "call tree: hide nodes under PCT% of the total (default 0: none)",
		   &opt_percent_limit, 0, 100),
	NS_ENUM(0, "time-unit", "UNIT", "call tree: print every time in s, ms or us", &opt_time_unit, time_units),
	NS_STRING(0, "device-name", "NAME", "device column label (default: CUDA, NEURON, XPU, MTIA, HPU)", &opt_device),
	NS_CLI_SELECT_OPTS(opt_select),
	NS_CLI_SELECT_NAME_OPTS(opt_select),
	NS_FLAG(0, "no-cache", "neither read nor write the result cache", &opt_no_cache),
	NS_FLAG(0, "strict", "a truncated trace is an error, not a warning", &opt_strict),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_stacks_spec = {
	.name = "stacks",
	.usage = "neuron-stats stacks PATH [options]",
	.summary = "Folded stacks of the op tree for flame graphs, or the call tree with total and self times.",
	.details = "Folded: one line per call path, \"frame;frame;... N\", N in nanoseconds: each op's\n"
		   "self CPU time, or (--value device) each kernel, memcpy or memset as a leaf under\n"
		   "the op that launched it. Feed it to flamegraph.pl, inferno or speedscope.\n"
		   "The call tree (--format table, csv, json, markdown): events merged by path, with\n"
		   "total and self CPU and device time and calls, children largest first. A\n"
		   "directory's traces: a first frame \"rank N\" on each folded line; a tree each.\n"
		   "--python: the trace's python_function calls (with_stack=True) nest with the ops,\n"
		   "and self time is counted in that tree.\n"
		   "Rules: docs/report.md \"Call stacks\".",
	.opts = stacks_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

/* One trace: its call tree, written as asked. */
struct stacks_ctx {
	struct ns_stacks_opts so;
	int form;                /* an index of forms[] */
};

/* A tree in JSON, for several traces: an object naming its trace. */
static void json_tree_open(const struct ns_trace *t, size_t i)
{
	fputs(i ? ",{\"path\": " : "[{\"path\": ", stdout);
	ns_json_string(stdout, t->path);
	if (t->rank != NS_NONE)
		printf(", \"rank\": %lld", (long long)t->rank);
	else
		fputs(", \"rank\": null", stdout);
	fputs(", \"tree\": ", stdout);
}

static int write_stacks(struct ns_trace *t, size_t i, size_t n, struct stacks_ctx *c, struct ns_agg *agg,
			struct ns_calltree *ct, struct ns_error *err)
{
	char prefix[64];
	c->so.prefix = NULL;
	if (n > 1) { /* a directory's traces: one set of lines, a frame per rank */
		if (t->rank != NS_NONE)
			snprintf(prefix, sizeof(prefix), "rank %lld", (long long)t->rank);
		else
			snprintf(prefix, sizeof(prefix), "trace %zu", i);
		c->so.prefix = prefix;
	}
	if (c->form == 0) {
		ns_calltree_sort(ct, agg, NS_CT_BY_NAME);
		ns_stacks_write_folded(stdout, agg, ct, &c->so);
		return 0;
	}
	enum ns_format fmt = (enum ns_format)(c->form - 1);
	ns_calltree_sort(ct, agg, c->so.value == NS_STACK_CPU ? NS_CT_BY_CPU : NS_CT_BY_DEVICE);
	ns_cli_trace_header(t, i, n, fmt);
	if (n > 1 && fmt == NS_FMT_JSON)
		json_tree_open(t, i);
	int rc = ns_stacks_write_tree(stdout, agg, ct, &c->so, fmt, err);
	if (!rc && n > 1 && fmt == NS_FMT_JSON)
		fputs(i + 1 < n ? "}" : "}]\n", stdout);
	return rc;
}

static int stacks_trace(struct ns_trace *t, size_t i, size_t n, void *ctx, struct ns_error *err)
{
	struct stacks_ctx *c = ctx;
	struct ns_agg_opts ao = { .backend_override = -1 };
	struct ns_agg agg;
	struct ns_calltree ct;
	int rc = ns_aggregate(t, &ao, &agg, err);
	if (rc)
		return rc;
	if ((rc = ns_calltree_build(&agg, opt_python, &ct, err)))
		goto out;
	if (c->so.value == NS_STACK_DEVICE && !agg.use_device)
		rc = ns_error_set(err, NS_ERR_INPUT, "%s: no device time in this trace (--value device)", t->path);
	else
		rc = write_stacks(t, i, n, c, &agg, &ct, err);
	ns_calltree_release(&ct);
out:
	ns_agg_release(&agg);
	return rc;
}

static int form_of(const char *name)
{
	int i = 0;
	while (name && forms[i] != name) /* (--format stores the entry itself) */
		i++;
	return i;
}

int cmd_stacks(int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ns_opt_parse(&cmd_stacks_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? 0 : rc;
	ns_cli_quiet = opt_quiet;
	struct stacks_ctx c = { .form = form_of(opt_format),
				.so = { .value = opt_value && strcmp(opt_value, "device") == 0 ? NS_STACK_DEVICE : NS_STACK_CPU,
					.percent_limit = opt_percent_limit, .time_unit = opt_time_unit,
					.device_label = opt_device } };
	struct ns_load_opts lo = { .jobs = ns_cli_jobs(), .use_cache = !opt_no_cache, .strict = opt_strict,
				   .keep_python = opt_python, .ui = ns_cli_load_ui() };
	return ns_cli_each_trace(pos[0], &lo, &opt_select, stacks_trace, &c);
}
