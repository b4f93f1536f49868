/* Communication/computation overlap as HTA computes it
 * (hta/analyzers/communication_analysis.py, get_comm_comp_overlap), per
 * trace (rank) and per profiler step. Definitions: docs/analyses.md. */
#ifndef NS_OVERLAP_H
#define NS_OVERLAP_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate/kernels.h"
#include "common/error.h"

/* communication_ns: the union of the communication kernels' intervals;
 * overlap_ns: the part of it when a compute kernel runs too (the union of
 * the compute kernels' intervals); compute_ns: that union. HTA's
 * comp_comm_overlap_ratio is overlap_ns / communication_ns. */
struct ns_overlap_row {
	int64_t step; /* ProfilerStep N, or NS_NONE: the whole trace */
	size_t n_communication;
	int64_t communication_ns, compute_ns, overlap_ns;
};

struct ns_overlap {
	struct ns_overlap_row *v; /* the whole trace, then each step of steps in order */
	size_t n;
};

/* Over the device events k (ns_kevents_collect); a step's events are those
 * launched inside it (ns_psteps_find of the launch's start, HTA's
 * iteration). */
int ns_overlap_compute(const struct ns_kevents *k, const struct ns_psteps *steps, struct ns_overlap *out,
		       struct ns_error *err);
void ns_overlap_release(struct ns_overlap *o);

#endif
