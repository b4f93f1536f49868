/* The aggregation's sorts of millions of event indices (docs/performance.md
 * "Aggregation on two threads"): ns_sort_keyed, a stable LSD radix sort by
 * 64-bit keys read once, where qsort_r's comparator call and the two random
 * reads a compare were most of the time at 1 GB; and ns_sort_runs, a
 * natural merge sort for indices that come as a few runs in order. */
#include "common/sort.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { DIGIT_BITS = 11, BUCKETS = 1 << DIGIT_BITS, SMALL = 32 };

/* An int64's order as an unsigned key. */
static uint64_t unsigned_key(int64_t v)
{
	return (uint64_t)v ^ (UINT64_C(1) << 63);
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

/* The end of the run in order that starts at lo. */
static size_t run_end(const int32_t *a, size_t lo, size_t n, int (*cmp)(const void *, const void *, void *),
		      void *ctx)
{
	size_t i = lo + 1;
	while (i < n && cmp(&a[i - 1], &a[i], ctx) <= 0)
		i++;
	return i;
}

void ns_sort_runs(int32_t *idx, size_t n, int32_t *scratch, int (*cmp)(const void *, const void *, void *),
		  void *ctx)
{
	int32_t *src = idx, *dst = scratch;
	if (n < 2 || run_end(idx, 0, n, cmp, ctx) == n)
		return;
	for (size_t runs = 2; runs > 1;) { /* each pass merges the runs two by two, from src into dst */
		runs = 0;
		for (size_t lo = 0; lo < n; runs++) {
			size_t mid = run_end(src, lo, n, cmp, ctx), hi = mid < n ? run_end(src, mid, n, cmp, ctx) : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) /* (the left one on ties: stable) */
				dst[k++] = cmp(&src[j], &src[i], ctx) < 0 ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
			lo = hi;
		}
		int32_t *swap = src;
		src = dst;
		dst = swap;
	}
	if (src != idx)
		memcpy(idx, src, n * sizeof(*idx));
}
