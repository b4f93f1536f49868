/* Aggregate: PyTorch's FunctionEvent / key_averages semantics over one
 * ns_trace (docs/report.md; spec key-averages-spec.md A2-A5, Part C).
 * Doubles are computed in the same order as PyTorch's Python code so that
 * the printed table matches byte for byte. Integer nanosecond twins of the
 * times feed the database, where sums must be exact. */
#ifndef NS_AGGREGATE_H
#define NS_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/i64map.h"
#include "common/trace.h"

enum ns_devtype { NS_DEV_CPU = 0, NS_DEV_CUDA, NS_DEV_PRIVATEUSE1, NS_DEV_XPU, NS_DEV_MTIA, NS_DEV_HPU };

/* Whether PyTorch gives events of this category a device type (kernel,
 * gpu_memcpy, gpu_memset, cuda_sync, gpu_user_annotation, MTIA, HPU, ...). */
bool ns_cat_on_device(enum ns_cat cat);

/* The backend the trace was recorded with (PyTorch's use_device). */
enum ns_backend { NS_BACKEND_NONE = 0, NS_BACKEND_CUDA, NS_BACKEND_PRIVATEUSE1, NS_BACKEND_XPU,
		  NS_BACKEND_MTIA, NS_BACKEND_HPU };

/* One PyTorch FunctionEvent: 48 bytes, the largest array of a report (one
 * per kept slice, alive beside the events). What can be derived is not
 * stored: the interval (ns_fevent_start, ns_fevent_end: the event's, or
 * its un-widened form), the overload, input shapes and stack
 * (ns_fevent_overload, ns_fevent_shapes, ns_fevent_stack), the depth (the
 * parent chain's length), the self times
 * (ns_fevent_self: the total minus the children's, in PyTorch's order) and
 * the memory columns (ns_fevent_mem: sums over the sorted memory records).
 * Kept are what PyTorch computes recursively: the device totals. */
struct ns_fevent {
	union {
		struct {        /* before the totals are computed: own kernels, in ns_agg.kernels */
			uint32_t kernels_off, kernels_len;
		};
		double device_time_total; /* PyTorch's double (µs): own kernels + children's totals */
	};
	int64_t device_ns;      /* its exact twin (ns) */
	int32_t event;          /* index into trace->events (a memory row: its record) */
	ns_str name;            /* after the ProfilerStep#N -> ProfilerStep* rewrite (and overload split) */
	uint32_t thread;        /* after runtime events moved to their op's thread */
	/* CPU events have a parent, device events the op they are attributed
	 * to, never both: read it with ns_fevent_parent / ns_fevent_launcher */
	int32_t link;
	int32_t first_child, next_sibling; /* CPU children, in start order (-1: none) */
	int32_t avg;            /* the ns_agg.avgs row it was added to, or -1 (removed) */
	uint8_t device_type;    /* enum ns_devtype */
	bool is_user_annotation : 1;
	bool is_async : 1;
	bool removed : 1;       /* merged into its same-name parent by _remove_dup_nodes */
	bool unwidened : 1;     /* a gpu_user_annotation whose writer's widening is undone */
	bool has_records : 1;   /* a CPU event with [memory] records in its span (no search needed otherwise) */
	bool has_flops : 1;     /* its event has FLOPs (trace->flops; no search needed otherwise) */
};
_Static_assert(sizeof(struct ns_fevent) == 48, "ns_fevent is the largest array of a report: keep it small");

/* The self columns of one FunctionEvent (zeros when it is removed). */
struct ns_fself {
	double self_cpu_time_total, self_device_time_total; /* PyTorch's doubles (µs) */
	int64_t self_cpu_ns, self_device_ns;                /* exact twins */
};

/* Memory columns of one FunctionEvent (bytes). */
struct ns_fmem {
	int64_t cpu, device, self_cpu, self_device;
};

/* One key_averages row (FunctionEventAvg). */
struct ns_avg {
	ns_str key, overload, input_shapes;
	ns_str stack;           /* the first event's stack, cut to N frames with --group-by stack=N */
	ns_str neff;            /* the caller's extra key (ns_agg_opts.extra_keys: --by-neff's NEFF hash), else 0 */
	uint8_t device_type;
	bool is_user_annotation;
	bool is_async;
	int64_t first;          /* fevent index of the first event merged in (its parent decides top level) */
	int64_t count;
	double cpu_time_total, self_cpu_time_total, device_time_total, self_device_time_total;
	int64_t cpu_ns, self_cpu_ns, device_ns, self_device_ns;
	int64_t cpu_mem, device_mem, self_cpu_mem, self_device_mem;
	int64_t flops;          /* FLOPs: args "flops" (with_flops=True), plus those of the shapes with opts.shape_flops */
	int64_t flops_shapes;   /* the part of flops computed from the shapes */
	bool has_trace_flops;   /* some event of the row had args "flops" */
};

/* NS_GROUP_NEFF tells the report and the diff that rows are split by the
 * NEFF key; aggregation itself groups by whatever opts.extra_keys gives. */
enum ns_group_by { NS_GROUP_NAME = 0, NS_GROUP_SHAPE = 1 << 0, NS_GROUP_OVERLOAD = 1 << 1, NS_GROUP_NEFF = 1 << 2 };

struct ns_agg;

struct ns_agg_opts {
	unsigned group_by;      /* enum ns_group_by bits */
	int stack_n;            /* --group-by stack=N (0 = off) */
	bool split_overloads;   /* capture_overload_names: "aten::add.Tensor" -> name + overload */
	int backend_override;   /* -1 = infer from the trace, else enum ns_backend */
	bool shape_flops;       /* FLOPs from the input shapes count too (--flops; docs/report.md "FLOPs") */
	unsigned threads;       /* threads the aggregation may use (0 or 1: the calling one only) */
	/* A caller's extra grouping key (NULL: none): called once the
	 * FunctionEvents are built, it returns a->n_fevents keys (calloc'd,
	 * freed by aggregation; 0: none), NULL when out of memory. --by-neff's
	 * is ntff/rows.h ns_ntff_neff_keys. */
	ns_str *(*extra_keys)(struct ns_trace *t, const struct ns_agg *a);
};

struct ns_agg {
	struct ns_trace *trace;     /* not owned; fevent/avg strings live in trace->strings */
	struct ns_agg_opts opts;
	enum ns_backend backend;
	struct ns_fevent *fevents;  /* sorted by (start, -end), stable */
	size_t n_fevents;
	bool use_device;            /* device columns count (a backend is known) */
	bool by_shape;              /* ns_fevent_shapes is kept (NS_GROUP_SHAPE) */
	bool split_overloads;       /* ns_fevent_overload is kept */
	bool has_mem;               /* the trace has [memory] or [OutOfMemory] records */
	/* the times of the [memory] records, ascending, and the running sums of
	 * their CPU and device bytes (n_mem_recs + 1 each): ns_fevent_mem's
	 * ranges. The times are copied out of the events so that the binary
	 * searches stay in one small array. */
	int64_t *mem_ts;
	int64_t *mem_cpu_sum, *mem_dev_sum;
	size_t n_mem_recs;
	struct ns_i64map names;     /* (event name, is cpu_op) -> table name | overload << 32 */
	struct ns_i64map shapes;    /* Input Dims string -> Python str() of the shapes */
	ns_str empty_list;          /* "[]" */
	ns_str profiler_step;       /* "ProfilerStep*": the table name of every ProfilerStep#N */
	int64_t unwiden_start_ns;   /* an unwidened event starts this much later... */
	int64_t unwiden_end_ns;     /* ... and ends this much later (negative: earlier) */
	int64_t t0_ns;              /* PyTorch's time origin: µs times count from here */
	double *kernels;            /* own kernel durations per op (µs, PyTorch's doubles) */
	int64_t *kernels_ns;        /* the same, exact ns */
	size_t n_kernels;
	struct ns_avg *avgs;        /* key_averages rows, first-seen order */
	size_t n_avgs;
	bool profile_memory;
};

int ns_aggregate(struct ns_trace *t, const struct ns_agg_opts *opts, struct ns_agg *out,
		 struct ns_error *err);
/* ns_aggregate in two steps, for a caller with work for the FunctionEvents
 * meanwhile (ingest stores them while the rows are made).
 * ns_aggregate_fevents makes the FunctionEvents, linked, with their totals:
 * all that ns_fevent_* reads (on failure *out is released).
 * ns_aggregate_rows then groups them into avgs; it writes only avgs and
 * each fevent's avg, so other threads may read the rest meanwhile, and,
 * unless grouping by stack or NEFF (which interns strings), the trace. On
 * failure *a is left to ns_agg_release. */
int ns_aggregate_fevents(struct ns_trace *t, const struct ns_agg_opts *opts, struct ns_agg *out,
			 struct ns_error *err);
int ns_aggregate_rows(struct ns_agg *a, struct ns_error *err);
void ns_agg_release(struct ns_agg *a);

/* PyTorch's start_us/end_us of a time (ns on the trace's axis). */
static inline double ns_fevent_us(const struct ns_agg *a, int64_t ns)
{
	return (double)(ns - a->t0_ns) / 1000.0;
}

/* The start and end of the FunctionEvent an event becomes (ns on the
 * trace's axis): the event's, or their un-widened form. */
static inline int64_t ns_span_start(const struct ns_agg *a, const struct ns_event *ev, bool unwidened)
{
	return ev->ts_ns + (unwidened ? a->unwiden_start_ns : 0);
}

static inline int64_t ns_span_end(const struct ns_agg *a, const struct ns_event *ev, bool unwidened)
{
	return ev->ts_ns + ev->dur_ns + (unwidened ? a->unwiden_end_ns : 0);
}

/* PyTorch's start and end of a FunctionEvent. */
static inline int64_t ns_fevent_start(const struct ns_agg *a, const struct ns_fevent *fe)
{
	return ns_span_start(a, &a->trace->events[fe->event], fe->unwidened);
}

static inline int64_t ns_fevent_end(const struct ns_agg *a, const struct ns_fevent *fe)
{
	return ns_span_end(a, &a->trace->events[fe->event], fe->unwidened);
}

static inline int64_t ns_fevent_span_ns(const struct ns_agg *a, const struct ns_fevent *fe)
{
	return ns_fevent_end(a, fe) - ns_fevent_start(a, fe);
}

/* PyTorch's end_us - start_us: the double the time columns add up. */
static inline double ns_fevent_span_us(const struct ns_agg *a, const struct ns_fevent *fe)
{
	return ns_fevent_us(a, ns_fevent_end(a, fe)) - ns_fevent_us(a, ns_fevent_start(a, fe));
}

/* CPU time (ns): the span of a CPU event; 0 for device events and for
 * events merged into their parent (which count nowhere). */
static inline int64_t ns_fevent_cpu_ns(const struct ns_agg *a, const struct ns_fevent *fe)
{
	return fe->device_type == NS_DEV_CPU && !fe->removed ? ns_fevent_span_ns(a, fe) : 0;
}

/* The CPU parent (fevent index), or -1. */
static inline int32_t ns_fevent_parent(const struct ns_fevent *fe)
{
	return fe->device_type == NS_DEV_CPU ? fe->link : -1;
}

/* The op (fevent index) device work is attributed to, or -1. */
static inline int32_t ns_fevent_launcher(const struct ns_fevent *fe)
{
	return fe->device_type != NS_DEV_CPU ? fe->link : -1;
}

/* The op whose row owns a device event's time besides its own row: its
 * launcher op, or the same-name parent that was merged into (spec A3
 * _remove_dup_nodes); -1 for none. */
static inline int64_t ns_fevent_owner(const struct ns_agg *a, int64_t op)
{
	while (op >= 0 && a->fevents[op].removed)
		op = ns_fevent_parent(&a->fevents[op]);
	return op;
}

/* Per trace event, the FunctionEvent it became (fevent index), or -1; the
 * caller frees it. NULL when out of memory. */
int32_t *ns_agg_fevent_of_events(const struct ns_agg *a);

struct ns_fself ns_fevent_self(const struct ns_agg *a, size_t f);
struct ns_fmem ns_fevent_mem(const struct ns_agg *a, size_t f);
/* The overload split off the name (0 unless capture_overload_names). */
ns_str ns_fevent_overload(const struct ns_agg *a, const struct ns_fevent *fe);
/* Python str() of the input shapes (0 unless grouped by shape). */
ns_str ns_fevent_shapes(const struct ns_agg *a, const struct ns_fevent *fe);
/* "Call stack" frames joined by ';' (0 if none). */
ns_str ns_fevent_stack(const struct ns_agg *a, const struct ns_fevent *fe);
const char *ns_backend_label(enum ns_backend b); /* "CUDA", "NEURON", "XPU", "MTIA", "HPU", "" */

#endif
