#ifndef NS_COMMON_SORT_H
#define NS_COMMON_SORT_H
/* qsort and qsort_r for any length. glibc declares their array argument
 * nonnull, and an empty vector's array is NULL (UBSan: "null pointer passed
 * as argument 1"); fewer than two elements are sorted already. Code under
 * src/ sorts only through these (tests/arch/check_includes.py). */
#include <stdint.h>
#include <stdlib.h>

static inline void ns_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static inline void ns_sort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
			     void *ctx)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, ctx);
}

/* A sort key of index i of the caller's records. */
typedef int64_t (*ns_sort_key_fn)(const void *ctx, int32_t i);

/* Sorts idx[0..n) by key(ctx, idx[k]), then, among equal keys, by
 * key2(ctx, idx[k]) (when key2 is not NULL), then stably (the input order):
 * a radix sort, linear in n, with 20 bytes of scratch an element. 0, or -1
 * when the scratch cannot be had (idx is then unchanged). */
int ns_sort_keyed(int32_t *idx, size_t n, ns_sort_key_fn key, ns_sort_key_fn key2, const void *ctx);

/* A group of index i of the caller's records, below the n_groups given. */
typedef uint32_t (*ns_sort_group_fn)(const void *ctx, int32_t i);

/* ns_sort_keyed's order for records that come as groups each in that order
 * already, but interleaved (a trace's threads and categories): the groups
 * are taken apart (stably), merged two by two, and any group out of order
 * is sorted alone first. 24 bytes of scratch an element; 0, or -1 when it
 * cannot be had (idx is then unchanged). */
int ns_sort_grouped(int32_t *idx, size_t n, ns_sort_key_fn key, ns_sort_key_fn key2, ns_sort_group_fn group,
		    size_t n_groups, const void *ctx);
#endif
