/* neuron-stats [report] PATH: PyTorch's key_averages().table(). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/jobs.h"
#include "pipeline/load.h"
#include "pipeline/neuron.h"
#include "ntff/rows.h"
#include "report/detail.h"
#include "report/engines.h"
#include "report/report.h"

static const char *opt_sort, *opt_time_unit, *opt_format, *opt_device, *opt_group_by;
static long opt_row_limit = 100, opt_name_width = 55;
static bool opt_top_level, opt_hide_annotations, opt_merge, opt_no_cache, opt_strict, opt_quiet, opt_flops;
static const char *opt_device_time_unit, *opt_device_detail; /* Neuron (docs/neuron.md) */
static bool opt_by_neff, opt_engines;
static struct ns_opt_regexes opt_include, opt_exclude;
static struct ns_cli_select opt_select;

const char *const ns_cli_formats[] = { "table", "csv", "json", "markdown", NULL }; /* enum ns_format's order */
static const char *const time_units[] = { "s", "ms", "us", NULL };
static const char *const detail_keys[] = { "hlo", "layer", "opcode", NULL };
const char *const ns_cli_device_time_units[] = { "ns", "us", "ms", "s", NULL };

void ns_cli_write_group_by_words(FILE *out)
{
	fputs("name\nshape\noverload\nstack=\n", out);
}

static const struct ns_opt report_opts[] = {
	NS_WORDS('s', "sort", "KEY", "sort rows by KEY, descending (see below); default: first seen", &opt_sort,
		 ns_fields_write_sort_words),
	NS_INT('n', "row-limit", "N", "print at most N rows (-1: all; default 100, as PyTorch)", &opt_row_limit, -1,
	       NS_NO_MAX),
	NS_FLAG(0, "top-level-only", "only rows whose first event has no CPU parent", &opt_top_level),
	NS_REGEX(0, "include", "REGEX", NS_CLI_INCLUDE_HELP, &opt_include),
	NS_REGEX(0, "exclude", "REGEX", NS_CLI_EXCLUDE_HELP, &opt_exclude),
	NS_CLI_SELECT_OPTS(opt_select),
	NS_FLAG(0, "hide-annotations", "no user-annotation rows (ProfilerStep*, record_function), nor in totals and %",
		&opt_hide_annotations),
	NS_ENUM(0, "time-unit", "UNIT", "print every time in s, ms or us", &opt_time_unit, time_units),
	NS_ENUM('f', "format", "FMT", "table (default), csv, json or markdown", &opt_format, ns_cli_formats),
	NS_WORDS('g', "group-by", "WHAT", "also group by shape, overload or stack=N, N >= 1 (comma-separated)",
		 &opt_group_by, ns_cli_write_group_by_words),
	NS_STRING(0, "device-name", "NAME", "device column label (default: CUDA, NEURON, XPU, MTIA, HPU)", &opt_device),
	/* a cut name is its first N-3 characters and "...": N >= 4 keeps one */
	NS_INT_OR_ZERO(0, "max-name-width", "N", "name column cap (default 55; 0: no cap)", &opt_name_width, 4,
		       NS_NO_MAX),
	NS_FLAG(0, "flops",
		"FLOPs also from the input shapes where args \"flops\" are absent; FLOPs from and TFLOP/s columns",
		&opt_flops),
	NS_FLAG(0, "merge", "one table over all traces of a directory", &opt_merge),
	NS_FLAG(0, "no-cache", "neither read nor write the result cache", &opt_no_cache),
	NS_FLAG(0, "strict", "a truncated trace is an error, not a warning", &opt_strict),
	NS_CLI_JOBS_OPT,
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_FLAG(0, "by-neff", "Neuron: a NEFF-hash column; rows split per op and NEFF", &opt_by_neff),
	NS_FLAG(0, "engines", "Neuron: per-op engine active time from the device profile", &opt_engines),
	NS_ENUM(0, "device-detail", "KEY",
		"Neuron: device time per hlo (HLO op), layer or opcode in each NEFF, and the NEFF summary",
		&opt_device_detail, detail_keys),
	NS_ENUM(0, "device-time-unit", "UNIT", "Neuron device-profile time unit: ns, us, ms, s (default: detect)",
		&opt_device_time_unit, ns_cli_device_time_units),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_report_spec = {
	.name = "report",
	.usage = "neuron-stats [report] PATH [options]",
	.summary = "Print PyTorch's key_averages() table for a trace, a capture directory or a database.",
	.write_details = ns_fields_write_sort_help, /* from the field table (report/fields.c) */
	.opts = report_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

int ns_cli_parse_group_by(const char *spec, struct ns_agg_opts *ao, struct ns_error *err)
{
	char *copy = strdup(spec ? spec : "");
	int rc = 0;
	if (!copy)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
		if (strcmp(tok, "shape") == 0 || strcmp(tok, "shapes") == 0) {
			ao->group_by |= NS_GROUP_SHAPE;
		} else if (strcmp(tok, "overload") == 0) {
			ao->group_by |= NS_GROUP_OVERLOAD;
			ao->split_overloads = true;
		} else if (strncmp(tok, "stack=", 6) == 0) {
			long n;
			if (ns_opt_parse_long(tok + 6, 1, INT_MAX, &n)) {
				rc = ns_error_set(err, NS_ERR_USAGE, "--group-by: stack=N needs a whole number N >= 1, not '%s'",
						  tok + 6);
				break;
			}
			ao->stack_n = (int)n;
		} else if (strcmp(tok, "name") != 0) {
			rc = ns_error_set(err, NS_ERR_USAGE, "--group-by: unknown grouping '%s' (name, shape, overload, stack=N)", tok);
			break;
		}
	}
	free(copy);
	return rc;
}

struct ns_name_filter ns_cli_name_filter(const struct ns_opt_regexes *include, const struct ns_opt_regexes *exclude)
{
	return (struct ns_name_filter){ .include = include->re, .n_include = include->n, .exclude = exclude->re,
					.n_exclude = exclude->n };
}

enum ns_format ns_cli_format(const char *name)
{
	int i = 0;
	while (name && ns_cli_formats[i] && strcmp(ns_cli_formats[i], name) != 0) /* (diff's list has more) */
		i++;
	return (enum ns_format)i;
}

static void upper(char *s)
{
	for (; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 'a' + 'A');
}

/* The parsed options, checked, into ro, ao, fmt and
 * detail_key (device holds the upper-cased --device label). */
static int check_opts(struct ns_report_opts *ro, struct ns_agg_opts *ao, enum ns_format *fmt,
		      enum ns_detail *detail_key, char device[64], struct ns_cli_selection *sel, struct ns_error *err)
{
	ns_report_opts_init(ro);
	ro->row_limit = opt_row_limit;
	ro->top_level_only = opt_top_level;
	ro->hide_annotations = opt_hide_annotations;
	ro->filter = ns_cli_name_filter(&opt_include, &opt_exclude);
	ro->max_name_width = opt_name_width > INT_MAX ? 0 : (int)opt_name_width; /* wider than any name: no cap */
	ro->time_unit = opt_time_unit;
	ro->shape_flops = ao->shape_flops = opt_flops;
	if (opt_sort && !(ro->sort = ns_sort_key_find(opt_sort)))
		return ns_error_set(err, NS_ERR_USAGE, "--sort: unknown key '%s' (see neuron-stats report --help)", opt_sort);
	if (opt_device) {
		snprintf(device, 64, "%s", opt_device);
		upper(device);
		ro->device_label = device;
	}
	int rc;
	*fmt = ns_cli_format(opt_format);
	if ((rc = ns_cli_parse_group_by(opt_group_by, ao, err)) || (rc = ns_cli_select_parse(&opt_select, sel, err)) ||
	    (rc = ns_cli_neuron_report_opts(opt_by_neff, opt_engines && opt_merge, opt_device_time_unit, ao, ro, err)))
		return rc;
	if (opt_device_detail)
		*detail_key = ns_detail_parse(opt_device_detail);
	if (opt_device_detail && opt_merge)
		return ns_error_set(err, NS_ERR_USAGE, "--device-detail works per trace: it cannot be used with --merge");
	return 0;
}

/* --merge: the run's traces become one. */
static int merge_run(struct ns_run *run, struct ns_error *err)
{
	struct ns_trace merged;
	int rc = ns_trace_merge(run->traces, run->n, &merged, err);
	if (rc) {
		ns_trace_release(&merged);
		return rc;
	}
	ns_run_release(run);
	run->traces = malloc(sizeof(*run->traces));
	if (!run->traces) {
		ns_trace_release(&merged);
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	run->traces[0] = merged;
	run->n = 1;
	return 0;
}

/* --engines and --device-detail: the device profiles of every trace, loaded
 * before any report is printed (a missing one fails with no output). */
struct neuron_extras {
	struct ns_neuron_engines *engines; /* --engines: one per trace */
	struct ns_neuron_detail *detail;   /* --device-detail: one per trace */
	enum ns_detail detail_key;
};

static int load_extras(const struct ns_run *run, const struct ns_load_opts *lo, struct neuron_extras *x,
		       struct ns_error *err)
{
	int rc;
	if (opt_engines) {
		if (!(x->engines = calloc(run->n + 1, sizeof(*x->engines))))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		for (size_t i = 0; i < run->n; i++)
			if ((rc = ns_cli_neuron_engines(&run->traces[i], lo, &x->engines[i], err)))
				return rc;
	}
	if (opt_device_detail) {
		if (!(x->detail = calloc(run->n + 1, sizeof(*x->detail))))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		for (size_t i = 0; i < run->n; i++)
			if ((rc = ns_cli_neuron_detail(&run->traces[i], lo, &x->detail[i], err)))
				return rc;
	}
	return 0;
}

static void extras_release(struct neuron_extras *x, size_t n)
{
	for (size_t i = 0; x->engines && i < n; i++)
		ns_cli_neuron_engines_release(&x->engines[i]);
	free(x->engines);
	for (size_t i = 0; x->detail && i < n; i++)
		ns_cli_neuron_detail_release(&x->detail[i]);
	free(x->detail);
}

/* The --engines table of one aggregated trace, after its report. */
static int report_engines(FILE *out, const struct ns_agg *agg, const struct ns_neuron_engines *ne,
			  const struct ns_report_opts *ro, enum ns_format fmt, struct ns_error *err)
{
	struct ns_engine_rows rows = { 0 };
	int rc = ns_ntff_engine_rows(agg, &ne->tl, &rows, err);
	if (!rc)
		rc = ns_report_engines(out, agg, &rows, ro, fmt, ne->sources, ne->n_sources, err);
	ns_engine_rows_release(&rows);
	return rc;
}

/* One aggregated trace's report, with its --engines and --device-detail
 * tables. */
static int report_trace(FILE *out, struct ns_agg *agg, const struct ns_report_opts *ro, enum ns_format fmt,
			const struct neuron_extras *x, size_t i, struct ns_error *err)
{
	int rc = ns_report_write(out, agg, ro, fmt, err);
	if (!rc && x->engines)
		rc = report_engines(out, agg, &x->engines[i], ro, fmt, err);
	if (!rc && x->detail)
		rc = ns_report_detail(out, x->detail[i].v, x->detail[i].n, x->detail_key, ro, fmt, x->detail[i].sources,
				      x->detail[i].n_sources, err);
	if (fmt == NS_FMT_JSON)
		fputc('}', out);
	return rc;
}

/* A run's reports: each trace aggregated and written into memory on a
 * thread of the pool (--jobs), then copied to stdout in order, so that
 * the calling thread only copies bytes. */
struct report_job {
	const struct ns_run *run;
	const struct ns_agg_opts *ao;
	const struct ns_report_opts *ro;
	enum ns_format fmt;
	const struct neuron_extras *x;
	char **text;           /* per trace: its report */
	size_t *len;
	struct ns_error *errs; /* per trace: what failed */
};

/* ns_job_work: aggregates trace i and writes its report (several traces
 * make one document: a JSON array of report objects, one CSV table with
 * path and rank columns; --engines adds keys to each JSON object,
 * docs/cli.md). */
static int aggregate_one(void *ctx, size_t i)
{
	struct report_job *job = ctx;
	struct ns_trace *t = &job->run->traces[i];
	struct ns_report_opts ro = *job->ro;
	struct ns_agg agg;
	char header[4200];
	FILE *out = NULL;
	int rc = ns_aggregate(t, job->ao, &agg, &job->errs[i]);
	if (rc)
		return rc;
	ro.no_csv_header = i > 0;
	if (job->run->n > 1) {
		if (t->rank != NS_NONE)
			snprintf(header, sizeof(header), "%s (rank %lld)", t->path, (long long)t->rank);
		else
			snprintf(header, sizeof(header), "%s", t->path);
		ro.header = header;
	}
	if (!(out = open_memstream(&job->text[i], &job->len[i])))
		rc = ns_error_set(&job->errs[i], NS_ERR_NOMEM, "out of memory");
	else if (!(rc = report_trace(out, &agg, &ro, job->fmt, job->x, i, &job->errs[i])) && ferror(out))
		rc = ns_error_set(&job->errs[i], NS_ERR_NOMEM, "out of memory");
	/* glibc's memstream loses the text when its last realloc fails at fclose,
	 * which then returns 0 with the text NULL */
	if (out && (fclose(out) != 0 || !job->text[i]) && !rc)
		rc = ns_error_set(&job->errs[i], NS_ERR_NOMEM, "out of memory");
	ns_agg_release(&agg);
	return rc;
}

/* ns_job_finish: copies trace i's report to stdout. */
static int write_one(void *ctx, size_t i)
{
	struct report_job *job = ctx;
	size_t n = job->run->n;
	if (job->fmt == NS_FMT_JSON && n > 1)
		fputs(i ? ",\n" : "[", stdout);
	if (n > 1 && i && (job->fmt == NS_FMT_TABLE || job->fmt == NS_FMT_MARKDOWN))
		fputc('\n', stdout);
	ns_cli_stdout_write(job->text[i], job->len[i]);
	free(job->text[i]);
	job->text[i] = NULL;
	return 0;
}

static int report_run(const struct ns_run *run, const struct ns_agg_opts *ao, struct ns_report_opts *ro,
		      enum ns_format fmt, const struct neuron_extras *x, unsigned jobs, struct ns_error *err)
{
	size_t n = run->n ? run->n : 1;
	struct ns_agg_opts per_trace = *ao;
	per_trace.threads = jobs > n ? jobs / (unsigned)n : 1; /* the cores the traces leave */
	struct report_job job = { .run = run, .ao = &per_trace, .ro = ro, .fmt = fmt, .x = x,
				  .text = calloc(n, sizeof(*job.text)), .len = calloc(n, sizeof(*job.len)),
				  .errs = calloc(n, sizeof(*job.errs)) };
	int rc;
	for (size_t i = 0; i < run->n; i++) /* one CSV header: the column when any trace has Explorer warnings */
		ro->warned_column |= run->traces[i].n_xwarn > 0;
	ro->json_open = fmt == NS_FMT_JSON;
	ro->trace_columns = fmt == NS_FMT_CSV && run->n > 1;
	if (!job.text || !job.len || !job.errs) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = ns_jobs_run(run->n, jobs, aggregate_one, write_one, &job))) {
		for (size_t i = 0; i < run->n && !err->status; i++) /* (the first trace that failed, in order) */
			if (job.errs[i].status)
				*err = job.errs[i];
		goto out;
	}
	if (fmt == NS_FMT_JSON)
		fputs(run->n > 1 ? "]\n" : "\n", stdout);
out:
	for (size_t i = 0; job.text && i < run->n; i++)
		free(job.text[i]);
	free(job.text);
	free(job.len);
	free(job.errs);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	char **pos;
	int npos, rc;
	struct ns_error err = { 0 };
	struct ns_agg_opts ao = { .backend_override = -1 };
	struct ns_report_opts ro;
	enum ns_format fmt = NS_FMT_TABLE;
	struct ns_run run = { 0 };
	struct neuron_extras extras = { .detail_key = NS_DETAIL__COUNT };
	char device[64] = "";
	struct ns_cli_selection sel;

	rc = ns_opt_parse(&cmd_report_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? 0 : rc;
	ns_cli_quiet = opt_quiet;
	if (check_opts(&ro, &ao, &fmt, &extras.detail_key, device, &sel, &err))
		goto fail;
	struct ns_load_opts lo = { .jobs = ns_cli_jobs(), .use_cache = !opt_no_cache, .strict = opt_strict,
				   .device_time_unit = opt_device_time_unit, .ui = ns_cli_load_ui() };
	if (ns_run_load(pos[0], &lo, &run, &err) || ns_cli_select_run(&sel, pos[0], &run, &err) ||
	    (opt_merge && run.n > 1 && merge_run(&run, &err)) ||
	    load_extras(&run, &lo, &extras, &err) || report_run(&run, &ao, &ro, fmt, &extras, lo.jobs, &err))
		goto fail;
	rc = 0;
	goto out;
fail:
	rc = ns_cli_fail(&err);
out:
	extras_release(&extras, run.n);
	ns_run_release(&run);
	return rc;
}
