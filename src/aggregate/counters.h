/* The CUPTI range-profiler ranges of a trace ("cuda_profiler_range": one
 * per kernel, with counters, never a time) with the ops that launched
 * them, as HTA's get_cupti_counter_data_with_operators pairs them: the
 * i-th range in time order with the i-th cudaLaunchKernel call (the range
 * profiler replays one kernel at a time and the ranges carry no
 * correlation id); the op stack is the launch call's cpu_op ancestors,
 * outermost first. Feeds `neuron-stats counters` (docs/report.md
 * "Counter-mode traces"). */
#ifndef NS_COUNTERS_H
#define NS_COUNTERS_H

#include "aggregate/aggregate.h"

struct ns_counter_range {
	uint32_t event;           /* the range (trace->events) */
	int32_t launch;           /* its cudaLaunchKernel's fevent, or -1 (no FunctionEvent) */
	ns_str top_op, bottom_op; /* the outermost and innermost cpu_op around the launch (0: none) */
	size_t values_off;        /* its values: trace->counter_values[values_off .. + n_values) */
	size_t n_values;
};

struct ns_counter_ranges {
	struct ns_counter_range *v; /* in time order */
	size_t n;
};

/* NS_ERR_INPUT when the ranges and the launches do not pair up. */
int ns_counter_ranges(const struct ns_agg *a, struct ns_counter_ranges *out, struct ns_error *err);
void ns_counter_ranges_release(struct ns_counter_ranges *r);

#endif
