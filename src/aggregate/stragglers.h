/* Cross-rank stragglers (docs/analyses.md): per profiler step, which rank
 * finished last and by how much; per rank, the time its communication
 * kernels (collectives) spent waiting for the last rank to arrive. The
 * traces are the ranks of one job, on clocks that agree (their
 * baseTimeNanoseconds, where written, are applied as ns_trace_merge does). */
#ifndef NS_STRAGGLERS_H
#define NS_STRAGGLERS_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate/kernels.h"
#include "common/error.h"

/* One trace of the job: its rank, device events and steps. */
struct ns_straggler_input {
	const struct ns_trace *t;
	int64_t rank;
	const struct ns_kevents *k;
	const struct ns_psteps *steps;
};

/* One rank's ProfilerStep#N; times from the step's first start (the
 * earliest start of any rank's ProfilerStep#N). */
struct ns_step_rank {
	int64_t step, rank, start_ns, end_ns;
	double behind_median_ns; /* end minus the median end of the step's ranks */
	bool last;               /* the rank that ended last (on a tie, the first in input order) */
};

/* One step over the ranks that have it. */
struct ns_step_summary {
	int64_t step, last_rank, last_end_ns, min_dur_ns, max_dur_ns;
	size_t n_ranks;
	double median_end_ns, median_dur_ns;
};

/* One rank's communication kernels. An occurrence is the i-th kernel of a
 * name on a rank (by start); it is matched when every rank has it. Its
 * wait on a rank: from the kernel's start until the last rank's kernel of
 * that occurrence starts, at most its duration. */
struct ns_collective_rank {
	int64_t rank, count, matched, total_ns, wait_ns, last_arrivals;
};

struct ns_stragglers {
	struct ns_step_summary *steps; /* by step number */
	size_t n_steps;
	struct ns_step_rank *step_ranks; /* by step number, then input order */
	size_t n_step_ranks;
	struct ns_collective_rank *collectives; /* input order */
	size_t n_collectives;
};

int ns_stragglers_compute(const struct ns_straggler_input *in, size_t n, struct ns_stragglers *out,
			  struct ns_error *err);
void ns_stragglers_release(struct ns_stragglers *s);

#endif
