/* The regression diff (docs/diff.md): matching, verdicts and the row
 * order; the statistics are in diff-stats.c, the forms in diff-write.c. */
#include "report/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/i64map.h"
#include "common/sort.h"
#include "common/vec.h"
#include "report/diff-internal.h"
#include "report/fields.h"

#define NO_ROW (-1)
#define KEY_SEP '\x1f' /* joins the key's fields into one interned string */

static const char *const verdict_names[NS_VERDICT__COUNT] = {
	[NS_VERDICT_UNCHANGED] = "unchanged", [NS_VERDICT_REGRESSED] = "regressed",
	[NS_VERDICT_IMPROVED] = "improved",   [NS_VERDICT_NEW] = "new",
	[NS_VERDICT_REMOVED] = "removed",     [NS_VERDICT_NONE] = "-",
};

const char *const ns_diff_metric_keys[NS_DIFF_N_METRICS] = { "self_cpu", "self_device" };

const char *ns_verdict_name(enum ns_verdict v)
{
	return v < NS_VERDICT__COUNT ? verdict_names[v] : "?";
}

const char *const ns_diff_test_names[NS_DIFF_TEST__COUNT + 1] = { "per-step", "per-step-call", "per-call", "auto",
								  NULL };

const char *ns_diff_basis_name(enum ns_diff_basis b)
{
	static const char *const names[NS_BASIS__COUNT] = { "-", "total", "per-step", "per-step-call", "per-call" };
	return b < NS_BASIS__COUNT ? names[b] : "?";
}

/* ---- matching ---- */

/* One row's per-call values on one side: all of them up to
 * NS_DIFF_CALL_SAMPLES, then a reservoir sample of that many. */
struct call_sample {
	int64_t *cpu, *dev;
	size_t n, cap;
	uint64_t seen, rng;
};

/* Per-step sums of one side, [row * n_steps + column], while building;
 * per-call values per row when a --test needs them. */
struct side_work {
	struct ns_i64map column_of_number;
	int64_t *cpu, *dev, *calls;
	struct call_sample *samples; /* NULL: not collected */
	int64_t *total_cpu, *total_dev; /* per step, over all rows (device: footer rows) */
};

struct work {
	struct ns_diff *d;
	struct ns_i64map row_of_key; /* interned key -> row */
	struct side_work side[2];
	size_t cap_rows;
	double *scratch;
	int64_t *zeros;
	int64_t *per_call[2];  /* one row's per-step time per call, in ps, per side */
	bool needs_calls;      /* --test per-call or auto */
};

static ns_str copy_str(struct ns_diff *d, const struct ns_trace *t, ns_str s)
{
	return ns_strtab_intern(&d->strings, ns_strtab_get(&t->strings, s), ns_strtab_len(&t->strings, s));
}

/* The row of avg (created if new), or NO_ROW on OOM. The key is the report's
 * grouping key (the optional fields are 0 unless grouped by), with the device
 * type reduced to CPU vs device so that runs on different backends match. */
static int64_t row_of(struct work *w, const struct ns_trace *t, const struct ns_avg *avg)
{
	struct ns_diff *d = w->d;
	const ns_str fields[] = { avg->key, avg->overload, avg->input_shapes, avg->stack, avg->neff };
	const int n_fields = (int)NS_ARRAY_SIZE(fields);
	size_t len = 2;
	for (int i = 0; i < n_fields; i++)
		len += ns_strtab_len(&t->strings, fields[i]) + 1;
	char *key = malloc(len + 1), *p = key;
	int64_t row = NO_ROW;
	if (!key)
		return NO_ROW;
	for (int i = 0; i < n_fields; i++) {
		size_t l = ns_strtab_len(&t->strings, fields[i]);
		memcpy(p, ns_strtab_get(&t->strings, fields[i]), l);
		p += l;
		*p++ = KEY_SEP;
	}
	*p++ = avg->device_type == NS_DEV_CPU ? 'C' : 'D';
	*p++ = avg->is_user_annotation ? 'U' : '-';
	ns_str id = ns_strtab_intern(&d->strings, key, (size_t)(p - key));
	free(key);
	if (id == UINT32_MAX)
		return NO_ROW;
	row = ns_i64map_get(&w->row_of_key, id, NO_ROW);
	if (row != NO_ROW)
		return row;
	struct ns_diff_row *r = &d->rows[d->n_rows];
	memset(r, 0, sizeof(*r));
	r->name = copy_str(d, t, avg->key);
	r->overload = copy_str(d, t, avg->overload);
	r->shapes = copy_str(d, t, avg->input_shapes);
	r->stack = copy_str(d, t, avg->stack);
	r->neff = copy_str(d, t, avg->neff);
	if (r->name == UINT32_MAX || r->overload == UINT32_MAX || r->shapes == UINT32_MAX || r->stack == UINT32_MAX ||
	    r->neff == UINT32_MAX)
		return NO_ROW;
	r->on_device = avg->device_type != NS_DEV_CPU;
	r->is_user_annotation = avg->is_user_annotation;
	row = (int64_t)d->n_rows++;
	return ns_i64map_set(&w->row_of_key, id, row) ? NO_ROW : row;
}

/* The side's steps: the union of its traces' step numbers. */
static int side_steps(struct work *w, enum ns_diff_side_id s, const struct ns_diff_input *in)
{
	struct ns_diff_side *side = &w->d->side[s];
	size_t n = 0;
	for (size_t i = 0; i < in->n; i++)
		n += in->steps[i].n_steps;
	side->step_numbers = malloc((n + 1) * sizeof(*side->step_numbers));
	if (!side->step_numbers)
		return -1;
	for (size_t i = 0; i < in->n; i++)
		for (size_t k = 0; k < in->steps[i].n_steps; k++)
			side->step_numbers[side->n_steps++] = in->steps[i].number[k];
	side->n_steps = ns_step_numbers_unique(side->step_numbers, side->n_steps);
	for (size_t k = 0; k < side->n_steps; k++)
		if (ns_i64map_set(&w->side[s].column_of_number, side->step_numbers[k], (int64_t)k))
			return -1;
	return 0;
}

/* splitmix64: the reservoir's deterministic random numbers. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Algorithm R: the k-th call (from 0) replaces a random kept one with
 * probability CAP / (k + 1), so every call is kept with the same chance. */
static int add_call(struct call_sample *cs, size_t row, int64_t cpu, int64_t dev)
{
	size_t slot = cs->n;
	if (cs->seen == 0)
		cs->rng = 0x6e732d64696666u ^ (uint64_t)row; /* seeded per row: the same sample every run */
	if (cs->n >= NS_DIFF_CALL_SAMPLES) {
		uint64_t j = next_random(&cs->rng) % (cs->seen + 1);
		cs->seen++;
		if (j >= NS_DIFF_CALL_SAMPLES)
			return 0;
		slot = (size_t)j;
	} else {
		size_t cap = cs->cap; /* the two arrays grow alike: one capacity */
		if (NS_GROW(cs->cpu, cap, cs->n + 1) || NS_GROW(cs->dev, cs->cap, cs->n + 1))
			return -1;
		cs->n++;
		cs->seen++;
	}
	cs->cpu[slot] = cpu;
	cs->dev[slot] = dev;
	return 0;
}

/* Each FunctionEvent of the trace as one call of its row. */
static int fold_calls(struct side_work *sw, const struct ns_agg *agg, const int64_t *row_of_avg)
{
	for (size_t f = 0; f < agg->n_fevents; f++) {
		int32_t a = agg->fevents[f].avg;
		if (a < 0 || row_of_avg[a] == NO_ROW)
			continue;
		struct ns_fself self = ns_fevent_self(agg, f);
		if (add_call(&sw->samples[row_of_avg[a]], (size_t)row_of_avg[a], self.self_cpu_ns, self.self_device_ns))
			return -1;
	}
	return 0;
}

/* Adds one key_averages row of a trace to its diff row. */
static void fold_avg(struct work *w, enum ns_diff_side_id s, const struct ns_steps *st, size_t a,
		     const struct ns_avg *avg, size_t row)
{
	struct ns_diff_row *r = &w->d->rows[row];
	struct side_work *sw = &w->side[s];
	size_t n_steps = w->d->side[s].n_steps;
	bool footer = ns_avg_counts_for_device_total(avg);
	r->counts_for_device_total |= footer;
	if (s == NS_DIFF_BASE) {
		r->in_base = true;
		r->base_calls += avg->count;
		r->m[NS_DIFF_SELF_CPU].base_ns += avg->self_cpu_ns;
		r->m[NS_DIFF_SELF_DEVICE].base_ns += avg->self_device_ns;
	} else {
		r->in_new = true;
		r->new_calls += avg->count;
		r->m[NS_DIFF_SELF_CPU].new_ns += avg->self_cpu_ns;
		r->m[NS_DIFF_SELF_DEVICE].new_ns += avg->self_device_ns;
	}
	for (size_t k = 0; k < st->n_steps; k++) {
		size_t col = (size_t)ns_i64map_get(&sw->column_of_number, st->number[k], 0);
		size_t cell = a * st->n_steps + k;
		sw->cpu[row * n_steps + col] += st->self_cpu_ns[cell];
		sw->dev[row * n_steps + col] += st->self_device_ns[cell];
		sw->calls[row * n_steps + col] += st->calls[cell];
		sw->total_cpu[col] += st->self_cpu_ns[cell];
		sw->total_dev[col] += footer ? st->self_device_ns[cell] : 0;
	}
}

/* Adds every row of trace i of one side (and its calls, when needed). */
static int fold_trace(struct work *w, enum ns_diff_side_id s, const struct ns_diff_input *in, size_t i)
{
	const struct ns_agg *agg = &in->aggs[i];
	int64_t *row_of_avg = malloc((agg->n_avgs + 1) * sizeof(*row_of_avg));
	int rc = -1;
	if (!row_of_avg)
		return -1;
	for (size_t a = 0; a < agg->n_avgs; a++) {
		const struct ns_avg *avg = &agg->avgs[a];
		row_of_avg[a] = NO_ROW;
		if (!ns_name_filter_keeps(&w->d->opts.filter, ns_strtab_get(&agg->trace->strings, avg->key)) ||
		    (w->d->opts.hide_annotations && avg->is_user_annotation))
			continue; /* (the totals are of the rows compared) */
		row_of_avg[a] = row_of(w, agg->trace, avg);
		if (row_of_avg[a] == NO_ROW)
			goto out;
		fold_avg(w, s, &in->steps[i], a, avg, (size_t)row_of_avg[a]);
	}
	if (w->needs_calls && fold_calls(&w->side[s], agg, row_of_avg))
		goto out;
	rc = 0;
out:
	free(row_of_avg);
	return rc;
}

/* Adds every row of every trace of one side. */
static int fold_side(struct work *w, enum ns_diff_side_id s, const struct ns_diff_input *in)
{
	for (size_t i = 0; i < in->n; i++)
		if (fold_trace(w, s, in, i))
			return -1;
	return 0;
}

/* ---- judging ---- */

double ns_diff_change_pct(double base, double now)
{
	if (base == 0)
		return now == 0 ? NAN : now > 0 ? INFINITY : -INFINITY;
	return (now - base) * 100.0 / fabs(base);
}

static bool any_nonzero(const int64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i])
			return true;
	return false;
}

/* The values one metric is compared on, and which they are. */
struct compared {
	enum ns_diff_basis by; /* NS_BASIS_TOTAL: the totals, no values */
	const int64_t *base, *new_run;
	size_t n_base, n_new;
};

/* Whether the test can reach alpha with these many values, and there is
 * something to compare. */
static bool comparable(const struct ns_diff *d, const struct compared *c)
{
	return c->n_base && c->n_new && ns_mwu_min_p(c->n_base, c->n_new) < d->opts.alpha &&
	       (any_nonzero(c->base, c->n_base) || any_nonzero(c->new_run, c->n_new));
}

/* The per-step sums in steps mode when any is not zero, else the totals. */
static struct compared steps_or_total(const struct ns_diff *d, const int64_t *base_steps, const int64_t *new_steps)
{
	struct compared c = { NS_BASIS_PER_STEP, base_steps, new_steps, d->side[NS_DIFF_BASE].n_steps,
			      d->side[NS_DIFF_NEW].n_steps };
	bool any = any_nonzero(base_steps, c.n_base) || any_nonzero(new_steps, c.n_new);
	return d->mode == NS_DIFF_MODE_STEPS && any ? c : (struct compared){ NS_BASIS_TOTAL, NULL, NULL, 0, 0 };
}

/* Judges one metric (of a row, or of the totals) on the values c. */
static void judge(const struct work *w, struct ns_diff_metric *m, const struct compared *c)
{
	const struct ns_diff *d = w->d;
	bool significant;
	m->p = NAN;
	m->by = c->by;
	m->by_steps = c->by != NS_BASIS_TOTAL;
	if (m->by_steps) {
		double unit = c->by == NS_BASIS_PER_STEP_CALL ? 1000.0 : 1.0; /* ps per call -> ns */
		m->base_n = c->n_base;
		m->new_n = c->n_new;
		m->base_step = ns_step_stats_of(c->base, c->n_base, w->scratch);
		m->new_step = ns_step_stats_of(c->new_run, c->n_new, w->scratch);
		m->base_step.median /= unit, m->base_step.mad /= unit;
		m->new_step.median /= unit, m->new_step.mad /= unit;
		m->change_pct = ns_diff_change_pct(m->base_step.median, m->new_step.median);
		m->p = ns_mwu_p(c->base, c->n_base, c->new_run, c->n_new, NULL, &m->p_exact);
		significant = fabs(m->change_pct) > d->opts.threshold_pct && m->p < d->opts.alpha;
	} else {
		m->change_pct = ns_diff_change_pct((double)m->base_ns, (double)m->new_ns);
		significant = fabs(m->change_pct) > d->opts.threshold_pct;
	}
	if (!m->by_steps && m->base_ns == 0 && m->new_ns == 0)
		m->verdict = NS_VERDICT_NONE;
	else if (!significant)
		m->verdict = NS_VERDICT_UNCHANGED;
	else
		m->verdict = m->change_pct > 0 ? NS_VERDICT_REGRESSED : NS_VERDICT_IMPROVED;
	if (m->verdict == NS_VERDICT_NONE)
		m->by = NS_BASIS_NONE;
}

/* A row's per-step time per call on one side, in ps (the steps where it
 * has calls) into w->per_call[s]; how many. */
static size_t per_step_call(const struct work *w, enum ns_diff_side_id s, const int64_t *sums, size_t row)
{
	size_t n_steps = w->d->side[s].n_steps, n = 0;
	const int64_t *calls = w->side[s].calls + row * n_steps;
	for (size_t k = 0; k < n_steps; k++)
		if (calls[k] > 0)
			w->per_call[s][n++] = (sums[k] * 1000 + calls[k] / 2) / calls[k];
	return n;
}

/* The values --test compares metric k of a row on: the first of per-call,
 * per-step-call that --test allows and that can reach alpha, else the
 * per-step sums, else the totals. */
static struct compared row_values_compared(const struct work *w, size_t row, int k, const int64_t *base_steps,
					   const int64_t *new_steps)
{
	const struct ns_diff *d = w->d;
	const struct ns_diff_row *r = &d->rows[row];
	enum ns_diff_test t = d->opts.test;
	struct compared c;
	if ((t == NS_DIFF_TEST_PER_CALL || t == NS_DIFF_TEST_AUTO) && w->needs_calls) {
		const struct call_sample *b = &w->side[NS_DIFF_BASE].samples[row], *n = &w->side[NS_DIFF_NEW].samples[row];
		c = (struct compared){ NS_BASIS_PER_CALL, k ? b->dev : b->cpu, k ? n->dev : n->cpu, b->n, n->n };
		if (comparable(d, &c))
			return c;
	}
	if ((t == NS_DIFF_TEST_PER_STEP_CALL || t == NS_DIFF_TEST_AUTO) && d->mode == NS_DIFF_MODE_STEPS) {
		c = (struct compared){ NS_BASIS_PER_STEP_CALL, w->per_call[NS_DIFF_BASE], w->per_call[NS_DIFF_NEW],
				       r->in_base ? per_step_call(w, NS_DIFF_BASE, base_steps, row) : 0,
				       r->in_new ? per_step_call(w, NS_DIFF_NEW, new_steps, row) : 0 };
		if (comparable(d, &c))
			return c;
	}
	return steps_or_total(d, base_steps, new_steps);
}

/* A row's verdict from its metrics': a regression anywhere wins. */
enum ns_verdict ns_diff_combined_verdict(const struct ns_diff_metric *m)
{
	enum ns_verdict v = NS_VERDICT_UNCHANGED;
	for (int k = 0; k < NS_DIFF_N_METRICS; k++)
		if (m[k].verdict == NS_VERDICT_REGRESSED || (m[k].verdict == NS_VERDICT_IMPROVED && v == NS_VERDICT_UNCHANGED))
			v = m[k].verdict;
	return v;
}

static void judge_row(struct work *w, size_t row)
{
	struct ns_diff *d = w->d;
	struct ns_diff_row *r = &d->rows[row];
	size_t nb = d->side[NS_DIFF_BASE].n_steps, nn = d->side[NS_DIFF_NEW].n_steps;
	const int64_t *base_steps[NS_DIFF_N_METRICS] = { w->side[0].cpu + row * nb, w->side[0].dev + row * nb };
	const int64_t *new_steps[NS_DIFF_N_METRICS] = { w->side[1].cpu + row * nn, w->side[1].dev + row * nn };
	for (int k = 0; k < NS_DIFF_N_METRICS; k++) {
		struct ns_diff_metric *m = &r->m[k];
		struct compared c = row_values_compared(w, row, k, r->in_base ? base_steps[k] : w->zeros,
							r->in_new ? new_steps[k] : w->zeros);
		judge(w, m, &c);
		/* unmatched rows are not judged: the value is all there is */
		if (m->base_ns == 0 && m->new_ns == 0 && (!r->in_base || !r->in_new))
			m->verdict = NS_VERDICT_NONE;
		else if (!r->in_base)
			m->verdict = NS_VERDICT_NEW;
		else if (!r->in_new)
			m->verdict = NS_VERDICT_REMOVED;
		if (!r->in_base || !r->in_new)
			m->by = NS_BASIS_NONE;
	}
	r->verdict = !r->in_base ? NS_VERDICT_NEW : !r->in_new ? NS_VERDICT_REMOVED : ns_diff_combined_verdict(r->m);
	d->n_verdict[r->verdict]++;
}

static void choose_mode(struct ns_diff *d)
{
	size_t nb = d->side[NS_DIFF_BASE].n_steps, nn = d->side[NS_DIFF_NEW].n_steps;
	double min_p = ns_mwu_min_p(nb, nn);
	d->mode = NS_DIFF_MODE_THRESHOLD;
	if (nb == 0 && nn == 0)
		snprintf(d->mode_note, sizeof(d->mode_note), "neither run has ProfilerStep#N annotations");
	else if (nb == 0 || nn == 0)
		snprintf(d->mode_note, sizeof(d->mode_note), "the %s run has no ProfilerStep#N annotations",
			 nb == 0 ? "base" : "new");
	else if (nb == 1 || nn == 1)
		snprintf(d->mode_note, sizeof(d->mode_note), "single step (base %zu, new %zu)", nb, nn);
	else if (min_p >= d->opts.alpha)
		snprintf(d->mode_note, sizeof(d->mode_note),
			 "too few steps for the test (base %zu, new %zu: the smallest possible p is %.3g, not below %g)", nb,
			 nn, min_p, d->opts.alpha);
	else
		d->mode = NS_DIFF_MODE_STEPS;
}

/* Caveats the reader must see: sums over different numbers of ranks, or
 * totals over different numbers of steps. */
static void set_warning(struct ns_diff *d)
{
	const struct ns_diff_side *b = &d->side[NS_DIFF_BASE], *n = &d->side[NS_DIFF_NEW];
	size_t len = 0;
	if (b->n_traces != n->n_traces)
		len += (size_t)snprintf(d->warning, sizeof(d->warning),
					"the runs have %zu and %zu traces: every row is a sum over its run's traces",
					b->n_traces, n->n_traces);
	if (d->mode == NS_DIFF_MODE_THRESHOLD && b->n_steps != n->n_steps && len < sizeof(d->warning))
		snprintf(d->warning + len, sizeof(d->warning) - len,
			 "%sthe runs have %zu and %zu steps: totals over different numbers of steps are compared",
			 len ? "; " : "", b->n_steps, n->n_steps);
}

/* The device label: the runs' own if they agree (or only one has one). */
static void device_label(struct ns_diff *d, const struct ns_diff_input *base, const struct ns_diff_input *new_run)
{
	const struct ns_diff_input *in[2] = { base, new_run };
	for (int s = 0; s < 2; s++) {
		const char *label = in[s]->device_label ? in[s]->device_label
				    : in[s]->n	       ? ns_backend_label(in[s]->aggs[0].backend)
							: "";
		snprintf(d->side[s].device, sizeof(d->side[s].device), "%s", label);
	}
	const char *b = d->side[0].device, *n = d->side[1].device;
	snprintf(d->device, sizeof(d->device), "%s",
		 strcmp(b, n) == 0 ? (*b ? b : "device") : !*b ? n : !*n ? b : "device");
}

bool ns_diff_shows_decided_by(const struct ns_diff *d)
{
	return d->opts.test != NS_DIFF_TEST_PER_STEP;
}

bool ns_diff_shows_tests(const struct ns_diff *d)
{
	return d->mode == NS_DIFF_MODE_STEPS || ns_diff_shows_decided_by(d);
}

enum ns_diff_basis ns_diff_decided_by(const struct ns_diff_metric *m, enum ns_verdict v)
{
	for (int k = NS_DIFF_N_METRICS; k-- > 0;)
		if (m[k].verdict == v && m[k].by != NS_BASIS_NONE)
			return m[k].by;
	return NS_BASIS_NONE;
}

/* ---- sorting ---- */

/* The values shown and judged: per-step medians, or totals. */
double ns_diff_shown_base(const struct ns_diff_metric *m)
{
	return m->by_steps ? m->base_step.median : (double)m->base_ns;
}

double ns_diff_shown_new(const struct ns_diff_metric *m)
{
	return m->by_steps ? m->new_step.median : (double)m->new_ns;
}

static double abs_change(const struct ns_diff_metric *m)
{
	return fabs(ns_diff_shown_new(m) - ns_diff_shown_base(m));
}

static double pct_key(const struct ns_diff_metric *m)
{
	return isnan(m->change_pct) ? -1 : fabs(m->change_pct);
}

static double k_self_device(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return abs_change(&r->m[NS_DIFF_SELF_DEVICE]);
}

static double k_self_cpu(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return abs_change(&r->m[NS_DIFF_SELF_CPU]);
}

static double k_pct_self_device(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return pct_key(&r->m[NS_DIFF_SELF_DEVICE]);
}

static double k_pct_self_cpu(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return pct_key(&r->m[NS_DIFF_SELF_CPU]);
}

static double k_base_self_device(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return ns_diff_shown_base(&r->m[NS_DIFF_SELF_DEVICE]);
}

static double k_new_self_device(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return ns_diff_shown_new(&r->m[NS_DIFF_SELF_DEVICE]);
}

static double k_base_self_cpu(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return ns_diff_shown_base(&r->m[NS_DIFF_SELF_CPU]);
}

static double k_new_self_cpu(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return ns_diff_shown_new(&r->m[NS_DIFF_SELF_CPU]);
}

static double k_calls(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return fabs((double)(r->new_calls - r->base_calls));
}

static double k_verdict(const struct ns_diff *d, const struct ns_diff_row *r)
{
	static const double rank[NS_VERDICT__COUNT] = {
		[NS_VERDICT_REGRESSED] = 5, [NS_VERDICT_IMPROVED] = 4, [NS_VERDICT_NEW] = 3,
		[NS_VERDICT_REMOVED] = 2,   [NS_VERDICT_UNCHANGED] = 1,
	};
	(void)d;
	return rank[r->verdict];
}

/* The first two entries are the default orders (with and without device
 * time); order_rows relies on that. */
const struct ns_diff_sort_key ns_diff_sort_keys[] = {
	{ "self_device", "delta_self_device self_neuron self_cuda self_xpu self_mtia self_hpu device",
	  "largest absolute change of Self device (the default)", k_self_device },
	{ "self_cpu", "delta_self_cpu cpu", "largest absolute change of Self CPU (the default without device time)",
	  k_self_cpu },
	{ "pct_self_device", "rel_self_device", "largest relative change of Self device", k_pct_self_device },
	{ "pct_self_cpu", "rel_self_cpu", "largest relative change of Self CPU", k_pct_self_cpu },
	{ "base_self_device", "", "Self device of the base run", k_base_self_device },
	{ "new_self_device", "", "Self device of the new run", k_new_self_device },
	{ "base_self_cpu", "", "Self CPU of the base run", k_base_self_cpu },
	{ "new_self_cpu", "", "Self CPU of the new run", k_new_self_cpu },
	{ "calls", "count", "largest change of the number of calls", k_calls },
	{ "verdict", "", "regressed, improved, new, removed, unchanged", k_verdict },
	{ "name", "key", "name, A to Z", NULL },
};
const size_t ns_n_diff_sort_keys = NS_ARRAY_SIZE(ns_diff_sort_keys);

static bool alias_of(const char *aliases, const char *arg)
{
	size_t len = strlen(arg);
	for (const char *p = aliases; *p;) {
		size_t w = strcspn(p, " ");
		if (w == len && strncmp(p, arg, len) == 0)
			return true;
		p += w + (p[w] == ' ');
	}
	return false;
}

const struct ns_diff_sort_key *ns_diff_sort_key_find(const char *arg)
{
	for (size_t i = 0; i < ns_n_diff_sort_keys; i++)
		if (strcmp(ns_diff_sort_keys[i].name, arg) == 0 || alias_of(ns_diff_sort_keys[i].aliases, arg))
			return &ns_diff_sort_keys[i];
	return NULL;
}

void ns_diff_write_sort_words(FILE *out)
{
	for (size_t i = 0; i < ns_n_diff_sort_keys; i++) {
		fprintf(out, "%s\n", ns_diff_sort_keys[i].name);
		ns_write_words(out, ns_diff_sort_keys[i].aliases);
	}
}

struct sort_item {
	double key, then, other; /* the sort key, the default key, the other metric's change */
	const char *name;
	size_t row;
};

static int cmp_items(const void *x, const void *y)
{
	const struct sort_item *a = x, *b = y;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	if (a->then != b->then)
		return a->then > b->then ? -1 : 1;
	if (a->other != b->other)
		return a->other > b->other ? -1 : 1;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->row > b->row) - (a->row < b->row);
}

/* Largest first; NULL value: by name. Ties: the default key, the other
 * metric, the name, first seen. */
static int order_rows(struct ns_diff *d, const struct ns_diff_sort_key *sort)
{
	const struct ns_diff_sort_key *first = &ns_diff_sort_keys[d->has_device_time ? 0 : 1];
	const struct ns_diff_sort_key *second = &ns_diff_sort_keys[d->has_device_time ? 1 : 0];
	struct sort_item *items = malloc((d->n_rows + 1) * sizeof(*items));
	d->order = malloc((d->n_rows + 1) * sizeof(*d->order));
	if (!items || !d->order) {
		free(items);
		return -1;
	}
	if (!sort)
		sort = first;
	for (size_t i = 0; i < d->n_rows; i++) {
		const struct ns_diff_row *r = &d->rows[i];
		items[i].key = sort->value ? sort->value(d, r) : 0;
		items[i].then = first->value(d, r);
		items[i].other = second->value(d, r);
		items[i].name = ns_strtab_get(&d->strings, r->name);
		items[i].row = i;
		if (!sort->value) /* by name: the name decides first */
			items[i].then = items[i].other = 0;
	}
	ns_sort(items, d->n_rows, sizeof(*items), cmp_items);
	for (size_t i = 0; i < d->n_rows; i++)
		d->order[i] = items[i].row;
	free(items);
	return 0;
}

/* ---- the computation ---- */

/* The per-step cells, per-call samples and scratch of w, once the steps
 * and the largest number of rows are known. */
static int alloc_work(struct work *w)
{
	size_t max_steps = 0;
	for (int s = 0; s < 2; s++) {
		size_t n_steps = w->d->side[s].n_steps;
		struct side_work *sw = &w->side[s];
		max_steps = n_steps > max_steps ? n_steps : max_steps;
		sw->cpu = calloc(w->cap_rows * n_steps + 1, sizeof(int64_t));
		sw->dev = calloc(w->cap_rows * n_steps + 1, sizeof(int64_t));
		sw->calls = calloc(w->cap_rows * n_steps + 1, sizeof(int64_t));
		sw->total_cpu = calloc(n_steps + 1, sizeof(int64_t));
		sw->total_dev = calloc(n_steps + 1, sizeof(int64_t));
		w->per_call[s] = malloc((n_steps + 1) * sizeof(int64_t));
		if (w->needs_calls && !(sw->samples = calloc(w->cap_rows + 1, sizeof(*sw->samples))))
			return -1;
		if (!sw->cpu || !sw->dev || !sw->calls || !sw->total_cpu || !sw->total_dev || !w->per_call[s])
			return -1;
	}
	/* scratch for the medians of per-step values or of per-call samples */
	w->scratch = malloc(((w->needs_calls && max_steps < NS_DIFF_CALL_SAMPLES ? NS_DIFF_CALL_SAMPLES : max_steps) + 1) *
			    sizeof(*w->scratch));
	w->zeros = calloc(max_steps + 1, sizeof(*w->zeros));
	return w->scratch && w->zeros ? 0 : -1;
}

static void release_work(struct work *w)
{
	ns_i64map_release(&w->row_of_key);
	for (int s = 0; s < 2; s++) {
		struct side_work *sw = &w->side[s];
		ns_i64map_release(&sw->column_of_number);
		free(sw->cpu);
		free(sw->dev);
		free(sw->calls);
		free(w->per_call[s]);
		for (size_t i = 0; sw->samples && i < w->cap_rows; i++) {
			free(sw->samples[i].cpu);
			free(sw->samples[i].dev);
		}
		free(sw->samples);
		free(sw->total_cpu);
		free(sw->total_dev);
	}
	free(w->scratch);
	free(w->zeros);
}

int ns_diff_compute(const struct ns_diff_input *base, const struct ns_diff_input *new_run,
		    const struct ns_diff_opts *o, const struct ns_diff_sort_key *sort, struct ns_diff *out,
		    struct ns_error *err)
{
	const struct ns_diff_input *in[2] = { base, new_run };
	struct work w = { .d = out };
	int rc = NS_ERR_NOMEM;

	memset(out, 0, sizeof(*out));
	ns_strtab_init(&out->strings);
	ns_i64map_init(&w.row_of_key);
	out->opts = *o;
	w.needs_calls = o->test == NS_DIFF_TEST_PER_CALL || o->test == NS_DIFF_TEST_AUTO;
	for (int s = 0; s < 2; s++) {
		ns_i64map_init(&w.side[s].column_of_number);
		out->side[s].label = in[s]->label;
		out->side[s].n_traces = in[s]->n;
		for (size_t i = 0; i < in[s]->n; i++)
			w.cap_rows += in[s]->aggs[i].n_avgs;
	}
	out->rows = calloc(w.cap_rows + 1, sizeof(*out->rows));
	if (!out->rows || side_steps(&w, NS_DIFF_BASE, base) || side_steps(&w, NS_DIFF_NEW, new_run))
		goto out;
	if (alloc_work(&w) || fold_side(&w, NS_DIFF_BASE, base) || fold_side(&w, NS_DIFF_NEW, new_run))
		goto out;

	device_label(out, base, new_run);
	for (size_t i = 0; i < out->n_rows; i++) {
		const struct ns_diff_row *r = &out->rows[i];
		out->side[0].has_device_time |= r->m[NS_DIFF_SELF_DEVICE].base_ns != 0;
		out->side[1].has_device_time |= r->m[NS_DIFF_SELF_DEVICE].new_ns != 0;
		for (int k = 0; k < NS_DIFF_N_METRICS; k++) {
			if (k == NS_DIFF_SELF_DEVICE && !r->counts_for_device_total)
				continue;
			out->total[k].base_ns += r->m[k].base_ns;
			out->total[k].new_ns += r->m[k].new_ns;
		}
	}
	out->has_device_time = out->side[0].has_device_time || out->side[1].has_device_time;
	choose_mode(out);
	set_warning(out);
	for (size_t i = 0; i < out->n_rows; i++)
		judge_row(&w, i);
	struct compared total_cpu = steps_or_total(out, w.side[0].total_cpu, w.side[1].total_cpu);
	struct compared total_dev = steps_or_total(out, w.side[0].total_dev, w.side[1].total_dev);
	judge(&w, &out->total[NS_DIFF_SELF_CPU], &total_cpu);
	judge(&w, &out->total[NS_DIFF_SELF_DEVICE], &total_dev);
	for (size_t i = 0; i < out->n_rows; i++)
		for (int k = 0; k < NS_DIFF_N_METRICS; k++)
			if (out->rows[i].m[k].by_steps && isnan(out->rows[i].m[k].p))
				goto out; /* the exact test ran out of memory */
	if (order_rows(out, sort))
		goto out;
	rc = NS_OK;
out:
	if (rc) {
		ns_error_set(err, rc, "out of memory while comparing %s with %s", base->label, new_run->label);
		ns_diff_release(out);
	}
	release_work(&w);
	return rc;
}

void ns_diff_release(struct ns_diff *d)
{
	ns_strtab_release(&d->strings);
	free(d->rows);
	free(d->order);
	for (int s = 0; s < 2; s++)
		free(d->side[s].step_numbers);
	memset(d, 0, sizeof(*d));
}

size_t ns_diff_count(const struct ns_diff *d, unsigned verdict_mask)
{
	size_t n = 0;
	for (int v = 0; v < NS_VERDICT__COUNT; v++)
		if (verdict_mask & (1u << v))
			n += d->n_verdict[v];
	return n;
}
