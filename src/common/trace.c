#include "common/trace.h"

#include "common/i64map.h"
#include "common/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME(s) s, sizeof(s) - 1

static const struct {
	const char *name;
	size_t len;
	enum ns_cat cat;
} cat_names[] = {
	/* modern spellings first: ns_cat_name() returns the first match */
	{ NAME("cpu_op"), NS_CAT_CPU_OP },
	{ NAME("user_annotation"), NS_CAT_USER_ANNOTATION },
	{ NAME("gpu_user_annotation"), NS_CAT_GPU_USER_ANNOTATION },
	{ NAME("kernel"), NS_CAT_KERNEL },
	{ NAME("gpu_memcpy"), NS_CAT_GPU_MEMCPY },
	{ NAME("gpu_memset"), NS_CAT_GPU_MEMSET },
	{ NAME("cuda_runtime"), NS_CAT_CUDA_RUNTIME },
	{ NAME("cuda_driver"), NS_CAT_CUDA_DRIVER },
	{ NAME("cuda_sync"), NS_CAT_CUDA_SYNC },
	{ NAME("cuda_event"), NS_CAT_CUDA_EVENT },
	{ NAME("cuda_profiler_range"), NS_CAT_CUDA_PROFILER_RANGE },
	{ NAME("cpu_instant_event"), NS_CAT_CPU_INSTANT_EVENT },
	{ NAME("python_function"), NS_CAT_PYTHON_FUNCTION },
	{ NAME("overhead"), NS_CAT_OVERHEAD },
	{ NAME("xpu_runtime"), NS_CAT_XPU_RUNTIME },
	{ NAME("xpu_driver"), NS_CAT_XPU_DRIVER },
	{ NAME("mtia_runtime"), NS_CAT_MTIA_RUNTIME },
	{ NAME("mtia_ccp_events"), NS_CAT_MTIA_CCP_EVENTS },
	{ NAME("mtia_insight"), NS_CAT_MTIA_INSIGHT },
	{ NAME("mtia_counters"), NS_CAT_MTIA_COUNTERS },
	{ NAME("privateuse1_runtime"), NS_CAT_PRIVATEUSE1_RUNTIME },
	{ NAME("privateuse1_driver"), NS_CAT_PRIVATEUSE1_DRIVER },
	{ NAME("glow_runtime"), NS_CAT_GLOW_RUNTIME },
	{ NAME("hpu_op"), NS_CAT_HPU_OP },
	{ NAME("external_correlation"), NS_CAT_EXTERNAL_CORRELATION },
	{ NAME("Trace"), NS_CAT_TRACE },
	{ NAME("ac2g"), NS_CAT_AC2G },
	{ NAME("fwdbwd"), NS_CAT_FWDBWD },
	/* legacy spellings (PyTorch <= 1.11) */
	{ NAME("Operator"), NS_CAT_CPU_OP },
	{ NAME("Runtime"), NS_CAT_CUDA_RUNTIME },
	{ NAME("Kernel"), NS_CAT_KERNEL },
	{ NAME("Memcpy"), NS_CAT_GPU_MEMCPY },
	{ NAME("Memset"), NS_CAT_GPU_MEMSET },
	{ NAME("gpu_user_Annotation"), NS_CAT_GPU_USER_ANNOTATION },
	{ NAME("async"), NS_CAT_AC2G },
};

const char *ns_cat_name(enum ns_cat cat)
{
	for (size_t i = 0; i < NS_ARRAY_SIZE(cat_names); i++)
		if (cat_names[i].cat == cat)
			return cat_names[i].name;
	return "";
}

enum ns_cat ns_cat_from_string(const char *s, size_t len)
{
	for (size_t i = 0; i < NS_ARRAY_SIZE(cat_names); i++)
		if (cat_names[i].len == len && memcmp(cat_names[i].name, s, len) == 0)
			return cat_names[i].cat;
	return NS_CAT_OTHER;
}

void ns_counter_add(struct ns_counter *c, bool is_int, int64_t v, double d)
{
	c->sum_approx += d;
	if (c->exact && (!is_int || (v > 0 && c->sum > INT64_MAX - v) || (v < 0 && c->sum < INT64_MIN - v)))
		c->exact = false;
	if (c->exact)
		c->sum += v;
}

void ns_trace_init(struct ns_trace *t)
{
	memset(t, 0, sizeof(*t));
	ns_strtab_init(&t->strings);
	t->base_time_ns = NS_NONE;
	t->rank = NS_NONE;
	t->world_size = NS_NONE;
	t->truncated_at = -1;
	t->split_at = -1;
}

void ns_trace_release(struct ns_trace *t)
{
	free(t->path);
	free(t->abspath);
	ns_strtab_release(&t->strings);
	free(t->events);
	free(t->flows);
	free(t->threads);
	free(t->flops);
	free(t->meta);
	free(t->counters);
	free(t->counter_values);
	free(t->xwarn);
	free(t->dev_args);
	memset(t, 0, sizeof(*t));
}

int ns_trace_push_dev_args(struct ns_trace *t, const struct ns_dev_args *a)
{
	if (NS_GROW_MIN(t->dev_args, t->cap_dev_args, t->n_dev_args + 1, 256))
		return -1;
	t->dev_args[t->n_dev_args++] = *a;
	return 0;
}

bool ns_cat_on_stream(uint8_t cat)
{
	return cat == NS_CAT_KERNEL || cat == NS_CAT_GPU_MEMCPY || cat == NS_CAT_GPU_MEMSET ||
	       cat == NS_CAT_MTIA_CCP_EVENTS || cat == NS_CAT_CUDA_SYNC;
}

int ns_trace_push_flops(struct ns_trace *t, int64_t flops)
{
	if (!t->n_events || NS_GROW(t->flops, t->cap_flops, t->n_flops + 1) < 0)
		return -1;
	t->flops[t->n_flops++] = (struct ns_event_flops){ (uint32_t)(t->n_events - 1), flops };
	return 0;
}

int64_t ns_trace_flops_of(const struct ns_trace *t, size_t i)
{
	size_t lo = 0, hi = t->n_flops;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->flops[mid].event < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n_flops && t->flops[lo].event == i ? t->flops[lo].flops : NS_NONE;
}

int ns_trace_push_xwarn(struct ns_trace *t, const struct ns_xwarn_ref *w)
{
	if (NS_GROW_MIN(t->xwarn, t->cap_xwarn, t->n_xwarn + 1, 8))
		return -1;
	t->xwarn[t->n_xwarn++] = *w;
	return 0;
}

int64_t ns_trace_thread(struct ns_trace *t, ns_str pid_text, int64_t pid, ns_str tid_text, int64_t tid)
{
	/* Traces have few threads; the last hit is cached because events of one
	 * thread come in runs. */
	static __thread size_t last;
	if (last < t->n_threads && t->threads[last].pid_text == pid_text &&
	    t->threads[last].tid_text == tid_text)
		return (int64_t)last;
	for (size_t i = 0; i < t->n_threads; i++) {
		if (t->threads[i].pid_text == pid_text && t->threads[i].tid_text == tid_text) {
			last = i;
			return (int64_t)i;
		}
	}
	if (NS_GROW(t->threads, t->cap_threads, t->n_threads + 1) < 0)
		return -1;
	t->threads[t->n_threads] = (struct ns_thread){ pid_text, tid_text, pid, tid, 0 };
	last = t->n_threads;
	return (int64_t)t->n_threads++;
}

/* Shrinks *ptr from *cap to n elements (a failed shrink keeps the block). */
static void trim(void **ptr, size_t *cap, size_t elem, size_t n)
{
	void *p = n && n < *cap ? realloc(*ptr, n * elem) : NULL;
	if (p) {
		*ptr = p;
		*cap = n;
	}
}

void ns_trace_trim(struct ns_trace *t)
{
	trim((void **)&t->events, &t->cap_events, sizeof(*t->events), t->n_events);
	trim((void **)&t->flows, &t->cap_flows, sizeof(*t->flows), t->n_flows);
	trim((void **)&t->dev_args, &t->cap_dev_args, sizeof(*t->dev_args), t->n_dev_args);
}

int ns_trace_push(struct ns_trace *t, const struct ns_event *ev)
{
	if (ev->kind == NS_KIND_FLOW_S || ev->kind == NS_KIND_FLOW_F) {
		if (NS_GROW_MIN(t->flows, t->cap_flows, t->n_flows + 1, 1024) < 0)
			return -1;
		t->flows[t->n_flows++] = (struct ns_flow){ ev->correlation, ev->ts_ns, ev->thread, ev->kind };
		return 0;
	}
	if (NS_GROW_MIN(t->events, t->cap_events, t->n_events + 1, 4096) < 0)
		return -1;
	t->events[t->n_events++] = *ev;
	return 0;
}

/* What t knows of in's events besides the events: their categories, time
 * form, memory records and number (ns_trace_append, ns_trace_merge). */
static void add_counts(struct ns_trace *t, const struct ns_trace *in)
{
	for (int c = 0; c < NS_CAT__COUNT; c++)
		t->has_cat[c] |= in->has_cat[c];
	t->ts_has_fraction |= in->ts_has_fraction;
	t->profile_memory |= in->profile_memory;
	t->n_trace_events += in->n_trace_events;
}

/* part's strings and threads as t's: str[id], thr[index]. */
static int append_names(struct ns_trace *t, const struct ns_trace *part, ns_str *str, uint32_t *thr)
{
	for (uint32_t i = 0; i < part->strings.count; i++) {
		str[i] = i ? ns_strtab_intern(&t->strings, ns_strtab_get(&part->strings, i),
					      ns_strtab_len(&part->strings, i))
			   : 0;
		if (str[i] == UINT32_MAX)
			return -1;
	}
	for (size_t i = 0; i < part->n_threads; i++) {
		const struct ns_thread *th = &part->threads[i];
		int64_t k = ns_trace_thread(t, str[th->pid_text], th->pid, str[th->tid_text], th->tid);
		if (k < 0)
			return -1;
		thr[i] = (uint32_t)k;
		if (th->name) /* (the last thread_name event wins, and part's come later) */
			t->threads[k].name = str[th->name];
	}
	return 0;
}

int ns_trace_append(struct ns_trace *t, const struct ns_trace *part)
{
	ns_str *str = malloc((part->strings.count + 1) * sizeof(*str));
	uint32_t *thr = malloc((part->n_threads + 1) * sizeof(*thr)), first = (uint32_t)t->n_events;
	int rc = -1;
	if (!str || !thr || append_names(t, part, str, thr) ||
	    NS_GROW(t->events, t->cap_events, t->n_events + part->n_events) < 0 ||
	    NS_GROW(t->flows, t->cap_flows, t->n_flows + part->n_flows) < 0 ||
	    NS_GROW(t->flops, t->cap_flops, t->n_flops + part->n_flops) < 0 ||
	    NS_GROW(t->dev_args, t->cap_dev_args, t->n_dev_args + part->n_dev_args) < 0)
		goto out;
	for (size_t i = 0; i < part->n_events; i++) {
		struct ns_event ev = part->events[i];
		ev.idx += (uint32_t)t->n_trace_events;
		ev.name = str[ev.name];
		ev.input_dims = str[ev.input_dims];
		ev.stack = str[ev.stack];
		ev.neff = str[ev.neff];
		ev.thread = thr[ev.thread];
		t->events[t->n_events++] = ev;
	}
	for (size_t i = 0; i < part->n_flows; i++) {
		struct ns_flow f = part->flows[i];
		f.thread = thr[f.thread];
		t->flows[t->n_flows++] = f;
	}
	for (size_t i = 0; i < part->n_flops; i++)
		t->flops[t->n_flops++] = (struct ns_event_flops){ part->flops[i].event + first, part->flops[i].flops };
	for (size_t i = 0; i < part->n_dev_args; i++) {
		struct ns_dev_args a = part->dev_args[i];
		a.event += first;
		t->dev_args[t->n_dev_args++] = a;
	}
	add_counts(t, part);
	t->legacy_autograd |= part->legacy_autograd;
	t->n_untimed_launches += part->n_untimed_launches;
	rc = 0;
out:
	free(str);
	free(thr);
	return rc;
}

const char *ns_trace_meta(const struct ns_trace *t, const char *key)
{
	size_t key_len = strlen(key);
	for (size_t i = 0; i < t->n_meta; i++) {
		ns_str k = t->meta[2 * i];
		if (ns_strtab_len(&t->strings, k) == key_len &&
		    memcmp(ns_strtab_get(&t->strings, k), key, key_len) == 0)
			return ns_strtab_get(&t->strings, t->meta[2 * i + 1]);
	}
	return NULL;
}

static ns_str reintern(struct ns_trace *dst, const struct ns_trace *src, ns_str id)
{
	if (id == 0)
		return 0;
	return ns_strtab_intern(&dst->strings, ns_strtab_get(&src->strings, id), ns_strtab_len(&src->strings, id));
}

/* An id (External id, correlation, flow id) of one file, renumbered: ids
 * are per process and may be any 64-bit value, so each file's get new
 * numbers from one counter (next), which keeps files apart and overflows
 * nothing. One map per file covers all three fields, so a value that
 * links two of them still does. New numbers start at 1 and an id <= 0
 * keeps its value: PyTorch links only ids > 0 (_parse_kineto_results). */
static int renumber(struct ns_i64map *ids, int64_t *next, int64_t *id)
{
	if (*id == NS_NONE || *id <= 0)
		return 0;
	int64_t v = ns_i64map_get(ids, *id, NS_NONE);
	if (v == NS_NONE) {
		v = (*next)++;
		if (ns_i64map_set(ids, *id, v))
			return -1;
	}
	*id = v;
	return 0;
}

/* ts moved by shift, or false when that leaves the range ingest keeps
 * times in (so that later sums of times cannot overflow). */
static bool shift_time(int64_t ts, int64_t shift, int64_t *out)
{
	return !__builtin_add_overflow(ts, shift, out) && *out > -NS_TIME_LIMIT_NS && *out < NS_TIME_LIMIT_NS;
}

/* What merge_one returns besides 0: */
enum { MERGE_NOMEM = -1, MERGE_TOO_FAR = 1 };

/* File k's threads, apart from every other file's: the pid text gets the
 * file's number. */
static int merge_threads(struct ns_trace *out, const struct ns_trace *t, size_t k)
{
	char rank_pid[64];
	for (size_t i = 0; i < t->n_threads; i++) {
		const struct ns_thread *th = &t->threads[i];
		snprintf(rank_pid, sizeof(rank_pid), "%zu:%s", k, ns_strtab_get(&t->strings, th->pid_text));
		ns_str pid_text = ns_strtab_intern(&out->strings, rank_pid, strlen(rank_pid));
		ns_str tid_text = reintern(out, t, th->tid_text);
		if (pid_text == UINT32_MAX || tid_text == UINT32_MAX ||
		    ns_trace_thread(out, pid_text, th->pid, tid_text, th->tid) < 0)
			return MERGE_NOMEM;
		out->threads[out->n_threads - 1].name = reintern(out, t, th->name);
	}
	return 0;
}

/* One file's events, flow ends and Explorer warnings, times moved by shift,
 * threads by thread_base, ids renumbered through ids. */
static int merge_events(struct ns_trace *out, const struct ns_trace *t, int64_t shift, uint32_t thread_base,
			struct ns_i64map *ids, int64_t *next_id)
{
	for (size_t i = 0; i < t->n_dev_args; i++) {
		struct ns_dev_args a = t->dev_args[i];
		a.event += (uint32_t)out->n_events;
		if (ns_trace_push_dev_args(out, &a))
			return MERGE_NOMEM;
	}
	for (size_t i = 0; i < t->n_events; i++) {
		struct ns_event ev = t->events[i];
		if (!shift_time(ev.ts_ns, shift, &ev.ts_ns))
			return MERGE_TOO_FAR;
		ev.thread += thread_base;
		/* (a memory record's fields share these bytes) */
		if (!ns_event_is_memory(&ev) &&
		    (renumber(ids, next_id, &ev.external_id) || renumber(ids, next_id, &ev.correlation)))
			return MERGE_NOMEM;
		ev.name = reintern(out, t, ev.name);
		ev.input_dims = reintern(out, t, ev.input_dims);
		ev.stack = reintern(out, t, ev.stack);
		ev.neff = reintern(out, t, ev.neff);
		int64_t flops = ns_trace_flops_of(t, i);
		if (ev.name == UINT32_MAX || ev.input_dims == UINT32_MAX || ev.stack == UINT32_MAX ||
		    ev.neff == UINT32_MAX || ns_trace_push(out, &ev) ||
		    (flops != NS_NONE && ns_trace_push_flops(out, flops)))
			return MERGE_NOMEM;
	}
	for (size_t i = 0; i < t->n_flows; i++) {
		struct ns_event end = { .correlation = t->flows[i].id, .thread = t->flows[i].thread + thread_base,
					.kind = t->flows[i].kind };
		if (!shift_time(t->flows[i].ts_ns, shift, &end.ts_ns))
			return MERGE_TOO_FAR;
		if (renumber(ids, next_id, &end.correlation) || ns_trace_push(out, &end))
			return MERGE_NOMEM;
	}
	for (size_t i = 0; i < t->n_xwarn; i++) {
		struct ns_xwarn_ref w = t->xwarn[i];
		w.file = reintern(out, t, w.file);
		w.category = reintern(out, t, w.category);
		w.message = reintern(out, t, w.message);
		if (w.file == UINT32_MAX || w.category == UINT32_MAX || w.message == UINT32_MAX ||
		    ns_trace_push_xwarn(out, &w))
			return MERGE_NOMEM;
	}
	return 0;
}

int ns_trace_merge(const struct ns_trace *in, size_t n, struct ns_trace *out, struct ns_error *err)
{
	int64_t min_base = INT64_MAX, next_id = 1;
	struct ns_i64map ids;
	int rc = 0;
	size_t k = 0;
	ns_trace_init(out);
	ns_i64map_init(&ids);
	for (size_t i = 0; i < n; i++)
		if (in[i].has_base_time && in[i].base_time_ns < min_base)
			min_base = in[i].base_time_ns;
	out->path = strdup("(merged)");
	if (!out->path) {
		rc = MERGE_NOMEM;
		goto out;
	}
	for (; k < n; k++) {
		const struct ns_trace *t = &in[k];
		/* era C times are relative to each file's baseTimeNanoseconds */
		int64_t shift = 0;
		if (t->has_base_time && __builtin_sub_overflow(t->base_time_ns, min_base, &shift)) {
			rc = MERGE_TOO_FAR;
			goto out;
		}
		uint32_t thread_base = (uint32_t)out->n_threads;
		ns_i64map_release(&ids); /* (empty again: this file's ids start afresh) */
		if ((rc = merge_threads(out, t, k)) || (rc = merge_events(out, t, shift, thread_base, &ids, &next_id)))
			goto out;
		add_counts(out, t);
		out->has_base_time |= t->has_base_time;
	}
	if (min_base != INT64_MAX)
		out->base_time_ns = min_base;
out:
	ns_i64map_release(&ids);
	if (rc == MERGE_NOMEM)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory while merging %zu traces", n);
	if (rc == MERGE_TOO_FAR)
		return ns_error_set(err, NS_ERR_INPUT,
				    "%s: cannot be merged with the other traces: its baseTimeNanoseconds (%lld) is too "
				    "far from the earliest (%lld); merged times must stay within +-2^62 ns",
				    in[k].path ? in[k].path : "(trace)", (long long)in[k].base_time_ns,
				    (long long)min_base);
	return 0;
}
