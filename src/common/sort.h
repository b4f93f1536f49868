#ifndef NS_COMMON_SORT_H
#define NS_COMMON_SORT_H
/* qsort and qsort_r for any length. glibc declares their array argument
 * nonnull, and an empty vector's array is NULL (UBSan: "null pointer passed
 * as argument 1"); fewer than two elements are sorted already. Code under
 * src/ sorts only through these (tests/arch/check_includes.py). */
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
#endif
