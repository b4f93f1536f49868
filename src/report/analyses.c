/* The `kernels`, `breakdown`, `overlap`, `stragglers` and `ranks` tables: grid layouts
 * (grid.h). Times are exact decimal µs; means, medians and standard
 * deviations are rounded to the nanosecond. */
#include "report/analyses.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "report/grid.h"

/* A column; text columns are left-aligned and cut at 80 characters. */
static void col(struct ns_grid *g, const char *header, const char *key, bool left)
{
	ns_grid_col(g, &(struct ns_grid_col){ .header = header, .key = key, .pad = 2, .left = left, .md_left = left,
					      .cap = left ? 80 : 0, .cut = left ? NS_CUT_END_DOTS : NS_CUT_NONE });
}

static struct ns_cell rank_cell(int64_t rank)
{
	return rank == NS_NONE ? (struct ns_cell){ .type = NS_CELL_EMPTY } : (struct ns_cell){ .type = NS_CELL_INT, .i = rank };
}

static struct ns_cell us(int64_t ns)
{
	return (struct ns_cell){ .type = NS_CELL_US, .i = ns };
}

static struct ns_cell nsx(double x)
{
	return (struct ns_cell){ .type = NS_CELL_NS, .x = x };
}

static struct ns_cell pct(int64_t part, int64_t whole)
{
	return (struct ns_cell){ .type = NS_CELL_PCT, .x = whole ? 100.0 * (double)part / (double)whole : 0.0 };
}

/* Adds the row cells[0..n) without its cell `skip` (SIZE_MAX: all of them):
 * the cell of a column the grid does not have. */
static void row_without(struct ns_grid *g, struct ns_cell *cells, size_t n, size_t skip)
{
	if (skip < n)
		memmove(cells + skip, cells + skip + 1, (n - skip - 1) * sizeof(*cells));
	ns_grid_row(g, cells, true, false);
}

int ns_report_kernels(FILE *out, const struct ns_rank_kstats *r, size_t n, enum ns_format fmt, struct ns_error *err)
{
	static const char *const h[][2] = { { "Rank", "rank" },	    { "Type", "type" },	       { "Name", "name" },
					    { "NEFF", "neff" },	    { "Count", "count" },      { "Total", "total_us" },
					    { "Mean (us)", "mean_us" }, { "Median (us)", "median_us" }, { "Min", "min_us" },
					    { "Max", "max_us" },	    { "StdDev (us)", "stddev_us" }, { "Share", "share_pct" } };
	enum { NEFF_COL = 3 };
	bool by_neff = n && r[0].stats->by_neff;
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	for (size_t c = 0; c < NS_ARRAY_SIZE(h); c++)
		if (c != NEFF_COL || by_neff)
			col(&g, h[c][0], h[c][1], c >= 1 && c <= NEFF_COL);
	for (size_t t = 0; t < n; t++)
		for (size_t i = 0; i < r[t].stats->n; i++) {
			const struct ns_kstat *s = &r[t].stats->v[i];
			struct ns_cell cells[] = {
				rank_cell(r[t].rank), { .type = NS_CELL_TEXT, .text = ns_ktype_name((enum ns_ktype)s->ktype) },
				{ .type = NS_CELL_TEXT, .text = s->name_text }, { .type = NS_CELL_TEXT, .text = s->neff_text },
				{ .type = NS_CELL_INT, .i = s->count }, us(s->total_ns), nsx(s->mean_ns), nsx(s->median_ns),
				us(s->min_ns), us(s->max_ns), nsx(s->stddev_ns), pct(s->total_ns, r[t].stats->total_ns),
			};
			row_without(&g, cells, NS_ARRAY_SIZE(cells), by_neff ? SIZE_MAX : NEFF_COL);
		}
	return ns_grid_render(out, &g, fmt, err);
}

int ns_report_engine_stats(FILE *out, const struct ns_rank_engine_stats *r, size_t n, enum ns_format fmt,
			   struct ns_error *err)
{
	static const char *const h[][2] = { { "Rank", "rank" },	    { "Engine", "engine" },    { "NEFF", "neff" },
					    { "Opcode", "opcode" },	    { "Count", "count" },      { "Total", "total_us" },
					    { "Mean (us)", "mean_us" }, { "Median (us)", "median_us" }, { "Min", "min_us" },
					    { "Max", "max_us" },	    { "StdDev (us)", "stddev_us" }, { "Share", "share_pct" } };
	enum { NEFF_COL = 2, OPCODE_COL = 3 };
	bool by_neff = n && r[0].stats->by_neff, by_opcode = n && r[0].stats->by_opcode;
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	for (size_t c = 0; c < NS_ARRAY_SIZE(h); c++)
		if ((c != NEFF_COL || by_neff) && (c != OPCODE_COL || by_opcode))
			col(&g, h[c][0], h[c][1], c >= 1 && c <= OPCODE_COL);
	for (size_t t = 0; t < n; t++)
		for (size_t i = 0; i < r[t].stats->n; i++) {
			const struct ns_engine_stat *e = &r[t].stats->v[i];
			const struct ns_kstat *s = &e->k;
			struct ns_cell cells[NS_ARRAY_SIZE(h)];
			size_t c = 0;
			cells[c++] = rank_cell(r[t].rank);
			cells[c++] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = e->engine };
			if (by_neff)
				cells[c++] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = e->neff_text };
			if (by_opcode)
				cells[c++] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = e->opcode_text };
			cells[c++] = (struct ns_cell){ .type = NS_CELL_INT, .i = s->count };
			cells[c++] = us(s->total_ns);
			cells[c++] = nsx(s->mean_ns);
			cells[c++] = nsx(s->median_ns);
			cells[c++] = us(s->min_ns);
			cells[c++] = us(s->max_ns);
			cells[c++] = nsx(s->stddev_ns);
			cells[c++] = pct(s->total_ns, e->whole_ns);
			ns_grid_row(&g, cells, true, false);
		}
	return ns_grid_render(out, &g, fmt, err);
}

int ns_report_kernel_bytes(FILE *out, const struct ns_rank_kstats *r, size_t n, enum ns_format fmt,
			   struct ns_error *err)
{
	static const char *const h[][2] = { { "Rank", "rank" },	       { "Type", "type" },
					    { "Name", "name" },	       { "Count", "count" },
					    { "Total", "total_us" },    { "Bytes", "bytes" },
					    { "Min bytes", "min_bytes" }, { "Max bytes", "max_bytes" },
					    { "GB/s", "gb_per_s" } };
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	for (size_t c = 0; c < sizeof(h) / sizeof(h[0]); c++)
		col(&g, h[c][0], h[c][1], c == 1 || c == 2);
	for (size_t t = 0; t < n; t++)
		for (size_t i = 0; i < r[t].stats->n; i++) {
			const struct ns_kstat *s = &r[t].stats->v[i];
			if (s->n_sized == 0)
				continue;
			/* bytes per ns is GB/s; an NS cell prints x / 1000 to 3 places */
			double gbps = s->sized_ns ? 1000.0 * (double)s->bytes / (double)s->sized_ns : 0.0;
			struct ns_cell cells[] = {
				rank_cell(r[t].rank), { .type = NS_CELL_TEXT, .text = ns_ktype_name((enum ns_ktype)s->ktype) },
				{ .type = NS_CELL_TEXT, .text = s->name_text }, { .type = NS_CELL_INT, .i = s->n_sized },
				us(s->sized_ns), { .type = NS_CELL_INT, .i = s->bytes }, { .type = NS_CELL_INT, .i = s->min_bytes },
				{ .type = NS_CELL_INT, .i = s->max_bytes }, nsx(gbps),
			};
			ns_grid_row(&g, cells, true, false);
		}
	return ns_grid_render(out, &g, fmt, err);
}

/* A row of the temporal grid; step: NS_NONE for the whole trace, which
 * has an empty Step cell where the grid has that column (step_col). */
static void temporal_row(struct ns_grid *g, bool step_col, int64_t rank, int64_t step, const struct ns_temporal *t)
{
	struct ns_cell cells[] = { rank_cell(rank),
				   rank_cell(step),
				   us(t->span_ns),
				   us(t->idle_ns),
				   us(t->compute_ns),
				   us(t->non_compute_ns),
				   us(t->communication_ns),
				   us(t->memory_ns),
				   pct(t->idle_ns, t->span_ns),
				   pct(t->compute_ns, t->span_ns),
				   pct(t->non_compute_ns, t->span_ns) };
	row_without(g, cells, NS_ARRAY_SIZE(cells), step_col ? SIZE_MAX : 1);
}

/* per_step: a Step column, and after each rank's row one per profiler step
 * (ns_breakdown_steps). */
static void temporal_grid(struct ns_grid *g, const struct ns_rank_breakdown *r, size_t n, bool per_step)
{
	static const char *const h[][2] = {
		{ "Rank", "rank" },		{ "Step", "step" },
		{ "Span", "kernel_time_us" },	{ "Idle", "idle_time_us" },
		{ "Compute", "compute_time_us" }, { "Non-compute", "non_compute_time_us" },
		{ "Communication", "communication_time_us" }, { "Memory", "memory_time_us" },
		{ "Idle %", "idle_time_pct" },	{ "Compute %", "compute_time_pct" }, { "Non-compute %", "non_compute_time_pct" },
	};
	for (size_t c = 0; c < NS_ARRAY_SIZE(h); c++)
		if (c != 1 || per_step)
			col(g, h[c][0], h[c][1], false);
	for (size_t i = 0; i < n; i++) {
		temporal_row(g, per_step, r[i].rank, NS_NONE, &r[i].b->temporal);
		for (size_t s = 0; per_step && s < r[i].b->n_steps; s++)
			temporal_row(g, per_step, r[i].rank, r[i].b->steps[s].step, &r[i].b->steps[s].temporal);
	}
}

static void idle_grid(struct ns_grid *g, const struct ns_rank_breakdown *r, size_t n)
{
	static const char *const h[][2] = { { "Rank", "rank" },	      { "Stream", "stream" }, { "Category", "idle_category" },
					    { "Gaps", "gaps" },	      { "Idle", "idle_time_us" },
					    { "Idle share", "idle_time_pct" } };
	for (size_t c = 0; c < sizeof(h) / sizeof(h[0]); c++)
		col(g, h[c][0], h[c][1], c == 2);
	for (size_t i = 0; i < n; i++)
		for (size_t s = 0; s < r[i].b->n_streams; s++) {
			const struct ns_idle_stream *st = &r[i].b->streams[s];
			for (int k = 0; k < NS_IDLE__COUNT; k++) {
				struct ns_cell cells[] = {
					rank_cell(r[i].rank), { .type = NS_CELL_INT, .i = st->stream },
					{ .type = NS_CELL_TEXT, .text = ns_idle_kind_name((enum ns_idle_kind)k) },
					{ .type = NS_CELL_INT, .i = st->gaps[k] }, us(st->idle_ns[k]),
					pct(st->idle_ns[k], st->total_ns),
				};
				ns_grid_row(g, cells, true, false);
			}
		}
}

int ns_report_breakdown(FILE *out, const struct ns_rank_breakdown *r, size_t n, int what, enum ns_format fmt,
			struct ns_error *err)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	if (what == NS_BREAKDOWN_IDLE)
		idle_grid(&g, r, n);
	else
		temporal_grid(&g, r, n, what == NS_BREAKDOWN_STEPS);
	return ns_grid_render(out, &g, fmt, err);
}

static struct ns_cell text(const char *s)
{
	return (struct ns_cell){ .type = NS_CELL_TEXT, .text = s };
}

static struct ns_cell integer(int64_t i)
{
	return (struct ns_cell){ .type = NS_CELL_INT, .i = i };
}

/* The columns h[0..n) ({header, key}); column `left` (or -1) is text. */
static void cols(struct ns_grid *g, const char *const (*h)[2], size_t n, size_t left)
{
	for (size_t c = 0; c < n; c++)
		col(g, h[c][0], h[c][1], c == left);
}

int ns_report_overlap(FILE *out, const struct ns_rank_overlap *r, size_t n, bool steps, enum ns_format fmt,
		      struct ns_error *err)
{
	static const char *const h[][2] = { { "Rank", "rank" },
					    { "Step", "step" },
					    { "Comm kernels", "communication_kernels" },
					    { "Communication", "communication_us" },
					    { "Overlapped", "overlap_us" },
					    { "Compute", "compute_us" },
					    { "Overlap %", "comp_comm_overlap_pct" } };
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	cols(&g, h, NS_ARRAY_SIZE(h), SIZE_MAX);
	for (size_t t = 0; t < n; t++)
		for (size_t i = 0; i < (steps ? r[t].o->n : 1); i++) {
			const struct ns_overlap_row *o = &r[t].o->v[i];
			struct ns_cell cells[] = {
				rank_cell(r[t].rank), rank_cell(o->step), integer((int64_t)o->n_communication),
				us(o->communication_ns), us(o->overlap_ns), us(o->compute_ns),
				{ .type = NS_CELL_PCT,
				  .x = o->communication_ns ? 100.0 * (double)o->overlap_ns / (double)o->communication_ns : NAN },
			};
			ns_grid_row(&g, cells, true, false);
		}
	return ns_grid_render(out, &g, fmt, err);
}

static void steps_grid(struct ns_grid *g, const struct ns_stragglers *s)
{
	static const char *const h[][2] = { { "Step", "step" },
					    { "Ranks", "ranks" },
					    { "Last rank", "last_rank" },
					    { "Last end", "last_end_us" },
					    { "Median end (us)", "median_end_us" },
					    { "Behind median (us)", "last_behind_median_us" },
					    { "Min dur", "min_duration_us" },
					    { "Median dur (us)", "median_duration_us" },
					    { "Max dur", "max_duration_us" } };
	cols(g, h, NS_ARRAY_SIZE(h), SIZE_MAX);
	for (size_t i = 0; i < s->n_steps; i++) {
		const struct ns_step_summary *p = &s->steps[i];
		struct ns_cell cells[] = { integer(p->step),
					   integer((int64_t)p->n_ranks),
					   rank_cell(p->last_rank),
					   us(p->last_end_ns),
					   nsx(p->median_end_ns),
					   nsx((double)p->last_end_ns - p->median_end_ns),
					   us(p->min_dur_ns),
					   nsx(p->median_dur_ns),
					   us(p->max_dur_ns) };
		ns_grid_row(g, cells, true, false);
	}
}

static void ranks_grid(struct ns_grid *g, const struct ns_stragglers *s)
{
	static const char *const h[][2] = { { "Step", "step" },	   { "Rank", "rank" },
					    { "Start", "start_us" },  { "End", "end_us" },
					    { "Duration", "duration_us" }, { "Behind median (us)", "behind_median_us" },
					    { "Last", "last" } };
	cols(g, h, NS_ARRAY_SIZE(h), 6);
	for (size_t i = 0; i < s->n_step_ranks; i++) {
		const struct ns_step_rank *p = &s->step_ranks[i];
		struct ns_cell cells[] = { integer(p->step),	   rank_cell(p->rank),
					   us(p->start_ns),	   us(p->end_ns),
					   us(p->end_ns - p->start_ns), nsx(p->behind_median_ns),
					   text(p->last ? "yes" : "no") };
		ns_grid_row(g, cells, true, false);
	}
}

static void collectives_grid(struct ns_grid *g, const struct ns_stragglers *s)
{
	static const char *const h[][2] = { { "Rank", "rank" },		{ "Collectives", "collectives" },
					    { "Matched", "matched" },	{ "Time", "time_us" },
					    { "Wait", "wait_us" },		{ "Wait %", "wait_pct" },
					    { "Last arrivals", "last_arrivals" } };
	cols(g, h, NS_ARRAY_SIZE(h), SIZE_MAX);
	for (size_t i = 0; i < s->n_collectives; i++) {
		const struct ns_collective_rank *c = &s->collectives[i];
		struct ns_cell cells[] = { rank_cell(c->rank),	  integer(c->count), integer(c->matched),
					   us(c->total_ns),	  us(c->wait_ns),    pct(c->wait_ns, c->total_ns),
					   integer(c->last_arrivals) };
		ns_grid_row(g, cells, true, false);
	}
}

int ns_report_stragglers(FILE *out, const struct ns_stragglers *s, enum ns_straggler_view view, enum ns_format fmt,
			 struct ns_error *err)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	if (view == NS_STRAGGLERS_STEPS)
		steps_grid(&g, s);
	else if (view == NS_STRAGGLERS_RANKS)
		ranks_grid(&g, s);
	else
		collectives_grid(&g, s);
	return ns_grid_render(out, &g, fmt, err);
}

/* The ranks' column headers and keys, "Rank N" and "rank_N" + unit
 * ("_us" or ""), in one block (the grid borrows them until it is
 * rendered). */
static char *rank_labels(const int64_t *ranks, size_t n, const char *unit)
{
	char *labels = malloc((n ? n : 1) * 2 * NS_RANK_LABEL);
	for (size_t k = 0; labels && k < n; k++) {
		snprintf(labels + 2 * k * NS_RANK_LABEL, NS_RANK_LABEL, "Rank %lld", (long long)ranks[k]);
		snprintf(labels + (2 * k + 1) * NS_RANK_LABEL, NS_RANK_LABEL, "rank_%lld%s", (long long)ranks[k], unit);
	}
	return labels;
}

static void rank_cols(struct ns_grid *g, const char *labels, size_t n)
{
	for (size_t k = 0; k < n; k++)
		col(g, labels + 2 * k * NS_RANK_LABEL, labels + (2 * k + 1) * NS_RANK_LABEL, false);
}

/* max / median; missing (NaN) when the median is 0. */
static struct ns_cell spread(double max, double median)
{
	return (struct ns_cell){ .type = NS_CELL_REAL, .x = median > 0 ? max / median : NAN };
}

static struct ns_cell metric_cell(enum ns_rank_metric m, int64_t v)
{
	return ns_rank_metric_is_time(m) ? us(v) : integer(v);
}

static struct ns_cell metric_median(enum ns_rank_metric m, double median)
{
	return ns_rank_metric_is_time(m) ? nsx(median) : (struct ns_cell){ .type = NS_CELL_REAL, .x = median };
}

/* The columns of `ranks`' views: h_first (the first one text when
 * first_text), then each rank's (or, in summary, h_summary's), then h_last. */
static void rank_view_cols(struct ns_grid *g, const char *const (*h_first)[2], bool first_text, const char *labels,
			   size_t n_ranks, bool summary, const char *const (*h_summary)[2], size_t n_summary,
			   const char *const (*h_last)[2], size_t n_last)
{
	cols(g, h_first, 1, first_text ? 0 : SIZE_MAX);
	if (summary)
		cols(g, h_summary, n_summary, SIZE_MAX);
	else
		rank_cols(g, labels, n_ranks);
	cols(g, h_last, n_last, SIZE_MAX);
}

int ns_report_rank_ops(FILE *out, const struct ns_rank_ops *r, const int64_t *ranks, enum ns_rank_metric m,
		       bool summary, long row_limit, enum ns_format fmt, struct ns_error *err)
{
	static const char *const h_first[][2] = { { "Name", "name" } };
	static const char *const h_summary[][2] = { { "Min", "min_us" }, { "Median (us)", "median_us" }, { "Max", "max_us" } };
	static const char *const h_summary_calls[][2] = { { "Min", "min" }, { "Median", "median" }, { "Max", "max" } };
	static const char *const h_last[][2] = { { "Total", "total_us" }, { "Slowest rank", "slowest_rank" },
						 { "Max/median", "spread" } };
	static const char *const h_last_calls[][2] = { { "Total", "total" }, { "Slowest rank", "slowest_rank" },
						       { "Max/median", "spread" } };
	bool is_time = ns_rank_metric_is_time(m);
	size_t n = r->n_ranks;
	summary = summary || n > NS_RANK_SIDE_BY_SIDE_MAX;
	char *labels = rank_labels(ranks, n, is_time ? "_us" : "");
	struct ns_cell *cells = malloc((n + 8) * sizeof(*cells));
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	int rc = labels && cells ? 0 : ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	if (rc == 0)
		rank_view_cols(&g, h_first, true, labels, n, summary, is_time ? h_summary : h_summary_calls, 3,
			       is_time ? h_last : h_last_calls, 3);
	for (size_t i = 0; rc == 0 && i < r->n_ops && (row_limit < 0 || i < (size_t)row_limit); i++) {
		const struct ns_rank_op *op = &r->ops[i];
		size_t c = 0;
		cells[c++] = text(ns_strtab_get(&r->strings, op->name));
		if (summary) {
			cells[c++] = metric_cell(m, op->min);
			cells[c++] = metric_median(m, op->median);
			cells[c++] = metric_cell(m, op->max);
		} else {
			for (size_t k = 0; k < n; k++)
				cells[c++] = metric_cell(m, r->values[i * n + k]);
		}
		cells[c++] = metric_cell(m, op->total);
		cells[c++] = rank_cell(ranks[op->slowest]);
		cells[c++] = spread((double)op->max, op->median);
		ns_grid_row(&g, cells, true, false);
	}
	if (rc == 0)
		rc = ns_grid_render(out, &g, fmt, err);
	else
		ns_grid_release(&g);
	free(cells);
	free(labels);
	return rc;
}

/* The rank (index into ranks) with rank number `rank`, or n. */
static size_t rank_index(const int64_t *ranks, size_t n, int64_t rank)
{
	size_t k = 0;
	while (k < n && ranks[k] != rank)
		k++;
	return k;
}

/* One step's row: its ranks' durations p[0..m). */
static void step_row(struct ns_grid *g, const struct ns_step_summary *s, const struct ns_step_rank *p, size_t m,
		     const int64_t *ranks, size_t n, bool summary, struct ns_cell *cells)
{
	size_t c = 0, slowest = 0;
	cells[c++] = integer(s->step);
	if (summary) {
		cells[c++] = integer((int64_t)s->n_ranks);
		cells[c++] = us(s->min_dur_ns);
		cells[c++] = nsx(s->median_dur_ns);
		cells[c++] = us(s->max_dur_ns);
	} else {
		for (size_t k = 0; k < n; k++)
			cells[c + k] = (struct ns_cell){ .type = NS_CELL_EMPTY };
		for (size_t j = 0; j < m; j++) {
			size_t k = rank_index(ranks, n, p[j].rank);
			if (k < n && cells[c + k].type == NS_CELL_EMPTY)
				cells[c + k] = us(p[j].end_ns - p[j].start_ns);
		}
		c += n;
	}
	for (size_t j = 1; j < m; j++)
		if (p[j].end_ns - p[j].start_ns > p[slowest].end_ns - p[slowest].start_ns)
			slowest = j;
	cells[c++] = rank_cell(p[slowest].rank);
	cells[c++] = rank_cell(s->last_rank);
	cells[c++] = spread((double)s->max_dur_ns, s->median_dur_ns);
	ns_grid_row(g, cells, true, false);
}

int ns_report_rank_steps(FILE *out, const struct ns_stragglers *s, const int64_t *ranks, size_t n, bool summary,
			 enum ns_format fmt, struct ns_error *err)
{
	static const char *const h_first[][2] = { { "Step", "step" } };
	static const char *const h_summary[][2] = { { "Ranks", "ranks" },
						    { "Min dur", "min_duration_us" },
						    { "Median dur (us)", "median_duration_us" },
						    { "Max dur", "max_duration_us" } };
	static const char *const h_last[][2] = { { "Slowest rank", "slowest_rank" }, { "Last rank", "last_rank" },
						 { "Max/median", "spread" } };
	summary = summary || n > NS_RANK_SIDE_BY_SIDE_MAX;
	char *labels = rank_labels(ranks, n, "_us");
	struct ns_cell *cells = malloc((n + 8) * sizeof(*cells));
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	int rc = labels && cells ? 0 : ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	if (rc == 0)
		rank_view_cols(&g, h_first, false, labels, n, summary, h_summary, NS_ARRAY_SIZE(h_summary), h_last,
			       NS_ARRAY_SIZE(h_last));
	for (size_t i = 0, j = 0; rc == 0 && i < s->n_steps; i++) {
		size_t from = j;
		while (j < s->n_step_ranks && s->step_ranks[j].step == s->steps[i].step)
			j++;
		step_row(&g, &s->steps[i], s->step_ranks + from, j - from, ranks, n, summary, cells);
	}
	if (rc == 0)
		rc = ns_grid_render(out, &g, fmt, err);
	else
		ns_grid_release(&g);
	free(cells);
	free(labels);
	return rc;
}
