/* HTA's temporal breakdown (get_temporal_breakdown) and idle-time breakdown
 * (get_idle_time_breakdown) of one trace (one rank), over the device
 * events of kernels.h. Definitions: docs/analyses.md. */
#ifndef NS_BREAKDOWN_H
#define NS_BREAKDOWN_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate/kernels.h"
#include "common/error.h"

enum ns_idle_kind { NS_IDLE_HOST_WAIT = 0, NS_IDLE_KERNEL_WAIT, NS_IDLE_OTHER, NS_IDLE__COUNT };

/* "host_wait", "kernel_wait", "other" (HTA's idle_category names). */
const char *ns_idle_kind_name(enum ns_idle_kind k);

/* The time from the first device event's start to the last one's end (all
 * streams), split: idle (no device event running), compute (a compute
 * kernel running), non-compute (the rest: memory, communication, other).
 * communication_ns and memory_ns are the time when a kernel of that type
 * runs (they may overlap compute and each other). */
struct ns_temporal {
	size_t n_events;
	int64_t span_ns, idle_ns, compute_ns, non_compute_ns, communication_ns, memory_ns;
};

/* One stream's gaps: before each of its kernels (memcpy, memset, MTIA
 * events; by start) the gap since the previous one ended, by why: the
 * launch started after the previous one ended (host wait), else a gap
 * under the threshold (kernel wait), else other. A gap may be negative
 * (kernels that overlap on one stream), as in HTA. */
struct ns_idle_stream {
	int64_t stream;
	int64_t idle_ns[NS_IDLE__COUNT];
	int64_t gaps[NS_IDLE__COUNT];
	int64_t total_ns;
};

/* The temporal breakdown of one profiler step: over the device events
 * launched in it (HTA's iteration, as overlap.h's step rows). */
struct ns_step_temporal {
	int64_t step; /* ProfilerStep N */
	struct ns_temporal temporal;
};

struct ns_breakdown {
	struct ns_temporal temporal;
	struct ns_idle_stream *streams; /* by stream number */
	size_t n_streams;
	struct ns_step_temporal *steps; /* one per step of ns_breakdown_steps' steps, in order */
	size_t n_steps;
};

/* kernel_wait_ns: HTA's consecutive_kernel_delay (its default 30 µs). */
int ns_breakdown_compute(const struct ns_kevents *k, int64_t kernel_wait_ns, struct ns_breakdown *out,
			 struct ns_error *err);
/* Fills b->steps: the temporal breakdown of each step of steps, over the
 * events of k whose launch starts inside it (ns_psteps_find). */
int ns_breakdown_steps(const struct ns_kevents *k, const struct ns_psteps *steps, struct ns_breakdown *b,
		       struct ns_error *err);
void ns_breakdown_release(struct ns_breakdown *b);

#endif
