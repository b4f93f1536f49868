/* Temporal and idle-time breakdowns as HTA computes them
 * (hta/analyzers/breakdown_analysis.py; docs/analyses.md). */
#include "aggregate/breakdown.h"

#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "common/vec.h"

static const char *const idle_names[NS_IDLE__COUNT] = { "host_wait", "kernel_wait", "other" };

const char *ns_idle_kind_name(enum ns_idle_kind k)
{
	return (unsigned)k < NS_IDLE__COUNT ? idle_names[k] : "other";
}

/* By stream, then start, then file order (a stable order for equal starts). */
static int by_stream_ts(const void *a, const void *b)
{
	const struct ns_kevent *x = a, *y = b;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return (x->event > y->event) - (x->event < y->event);
}

static int by_ts(const void *a, const void *b)
{
	const struct ns_kevent *x = a, *y = b;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return (x->event > y->event) - (x->event < y->event);
}

/* The length of the union of the intervals of v[0..n) (sorted by start)
 * of type `type` (NS_KTYPE__COUNT: every one), as HTA's
 * merge_kernel_intervals: an interval that starts after every earlier one
 * ended begins a new run. */
static int64_t union_ns(const struct ns_kevent *v, size_t n, int type)
{
	int64_t total = 0, run_ts = 0, run_end = 0;
	bool open = false;
	for (size_t i = 0; i < n; i++) {
		if (type != NS_KTYPE__COUNT && v[i].ktype != type)
			continue;
		if (open && v[i].ts_ns <= run_end) {
			run_end = v[i].end_ns > run_end ? v[i].end_ns : run_end;
			continue;
		}
		if (open)
			total += run_end - run_ts;
		run_ts = v[i].ts_ns;
		run_end = v[i].end_ns;
		open = true;
	}
	return open ? total + run_end - run_ts : 0;
}

static void temporal(const struct ns_kevent *v, size_t n, struct ns_temporal *t)
{
	memset(t, 0, sizeof(*t));
	t->n_events = n;
	if (n == 0)
		return;
	int64_t last_end = v[0].end_ns;
	for (size_t i = 1; i < n; i++)
		last_end = v[i].end_ns > last_end ? v[i].end_ns : last_end;
	t->span_ns = last_end - v[0].ts_ns;
	t->idle_ns = t->span_ns - union_ns(v, n, NS_KTYPE__COUNT);
	t->compute_ns = union_ns(v, n, NS_KTYPE_COMPUTE);
	t->non_compute_ns = t->span_ns - t->compute_ns - t->idle_ns;
	t->communication_ns = union_ns(v, n, NS_KTYPE_COMMUNICATION);
	t->memory_ns = union_ns(v, n, NS_KTYPE_MEMORY);
}

/* The gaps of one stream's kernels v[0..n) (sorted by start). */
static void stream_gaps(const struct ns_kevent *v, size_t n, int64_t kernel_wait_ns, struct ns_idle_stream *s)
{
	const struct ns_kevent *prev = NULL;
	memset(s, 0, sizeof(*s));
	s->stream = v[0].stream;
	for (size_t i = 0; i < n; i++) {
		if (prev) {
			int64_t gap = v[i].ts_ns - prev->end_ns;
			enum ns_idle_kind kind = NS_IDLE_OTHER;
			if (v[i].launch_ts_ns != NS_NONE && v[i].launch_ts_ns > prev->end_ns)
				kind = NS_IDLE_HOST_WAIT;
			else if (gap < kernel_wait_ns)
				kind = NS_IDLE_KERNEL_WAIT;
			s->idle_ns[kind] += gap;
			s->gaps[kind]++;
			s->total_ns += gap;
		}
		prev = &v[i];
	}
}

/* The idle rows of the streams of v[0..n); reorders v. HTA leaves
 * cuda_sync events out of the idle breakdown (a stream with only those,
 * as a Context Sync's, has no row). */
static int idle_streams(struct ns_kevent *v, size_t n, int64_t kernel_wait_ns, struct ns_breakdown *out)
{
	size_t cap = 0, kept = 0;
	for (size_t i = 0; i < n; i++)
		if (!v[i].is_sync)
			v[kept++] = v[i];
	n = kept;
	ns_sort(v, n, sizeof(*v), by_stream_ts);
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo + 1; hi < n && v[hi].stream == v[lo].stream; hi++)
			;
		if (NS_GROW(out->streams, cap, out->n_streams + 1) < 0)
			return -1;
		stream_gaps(v + lo, hi - lo, kernel_wait_ns, &out->streams[out->n_streams++]);
	}
	return 0;
}

int ns_breakdown_compute(const struct ns_kevents *k, int64_t kernel_wait_ns, struct ns_breakdown *out,
			 struct ns_error *err)
{
	int rc = 0;
	memset(out, 0, sizeof(*out));
	struct ns_kevent *v = malloc((k->n ? k->n : 1) * sizeof(*v));
	if (!v)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	if (k->n) /* k->v is NULL when there is no device work */
		memcpy(v, k->v, k->n * sizeof(*v));
	ns_sort(v, k->n, sizeof(*v), by_ts);
	temporal(v, k->n, &out->temporal);
	if (idle_streams(v, k->n, kernel_wait_ns, out) < 0) {
		ns_breakdown_release(out);
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	free(v);
	return rc;
}

int ns_breakdown_steps(const struct ns_kevents *k, const struct ns_psteps *steps, struct ns_breakdown *b,
		       struct ns_error *err)
{
	int rc = 0;
	size_t cells = k->n ? k->n : 1;
	struct ns_kevent *v = malloc(cells * sizeof(*v)), *by_step = malloc(cells * sizeof(*by_step));
	long *step_of = malloc(cells * sizeof(*step_of));
	size_t *first = calloc(steps->n + 1, sizeof(*first)); /* where step s's events start in by_step */
	b->steps = calloc(steps->n ? steps->n : 1, sizeof(*b->steps));
	if (!v || !by_step || !step_of || !first || !b->steps) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (k->n) /* k->v is NULL when there is no device work */
		memcpy(v, k->v, k->n * sizeof(*v));
	ns_sort(v, k->n, sizeof(*v), by_ts);
	for (size_t i = 0; i < k->n; i++)
		if ((step_of[i] = ns_psteps_find(steps, v[i].launch_ts_ns)) >= 0)
			first[step_of[i] + 1]++;
	for (size_t s = 0; s < steps->n; s++)
		first[s + 1] += first[s];
	for (size_t i = 0; i < k->n; i++) /* (each step's events stay by start) */
		if (step_of[i] >= 0)
			by_step[first[step_of[i]]++] = v[i];
	/* first[s] is now the end of step s's events, and the start of s + 1's */
	b->n_steps = steps->n;
	for (size_t s = 0, lo = 0; s < steps->n; lo = first[s++]) {
		b->steps[s].step = steps->v[s].number;
		temporal(by_step + lo, first[s] - lo, &b->steps[s].temporal);
	}
out:
	free(v);
	free(by_step);
	free(step_of);
	free(first);
	return rc;
}

void ns_breakdown_release(struct ns_breakdown *b)
{
	free(b->streams);
	free(b->steps);
	b->streams = NULL;
	b->steps = NULL;
	b->n_streams = b->n_steps = 0;
}
