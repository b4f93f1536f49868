/* neuron-stats diff BASE NEW: the regression diff of two runs (docs/diff.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate/steps.h"
#include "cli/cli.h"
#include "common/vec.h"
#include "ntff/rows.h"
#include "pipeline/load.h"
#include "report/diff.h"
#include "report/html.h"

static const char *opt_format, *opt_group_by, *opt_sort, *opt_fail_on, *opt_test, *opt_ranks;
static const char *const rank_modes[] = { "sum", "match", NULL };
static double opt_threshold = 5, opt_alpha = 0.05;
static long opt_row_limit = -1, opt_top = 10;
static bool opt_changed, opt_hide_annotations, opt_by_neff, opt_no_cache, opt_strict, opt_quiet;
static struct ns_opt_regexes opt_include, opt_exclude;
static struct ns_cli_select opt_select;

/* report's formats and html (the page of report/html.h over the JSON document) */
static const char *const diff_formats[] = { "table", "csv", "json", "markdown", "html", NULL };

static void write_fail_on_words(FILE *out)
{
	fputs("regression\nnew\nremoved\n", out);
}

static const struct ns_opt diff_opts[] = {
	NS_ENUM('f', "format", "FMT", "table (default), markdown, json, csv or html (one self-contained page)", &opt_format,
		diff_formats),
	NS_WORDS('g', "group-by", "WHAT", "match rows also by shape, overload or stack=N, N >= 1 (as report)",
		 &opt_group_by, ns_cli_write_group_by_words),
	NS_FLAG(0, "by-neff", "Neuron: match rows also by NEFF hash (as report --by-neff)", &opt_by_neff),
	NS_WORDS('s', "sort", "KEY", "row order (see below); default: largest change of Self device", &opt_sort,
		 ns_diff_write_sort_words),
	NS_PERCENT('t', "threshold", "PCT", "smallest change that counts, in percent (default 5)", &opt_threshold, 0,
		   1e9),
	NS_ENUM(0, "test", "WHAT",
		"compare per-step (default), per-step-call, per-call or auto (these add \"decided by\")",
		&opt_test, ns_diff_test_names),
	NS_ENUM(0, "ranks", "HOW", "several traces: sum (default) or match rank i of BASE with rank i of NEW", &opt_ranks,
		rank_modes),
	NS_REAL(0, "alpha", "A", "significance level of the Mann-Whitney U test (default 0.05)", &opt_alpha, 1e-12, 1),
	NS_WORDS(0, "fail-on", "WHAT", "exit 4 when a row is: regression, new, removed (comma-separated)", &opt_fail_on,
		 write_fail_on_words),
	NS_INT('n', "row-limit", "N", "table, json, csv: print at most N rows (default -1: all)", &opt_row_limit, -1,
	       NS_NO_MAX),
	NS_INT(0, "top", "N", "markdown: at most N rows per section (default 10; -1: all)", &opt_top, -1, NS_NO_MAX),
	NS_FLAG(0, "changed", "leave out unchanged rows", &opt_changed),
	NS_REGEX(0, "include", "REGEX", NS_CLI_INCLUDE_HELP, &opt_include),
	NS_REGEX(0, "exclude", "REGEX", NS_CLI_EXCLUDE_HELP, &opt_exclude),
	NS_FLAG(0, "hide-annotations", "no user-annotation rows (ProfilerStep*, record_function), nor in totals",
		&opt_hide_annotations),
	NS_CLI_SELECT_OPTS(opt_select),
	NS_FLAG(0, "no-cache", "neither read nor write the result cache", &opt_no_cache),
	NS_FLAG(0, "strict", "a truncated trace is an error, not a warning", &opt_strict),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_diff_spec = {
	.name = "diff",
	.usage = "neuron-stats diff BASE NEW [options]",
	.summary = "Compare two runs (trace files, capture directories or databases) op by op.",
	.details = "Rows match by the report's key; unmatched rows are new or removed. With several\n"
		   "ProfilerStep#N steps on both sides a change counts when the per-step median moves\n"
		   "by more than the threshold AND a two-sided Mann-Whitney U test of the per-step\n"
		   "values gives p < alpha; with fewer steps, the threshold on totals alone (the output\n"
		   "says which). --test per-call, per-step-call or auto compare per-call values or\n"
		   "per-step time per call instead, and say which comparison decided each row. The\n"
		   "ranks of a capture directory are summed; --ranks match also compares rank i with\n"
		   "rank i. Rule, JSON contract and exit codes: docs/diff.md.\n"
		   "Sort keys: self_device (self_neuron, self_cuda), self_cpu, pct_self_device,\n"
		   "pct_self_cpu, base_self_device, new_self_device, base_self_cpu, new_self_cpu,\n"
		   "calls, verdict, name (A-Z).",
	.opts = diff_opts,
	.min_args = 2,
	.max_args = 2,
	.complete_args = NS_COMPLETE_FILE,
};

/* One run: its traces, aggregated and split into steps. */
struct run_side {
	struct ns_run run;
	struct ns_agg *aggs;
	struct ns_steps *steps;
	size_t n_done; /* aggs and steps filled so far */
};

static int load_side(const char *input, const struct ns_agg_opts *ao, const struct ns_cli_selection *sel,
		     struct run_side *side, struct ns_error *err)
{
	struct ns_load_opts lo = { .jobs = ns_cli_jobs(), .use_cache = !opt_no_cache, .strict = opt_strict,
				   .ui = ns_cli_load_ui() };
	int rc = ns_run_load(input, &lo, &side->run, err);
	if (!rc)
		rc = ns_cli_select_run(sel, input, &side->run, err);
	if (rc)
		return rc;
	side->aggs = calloc(side->run.n + 1, sizeof(*side->aggs));
	side->steps = calloc(side->run.n + 1, sizeof(*side->steps));
	if (!side->aggs || !side->steps)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (; side->n_done < side->run.n; side->n_done++) {
		size_t i = side->n_done;
		rc = ns_aggregate(&side->run.traces[i], ao, &side->aggs[i], err);
		if (rc)
			return rc;
		rc = ns_steps_compute(&side->aggs[i], &side->steps[i], err);
		if (rc) {
			ns_agg_release(&side->aggs[i]);
			return rc;
		}
	}
	return 0;
}

static void release_side(struct run_side *side)
{
	for (size_t i = 0; i < side->n_done; i++) {
		ns_steps_release(&side->steps[i]);
		ns_agg_release(&side->aggs[i]);
	}
	free(side->aggs);
	free(side->steps);
	ns_run_release(&side->run);
}

/* --fail-on WHAT: the verdict mask. */
static int parse_fail_on(const char *spec, unsigned *mask, struct ns_error *err)
{
	static const struct {
		const char *name;
		enum ns_verdict verdict;
	} words[] = { { "regression", NS_VERDICT_REGRESSED }, { "regressed", NS_VERDICT_REGRESSED },
		      { "new", NS_VERDICT_NEW },		  { "removed", NS_VERDICT_REMOVED } };
	char *copy = strdup(spec);
	int rc = 0;
	if (!copy)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	*mask = 0;
	for (char *tok = strtok(copy, ","); tok && rc == 0; tok = strtok(NULL, ",")) {
		size_t k = 0;
		while (k < NS_ARRAY_SIZE(words) && strcmp(tok, words[k].name) != 0)
			k++;
		if (k == NS_ARRAY_SIZE(words))
			rc = ns_error_set(err, NS_ERR_USAGE, "--fail-on: unknown verdict '%s' (regression, new, removed)", tok);
		else
			*mask |= 1u << words[k].verdict;
	}
	free(copy);
	if (rc == 0 && *mask == 0)
		rc = ns_error_set(err, NS_ERR_USAGE, "--fail-on: name at least one of regression, new, removed");
	return rc;
}

/* The rank of trace i of a run: distributedInfo.rank, else its position. */
static int64_t rank_of(const struct run_side *side, size_t i)
{
	int64_t rank = side->run.traces[i].rank;
	return rank != NS_NONE ? rank : (int64_t)i;
}

/* The trace of side with rank r, or -1. */
static long trace_of_rank(const struct run_side *side, int64_t r)
{
	for (size_t i = 0; i < side->n_done; i++)
		if (rank_of(side, i) == r)
			return (long)i;
	return -1;
}

/* How many rows of d trip the gate; their counts are added to counts[]. */
static size_t gate_count(const struct ns_diff *d, unsigned fail_mask, size_t counts[NS_VERDICT__COUNT])
{
	for (int v = 0; v < NS_VERDICT__COUNT; v++)
		counts[v] += (fail_mask & (1u << v)) ? d->n_verdict[v] : 0;
	return fail_mask ? ns_diff_count(d, fail_mask) : 0;
}

/* What the diffs of a --ranks match run share: the options, the gate's
 * tallies, and each pair's outcome for the table of the pairs. */
struct rank_diffs {
	const struct ns_diff_opts *dopts;
	const struct ns_diff_sort_key *sort;
	enum ns_format fmt;
	struct ns_diff_write_opts *wo;
	unsigned fail_mask;
	size_t *counts; /* [NS_VERDICT__COUNT] */
	size_t *failing;
	struct ns_diff_rank_outcome *outcomes; /* one per pair */
	size_t n_outcomes;
};

/* One diff of a rank pair (or of the summed runs, rank < 0), written with a
 * heading in the text forms and as an element of the JSON document. */
static int write_one(const struct ns_diff_input *b, const struct ns_diff_input *n, int64_t rank, bool first,
		     struct rank_diffs *rd, struct ns_error *err)
{
	struct ns_diff d = { 0 };
	enum ns_format fmt = rd->fmt;
	int rc = ns_diff_compute(b, n, rd->dopts, rd->sort, &d, err);
	size_t here = 0;
	if (rc)
		return rc;
	here = gate_count(&d, rd->fail_mask, rd->counts);
	*rd->failing += here;
	rd->wo->gate_tripped = here > 0;
	if (rank >= 0) {
		struct ns_diff_rank_outcome *o = &rd->outcomes[rd->n_outcomes++];
		o->rank = rank;
		memcpy(o->n_verdict, d.n_verdict, sizeof(o->n_verdict));
		memcpy(o->total, d.total, sizeof(o->total));
	}
	if (fmt == NS_FMT_JSON) {
		fputs(first ? "" : ",\n", stdout);
		if (rank >= 0)
			printf("{\"rank\": %lld, \"diff\": ", (long long)rank);
	} else if (rank >= 0) {
		printf(fmt == NS_FMT_MARKDOWN ? "%s## Rank %lld\n\n" : "%s== rank %lld ==\n", first ? "" : "\n",
		       (long long)rank);
	} else {
		printf(fmt == NS_FMT_MARKDOWN ? "\n## All ranks, summed\n\n" : "\n== all ranks, summed ==\n");
	}
	rc = ns_diff_write(stdout, &d, fmt, rd->wo, err);
	if (rc == 0 && fmt == NS_FMT_JSON && rank >= 0)
		fputs("}", stdout);
	ns_diff_release(&d);
	return rc;
}

/* The table of the pairs: each one's verdict counts and totals. */
static int write_outcomes(const struct rank_diffs *rd, struct ns_error *err)
{
	if (rd->fmt == NS_FMT_JSON)
		fputs("],\n\"rank_verdicts\": ", stdout);
	else
		printf(rd->fmt == NS_FMT_MARKDOWN ? "\n## Verdicts per rank\n\n" : "\n== verdicts per rank ==\n");
	return ns_diff_write_rank_outcomes(stdout, rd->outcomes, rd->n_outcomes, rd->fmt, err);
}

/* --ranks match: rank i of BASE against rank i of NEW (as HTA's TraceDiff),
 * each pair a diff of its own, then a line per pair, then the summed diff;
 * ranks in one run only are named. The gate counts every pair and the sum. */
static int diff_by_rank(struct run_side sides[2], const char *const inputs[2], struct rank_diffs *rd,
			struct ns_error *err)
{
	bool first = true;
	int rc = 0;
	if (rd->fmt == NS_FMT_CSV)
		return ns_error_set(err, NS_ERR_USAGE, "--ranks match: one CSV table per rank pair is not written; "
						       "use --format json");
	if (!(rd->outcomes = calloc(sides[0].n_done + 1, sizeof(*rd->outcomes))))
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	if (rd->fmt == NS_FMT_JSON)
		fputs("{\"schema\": \"neuron-stats-diff-ranks/1\",\n\"ranks\": [", stdout);
	for (size_t i = 0; rc == 0 && i < sides[0].n_done; i++) {
		long j = trace_of_rank(&sides[1], rank_of(&sides[0], i));
		if (j < 0)
			continue;
		struct ns_diff_input b = { sides[0].run.traces[i].path, &sides[0].aggs[i], &sides[0].steps[i], 1, NULL };
		struct ns_diff_input n = { sides[1].run.traces[j].path, &sides[1].aggs[j], &sides[1].steps[j], 1, NULL };
		rc = write_one(&b, &n, rank_of(&sides[0], i), first, rd, err);
		first = false;
	}
	for (int s = 0; rc == 0 && s < 2; s++)
		for (size_t i = 0; i < sides[s].n_done; i++)
			if (trace_of_rank(&sides[!s], rank_of(&sides[s], i)) < 0)
				if (!ns_cli_quiet)
					fprintf(stderr, "neuron-stats: warning: diff: rank %lld is only in %s (%s)\n",
						(long long)rank_of(&sides[s], i), s ? "NEW" : "BASE",
						sides[s].run.traces[i].path);
	if (rc == 0)
		rc = write_outcomes(rd, err);
	if (rc == 0 && rd->fmt == NS_FMT_JSON)
		fputs(",\n\"aggregate\": ", stdout);
	struct ns_diff_input b = { inputs[0], sides[0].aggs, sides[0].steps, sides[0].n_done, NULL };
	struct ns_diff_input n = { inputs[1], sides[1].aggs, sides[1].steps, sides[1].n_done, NULL };
	if (rc == 0)
		rc = write_one(&b, &n, -1, true, rd, err);
	if (rc == 0 && rd->fmt == NS_FMT_JSON)
		fputs("}\n", stdout);
	free(rd->outcomes);
	rd->outcomes = NULL;
	return rc;
}

/* --format html: the JSON document, in a page. */
static int write_html(const struct ns_diff *diff, const struct ns_diff_write_opts *wo, char **inputs,
		      struct ns_error *err)
{
	char *data = NULL, title[8400];
	size_t len = 0;
	FILE *mem = open_memstream(&data, &len);
	if (!mem)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	int rc = ns_diff_write(mem, diff, NS_FMT_JSON, wo, err);
	if (fclose(mem) != 0 && !rc)
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	if (!rc) {
		snprintf(title, sizeof(title), "neuron-stats diff: %s vs %s", inputs[0], inputs[1]);
		ns_html_page(stdout, title, data, len);
	}
	free(data);
	return rc;
}

/* The diff's and its writer's options from the command line's. */
static void set_opts(const struct ns_agg_opts *ao, struct ns_diff_opts *dopts, struct ns_diff_write_opts *wo)
{
	dopts->threshold_pct = opt_threshold;
	dopts->alpha = opt_alpha;
	dopts->group_by = ao->group_by;
	dopts->stack_n = ao->stack_n;
	dopts->filter = ns_cli_name_filter(&opt_include, &opt_exclude);
	dopts->hide_annotations = opt_hide_annotations;
	for (int t = 0; opt_test && t < NS_DIFF_TEST__COUNT; t++)
		if (strcmp(opt_test, ns_diff_test_names[t]) == 0)
			dopts->test = (enum ns_diff_test)t;
	wo->row_limit = opt_row_limit;
	wo->top_n = opt_top;
	wo->changed_only = opt_changed;
	wo->gate = opt_fail_on;
}

int cmd_diff(int argc, char **argv)
{
	char **pos;
	int npos, rc;
	struct ns_error err = { 0 };
	struct ns_agg_opts ao = { .backend_override = -1, .threads = ns_cli_jobs() }; /* (one trace at a time) */
	struct ns_diff_opts dopts = { 0 };
	struct ns_diff_write_opts wo = { .row_limit = -1, .top_n = 10 };
	const struct ns_diff_sort_key *sort = NULL;
	enum ns_format fmt = NS_FMT_TABLE;
	struct run_side sides[2];
	struct ns_diff diff = { 0 };
	unsigned fail_mask = 0;
	struct ns_cli_selection sel;
	size_t failing = 0, counts[NS_VERDICT__COUNT] = { 0 };

	memset(sides, 0, sizeof(sides));
	rc = ns_opt_parse(&cmd_diff_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? NS_EXIT_OK : rc;
	ns_cli_quiet = opt_quiet;
	bool html = opt_format && strcmp(opt_format, "html") == 0;
	fmt = html ? NS_FMT_JSON : ns_cli_format(opt_format);
	if (ns_cli_parse_group_by(opt_group_by, &ao, &err) || ns_cli_select_parse(&opt_select, &sel, &err) ||
	    (opt_fail_on && parse_fail_on(opt_fail_on, &fail_mask, &err)))
		goto fail;
	if (opt_sort && !(sort = ns_diff_sort_key_find(opt_sort))) {
		ns_error_set(&err, NS_ERR_USAGE, "--sort: unknown key '%s' (see neuron-stats diff --help)", opt_sort);
		goto fail;
	}
	if (opt_by_neff)
		ns_ntff_group_by_neff(&ao);
	set_opts(&ao, &dopts, &wo);
	bool by_rank = opt_ranks && strcmp(opt_ranks, "match") == 0;
	if (html && by_rank) {
		ns_error_set(&err, NS_ERR_USAGE, "--ranks match: one page per rank pair is not written; use --format json");
		goto fail;
	}
	if (load_side(pos[0], &ao, &sel, &sides[0], &err) || load_side(pos[1], &ao, &sel, &sides[1], &err))
		goto fail;
	if (by_rank) {
		const char *const inputs[2] = { pos[0], pos[1] };
		struct rank_diffs rd = { &dopts, sort, fmt, &wo, fail_mask, counts, &failing, NULL, 0 };
		if (diff_by_rank(sides, inputs, &rd, &err))
			goto fail;
	} else {
		struct ns_diff_input base = { pos[0], sides[0].aggs, sides[0].steps, sides[0].n_done, NULL };
		struct ns_diff_input new_run = { pos[1], sides[1].aggs, sides[1].steps, sides[1].n_done, NULL };
		if (ns_diff_compute(&base, &new_run, &dopts, sort, &diff, &err))
			goto fail;
		failing = gate_count(&diff, fail_mask, counts);
		wo.gate_tripped = failing > 0;
		if (html ? write_html(&diff, &wo, pos, &err) : ns_diff_write(stdout, &diff, fmt, &wo, &err))
			goto fail;
	}
	if (failing) {
		char text[128] = "";
		for (int v = 0; v < NS_VERDICT__COUNT; v++)
			if (counts[v])
				snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%zu %s", *text ? ", " : "",
					 counts[v], ns_verdict_name((enum ns_verdict)v));
		ns_error_set(&err, NS_ERR_REGRESSION, "diff: %s (--fail-on %s)", text, opt_fail_on);
		goto fail;
	}
	rc = NS_EXIT_OK;
	goto out;
fail:
	rc = ns_cli_fail(&err);
out:
	ns_diff_release(&diff);
	release_side(&sides[0]);
	release_side(&sides[1]);
	return rc;
}
