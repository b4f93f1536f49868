/* Per-step values of the key_averages rows: what each row's Self CPU, Self
 * device and call count add up to inside each profiler step (the CPU
 * `ProfilerStep#N` user annotations). `diff` uses them to judge noise
 * (docs/diff.md). Which step a FunctionEvent belongs to:
 *   1. the ProfilerStep#N annotation that is its CPU ancestor (fevent.parent);
 *   2. device work: the step of the op that launched it (fevent.launched_by);
 *   3. otherwise the step whose [start, end] contains its start (device work
 *      with no launching op, CPU work on threads other than the step's);
 *   4. otherwise none: it counts in the row's totals but in no step. */
#ifndef NS_STEPS_H
#define NS_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate/aggregate.h"
#include "common/error.h"

struct ns_steps {
	size_t n_steps;
	/* N of each step, ascending; steps with the same N (one per thread or
	 * rank) are one step. An annotation whose N does not parse gets a
	 * negative number of its own. */
	int64_t *number;
	size_t n_rows; /* = agg->n_avgs */
	/* Row-major, [row * n_steps + step]: the row's sums inside each step. */
	int64_t *calls, *self_cpu_ns, *self_device_ns;
};

/* Computes the per-step values of agg's rows. A trace without ProfilerStep
 * annotations gives n_steps = 0. */
int ns_steps_compute(const struct ns_agg *agg, struct ns_steps *out, struct ns_error *err);
void ns_steps_release(struct ns_steps *s);
/* Sorts step numbers ascending and drops repeats in place; returns how many
 * are left (also used to merge the steps of several ranks). */
size_t ns_step_numbers_unique(int64_t *numbers, size_t n);

#endif
