/* CUPTI range-profiler ranges paired with their launches (counters.h). */
#include <stdlib.h>
#include <string.h>

#include "aggregate/counters.h"
#include "common/sort.h"
#include "common/vec.h"

static int cmp_ts(const void *x, const void *y, void *ctx)
{
	const struct ns_event *events = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	if (events[i].ts_ns != events[j].ts_ns)
		return events[i].ts_ns < events[j].ts_ns ? -1 : 1;
	return i < j ? -1 : i > j; /* (stable: file order) */
}

static bool is_launch(const struct ns_trace *t, const struct ns_event *ev)
{
	static const char prefix[] = "cudaLaunchKernel"; /* (and cudaLaunchKernelExC) */
	return ev->kind == NS_KIND_SLICE && ev->cat == NS_CAT_CUDA_RUNTIME &&
	       strncmp(ns_strtab_get(&t->strings, ev->name), prefix, sizeof(prefix) - 1) == 0;
}

/* The events of one kind in time order. */
static uint32_t *events_by_time(const struct ns_trace *t, bool launches, size_t *n)
{
	uint32_t *v = malloc((t->n_events + 1) * sizeof(*v));
	*n = 0;
	for (size_t i = 0; v && i < t->n_events; i++)
		if (launches ? is_launch(t, &t->events[i]) : t->events[i].kind == NS_KIND_COUNTER)
			v[(*n)++] = (uint32_t)i;
	if (v)
		ns_sort_r(v, *n, sizeof(*v), cmp_ts, t->events);
	return v;
}

/* The outermost and innermost cpu_op above fevent f. */
static void op_ends(const struct ns_agg *a, int32_t f, struct ns_counter_range *r)
{
	for (int32_t p = f >= 0 ? ns_fevent_parent(&a->fevents[f]) : -1; p >= 0; p = ns_fevent_parent(&a->fevents[p])) {
		const struct ns_event *ev = &a->trace->events[a->fevents[p].event];
		if (ev->cat != NS_CAT_CPU_OP)
			continue;
		if (!r->bottom_op)
			r->bottom_op = ev->name;
		r->top_op = ev->name;
	}
}

int ns_counter_ranges(const struct ns_agg *a, struct ns_counter_ranges *out, struct ns_error *err)
{
	const struct ns_trace *t = a->trace;
	size_t n_ranges, n_launches;
	uint32_t *ranges = events_by_time(t, false, &n_ranges), *launches = events_by_time(t, true, &n_launches);
	int32_t *fevent_of = ns_agg_fevent_of_events(a);
	size_t *first_value = malloc((t->n_events + 1) * sizeof(*first_value));
	int rc = 0;
	memset(out, 0, sizeof(*out));
	if (!ranges || !launches || !fevent_of || !first_value ||
	    !(out->v = calloc(n_ranges + 1, sizeof(*out->v)))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (n_ranges == 0) {
		rc = ns_error_set(err, NS_ERR_INPUT,
				  "%s: no CUPTI range-profiler ranges (\"cuda_profiler_range\" events): the trace was not "
				  "recorded in CUPTI's range-profiler mode", t->path);
		goto out;
	}
	if (n_ranges != n_launches) {
		rc = ns_error_set(err, NS_ERR_INPUT,
				  "%s: %zu CUPTI range-profiler ranges but %zu cudaLaunchKernel calls: they pair "
				  "one to one, in time order", t->path, n_ranges, n_launches);
		goto out;
	}
	for (size_t i = 0; i < t->n_events; i++)
		first_value[i] = t->n_counter_values; /* (a range without values) */
	for (size_t i = t->n_counter_values; i-- > 0;) /* each range's first value */
		first_value[t->counter_values[i].event] = i;
	for (size_t k = 0; k < n_ranges; k++) {
		struct ns_counter_range *r = &out->v[out->n++];
		r->event = ranges[k];
		r->launch = fevent_of[launches[k]];
		op_ends(a, r->launch, r);
		r->values_off = first_value[ranges[k]];
		while (r->values_off + r->n_values < t->n_counter_values &&
		       t->counter_values[r->values_off + r->n_values].event == ranges[k])
			r->n_values++;
	}
out:
	free(ranges);
	free(launches);
	free(fevent_of);
	free(first_value);
	if (rc)
		ns_counter_ranges_release(out);
	return rc;
}

void ns_counter_ranges_release(struct ns_counter_ranges *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}
