/* neuron-stats html PATH [-o FILE]: the report as one self-contained HTML
 * page (docs/report.md "HTML report"; the page: report/html.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "ntff/rows.h"
#include "pipeline/load.h"
#include "pipeline/neuron.h"
#include "report/detail.h"
#include "report/engines.h"
#include "report/html.h"

static const char *opt_output;
static bool opt_no_cache, opt_strict, opt_quiet;
static struct ns_cli_select opt_select;

static const struct ns_opt html_opts[] = {
	NS_FILE('o', "output", "FILE", "write the page to FILE (replaced atomically); default: standard output",
		&opt_output),
	NS_CLI_SELECT_OPTS(opt_select),
	NS_CLI_SELECT_NAME_OPTS(opt_select),
	NS_FLAG(0, "no-cache", "neither read nor write the result cache", &opt_no_cache),
	NS_CLI_JOBS_OPT,
	NS_FLAG(0, "strict", "a truncated trace is an error, not a warning", &opt_strict),
	NS_FLAG('q', "quiet", "no warnings or progress on stderr", &opt_quiet),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_html_spec = {
	.name = "html",
	.usage = "neuron-stats html PATH [-o FILE] [options]",
	.summary = "Write the report as one self-contained HTML page: sortable table, charts, provenance.",
	.details = "One file, no network: the styles, the script and the data (the key_averages rows,\n"
		   "per-step times, time per NEFF; for Neuron captures with device profiles, engine\n"
		   "time and the NEFF summary) are inside it; the same input gives the same bytes.\n"
		   "FILE is written to a temporary file beside it and renamed over it when complete;\n"
		   "refused before any work (exit 2): FILE is one of the inputs, or not a regular file.\n"
		   "The page: docs/report.md \"HTML report\".",
	.opts = html_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

/* One trace of the page: its aggregation and the Neuron keys. */
struct page_trace {
	struct ns_agg agg;
	bool aggregated;
	char *extra;
	size_t extra_len;
};

/* The --engines rows and the NEFF summary of t's device profiles, as JSON
 * keys in *text; a trace whose profiles cannot be read gets a warning. */
static int neuron_keys(const struct ns_trace *t, const struct ns_agg *agg, const struct ns_load_opts *lo,
		       const struct ns_report_opts *ro, FILE *mem)
{
	struct ns_neuron_engines ne = { 0 };
	struct ns_neuron_detail nd = { 0 };
	struct ns_engine_rows rows = { 0 };
	struct ns_error err = { 0 };
	int rc = ns_cli_neuron_engines(t, lo, &ne, &err);
	if (!rc)
		rc = ns_ntff_engine_rows(agg, &ne.tl, &rows, &err);
	if (!rc)
		rc = ns_report_engines(mem, agg, &rows, ro, NS_FMT_JSON, ne.sources, ne.n_sources, &err);
	if (!rc)
		rc = ns_cli_neuron_detail(t, lo, &nd, &err);
	if (!rc)
		rc = ns_report_detail(mem, nd.v, nd.n, NS_DETAIL_OPCODE, ro, NS_FMT_JSON, nd.sources, nd.n_sources, &err);
	if (rc && err.status != NS_ERR_NOMEM) {
		ns_cli_warn(&err); /* the page goes on without them */
		rc = 0;
	}
	ns_engine_rows_release(&rows);
	ns_cli_neuron_detail_release(&nd);
	ns_cli_neuron_engines_release(&ne);
	return rc;
}

static int prepare_trace(struct ns_trace *t, bool devprofs, const struct ns_load_opts *lo,
			 const struct ns_report_opts *ro, struct page_trace *pt, struct ns_error *err)
{
	struct ns_agg_opts ao = { .backend_override = -1, .threads = lo->jobs }; /* (one trace at a time) */
	int rc = ns_aggregate(t, &ao, &pt->agg, err);
	if (rc)
		return rc;
	pt->aggregated = true;
	if (!devprofs)
		return 0;
	FILE *mem = open_memstream(&pt->extra, &pt->extra_len);
	if (!mem)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	rc = neuron_keys(t, &pt->agg, lo, ro, mem);
	if (fclose(mem) != 0 || rc)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	return 0;
}

/* The page's data document of run, in *data. */
static int page_data(const char *input, struct ns_run *run, const struct ns_load_opts *lo, struct page_trace *pts,
		     char **data, size_t *len, struct ns_error *err)
{
	struct ns_report_opts ro;
	bool neuron = false, devprofs = false;
	struct ns_html_trace *hts = calloc(run->n + 1, sizeof(*hts));
	int rc = hts ? 0 : ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	ns_report_opts_init(&ro);
	ro.row_limit = -1;
	if (!rc && !run->from_db)
		rc = ns_cli_neuron_probe(input, &neuron, &devprofs, err);
	for (size_t i = 0; !rc && i < run->n; i++) {
		struct stat st;
		struct ns_trace *t = &run->traces[i];
		rc = prepare_trace(t, devprofs, lo, &ro, &pts[i], err);
		bool sized = !run->from_db && t->path && stat(t->path, &st) == 0 && S_ISREG(st.st_mode);
		hts[i] = (struct ns_html_trace){ &pts[i].agg, sized ? (int64_t)st.st_size : -1, pts[i].extra };
	}
	FILE *mem = rc ? NULL : open_memstream(data, len);
	if (!rc && !mem)
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	if (!rc)
		rc = ns_html_report_data(mem, input, hts, run->n, &ro, err);
	if (mem && fclose(mem) != 0 && !rc)
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	free(hts);
	return rc;
}

/* The page to standard output, or to target through a temporary file. */
static int write_page(const char *target, const char *title, const char *data, size_t len, struct ns_error *err)
{
	struct ns_cli_outfile of;
	if (!target) {
		ns_html_page(stdout, title, data, len);
		return 0;
	}
	int rc = ns_cli_outfile_open(&of, target, err);
	if (rc)
		return rc;
	ns_html_page(of.f, title, data, len);
	return ns_cli_outfile_commit(&of, err);
}

int cmd_html(int argc, char **argv)
{
	char **pos;
	int npos, rc;
	struct ns_error err = { 0 };
	struct ns_run run = { 0 };
	struct page_trace *pts = NULL;
	char *target = NULL, *data = NULL, title[4200];
	size_t len = 0;

	rc = ns_opt_parse(&cmd_html_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? NS_EXIT_OK : rc;
	ns_cli_quiet = opt_quiet;
	struct ns_load_opts lo = { .jobs = ns_cli_jobs(), .use_cache = !opt_no_cache, .strict = opt_strict,
				   .ui = ns_cli_load_ui() };
	struct ns_cli_selection sel;
	if ((opt_output && ns_cli_outfile_check(opt_output, pos[0], &target, &err)) ||
	    ns_cli_select_parse(&opt_select, &sel, &err) || ns_run_load(pos[0], &lo, &run, &err) ||
	    ns_cli_select_run(&sel, pos[0], &run, &err))
		goto fail;
	if (!(pts = calloc(run.n + 1, sizeof(*pts)))) {
		ns_error_set(&err, NS_ERR_NOMEM, "out of memory");
		goto fail;
	}
	snprintf(title, sizeof(title), "neuron-stats: %s", pos[0]);
	if (page_data(pos[0], &run, &lo, pts, &data, &len, &err) || write_page(target, title, data, len, &err))
		goto fail;
	rc = NS_EXIT_OK;
	goto out;
fail:
	rc = ns_cli_fail(&err);
out:
	for (size_t i = 0; pts && i < run.n; i++) {
		if (pts[i].aggregated)
			ns_agg_release(&pts[i].agg);
		free(pts[i].extra);
	}
	free(pts);
	free(data);
	free(target);
	ns_run_release(&run);
	return rc;
}
