/* Launch calls joined with their device work (launches.h). */
#include <stdlib.h>
#include <string.h>

#include "aggregate/launches.h"
#include "common/sort.h"
#include "common/vec.h"

static const char *const launch_names[] = { "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync",
					    "cudaMemsetAsync", "runFunction - job_prep_and_submit_for_execution" };

static bool is_call(const struct ns_trace *t, const struct ns_event *ev)
{
	if (ev->kind != NS_KIND_SLICE || ev->correlation == NS_NONE)
		return false;
	const char *name = ns_strtab_get(&t->strings, ev->name);
	for (size_t i = 0; i < NS_ARRAY_SIZE(launch_names); i++)
		if (strcmp(name, launch_names[i]) == 0)
			return true;
	return false;
}

/* Device work with a correlation id (HTA: an event on a stream). */
static bool is_work(const struct ns_event *ev)
{
	return ev->kind == NS_KIND_SLICE && ev->correlation != NS_NONE &&
	       (ev->cat == NS_CAT_KERNEL || ev->cat == NS_CAT_GPU_MEMCPY || ev->cat == NS_CAT_GPU_MEMSET ||
		ev->cat == NS_CAT_MTIA_CCP_EVENTS);
}

static int cmp_launch(const void *x, const void *y, void *ctx)
{
	const struct ns_event *events = ctx;
	const struct ns_launch *p = x, *q = y;
	int64_t a[4] = { events[p->call].ts_ns, p->call, events[p->work].ts_ns, p->work };
	int64_t b[4] = { events[q->call].ts_ns, q->call, events[q->work].ts_ns, q->work };
	for (int i = 0; i < 4; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

int ns_launches_find(const struct ns_agg *a, struct ns_launches *out, struct ns_error *err)
{
	const struct ns_trace *t = a->trace;
	struct ns_i64map call_of; /* correlation -> the first call with it */
	int32_t *fevent_of = ns_agg_fevent_of_events(a);
	size_t cap = 0;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	ns_i64map_init(&call_of);
	if (!fevent_of)
		goto oom;
	for (size_t i = 0; i < t->n_events; i++)
		if (is_call(t, &t->events[i]) && ns_i64map_put_first(&call_of, t->events[i].correlation, (int64_t)i) < 0)
			goto oom;
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *w = &t->events[i];
		int64_t c = is_work(w) ? ns_i64map_get(&call_of, w->correlation, -1) : -1;
		if (c < 0)
			continue;
		if (NS_GROW(out->v, cap, out->n + 1) < 0)
			goto oom;
		const struct ns_event *call = &t->events[c];
		int32_t f = fevent_of[c];
		int64_t delay = w->ts_ns - call->ts_ns - call->dur_ns;
		out->v[out->n++] = (struct ns_launch){
			.call = (uint32_t)c, .work = (uint32_t)i, .correlation = w->correlation,
			.op = f >= 0 ? ns_fevent_parent(&a->fevents[f]) : -1,
			.cpu_ns = call->dur_ns, .device_ns = w->dur_ns, .delay_ns = delay > 0 ? delay : 0 };
	}
	ns_sort_r(out->v, out->n, sizeof(*out->v), cmp_launch, t->events);
	goto out;
oom:
	rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	ns_launches_release(out);
out:
	ns_i64map_release(&call_of);
	free(fevent_of);
	return rc;
}

void ns_launches_release(struct ns_launches *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
