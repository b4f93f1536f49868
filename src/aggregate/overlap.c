/* Communication/computation overlap (overlap.h; docs/analyses.md). */
#include "aggregate/overlap.h"
#include "common/sort.h"

#include <stdlib.h>
#include <string.h>

/* A run of merged intervals. */
struct span {
	int64_t ts, end;
};

static int by_ts(const void *a, const void *b)
{
	const struct ns_kevent *x = a, *y = b;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return (x->event > y->event) - (x->event < y->event);
}

/* The union of the intervals of v[0..n) (by start) of type `type` whose
 * step index is `step` (-2: any), as HTA's merge_kernel_intervals (touching
 * intervals merge), into out; returns how many runs, and the number of
 * events in *count. */
static size_t merge(const struct ns_kevent *v, const long *step_of, size_t n, int type, long step,
		    struct span *out, size_t *count)
{
	size_t runs = 0;
	*count = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].is_sync || v[i].ktype != type || (step != -2 && step_of[i] != step))
			continue;
		(*count)++;
		if (runs && v[i].ts_ns <= out[runs - 1].end) {
			if (v[i].end_ns > out[runs - 1].end)
				out[runs - 1].end = v[i].end_ns;
			continue;
		}
		out[runs++] = (struct span){ v[i].ts_ns, v[i].end_ns };
	}
	return runs;
}

static int64_t length(const struct span *s, size_t n)
{
	int64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += s[i].end - s[i].ts;
	return total;
}

/* The length of the intersection of two unions (sorted, disjoint runs). */
static int64_t intersection(const struct span *a, size_t na, const struct span *b, size_t nb)
{
	int64_t total = 0;
	for (size_t i = 0, j = 0; i < na && j < nb;) {
		int64_t lo = a[i].ts > b[j].ts ? a[i].ts : b[j].ts;
		int64_t hi = a[i].end < b[j].end ? a[i].end : b[j].end;
		if (hi > lo)
			total += hi - lo;
		if (a[i].end < b[j].end)
			i++;
		else
			j++;
	}
	return total;
}

static void measure(const struct ns_kevent *v, const long *step_of, size_t n, long step, struct span *comm,
		    struct span *comp, struct ns_overlap_row *row)
{
	size_t n_comp;
	size_t comm_runs = merge(v, step_of, n, NS_KTYPE_COMMUNICATION, step, comm, &row->n_communication);
	size_t comp_runs = merge(v, step_of, n, NS_KTYPE_COMPUTE, step, comp, &n_comp);
	row->communication_ns = length(comm, comm_runs);
	row->compute_ns = length(comp, comp_runs);
	row->overlap_ns = intersection(comm, comm_runs, comp, comp_runs);
}

int ns_overlap_compute(const struct ns_kevents *k, const struct ns_psteps *steps, struct ns_overlap *out,
		       struct ns_error *err)
{
	int rc = 0;
	size_t cells = k->n ? k->n : 1;
	memset(out, 0, sizeof(*out));
	struct ns_kevent *v = malloc(cells * sizeof(*v));
	long *step_of = malloc(cells * sizeof(*step_of));
	struct span *comm = malloc(cells * sizeof(*comm)), *comp = malloc(cells * sizeof(*comp));
	out->v = calloc(steps->n + 1, sizeof(*out->v));
	if (!v || !step_of || !comm || !comp || !out->v) {
		ns_overlap_release(out);
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (k->n) /* k->v is NULL when there is no device work */
		memcpy(v, k->v, k->n * sizeof(*v));
	ns_sort(v, k->n, sizeof(*v), by_ts);
	for (size_t i = 0; i < k->n; i++)
		step_of[i] = ns_psteps_find(steps, v[i].launch_ts_ns);
	out->n = steps->n + 1;
	out->v[0].step = NS_NONE;
	measure(v, step_of, k->n, -2, comm, comp, &out->v[0]);
	for (size_t s = 0; s < steps->n; s++) {
		out->v[s + 1].step = steps->v[s].number;
		measure(v, step_of, k->n, (long)s, comm, comp, &out->v[s + 1]);
	}
out:
	free(v);
	free(step_of);
	free(comm);
	free(comp);
	return rc;
}

void ns_overlap_release(struct ns_overlap *o)
{
	free(o->v);
	o->v = NULL;
	o->n = 0;
}
