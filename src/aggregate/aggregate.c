/* PyTorch's _parse_kineto_results, _build_tree and key_averages over a
 * Kineto trace (spec A2-A5, Part C). Comments name the spec step each part
 * follows; docs/report.md states the rules in prose. */
#include "aggregate/aggregate.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "aggregate/unfinished.h"
#include "common/i64map.h"
#include "common/jobs.h"
#include "common/sort.h"
#include "common/vec.h"

#define NO_INDEX (-1)


static const char *const filtered_names[] = {
	/* spec A2 step 1 */
	"profiler::_record_function_enter", "profiler::_record_function_enter_new",
	"profiler::_record_function_exit", "aten::is_leaf", "aten::output_nr", "aten::_version",
};

const char *ns_backend_label(enum ns_backend b)
{
	switch (b) {
	case NS_BACKEND_CUDA: return "CUDA";
	case NS_BACKEND_PRIVATEUSE1: return "NEURON";
	case NS_BACKEND_XPU: return "XPU";
	case NS_BACKEND_MTIA: return "MTIA";
	case NS_BACKEND_HPU: return "HPU";
	default: return "";
	}
}

/* spec B8: use_device is not in the JSON; infer it from what was recorded. */
static enum ns_backend infer_backend(const struct ns_trace *t)
{
	const bool *has = t->has_cat;
	if (has[NS_CAT_PRIVATEUSE1_RUNTIME] || has[NS_CAT_PRIVATEUSE1_DRIVER])
		return NS_BACKEND_PRIVATEUSE1;
	if (has[NS_CAT_XPU_RUNTIME] || has[NS_CAT_XPU_DRIVER])
		return NS_BACKEND_XPU;
	if (has[NS_CAT_MTIA_RUNTIME] || has[NS_CAT_MTIA_CCP_EVENTS] || has[NS_CAT_MTIA_INSIGHT] ||
	    has[NS_CAT_MTIA_COUNTERS])
		return NS_BACKEND_MTIA;
	if (has[NS_CAT_HPU_OP])
		return NS_BACKEND_HPU;
	if (has[NS_CAT_CUDA_RUNTIME] || has[NS_CAT_CUDA_DRIVER] || has[NS_CAT_KERNEL] ||
	    has[NS_CAT_GPU_MEMCPY] || has[NS_CAT_GPU_MEMSET] || ns_trace_meta(t, "cuda_runtime_version") ||
	    ns_trace_meta(t, "hip_runtime_version") || ns_trace_meta(t, "roctracer_version"))
		return NS_BACKEND_CUDA;
	return NS_BACKEND_NONE;
}

/* spec A2 step 4 (deviceTypeFromActivity) */
static enum ns_devtype devtype_of(enum ns_cat cat, enum ns_backend backend)
{
	switch (cat) {
	case NS_CAT_KERNEL:
	case NS_CAT_GPU_MEMCPY:
	case NS_CAT_GPU_MEMSET:
		if (backend == NS_BACKEND_XPU)
			return NS_DEV_XPU;
		/* fall through */
	case NS_CAT_CUDA_SYNC:
	case NS_CAT_GPU_USER_ANNOTATION:
	case NS_CAT_CUDA_PROFILER_RANGE:
		return backend == NS_BACKEND_PRIVATEUSE1 ? NS_DEV_PRIVATEUSE1 : NS_DEV_CUDA;
	case NS_CAT_MTIA_CCP_EVENTS:
	case NS_CAT_MTIA_INSIGHT:
	case NS_CAT_MTIA_COUNTERS:
		return NS_DEV_MTIA;
	case NS_CAT_HPU_OP:
		return NS_DEV_HPU;
	default:
		return NS_DEV_CPU;
	}
}

bool ns_cat_on_device(enum ns_cat cat)
{
	return devtype_of(cat, NS_BACKEND_CUDA) != NS_DEV_CPU;
}

/* The names c10d gives the RecordFunction of a collective's Work
 * ("nccl:all_reduce", "gloo:broadcast", "nccl:send 0->1", ...): Work::Work
 * (torch/csrc/distributed/c10d/Work.cpp) calls _setAsync() on it, so
 * PyTorch's FunctionEvent is_async, which the trace does not carry. */
static const char *const c10d_work_prefixes[] = { "nccl:", "gloo:", "mpi:", "ucc:", "xccl:" };

static bool is_c10d_work(const struct ns_trace *t, const struct ns_event *ev)
{
	if (ev->cat != NS_CAT_USER_ANNOTATION)
		return false;
	const char *name = ns_strtab_get(&t->strings, ev->name);
	for (size_t i = 0; i < NS_ARRAY_SIZE(c10d_work_prefixes); i++)
		if (strncmp(name, c10d_work_prefixes[i], strlen(c10d_work_prefixes[i])) == 0)
			return true;
	return false;
}

/* Host-side calls that Kineto (not PyTorch's RecordFunction) recorded. */
static bool is_runtime_cat(enum ns_cat cat)
{
	switch (cat) {
	case NS_CAT_CUDA_RUNTIME:
	case NS_CAT_CUDA_DRIVER:
	case NS_CAT_XPU_RUNTIME:
	case NS_CAT_XPU_DRIVER:
	case NS_CAT_MTIA_RUNTIME:
	case NS_CAT_PRIVATEUSE1_RUNTIME:
	case NS_CAT_PRIVATEUSE1_DRIVER:
	case NS_CAT_GLOW_RUNTIME:
		return true;
	default:
		return false;
	}
}

static bool is_launch_target(enum ns_cat cat)
{
	return cat == NS_CAT_KERNEL || cat == NS_CAT_GPU_MEMCPY || cat == NS_CAT_GPU_MEMSET ||
	       cat == NS_CAT_CUDA_SYNC;
}

/* Working state of one ns_aggregate call. */
struct work {
	struct ns_trace *t;
	const struct ns_agg_opts *opts;
	struct ns_agg *out;
	bool ext_trusted;         /* External id links device work to its op (era C) */
	bool oom;                 /* a lookup could not be built */
	unsigned built;           /* enum lookup bits */
	int64_t t0_ns;
	ns_str filtered[NS_ARRAY_SIZE(filtered_names)];
	int32_t *launcher;        /* event -> the op (event) behind a runtime call or device work, or -1 */
	struct ns_idindex op_by_ext, rt_by_corr, flow_s_by_id;
	struct ns_i64map flow_f_by_key, rt_by_key;
	/* the events the fevents are made from, in fevent order (n_order) */
	int32_t *order;
	size_t n_order;
	/* the memory records and the OOM records, each in trace order:
	 * collect_fevents lists them for assign_memory */
	int32_t *recs, *ooms;
	size_t n_recs, n_ooms;
	uint64_t *unwidened;      /* bitmap over events: ns_fevent.unwidened (NULL: none) */
	uint64_t *has_records;    /* bitmap over events: ns_fevent.has_records (NULL: none) */
	uint64_t *has_flops;      /* bitmap over events: ns_fevent.has_flops (NULL: none) */
	uint64_t *named;          /* bitmap over name_key: the names of fevents to be */
	size_t n_name_keys;
	ns_str *name_of;          /* name_key -> table name, for the keys named */
	uint32_t main_th;         /* main_thread */
	/* era C (index_by_id): each fevent's PyTorch id, and the CPU fevents
	 * that take device work, sorted by (id, fevent) */
	int64_t *ids;
	int32_t *by_id;
	size_t n_by_id;
	uint32_t *id_start;       /* dense ids (count_by_id): by_id's start of each id from id_min, else NULL */
	int64_t id_min, id_max;
};

static bool bit_is_set(const uint64_t *bits, size_t i)
{
	return bits && (bits[i / 64] >> (i % 64)) & 1;
}

/* Sets bit i of *bits, allocated (n bits, zeroed) on first use; -1 on OOM. */
static int set_bit(uint64_t **bits, size_t n, size_t i)
{
	if (!*bits && !(*bits = calloc(n / 64 + 1, sizeof(**bits))))
		return -1;
	(*bits)[i / 64] |= (uint64_t)1 << (i % 64);
	return 0;
}

static bool name_filtered(const struct work *w, ns_str name)
{
	for (size_t i = 0; i < NS_ARRAY_SIZE(w->filtered); i++)
		if (w->filtered[i] == name)
			return true;
	return false;
}

static int64_t thread_ts_key(uint32_t thread, int64_t ts_ns)
{
	return (int64_t)(((uint64_t)thread << 48) ^ (uint64_t)ts_ns);
}

/* spec A2 step 2: ProfilerStep#N -> ProfilerStep*, and the optional overload split. */
static int rewrite_name(struct work *w, ns_str id, bool split_overload, ns_str *name, ns_str *overload)
{
	const char *text = ns_strtab_get(&w->t->strings, id);
	size_t len = ns_strtab_len(&w->t->strings, id);
	*name = id;
	*overload = 0;
	if (len >= 13 && memcmp(text, "ProfilerStep#", 13) == 0) {
		*name = w->out->profiler_step;
		return 0;
	}
	if (len > 2 && text[0] == '_' && text[1] == 'Z') {
		/* PyTorch's c10::demangle calls __cxa_demangle, which is this
		 * libiberty code with these flags */
		char *plain = cplus_demangle_v3(text, DMGL_PARAMS | DMGL_TYPES);
		if (plain) {
			*name = ns_strtab_intern(&w->t->strings, plain, strlen(plain));
			free(plain);
			return *name == UINT32_MAX ? -1 : 0;
		}
	}
	if (split_overload) {
		const char *ns_sep = strstr(text, "::");
		const char *dot = ns_sep ? strrchr(ns_sep + 2, '.') : NULL;
		if (dot && dot[1]) {
			*name = ns_strtab_intern(&w->t->strings, text, (size_t)(dot - text));
			*overload = ns_strtab_intern(&w->t->strings, dot + 1, len - (size_t)(dot + 1 - text));
			if (*name == UINT32_MAX || *overload == UINT32_MAX)
				return -1;
		}
	}
	return 0;
}

static int64_t name_key(const struct ns_agg *a, const struct ns_event *ev)
{
	return (int64_t)ev->name << 1 | (a->split_overloads && ev->cat == NS_CAT_CPU_OP);
}

/* rewrite_name, once for each name_key that collect_fevents marked
 * (w->named), before the fevents are made: w->name_of[key] is the table
 * name, which the two threads that make the fevents read; a->names keeps
 * the name and the overload (ns_fevent_overload reads it there). */
static int table_names(struct work *w)
{
	if (!(w->name_of = malloc((w->n_name_keys + 1) * sizeof(*w->name_of))))
		return -1;
	for (size_t word = 0; word < (w->n_name_keys + 63) / 64 && w->named; word++) {
		for (uint64_t bits = w->named[word]; bits; bits &= bits - 1) {
			size_t key = word * 64 + (size_t)__builtin_ctzll(bits);
			ns_str name, overload;
			if (rewrite_name(w, (ns_str)(key >> 1), key & 1, &name, &overload) ||
			    ns_i64map_set(&w->out->names, (int64_t)key, (int64_t)((uint64_t)overload << 32 | name)))
				return -1;
			w->name_of[key] = name;
		}
	}
	return 0;
}

/* Python str() of the input shapes: "Input Dims" [[1024],[1024],[]] becomes
 * "[[1024], [1024], []]"; a TensorList (nested list) input becomes "[]". */
static int shapes_string(struct work *w, ns_str dims, ns_str *out)
{
	int64_t known = ns_i64map_get(&w->out->shapes, dims, -1);
	if (known >= 0) {
		*out = (ns_str)known;
		return 0;
	}
	const char *p = ns_strtab_get(&w->t->strings, dims);
	size_t n = ns_strtab_len(&w->t->strings, dims);
	char *buf = malloc(2 * n + 3);
	size_t o = 0;
	int depth = 0;
	bool nested = false;
	size_t elem_start = 0;
	if (!buf)
		return -1;
	if (n == 0 || p[0] != '[') {
		*out = w->out->empty_list;
		free(buf);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == '[') {
			depth++;
			if (depth == 2) {
				elem_start = o;
				nested = false;
			} else if (depth > 2) {
				nested = true;
			}
			if (depth <= 2)
				buf[o++] = c;
		} else if (c == ']') {
			if (depth == 2 && nested) {
				o = elem_start;
				buf[o++] = '[';
			}
			if (depth <= 2)
				buf[o++] = c;
			depth--;
		} else if (depth <= 2 && !(depth == 2 && nested)) {
			buf[o++] = c;
			if (c == ',') /* Python separates list items with ", " */
				buf[o++] = ' ';
		}
	}
	*out = ns_strtab_intern(&w->t->strings, buf, o);
	free(buf);
	if (*out == UINT32_MAX || ns_i64map_set(&w->out->shapes, dims, *out))
		return -1;
	return 0;
}

static bool is_cpu_op(const struct ns_event *ev)
{
	return ev->kind == NS_KIND_SLICE && ev->cat == NS_CAT_CPU_OP;
}

/* An op's end, which holds the calls that start at it (spec B7). */
static int64_t op_end(const struct ns_event *ev)
{
	return ev->ts_ns + ev->dur_ns;
}

/* The start of event i (ctx: the events), a sort key. */
static int64_t event_start_key(const void *ctx, int32_t i)
{
	return ((const struct ns_event *)ctx)[i].ts_ns;
}

/* Longest first: the end of event i, descending (ctx: the events). */
static int64_t op_end_desc_key(const void *ctx, int32_t i)
{
	return ~op_end(&((const struct ns_event *)ctx)[i]);
}

/* The lookups that link device work to ops are built on first use: a
 * trace whose device events all carry a trusted External id never builds
 * the correlation or flow tables (their memory would be the
 * peak of a large report). Each is one pass in trace order, so "first
 * writer wins" is the same as building them all up front. */
enum lookup { LOOKUP_EXT = 1, LOOKUP_CORR = 2, LOOKUP_FLOWS = 4 };

/* The ids of the lookups (ctx: the trace): a cpu_op's External id, a
 * runtime call's correlation, a flow start's id. */
static bool op_ext_id(const void *ctx, size_t i, int64_t *id)
{
	const struct ns_event *ev = &((const struct ns_trace *)ctx)->events[i];
	*id = ev->external_id;
	return is_cpu_op(ev) && ev->external_id != NS_NONE;
}

static bool runtime_corr_id(const void *ctx, size_t i, int64_t *id)
{
	const struct ns_event *ev = &((const struct ns_trace *)ctx)->events[i];
	*id = ev->correlation;
	return ev->kind == NS_KIND_SLICE && is_runtime_cat(ev->cat) && ev->correlation != NS_NONE;
}

static bool flow_start_id(const void *ctx, size_t i, int64_t *id)
{
	const struct ns_flow *fl = &((const struct ns_trace *)ctx)->flows[i];
	*id = fl->id;
	return fl->kind == NS_KIND_FLOW_S;
}

static int build_lookup(struct work *w, enum lookup which)
{
	struct ns_trace *t = w->t;
	switch (which) {
	case LOOKUP_EXT:
		return ns_idindex_build(&w->op_by_ext, t->n_events, op_ext_id, t);
	case LOOKUP_CORR:
		return ns_idindex_build(&w->rt_by_corr, t->n_events, runtime_corr_id, t);
	case LOOKUP_FLOWS:
		break;
	}
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		if (ev->kind == NS_KIND_SLICE && is_runtime_cat(ev->cat) &&
		    ns_i64map_put_first(&w->rt_by_key, thread_ts_key(ev->thread, ev->ts_ns), (int64_t)i))
			return -1;
	}
	for (size_t i = 0; i < t->n_flows; i++) {
		const struct ns_flow *fl = &t->flows[i];
		if (fl->kind != NS_KIND_FLOW_S &&
		    ns_i64map_put_first(&w->flow_f_by_key, thread_ts_key(fl->thread, fl->ts_ns), (int64_t)i))
			return -1;
	}
	return ns_idindex_build(&w->flow_s_by_id, t->n_flows, flow_start_id, t);
}

/* Builds `which` if it is not built yet; false (and w->oom) on OOM. */
static bool have(struct work *w, enum lookup which)
{
	if (!(w->built & which)) {
		if (build_lookup(w, which)) {
			w->oom = true;
			return false;
		}
		w->built |= which;
	}
	return true;
}

/* The op (event index) that launched runtime call `rt` by its External
 * id, else ENCLOSING_OP_OF(rt): the innermost op around the call, which
 * resolve_enclosing finds for all such calls at once (spec B7). */
#define ENCLOSING_OP_OF(rt) (-2 - (int64_t)(rt))
static int64_t op_of_runtime(struct work *w, size_t rt)
{
	const struct ns_event *ev = &w->t->events[rt];
	if (w->ext_trusted && ev->external_id != NS_NONE && have(w, LOOKUP_EXT)) {
		int64_t op = ns_idindex_get(&w->op_by_ext, ev->external_id, NO_INDEX);
		if (op != NO_INDEX)
			return op;
	}
	return ENCLOSING_OP_OF(rt);
}

/* The op (event index) a device event is attributed to, -1, or
 * ENCLOSING_OP_OF(its runtime call). Precedence: External id (era C), then
 * correlation -> runtime call, then ac2g flow. */
static int64_t op_of_device(struct work *w, size_t dev)
{
	const struct ns_event *ev = &w->t->events[dev];
	int64_t rt = NO_INDEX;
	if (w->ext_trusted && ev->external_id != NS_NONE && have(w, LOOKUP_EXT)) {
		int64_t op = ns_idindex_get(&w->op_by_ext, ev->external_id, NO_INDEX);
		if (op != NO_INDEX)
			return op;
	}
	if (ev->correlation != NS_NONE && have(w, LOOKUP_CORR))
		rt = ns_idindex_get(&w->rt_by_corr, ev->correlation, NO_INDEX);
	if (rt == NO_INDEX && have(w, LOOKUP_FLOWS)) {
		int64_t f = ns_i64map_get(&w->flow_f_by_key, thread_ts_key(ev->thread, ev->ts_ns), NO_INDEX);
		int64_t s = f != NO_INDEX ? ns_idindex_get(&w->flow_s_by_id, w->t->flows[f].id, NO_INDEX) : NO_INDEX;
		if (s != NO_INDEX) {
			const struct ns_flow *start = &w->t->flows[s];
			rt = ns_i64map_get(&w->rt_by_key, thread_ts_key(start->thread, start->ts_ns), NO_INDEX);
		}
	}
	return rt != NO_INDEX ? op_of_runtime(w, (size_t)rt) : NO_INDEX;
}

static int64_t trace_origin(const struct ns_trace *t)
{
	int64_t min_cpu = INT64_MAX;
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		if (ev->kind != NS_KIND_SLICE)
			continue;
		if (ev->cat == NS_CAT_TRACE &&
		    strncmp(ns_strtab_get(&t->strings, ev->name), "PyTorch Profiler", 16) == 0)
			return ev->ts_ns;
		if (devtype_of(ev->cat, NS_BACKEND_CUDA) == NS_DEV_CPU && ev->ts_ns < min_cpu)
			min_cpu = ev->ts_ns;
	}
	return min_cpu == INT64_MAX ? 0 : min_cpu;
}

/* The thread PyTorch files unlinked Kineto events under: the profiler's
 * (main) thread, tid == pid of the process that ran the ops. */
static uint32_t main_thread(const struct ns_trace *t)
{
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		if (!is_cpu_op(ev))
			continue;
		int64_t pid = t->threads[ev->thread].pid;
		for (size_t k = 0; k < t->n_threads; k++)
			if (t->threads[k].pid == pid && t->threads[k].tid == pid && pid != NS_NONE)
				return (uint32_t)k;
		return ev->thread;
	}
	return 0;
}

/* The gpu_user_annotation span is widened by the writer (spec B2) by
 * margin_start before and margin_dur - margin_start after. */
static void set_unwiden_margins(struct work *w)
{
	int64_t margin_start = w->ext_trusted ? 1 : 1000;
	int64_t margin_dur = w->ext_trusted ? 2 : 1000;
	w->out->unwiden_start_ns = margin_start;
	w->out->unwiden_end_ns = margin_start - margin_dur;
}

/* The widening is undone when the un-widened start is exactly the start of
 * device work there: the key that start has. */
static int64_t unwidened_start_key(const struct work *w, const struct ns_event *annotation)
{
	return thread_ts_key(annotation->thread, annotation->ts_ns + w->out->unwiden_start_ns);
}

/* spec A2 step 1: which Kineto events become FunctionEvents. */
static bool becomes_fevent(const struct work *w, const struct ns_event *ev)
{
	return ev->kind == NS_KIND_SLICE && ev->cat != NS_CAT_TRACE && !(ev->flags & NS_EV_UNFINISHED) &&
	       !name_filtered(w, ev->name);
}

/* The call of a launcher still to be found (ctx: the work) and its thread
 * and start, sort keys. */
static int64_t pending_call(const struct work *w, int32_t i)
{
	return ENCLOSING_OP_OF(0) - w->launcher[i];
}

static int64_t pending_thread_key(const void *ctx, int32_t i)
{
	const struct work *w = ctx;
	return w->t->events[pending_call(w, i)].thread;
}

static int64_t pending_start_key(const void *ctx, int32_t i)
{
	const struct work *w = ctx;
	return w->t->events[pending_call(w, i)].ts_ns;
}

/* The walk of resolve_enclosing: the calls still to be answered, by
 * (thread, start), and each thread's stack of open ops. */
struct enclosing_walk {
	int32_t *pending, *answer; /* the calls' launchers (event indices) and their ops */
	int32_t *below;            /* the op under each open op */
	int32_t *top, *last;       /* each thread's open op and last op */
	size_t *first, *next, *stop; /* each thread's calls: the first, the next one and the end */
};

/* Answers thread th's calls that start before `before` (INT64_MAX: all). */
static void answer_calls(const struct work *w, struct enclosing_walk *e, uint32_t th, int64_t before)
{
	const struct ns_event *events = w->t->events;
	for (; e->next[th] < e->stop[th]; e->next[th]++) {
		int64_t start = events[pending_call(w, e->pending[e->next[th]])].ts_ns;
		if (start >= before)
			break;
		while (e->top[th] != NO_INDEX && start > op_end(&events[e->top[th]]))
			e->top[th] = e->below[e->top[th]];
		e->answer[e->next[th]] = e->top[th];
	}
}

/* Walks the ops ops[0..n_ops) (NULL: every event, in trace order), each
 * thread's with a stack of the open ops, answering each call as the ops
 * up to its start leave the stack: a call changes nothing below the top
 * (what it pops, the next op would), so the calls need not be merged in.
 * False when a thread's ops are not in (start, -end, position) order. */
static bool walk_ops(const struct work *w, struct enclosing_walk *e, const int32_t *ops, size_t n_ops)
{
	const struct ns_trace *t = w->t;
	size_t n = ops ? n_ops : t->n_events;
	for (size_t th = 0; th < t->n_threads; th++) {
		e->top[th] = e->last[th] = NO_INDEX;
		e->next[th] = e->first[th];
	}
	for (size_t k = 0; k < n; k++) {
		int32_t i = ops ? ops[k] : (int32_t)k;
		const struct ns_event *ev = &t->events[i], *prev;
		if (!is_cpu_op(ev))
			continue;
		uint32_t th = ev->thread;
		prev = e->last[th] != NO_INDEX ? &t->events[e->last[th]] : NULL;
		if (prev && (prev->ts_ns > ev->ts_ns || (prev->ts_ns == ev->ts_ns && op_end(prev) < op_end(ev))))
			return false;
		e->last[th] = i;
		answer_calls(w, e, th, ev->ts_ns); /* (calls sort after the ops that start with them) */
		while (e->top[th] != NO_INDEX && ev->ts_ns > op_end(&t->events[e->top[th]]))
			e->top[th] = e->below[e->top[th]];
		e->below[i] = e->top[th];
		e->top[th] = i;
	}
	for (uint32_t th = 0; th < t->n_threads; th++)
		answer_calls(w, e, th, INT64_MAX);
	return true;
}

/* The launchers still ENCLOSING_OP_OF(a call) (n of them): the innermost
 * cpu_op on the call's thread whose [ts, ts+dur] holds the call's ts
 * (spec B7, the era A/B fallback; in era C a few calls, as a
 * cudaDeviceSynchronize outside any op, lack an op's External id). One
 * walk of the events in trace order, where Kineto writes each thread's
 * ops in (start, -end) order; when a trace's are not, a walk of its ops
 * sorted so. */
static int resolve_enclosing(struct work *w, size_t n)
{
	const struct ns_trace *t = w->t;
	size_t n_threads = t->n_threads, n_ops = 0;
	struct enclosing_walk e = {
		.pending = malloc(n * sizeof(*e.pending)),
		.answer = malloc(n * sizeof(*e.answer)),
		.below = malloc((t->n_events + 1) * sizeof(*e.below)),
		.top = malloc((n_threads + 1) * sizeof(*e.top)),
		.last = malloc((n_threads + 1) * sizeof(*e.last)),
		.first = calloc(n_threads + 1, sizeof(*e.first)),
		.next = calloc(n_threads + 1, sizeof(*e.next)),
		.stop = calloc(n_threads + 1, sizeof(*e.stop)),
	};
	int32_t *ops = NULL; /* (only for ops out of order) */
	size_t k = 0;
	int rc = -1;
	if (!e.pending || !e.answer || !e.below || !e.top || !e.last || !e.first || !e.next || !e.stop)
		goto out;
	for (size_t i = 0; i < t->n_events; i++)
		if (w->launcher[i] <= ENCLOSING_OP_OF(0))
			e.pending[k++] = (int32_t)i;
	if (ns_sort_keyed(e.pending, n, pending_thread_key, pending_start_key, w))
		goto out;
	for (k = 0; k < n; k++)
		e.stop[t->events[pending_call(w, e.pending[k])].thread]++;
	for (size_t th = 0, calls = 0; th < n_threads; th++) {
		e.first[th] = calls;
		calls += e.stop[th];
		e.stop[th] = calls;
	}
	if (!walk_ops(w, &e, NULL, 0)) {
		if (!(ops = malloc((t->n_events + 1) * sizeof(*ops))))
			goto out;
		for (size_t i = 0; i < t->n_events; i++)
			if (is_cpu_op(&t->events[i]))
				ops[n_ops++] = (int32_t)i;
		if (ns_sort_keyed(ops, n_ops, event_start_key, op_end_desc_key, t->events))
			goto out;
		walk_ops(w, &e, ops, n_ops); /* (in order now) */
	}
	for (k = 0; k < n; k++)
		w->launcher[e.pending[k]] = e.answer[k];
	rc = 0;
out:
	free(e.pending);
	free(e.answer);
	free(e.below);
	free(e.top);
	free(e.last);
	free(e.first);
	free(e.next);
	free(e.stop);
	free(ops);
	return rc;
}

/* The op behind every runtime call and every piece of device work, found
 * before the FunctionEvents exist: the lookups it needs are freed before
 * the largest array is made. */
static int resolve_launchers(struct work *w)
{
	struct ns_trace *t = w->t;
	size_t n_pending = 0;
	w->launcher = malloc((t->n_events + 1) * sizeof(*w->launcher));
	if (!w->launcher)
		return -1;
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		int64_t op = NO_INDEX;
		if (becomes_fevent(w, ev))
			op = is_runtime_cat(ev->cat)     ? op_of_runtime(w, i)
			     : is_launch_target(ev->cat) ? op_of_device(w, i)
							 : NO_INDEX;
		w->launcher[i] = (int32_t)op;
		n_pending += op <= ENCLOSING_OP_OF(0);
	}
	if (w->oom)
		return -1;
	return n_pending ? resolve_enclosing(w, n_pending) : 0;
}

/* The gpu_user_annotation events whose widening is undone (w->unwidened),
 * found before the fevent array exists. The annotations are few and device
 * work is many: the starts the annotations ask for are a small map, which
 * the device work's starts are looked up in. */
static int find_widened(struct work *w)
{
	struct ns_trace *t = w->t;
	struct ns_i64map asked; /* an un-widened start -> whether device work starts there */
	int32_t *annotations = NULL;
	int64_t *dev_starts = NULL; /* (keys: thread_ts_key) */
	size_t n_annotations = 0, cap_annotations = 0, n_dev = 0, cap_dev = 0;
	int rc = -1;
	if (!t->has_cat[NS_CAT_GPU_USER_ANNOTATION])
		return 0;
	ns_i64map_init(&asked);
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		if (ev->kind != NS_KIND_SLICE)
			continue;
		if (ev->cat == NS_CAT_GPU_USER_ANNOTATION) {
			if (NS_GROW(annotations, cap_annotations, n_annotations + 1) < 0)
				goto out;
			annotations[n_annotations++] = (int32_t)i;
		} else if (is_launch_target(ev->cat)) {
			if (NS_GROW(dev_starts, cap_dev, n_dev + 1) < 0)
				goto out;
			dev_starts[n_dev++] = thread_ts_key(ev->thread, ev->ts_ns);
		}
	}
	for (size_t k = 0; k < n_annotations; k++)
		if (ns_i64map_put_first(&asked, unwidened_start_key(w, &t->events[annotations[k]]), 0))
			goto out;
	for (size_t k = 0; k < n_dev; k++)
		if (ns_i64map_get(&asked, dev_starts[k], NO_INDEX) == 0 && ns_i64map_set(&asked, dev_starts[k], 1))
			goto out;
	for (size_t k = 0; k < n_annotations; k++)
		if (ns_i64map_get(&asked, unwidened_start_key(w, &t->events[annotations[k]]), 0) == 1 &&
		    set_bit(&w->unwidened, t->n_events, (size_t)annotations[k]))
			goto out;
	rc = 0;
out:
	ns_i64map_release(&asked);
	free(annotations);
	free(dev_starts);
	return rc;
}

/* The events that become fevents, in trace order (w->order), and the
 * memory records (w->recs) and OOM records (w->ooms). */
static int collect_fevents(struct work *w)
{
	struct ns_trace *t = w->t;
	size_t cap_recs = 0, cap_ooms = 0;
	if (find_widened(w))
		return -1;
	/* (one pass over the events; order has room for the memory rows too:
	 * assign_memory adds them) */
	if (!(w->order = malloc((t->n_events + 1) * sizeof(*w->order))))
		return -1;
	w->n_name_keys = 2 * (size_t)t->strings.count;
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		if (becomes_fevent(w, ev)) {
			w->order[w->n_order++] = (int32_t)i;
			if (set_bit(&w->named, w->n_name_keys, (size_t)name_key(w->out, ev)))
				return -1;
		} else if (ev->kind == NS_KIND_MEMORY) {
			if (NS_GROW(w->recs, cap_recs, w->n_recs + 1) < 0)
				return -1;
			w->recs[w->n_recs++] = (int32_t)i;
		} else if (ev->kind == NS_KIND_OOM) {
			if (NS_GROW(w->ooms, cap_ooms, w->n_ooms + 1) < 0)
				return -1;
			w->ooms[w->n_ooms++] = (int32_t)i;
		}
	}
	return 0;
}

/* ns_fevent_start and ns_fevent_end of the fevent event i becomes. */
static int64_t fevent_start_of(const struct work *w, int32_t i)
{
	return ns_span_start(w->out, &w->t->events[i], bit_is_set(w->unwidened, (size_t)i));
}

static int64_t fevent_end_of(const struct work *w, int32_t i)
{
	return ns_span_end(w->out, &w->t->events[i], bit_is_set(w->unwidened, (size_t)i));
}

/* The fevents of w->order[lo..hi), in that (sorted) order: written in
 * place, never moved. A device event's link holds, for now, the event index
 * of the op behind it (see link_launchers). Reads the trace and the work
 * only, but for the input shapes (by_shape), which are interned here. */
static int make_range(struct work *w, size_t lo, size_t hi)
{
	struct ns_trace *t = w->t;
	struct ns_agg *a = w->out;
	for (size_t k = lo; k < hi; k++) {
		int32_t i = w->order[k];
		const struct ns_event *ev = &t->events[i];
		struct ns_fevent *fe = &a->fevents[k];
		ns_str shapes;
		memset(fe, 0, sizeof(*fe));
		fe->event = i;
		fe->thread = ev->thread;
		fe->link = fe->first_child = fe->next_sibling = NO_INDEX;
		if (ns_event_is_memory(ev)) { /* a memory row (assign_memory): an instant */
			fe->name = ev->name;
			fe->device_type = NS_DEV_CPU;
			continue;
		}
		fe->unwidened = bit_is_set(w->unwidened, (size_t)i);
		fe->has_records = bit_is_set(w->has_records, (size_t)i);
		fe->has_flops = bit_is_set(w->has_flops, (size_t)i);
		fe->name = w->name_of[name_key(a, ev)];
		/* (ns_fevent_shapes reads the strings made here) */
		if (a->by_shape && ev->input_dims && shapes_string(w, ev->input_dims, &shapes))
			return -1;
		fe->device_type = (uint8_t)devtype_of(ev->cat, a->backend);
		fe->is_user_annotation = ev->cat == NS_CAT_USER_ANNOTATION || ev->cat == NS_CAT_GPU_USER_ANNOTATION;
		fe->is_async = is_c10d_work(t, ev);
		if (fe->device_type == NS_DEV_CPU && ev->cat != NS_CAT_CPU_OP && ev->cat != NS_CAT_USER_ANNOTATION) {
			/* spec A2 step 6: Kineto's host events move to their op's thread,
			 * or to the main thread when no op launched them */
			int64_t op = is_runtime_cat(ev->cat) ? w->launcher[i] : NO_INDEX;
			fe->thread = op != NO_INDEX ? t->events[op].thread : w->main_th;
		} else if (fe->device_type != NS_DEV_CPU && is_launch_target(ev->cat)) {
			fe->link = w->launcher[i];
		}
	}
	return 0;
}

/* Half of the fevents each (ns_jobs_run). */
static int make_part(void *ctx, size_t part)
{
	struct work *w = ctx;
	return make_range(w, w->n_order * part / 2, w->n_order * (part + 1) / 2);
}

/* The fevents, one per w->order entry, on two threads where the options
 * allow (not by_shape, whose strings are interned as they are made). */
static int make_fevents(struct work *w)
{
	struct ns_trace *t = w->t;
	struct ns_agg *a = w->out;
	w->main_th = main_thread(t);
	for (size_t k = 0; k < t->n_flops; k++)
		if (set_bit(&w->has_flops, t->n_events, t->flops[k].event))
			return -1;
	if (table_names(w))
		return -1;
	a->fevents = malloc((w->n_order + 1) * sizeof(*a->fevents)); /* the largest array: exact size */
	if (!a->fevents || ns_jobs_run(2, a->by_shape ? 1 : w->opts->threads, make_part, NULL, w))
		return -1;
	a->n_fevents = w->n_order;
	return 0;
}

/* Device events' links, from the op's event index to its fevent index (-1
 * when the op is no FunctionEvent). Event indices survive the sort, so
 * this runs after it, with one event -> fevent table and nothing else. */
int32_t *ns_agg_fevent_of_events(const struct ns_agg *a)
{
	int32_t *fe_of_event = malloc((a->trace->n_events + 1) * sizeof(*fe_of_event));
	if (!fe_of_event)
		return NULL;
	for (size_t i = 0; i < a->trace->n_events; i++)
		fe_of_event[i] = NO_INDEX;
	for (size_t f = 0; f < a->n_fevents; f++)
		if (a->fevents[f].event >= 0)
			fe_of_event[a->fevents[f].event] = (int32_t)f;
	return fe_of_event;
}

static int link_launchers(struct work *w)
{
	struct ns_agg *a = w->out;
	int32_t *fe_of_event = ns_agg_fevent_of_events(a);
	if (!fe_of_event)
		return -1;
	for (size_t f = 0; f < a->n_fevents; f++) {
		struct ns_fevent *fe = &a->fevents[f];
		if (fe->device_type != NS_DEV_CPU && fe->link != NO_INDEX)
			fe->link = fe_of_event[fe->link];
	}
	free(fe_of_event);
	return 0;
}

/* Era C: the id of the FunctionEvent PyTorch makes of a CPU event
 * (kineto_event.correlation_id()): a torch op's correlation id, which the
 * writer prints as its "External id"; a CUDA runtime or driver call's CUPTI
 * correlation id ("correlation"); NS_NONE when the trace does not say. */
static int64_t own_id(const struct ns_event *ev)
{
	if (ev->cat == NS_CAT_CPU_OP || ev->cat == NS_CAT_USER_ANNOTATION)
		return ev->external_id;
	return is_runtime_cat(ev->cat) ? ev->correlation : NS_NONE;
}

/* Events of PyTorch's C++ event tree on the profiler's thread: its own
 * ops (async ones too), and the Kineto events nothing links (no "External
 * id": setKinetoTID files them under the profiler's thread). Kineto
 * events that are linked were finished before the tree was built. */
static bool in_cpp_tree(const struct work *w, const struct ns_fevent *fe, uint32_t main_th)
{
	const struct ns_event *ev = &w->t->events[fe->event];
	if (fe->device_type != NS_DEV_CPU || fe->thread != main_th || ns_event_is_memory(ev))
		return false;
	return ev->cat == NS_CAT_CPU_OP || ev->cat == NS_CAT_USER_ANNOTATION || ev->external_id == NS_NONE;
}

/* Sort keys over fevent indices (ctx: the ns_agg): the start; the event
 * index; torch ops before Kineto events, then the event index. */
static int64_t fevent_start_key(const void *ctx, int32_t f)
{
	const struct ns_agg *a = ctx;
	return ns_fevent_start(a, &a->fevents[f]);
}

static int64_t fevent_event_key(const void *ctx, int32_t f)
{
	return ((const struct ns_agg *)ctx)->fevents[f].event;
}

static int64_t torch_first_key(const void *ctx, int32_t f)
{
	const struct ns_agg *a = ctx;
	const struct ns_event *ev = &a->trace->events[a->fevents[f].event];
	bool torch = ev->cat == NS_CAT_CPU_OP || ev->cat == NS_CAT_USER_ANNOTATION;
	return (int64_t)!torch << 32 | a->fevents[f].event;
}

/* A CUPTI overhead record ("Activity Buffer Request", "Lazy Function
 * Loading", ...) has correlationId 0 and no linked activity (Kineto's
 * OverheadActivity), so its id is its C++ parent's
 * (kinetoEventCorrelationID in torch/csrc/profiler/collection.cpp). That
 * parent is what build_tree (same file) finds open on the profiler's
 * thread when the overhead starts: replayed here, an event leaving the
 * stack (end < start) with everything above it. */
static int inherit_overhead_ids(struct work *w, int64_t *id)
{
	struct ns_agg *a = w->out;
	uint32_t main_th = main_thread(w->t);
	size_t n = 0, depth = 0;
	int32_t *cand = malloc((a->n_fevents + 1) * sizeof(*cand));
	int32_t *stack = malloc((a->n_fevents + 1) * sizeof(*stack));
	int rc = -1;
	if (!cand || !stack)
		goto out;
	for (size_t f = 0; f < a->n_fevents; f++)
		if (in_cpp_tree(w, &a->fevents[f], main_th))
			cand[n++] = (int32_t)f;
	/* (start, torch ops before Kineto events, position): the stable sort of
	 * build_tree over RecordQueue::getRecords' list, torch ops first */
	if (ns_sort_keyed(cand, n, fevent_start_key, torch_first_key, a))
		goto out;
	for (size_t k = 0; k < n; k++) {
		const struct ns_fevent *fe = &a->fevents[cand[k]];
		int64_t start = ns_fevent_start(a, fe), end = ns_fevent_end(a, fe);
		for (size_t d = 0; d < depth; d++)
			if (ns_fevent_end(a, &a->fevents[stack[d]]) < start) {
				depth = d;
				break;
			}
		if (w->t->events[fe->event].cat == NS_CAT_OVERHEAD)
			id[cand[k]] = depth ? id[stack[depth - 1]] : NS_NONE;
		if (end > start) /* (an instant is finished at once, never a parent) */
			stack[depth++] = cand[k];
	}
	rc = 0;
out:
	free(cand);
	free(stack);
	return rc;
}

/* (id, fevent) over fevent indices: qsort, whose scratch is the 4 bytes of
 * an index, not ns_sort_keyed's 20: this sort runs beside the fevents, at
 * the peak of a report's memory. */
static int cmp_by_id(const void *x, const void *y, void *ctx)
{
	const int64_t *ids = ctx;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	if (ids[i] != ids[j])
		return ids[i] < ids[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/* A FunctionEvent PyTorch may give device work to (index_by_id). */
static bool takes_device_work(const struct work *w, size_t f)
{
	const struct ns_fevent *fe = &w->out->fevents[f];
	return fe->device_type == NS_DEV_CPU && !fe->is_async && w->ids[f] > 0;
}

/* The same, once index_by_id has cleared the ids of the others: from the
 * ids alone, a pass over them and not over the fevents. */
static bool takes_device_work_by_id(const struct work *w, size_t f)
{
	return w->ids[f] > 0;
}

/* The ids are a process's two correlation counters (its ops', CUPTI's):
 * when they are dense (ns_ids_dense), by_id is made by a counting sort,
 * whose counts stay as id_start (the entries of id i start at
 * id_start[i - id_min]), and recipients needs no search. */
static int count_by_id(struct work *w)
{
	size_t n_fe = w->out->n_fevents;
	int64_t lo = INT64_MAX, hi = 0;
	for (size_t f = 0; f < n_fe; f++)
		if (takes_device_work_by_id(w, f)) {
			lo = w->ids[f] < lo ? w->ids[f] : lo;
			hi = w->ids[f] > hi ? w->ids[f] : hi;
		}
	if (!ns_ids_dense(lo, hi, w->n_by_id))
		return 1;
	size_t range = (size_t)(hi - lo) + 1;
	if (!(w->id_start = calloc(range + 1, sizeof(*w->id_start))))
		return -1;
	w->id_min = lo;
	w->id_max = hi;
	for (size_t f = 0; f < n_fe; f++)
		if (takes_device_work_by_id(w, f))
			w->id_start[w->ids[f] - lo + 1]++;
	for (size_t i = 1; i <= range; i++)
		w->id_start[i] += w->id_start[i - 1];
	for (size_t f = 0; f < n_fe; f++) /* (in fevent order: the order among equal ids) */
		if (takes_device_work_by_id(w, f))
			w->by_id[w->id_start[w->ids[f] - lo]++] = (int32_t)f;
	memmove(w->id_start + 1, w->id_start, range * sizeof(*w->id_start)); /* back to the starts */
	w->id_start[0] = 0;
	return 0;
}

/* Era C: _parse_kineto_results (torch/autograd/profiler.py) gives a piece
 * of device work to every CPU FunctionEvent, not async, whose id is the
 * work's linked_correlation_id, which the writer prints as the work's
 * "External id" (output_json.cpp). Sorts those FunctionEvents by id (a
 * sorted array, not a hash map: the smaller of the two at 10^6 ops). */
static int index_by_id(struct work *w)
{
	struct ns_agg *a = w->out;
	int rc;
	if (!w->ext_trusted)
		return 0;
	w->ids = malloc((a->n_fevents + 1) * sizeof(*w->ids));
	if (!w->ids)
		return -1;
	for (size_t f = 0; f < a->n_fevents; f++) {
		const struct ns_fevent *fe = &a->fevents[f];
		const struct ns_event *ev = &w->t->events[fe->event];
		w->ids[f] = fe->device_type == NS_DEV_CPU && !ns_event_is_memory(ev) ? own_id(ev) : NS_NONE;
	}
	if (w->t->has_cat[NS_CAT_OVERHEAD] && inherit_overhead_ids(w, w->ids))
		return -1;
	for (size_t f = 0; f < a->n_fevents; f++) {
		if (!takes_device_work(w, f))
			w->ids[f] = NS_NONE;
		w->n_by_id += takes_device_work_by_id(w, f);
	}
	if (!(w->by_id = malloc((w->n_by_id + 1) * sizeof(*w->by_id))) || (rc = count_by_id(w)) < 0)
		return -1;
	if (rc == 0) { /* (recipients needs only by_id and id_start now: the ids go before the kernel lists come) */
		free(w->ids);
		w->ids = NULL;
		return 0;
	}
	w->n_by_id = 0;
	for (size_t f = 0; f < a->n_fevents; f++)
		if (takes_device_work_by_id(w, f))
			w->by_id[w->n_by_id++] = (int32_t)f;
	ns_sort_r(w->by_id, w->n_by_id, sizeof(*w->by_id), cmp_by_id, w->ids);
	return 0;
}

/* The FunctionEvents (fevent indices) device work `fe` counts toward: *n
 * of them, from the array returned. Era C, with an "External id": those
 * with that id (index_by_id); otherwise its one launcher, if any. A
 * gpu_user_annotation's "External id" is its own correlation id, not a
 * linked one (it has no linked activity): PyTorch gives it to nothing. */
static const int32_t *recipients(const struct work *w, const struct ns_fevent *fe, size_t *n)
{
	const struct ns_event *ev = &w->t->events[fe->event];
	size_t lo = 0, hi = w->n_by_id, end;
	if (!w->by_id || !is_launch_target(ev->cat) || ev->external_id == NS_NONE) {
		*n = ns_fevent_launcher(fe) != NO_INDEX;
		return &fe->link;
	}
	if (w->id_start) {
		bool known = ev->external_id >= w->id_min && ev->external_id <= w->id_max;
		size_t i = known ? (size_t)(ev->external_id - w->id_min) : 0; /* (no overflow) */
		*n = known ? w->id_start[i + 1] - w->id_start[i] : 0;
		return w->by_id + (known ? w->id_start[i] : 0);
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->ids[w->by_id[mid]] < ev->external_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < w->n_by_id && w->ids[w->by_id[end]] == ev->external_id; end++)
		;
	*n = end - lo;
	return w->by_id + lo;
}

static bool counts_as_kernel(const struct ns_fevent *fe)
{
	return fe->device_type == NS_DEV_CUDA || fe->device_type == NS_DEV_PRIVATEUSE1 || fe->device_type == NS_DEV_XPU;
}

/* What index_by_id made. */
static void release_ids(struct work *w)
{
	free(w->ids);
	free(w->by_id);
	free(w->id_start);
	w->ids = NULL;
	w->by_id = NULL;
	w->id_start = NULL;
}

/* spec A2 step 6: device work -> the kernels list of every op it counts
 * toward (recipients). */
static int attach_kernels(struct work *w)
{
	struct ns_agg *a = w->out;
	size_t n_fe = a->n_fevents, n_order = 0, n;
	int32_t *order = NULL;
	int rc = -1;
	/* (room for every fevent: only the pages of the device work listed are
	 * touched) */
	if (!(order = malloc((n_fe + 1) * sizeof(*order))))
		goto out;
	for (size_t f = 0; f < n_fe; f++) { /* kernels_len counts here, kernels_off is set below */
		const int32_t *to = counts_as_kernel(&a->fevents[f]) ? recipients(w, &a->fevents[f], &n) : NULL;
		for (size_t r = 0; to && r < n; r++)
			a->fevents[to[r]].kernels_len++;
		if (to && n)
			order[n_order++] = (int32_t)f;
	}
	for (size_t f = 0; f < n_fe; f++) {
		a->fevents[f].kernels_off = (uint32_t)a->n_kernels;
		a->n_kernels += a->fevents[f].kernels_len;
		a->fevents[f].kernels_len = 0;
	}
	a->kernels = malloc((a->n_kernels + 1) * sizeof(*a->kernels));
	a->kernels_ns = malloc((a->n_kernels + 1) * sizeof(*a->kernels_ns));
	if (!a->kernels || !a->kernels_ns)
		goto out;
	/* Kernel lists are filled in start order (then trace order), as
	 * PyTorch's corr_map lists them: result.events() is sorted by start,
	 * stably, and the naive double sum depends on it. */
	if (ns_sort_keyed(order, n_order, fevent_start_key, fevent_event_key, a))
		goto out;
	for (size_t k = 0; k < n_order; k++) {
		const struct ns_fevent *fe = &a->fevents[order[k]];
		const int32_t *to = recipients(w, fe, &n);
		for (size_t r = 0; r < n; r++) {
			struct ns_fevent *op = &a->fevents[to[r]];
			a->kernels[op->kernels_off + op->kernels_len] = ns_fevent_span_us(a, fe);
			a->kernels_ns[op->kernels_off + op->kernels_len++] = ns_fevent_span_ns(a, fe);
		}
	}
	rc = 0;
out:
	free(order);
	release_ids(w);
	return rc;
}

/* spec A2 step 7: [memory] records count toward every CPU event whose
 * [start, end] contains them (any thread); unused ones become rows. */
static bool is_cpu_mem(int64_t dt)
{
	return dt == 0 || dt == 2 || dt == 5;
}

static bool is_device_mem(int64_t dt)
{
	return dt == 1 || dt == 20 || dt == 6 || dt == 12;
}

/* The memory records at times in [start, end]: a->mem_ts[*first .. *last).
 * *first is looked for from `hint` (a->n_mem_recs: nowhere in particular):
 * after it in steps that double, when it is at or after the record before
 * the hint; a thread's ops come in start order, so an op's records are
 * near the last op's. */
static void records_within(const struct ns_agg *a, size_t hint, int64_t start, int64_t end, size_t *first,
			   size_t *last)
{
	size_t lo = 0, hi = a->n_mem_recs;
	if (hint > 0 && hint < hi) {
		if (a->mem_ts[hint - 1] >= start) {
			hi = hint - 1;
		} else {
			lo = hint;
			for (size_t step = 1, at; (at = hint - 1 + step) < hi; step *= 2) {
				if (a->mem_ts[at] >= start) {
					hi = at;
					break;
				}
				lo = at + 1;
			}
		}
	}
	while (lo < hi) { /* first record with ts >= start */
		size_t mid = (lo + hi) / 2;
		if (a->mem_ts[mid] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	hi = a->n_mem_recs;
	if (lo < hi && a->mem_ts[lo] > end) /* (none: most ops) */
		hi = lo;
	while (lo < hi) { /* first record with ts > end */
		size_t mid = (lo + hi) / 2;
		if (a->mem_ts[mid] <= end)
			lo = mid + 1;
		else
			hi = mid;
	}
	*last = lo;
}

/* The cpu and device columns of one fevent: a memory row's own record, a
 * CPU event's records within its span (has_records: assign_memory searched
 * for them once), nothing for device events. */
static struct ns_fmem own_mem(const struct ns_agg *a, const struct ns_fevent *fe)
{
	const struct ns_event *ev = &a->trace->events[fe->event];
	struct ns_fmem m = { 0 };
	size_t first, last;
	if (ns_event_is_memory(ev)) {
		m.cpu = is_cpu_mem(ev->mem.device_type) ? ev->mem.bytes : 0;
		m.device = is_device_mem(ev->mem.device_type) ? ev->mem.bytes : 0;
	} else if (fe->has_records) {
		records_within(a, a->n_mem_recs, ns_fevent_start(a, fe), ns_fevent_end(a, fe), &first, &last);
		m.cpu = a->mem_cpu_sum[last] - a->mem_cpu_sum[first];
		m.device = a->mem_dev_sum[last] - a->mem_dev_sum[first];
	}
	return m;
}

static int assign_memory(struct work *w)
{
	struct ns_trace *t = w->t;
	struct ns_agg *a = w->out;
	size_t n_rec = w->n_recs;
	int32_t *by_time = NULL; /* the records by time (event indices) */
	int64_t *used = NULL;    /* +1 where a CPU event's records begin, -1 where they end */
	bool *unused = NULL;     /* per event: a record no CPU event contains */
	int rc = -1;

	if (n_rec + w->n_ooms == 0)
		return 0;
	a->has_mem = true;
	by_time = malloc((n_rec + 1) * sizeof(*by_time));
	a->mem_ts = malloc((n_rec + 1) * sizeof(*a->mem_ts));
	a->mem_cpu_sum = calloc(n_rec + 1, sizeof(*a->mem_cpu_sum));
	a->mem_dev_sum = calloc(n_rec + 1, sizeof(*a->mem_dev_sum));
	used = calloc(n_rec + 1, sizeof(*used));
	unused = calloc(t->n_events + 1, sizeof(*unused));
	if (!by_time || !a->mem_ts || !a->mem_cpu_sum || !a->mem_dev_sum || !used || !unused)
		goto out;
	a->n_mem_recs = n_rec;
	if (n_rec) /* (OOM records alone: recs is NULL, which memcpy must not be given) */
		memcpy(by_time, w->recs, n_rec * sizeof(*by_time));
	if (ns_sort_keyed(by_time, n_rec, event_start_key, NULL, t->events)) /* (time, position) */
		goto out;
	for (size_t k = 0; k < n_rec; k++) {
		const struct ns_event *ev = &t->events[by_time[k]];
		a->mem_ts[k] = ev->ts_ns;
		a->mem_cpu_sum[k + 1] = a->mem_cpu_sum[k] + (is_cpu_mem(ev->mem.device_type) ? ev->mem.bytes : 0);
		a->mem_dev_sum[k + 1] = a->mem_dev_sum[k] + (is_device_mem(ev->mem.device_type) ? ev->mem.bytes : 0);
	}
	for (size_t k = 0, first = n_rec, last; k < w->n_order; k++) { /* the CPU fevents to be */
		int32_t i = w->order[k];
		if (devtype_of(t->events[i].cat, a->backend) != NS_DEV_CPU)
			continue;
		records_within(a, first, fevent_start_of(w, i), fevent_end_of(w, i), &first, &last);
		if (last > first) {
			if (set_bit(&w->has_records, t->n_events, (size_t)i))
				goto out;
			used[first]++;
			used[last]--;
		}
	}
	int64_t running = 0;
	for (size_t k = 0; k < n_rec; k++) {
		running += used[k];
		unused[by_time[k]] = running == 0;
	}
	/* unused records and every OOM record become zero-length CPU rows, after
	 * the other fevents, in trace order (order has room: collect_fevents) */
	for (size_t r = 0, o = 0; r < n_rec || o < w->n_ooms;) {
		if (o == w->n_ooms || (r < n_rec && w->recs[r] < w->ooms[o])) {
			if (unused[w->recs[r]])
				w->order[w->n_order++] = w->recs[r];
			r++;
		} else {
			w->order[w->n_order++] = w->ooms[o++];
		}
	}
	rc = 0;
out:
	free(by_time);
	free(used);
	free(unused);
	return rc;
}

/* Sort keys over the event indices of fevents to be (ctx: the work): the
 * start and the end, descending. */
static int64_t order_start_key(const void *ctx, int32_t i)
{
	return fevent_start_of(ctx, i);
}

static int64_t order_end_key(const void *ctx, int32_t i)
{
	return ~fevent_end_of(ctx, i);
}

/* An event's thread and category: Kineto writes each thread's ops in
 * order, and its runtime calls, each stream's kernels and memcpys, in
 * order, but interleaved with one another. */
static uint32_t order_group(const void *ctx, int32_t i)
{
	const struct ns_event *ev = &((const struct work *)ctx)->t->events[i];
	return ev->thread * NS_CAT__COUNT + ev->cat;
}

/* Sorts the fevents to be by (start, -end), then the position (w->order
 * holds the events that become fevents in trace order, then the memory
 * rows in trace order: assign_memory), before they are made: made in
 * trace order and then moved, the large fevents would each be read and
 * written again at random, which took a third of the aggregation. */
static int sort_fevents(struct work *w)
{
	return ns_sort_grouped(w->order, w->n_order, order_start_key, order_end_key, order_group,
			       (w->t->n_threads + 1) * NS_CAT__COUNT, w);
}

/* spec A3: _populate_cpu_children (remove_dup_nodes follows). Children
 * lists are chains through the fevents (first_child, next_sibling). Reads
 * and writes only the CPU FunctionEvents' links (link, first_child,
 * next_sibling), so it runs beside attach_kernels, which writes device
 * work's links and the kernel lists. */
static int link_tree(struct work *w)
{
	struct ns_agg *a = w->out;
	size_t n = a->n_fevents;
	int32_t *top = malloc((w->t->n_threads + 1) * sizeof(*top));
	if (!top)
		return -1;
	for (size_t i = 0; i <= w->t->n_threads; i++)
		top[i] = NO_INDEX;
	for (size_t f = 0; f < n; f++) {
		struct ns_fevent *ev = &a->fevents[f];
		if (ev->device_type != NS_DEV_CPU || ev->is_async)
			continue;
		int64_t start = ns_fevent_start(a, ev), end = ns_fevent_end(a, ev);
		int32_t *tp = &top[ev->thread];
		while (*tp != NO_INDEX) {
			struct ns_fevent *p = &a->fevents[*tp];
			int64_t p_end = ns_fevent_end(a, p);
			if (start >= p_end || end > p_end) {
				*tp = p->link; /* the stack below p is p's parent chain */
				continue;
			}
			ev->link = *tp;
			ev->next_sibling = p->first_child; /* prepended: reversed below */
			p->first_child = (int32_t)f;
			break;
		}
		*tp = (int32_t)f;
	}
	free(top);
	for (size_t f = 0; f < n; f++) { /* children in start order, as PyTorch appends them */
		struct ns_fevent *p = &a->fevents[f];
		int32_t reversed = NO_INDEX;
		for (int32_t ch = p->first_child, next; ch != NO_INDEX; ch = next) {
			next = a->fevents[ch].next_sibling;
			a->fevents[ch].next_sibling = reversed;
			reversed = ch;
		}
		p->first_child = reversed;
	}
	return 0;
}

/* PyTorch's _remove_dup_nodes: an only child with its parent's name is
 * merged into it (its children and kernels go to the parent). */
static void remove_dup_nodes(struct ns_agg *a)
{
	size_t n = a->n_fevents;
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t f = 0; f < n; f++) {
			struct ns_fevent *c = &a->fevents[f];
			int32_t parent = ns_fevent_parent(c);
			if (c->removed || parent == NO_INDEX)
				continue;
			struct ns_fevent *p = &a->fevents[parent];
			if (p->name != c->name || p->first_child != (int32_t)f || c->next_sibling != NO_INDEX)
				continue; /* (c is p's only child exactly when both hold) */
			p->first_child = c->first_child;
			p->kernels_off = c->kernels_off;
			p->kernels_len = c->kernels_len;
			for (int32_t ch = c->first_child; ch != NO_INDEX; ch = a->fevents[ch].next_sibling)
				a->fevents[ch].link = parent;
			c->first_child = NO_INDEX;
			c->removed = true;
			changed = true;
		}
	}
}

/* spec A4: the device totals, children before parents (a child sorts after
 * its parent). The doubles repeat PyTorch's operations in its order; the ns
 * twins are exact. Each fevent's kernel list is read before the total
 * takes its place. */
static void compute_device_totals(struct ns_agg *a)
{
	for (size_t k = a->n_fevents; k-- > 0;) {
		struct ns_fevent *fe = &a->fevents[k];
		uint32_t off = fe->kernels_off, len = fe->kernels_len;
		double kern = 0, child_dev = 0;
		int64_t kern_ns = 0, child_dev_ns = 0;
		fe->device_time_total = 0;
		fe->device_ns = 0;
		if (fe->removed || fe->is_async || !a->use_device)
			continue;
		if (fe->device_type != NS_DEV_CPU) {
			fe->device_time_total = ns_fevent_span_us(a, fe);
			fe->device_ns = ns_fevent_span_ns(a, fe);
			continue;
		}
		for (uint32_t i = 0; i < len; i++) {
			kern += a->kernels[off + i];
			kern_ns += a->kernels_ns[off + i];
		}
		for (int32_t ch = fe->first_child; ch != NO_INDEX; ch = a->fevents[ch].next_sibling) {
			child_dev += a->fevents[ch].device_time_total;
			child_dev_ns += a->fevents[ch].device_ns;
		}
		fe->device_time_total = kern + child_dev;
		fe->device_ns = kern_ns + child_dev_ns;
	}
}

struct ns_fself ns_fevent_self(const struct ns_agg *a, size_t f)
{
	const struct ns_fevent *fe = &a->fevents[f];
	struct ns_fself s = { 0 };
	bool cpu = fe->device_type == NS_DEV_CPU;
	double span_us = ns_fevent_span_us(a, fe);
	double child_cpu = 0, child_dev = 0;
	int64_t child_cpu_ns = 0, child_dev_ns = 0;
	if (fe->removed)
		return s;
	for (int32_t ch = fe->first_child; ch != NO_INDEX; ch = a->fevents[ch].next_sibling) {
		const struct ns_fevent *c = &a->fevents[ch];
		/* (children are CPU events, whose cpu_time_total is their span) */
		child_cpu += ns_fevent_span_us(a, c);
		child_dev += c->device_time_total;
		child_cpu_ns += ns_fevent_span_ns(a, c);
		child_dev_ns += c->device_ns;
	}
	if (cpu && !fe->is_async) {
		s.self_cpu_time_total = span_us - child_cpu;
		s.self_cpu_ns = ns_fevent_cpu_ns(a, fe) - child_cpu_ns;
	}
	if (fe->is_async || !a->use_device)
		return s;
	if (cpu) {
		s.self_device_time_total = fe->device_time_total - child_dev;
		s.self_device_ns = fe->device_ns - child_dev_ns;
	} else {
		s.self_device_time_total = span_us;
		s.self_device_ns = ns_fevent_span_ns(a, fe);
	}
	return s;
}

struct ns_fmem ns_fevent_mem(const struct ns_agg *a, size_t f)
{
	const struct ns_fevent *fe = &a->fevents[f];
	struct ns_fmem m = { 0 };
	if (!a->has_mem)
		return m;
	m = own_mem(a, fe);
	if (fe->removed || fe->device_type != NS_DEV_CPU || fe->is_async)
		return m;
	m.self_cpu = m.cpu;
	m.self_device = m.device;
	for (int32_t ch = fe->first_child; ch != NO_INDEX; ch = a->fevents[ch].next_sibling) {
		struct ns_fmem c = own_mem(a, &a->fevents[ch]);
		m.self_cpu -= c.cpu;
		m.self_device -= c.device;
	}
	return m;
}

ns_str ns_fevent_overload(const struct ns_agg *a, const struct ns_fevent *fe)
{
	const struct ns_event *ev = &a->trace->events[fe->event];
	if (!a->split_overloads || ev->kind != NS_KIND_SLICE)
		return 0;
	return (ns_str)((uint64_t)ns_i64map_get(&a->names, name_key(a, ev), 0) >> 32);
}

ns_str ns_fevent_shapes(const struct ns_agg *a, const struct ns_fevent *fe)
{
	const struct ns_event *ev = &a->trace->events[fe->event];
	if (!a->by_shape || ev->kind != NS_KIND_SLICE)
		return 0;
	/* an event without Input Dims has input_shapes [] in PyTorch */
	return ev->input_dims ? (ns_str)ns_i64map_get(&a->shapes, ev->input_dims, 0) : a->empty_list;
}

ns_str ns_fevent_stack(const struct ns_agg *a, const struct ns_fevent *fe)
{
	const struct ns_event *ev = &a->trace->events[fe->event];
	return ev->kind == NS_KIND_SLICE ? ev->stack : 0;
}

/* PyTorch's _filter_stack_entry: frames of the profiler's own plumbing. */
static bool stack_frame_filtered(const char *frame, size_t len)
{
	static const char *const pairs[][2] = {
		{ "autograd/__init__", "_make_grads" }, { "autograd/__init__", "backward" },
		{ "torch/tensor", "backward" },         { "_internal/common_utils", "prof_callable" },
		{ "_internal/common_utils", "prof_func_call" }, { "_internal/common_utils", "prof_meth_call" },
	};
	for (size_t i = 0; i < NS_ARRAY_SIZE(pairs); i++)
		if (memmem(frame, len, pairs[i][0], strlen(pairs[i][0])) &&
		    memmem(frame, len, pairs[i][1], strlen(pairs[i][1])))
			return true;
	return false;
}

/* The first n kept frames of a "a;b;c" stack, joined by ';' and interned. */
static ns_str stack_prefix(struct ns_trace *t, ns_str stack, int n)
{
	const char *s = ns_strtab_get(&t->strings, stack);
	size_t len = ns_strtab_len(&t->strings, stack), o = 0;
	char *buf;
	int frames = 0;
	ns_str id;
	if (n <= 0 || !stack)
		return 0;
	buf = malloc(len + 1);
	if (!buf)
		return UINT32_MAX;
	for (size_t i = 0; i < len && frames < n;) {
		const char *semi = memchr(s + i, ';', len - i);
		size_t flen = semi ? (size_t)(semi - (s + i)) : len - i;
		if (!stack_frame_filtered(s + i, flen)) {
			if (frames++)
				buf[o++] = ';';
			memcpy(buf + o, s + i, flen);
			o += flen;
		}
		i += flen + 1;
	}
	id = ns_strtab_intern(&t->strings, buf, o);
	free(buf);
	return id;
}

/* The hash of a row's grouping key (name, device type, user annotation,
 * overload, shapes, stack, the caller's extra key), and whether two rows have the same key. */
static uint64_t avg_key_hash(const struct ns_avg *k)
{
	return ((uint64_t)k->key * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)k->overload << 1) ^
	       ((uint64_t)k->input_shapes * 0xc2b2ae3d27d4eb4fULL) ^ ((uint64_t)k->stack << 17) ^
	       ((uint64_t)k->device_type << 56) ^ ((uint64_t)k->is_user_annotation << 63) ^
	       ((uint64_t)k->neff * 0xff51afd7ed558ccdULL);
}

static bool same_avg_key(const struct ns_avg *a, const struct ns_avg *b)
{
	return a->key == b->key && a->overload == b->overload && a->input_shapes == b->input_shapes &&
	       a->stack == b->stack && a->device_type == b->device_type &&
	       a->is_user_annotation == b->is_user_annotation && a->neff == b->neff;
}

/* FunctionEventAvg.add's flops: the event's args "flops"; its FLOPs from
 * the shapes only when asked (opts.shape_flops), kept apart in
 * flops_shapes too (sums stop at INT64_MAX). */
static void add_flops(const struct ns_agg *a, struct ns_avg *r, const struct ns_fevent *fe)
{
	const struct ns_trace *t = a->trace;
	if (!fe->has_flops)
		return;
	int64_t flops = ns_trace_flops_of(t, (size_t)fe->event);
	bool from_shapes = t->events[fe->event].flags & NS_EV_FLOPS_SHAPES;
	if (flops == NS_NONE || (from_shapes && !a->opts.shape_flops))
		return;
	if (__builtin_add_overflow(r->flops, flops, &r->flops))
		r->flops = INT64_MAX;
	if (from_shapes && __builtin_add_overflow(r->flops_shapes, flops, &r->flops_shapes))
		r->flops_shapes = INT64_MAX;
	r->has_trace_flops |= !from_shapes;
}

/* FunctionEventAvg.add: function event f's times and memory into row r, in
 * PyTorch's order of operations. */
static void add_to_row(struct ns_agg *a, struct ns_avg *r, size_t f)
{
	const struct ns_fevent *fe = &a->fevents[f];
	struct ns_fself self = ns_fevent_self(a, f);
	r->cpu_time_total += fe->device_type == NS_DEV_CPU ? ns_fevent_span_us(a, fe) : 0;
	r->device_time_total += fe->device_time_total;
	r->self_cpu_time_total += self.self_cpu_time_total;
	r->self_device_time_total += self.self_device_time_total;
	r->cpu_ns += ns_fevent_cpu_ns(a, fe);
	r->device_ns += fe->device_ns;
	r->self_cpu_ns += self.self_cpu_ns;
	r->self_device_ns += self.self_device_ns;
	if (a->has_mem) {
		struct ns_fmem mem = ns_fevent_mem(a, f);
		r->cpu_mem += mem.cpu;
		r->device_mem += mem.device;
		r->self_cpu_mem += mem.self_cpu;
		r->self_device_mem += mem.self_device;
	}
	if (a->trace->n_flops)
		add_flops(a, r, fe);
	r->count++;
}

/* key_averages' rows by key: a hash of the key, chained; and the last row
 * found for each name (most keys are a name and what goes with it, and a
 * row there with the same key saves the hash). */
struct row_index {
	struct ns_avg *avgs; /* the rows, first-seen order */
	size_t n_avgs;
	struct ns_i64map by_hash;
	int64_t *chain;     /* next row with the same key hash */
	size_t cap_rows;    /* of avgs and chain (rows are few: grown, not sized by events) */
	int32_t *last_row;  /* by name */
};

/* The row of key (fevent f's), added if it is new: -1 on OOM. */
static int64_t row_of(const struct ns_agg *a, struct row_index *x, struct ns_avg *key, size_t f)
{
	int64_t row = x->last_row[key->key];
	if (row != NO_INDEX && same_avg_key(&x->avgs[row], key))
		return row;
	uint64_t h = avg_key_hash(key);
	row = ns_i64map_get(&x->by_hash, (int64_t)h, NO_INDEX);
	while (row != NO_INDEX && !same_avg_key(&x->avgs[row], key))
		row = x->chain[row];
	if (row == NO_INDEX) {
		/* rows and their chain links grow to the same capacity */
		size_t cap_chain = x->cap_rows;
		if (NS_GROW_MIN(x->avgs, x->cap_rows, x->n_avgs + 1, 256) < 0 ||
		    NS_GROW_MIN(x->chain, cap_chain, x->n_avgs + 1, 256) < 0)
			return -1;
		row = (int64_t)x->n_avgs++;
		key->first = (int64_t)f;
		key->is_async = a->fevents[f].is_async;
		x->avgs[row] = *key;
		x->chain[row] = ns_i64map_get(&x->by_hash, (int64_t)h, NO_INDEX);
		if (ns_i64map_set(&x->by_hash, (int64_t)h, row))
			return -1;
	}
	x->last_row[key->key] = (int32_t)row;
	return row;
}

/* The rows are made by two threads, each for the names of one half of a
 * hash (ROW_PARTS): a row's FunctionEvents are all added by one thread, in
 * fevent order, so its sums are those of one thread; the two lists of rows
 * are then merged by first FunctionEvent, the first-seen order. (Not when
 * grouping by stack: stack_prefix interns strings.) */
enum { ROW_PARTS = 2 };

struct row_work {
	struct ns_agg *a;
	const ns_str *extra_of; /* the caller's extra key per fevent, or NULL */
	unsigned parts;
	struct row_index x[ROW_PARTS];
	int32_t *merged_of[ROW_PARTS]; /* each part's rows in the merged list (merge_rows) */
};

static unsigned row_part(const struct row_work *rw, ns_str name)
{
	return rw->parts == 1 ? 0 : (unsigned)(((uint64_t)name * 0x9e3779b97f4a7c15ULL) >> 63);
}

/* spec A5: group in first-seen order; the first event fixes the row's
 * fields. Each fevent's avg is the row in its part's list (-1 if removed:
 * part 0 writes those). */
static int rows_of_part(void *ctx, size_t part)
{
	struct row_work *rw = ctx;
	struct ns_agg *a = rw->a;
	const struct ns_agg_opts *o = &a->opts;
	struct ns_trace *t = a->trace;
	struct row_index *x = &rw->x[part];
	if (!(x->last_row = malloc((t->strings.count + 1) * sizeof(*x->last_row))))
		return -1;
	for (size_t i = 0; i < t->strings.count; i++) /* (names are interned before: ns_aggregate_fevents) */
		x->last_row[i] = NO_INDEX;
	for (size_t f = 0; f < a->n_fevents; f++) {
		struct ns_fevent *fe = &a->fevents[f];
		if (fe->removed) {
			if (part == 0)
				fe->avg = NO_INDEX;
			continue;
		}
		if (row_part(rw, fe->name) != part)
			continue;
		struct ns_avg key = { 0 };
		key.key = fe->name;
		key.device_type = fe->device_type;
		key.is_user_annotation = fe->is_user_annotation;
		if (o->group_by & NS_GROUP_OVERLOAD)
			key.overload = ns_fevent_overload(a, fe);
		if (o->group_by & NS_GROUP_SHAPE)
			key.input_shapes = ns_fevent_shapes(a, fe);
		if (o->stack_n > 0 && (key.stack = stack_prefix(t, ns_fevent_stack(a, fe), o->stack_n)) == UINT32_MAX)
			return -1;
		if (rw->extra_of)
			key.neff = rw->extra_of[f];
		int64_t row = row_of(a, x, &key, f);
		if (row < 0)
			return -1;
		fe->avg = (int32_t)row;
		add_to_row(a, &x->avgs[row], f);
	}
	return 0;
}

/* Each fevent's avg, in half of the fevents (ns_jobs_run), from its
 * part's row to the merged row. */
static int renumber_part(void *ctx, size_t part)
{
	struct row_work *rw = ctx;
	struct ns_agg *a = rw->a;
	for (size_t f = a->n_fevents * part / 2; f < a->n_fevents * (part + 1) / 2; f++) {
		struct ns_fevent *fe = &a->fevents[f];
		if (!fe->removed)
			fe->avg = rw->merged_of[row_part(rw, fe->name)][fe->avg];
	}
	return 0;
}

/* The parts' rows in first-seen order, into a->avgs, and each fevent's
 * avg renumbered (one part: its rows, as they are). */
static int merge_rows(struct row_work *rw)
{
	struct ns_agg *a = rw->a;
	struct row_index *x = rw->x;
	int32_t **merged_of = rw->merged_of;
	size_t n = x[0].n_avgs + x[1].n_avgs, i = 0, j = 0;
	if (rw->parts == 1) {
		a->avgs = x[0].avgs, a->n_avgs = x[0].n_avgs;
		x[0].avgs = NULL;
		return 0;
	}
	if (!(a->avgs = malloc((n + 1) * sizeof(*a->avgs))) ||
	    !(merged_of[0] = malloc((x[0].n_avgs + 1) * sizeof(int32_t))) ||
	    !(merged_of[1] = malloc((x[1].n_avgs + 1) * sizeof(int32_t))))
		return -1;
	for (size_t k = 0; k < n; k++) {
		bool left = j == x[1].n_avgs || (i < x[0].n_avgs && x[0].avgs[i].first < x[1].avgs[j].first);
		merged_of[left ? 0 : 1][left ? i : j] = (int32_t)k;
		a->avgs[k] = left ? x[0].avgs[i++] : x[1].avgs[j++];
	}
	a->n_avgs = n;
	return ns_jobs_run(2, a->opts.threads, renumber_part, NULL, rw);
}

static int key_averages(struct ns_agg *a)
{
	const struct ns_agg_opts *o = &a->opts;
	struct row_work rw = { .a = a, .parts = o->threads >= 2 && o->stack_n <= 0 ? ROW_PARTS : 1 };
	ns_str *extra_of = NULL;
	int rc = -1;
	if (o->extra_keys && !(rw.extra_of = extra_of = o->extra_keys(a->trace, a)))
		goto out;
	if (ns_jobs_run(rw.parts, o->threads, rows_of_part, NULL, &rw) || merge_rows(&rw))
		goto out;
	rc = 0;
out:
	for (unsigned p = 0; p < ROW_PARTS; p++) {
		free(rw.x[p].avgs);
		free(rw.x[p].last_row);
		free(rw.x[p].chain);
		ns_i64map_release(&rw.x[p].by_hash);
		free(rw.merged_of[p]);
	}
	free(extra_of);
	return rc;
}

static int out_of_memory(struct ns_error *err, const struct ns_trace *t)
{
	return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory while aggregating %zu events",
			    t->path ? t->path : "trace", t->n_events);
}

/* What found the launchers (resolve_launchers). */
static void release_lookups(struct work *w)
{
	ns_idindex_release(&w->op_by_ext);
	ns_idindex_release(&w->rt_by_corr);
	ns_idindex_release(&w->flow_s_by_id);
	ns_i64map_release(&w->flow_f_by_key);
	ns_i64map_release(&w->rt_by_key);
}

/* Frees what p points to and forgets it (release_links runs twice). */
#define DROP(p) (free(p), (p) = NULL)

/* Everything the FunctionEvents are made from, once they carry the links. */
static void release_links(struct work *w)
{
	release_lookups(w);
	release_ids(w);
	DROP(w->launcher);
	DROP(w->order);
	DROP(w->recs);
	DROP(w->ooms);
	DROP(w->unwidened);
	DROP(w->has_records);
	DROP(w->has_flops);
	DROP(w->named);
	DROP(w->name_of);
}

/* The time origin (part 0) beside the unfinished ops given their ends
 * (part 1): a pass over the events each, the first reading only their
 * starts, kinds and categories, the second writing only the unfinished
 * ops' ends and flags. */
static int origin_part(void *ctx, size_t part)
{
	struct work *w = ctx;
	if (part == 1)
		return ns_finish_unfinished(w->t);
	w->out->t0_ns = w->t0_ns = trace_origin(w->t);
	return 0;
}

/* The two parts of the work before the fevents are made, which read only
 * the trace and write apart (ns_jobs_run: on two threads when
 * opts.threads allows, else one after the other): part 0 finds the op
 * behind each launch, part 1 the events that become fevents, in fevent
 * order. */
static int prepare_part(void *ctx, size_t part)
{
	struct work *w = ctx;
	int rc;
	if (part == 0) {
		rc = resolve_launchers(w);
		release_lookups(w);
		return rc;
	}
	return collect_fevents(w) || assign_memory(w) || sort_fevents(w) ? -1 : 0;
}

/* Device work linked to its ops (part 1) beside the era C ids indexed
 * (part 0); then their kernel lists made (part 0) beside the CPU tree
 * (part 1). (Three tasks on one thread and the tree on the other left the
 * second idle half the time.) */
static int link_part(void *ctx, size_t part)
{
	struct work *w = ctx;
	return part == 0 ? index_by_id(w) : link_launchers(w);
}

static int attach_part(void *ctx, size_t part)
{
	struct work *w = ctx;
	return part == 0 ? attach_kernels(w) : link_tree(w);
}

int ns_aggregate_fevents(struct ns_trace *t, const struct ns_agg_opts *opts, struct ns_agg *out,
			 struct ns_error *err)
{
	static const struct ns_agg_opts defaults = { .backend_override = -1 };
	struct work w = { .t = t, .opts = opts ? opts : &defaults, .out = out };
	int rc = NS_ERR_NOMEM;

	memset(out, 0, sizeof(*out));
	if (t->n_events >= INT32_MAX) /* fevent links are 32-bit */
		return ns_error_set(err, NS_ERR_NOMEM, "%s: %zu events; at most %d can be aggregated",
				    t->path ? t->path : "trace", t->n_events, INT32_MAX - 1);
	out->trace = t;
	out->opts = *w.opts;
	out->backend = w.opts->backend_override >= 0 ? (enum ns_backend)w.opts->backend_override : infer_backend(t);
	out->profile_memory = t->profile_memory;
	out->use_device = out->backend != NS_BACKEND_NONE;
	out->by_shape = w.opts->group_by & NS_GROUP_SHAPE;
	out->split_overloads = w.opts->split_overloads;
	ns_i64map_init(&out->names);
	ns_i64map_init(&out->shapes);
	w.ext_trusted = t->ts_has_fraction || t->has_base_time;
	for (size_t i = 0; i < NS_ARRAY_SIZE(filtered_names); i++)
		w.filtered[i] = ns_strtab_intern(&t->strings, filtered_names[i], strlen(filtered_names[i]));
	out->profiler_step = ns_strtab_intern(&t->strings, "ProfilerStep*", 13);
	out->empty_list = ns_strtab_intern(&t->strings, "[]", 2);
	ns_i64map_init(&w.flow_f_by_key);
	ns_i64map_init(&w.rt_by_key);
	set_unwiden_margins(&w);
	if (ns_jobs_run(2, w.opts->threads, origin_part, NULL, &w) ||
	    ns_jobs_run(2, w.opts->threads, prepare_part, NULL, &w) || make_fevents(&w))
		goto out;
	release_links(&w);
	if (ns_jobs_run(2, w.opts->threads, link_part, NULL, &w) ||
	    ns_jobs_run(2, w.opts->threads, attach_part, NULL, &w))
		goto out;
	remove_dup_nodes(out);
	compute_device_totals(out);
	rc = NS_OK;
out:
	release_links(&w);
	if (rc) {
		ns_agg_release(out);
		return out_of_memory(err, t);
	}
	return 0;
}

int ns_aggregate_rows(struct ns_agg *a, struct ns_error *err)
{
	return key_averages(a) ? out_of_memory(err, a->trace) : 0;
}

int ns_aggregate(struct ns_trace *t, const struct ns_agg_opts *opts, struct ns_agg *out,
		 struct ns_error *err)
{
	int rc = ns_aggregate_fevents(t, opts, out, err);
	if (!rc && (rc = ns_aggregate_rows(out, err)))
		ns_agg_release(out);
	return rc;
}

void ns_agg_release(struct ns_agg *a)
{
	free(a->fevents);
	free(a->mem_ts);
	free(a->mem_cpu_sum);
	free(a->mem_dev_sum);
	ns_i64map_release(&a->names);
	ns_i64map_release(&a->shapes);
	free(a->kernels);
	free(a->kernels_ns);
	free(a->avgs);
	memset(a, 0, sizeof(*a));
}
