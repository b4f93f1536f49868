/* The in-memory model of one Kineto trace: what ingest produces, what the
 * store persists and loads back, and what aggregate reads. Times are integer
 * nanoseconds on the file's own time axis (era C: relative to
 * baseTimeNanoseconds; eras A/B: since the Unix epoch). Raw args are NOT kept
 * here (they stream straight to the store), so memory grows only with the
 * events the analysis needs (see docs/performance.md). */
#ifndef NS_TRACE_H
#define NS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/strtab.h"

#define NS_NONE INT64_MIN /* an absent integer field */
/* Times and durations are kept within +-2^62 ns (+-146 years), so that
 * ts + dur and differences of two times never overflow 64 bits. */
#define NS_TIME_LIMIT_NS (INT64_C(1) << 62)
/* The kept events' durations (and |Bytes| of memory events) of one trace
 * add up to at most 2^56 (ns: 2.3 years of event time; bytes: 64 PiB), so
 * that every total the analysis takes (rows, trees, steps, diffs, merged
 * traces, up to 128 of them) fits in 64 bits. A real trace is orders of
 * magnitude below. */
#define NS_SUM_LIMIT (INT64_C(1) << 56)

/* Kineto activity types, from the `cat` string (spec B4). Legacy spellings
 * (Operator, Runtime, Kernel, Memcpy, Memset, gpu_user_Annotation) map to the
 * modern value. NS_CAT_OTHER is any category we do not interpret. */
enum ns_cat {
	NS_CAT_OTHER = 0,
	NS_CAT_CPU_OP,
	NS_CAT_USER_ANNOTATION,
	NS_CAT_GPU_USER_ANNOTATION,
	NS_CAT_KERNEL,
	NS_CAT_GPU_MEMCPY,
	NS_CAT_GPU_MEMSET,
	NS_CAT_CUDA_RUNTIME,
	NS_CAT_CUDA_DRIVER,
	NS_CAT_CUDA_SYNC,
	NS_CAT_CUDA_EVENT,
	NS_CAT_CUDA_PROFILER_RANGE,
	NS_CAT_CPU_INSTANT_EVENT,
	NS_CAT_PYTHON_FUNCTION,
	NS_CAT_OVERHEAD,
	NS_CAT_XPU_RUNTIME,
	NS_CAT_XPU_DRIVER,
	NS_CAT_MTIA_RUNTIME,
	NS_CAT_MTIA_CCP_EVENTS,
	NS_CAT_MTIA_INSIGHT,
	NS_CAT_MTIA_COUNTERS,
	NS_CAT_PRIVATEUSE1_RUNTIME,
	NS_CAT_PRIVATEUSE1_DRIVER,
	NS_CAT_GLOW_RUNTIME,
	NS_CAT_HPU_OP,
	NS_CAT_EXTERNAL_CORRELATION,
	NS_CAT_TRACE,   /* the "PyTorch Profiler (0)" span */
	NS_CAT_AC2G,    /* CPU -> device flow (legacy: "async") */
	NS_CAT_FWDBWD,  /* forward -> backward flow */
	NS_CAT__COUNT
};

enum ns_ph { NS_PH_X = 0, NS_PH_I, NS_PH_S, NS_PH_F, NS_PH_M, NS_PH_C, NS_PH_B, NS_PH_E, NS_PH_OTHER };

/* What a kept event is, for the analysis. */
enum ns_kind {
	NS_KIND_SLICE = 0, /* ph X with an interpreted category */
	NS_KIND_MEMORY,    /* [memory] instant */
	NS_KIND_OOM,       /* [OutOfMemory] instant */
	NS_KIND_FLOW_S,    /* flow start (ac2g) */
	NS_KIND_FLOW_F,    /* flow end (ac2g) */
	NS_KIND_COUNTER,   /* a CUPTI range-profiler range (cuda_profiler_range): counters, not a time */
	NS_KIND_PYTHON,    /* a python_function call, kept only when asked (ns_ingest_opts.keep_python) */
};

enum ns_event_flag {
	NS_EV_UNFINISHED = 1 << 0, /* args.finished == false (aggregate/unfinished.c) */
	NS_EV_TS_FRACTION = 1 << 1, /* ts token had a fraction (era C / ns precision) */
	NS_EV_FLOPS_SHAPES = 1 << 2 /* its FLOPs (ns_trace.flops) come from the input shapes, not args "flops" */
};

/* 64 bytes: the model's largest array. What only the store needs (Ev Idx,
 * Record function id, ...) stays in the ingest row (ingest/rows.h). */
struct ns_event {
	int64_t ts_ns;
	int64_t dur_ns;       /* 0 for instants and flows */
	union {
		struct {      /* every kind but memory records */
			int64_t external_id;  /* args "External id" / "external id", or NS_NONE */
			int64_t correlation;  /* args "correlation" (device/runtime), flow id for flows, or NS_NONE */
		};
		struct {      /* NS_KIND_MEMORY, NS_KIND_OOM */
			int64_t bytes;        /* args "Bytes" (0 if absent) */
			int64_t device_type;  /* args "Device Type" (c10 DeviceType), or -1 */
		} mem;
	};
	uint32_t idx;         /* position in traceEvents (file order), joins the store's events.id */
	ns_str name;          /* as written (ProfilerStep#N is rewritten by aggregate, not here) */
	ns_str input_dims;    /* raw JSON text of args "Input Dims"/"Input dims", compacted; 0 if absent */
	uint32_t thread;      /* index into ns_trace.threads */
	ns_str stack;         /* args "Call stack" ("frame;frame;..."), 0 if absent */
	ns_str neff;          /* NEFF hash of device work (docs/neuron.md "NEFF hash"), 0 if absent */
	uint8_t cat;          /* enum ns_cat */
	uint8_t kind;         /* enum ns_kind */
	uint8_t flags;        /* enum ns_event_flag */
};

/* A memory record: [memory] or [OutOfMemory] (its `mem` is set). */
static inline bool ns_event_is_memory(const struct ns_event *ev)
{
	return ev->kind == NS_KIND_MEMORY || ev->kind == NS_KIND_OOM;
}

/* One end of an ac2g flow (with an integer id). Flows are kept apart from
 * the events, 24 bytes instead of 80: only the linking of device work to
 * its launch reads them (spec B7), and a CUDA trace has two per kernel. */
struct ns_flow {
	int64_t id;
	int64_t ts_ns;
	uint32_t thread;
	uint8_t kind;         /* NS_KIND_FLOW_S or NS_KIND_FLOW_F */
};

/* A counter of CUPTI range-profiler events ("cuda_profiler_range"): its
 * values summed over the ranges. Kineto writes these events with made-up
 * times (the profiling span cut into equal parts), so they are counters,
 * never time (docs/report.md "Counter-mode traces"). */
struct ns_counter {
	ns_str name;          /* the args key, e.g. "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" */
	int64_t sum;          /* exact while every value is an integer and the sum fits */
	double sum_approx;    /* the sum as a double (used once `exact` is false) */
	bool exact;
};

/* Adds one range's value to c's sum (exact while every value is an integer
 * and the sum fits). */
void ns_counter_add(struct ns_counter *c, bool is_int, int64_t v, double d);

/* One counter value of one range (`neuron-stats counters`). */
struct ns_counter_value {
	uint32_t event;       /* the range: index into ns_trace.events */
	uint32_t counter;     /* index into ns_trace.counters */
	bool is_int;
	int64_t i;            /* the value, when an integer */
	double d;             /* the value as a double */
};

/* Two args of a device event (kernel, gpu_memcpy, gpu_memset, cuda_sync,
 * mtia_ccp_events slices) that only the HTA-style analyses read
 * (aggregate/kernels.c): Kineto's args "stream", the stream HTA goes by
 * (Kineto writes it as the tid too, but a "Context Sync" has tid -1 and
 * stream 4294967295, and MTIA events a tid of their own), and args "bytes"
 * of a memcpy or memset. One per device event with an args object that
 * Kineto ingest read (or a database gave back), in event order; the others
 * (device events made from Neuron exports) have none, and their stream is
 * their tid. */
struct ns_dev_args {
	uint32_t event;       /* index into ns_trace.events */
	int64_t stream;       /* args "stream" when an integer, else NS_NONE */
	int64_t bytes;        /* args "bytes" when an integer, else NS_NONE */
};

/* The FLOPs of one event: args "flops" (PyTorch's with_flops=True), or,
 * where the event has none, PyTorch's formula over its input shapes
 * (common/flops.h; the event's NS_EV_FLOPS_SHAPES flag set). Kept apart,
 * for the few events that have them, so ns_event stays 64 bytes. */
struct ns_event_flops {
	uint32_t event;       /* index into ns_trace.events; ascending */
	int64_t flops;
};

/* One (pid, tid) track. pid/tid are JSON ints or strings in Kineto traces;
 * both are kept as text, plus the integer value when they are integers. */
struct ns_thread {
	ns_str pid_text, tid_text;
	int64_t pid, tid;     /* NS_NONE when not an integer */
	ns_str name;          /* from the thread_name metadata event, or 0 */
};

/* One of neuron-explorer's own warnings (dropped events, ring overwrites)
 * in the Neuron export this trace's device events came from (docs/neuron.md
 * "Explorer's warnings"). */
struct ns_xwarn_ref {
	ns_str file;              /* the export's path */
	ns_str category;          /* 0 when it has none */
	ns_str message;
	int64_t offset;           /* byte offset of the entry in the export */
	int64_t pid;              /* the process whose events were taken from the export (split), or NS_NONE */
};

struct ns_trace {
	char *path;               /* the file it came from (owned) */
	char *abspath;            /* its absolute path as a database recorded it, else NULL (owned) */
	struct ns_strtab strings; /* names, categories, pid/tid text, shapes */
	struct ns_event *events;  /* kept events other than flow ends, file order */
	size_t n_events, cap_events;
	struct ns_flow *flows;    /* kept flow ends, file order */
	size_t n_flows, cap_flows;
	struct ns_thread *threads;
	size_t n_threads, cap_threads;
	struct ns_event_flops *flops; /* by event index, ascending */
	size_t n_flops, cap_flops;
	uint64_t n_trace_events;  /* every element of traceEvents, kept or not */
	int64_t base_time_ns;     /* baseTimeNanoseconds, or NS_NONE */
	int64_t rank;             /* distributedInfo.rank, or NS_NONE */
	int64_t world_size;       /* distributedInfo.world_size, or NS_NONE */
	bool ts_has_fraction;     /* era C (or ns-resolution) timestamps */
	bool has_base_time;
	bool profile_memory;      /* top-level "profile_memory": 1, or any [memory] event */
	bool legacy_array;        /* top level was a bare array of events */
	/* Legacy autograd-profiler exports (PyTorch without Kineto): ops are
	 * "ph":"X" events without "cat" on the pid "CPU functions"; each launch
	 * of device work is only a flow start ("cat":"cpu_to_cuda"), with no
	 * device event and so no device time. */
	bool legacy_autograd;
	uint64_t n_untimed_launches;
	/* CUPTI range-profiler counters (the events are NS_KIND_COUNTER), summed
	 * over the ranges, in first-seen order; not stored in a database */
	struct ns_counter *counters;
	size_t n_counters, cap_counters;
	struct ns_counter_value *counter_values; /* each range's values, in file order */
	size_t n_counter_values, cap_counter_values;
	struct ns_dev_args *dev_args;
	size_t n_dev_args, cap_dev_args;
	bool has_cat[NS_CAT__COUNT];
	int64_t truncated_at;     /* byte offset where a damaged file stopped, or -1 */
	int64_t split_at;         /* ingest: where the part of traceEvents a second thread read began, or -1 */
	/* Top-level keys other than traceEvents, as raw JSON text (key, value)
	 * pairs, in file order. Values larger than NS_META_VALUE_MAX are dropped. */
	ns_str *meta;             /* 2 * n_meta ids */
	size_t n_meta, cap_meta;
	/* Neuron: Explorer's warnings of the export the device events came
	 * from; rows with device time are marked when there are any */
	struct ns_xwarn_ref *xwarn;
	size_t n_xwarn, cap_xwarn;
};

#define NS_META_VALUE_MAX (1u << 20)

void ns_trace_init(struct ns_trace *t);
void ns_trace_release(struct ns_trace *t);
/* Returns the index of the (pid, tid) thread, adding it if new; -1 on OOM. */
int64_t ns_trace_thread(struct ns_trace *t, ns_str pid_text, int64_t pid, ns_str tid_text, int64_t tid);
/* Appends a kept event; a flow end (NS_KIND_FLOW_S/F, the id in
 * `correlation`) goes to t->flows. -1 on OOM. */
int ns_trace_push(struct ns_trace *t, const struct ns_event *ev);
/* Appends the args of the device event t->events[a->event]. -1 on OOM. */
int ns_trace_push_dev_args(struct ns_trace *t, const struct ns_dev_args *a);
/* Whether a slice of category cat is device work with a stream to HTA
 * (kernel, gpu_memcpy, gpu_memset, cuda_sync, mtia_ccp_events). */
bool ns_cat_on_stream(uint8_t cat);
/* Gives the last event pushed FLOPs. -1 on OOM. */
int ns_trace_push_flops(struct ns_trace *t, int64_t flops);
/* The FLOPs of event i, or NS_NONE. */
int64_t ns_trace_flops_of(const struct ns_trace *t, size_t i);
/* Appends an Explorer warning (its strings already interned in t). -1 on OOM. */
int ns_trace_push_xwarn(struct ns_trace *t, const struct ns_xwarn_ref *w);
/* Gives back the unused capacity of the event and flow arrays (after ingest). */
void ns_trace_trim(struct ns_trace *t);
const char *ns_cat_name(enum ns_cat cat);
enum ns_cat ns_cat_from_string(const char *s, size_t len);
/* Concatenates n traces into out (initialised here, released by the
 * caller also on failure): threads stay apart per file, ids (External id,
 * correlation, flow id) are renumbered so that each file's link only its
 * own events, times are aligned on baseTimeNanoseconds. NS_ERR_INPUT when
 * an aligned time would leave +-NS_TIME_LIMIT_NS, NS_ERR_NOMEM on OOM. */
int ns_trace_merge(const struct ns_trace *in, size_t n, struct ns_trace *out, struct ns_error *err);
/* Appends part, the parse of the rest of t's traceEvents from an element
 * on (ingest's split: the same file, ids and times), as if t's parse had
 * gone on through it: part's strings and threads added in part's order
 * (so in the order that parse would have added the new ones), its events,
 * flow ends, FLOPs and device args after t's, element positions after
 * t's. Thread names and counters are the caller's to check. -1 on OOM. */
int ns_trace_append(struct ns_trace *t, const struct ns_trace *part);
/* Looks up a top-level metadata value's raw JSON text, or NULL. */
const char *ns_trace_meta(const struct ns_trace *t, const char *key);

#endif
