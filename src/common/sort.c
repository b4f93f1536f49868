/* The aggregation's sorts of millions of event indices (docs/performance.md
 * "Aggregation on two threads"): ns_sort_keyed, a stable LSD radix sort by
 * 64-bit keys read once, where qsort_r's comparator call and the two random
 * reads a compare were most of the time at 1 GB; and ns_sort_grouped, a
 * merge of groups that are each in order already. */
#include "common/sort.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { DIGIT_BITS = 11, BUCKETS = 1 << DIGIT_BITS, SMALL = 32 };

/* An int64's order as an unsigned key, and back. */
static uint64_t unsigned_key(int64_t v)
{
	return (uint64_t)v ^ (UINT64_C(1) << 63);
}

static int64_t signed_key(uint64_t k)
{
	return (int64_t)(k ^ (UINT64_C(1) << 63));
}

static void insertion_sort(uint64_t *key, int32_t *idx, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t k = key[i];
		int32_t v = idx[i];
		size_t j = i;
		for (; j > 0 && key[j - 1] > k; j--) {
			key[j] = key[j - 1];
			idx[j] = idx[j - 1];
		}
		key[j] = k;
		idx[j] = v;
	}
}

/* One stable counting pass on the digit at `shift`, from (key, idx) into
 * (to_key, to_idx); false when every element has the same digit (nothing
 * moved). */
static bool digit_pass(const uint64_t *key, const int32_t *idx, uint64_t *to_key, int32_t *to_idx, size_t n,
		       unsigned shift)
{
	size_t count[BUCKETS] = { 0 };
	for (size_t i = 0; i < n; i++)
		count[(key[i] >> shift) & (BUCKETS - 1)]++;
	if (count[(key[0] >> shift) & (BUCKETS - 1)] == n)
		return false;
	for (size_t d = 0, sum = 0; d < BUCKETS; d++) {
		size_t c = count[d];
		count[d] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++) {
		size_t at = count[(key[i] >> shift) & (BUCKETS - 1)]++;
		to_key[at] = key[i];
		to_idx[at] = idx[i];
	}
	return true;
}

/* Sorts (key, idx) pairs stably by key; tmp_* are scratch of n elements.
 * Only the bits that differ between keys are looked at, and an input in
 * order (most of a trace: each thread's ops are written by start) costs
 * one pass. */
static void sort_pairs(uint64_t *key, int32_t *idx, uint64_t *tmp_key, int32_t *tmp_idx, size_t n)
{
	uint64_t varying = 0;
	bool in_order = true;
	if (n < SMALL) {
		insertion_sort(key, idx, n);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		varying |= key[i] ^ key[0];
		in_order &= key[i - 1] <= key[i];
	}
	if (in_order)
		return;
	uint64_t *k = key, *tk = tmp_key;
	int32_t *v = idx, *tv = tmp_idx;
	unsigned top = 64 - (unsigned)__builtin_clzll(varying);
	for (unsigned shift = (unsigned)__builtin_ctzll(varying); shift < top; shift += DIGIT_BITS) {
		if (!digit_pass(k, v, tk, tv, n, shift))
			continue;
		uint64_t *sk = k;
		int32_t *sv = v;
		k = tk, v = tv, tk = sk, tv = sv;
	}
	if (k != key) {
		memcpy(key, k, n * sizeof(*key));
		memcpy(idx, v, n * sizeof(*idx));
	}
}

int ns_sort_keyed(int32_t *idx, size_t n, ns_sort_key_fn key, ns_sort_key_fn key2, const void *ctx)
{
	uint64_t *keys = NULL, *tmp_key = NULL;
	int32_t *tmp_idx = NULL;
	int rc = -1;
	if (n < 2)
		return 0;
	keys = malloc(n * sizeof(*keys));
	tmp_key = malloc(n * sizeof(*tmp_key));
	tmp_idx = malloc(n * sizeof(*tmp_idx));
	if (!keys || !tmp_key || !tmp_idx)
		goto out;
	for (size_t i = 0; i < n; i++)
		keys[i] = unsigned_key(key(ctx, idx[i]));
	sort_pairs(keys, idx, tmp_key, tmp_idx, n);
	for (size_t lo = 0, hi; key2 && lo < n; lo = hi) { /* runs of equal keys, by key2 */
		for (hi = lo + 1; hi < n && keys[hi] == keys[lo]; hi++)
			;
		if (hi - lo < 2)
			continue;
		for (size_t i = lo; i < hi; i++)
			keys[i] = unsigned_key(key2(ctx, idx[i]));
		sort_pairs(keys + lo, idx + lo, tmp_key + lo, tmp_idx + lo, hi - lo);
	}
	rc = 0;
out:
	free(keys);
	free(tmp_key);
	free(tmp_idx);
	return rc;
}

/* The keys of ns_sort_grouped, by position in its idx. */
struct grouped {
	uint64_t *key, *key2; /* (key2 NULL: none) */
	int32_t *pos, *tmp;   /* positions, taken apart by group, then merged */
	size_t *bound;        /* the runs of pos, bound[r] to bound[r + 1] */
	size_t n_runs;
};

/* Whether position p comes before position q: (key, key2, position). */
static bool goes_before(const struct grouped *g, int32_t p, int32_t q)
{
	if (g->key[p] != g->key[q])
		return g->key[p] < g->key[q];
	if (g->key2 && g->key2[p] != g->key2[q])
		return g->key2[p] < g->key2[q];
	return p < q;
}

static int64_t grouped_key(const void *ctx, int32_t p)
{
	return signed_key(((const struct grouped *)ctx)->key[p]);
}

static int64_t grouped_key2(const void *ctx, int32_t p)
{
	return signed_key(((const struct grouped *)ctx)->key2[p]);
}

/* Each run of g->pos in order: sorted alone when it is not (ns_sort_keyed
 * on the keys; a run's positions rise, so its ties stay in position order). */
static int order_runs(struct grouped *g)
{
	for (size_t r = 0; r < g->n_runs; r++) {
		int32_t *run = g->pos + g->bound[r];
		size_t len = g->bound[r + 1] - g->bound[r], i = 1;
		while (i < len && goes_before(g, run[i - 1], run[i]))
			i++;
		if (i < len && ns_sort_keyed(run, len, grouped_key, g->key2 ? grouped_key2 : NULL, g))
			return -1;
	}
	return 0;
}

/* Merges g->pos's runs two by two into g->tmp, until one is left in g->pos. */
static void merge_runs(struct grouped *g)
{
	while (g->n_runs > 1) {
		size_t runs = 0;
		for (size_t r = 0; r < g->n_runs; r += 2) {
			size_t lo = g->bound[r], mid = g->bound[r + 1];
			size_t hi = r + 2 <= g->n_runs ? g->bound[r + 2] : mid, i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				g->tmp[k++] = goes_before(g, g->pos[j], g->pos[i]) ? g->pos[j++] : g->pos[i++];
			memcpy(g->tmp + k, g->pos + i, (mid - i) * sizeof(*g->tmp));
			k += mid - i;
			memcpy(g->tmp + k, g->pos + j, (hi - j) * sizeof(*g->tmp));
			g->bound[runs++] = lo;
		}
		g->bound[runs] = g->bound[g->n_runs];
		g->n_runs = runs;
		int32_t *swap = g->pos;
		g->pos = g->tmp;
		g->tmp = swap;
	}
}

int ns_sort_grouped(int32_t *idx, size_t n, ns_sort_key_fn key, ns_sort_key_fn key2, ns_sort_group_fn group,
		    size_t n_groups, const void *ctx)
{
	struct grouped g = { 0 };
	size_t *fill = NULL;
	int rc = -1;
	if (n < 2)
		return 0;
	g.key = malloc(n * sizeof(*g.key));
	g.key2 = key2 ? malloc(n * sizeof(*g.key2)) : NULL;
	g.pos = malloc(n * sizeof(*g.pos));
	g.tmp = malloc(n * sizeof(*g.tmp));
	g.bound = malloc((n_groups + 1) * sizeof(*g.bound));
	fill = calloc(n_groups + 1, sizeof(*fill));
	if (!g.key || (key2 && !g.key2) || !g.pos || !g.tmp || !g.bound || !fill)
		goto out;
	for (size_t p = 0; p < n; p++) {
		g.key[p] = unsigned_key(key(ctx, idx[p]));
		if (key2)
			g.key2[p] = unsigned_key(key2(ctx, idx[p]));
		g.tmp[p] = (int32_t)group(ctx, idx[p]); /* (tmp is free until the merge) */
		fill[g.tmp[p] + 1]++;
	}
	for (size_t k = 0; k < n_groups; k++) { /* the non-empty groups are the runs */
		if (fill[k + 1])
			g.bound[g.n_runs++] = fill[k];
		fill[k + 1] += fill[k];
	}
	g.bound[g.n_runs] = n;
	for (size_t p = 0; p < n; p++)
		g.pos[fill[g.tmp[p]]++] = (int32_t)p;
	if (order_runs(&g))
		goto out;
	merge_runs(&g);
	for (size_t k = 0; k < n; k++)
		g.tmp[k] = idx[g.pos[k]];
	memcpy(idx, g.tmp, n * sizeof(*idx));
	rc = 0;
out:
	free(g.key);
	free(g.key2);
	free(g.pos);
	free(g.tmp);
	free(g.bound);
	free(fill);
	return rc;
}
