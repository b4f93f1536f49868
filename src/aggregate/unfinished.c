/* PyTorch records an op's end when its RecordFunction exits; an op still
 * open when the profiler stops has none. Kineto then writes it stretched to
 * the end of the capture window with `"finished": false`
 * (GenericActivityProfiler::processCpuTrace, libkineto). In the process,
 * build_tree (torch/csrc/profiler/collection.cpp) pushes such an op on its
 * thread's stack without an end event; when an enclosing event leaves the
 * stack, everything above it is marked finished, and torchOpEndNS() lends
 * the op its parent's end. An op with no enclosing event is never finished
 * and never becomes a FunctionEvent. This replays that per thread. */
#include <stdlib.h>

#include "aggregate/unfinished.h"
#include "common/sort.h"

static bool is_torch_op(const struct ns_event *ev)
{
	return ev->kind == NS_KIND_SLICE && (ev->cat == NS_CAT_CPU_OP || ev->cat == NS_CAT_USER_ANNOTATION);
}

/* The events of build_tree's stacks: torch ops and Python calls. */
static bool in_tree(const struct ns_event *ev)
{
	return is_torch_op(ev) || (ev->kind == NS_KIND_SLICE && ev->cat == NS_CAT_PYTHON_FUNCTION);
}

static bool is_unfinished(const struct ns_event *ev)
{
	return is_torch_op(ev) && (ev->flags & NS_EV_UNFINISHED);
}

/* By thread, then start; at one start a finished event (longest first)
 * before an unfinished one, which it then encloses; then trace order. */
static int cmp_tree_order(const void *x, const void *y, void *ctx)
{
	const struct ns_event *events = ctx;
	const struct ns_event *a = &events[*(const int32_t *)x], *b = &events[*(const int32_t *)y];
	bool ua = is_unfinished(a), ub = is_unfinished(b);
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns ? -1 : 1;
	if (ua != ub)
		return ua ? 1 : -1;
	if (!ua && a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns ? -1 : 1;
	return *(const int32_t *)x < *(const int32_t *)y ? -1 : 1;
}

/* An open event's end; an unfinished op with no finished ancestor is open
 * to the end (and lends nothing to the ops it encloses). */
#define NEVER_ENDS INT64_MAX

int ns_finish_unfinished(struct ns_trace *t)
{
	size_t n = 0, n_unfinished = 0;
	int32_t *order = NULL;
	int64_t *stack = NULL;
	int rc = -1;

	for (size_t i = 0; i < t->n_events; i++) {
		n += in_tree(&t->events[i]);
		n_unfinished += is_unfinished(&t->events[i]);
	}
	if (n_unfinished == 0)
		return 0;
	order = malloc(n * sizeof(*order));
	stack = malloc(n * sizeof(*stack));
	if (!order || !stack)
		goto out;
	n = 0;
	for (size_t i = 0; i < t->n_events; i++)
		if (in_tree(&t->events[i]))
			order[n++] = (int32_t)i;
	ns_sort_r(order, n, sizeof(*order), cmp_tree_order, t->events);

	size_t depth = 0;
	for (size_t k = 0; k < n; k++) {
		struct ns_event *ev = &t->events[order[k]];
		if (k > 0 && ev->thread != t->events[order[k - 1]].thread)
			depth = 0;
		while (depth > 0 && stack[depth - 1] < ev->ts_ns) /* build_tree pops an end before a later start */
			depth--;
		int64_t end = ev->ts_ns + ev->dur_ns;
		if (is_unfinished(ev)) {
			end = depth > 0 ? stack[depth - 1] : NEVER_ENDS;
			if (end != NEVER_ENDS) {
				ev->dur_ns = end - ev->ts_ns;
				ev->flags &= (uint8_t)~NS_EV_UNFINISHED;
			}
		}
		if (end > ev->ts_ns) /* an event of no length is finished at once, never a parent */
			stack[depth++] = end;
	}
	rc = 0;
out:
	free(order);
	free(stack);
	return rc;
}
