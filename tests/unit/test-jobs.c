/* src/common/jobs.h: ns_jobs_run finishes items in order (none with finish
 * NULL), keeps at most `jobs` in flight, and stops at the first failure in
 * order. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>

#include "common/jobs.h"

#define N 200

struct state {
	atomic_int in_flight, most_in_flight;
	size_t finished[N], n_finished;
	int worked[N];
	size_t fail_work, fail_finish; /* N: none */
};

static int work(void *ctx, size_t i)
{
	struct state *s = ctx;
	int now = atomic_fetch_add(&s->in_flight, 1) + 1;
	int most = atomic_load(&s->most_in_flight);
	while (now > most && !atomic_compare_exchange_weak(&s->most_in_flight, &most, now))
		;
	s->worked[i] = 1;
	return i == s->fail_work ? 7 : 0;
}

static int finish(void *ctx, size_t i)
{
	struct state *s = ctx;
	cr_assert(s->worked[i]);
	atomic_fetch_sub(&s->in_flight, 1);
	s->finished[s->n_finished++] = i;
	return i == s->fail_finish ? 9 : 0;
}

static void run(unsigned jobs, size_t fail_work, size_t fail_finish, int want_rc, size_t want_finished)
{
	static struct state s;
	memset(&s, 0, sizeof(s));
	s.fail_work = fail_work;
	s.fail_finish = fail_finish;
	cr_expect_eq(ns_jobs_run(N, jobs, work, finish, &s), want_rc, "jobs %u", jobs);
	cr_expect_eq(s.n_finished, want_finished, "jobs %u: %zu finished", jobs, s.n_finished);
	for (size_t i = 0; i < s.n_finished; i++)
		cr_expect_eq(s.finished[i], i, "jobs %u: finish %zu was item %zu", jobs, i, s.finished[i]);
	cr_expect_leq(atomic_load(&s.most_in_flight), jobs > 1 ? 2 * (int)jobs : 1, "jobs %u: %d in flight", jobs,
		      atomic_load(&s.most_in_flight));
}

Test(jobs, finishes_every_item_in_order_within_the_window)
{
	for (unsigned jobs = 1; jobs <= 8; jobs++)
		run(jobs, N, N, 0, N);
}

Test(jobs, stops_at_the_first_failure_in_order)
{
	for (unsigned jobs = 1; jobs <= 8; jobs++) {
		run(jobs, 50, N, 7, 50);  /* work of item 50 fails: 0..49 finished */
		run(jobs, N, 30, 9, 31);  /* finish of item 30 fails after it ran */
		run(jobs, 40, 30, 9, 31); /* the earlier failure wins */
	}
}

/* finish NULL: every item worked on; the first failure in order is the
 * status. */
Test(jobs, without_finish_every_item_is_worked_on)
{
	static struct state s;
	for (unsigned jobs = 1; jobs <= 8; jobs++) {
		memset(&s, 0, sizeof(s));
		s.fail_work = N;
		cr_expect_eq(ns_jobs_run(N, jobs, work, NULL, &s), 0, "jobs %u", jobs);
		for (size_t i = 0; i < N; i++)
			cr_expect_eq(s.worked[i], 1, "jobs %u: item %zu not worked on", jobs, i);
		memset(&s, 0, sizeof(s));
		s.fail_work = 50;
		cr_expect_eq(ns_jobs_run(N, jobs, work, NULL, &s), 7, "jobs %u: item 50's failure", jobs);
	}
}

Test(jobs, default_is_at_least_one)
{
	cr_expect_geq(ns_jobs_default(), 1);
}
