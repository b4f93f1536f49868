/* src/common: the id maps (i64map, idindex), the string table (strtab) and the keyed
 * sort (ns_sort_keyed). */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/assert.h"
#include "common/i64map.h"
#include "common/sort.h"
#include "common/vec.h"
#include "common/strtab.h"

Test(i64map, first_writer_wins_and_set_replaces)
{
	struct ns_i64map m;
	ns_i64map_init(&m);
	cr_expect_eq(ns_i64map_get(&m, 7, -1), -1, "empty map");
	cr_assert_eq(ns_i64map_put_first(&m, 7, 70), 0);
	cr_assert_eq(ns_i64map_put_first(&m, 7, 71), 0);
	cr_expect_eq(ns_i64map_get(&m, 7, -1), 70);
	cr_assert_eq(ns_i64map_set(&m, 7, 72), 0);
	cr_expect_eq(ns_i64map_get(&m, 7, -1), 72);
	cr_expect_eq(m.n, 1);
	ns_i64map_release(&m);
}

Test(i64map, the_empty_marker_is_a_key_like_any_other)
{
	struct ns_i64map m;
	ns_i64map_init(&m);
	cr_expect_eq(ns_i64map_get(&m, INT64_MIN, -1), -1);
	cr_assert_eq(ns_i64map_put_first(&m, INT64_MIN, 5), 0);
	cr_assert_eq(ns_i64map_put_first(&m, INT64_MIN, 6), 0);
	cr_expect_eq(ns_i64map_get(&m, INT64_MIN, -1), 5);
	cr_assert_eq(ns_i64map_set(&m, INT64_MIN, 8), 0);
	cr_expect_eq(ns_i64map_get(&m, INT64_MIN, -1), 8);
	cr_expect_eq(ns_i64map_get(&m, 0, -1), -1);
	ns_i64map_release(&m);
}

Test(i64map, growth_keeps_every_entry_and_iteration_sees_each_once)
{
	struct ns_i64map m;
	const int64_t n = 100000;
	ns_i64map_init(&m);
	for (int64_t k = 0; k < n; k++) /* keys that share low bits, and negatives */
		cr_assert_eq(ns_i64map_put_first(&m, (k << 32) - n, k), 0);
	cr_assert_eq(ns_i64map_put_first(&m, INT64_MIN, -7), 0);
	cr_expect_eq(m.n, (size_t)n);
	cr_expect_leq(4 * m.n, 3 * m.cap, "filled to 3/4 at most");
	cr_expect_gt(4 * m.n, 3 * m.cap / 2, "and more than 3/8: grown by doubling");
	for (int64_t k = 0; k < n; k++)
		cr_assert_eq(ns_i64map_get(&m, (k << 32) - n, -1), k);
	int64_t key, val, sum = 0, count = 0;
	for (size_t pos = 0; ns_i64map_next(&m, &pos, &key, &val);) {
		count++;
		sum += val;
		if (key != INT64_MIN)
			cr_assert_eq(key, (val << 32) - n);
	}
	cr_expect_eq(count, n + 1);
	cr_expect_eq(sum, n * (n - 1) / 2 - 7);
	ns_i64map_release(&m);
}

/* ns_idindex over a list of ids (INT64_MIN: the element has none). */
struct id_list {
	const int64_t *id;
};

static bool listed_id(const void *ctx, size_t i, int64_t *id)
{
	*id = ((const struct id_list *)ctx)->id[i];
	return *id != INT64_MIN;
}

/* The same answers from the array and from the hash map: the first index
 * of each id, and `missing` for ids not listed, inside the range or out. */
static void expect_first_index(const int64_t *ids, size_t n, bool dense)
{
	struct id_list list = { ids };
	struct ns_idindex x;
	cr_assert_eq(ns_idindex_build(&x, n, listed_id, &list), 0);
	cr_expect_eq(x.dense != NULL, dense, "dense: %d", dense);
	for (size_t i = 0; i < n; i++) {
		size_t first = 0;
		while (ids[i] != INT64_MIN && ids[first] != ids[i])
			first++;
		if (ids[i] != INT64_MIN)
			cr_expect_eq(ns_idindex_get(&x, ids[i], -1), (int64_t)first, "id %" PRId64, ids[i]);
	}
	cr_expect_eq(ns_idindex_get(&x, 8, -1), -1, "a hole in the range");
	cr_expect_eq(ns_idindex_get(&x, INT64_MIN, -1), -1);
	cr_expect_eq(ns_idindex_get(&x, INT64_MAX, -1), -1);
	ns_idindex_release(&x);
}

Test(idindex, counters_get_an_array_and_scattered_ids_the_hash_map)
{
	const int64_t counter[] = { 5, 6, INT64_MIN, 5, 9, -3, 7, 9 };
	const int64_t scattered[] = { 5, INT64_MIN, 5, INT64_C(1) << 40, -3, 7, INT64_MAX - 1, INT64_MIN + 1 };
	expect_first_index(counter, NS_ARRAY_SIZE(counter), true);
	expect_first_index(scattered, NS_ARRAY_SIZE(scattered), false);
}

Test(idindex, no_ids_finds_nothing)
{
	const int64_t none[] = { INT64_MIN, INT64_MIN };
	struct id_list list = { none };
	struct ns_idindex x;
	cr_assert_eq(ns_idindex_build(&x, 2, listed_id, &list), 0);
	cr_expect_eq(ns_idindex_get(&x, 0, -1), -1);
	ns_idindex_release(&x);
}

/* An empty text may come without a buffer (the fuzz smoke found
 * "Input Dims": "" reaching memcmp with NULL; UBSan fails this test then). */
Test(strtab, empty_text_without_a_buffer_is_the_empty_string)
{
	struct ns_strtab t;
	ns_strtab_init(&t);
	cr_assert_eq(ns_strtab_find(&t, NULL, 0), 0);
	cr_assert_eq(ns_strtab_intern(&t, NULL, 0), 0);
	cr_assert_eq(t.count, 1);
	ns_strtab_release(&t);
}

/* Undoing the newest strings: every older one is still found under its id
 * (across a growth of the hash table in between), the undone ones are
 * gone, and interning them again gives them the same ids. */
Test(strtab, truncate_forgets_the_newest_strings)
{
	enum { OLD = 1500, NEW = 1200 }; /* 1500 + 1200 strings: the slots grow from 4096 to 8192 */
	struct ns_strtab t;
	char s[32];
	ns_strtab_init(&t);
	for (int i = 0; i < OLD; i++)
		ns_strtab_intern(&t, s, (size_t)snprintf(s, sizeof(s), "old %d", i));
	uint32_t count = t.count, slots = t.slots_cap;
	size_t bytes = t.bytes_len;
	for (int i = 0; i < NEW; i++)
		ns_strtab_intern(&t, s, (size_t)snprintf(s, sizeof(s), "new %d", i));
	cr_assert_gt(t.slots_cap, slots);
	ns_strtab_truncate(&t, count);
	cr_expect_eq(t.count, count);
	cr_expect_eq(t.bytes_len, bytes);
	for (int i = 0; i < OLD; i++) {
		size_t len = (size_t)snprintf(s, sizeof(s), "old %d", i);
		cr_expect_eq(ns_strtab_find(&t, s, len), (ns_str)i + 1, "%s", s);
	}
	for (int i = 0; i < NEW; i++) {
		size_t len = (size_t)snprintf(s, sizeof(s), "new %d", i);
		cr_expect_eq(ns_strtab_find(&t, s, len), UINT32_MAX, "%s", s);
	}
	for (int i = 0; i < NEW; i++) {
		size_t len = (size_t)snprintf(s, sizeof(s), "new %d", i);
		cr_expect_eq(ns_strtab_intern(&t, s, len), count + (ns_str)i, "%s", s);
		cr_expect_str_eq(ns_strtab_get(&t, count + (ns_str)i), s);
	}
	ns_strtab_truncate(&t, 0); /* the empty string stays */
	cr_expect_eq(t.count, 1);
	cr_expect_eq(ns_strtab_find(&t, "", 0), 0);
	cr_expect_eq(ns_strtab_find(&t, "old 0", 5), UINT32_MAX);
	ns_strtab_release(&t);
}

/* ns_strtab_init cannot report that storing "" failed (out of memory); the
 * next intern stores it first, so id 0 stays the empty string. It was
 * ignored, and the first name took id 0, which every reader takes for
 * "absent": 13 runs of the allocation-failure sweep printed garbled names. */
Test(strtab, the_empty_string_is_id_0_even_when_init_could_not_store_it)
{
	struct ns_strtab t;
	memset(&t, 0, sizeof(t)); /* what ns_strtab_init leaves when its allocation fails */
	cr_assert_eq(ns_strtab_intern(&t, "aten::add", 9), 1);
	cr_assert_eq(t.count, 2);
	cr_assert_str_eq(ns_strtab_get(&t, 0), "");
	cr_assert_str_eq(ns_strtab_get(&t, 1), "aten::add");
	cr_assert_eq(ns_strtab_intern(&t, "", 0), 0);
	ns_strtab_release(&t);
}

/* A broken invariant names itself (file:line, function, the expression)
 * and aborts: SIGABRT, not an exit code that reads as bad input. */
enum { broken_invariant_line = __LINE__ + 3 }; /* the line of the NS_ASSERT below */
static void broken_invariant(int two)
{
	NS_ASSERT(two + two == 5);
}

Test(assert, a_broken_invariant_names_the_expression_and_aborts)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		broken_invariant(2);
		_exit(0); /* not reached */
	}
	close(fds[1]);
	char msg[512] = "";
	size_t len = 0;
	ssize_t got;
	while (len + 1 < sizeof(msg) && (got = read(fds[0], msg + len, sizeof(msg) - 1 - len)) > 0)
		len += (size_t)got;
	msg[len] = '\0';
	close(fds[0]);
	int status = 0;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %d", status);
	char expected[256];
	snprintf(expected, sizeof(expected),
		 "neuron-stats: bug: tests/unit/test-common.c:%d: broken_invariant: invariant failed: two + two == 5\n",
		 broken_invariant_line);
	cr_expect_str_eq(msg, expected);
}

/* ns_sort_keyed against qsort_r with the comparator it stands for:
 * (key, key2, input position). */
struct sort_case {
	const int64_t *k1, *k2;
};

static int64_t case_k1(const void *ctx, int32_t i)
{
	return ((const struct sort_case *)ctx)->k1[i];
}

static int64_t case_k2(const void *ctx, int32_t i)
{
	return ((const struct sort_case *)ctx)->k2[i];
}

static int cmp_case(const void *x, const void *y, void *ctx)
{
	const struct sort_case *c = ctx;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	if (c->k1[i] != c->k1[j])
		return c->k1[i] < c->k1[j] ? -1 : 1;
	if (c->k2 && c->k2[i] != c->k2[j])
		return c->k2[i] < c->k2[j] ? -1 : 1;
	return (i > j) - (i < j); /* the input lists indices ascending */
}

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* n keys of kind `kind`: 0 random over 64 bits, 1 few values (ties), 2
 * ascending with a few out of place, 3 all equal, 4 descending, 5
 * epoch-scale nanoseconds (varying low bits only), 6 three ascending runs
 * one after the other. */
static void fill_keys(int64_t *k, size_t n, int kind)
{
	for (size_t i = 0; i < n; i++) {
		switch (kind) {
		case 0: k[i] = (int64_t)rng(); break;
		case 1: k[i] = (int64_t)(rng() % 5) - 2; break;
		case 2: k[i] = (int64_t)i * 3 + (rng() % 50 == 0 ? -(int64_t)(rng() % 100) : 0); break;
		case 3: k[i] = INT64_MIN; break;
		case 4: k[i] = INT64_MAX - (int64_t)i; break;
		case 6: k[i] = (int64_t)(i % (n / 3 + 1)); break; /* three ascending runs */
		default: k[i] = INT64_C(1700000000000000000) + (int64_t)(rng() % 4000000000u); break;
		}
	}
}

static void check_sort(size_t n, int kind1, int kind2)
{
	int64_t *k1 = malloc((n + 1) * sizeof(*k1)), *k2 = malloc((n + 1) * sizeof(*k2));
	int32_t *got = malloc((n + 1) * sizeof(*got)), *want = malloc((n + 1) * sizeof(*want));
	cr_assert(k1 && k2 && got && want);
	fill_keys(k1, n, kind1);
	if (kind2 >= 0)
		fill_keys(k2, n, kind2);
	struct sort_case c = { k1, kind2 >= 0 ? k2 : NULL };
	for (size_t i = 0; i < n; i++)
		got[i] = want[i] = (int32_t)i;
	cr_assert_eq(ns_sort_keyed(got, n, case_k1, kind2 >= 0 ? case_k2 : NULL, &c), 0);
	ns_sort_r(want, n, sizeof(*want), cmp_case, &c);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(got[i], want[i], "n %zu, keys %d/%d: position %zu holds %d, qsort %d", n, kind1, kind2, i,
			     got[i], want[i]);
	free(k1);
	free(k2);
	free(got);
	free(want);
}

Test(sort_keyed, equals_qsort_with_the_same_order)
{
	static const size_t sizes[] = { 0, 1, 2, 31, 32, 33, 1000, 70000 };
	for (size_t s = 0; s < NS_ARRAY_SIZE(sizes); s++)
		for (int kind1 = 0; kind1 < 7; kind1++)
			for (int kind2 = -1; kind2 < 7; kind2++)
				check_sort(sizes[s], kind1, kind2);
}

/* ns_sort_grouped against qsort_r by (key, key2, input position), with
 * records that are not their positions (idx is a permutation): the keys
 * dealt out to the groups at random as ascending streams (each group in
 * order, or out of order when key2 breaks its ties the wrong way), or at
 * random. */
struct group_case {
	int64_t *k1, *k2;
	uint32_t *group;
	const int32_t *idx;
};

static int64_t group_k1(const void *ctx, int32_t i)
{
	return ((const struct group_case *)ctx)->k1[i];
}

static int64_t group_k2(const void *ctx, int32_t i)
{
	return ((const struct group_case *)ctx)->k2[i];
}

static uint32_t group_of(const void *ctx, int32_t i)
{
	return ((const struct group_case *)ctx)->group[i];
}

static int cmp_positions(const void *x, const void *y, void *ctx)
{
	const struct group_case *c = ctx;
	int32_t p = *(const int32_t *)x, q = *(const int32_t *)y, i = c->idx[p], j = c->idx[q];
	if (c->k1[i] != c->k1[j])
		return c->k1[i] < c->k1[j] ? -1 : 1;
	if (c->k2 && c->k2[i] != c->k2[j])
		return c->k2[i] < c->k2[j] ? -1 : 1;
	return (p > q) - (p < q);
}

/* mode 0: ascending streams, key2 0; 1: ascending streams with ties, key2
 * at random (some groups out of order); 2: random keys, no key2 */
static void check_grouped(size_t n, uint32_t n_groups, int mode)
{
	int64_t *stream = calloc(n_groups, sizeof(*stream));
	int32_t *idx = malloc((n + 1) * sizeof(*idx)), *got = malloc((n + 1) * sizeof(*got));
	int32_t *want = malloc((n + 1) * sizeof(*want));
	struct group_case c = { malloc((n + 1) * sizeof(*c.k1)), mode < 2 ? malloc((n + 1) * sizeof(*c.k2)) : NULL,
				malloc((n + 1) * sizeof(*c.group)), idx };
	cr_assert(stream && idx && got && want && c.k1 && c.group && (mode == 2 || c.k2));
	for (size_t p = 0; p < n; p++) {
		int32_t i = (int32_t)((p * 7 + 3) % n); /* (n is no multiple of 7) */
		uint32_t g = (uint32_t)(rng() % n_groups);
		idx[p] = got[p] = i;
		want[p] = (int32_t)p;
		c.group[i] = g;
		c.k1[i] = mode == 2 ? (int64_t)(rng() % 1000) : (stream[g] += (int64_t)(rng() % 3));
		if (mode < 2)
			c.k2[i] = mode == 0 ? 0 : (int64_t)(rng() % 3) - 1;
	}
	cr_assert_eq(ns_sort_grouped(got, n, group_k1, mode < 2 ? group_k2 : NULL, group_of, n_groups, &c), 0);
	ns_sort_r(want, n, sizeof(*want), cmp_positions, &c);
	for (size_t k = 0; k < n; k++)
		cr_assert_eq(got[k], idx[want[k]], "n %zu, %u groups, mode %d: position %zu holds %d, qsort %d", n,
			     n_groups, mode, k, got[k], idx[want[k]]);
	free(stream);
	free(idx);
	free(got);
	free(want);
	free(c.k1);
	free(c.k2);
	free(c.group);
}

Test(sort_grouped, equals_qsort_by_keys_then_position)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 33, 1000, 70001 };
	static const uint32_t groups[] = { 1, 2, 3, 64 };
	for (size_t s = 0; s < NS_ARRAY_SIZE(sizes); s++)
		for (size_t g = 0; g < NS_ARRAY_SIZE(groups); g++)
			for (int mode = 0; mode < 3; mode++)
				check_grouped(sizes[s], groups[g], mode);
}

