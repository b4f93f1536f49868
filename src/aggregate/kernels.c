/* Device events and kernel statistics as HTA defines them (kernels.h;
 * docs/analyses.md names the HTA source of each rule). */
#include "aggregate/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/i64map.h"
#include "common/sort.h"
#include "common/vec.h"

static const char *const ktype_names[NS_KTYPE__COUNT] = { "compute", "communication", "memory", "other" };

const char *ns_ktype_name(enum ns_ktype t)
{
	return (unsigned)t < NS_KTYPE__COUNT ? ktype_names[t] : "other";
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* HTA's ComputeKernelGroupingPattern (inverse match): names that are not
 * compute. Python's re.match anchors at the start, so "(.*Memcpy)" is
 * "contains" and "(^hip)" is "starts with". */
static bool not_compute(const char *name)
{
	static const char *const prefixes[] = { "nccl", "Stream Wait Event", "runFunction", "hip", "job_exe", "packet",
						"pe_exe", "cpum_exe_subgraph", "hccl", "collective_subgraph_execution" };
	static const char *const inside[] = { "Memcpy", "Memset", "dma", "Sync" };
	for (size_t i = 0; i < NS_ARRAY_SIZE(prefixes); i++)
		if (starts(name, prefixes[i]))
			return true;
	for (size_t i = 0; i < NS_ARRAY_SIZE(inside); i++)
		if (strstr(name, inside[i]))
			return true;
	return starts(name, "cuda") && strstr(name + 4, "LaunchKernel"); /* (cuda.*LaunchKernel) */
}

enum ns_ktype ns_ktype_of(const char *name)
{
	/* CommunicateKernelGroupingPattern: (^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*) */
	if (starts(name, "nccl") || starts(name, "hip") || starts(name, "hccl") || strstr(name, "ncclKernel"))
		return NS_KTYPE_COMMUNICATION;
	/* MemoryKernelGroupingPattern: (^(hip)?Memcpy)|(^(hip)?Memset)|(^dma) */
	if (starts(name, "Memcpy") || starts(name, "Memset") || starts(name, "dma"))
		return NS_KTYPE_MEMORY;
	return not_compute(name) ? NS_KTYPE_OTHER : NS_KTYPE_COMPUTE;
}

/* An execution a Neuron system profile added to the trace (docs/neuron.md
 * "Correlation": tid "neuron_hw", pid the NeuronCore). */
static bool neuron_hw(const struct ns_trace *t, const struct ns_event *ev)
{
	const struct ns_thread *th = &t->threads[ev->thread];
	const char *text = th->tid == NS_NONE ? ns_strtab_get(&t->strings, th->tid_text) : NULL;
	return text && strcmp(text, "neuron_hw") == 0 && th->pid != NS_NONE && th->pid >= 0;
}

/* The stream of a device event without args (ns_dev_args): its integer tid
 * (Kineto writes the stream as the tid of device rows), or N of a
 * "stream N" tid, or for the executions a Neuron system profile adds (tid
 * "neuron_hw", pid the NeuronCore: docs/neuron.md) the core; -1 when none. */
static int64_t tid_stream(const struct ns_trace *t, const struct ns_event *ev)
{
	const struct ns_thread *th = &t->threads[ev->thread];
	if (th->tid != NS_NONE)
		return th->tid;
	if (neuron_hw(t, ev))
		return th->pid;
	const char *text = ns_strtab_get(&t->strings, th->tid_text);
	if (text && starts(text, "stream ")) {
		char *end;
		long long v = strtoll(text + 7, &end, 10);
		if (end != text + 7)
			return v;
	}
	return -1;
}

/* The args of t->events[i], or NULL; *next is where the search in
 * t->dev_args (in event order) goes on, for calls with i ascending. */
static const struct ns_dev_args *dev_args_of(const struct ns_trace *t, size_t i, size_t *next)
{
	while (*next < t->n_dev_args && t->dev_args[*next].event < i)
		(*next)++;
	return *next < t->n_dev_args && t->dev_args[*next].event == i ? &t->dev_args[*next] : NULL;
}

/* The stream of device slice t->events[i] as HTA reads it: args.stream
 * (absent: -1, no stream), or the tid for an event without args; -1 for
 * events that are not device slices. *bytes: its args "bytes", or NS_NONE. */
static int64_t event_stream(const struct ns_trace *t, size_t i, size_t *next, int64_t *bytes)
{
	const struct ns_event *ev = &t->events[i];
	*bytes = NS_NONE;
	if (ev->kind != NS_KIND_SLICE || !ns_cat_on_stream(ev->cat))
		return -1;
	const struct ns_dev_args *a = dev_args_of(t, i, next);
	if (!a)
		return tid_stream(t, ev);
	*bytes = a->bytes;
	return a->stream == NS_NONE ? -1 : a->stream;
}

static bool is_profiler_step(const char *name)
{
	return starts(name, "ProfilerStep#") && name[13] >= '0' && name[13] <= '9';
}

/* Names HTA counts as device synchronisation wherever they are (trace_filter.py). */
static bool device_sync_name(const char *name)
{
	return strcmp(name, "Event Sync") == 0 || strcmp(name, "Context Sync") == 0;
}

/* The CPU side: correlation -> start of the first CPU event with it, and
 * the start of the last ProfilerStep when there are two distinct ones or
 * more (else NS_NONE: HTA keeps every event). */
static int scan_cpu_side(const struct ns_trace *t, struct ns_i64map *launch, int64_t *last_step_ts)
{
	ns_str first_step = 0;
	bool several_steps = false;
	int64_t last = NS_NONE;
	size_t next = 0;
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		if (ev->kind != NS_KIND_SLICE)
			continue;
		const char *name = ns_strtab_get(&t->strings, ev->name);
		if (is_profiler_step(name)) {
			several_steps |= first_step && first_step != ev->name;
			first_step = first_step ? first_step : ev->name;
			last = last == NS_NONE || ev->ts_ns > last ? ev->ts_ns : last;
		}
		int64_t bytes;
		bool on_device = event_stream(t, i, &next, &bytes) != -1;
		if (on_device || device_sync_name(name) || ev->correlation == NS_NONE || ev->correlation < 0)
			continue;
		if (ns_i64map_put_first(launch, ev->correlation, ev->ts_ns) < 0)
			return -1;
	}
	*last_step_ts = several_steps ? last : NS_NONE;
	return 0;
}

/* Whether HTA's filter keeps device event ev (launch: its launch's start). */
static bool kept(const struct ns_event *ev, int64_t launch, int64_t last_step_ts)
{
	if (last_step_ts == NS_NONE)
		return true;
	if (ev->correlation == NS_NONE || ev->correlation < 0) /* not a GPU kernel to HTA: its own start */
		return ev->ts_ns < last_step_ts;
	return launch != NS_NONE && launch < last_step_ts;
}

int ns_kevents_collect(const struct ns_trace *t, struct ns_kevents *out, struct ns_error *err)
{
	struct ns_i64map launch;
	int64_t last_step_ts;
	size_t cap = 0, next = 0;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	ns_i64map_init(&launch);
	if (scan_cpu_side(t, &launch, &last_step_ts) < 0)
		goto oom;
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		int64_t bytes, stream = event_stream(t, i, &next, &bytes);
		if (stream == -1)
			continue;
		int64_t at = ev->correlation == NS_NONE || ev->correlation < 0
				     ? NS_NONE
				     : ns_i64map_get(&launch, ev->correlation, NS_NONE);
		/* HTA's last-step rule is Kineto's (an incomplete device buffer); a
		 * Neuron execution has no correlation, and runs well after its
		 * launch, so its own start would drop executions of complete steps */
		if (!neuron_hw(t, ev) && !kept(ev, at, last_step_ts))
			continue;
		if (NS_GROW(out->v, cap, out->n + 1) < 0)
			goto oom;
		bool sync = ev->cat == NS_CAT_CUDA_SYNC;
		const char *name = ns_strtab_get(&t->strings, ev->name);
		out->v[out->n++] = (struct ns_kevent){ .ts_ns = ev->ts_ns, .end_ns = ev->ts_ns + ev->dur_ns,
						       .launch_ts_ns = at, .stream = stream, .bytes = bytes,
						       .event = (uint32_t)i,
						       .ktype = (uint8_t)ns_ktype_of(name), .is_sync = sync };
	}
	goto out;
oom:
	rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	ns_kevents_release(out);
out:
	ns_i64map_release(&launch);
	return rc;
}

void ns_kevents_release(struct ns_kevents *k)
{
	free(k->v);
	k->v = NULL;
	k->n = 0;
}

/* One duration under its group (a name, or a type; and its NEFF hash, or 0). */
struct keyed_dur {
	int64_t key, dur, bytes; /* bytes: NS_NONE when the call has none */
	ns_str neff;
};

static int by_key_dur(const void *a, const void *b)
{
	const struct keyed_dur *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->neff != y->neff)
		return x->neff < y->neff ? -1 : 1;
	return (x->dur > y->dur) - (x->dur < y->dur);
}

void ns_kstat_times(const int64_t *dur, size_t stride, size_t n, struct ns_kstat *s)
{
#define DUR(i) (*(const int64_t *)(const void *)((const char *)dur + (i) * stride))
	int64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += DUR(i);
	s->count = (int64_t)n;
	s->total_ns = total;
	s->min_ns = DUR(0);
	s->max_ns = DUR(n - 1);
	s->mean_ns = (double)total / (double)n;
	s->median_ns = n % 2 ? (double)DUR(n / 2) : ((double)DUR(n / 2 - 1) + (double)DUR(n / 2)) / 2.0;
	double squares = 0.0;
	for (size_t i = 0; i < n; i++)
		squares += ((double)DUR(i) - s->mean_ns) * ((double)DUR(i) - s->mean_ns);
	s->stddev_ns = n > 1 ? sqrt(squares / (double)(n - 1)) : 0.0;
#undef DUR
}

/* The statistics of one group's durations d[0..n), sorted ascending. */
static void group_stats(const struct keyed_dur *d, size_t n, struct ns_kstat *s)
{
	ns_kstat_times(&d[0].dur, sizeof(*d), n, s);
	for (size_t i = 0; i < n; i++) {
		if (d[i].bytes == NS_NONE)
			continue;
		s->min_bytes = s->n_sized == 0 || d[i].bytes < s->min_bytes ? d[i].bytes : s->min_bytes;
		s->max_bytes = s->n_sized == 0 || d[i].bytes > s->max_bytes ? d[i].bytes : s->max_bytes;
		s->n_sized++;
		if (__builtin_add_overflow(s->bytes, d[i].bytes, &s->bytes))
			s->bytes = d[i].bytes < 0 ? INT64_MIN : INT64_MAX; /* (hostile input only) */
		s->sized_ns += d[i].dur;
	}
}

static int row_order(const void *a, const void *b)
{
	const struct ns_kstat *x = a, *y = b;
	if (x->ktype != y->ktype)
		return x->ktype < y->ktype ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	int c = strcmp(x->name_text, y->name_text);
	return c ? c : strcmp(x->neff_text, y->neff_text);
}

/* Gathers (key, duration) of every kernel: the name, or the type; and
 * with by_neff its NEFF hash. */
static struct keyed_dur *keyed_durations(const struct ns_trace *t, const struct ns_kevents *k, bool by_type,
					 bool by_neff, size_t *n)
{
	struct keyed_dur *d = malloc((k->n ? k->n : 1) * sizeof(*d));
	*n = 0;
	for (size_t i = 0; d && i < k->n; i++) {
		if (k->v[i].is_sync)
			continue;
		int64_t key = by_type ? k->v[i].ktype : (int64_t)t->events[k->v[i].event].name;
		ns_str neff = by_neff ? t->events[k->v[i].event].neff : 0;
		d[(*n)++] = (struct keyed_dur){ key, k->v[i].end_ns - k->v[i].ts_ns, k->v[i].bytes, neff };
	}
	return d;
}

int ns_kstats_compute(const struct ns_trace *t, const struct ns_kevents *k, bool by_type, bool by_neff,
		      struct ns_kstats *out, struct ns_error *err)
{
	size_t n, cap = 0;
	memset(out, 0, sizeof(*out));
	struct keyed_dur *d = keyed_durations(t, k, by_type, by_neff, &n);
	if (!d)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	ns_sort(d, n, sizeof(*d), by_key_dur);
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo + 1; hi < n && d[hi].key == d[lo].key && d[hi].neff == d[lo].neff; hi++)
			;
		if (NS_GROW(out->v, cap, out->n + 1) < 0) {
			free(d);
			ns_kstats_release(out);
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		}
		struct ns_kstat *s = &out->v[out->n++];
		memset(s, 0, sizeof(*s));
		s->name = by_type ? 0 : (ns_str)d[lo].key;
		s->name_text = by_type ? ns_ktype_name((enum ns_ktype)d[lo].key) : ns_strtab_get(&t->strings, s->name);
		s->ktype = by_type ? (uint8_t)d[lo].key : (uint8_t)ns_ktype_of(s->name_text);
		s->neff_text = d[lo].neff ? ns_strtab_get(&t->strings, d[lo].neff) : "";
		group_stats(d + lo, hi - lo, s);
		out->total_ns += s->total_ns;
	}
	free(d);
	ns_sort(out->v, out->n, sizeof(*out->v), row_order);
	out->by_neff = by_neff;
	return 0;
}

void ns_kstats_release(struct ns_kstats *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static int by_step_ts(const void *a, const void *b)
{
	const struct ns_pstep *x = a, *y = b;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return (x->number > y->number) - (x->number < y->number);
}

int ns_psteps_collect(const struct ns_trace *t, struct ns_psteps *out, struct ns_error *err)
{
	size_t cap = 0;
	bool several = false;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		if (ev->kind != NS_KIND_SLICE || ns_cat_on_stream(ev->cat) || ev->cat == NS_CAT_GPU_USER_ANNOTATION)
			continue;
		const char *name = ns_strtab_get(&t->strings, ev->name);
		if (!is_profiler_step(name))
			continue;
		if (NS_GROW(out->v, cap, out->n + 1) < 0) {
			ns_psteps_release(out);
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		}
		int64_t number = strtoll(name + 13, NULL, 10);
		several |= out->n && out->v[0].number != number;
		out->v[out->n++] = (struct ns_pstep){ number, ev->ts_ns, ev->ts_ns + ev->dur_ns };
	}
	if (out->n == 0) /* (out->v is NULL) */
		return 0;
	ns_sort(out->v, out->n, sizeof(*out->v), by_step_ts);
	if (several) { /* HTA keeps the CPU events that start before the last step */
		int64_t last = out->v[out->n - 1].ts_ns;
		while (out->n && out->v[out->n - 1].ts_ns >= last)
			out->n--;
	}
	return 0;
}

void ns_psteps_release(struct ns_psteps *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

long ns_psteps_find(const struct ns_psteps *s, int64_t ts_ns)
{
	if (ts_ns == NS_NONE)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].ts_ns <= ts_ns && ts_ns < s->v[i].end_ns)
			return (long)i;
	return -1;
}
