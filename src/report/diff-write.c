/* The diff's forms: the text table, Markdown (a pull-request comment),
 * JSON (docs/diff.md "JSON contract") and CSV. */
#include "report/diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "report/diff-internal.h"
#include "report/grid.h"

/* ---- formatting helpers ---- */

static const char *metric_label(const struct ns_diff *d, int k, char *buf, size_t n)
{
	if (k == NS_DIFF_SELF_CPU)
		snprintf(buf, n, "Self CPU");
	else
		snprintf(buf, n, "Self %s", d->device);
	return buf;
}

static int n_metrics_shown(const struct ns_diff *d)
{
	return d->has_device_time ? NS_DIFF_N_METRICS : 1;
}

static bool row_shown(const struct ns_diff *d, size_t i, const struct ns_diff_write_opts *o)
{
	return !o->changed_only || d->rows[i].verdict != NS_VERDICT_UNCHANGED;
}

/* A side's traces, steps and device, e.g. "12 steps #5..#16, NEURON". */
static void describe_side(const struct ns_diff *d, int s, char *buf, size_t n)
{
	const struct ns_diff_side *side = &d->side[s];
	char traces[64] = "", steps[96];
	if (side->n_traces != 1)
		snprintf(traces, sizeof(traces), "%zu traces summed, ", side->n_traces);
	if (side->n_steps == 0)
		snprintf(steps, sizeof(steps), "no steps");
	else if (side->step_numbers[0] < 0) /* some ProfilerStep#N without a number */
		snprintf(steps, sizeof(steps), "%zu step%s", side->n_steps, side->n_steps == 1 ? "" : "s");
	else if (side->n_steps == 1)
		snprintf(steps, sizeof(steps), "1 step #%" PRId64, side->step_numbers[0]);
	else
		snprintf(steps, sizeof(steps), "%zu steps #%" PRId64 "..#%" PRId64, side->n_steps, side->step_numbers[0],
			 side->step_numbers[side->n_steps - 1]);
	snprintf(buf, n, "%s%s%s%s", traces, steps, *side->device ? ", " : "", side->device);
}

/* The rule, in one sentence, as the output states it. */
static void describe_rule(const struct ns_diff *d, char *buf, size_t n)
{
	if (d->mode == NS_DIFF_MODE_STEPS)
		snprintf(buf, n,
			 "a change counts when the per-step median moves by more than %g%% of the base median and a "
			 "two-sided Mann-Whitney U test of the per-step values gives p < %g (exact up to %d steps in "
			 "all); rows with no time inside any step are compared on totals, threshold only",
			 d->opts.threshold_pct, d->opts.alpha, NS_MWU_EXACT_MAX);
	else
		snprintf(buf, n,
			 "threshold only, %s: a change counts when the total moves by more than %g%% of the base "
			 "total; no statistical test",
			 d->mode_note, d->opts.threshold_pct);
}

static void describe_group_by(const struct ns_diff *d, char *buf, size_t n)
{
	snprintf(buf, n, "name%s%s", d->opts.group_by & NS_GROUP_OVERLOAD ? ", overload" : "",
		 d->opts.group_by & NS_GROUP_SHAPE ? ", shape" : "");
	if (d->opts.stack_n > 0) {
		size_t l = strlen(buf);
		snprintf(buf + l, n - l, ", stack=%d", d->opts.stack_n);
	}
	if (d->opts.group_by & NS_GROUP_NEFF) {
		size_t l = strlen(buf);
		snprintf(buf + l, n - l, ", NEFF");
	}
}

/* The row's name as displayed, name[.overload] [shapes] [@ stack] [NEFF
 * key]; caller frees. NULL on OOM. */
static char *row_title(const struct ns_diff *d, const struct ns_diff_row *r)
{
	const struct ns_strtab *st = &d->strings;
	char *title = NULL;
	if (asprintf(&title, "%s%s%s%s%s%s%s%s%s%s", ns_strtab_get(st, r->name), r->overload ? "." : "",
		     ns_strtab_get(st, r->overload), r->shapes ? " " : "", ns_strtab_get(st, r->shapes),
		     r->stack ? " @ " : "", ns_strtab_get(st, r->stack), r->neff ? " [NEFF " : "",
		     ns_strtab_get(st, r->neff), r->neff ? "]" : "") < 0)
		return NULL;
	return title;
}

/* ---- cells ---- */

static struct ns_cell text_cell(const char *s)
{
	return (struct ns_cell){ .type = NS_CELL_TEXT, .text = s };
}

static struct ns_cell num_cell(enum ns_cell_type type, double x)
{
	return (struct ns_cell){ .type = type, .x = x };
}

/* ---- text table: a grid in the open style, the name last ---- */

#define MAX_COLS (4 + NS_DIFF_N_METRICS * 7 + 1)

/* A column fitted to its header and cells; "-" for a missing value. */
static void text_col(struct ns_grid *g, const char *group, const char *header, bool left, bool sign)
{
	ns_grid_col(g, &(struct ns_grid_col){ .header = header, .group = group, .min = strlen(header), .left = left,
					      .sign = sign, .none = "-" });
}

/* The columns: verdict, on, calls, then per metric base (MAD) new (MAD)
 * change % (p), then the name; groups[k] holds metric k's group label. */
static void text_columns(struct ns_grid *g, const struct ns_diff *d, char (*groups)[128])
{
	char label[80];
	bool steps = d->mode == NS_DIFF_MODE_STEPS;
	text_col(g, NULL, "verdict", true, false);
	text_col(g, NULL, "on", true, false);
	text_col(g, "calls", "base", false, false);
	text_col(g, NULL, "new", false, false);
	for (int k = 0; k < n_metrics_shown(d); k++) {
		snprintf(groups[k], 128, "%s (us%s)", metric_label(d, k, label, sizeof(label)),
			 steps ? " per step: median, MAD" : ", total");
		text_col(g, groups[k], "base", false, false);
		if (steps)
			text_col(g, NULL, "MAD", false, false);
		text_col(g, NULL, "new", false, false);
		if (steps)
			text_col(g, NULL, "MAD", false, false);
		text_col(g, NULL, "change", false, true);
		text_col(g, NULL, "%", false, true);
		if (steps)
			text_col(g, NULL, "p", false, false);
	}
	ns_grid_col(g, &(struct ns_grid_col){ .header = "name", .left = true });
}

/* A metric's cells: the values shown (per-step medians or totals), the
 * MADs, the change and the test (steps mode). */
static size_t text_metric(const struct ns_diff *d, const struct ns_diff_metric *m, struct ns_cell *c)
{
	bool steps = d->mode == NS_DIFF_MODE_STEPS;
	struct ns_cell none = { .type = NS_CELL_EMPTY };
	size_t k = 0;
	c[k++] = num_cell(NS_CELL_NS, ns_diff_shown_base(m));
	if (steps)
		c[k++] = m->by_steps ? num_cell(NS_CELL_NS, m->base_step.mad) : none;
	c[k++] = num_cell(NS_CELL_NS, ns_diff_shown_new(m));
	if (steps)
		c[k++] = m->by_steps ? num_cell(NS_CELL_NS, m->new_step.mad) : none;
	c[k++] = m->verdict == NS_VERDICT_NONE ? none
					       : num_cell(NS_CELL_NS, ns_diff_shown_new(m) - ns_diff_shown_base(m));
	c[k++] = num_cell(NS_CELL_PCT, m->change_pct);
	if (steps) /* not tested: judged on totals ("total"), or nothing to judge */
		c[k++] = !isnan(m->p)			? num_cell(NS_CELL_P, m->p)
			 : m->by_steps || m->verdict == NS_VERDICT_NONE ? none
								 : text_cell("total");
	return k;
}

/* Adds a line: verdict, on, calls, each metric, the name (title: NULL on
 * OOM, then nothing is added); the total is a footer. */
static void text_line(struct ns_grid *g, const struct ns_diff *d, enum ns_verdict verdict, const char *on,
		      const int64_t calls[2], const struct ns_diff_metric *m, const char *title, bool footer)
{
	struct ns_cell cells[MAX_COLS];
	size_t k = 0;
	if (!title) {
		g->oom = true;
		return;
	}
	cells[k++] = text_cell(ns_verdict_name(verdict));
	cells[k++] = text_cell(on);
	cells[k++] = (struct ns_cell){ .type = NS_CELL_INT, .i = calls[0] };
	cells[k++] = (struct ns_cell){ .type = NS_CELL_INT, .i = calls[1] };
	for (int i = 0; i < n_metrics_shown(d); i++)
		k += text_metric(d, &m[i], &cells[k]);
	cells[k++] = text_cell(title);
	if (footer)
		ns_grid_footer(g, cells);
	else
		ns_grid_row(g, cells, true, false);
}

/* base:, new:, rows:, rule: and warning: lines, then an empty one. */
static void text_preamble(FILE *out, const struct ns_diff *d)
{
	char text[1024];
	for (int s = 0; s < 2; s++) {
		describe_side(d, s, text, sizeof(text));
		fputs(s ? "new:  " : "base: ", out);
		ns_fputs_visible(d->side[s].label, out);
		fprintf(out, " (%s)\n", text);
	}
	describe_group_by(d, text, sizeof(text));
	fprintf(out, "rows: matched by %s; unmatched rows are new or removed (never guessed)\n", text);
	describe_rule(d, text, sizeof(text));
	fprintf(out, "rule: %s\n", text);
	if (*d->warning) {
		fputs("warning: ", out);
		ns_fputs_visible(d->warning, out);
		fputc('\n', out);
	}
	fputc('\n', out);
}

static void text_verdict_counts(FILE *out, const struct ns_diff *d, size_t n_shown)
{
	static const enum ns_verdict verdict_ids[] = { NS_VERDICT_REGRESSED, NS_VERDICT_IMPROVED, NS_VERDICT_NEW,
						       NS_VERDICT_REMOVED, NS_VERDICT_UNCHANGED };
	fputs("\nverdicts:", out);
	for (size_t v = 0; v < NS_ARRAY_SIZE(verdict_ids); v++)
		fprintf(out, "%s %zu %s", v ? "," : "", d->n_verdict[verdict_ids[v]], ns_verdict_name(verdict_ids[v]));
	if (n_shown < d->n_rows)
		fprintf(out, " (%zu of %zu rows shown)", n_shown, d->n_rows);
	fputc('\n', out);
}

/* The rows shown, then the total of every row; titles[] holds the names
 * (the grid borrows them). */
static size_t text_rows(struct ns_grid *g, const struct ns_diff *d, const struct ns_diff_write_opts *o,
			char **titles)
{
	size_t n_shown = 0;
	int64_t calls[2] = { 0, 0 };
	for (size_t i = 0; i < d->n_rows && (o->row_limit < 0 || (long)n_shown < o->row_limit); i++) {
		const struct ns_diff_row *r = &d->rows[d->order[i]];
		if (!row_shown(d, d->order[i], o))
			continue;
		titles[n_shown] = row_title(d, r);
		text_line(g, d, r->verdict, r->on_device ? d->device : "CPU", (int64_t[2]){ r->base_calls, r->new_calls },
			  r->m, titles[n_shown++], false);
	}
	for (size_t i = 0; i < d->n_rows; i++) {
		calls[0] += d->rows[i].base_calls;
		calls[1] += d->rows[i].new_calls;
	}
	text_line(g, d, ns_diff_combined_verdict(d->total), "", calls, d->total, "[total]", true);
	return n_shown;
}

static int write_text(FILE *out, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	struct ns_grid g;
	char groups[NS_DIFF_N_METRICS][128];
	char **titles = calloc(d->n_rows + 1, sizeof(*titles));
	size_t n_shown = 0;
	int rc = -1;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_OPEN;
	text_columns(&g, d, groups);
	if (titles)
		n_shown = text_rows(&g, d, o, titles);
	if (titles && !ns_grid_error(&g)) {
		text_preamble(out, d);
		rc = ns_grid_write_text(out, &g);
	}
	if (rc == 0)
		text_verdict_counts(out, d, n_shown);
	for (size_t i = 0; titles && i < n_shown; i++)
		free(titles[i]);
	free(titles);
	ns_grid_release(&g);
	return rc;
}

/* ---- Markdown (a pull-request comment): one grid per table ---- */

/* Column texts that outlive the grid. */
struct md_labels {
	char metric[NS_DIFF_N_METRICS][80];
};

/* The columns: the first (Total or Name), Calls (a row's), then per
 * metric "base → new" and "Δ" with its p-value in steps mode. */
static void md_columns(struct ns_grid *g, const struct ns_diff *d, struct md_labels *l, const char *first,
		       int first_dashes, bool calls)
{
	ns_grid_col(g, &(struct ns_grid_col){ .header = first, .md_left = true, .md_dashes = first_dashes });
	if (calls) {
		ns_grid_col(g, &(struct ns_grid_col){ .header = "Calls", .md_dashes = 6 });
		ns_grid_col(g, &(struct ns_grid_col){ .md_join = " → " });
	}
	for (int k = 0; k < n_metrics_shown(d); k++) {
		ns_grid_col(g, &(struct ns_grid_col){ .header = metric_label(d, k, l->metric[k], sizeof(l->metric[k])),
						      .md_dashes = 6 });
		ns_grid_col(g, &(struct ns_grid_col){ .md_join = " → " });
		ns_grid_col(g, &(struct ns_grid_col){ .header = "Δ", .md_dashes = 6, .sign = true, .none = "-" });
		ns_grid_col(g, &(struct ns_grid_col){ .md_join = " (p ", .md_end = ")" });
	}
}

/* A row: its name, calls (r NULL: the totals, no calls), each metric. */
static void md_row(struct ns_grid *g, const struct ns_diff *d, const char *name, const struct ns_diff_row *r,
		   const struct ns_diff_metric *m)
{
	struct ns_cell cells[3 + NS_DIFF_N_METRICS * 4];
	size_t c = 0;
	cells[c++] = text_cell(name);
	if (r) {
		cells[c++] = (struct ns_cell){ .type = NS_CELL_INT, .i = r->base_calls };
		cells[c++] = (struct ns_cell){ .type = NS_CELL_INT, .i = r->new_calls };
	}
	for (int k = 0; k < n_metrics_shown(d); k++) {
		const struct ns_diff_metric *mk = &m[k];
		bool tested = d->mode == NS_DIFF_MODE_STEPS && !isnan(mk->p);
		cells[c++] = num_cell(NS_CELL_NS, ns_diff_shown_base(mk));
		cells[c++] = num_cell(NS_CELL_NS, ns_diff_shown_new(mk));
		cells[c] = num_cell(NS_CELL_PCT, mk->change_pct);
		cells[c++].strong = mk->verdict == NS_VERDICT_REGRESSED || mk->verdict == NS_VERDICT_IMPROVED;
		cells[c++] = tested ? num_cell(NS_CELL_P, mk->p) : (struct ns_cell){ .type = NS_CELL_EMPTY };
	}
	ns_grid_row(g, cells, true, false);
}

/* The rows of verdict v (at most top_n); titles[] holds their names. */
static int md_section_rows(struct ns_grid *g, const struct ns_diff *d, enum ns_verdict v,
			   const struct ns_diff_write_opts *o, char **titles, size_t *shown)
{
	for (size_t i = 0; i < d->n_rows && (o->top_n < 0 || (long)*shown < o->top_n); i++) {
		const struct ns_diff_row *r = &d->rows[d->order[i]];
		if (r->verdict != v)
			continue;
		titles[*shown] = row_title(d, r);
		if (!titles[*shown])
			return -1;
		md_row(g, d, titles[(*shown)++], r, r->m);
	}
	return ns_grid_error(g) ? -1 : 0;
}

static int md_section(FILE *out, const struct ns_diff *d, enum ns_verdict v, const char *heading,
		      const struct ns_diff_write_opts *o)
{
	struct ns_grid g;
	struct md_labels labels;
	size_t n = d->n_verdict[v], shown = 0;
	char **titles;
	int rc = -1;
	if (n == 0)
		return 0;
	titles = calloc(n, sizeof(*titles));
	ns_grid_init(&g, NULL);
	md_columns(&g, d, &labels, "Name", 5, true);
	if (titles && md_section_rows(&g, d, v, o, titles, &shown) == 0) {
		fprintf(out, "\n#### %s (%zu)\n\n", heading, n);
		ns_grid_write_markdown(out, &g);
		if (shown < n)
			fprintf(out, "\n_%zu more not shown._\n", n - shown);
		rc = 0;
	}
	for (size_t i = 0; titles && i < shown; i++)
		free(titles[i]);
	free(titles);
	ns_grid_release(&g);
	return rc;
}

/* "- KEY: TEXT (NOTE)": a list item whose text comes from the inputs. */
static void md_item(FILE *out, const char *key, const char *text, const char *note)
{
	fprintf(out, "- %s: ", key);
	ns_md_text(out, text);
	if (note) {
		fputs(" (", out);
		ns_md_text(out, note);
		fputc(')', out);
	}
	fputc('\n', out);
}

/* The summary lines above the tables. */
static void md_summary(FILE *out, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	char text[1024];
	fprintf(out, "### neuron-stats diff: %zu regressed, %zu improved, %zu new, %zu removed\n\n",
		d->n_verdict[NS_VERDICT_REGRESSED], d->n_verdict[NS_VERDICT_IMPROVED], d->n_verdict[NS_VERDICT_NEW],
		d->n_verdict[NS_VERDICT_REMOVED]);
	describe_side(d, 0, text, sizeof(text));
	md_item(out, "base", d->side[0].label, text);
	describe_side(d, 1, text, sizeof(text));
	md_item(out, "new", d->side[1].label, text);
	describe_rule(d, text, sizeof(text));
	md_item(out, "rule", text, NULL);
	if (*d->warning)
		md_item(out, "**warning**", d->warning, NULL);
	fprintf(out, "- times: µs, %s\n", d->mode == NS_DIFF_MODE_STEPS ? "per-step medians" : "totals");
	if (o->gate) {
		fputs("- gate: --fail-on ", out);
		ns_md_text(out, o->gate);
		fputs(o->gate_tripped ? ": **failed**\n" : ": passed\n", out);
	}
}

static int write_markdown(FILE *out, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	struct ns_grid g;
	struct md_labels labels;
	int rc = -1;
	ns_grid_init(&g, NULL);
	md_columns(&g, d, &labels, "Total", 6, false);
	md_row(&g, d, "all rows", NULL, d->total);
	if (!ns_grid_error(&g)) {
		md_summary(out, d, o);
		fputc('\n', out);
		ns_grid_write_markdown(out, &g);
		rc = 0;
	}
	ns_grid_release(&g);
	if (rc == 0 && (md_section(out, d, NS_VERDICT_REGRESSED, "Regressions", o) ||
			md_section(out, d, NS_VERDICT_IMPROVED, "Improvements", o) ||
			md_section(out, d, NS_VERDICT_NEW, "New", o) || md_section(out, d, NS_VERDICT_REMOVED, "Removed", o)))
		rc = -1;
	return rc;
}

/* ---- CSV and JSON: the values of a row and of a metric, as grid cells ---- */

/* A row's own values, in the order of both forms. */
enum row_value { RV_NAME, RV_OVERLOAD, RV_SHAPES, RV_STACK, RV_NEFF, RV_ON, RV_ANNOTATION, RV_VERDICT,
		 RV_BASE_CALLS, RV_NEW_CALLS, RV__COUNT };

static const char *const row_keys[RV__COUNT] = { "name", "overload", "input_shapes", "stack", "neff", "on",
						     "user_annotation", "verdict", "base_calls", "new_calls" };

/* A metric's values (docs/diff.md "JSON contract"). */
enum metric_value { MV_BASE, MV_NEW, MV_CHANGE, MV_CHANGE_PCT, MV_JUDGED_ON, MV_BASE_MEDIAN, MV_BASE_MAD,
		    MV_NEW_MEDIAN, MV_NEW_MAD, MV_STEP_CHANGE, MV_STEP_CHANGE_PCT, MV_P, MV_P_EXACT, MV_VERDICT,
		    MV__COUNT };

struct metric_col {
	enum metric_value v;
	const char *key;
};

/* The CSV's columns of a metric, each named after the metric's key:
 * self_cpu_base_us, ... */
static const struct metric_col metric_csv_cols[] = {
	{ MV_BASE, "base_us" },
	{ MV_NEW, "new_us" },
	{ MV_CHANGE, "change_us" },
	{ MV_CHANGE_PCT, "change_pct" },
	{ MV_JUDGED_ON, "judged_on" },
	{ MV_BASE_MEDIAN, "base_step_median_us" },
	{ MV_BASE_MAD, "base_step_mad_us" },
	{ MV_NEW_MEDIAN, "new_step_median_us" },
	{ MV_NEW_MAD, "new_step_mad_us" },
	{ MV_STEP_CHANGE_PCT, "step_change_pct" },
	{ MV_P, "p" },
	{ MV_VERDICT, "verdict" },
};

#define N_CSV_COLS (RV__COUNT + NS_DIFF_N_METRICS * NS_ARRAY_SIZE(metric_csv_cols))

/* A metric's values: totals, then (when judged on steps, else missing)
 * the per-step medians, MADs, their change and the test. */
static void metric_values(const struct ns_diff_metric *m, struct ns_cell v[MV__COUNT])
{
	memset(v, 0, MV__COUNT * sizeof(*v)); /* NS_CELL_EMPTY */
	v[MV_BASE] = num_cell(NS_CELL_NS, (double)m->base_ns);
	v[MV_NEW] = num_cell(NS_CELL_NS, (double)m->new_ns);
	v[MV_CHANGE] = num_cell(NS_CELL_NS, (double)(m->new_ns - m->base_ns));
	v[MV_CHANGE_PCT] = num_cell(NS_CELL_PCT, ns_diff_change_pct((double)m->base_ns, (double)m->new_ns));
	if (m->verdict != NS_VERDICT_NONE)
		v[MV_JUDGED_ON] = text_cell(m->by_steps ? "steps" : "total");
	v[MV_VERDICT] = text_cell(ns_verdict_name(m->verdict));
	if (!m->by_steps)
		return;
	v[MV_BASE_MEDIAN] = num_cell(NS_CELL_NS, m->base_step.median);
	v[MV_BASE_MAD] = num_cell(NS_CELL_NS, m->base_step.mad);
	v[MV_NEW_MEDIAN] = num_cell(NS_CELL_NS, m->new_step.median);
	v[MV_NEW_MAD] = num_cell(NS_CELL_NS, m->new_step.mad);
	v[MV_STEP_CHANGE] = num_cell(NS_CELL_NS, m->new_step.median - m->base_step.median);
	v[MV_STEP_CHANGE_PCT] = num_cell(NS_CELL_PCT, m->change_pct);
	v[MV_P] = num_cell(NS_CELL_P, m->p);
	v[MV_P_EXACT] = (struct ns_cell){ .type = NS_CELL_BOOL, .i = m->p_exact };
}

/* A row's own values (r NULL: the summary line, on = "total", with the
 * calls of every row). */
static void row_values(const struct ns_diff *d, const struct ns_diff_row *r, struct ns_cell v[RV__COUNT])
{
	const struct ns_strtab *st = &d->strings;
	memset(v, 0, RV__COUNT * sizeof(*v)); /* NS_CELL_EMPTY */
	v[RV_BASE_CALLS] = (struct ns_cell){ .type = NS_CELL_INT };
	v[RV_NEW_CALLS] = (struct ns_cell){ .type = NS_CELL_INT };
	if (!r) {
		v[RV_ON] = text_cell("total");
		for (size_t k = 0; k < d->n_rows; k++) {
			v[RV_BASE_CALLS].i += d->rows[k].base_calls;
			v[RV_NEW_CALLS].i += d->rows[k].new_calls;
		}
		return;
	}
	v[RV_NAME] = text_cell(ns_strtab_get(st, r->name));
	v[RV_OVERLOAD] = text_cell(ns_strtab_get(st, r->overload));
	v[RV_SHAPES] = text_cell(ns_strtab_get(st, r->shapes));
	v[RV_STACK] = text_cell(ns_strtab_get(st, r->stack));
	v[RV_NEFF] = text_cell(ns_strtab_get(st, r->neff));
	v[RV_ON] = text_cell(r->on_device ? "device" : "cpu");
	v[RV_ANNOTATION] = (struct ns_cell){ .type = NS_CELL_BOOL, .i = r->is_user_annotation };
	v[RV_VERDICT] = text_cell(ns_verdict_name(r->verdict));
	v[RV_BASE_CALLS].i = r->base_calls;
	v[RV_NEW_CALLS].i = r->new_calls;
}

/* The rows printed in CSV and JSON, in display order: *n of them. */
static size_t *machine_rows(const struct ns_diff *d, const struct ns_diff_write_opts *o, size_t *n)
{
	size_t *rows = malloc((d->n_rows + 1) * sizeof(*rows));
	*n = 0;
	for (size_t i = 0; rows && i < d->n_rows && (o->row_limit < 0 || (long)*n < o->row_limit); i++)
		if (row_shown(d, d->order[i], o))
			rows[(*n)++] = d->order[i];
	return rows;
}

/* ---- CSV: one grid; the summary line comes last, with on = "total" ---- */

static void csv_row(struct ns_grid *g, const struct ns_diff *d, const struct ns_diff_row *r)
{
	struct ns_cell cells[N_CSV_COLS], v[MV__COUNT];
	size_t c = RV__COUNT;
	row_values(d, r, cells);
	for (int k = 0; k < NS_DIFF_N_METRICS; k++) {
		metric_values(r ? &r->m[k] : &d->total[k], v);
		for (size_t i = 0; i < NS_ARRAY_SIZE(metric_csv_cols); i++)
			cells[c++] = v[metric_csv_cols[i].v];
	}
	ns_grid_row(g, cells, true, false);
}

static int write_csv(FILE *out, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	char keys[NS_DIFF_N_METRICS][NS_ARRAY_SIZE(metric_csv_cols)][48];
	struct ns_grid g;
	size_t n_rows, *rows = machine_rows(d, o, &n_rows);
	int rc = -1;
	ns_grid_init(&g, NULL);
	for (size_t c = 0; c < RV__COUNT; c++)
		ns_grid_col(&g, &(struct ns_grid_col){ .key = row_keys[c] });
	for (int k = 0; k < NS_DIFF_N_METRICS; k++)
		for (size_t c = 0; c < NS_ARRAY_SIZE(metric_csv_cols); c++) {
			snprintf(keys[k][c], sizeof(keys[k][c]), "%s_%s", ns_diff_metric_keys[k], metric_csv_cols[c].key);
			ns_grid_col(&g, &(struct ns_grid_col){ .key = keys[k][c] });
		}
	for (size_t i = 0; rows && i < n_rows; i++)
		csv_row(&g, d, &d->rows[rows[i]]);
	csv_row(&g, d, NULL);
	if (rows && !ns_grid_error(&g)) {
		ns_grid_write_csv(out, &g, true);
		rc = 0;
	}
	ns_grid_release(&g);
	free(rows);
	return rc;
}

/* ---- JSON (docs/diff.md "JSON contract"): a document of nested grids ---- */

/* One grid per kind of object; a cell of one nests a row of another
 * (NS_CELL_ROW) or all of its rows (NS_CELL_ROWS). */
enum json_part { JP_DOC, JP_SIDE, JP_BASE_STEPS, JP_NEW_STEPS, JP_GROUP_BY, JP_RULE, JP_VERDICTS, JP_GATE,
		 JP_TOTALS, JP_ROWS, JP_CALLS, JP_METRIC, JP_STEP_STATS, JP__COUNT };

struct json_doc {
	struct ns_grid g[JP__COUNT];
	char threshold[32], alpha[32], rule[1024]; /* texts of the rule's cells */
};

/* A metric's object; MV__COUNT: its "steps" object (null when not judged
 * on steps). */
static const struct metric_col metric_json_cols[] = {
	{ MV_BASE, "base_us" },		 { MV_NEW, "new_us" },	      { MV_CHANGE, "change_us" },
	{ MV_CHANGE_PCT, "change_pct" }, { MV__COUNT, "steps" },      { MV_JUDGED_ON, "judged_on" },
	{ MV_VERDICT, "verdict" },
};

static const struct metric_col step_json_cols[] = {
	{ MV_BASE_MEDIAN, "base_median_us" }, { MV_BASE_MAD, "base_mad_us" },
	{ MV_NEW_MEDIAN, "new_median_us" },   { MV_NEW_MAD, "new_mad_us" },
	{ MV_STEP_CHANGE, "change_us" },      { MV_STEP_CHANGE_PCT, "change_pct" },
	{ MV_P, "p" },			      { MV_P_EXACT, "p_exact" },
};

static struct ns_cell int_cell(int64_t i)
{
	return (struct ns_cell){ .type = NS_CELL_INT, .i = i };
}

static struct ns_cell bool_cell(bool b)
{
	return (struct ns_cell){ .type = NS_CELL_BOOL, .i = b };
}

/* Row r of sub, nested as an object. */
static struct ns_cell row_cell(const struct ns_grid *sub, size_t r)
{
	return (struct ns_cell){ .type = NS_CELL_ROW, .sub = sub, .i = (int64_t)r };
}

/* Adds cells as the next row of g; the cell that nests it. */
static struct ns_cell add_row(struct ns_grid *g, const struct ns_cell *cells)
{
	struct ns_cell nested = row_cell(g, g->n_rows);
	ns_grid_row(g, cells, true, false);
	return nested;
}

/* Columns named keys[0..n), those from sep_from on after `sep`. */
static void json_keys(struct ns_grid *g, const char *const *keys, size_t n, size_t sep_from, const char *sep)
{
	for (size_t c = 0; c < n; c++)
		ns_grid_col(g, &(struct ns_grid_col){ .key = keys[c], .json_sep = c >= sep_from ? sep : NULL });
}

static void json_metric_keys(struct ns_grid *g, const struct metric_col *cols, size_t n)
{
	for (size_t c = 0; c < n; c++)
		ns_grid_col(g, &(struct ns_grid_col){ .key = cols[c].key });
}

static void json_columns(struct json_doc *j)
{
	static const char *const doc[] = { "schema", "base",	 "new",	   "device", "group_by", "rule",
					   "warning", "verdicts", "gate", "totals", "rows" };
	static const char *const side[] = { "input", "traces", "steps", "step_numbers", "device" };
	static const char *const group_by[] = { "overload", "shape", "stack", "neff" };
	static const char *const rule[] = { "mode", "threshold_pct", "alpha", "test", "exact_max_steps", "note", "text" };
	static const char *const gate[] = { "fail_on", "failed" }, *const calls[] = { "base", "new" };
	json_keys(&j->g[JP_DOC], doc, NS_ARRAY_SIZE(doc), 1, ",\n ");
	json_keys(&j->g[JP_SIDE], side, NS_ARRAY_SIZE(side), 0, NULL);
	for (int s = JP_BASE_STEPS; s <= JP_NEW_STEPS; s++) {
		j->g[s].json_values = true;
		ns_grid_col(&j->g[s], &(struct ns_grid_col){ .key = "step" });
	}
	json_keys(&j->g[JP_GROUP_BY], group_by, NS_ARRAY_SIZE(group_by), 0, NULL);
	json_keys(&j->g[JP_RULE], rule, NS_ARRAY_SIZE(rule), 0, NULL);
	for (int v = 0; v < NS_VERDICT_NONE; v++)
		ns_grid_col(&j->g[JP_VERDICTS], &(struct ns_grid_col){ .key = ns_verdict_name((enum ns_verdict)v) });
	json_keys(&j->g[JP_GATE], gate, NS_ARRAY_SIZE(gate), 0, NULL);
	json_keys(&j->g[JP_TOTALS], ns_diff_metric_keys, NS_DIFF_N_METRICS, 1, ",\n            ");
	json_keys(&j->g[JP_ROWS], row_keys, RV_BASE_CALLS, 0, NULL);
	ns_grid_col(&j->g[JP_ROWS], &(struct ns_grid_col){ .key = "calls" });
	json_keys(&j->g[JP_ROWS], ns_diff_metric_keys, NS_DIFF_N_METRICS, 0, ",\n   ");
	json_keys(&j->g[JP_CALLS], calls, NS_ARRAY_SIZE(calls), 0, NULL);
	json_metric_keys(&j->g[JP_METRIC], metric_json_cols, NS_ARRAY_SIZE(metric_json_cols));
	json_metric_keys(&j->g[JP_STEP_STATS], step_json_cols, NS_ARRAY_SIZE(step_json_cols));
}

/* A metric's object, its per-step statistics nested when judged on steps. */
static struct ns_cell json_metric(struct json_doc *j, const struct ns_diff_metric *m)
{
	struct ns_cell v[MV__COUNT], cells[NS_ARRAY_SIZE(metric_json_cols)], steps[NS_ARRAY_SIZE(step_json_cols)];
	struct ns_cell nested = { .type = NS_CELL_EMPTY };
	metric_values(m, v);
	if (m->by_steps) {
		for (size_t c = 0; c < NS_ARRAY_SIZE(step_json_cols); c++)
			steps[c] = v[step_json_cols[c].v];
		nested = add_row(&j->g[JP_STEP_STATS], steps);
	}
	for (size_t c = 0; c < NS_ARRAY_SIZE(metric_json_cols); c++)
		cells[c] = metric_json_cols[c].v == MV__COUNT ? nested : v[metric_json_cols[c].v];
	return add_row(&j->g[JP_METRIC], cells);
}

/* A side's object: its input, traces, steps and their numbers, device. */
static struct ns_cell json_side(struct json_doc *j, const struct ns_diff *d, int s)
{
	const struct ns_diff_side *side = &d->side[s];
	struct ns_grid *numbers = &j->g[s ? JP_NEW_STEPS : JP_BASE_STEPS];
	for (size_t k = 0; k < side->n_steps; k++)
		ns_grid_row(numbers, (struct ns_cell[]){ int_cell(side->step_numbers[k]) }, true, false);
	return add_row(&j->g[JP_SIDE], (struct ns_cell[]){ text_cell(side->label), int_cell((int64_t)side->n_traces),
							     int_cell((int64_t)side->n_steps),
							     { .type = NS_CELL_ROWS, .sub = numbers, .len = side->n_steps },
							     text_cell(side->device) });
}

/* The rule's object; its texts are kept in j. */
static struct ns_cell json_rule(struct json_doc *j, const struct ns_diff *d)
{
	snprintf(j->threshold, sizeof(j->threshold), "%g", d->opts.threshold_pct);
	snprintf(j->alpha, sizeof(j->alpha), "%g", d->opts.alpha);
	describe_rule(d, j->rule, sizeof(j->rule));
	return add_row(&j->g[JP_RULE], (struct ns_cell[]){
		text_cell(d->mode == NS_DIFF_MODE_STEPS ? "steps" : "threshold"),
		{ .type = NS_CELL_NUM, .text = j->threshold }, { .type = NS_CELL_NUM, .text = j->alpha },
		text_cell("mann-whitney-u-two-sided"), int_cell(NS_MWU_EXACT_MAX), text_cell(d->mode_note),
		text_cell(j->rule) });
}

/* The rows shown, each with its calls and metrics. */
static void json_rows(struct json_doc *j, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	size_t n_rows, *rows = machine_rows(d, o, &n_rows);
	if (!rows)
		j->g[JP_ROWS].oom = true;
	for (size_t i = 0; rows && i < n_rows; i++) {
		const struct ns_diff_row *r = &d->rows[rows[i]];
		struct ns_cell v[RV__COUNT], cells[RV_BASE_CALLS + 1 + NS_DIFF_N_METRICS];
		row_values(d, r, v);
		memcpy(cells, v, RV_BASE_CALLS * sizeof(*v));
		cells[RV_BASE_CALLS] = add_row(&j->g[JP_CALLS], &v[RV_BASE_CALLS]);
		for (int k = 0; k < NS_DIFF_N_METRICS; k++)
			cells[RV_BASE_CALLS + 1 + k] = json_metric(j, &r->m[k]);
		ns_grid_row(&j->g[JP_ROWS], cells, true, false);
	}
	free(rows);
}

/* The document's one row: every part of it nested. */
static void json_document(struct json_doc *j, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	struct ns_cell totals[NS_DIFF_N_METRICS], gate = { .type = NS_CELL_EMPTY };
	struct ns_cell verdicts[NS_VERDICT_NONE], base = json_side(j, d, 0), new = json_side(j, d, 1);
	int group_by = d->opts.group_by;
	for (int v = 0; v < NS_VERDICT_NONE; v++)
		verdicts[v] = int_cell((int64_t)d->n_verdict[v]);
	for (int k = 0; k < NS_DIFF_N_METRICS; k++)
		totals[k] = json_metric(j, &d->total[k]);
	if (o->gate)
		gate = add_row(&j->g[JP_GATE], (struct ns_cell[]){ text_cell(o->gate), bool_cell(o->gate_tripped) });
	json_rows(j, d, o);
	ns_grid_row(&j->g[JP_DOC], (struct ns_cell[]){
		text_cell("neuron-stats-diff/1"), base, new, text_cell(d->device),
		add_row(&j->g[JP_GROUP_BY], (struct ns_cell[]){ bool_cell(group_by & NS_GROUP_OVERLOAD),
								 bool_cell(group_by & NS_GROUP_SHAPE),
								 int_cell(d->opts.stack_n), bool_cell(group_by & NS_GROUP_NEFF) }),
		json_rule(j, d), text_cell(d->warning), add_row(&j->g[JP_VERDICTS], verdicts), gate,
		add_row(&j->g[JP_TOTALS], totals),
		{ .type = NS_CELL_ROWS, .sub = &j->g[JP_ROWS], .len = j->g[JP_ROWS].n_rows } },
		true, false);
}

static int write_json(FILE *out, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	struct json_doc *j = calloc(1, sizeof(*j));
	int rc;
	if (!j)
		return -1;
	for (int p = 0; p < JP__COUNT; p++)
		ns_grid_init(&j->g[p], NULL);
	json_columns(j);
	json_document(j, d, o);
	rc = ns_grid_write_json_document(out, j->g, JP__COUNT); /* JP_DOC first */
	free(j);
	return rc;
}

int ns_diff_write(FILE *out, const struct ns_diff *d, enum ns_format fmt, const struct ns_diff_write_opts *o,
		  struct ns_error *err)
{
	switch (fmt) {
	case NS_FMT_TABLE:
		if (write_text(out, d, o))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		break;
	case NS_FMT_MARKDOWN:
		if (write_markdown(out, d, o))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		break;
	case NS_FMT_JSON:
		if (write_json(out, d, o))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		break;
	case NS_FMT_CSV:
		if (write_csv(out, d, o))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		break;
	}
	return 0;
}
