/* The statistics of the diff (docs/diff.md "The rule"): per-step medians
 * and MADs, and the Mann-Whitney U test. */
#include "common/sort.h"
#include "report/diff.h"

#include <math.h>
#include <stdlib.h>

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
	ns_sort(scratch, n, sizeof(*scratch), cmp_double);
	st.median = sorted_median(scratch, n);
	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs((double)v[i] - st.median);
	ns_sort(scratch, n, sizeof(*scratch), cmp_double);
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
	ns_sort(pool, n, sizeof(*pool), cmp_pooled);
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
