/* Cross-rank stragglers: step ends and collective waits (stragglers.h;
 * docs/analyses.md). */
#include "aggregate/stragglers.h"

#include <stdlib.h>
#include <string.h>

#include "aggregate/ranks.h"
#include "common/sort.h"
#include "common/vec.h"

/* One rank's step, or one communication kernel, on the job's clock. */
struct timed {
	const char *name; /* kernels: the name */
	int64_t key;      /* steps: N; kernels: the occurrence of the name on its rank */
	size_t input;     /* index into the inputs */
	int64_t ts, end;
};

static int by_key_input(const void *a, const void *b)
{
	const struct timed *x = a, *y = b;
	int c = x->name && y->name ? strcmp(x->name, y->name) : 0;
	if (c)
		return c;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Each input's shift onto the job's clock: era C times are relative to the
 * file's baseTimeNanoseconds (as ns_trace_merge aligns them). */
static void clock_shifts(const struct ns_straggler_input *in, size_t n, int64_t *shift)
{
	int64_t min_base = INT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (in[i].t->has_base_time && in[i].t->base_time_ns < min_base)
			min_base = in[i].t->base_time_ns;
	for (size_t i = 0; i < n; i++)
		shift[i] = in[i].t->has_base_time ? in[i].t->base_time_ns - min_base : 0;
}

/* The summary and per-rank rows of one step's ranks g[0..m) (by input). */
static void one_step(const struct timed *g, size_t m, const struct ns_straggler_input *in, int64_t *scratch,
		     struct ns_step_summary *sum, struct ns_step_rank *rows)
{
	int64_t first = g[0].ts;
	size_t last = 0;
	for (size_t i = 0; i < m; i++) {
		first = g[i].ts < first ? g[i].ts : first;
		last = g[i].end > g[last].end ? i : last;
	}
	for (size_t i = 0; i < m; i++)
		scratch[i] = g[i].end - first;
	double median_end = ns_median_i64(scratch, m);
	for (size_t i = 0; i < m; i++)
		scratch[i] = g[i].end - g[i].ts;
	double median_dur = ns_median_i64(scratch, m); /* (sorts scratch) */
	*sum = (struct ns_step_summary){ .step = g[0].key, .last_rank = in[g[last].input].rank,
					 .last_end_ns = g[last].end - first, .n_ranks = m,
					 .median_end_ns = median_end, .median_dur_ns = median_dur,
					 .min_dur_ns = scratch[0], .max_dur_ns = scratch[m - 1] };
	for (size_t i = 0; i < m; i++)
		rows[i] = (struct ns_step_rank){ .step = g[i].key, .rank = in[g[i].input].rank,
						 .start_ns = g[i].ts - first, .end_ns = g[i].end - first,
						 .behind_median_ns = (double)(g[i].end - first) - median_end,
						 .last = i == last };
}

static int steps_part(const struct ns_straggler_input *in, size_t n, const int64_t *shift, struct ns_stragglers *out)
{
	size_t total = 0, cap = 0;
	for (size_t i = 0; i < n; i++)
		total += in[i].steps->n;
	struct timed *v = malloc((total ? total : 1) * sizeof(*v));
	int64_t *scratch = malloc((total ? total : 1) * sizeof(*scratch));
	out->step_ranks = malloc((total ? total : 1) * sizeof(*out->step_ranks));
	int rc = v && scratch && out->step_ranks ? 0 : -1;
	for (size_t i = 0, k = 0; rc == 0 && i < n; i++)
		for (size_t s = 0; s < in[i].steps->n; s++, k++) {
			const struct ns_pstep *p = &in[i].steps->v[s];
			v[k] = (struct timed){ NULL, p->number, i, p->ts_ns + shift[i], p->end_ns + shift[i] };
		}
	if (rc == 0)
		ns_sort(v, total, sizeof(*v), by_key_input);
	for (size_t lo = 0, hi; rc == 0 && lo < total; lo = hi) {
		for (hi = lo + 1; hi < total && v[hi].key == v[lo].key; hi++)
			;
		if (NS_GROW(out->steps, cap, out->n_steps + 1) < 0) {
			rc = -1;
			break;
		}
		one_step(v + lo, hi - lo, in, scratch, &out->steps[out->n_steps++], out->step_ranks + lo);
		out->n_step_ranks = hi;
	}
	free(v);
	free(scratch);
	return rc;
}

/* Appends input i's communication kernels to v, each with its occurrence
 * of its name on the rank (by start), and counts them in c. */
static int rank_kernels(const struct ns_straggler_input *in, size_t i, int64_t shift, struct timed **v, size_t *n,
			size_t *cap, struct ns_collective_rank *c)
{
	size_t from = *n;
	const struct ns_trace *t = in[i].t;
	for (size_t e = 0; e < in[i].k->n; e++) {
		const struct ns_kevent *kv = &in[i].k->v[e];
		if (kv->is_sync || kv->ktype != NS_KTYPE_COMMUNICATION)
			continue;
		if (NS_GROW(*v, *cap, *n + 1) < 0)
			return -1;
		const char *name = ns_strtab_get(&t->strings, t->events[kv->event].name);
		(*v)[(*n)++] = (struct timed){ name, 0, i, kv->ts_ns + shift, kv->end_ns + shift };
		c->count++;
		c->total_ns += kv->end_ns - kv->ts_ns;
	}
	if (*n > from) /* (*v may still be NULL) */
		ns_sort(*v + from, *n - from, sizeof(**v), by_key_input); /* by name, then start */
	for (size_t k = from; k < *n; k++)
		(*v)[k].key = k > from && strcmp((*v)[k - 1].name, (*v)[k].name) == 0 ? (*v)[k - 1].key + 1 : 0;
	return 0;
}

/* The waits of one occurrence g[0..n) present on every rank (by input). */
static void one_collective(const struct timed *g, size_t n, struct ns_collective_rank *c)
{
	size_t last = 0;
	for (size_t i = 1; i < n; i++)
		last = g[i].ts > g[last].ts ? i : last;
	for (size_t i = 0; i < n; i++) {
		int64_t wait = g[last].ts - g[i].ts, dur = g[i].end - g[i].ts;
		c[g[i].input].wait_ns += wait < dur ? wait : dur;
		c[g[i].input].matched++;
	}
	c[g[last].input].last_arrivals++;
}

static int collectives_part(const struct ns_straggler_input *in, size_t n, const int64_t *shift,
			    struct ns_stragglers *out)
{
	struct timed *v = NULL;
	size_t nv = 0, cap = 0;
	int rc = 0;
	out->collectives = calloc(n ? n : 1, sizeof(*out->collectives));
	if (!out->collectives)
		return -1;
	out->n_collectives = n;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		out->collectives[i].rank = in[i].rank;
		rc = rank_kernels(in, i, shift[i], &v, &nv, &cap, &out->collectives[i]);
	}
	if (rc == 0 && n > 1 && nv > 0) {
		ns_sort(v, nv, sizeof(*v), by_key_input);
		for (size_t lo = 0, hi; lo < nv; lo = hi) {
			for (hi = lo + 1; hi < nv && v[hi].key == v[lo].key && strcmp(v[hi].name, v[lo].name) == 0; hi++)
				;
			if (hi - lo == n)
				one_collective(v + lo, n, out->collectives);
		}
	}
	free(v);
	return rc;
}

int ns_stragglers_compute(const struct ns_straggler_input *in, size_t n, struct ns_stragglers *out,
			  struct ns_error *err)
{
	memset(out, 0, sizeof(*out));
	int64_t *shift = malloc((n ? n : 1) * sizeof(*shift));
	int rc = shift ? 0 : -1;
	if (rc == 0) {
		clock_shifts(in, n, shift);
		rc = steps_part(in, n, shift, out);
	}
	if (rc == 0)
		rc = collectives_part(in, n, shift, out);
	free(shift);
	if (rc) {
		ns_stragglers_release(out);
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	return 0;
}

void ns_stragglers_release(struct ns_stragglers *s)
{
	free(s->steps);
	free(s->step_ranks);
	free(s->collectives);
	memset(s, 0, sizeof(*s));
}
