/* The regression diff (docs/diff.md): matching, statistics, verdicts, and
 * the table / Markdown / JSON / CSV forms. */
#include "report/diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/i64map.h"
#include "common/vec.h"

#define NO_ROW (-1)
#define KEY_SEP '\x1f' /* joins the key's fields into one interned string */

static const char *const verdict_names[NS_VERDICT__COUNT] = {
	[NS_VERDICT_UNCHANGED] = "unchanged", [NS_VERDICT_REGRESSED] = "regressed",
	[NS_VERDICT_IMPROVED] = "improved",   [NS_VERDICT_NEW] = "new",
	[NS_VERDICT_REMOVED] = "removed",     [NS_VERDICT_NONE] = "-",
};

static const char *const metric_keys[NS_DIFF_N_METRICS] = { "self_cpu", "self_device" };

const char *ns_verdict_name(enum ns_verdict v)
{
	return v < NS_VERDICT__COUNT ? verdict_names[v] : "?";
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double sorted_median(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

struct ns_step_stats ns_step_stats_of(const int64_t *v, size_t n, double *scratch)
{
	struct ns_step_stats st = { 0, 0 };
	if (n == 0)
		return st;
	for (size_t i = 0; i < n; i++)
		scratch[i] = (double)v[i];
	qsort(scratch, n, sizeof(*scratch), cmp_double);
	st.median = sorted_median(scratch, n);
	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs((double)v[i] - st.median);
	qsort(scratch, n, sizeof(*scratch), cmp_double);
	st.mad = sorted_median(scratch, n);
	return st;
}

double ns_mwu_min_p(size_t na, size_t nb)
{
	double c = 1; /* C(na + nb, na), as a double (exact far past the sizes used) */
	for (size_t i = 1; i <= na; i++)
		c = c * (double)(nb + i) / (double)i;
	return na && nb ? fmin(1.0, 2.0 / c) : 1.0;
}

struct pooled {
	int64_t value;
	bool in_a;
};

static int cmp_pooled(const void *x, const void *y)
{
	const struct pooled *a = x, *b = y;
	return a->value < b->value ? -1 : a->value > b->value;
}

/* Two-sided p from the null distribution `ways[0..n_ways)` of a statistic
 * and its observed index: twice the smaller tail, at most 1. */
static double two_sided(const double *ways, size_t n_ways, size_t observed)
{
	double below = 0, above = 0, total = 0;
	for (size_t s = 0; s < n_ways; s++) {
		total += ways[s];
		below += s <= observed ? ways[s] : 0;
		above += s >= observed ? ways[s] : 0;
	}
	return fmin(1.0, 2.0 * fmin(below, above) / total);
}

/* Exact p without ties: U's null distribution is the coefficient list of
 * the Gaussian binomial [na + nb choose na]_q = prod_{i=1..na} (1 - q^(nb+i))
 * / (1 - q^i), built one factor at a time (each partial product is itself a
 * Gaussian binomial, so the counts stay integers, at most C(40, 20): exact
 * in doubles). O(na * na * nb). NAN on OOM. */
static double exact_p_distinct(size_t na, size_t nb, size_t u)
{
	size_t degree = na * nb;
	double *ways = calloc(degree + 1, sizeof(*ways));
	double p = NAN;
	if (!ways)
		return NAN;
	ways[0] = 1;
	for (size_t i = 1; i <= na; i++) {
		size_t up = nb + i, deg = (i - 1) * nb; /* degree so far */
		for (size_t d = deg + 1; d-- > 0;)      /* times (1 - q^up) */
			if (d + up <= degree)
				ways[d + up] -= ways[d];
		for (size_t d = i; d <= degree; d++)    /* divided by (1 - q^i) */
			ways[d] += ways[d - i];
	}
	p = two_sided(ways, degree + 1, u);
	free(ways);
	return p;
}

/* Exact p with ties: the distribution of the doubled rank sum of `na` values
 * drawn from the pooled doubled mid-ranks `ranks2` (ascending), counted by
 * subset-sum dynamic programming. NAN on OOM. */
static double exact_p_ties(const int64_t *ranks2, size_t n, size_t na, int64_t sum_a2)
{
	size_t max_sum = 0, seen_sum = 0;
	for (size_t i = 0; i < n; i++)
		max_sum += (size_t)ranks2[i];
	size_t stride = max_sum + 1;
	double *ways = calloc((na + 1) * stride, sizeof(*ways)); /* ways[k * stride + s] */
	double p;
	if (!ways)
		return NAN;
	ways[0] = 1;
	for (size_t i = 0; i < n; i++) {
		size_t r = (size_t)ranks2[i];
		seen_sum += r; /* no subset of the first i + 1 values sums higher */
		/* sizes that can still grow to na with the n - i - 1 values left */
		size_t k_min = na > n - i ? na - (n - i) + 1 : 1;
		for (size_t k = (i + 1 < na ? i + 1 : na); k >= k_min; k--)
			for (size_t s = seen_sum; s >= r; s--)
				ways[k * stride + s] += ways[(k - 1) * stride + s - r];
	}
	p = two_sided(ways + na * stride, stride, (size_t)sum_a2);
	free(ways);
	return p;
}

double ns_mwu_p(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *u, bool *exact)
{
	size_t n = na + nb;
	struct pooled *pool = malloc((n + 1) * sizeof(*pool));
	int64_t *ranks2 = malloc((n + 1) * sizeof(*ranks2)); /* 2 x mid-rank: integers */
	int64_t sum_a2 = 0;
	double ties = 0, p = NAN, u_a;
	if (exact)
		*exact = false;
	if (u)
		*u = 0;
	if (!pool || !ranks2)
		goto out;
	if (na == 0 || nb == 0) {
		p = 1;
		goto out;
	}
	for (size_t i = 0; i < na; i++)
		pool[i] = (struct pooled){ a[i], true };
	for (size_t i = 0; i < nb; i++)
		pool[na + i] = (struct pooled){ b[i], false };
	qsort(pool, n, sizeof(*pool), cmp_pooled);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && pool[j + 1].value == pool[i].value)
			j++;
		double t = (double)(j - i + 1);
		ties += t * t * t - t;
		for (size_t k = i; k <= j; k++) {
			ranks2[k] = (int64_t)(i + 1 + j + 1); /* positions i+1 .. j+1, averaged, doubled */
			sum_a2 += pool[k].in_a ? ranks2[k] : 0;
		}
		i = j + 1;
	}
	u_a = (double)(sum_a2 - (int64_t)(na * (na + 1))) / 2.0;
	if (u)
		*u = u_a;
	if (n <= NS_MWU_EXACT_MAX) {
		p = ties == 0 ? exact_p_distinct(na, nb, (size_t)u_a) : exact_p_ties(ranks2, n, na, sum_a2);
		if (exact)
			*exact = !isnan(p);
	} else {
		double mean = (double)na * (double)nb / 2.0;
		double var = (double)na * (double)nb / 12.0 * ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
		double z = var > 0 ? (fabs(u_a - mean) - 0.5) / sqrt(var) : 0;
		p = var > 0 ? fmin(1.0, erfc(fmax(z, 0.0) / sqrt(2.0))) : 1.0;
	}
out:
	free(pool);
	free(ranks2);
	return p;
}

/* ---- matching ---- */

/* Per-step sums of one side, [row * n_steps + column], while building. */
struct side_work {
	struct ns_i64map column_of_number;
	int64_t *cpu, *dev;
	int64_t *total_cpu, *total_dev; /* per step, over all rows (device: footer rows) */
};

struct work {
	struct ns_diff *d;
	struct ns_i64map row_of_key; /* interned key -> row */
	struct side_work side[2];
	size_t cap_rows;
	double *scratch;
	int64_t *zeros;
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

/* Adds every row of every trace of one side. */
static int fold_side(struct work *w, enum ns_diff_side_id s, const struct ns_diff_input *in)
{
	struct ns_diff *d = w->d;
	struct side_work *sw = &w->side[s];
	size_t n_steps = d->side[s].n_steps;
	for (size_t i = 0; i < in->n; i++) {
		const struct ns_agg *agg = &in->aggs[i];
		const struct ns_steps *st = &in->steps[i];
		for (size_t a = 0; a < agg->n_avgs; a++) {
			const struct ns_avg *avg = &agg->avgs[a];
			int64_t row = row_of(w, agg->trace, avg);
			if (row == NO_ROW)
				return -1;
			struct ns_diff_row *r = &d->rows[row];
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
				sw->cpu[(size_t)row * n_steps + col] += st->self_cpu_ns[cell];
				sw->dev[(size_t)row * n_steps + col] += st->self_device_ns[cell];
				sw->total_cpu[col] += st->self_cpu_ns[cell];
				sw->total_dev[col] += footer ? st->self_device_ns[cell] : 0;
			}
		}
	}
	return 0;
}

/* ---- judging ---- */

static double change_pct(double base, double now)
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

/* Judges one metric (of a row, or of the totals); the steps of a run that
 * lacks the row are zeros. */
static void judge(const struct work *w, struct ns_diff_metric *m, const int64_t *base_steps,
		  const int64_t *new_steps)
{
	const struct ns_diff *d = w->d;
	size_t nb = d->side[NS_DIFF_BASE].n_steps, nn = d->side[NS_DIFF_NEW].n_steps;
	bool significant;
	m->p = NAN;
	m->by_steps = d->mode == NS_DIFF_MODE_STEPS && (any_nonzero(base_steps, nb) || any_nonzero(new_steps, nn));
	if (m->by_steps) {
		m->base_step = ns_step_stats_of(base_steps, nb, w->scratch);
		m->new_step = ns_step_stats_of(new_steps, nn, w->scratch);
		m->change_pct = change_pct(m->base_step.median, m->new_step.median);
		m->p = ns_mwu_p(base_steps, nb, new_steps, nn, NULL, &m->p_exact);
		significant = fabs(m->change_pct) > d->opts.threshold_pct && m->p < d->opts.alpha;
	} else {
		m->change_pct = change_pct((double)m->base_ns, (double)m->new_ns);
		significant = fabs(m->change_pct) > d->opts.threshold_pct;
	}
	if (!m->by_steps && m->base_ns == 0 && m->new_ns == 0)
		m->verdict = NS_VERDICT_NONE;
	else if (!significant)
		m->verdict = NS_VERDICT_UNCHANGED;
	else
		m->verdict = m->change_pct > 0 ? NS_VERDICT_REGRESSED : NS_VERDICT_IMPROVED;
}

/* A row's verdict from its metrics': a regression anywhere wins. */
static enum ns_verdict combined_verdict(const struct ns_diff_metric *m)
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
		judge(w, m, r->in_base ? base_steps[k] : w->zeros, r->in_new ? new_steps[k] : w->zeros);
		/* unmatched rows are not judged: the value is all there is */
		if (m->base_ns == 0 && m->new_ns == 0 && (!r->in_base || !r->in_new))
			m->verdict = NS_VERDICT_NONE;
		else if (!r->in_base)
			m->verdict = NS_VERDICT_NEW;
		else if (!r->in_new)
			m->verdict = NS_VERDICT_REMOVED;
	}
	r->verdict = !r->in_base ? NS_VERDICT_NEW : !r->in_new ? NS_VERDICT_REMOVED : combined_verdict(r->m);
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

/* ---- sorting ---- */

/* The values shown and judged: per-step medians, or totals. */
static double shown_base(const struct ns_diff_metric *m)
{
	return m->by_steps ? m->base_step.median : (double)m->base_ns;
}

static double shown_new(const struct ns_diff_metric *m)
{
	return m->by_steps ? m->new_step.median : (double)m->new_ns;
}

static double abs_change(const struct ns_diff_metric *m)
{
	return fabs(shown_new(m) - shown_base(m));
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
	return shown_base(&r->m[NS_DIFF_SELF_DEVICE]);
}

static double k_new_self_device(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return shown_new(&r->m[NS_DIFF_SELF_DEVICE]);
}

static double k_base_self_cpu(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return shown_base(&r->m[NS_DIFF_SELF_CPU]);
}

static double k_new_self_cpu(const struct ns_diff *d, const struct ns_diff_row *r)
{
	(void)d;
	return shown_new(&r->m[NS_DIFF_SELF_CPU]);
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
	qsort(items, d->n_rows, sizeof(*items), cmp_items);
	for (size_t i = 0; i < d->n_rows; i++)
		d->order[i] = items[i].row;
	free(items);
	return 0;
}

/* ---- the computation ---- */

int ns_diff_compute(const struct ns_diff_input *base, const struct ns_diff_input *new_run,
		    const struct ns_diff_opts *o, const struct ns_diff_sort_key *sort, struct ns_diff *out,
		    struct ns_error *err)
{
	const struct ns_diff_input *in[2] = { base, new_run };
	struct work w = { .d = out };
	size_t max_steps = 0;
	int rc = NS_ERR_NOMEM;

	memset(out, 0, sizeof(*out));
	ns_strtab_init(&out->strings);
	ns_i64map_init(&w.row_of_key);
	out->opts = *o;
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
	for (int s = 0; s < 2; s++) {
		size_t n_steps = out->side[s].n_steps;
		max_steps = n_steps > max_steps ? n_steps : max_steps;
		w.side[s].cpu = calloc(w.cap_rows * n_steps + 1, sizeof(int64_t));
		w.side[s].dev = calloc(w.cap_rows * n_steps + 1, sizeof(int64_t));
		w.side[s].total_cpu = calloc(n_steps + 1, sizeof(int64_t));
		w.side[s].total_dev = calloc(n_steps + 1, sizeof(int64_t));
		if (!w.side[s].cpu || !w.side[s].dev || !w.side[s].total_cpu || !w.side[s].total_dev)
			goto out;
	}
	w.scratch = malloc((max_steps + 1) * sizeof(*w.scratch));
	w.zeros = calloc(max_steps + 1, sizeof(*w.zeros));
	if (!w.scratch || !w.zeros || fold_side(&w, NS_DIFF_BASE, base) || fold_side(&w, NS_DIFF_NEW, new_run))
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
	judge(&w, &out->total[NS_DIFF_SELF_CPU], w.side[0].total_cpu, w.side[1].total_cpu);
	judge(&w, &out->total[NS_DIFF_SELF_DEVICE], w.side[0].total_dev, w.side[1].total_dev);
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
	ns_i64map_release(&w.row_of_key);
	for (int s = 0; s < 2; s++) {
		ns_i64map_release(&w.side[s].column_of_number);
		free(w.side[s].cpu);
		free(w.side[s].dev);
		free(w.side[s].total_cpu);
		free(w.side[s].total_dev);
	}
	free(w.scratch);
	free(w.zeros);
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

/* ---- formatting helpers ---- */

/* µs with 3 decimals from a (possibly half-) ns value, rounded to the ns
 * (half to even: nearbyint in the default rounding mode). */
static void fmt_us_d(char *buf, size_t n, double ns)
{
	ns_format_us(buf, n, (int64_t)nearbyint(ns));
}

static void fmt_signed_us(char *buf, size_t n, double ns)
{
	char mag[32];
	fmt_us_d(mag, sizeof(mag), fabs(ns));
	snprintf(buf, n, "%s%s", ns < 0 ? "-" : "+", mag);
}

static void fmt_pct(char *buf, size_t n, double pct)
{
	if (isnan(pct))
		snprintf(buf, n, "-");
	else if (isinf(pct))
		snprintf(buf, n, "%s", pct > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, n, "%+.1f%%", pct);
}

static void fmt_p(char *buf, size_t n, const struct ns_diff_metric *m)
{
	if (isnan(m->p))
		snprintf(buf, n, "%s", m->by_steps || m->verdict == NS_VERDICT_NONE ? "-" : "total");
	else if (m->p < 0.0001)
		snprintf(buf, n, "<0.0001");
	else
		snprintf(buf, n, "%.4f", m->p);
}

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

/* ---- text table ---- */

#define MAX_COLS 20
#define CELL 48

struct grid {
	size_t n_cols;
	const char *group[MAX_COLS]; /* printed above the first column of a group */
	char head[MAX_COLS][CELL];
	size_t width[MAX_COLS];
	char (*cells)[MAX_COLS][CELL]; /* one line per row, then the total */
	size_t n_lines;
};

static void grid_col(struct grid *g, const char *group, const char *head)
{
	g->group[g->n_cols] = group;
	snprintf(g->head[g->n_cols], CELL, "%s", head);
	g->width[g->n_cols] = strlen(head);
	g->n_cols++;
}

/* Fills one line of cells: verdict, on, calls, then each metric. */
static void grid_line(struct grid *g, const struct ns_diff *d, enum ns_verdict verdict, const char *on,
		      int64_t base_calls, int64_t new_calls, const struct ns_diff_metric *m)
{
	char(*c)[CELL] = g->cells[g->n_lines++];
	size_t k = 0;
	snprintf(c[k++], CELL, "%s", ns_verdict_name(verdict));
	snprintf(c[k++], CELL, "%s", on);
	snprintf(c[k++], CELL, "%" PRId64, base_calls);
	snprintf(c[k++], CELL, "%" PRId64, new_calls);
	for (int i = 0; i < n_metrics_shown(d); i++) {
		const struct ns_diff_metric *mi = &m[i];
		fmt_us_d(c[k++], CELL, shown_base(mi));
		if (d->mode == NS_DIFF_MODE_STEPS) {
			if (mi->by_steps)
				fmt_us_d(c[k], CELL, mi->base_step.mad);
			else
				snprintf(c[k], CELL, "-");
			k++;
		}
		fmt_us_d(c[k++], CELL, shown_new(mi));
		if (d->mode == NS_DIFF_MODE_STEPS) {
			if (mi->by_steps)
				fmt_us_d(c[k], CELL, mi->new_step.mad);
			else
				snprintf(c[k], CELL, "-");
			k++;
		}
		if (mi->verdict == NS_VERDICT_NONE)
			snprintf(c[k++], CELL, "-");
		else
			fmt_signed_us(c[k++], CELL, shown_new(mi) - shown_base(mi));
		fmt_pct(c[k++], CELL, mi->change_pct);
		if (d->mode == NS_DIFF_MODE_STEPS)
			fmt_p(c[k++], CELL, mi);
	}
	for (size_t i = 0; i < k; i++) {
		size_t l = strlen(c[i]);
		g->width[i] = l > g->width[i] ? l : g->width[i];
	}
}

static void grid_print_cells(FILE *out, const struct grid *g, char (*c)[CELL])
{
	for (size_t k = 0; k < g->n_cols; k++)
		fprintf(out, k < 2 ? "%-*s  " : "%*s  ", (int)g->width[k], c[k]);
}

static void grid_rule(FILE *out, const struct grid *g)
{
	for (size_t k = 0; k < g->n_cols; k++) {
		for (size_t i = 0; i < g->width[k]; i++)
			fputc('-', out);
		fputs("  ", out);
	}
	fputs("----\n", out);
}

static int write_text(FILE *out, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	static const enum ns_verdict verdict_ids[] = { NS_VERDICT_REGRESSED, NS_VERDICT_IMPROVED, NS_VERDICT_NEW,
						       NS_VERDICT_REMOVED, NS_VERDICT_UNCHANGED };
	struct grid g = { 0 };
	char groups[NS_DIFF_N_METRICS][128], label[80], text[1024];
	size_t *shown = malloc((d->n_rows + 1) * sizeof(*shown)), n_shown = 0;
	int rc = -1;

	g.cells = malloc((d->n_rows + 2) * sizeof(*g.cells));
	if (!shown || !g.cells)
		goto out;
	grid_col(&g, NULL, "verdict");
	grid_col(&g, NULL, "on");
	grid_col(&g, "calls", "base");
	grid_col(&g, NULL, "new");
	for (int k = 0; k < n_metrics_shown(d); k++) {
		snprintf(groups[k], sizeof(groups[k]), "%s (us%s)", metric_label(d, k, label, sizeof(label)),
			 d->mode == NS_DIFF_MODE_STEPS ? " per step: median, MAD" : ", total");
		grid_col(&g, groups[k], "base");
		if (d->mode == NS_DIFF_MODE_STEPS)
			grid_col(&g, NULL, "MAD");
		grid_col(&g, NULL, "new");
		if (d->mode == NS_DIFF_MODE_STEPS)
			grid_col(&g, NULL, "MAD");
		grid_col(&g, NULL, "change");
		grid_col(&g, NULL, "%");
		if (d->mode == NS_DIFF_MODE_STEPS)
			grid_col(&g, NULL, "p");
	}
	for (size_t i = 0; i < d->n_rows && (o->row_limit < 0 || (long)n_shown < o->row_limit); i++) {
		size_t row = d->order[i];
		const struct ns_diff_row *r = &d->rows[row];
		if (!row_shown(d, row, o))
			continue;
		shown[n_shown++] = row;
		grid_line(&g, d, r->verdict, r->on_device ? d->device : "CPU", r->base_calls, r->new_calls, r->m);
	}
	int64_t calls[2] = { 0, 0 };
	for (size_t i = 0; i < d->n_rows; i++) {
		calls[0] += d->rows[i].base_calls;
		calls[1] += d->rows[i].new_calls;
	}
	grid_line(&g, d, combined_verdict(d->total), "", calls[0], calls[1], d->total);

	describe_side(d, 0, text, sizeof(text));
	fputs("base: ", out);
	ns_fputs_visible(d->side[0].label, out);
	fprintf(out, " (%s)\n", text);
	describe_side(d, 1, text, sizeof(text));
	fputs("new:  ", out);
	ns_fputs_visible(d->side[1].label, out);
	fprintf(out, " (%s)\n", text);
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
	/* the group labels, each over the first column of its group */
	size_t col = 0, cursor = 0;
	for (size_t k = 0; k < g.n_cols; k++) {
		if (g.group[k] && cursor <= col) {
			fprintf(out, "%*s%s", (int)(col - cursor), "", g.group[k]);
			cursor = col + strlen(g.group[k]);
		}
		col += g.width[k] + 2;
	}
	fputc('\n', out);
	grid_print_cells(out, &g, g.head);
	fputs("name\n", out);
	grid_rule(out, &g);
	for (size_t i = 0; i < n_shown; i++) {
		char *title = row_title(d, &d->rows[shown[i]]);
		if (!title)
			goto out;
		grid_print_cells(out, &g, g.cells[i]);
		ns_fputs_visible(title, out);
		fputc('\n', out);
		free(title);
	}
	grid_rule(out, &g);
	grid_print_cells(out, &g, g.cells[g.n_lines - 1]);
	fputs("[total]\n", out);
	fputs("\nverdicts:", out);
	for (size_t v = 0; v < NS_ARRAY_SIZE(verdict_ids); v++)
		fprintf(out, "%s %zu %s", v ? "," : "", d->n_verdict[verdict_ids[v]], ns_verdict_name(verdict_ids[v]));
	if (n_shown < d->n_rows)
		fprintf(out, " (%zu of %zu rows shown)", n_shown, d->n_rows);
	fputc('\n', out);
	rc = 0;
out:
	free(shown);
	free(g.cells);
	return rc;
}

/* ---- Markdown (a pull-request comment) ---- */

static void md_metric(FILE *out, const struct ns_diff *d, const struct ns_diff_metric *m)
{
	char b[48], n[48], pct[48], p[48], cell[200];
	fmt_us_d(b, sizeof(b), shown_base(m));
	fmt_us_d(n, sizeof(n), shown_new(m));
	fmt_pct(pct, sizeof(pct), m->change_pct);
	snprintf(cell, sizeof(cell), "%s → %s", b, n);
	ns_md_cell(out, cell);
	bool strong = m->verdict == NS_VERDICT_REGRESSED || m->verdict == NS_VERDICT_IMPROVED;
	if (d->mode == NS_DIFF_MODE_STEPS && !isnan(m->p)) {
		fmt_p(p, sizeof(p), m);
		snprintf(cell, sizeof(cell), "%s%s%s (p %s)", strong ? "**" : "", pct, strong ? "**" : "", p);
	} else {
		snprintf(cell, sizeof(cell), "%s%s%s", strong ? "**" : "", pct, strong ? "**" : "");
	}
	/* written raw: the bold markers must not be escaped */
	fprintf(out, "| %s ", cell);
}

static int md_section(FILE *out, const struct ns_diff *d, enum ns_verdict v, const char *heading,
		      const struct ns_diff_write_opts *o)
{
	char label[80];
	size_t n = d->n_verdict[v], shown = 0;
	if (n == 0)
		return 0;
	fprintf(out, "\n#### %s (%zu)\n\n| Name | Calls ", heading, n);
	for (int k = 0; k < n_metrics_shown(d); k++) {
		ns_md_cell(out, metric_label(d, k, label, sizeof(label)));
		fputs("| Δ ", out);
	}
	fputs("|\n|:-----|------:", out);
	for (int k = 0; k < n_metrics_shown(d); k++)
		fputs("|------:|------:", out);
	fputs("|\n", out);
	for (size_t i = 0; i < d->n_rows && (o->top_n < 0 || (long)shown < o->top_n); i++) {
		const struct ns_diff_row *r = &d->rows[d->order[i]];
		char calls[64];
		if (r->verdict != v)
			continue;
		char *title = row_title(d, r);
		if (!title)
			return -1;
		shown++;
		ns_md_cell(out, title);
		free(title);
		snprintf(calls, sizeof(calls), "%" PRId64 " → %" PRId64, r->base_calls, r->new_calls);
		ns_md_cell(out, calls);
		for (int k = 0; k < n_metrics_shown(d); k++)
			md_metric(out, d, &r->m[k]);
		fputs("|\n", out);
	}
	if (shown < n)
		fprintf(out, "\n_%zu more not shown._\n", n - shown);
	return 0;
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

static int write_markdown(FILE *out, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	char text[1024], label[80];
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
	fputs("\n| Total ", out);
	for (int k = 0; k < n_metrics_shown(d); k++) {
		ns_md_cell(out, metric_label(d, k, label, sizeof(label)));
		fputs("| Δ ", out);
	}
	fputs("|\n|:------", out);
	for (int k = 0; k < n_metrics_shown(d); k++)
		fputs("|------:|------:", out);
	fputs("|\n| all rows ", out);
	for (int k = 0; k < n_metrics_shown(d); k++)
		md_metric(out, d, &d->total[k]);
	fputs("|\n", out);
	if (md_section(out, d, NS_VERDICT_REGRESSED, "Regressions", o) ||
	    md_section(out, d, NS_VERDICT_IMPROVED, "Improvements", o) || md_section(out, d, NS_VERDICT_NEW, "New", o) ||
	    md_section(out, d, NS_VERDICT_REMOVED, "Removed", o))
		return -1;
	return 0;
}

/* ---- JSON (docs/diff.md "JSON contract") ---- */

static void json_us(FILE *out, double ns)
{
	char buf[48];
	fmt_us_d(buf, sizeof(buf), ns);
	fputs(buf, out);
}

/* A percentage (3 decimals) or a p-value (6 significant digits); `missing`
 * for NaN and the infinite change from 0. */
static void put_number(FILE *out, double v, bool is_p, const char *missing)
{
	if (isnan(v) || isinf(v))
		fputs(missing, out);
	else if (is_p)
		fprintf(out, "%.6g", v);
	else
		fprintf(out, "%.3f", v);
}

static void json_metric(FILE *out, const struct ns_diff_metric *m)
{
	fputs("{\"base_us\": ", out);
	json_us(out, (double)m->base_ns);
	fputs(", \"new_us\": ", out);
	json_us(out, (double)m->new_ns);
	fputs(", \"change_us\": ", out);
	json_us(out, (double)(m->new_ns - m->base_ns));
	fputs(", \"change_pct\": ", out);
	put_number(out, change_pct((double)m->base_ns, (double)m->new_ns), false, "null");
	fputs(", \"steps\": ", out);
	if (m->by_steps) {
		fputs("{\"base_median_us\": ", out);
		json_us(out, m->base_step.median);
		fputs(", \"base_mad_us\": ", out);
		json_us(out, m->base_step.mad);
		fputs(", \"new_median_us\": ", out);
		json_us(out, m->new_step.median);
		fputs(", \"new_mad_us\": ", out);
		json_us(out, m->new_step.mad);
		fputs(", \"change_us\": ", out);
		json_us(out, m->new_step.median - m->base_step.median);
		fputs(", \"change_pct\": ", out);
		put_number(out, m->change_pct, false, "null");
		fputs(", \"p\": ", out);
		put_number(out, m->p, true, "null");
		fprintf(out, ", \"p_exact\": %s}", m->p_exact ? "true" : "false");
	} else {
		fputs("null", out);
	}
	fprintf(out, ", \"judged_on\": %s, \"verdict\": \"%s\"}",
		m->verdict == NS_VERDICT_NONE ? "null" : m->by_steps ? "\"steps\"" : "\"total\"",
		ns_verdict_name(m->verdict));
}

static void json_side(FILE *out, const struct ns_diff *d, int s)
{
	const struct ns_diff_side *side = &d->side[s];
	fputs("{\"input\": ", out);
	ns_json_string(out, side->label);
	fprintf(out, ", \"traces\": %zu, \"steps\": %zu, \"step_numbers\": [", side->n_traces, side->n_steps);
	for (size_t k = 0; k < side->n_steps; k++)
		fprintf(out, "%s%" PRId64, k ? ", " : "", side->step_numbers[k]);
	fputs("], \"device\": ", out);
	ns_json_string(out, side->device);
	fputc('}', out);
}

static void write_json(FILE *out, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	char text[1024];
	long printed = 0;
	bool first = true;
	fputs("{\"schema\": \"neuron-stats-diff/1\",\n \"base\": ", out);
	json_side(out, d, 0);
	fputs(",\n \"new\": ", out);
	json_side(out, d, 1);
	fputs(",\n \"device\": ", out);
	ns_json_string(out, d->device);
	fprintf(out, ",\n \"group_by\": {\"overload\": %s, \"shape\": %s, \"stack\": %d, \"neff\": %s}",
		d->opts.group_by & NS_GROUP_OVERLOAD ? "true" : "false", d->opts.group_by & NS_GROUP_SHAPE ? "true" : "false",
		d->opts.stack_n, d->opts.group_by & NS_GROUP_NEFF ? "true" : "false");
	fprintf(out, ",\n \"rule\": {\"mode\": \"%s\", \"threshold_pct\": %g, \"alpha\": %g, "
		     "\"test\": \"mann-whitney-u-two-sided\", \"exact_max_steps\": %d, \"note\": ",
		d->mode == NS_DIFF_MODE_STEPS ? "steps" : "threshold", d->opts.threshold_pct, d->opts.alpha,
		NS_MWU_EXACT_MAX);
	ns_json_string(out, d->mode_note);
	describe_rule(d, text, sizeof(text));
	fputs(", \"text\": ", out);
	ns_json_string(out, text);
	fputs("},\n \"warning\": ", out);
	ns_json_string(out, d->warning);
	fputs(",\n \"verdicts\": {", out);
	for (int v = 0; v < NS_VERDICT_NONE; v++)
		fprintf(out, "%s\"%s\": %zu", v ? ", " : "", ns_verdict_name((enum ns_verdict)v), d->n_verdict[v]);
	fputs("},\n \"gate\": ", out);
	if (o->gate) {
		fputs("{\"fail_on\": ", out);
		ns_json_string(out, o->gate);
		fprintf(out, ", \"failed\": %s}", o->gate_tripped ? "true" : "false");
	} else {
		fputs("null", out);
	}
	fputs(",\n \"totals\": {\"self_cpu\": ", out);
	json_metric(out, &d->total[NS_DIFF_SELF_CPU]);
	fputs(",\n            \"self_device\": ", out);
	json_metric(out, &d->total[NS_DIFF_SELF_DEVICE]);
	fputs("},\n \"rows\": [", out);
	for (size_t i = 0; i < d->n_rows && (o->row_limit < 0 || printed < o->row_limit); i++) {
		const struct ns_diff_row *r = &d->rows[d->order[i]];
		if (!row_shown(d, d->order[i], o))
			continue;
		printed++;
		fputs(first ? "\n  {\"name\": " : ",\n  {\"name\": ", out);
		first = false;
		ns_json_string(out, ns_strtab_get(&d->strings, r->name));
		fputs(", \"overload\": ", out);
		ns_json_string(out, ns_strtab_get(&d->strings, r->overload));
		fputs(", \"input_shapes\": ", out);
		ns_json_string(out, ns_strtab_get(&d->strings, r->shapes));
		fputs(", \"stack\": ", out);
		ns_json_string(out, ns_strtab_get(&d->strings, r->stack));
		fputs(", \"neff\": ", out);
		ns_json_string(out, ns_strtab_get(&d->strings, r->neff));
		fprintf(out, ", \"on\": \"%s\", \"user_annotation\": %s, \"verdict\": \"%s\", "
			     "\"calls\": {\"base\": %" PRId64 ", \"new\": %" PRId64 "},\n   ",
			r->on_device ? "device" : "cpu", r->is_user_annotation ? "true" : "false",
			ns_verdict_name(r->verdict), r->base_calls, r->new_calls);
		for (int k = 0; k < NS_DIFF_N_METRICS; k++) {
			fprintf(out, "%s\"%s\": ", k ? ",\n   " : "", metric_keys[k]);
			json_metric(out, &r->m[k]);
		}
		fputc('}', out);
	}
	fputs(first ? "]}\n" : "\n]}\n", out);
}

/* ---- CSV ---- */

static void csv_metric(FILE *out, const struct ns_diff_metric *m)
{
	char buf[64];
	ns_format_us(buf, sizeof(buf), m->base_ns);
	fprintf(out, ",%s", buf);
	ns_format_us(buf, sizeof(buf), m->new_ns);
	fprintf(out, ",%s", buf);
	ns_format_us(buf, sizeof(buf), m->new_ns - m->base_ns);
	fprintf(out, ",%s,", buf);
	put_number(out, change_pct((double)m->base_ns, (double)m->new_ns), false, "");
	fprintf(out, ",%s", m->verdict == NS_VERDICT_NONE ? "" : m->by_steps ? "steps" : "total");
	if (m->by_steps) {
		const double v[] = { m->base_step.median, m->base_step.mad, m->new_step.median, m->new_step.mad };
		for (size_t i = 0; i < NS_ARRAY_SIZE(v); i++) {
			fputc(',', out);
			json_us(out, v[i]);
		}
		fputc(',', out);
		put_number(out, m->change_pct, false, "");
		fputc(',', out);
		put_number(out, m->p, true, "");
	} else {
		fputs(",,,,,,", out);
	}
	fprintf(out, ",%s", ns_verdict_name(m->verdict));
}

static void write_csv(FILE *out, const struct ns_diff *d, const struct ns_diff_write_opts *o)
{
	static const char *const per_metric[] = { "base_us",	   "new_us",	     "change_us",
						  "change_pct",	   "judged_on",	     "base_step_median_us",
						  "base_step_mad_us", "new_step_median_us", "new_step_mad_us",
						  "step_change_pct", "p",		     "verdict" };
	long printed = 0;
	fputs("name,overload,input_shapes,stack,neff,on,user_annotation,verdict,base_calls,new_calls", out);
	for (int k = 0; k < NS_DIFF_N_METRICS; k++)
		for (size_t c = 0; c < NS_ARRAY_SIZE(per_metric); c++)
			fprintf(out, ",%s_%s", metric_keys[k], per_metric[c]);
	fputs("\r\n", out);
	for (size_t i = 0; i <= d->n_rows; i++) {
		bool total = i == d->n_rows; /* the summary line comes last, with on = "total" */
		const struct ns_diff_row *r = total ? NULL : &d->rows[d->order[i]];
		int64_t calls[2] = { 0, 0 };
		if (!total && (!row_shown(d, d->order[i], o) || (o->row_limit >= 0 && printed >= o->row_limit)))
			continue;
		printed++;
		if (total) {
			for (size_t k = 0; k < d->n_rows; k++) {
				calls[0] += d->rows[k].base_calls;
				calls[1] += d->rows[k].new_calls;
			}
			fprintf(out, ",,,,,total,,,%" PRId64 ",%" PRId64, calls[0], calls[1]);
		} else {
			ns_csv_string(out, ns_strtab_get(&d->strings, r->name));
			fputc(',', out);
			ns_csv_string(out, ns_strtab_get(&d->strings, r->overload));
			fputc(',', out);
			ns_csv_string(out, ns_strtab_get(&d->strings, r->shapes));
			fputc(',', out);
			ns_csv_string(out, ns_strtab_get(&d->strings, r->stack));
			fputc(',', out);
			ns_csv_string(out, ns_strtab_get(&d->strings, r->neff));
			fprintf(out, ",%s,%s,%s,%" PRId64 ",%" PRId64, r->on_device ? "device" : "cpu",
				r->is_user_annotation ? "true" : "false", ns_verdict_name(r->verdict), r->base_calls,
				r->new_calls);
		}
		for (int k = 0; k < NS_DIFF_N_METRICS; k++)
			csv_metric(out, total ? &d->total[k] : &r->m[k]);
		fputs("\r\n", out);
	}
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
		write_json(out, d, o);
		break;
	case NS_FMT_CSV:
		write_csv(out, d, o);
		break;
	}
	return 0;
}
