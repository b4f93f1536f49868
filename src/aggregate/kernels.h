/* Device work as Holistic Trace Analysis (HTA) sees it: which events are
 * device "kernels", their type (compute, communication, memory, other),
 * per-kernel statistics (`neuron-stats kernels`), and the temporal and
 * idle-time breakdowns (`neuron-stats breakdown`, breakdown.h). The
 * definitions, and where each comes from in HTA's source, are in
 * docs/analyses.md. Times are integer nanoseconds. */
#ifndef NS_KERNELS_H
#define NS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/trace.h"

enum ns_ktype { NS_KTYPE_COMPUTE = 0, NS_KTYPE_COMMUNICATION, NS_KTYPE_MEMORY, NS_KTYPE_OTHER, NS_KTYPE__COUNT };

/* "compute", "communication", "memory", "other". */
const char *ns_ktype_name(enum ns_ktype t);
/* HTA's get_kernel_type() of a kernel name (hta/common/types.py patterns). */
enum ns_ktype ns_ktype_of(const char *name);

/* One device event kept for the analyses. */
struct ns_kevent {
	int64_t ts_ns, end_ns;
	int64_t launch_ts_ns;  /* start of the CPU event with the same correlation (the launch), or NS_NONE */
	int64_t stream;
	int64_t bytes;         /* args "bytes" of a memcpy or memset, or NS_NONE */
	uint32_t event;        /* index into trace->events */
	uint8_t ktype;         /* enum ns_ktype */
	bool is_sync;          /* a cuda_sync event on a stream (not a kernel; HTA counts it in the spans) */
};

/* The device events of a trace: kernels, memcpy, memset, MTIA CCP events
 * and cuda_sync events on a stream (tid >= 0). When the trace has two or
 * more distinct ProfilerStep#N names, HTA's filter applies: only device
 * events launched (by correlation) by a CPU event that starts before the
 * last ProfilerStep starts are kept (the last step is incomplete). */
struct ns_kevents {
	struct ns_kevent *v;
	size_t n;
};

int ns_kevents_collect(const struct ns_trace *t, struct ns_kevents *out, struct ns_error *err);
void ns_kevents_release(struct ns_kevents *k);

/* Statistics of one kernel name (or one type when grouped by type). */
struct ns_kstat {
	ns_str name;           /* 0 for a type row */
	const char *name_text; /* the name (in the trace's strings), or the type's name */
	const char *neff_text; /* by NEFF: the NEFF hash of the row's events ("" for none); else "" */
	uint8_t ktype;
	int64_t count, total_ns, min_ns, max_ns;
	double mean_ns, median_ns, stddev_ns; /* stddev: sample (n - 1), 0 for one call, as pandas' std */
	/* the calls with args "bytes" (memcpy, memset): how many, their bytes
	 * in all, the least and most of one call, and their time in all */
	int64_t n_sized, bytes, min_bytes, max_bytes, sized_ns;
};

struct ns_kstats {
	struct ns_kstat *v;   /* by type (compute, communication, memory, other), then total descending, then name */
	size_t n;
	int64_t total_ns;     /* of every row: the denominator of the share */
	bool by_neff;         /* the rows are per NEFF hash too (neff_text) */
};

/* The time statistics of s (count, total, min, max, mean, median, sample
 * stddev) over n durations sorted ascending: dur[0], then every stride
 * bytes further (a field of an array of structs). n > 0. */
void ns_kstat_times(const int64_t *dur, size_t stride, size_t n, struct ns_kstat *s);

/* Per kernel name (by_type false) or per kernel type (true), and with
 * by_neff per NEFF hash of the events too (Neuron: docs/neuron.md "NEFF
 * hash"); cuda_sync events are not kernels and are left out. */
int ns_kstats_compute(const struct ns_trace *t, const struct ns_kevents *k, bool by_type, bool by_neff,
		      struct ns_kstats *out, struct ns_error *err);
void ns_kstats_release(struct ns_kstats *s);

/* One ProfilerStep#N annotation (a CPU slice): HTA's iteration N. */
struct ns_pstep {
	int64_t number, ts_ns, end_ns;
};

/* The ProfilerStep#N annotations HTA keeps, by start: with two distinct
 * names or more, the last step (the one that starts last) is left out, as
 * the device events launched in it (ns_kevents_collect). */
struct ns_psteps {
	struct ns_pstep *v;
	size_t n;
};

int ns_psteps_collect(const struct ns_trace *t, struct ns_psteps *out, struct ns_error *err);
void ns_psteps_release(struct ns_psteps *s);
/* HTA's iteration of an event starting at ts_ns (add_iteration): the index
 * of the step with ts <= ts_ns < end, or -1 (a device event: that of its
 * launch). */
long ns_psteps_find(const struct ns_psteps *s, int64_t ts_ns);

#endif
