/* src/common/vec.h: NS_ARRAY_SIZE and NS_GROW (doubling, overflow-checked). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/vec.h"

/* The failed-realloc test asks for 2^62 bytes: AddressSanitizer reports that
 * as an error unless its allocator may return NULL, as libc's does. Flags in
 * ASAN_OPTIONS still take precedence over these defaults. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

Test(vec, array_size_counts_elements)
{
	static const char *const names[] = { "a", "b", "c" };
	int64_t v[7];
	struct {
		char c[3];
	} s[5];
	cr_expect_eq(NS_ARRAY_SIZE(names), 3);
	cr_expect_eq(NS_ARRAY_SIZE(v), 7);
	cr_expect_eq(NS_ARRAY_SIZE(s), 5);
	(void)v;
	(void)s;
}

Test(vec, grow_starts_at_the_first_capacity_and_doubles)
{
	int *v = NULL;
	size_t cap = 0;
	cr_assert_eq(NS_GROW(v, cap, 1), 0);
	cr_expect_eq(cap, NS_GROW_FIRST);
	cr_expect_eq(cap, 16);
	cr_assert_not_null(v);
	/* the capacities a push sequence goes through: 16, 32, 64, ... */
	size_t seen[8], n_seen = 0, last = cap;
	for (size_t n = 0; n < 1000; n++) {
		cr_assert_eq(NS_GROW(v, cap, n + 1), 0);
		v[n] = (int)n;
		if (cap != last) {
			seen[n_seen++] = cap;
			last = cap;
		}
	}
	cr_expect_eq(n_seen, 6);
	const size_t want[] = { 32, 64, 128, 256, 512, 1024 };
	for (size_t i = 0; i < NS_ARRAY_SIZE(want); i++)
		cr_expect_eq(seen[i], want[i], "growth %zu: %zu, want %zu", i, seen[i], want[i]);
	for (size_t n = 0; n < 1000; n++)
		cr_expect_eq(v[n], (int)n, "element %zu kept", n);
	free(v);
}

Test(vec, grow_does_nothing_when_need_fits)
{
	char *v = malloc(10), *before = v;
	size_t cap = 10;
	cr_assert_eq(NS_GROW(v, cap, 10), 0);
	cr_expect_eq(v, before);
	cr_expect_eq(cap, 10);
	cr_assert_eq(NS_GROW(v, cap, 0), 0);
	cr_expect_eq(cap, 10);
	free(v);
}

Test(vec, grow_doubles_until_need_fits)
{
	/* from a capacity that is not a power of two, in one call */
	char *v = malloc(3);
	size_t cap = 3;
	cr_assert_eq(NS_GROW(v, cap, 13), 0);
	cr_expect_eq(cap, 24); /* 3 -> 6 -> 12 -> 24 */
	free(v);
	v = NULL;
	cap = 0;
	cr_assert_eq(NS_GROW_MIN(v, cap, 5000, 4096), 0);
	cr_expect_eq(cap, 8192); /* 4096 -> 8192 */
	free(v);
	v = NULL;
	cap = 0;
	cr_assert_eq(NS_GROW_MIN(v, cap, 100, 256), 0);
	cr_expect_eq(cap, 256);
	free(v);
}

Test(vec, grow_refuses_overflow_and_leaves_the_array)
{
	uint64_t *v = NULL;
	size_t cap = 0;
	cr_assert_eq(NS_GROW(v, cap, 4), 0);
	uint64_t *before = v;
	v[0] = 42;
	/* the doubled count would not fit size_t */
	cr_expect_eq(NS_GROW(v, cap, SIZE_MAX / 2 + 2), -1);
	cr_expect_eq(cap, 16);
	cr_expect_eq(v, before);
	/* the count fits, its bytes do not */
	cr_expect_eq(NS_GROW(v, cap, SIZE_MAX / sizeof(*v) + 1), -1);
	cr_expect_eq(cap, 16);
	cr_expect_eq(v, before);
	cr_expect_eq(NS_GROW(v, cap, SIZE_MAX), -1);
	cr_expect_eq(cap, 16);
	cr_expect_eq(v[0], 42);
	free(v);
}

Test(vec, grow_reports_a_failed_realloc_and_leaves_the_array)
{
	char *v = NULL;
	size_t cap = 0;
	cr_assert_eq(NS_GROW(v, cap, 1), 0);
	char *before = v;
	v[0] = 'x';
	/* 2^62 bytes: no allocator gives that */
	cr_expect_eq(NS_GROW(v, cap, (size_t)1 << 62), -1);
	cr_expect_eq(cap, 16);
	cr_expect_eq(v, before);
	cr_expect_eq(v[0], 'x');
	free(v);
}

Test(vec, grow_evaluates_each_argument_once)
{
	int *v = NULL, **pv = &v;
	size_t cap = 0, n = 0, *pcap = &cap;
	int ptr_calls = 0, cap_calls = 0;
	cr_assert_eq(NS_GROW(*(ptr_calls++, pv), *(cap_calls++, pcap), ++n), 0);
	cr_expect_eq(n, 1);
	cr_expect_eq(ptr_calls, 1);
	cr_expect_eq(cap_calls, 1);
	cr_assert_eq(NS_GROW(v, cap, n + 40), 0);
	cr_expect_eq(cap, 64);
	free(v);
}
