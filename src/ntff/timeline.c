/* Device profiles placed on a trace's time axis, per NeuronCore and engine
 * (docs/neuron.md "Engines"). A profile's device clock maps to the host
 * clock through the system profile's clock samples of its core; without
 * any, the profile's first busy moment is anchored at the start of the
 * trace's first device event on that core running the profile's NEFF. */
#include "ntff/ntff-internal.h"

#include <stdlib.h>
#include <string.h>

int64_t ns_event_core(const struct ns_trace *t, const struct ns_event *ev)
{
	int64_t pid = ev->thread < t->n_threads ? t->threads[ev->thread].pid : NS_NONE;
	return pid == NS_NONE || pid < 0 ? 0 : pid;
}

static bool is_device_cat(uint8_t cat)
{
	return cat == NS_CAT_KERNEL || cat == NS_CAT_GPU_MEMCPY || cat == NS_CAT_GPU_MEMSET;
}

/* Host start of the first device event of t on core nc (with the NEFF hash
 * when one is given). */
static bool anchor(const struct ns_trace *t, int64_t nc, const char *hash, int64_t *host)
{
	int64_t base = t->has_base_time ? t->base_time_ns : 0, best = INT64_MAX;
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		if (ev->kind != NS_KIND_SLICE || !is_device_cat(ev->cat) || ns_event_core(t, ev) != nc)
			continue;
		if (hash && *hash && strcmp(ns_strtab_get(&t->strings, ev->neff), hash) != 0)
			continue;
		if (ev->ts_ns < best)
			best = ev->ts_ns;
	}
	if (best == INT64_MAX)
		return false;
	*host = best + base;
	return true;
}

static struct ns_core_engines *core_of(struct ns_engine_timeline *tl, int64_t nc)
{
	for (size_t i = 0; i < tl->n_cores; i++)
		if (tl->cores[i].nc == nc)
			return &tl->cores[i];
	struct ns_core_engines *v = realloc(tl->cores, (tl->n_cores + 1) * sizeof(*v));
	if (!v)
		return NULL;
	tl->cores = v;
	memset(&v[tl->n_cores], 0, sizeof(v[0]));
	v[tl->n_cores].nc = nc;
	return &v[tl->n_cores++];
}

/* Appends the profile's busy spans of engine e, moved to the trace axis. */
static int place(struct ns_core_engines *c, const struct ns_devprof *dp, enum ns_engine e, const struct sync_pt *sync,
		 size_t n_sync, bool use_sync, int64_t shift, int64_t base)
{
	size_t n = c->n_busy[e] + dp->n_busy[e];
	struct ns_span *v = realloc(c->busy[e], (n + 1) * sizeof(*v));
	if (!v)
		return -1;
	c->busy[e] = v;
	for (size_t i = 0; i < dp->n_busy[e]; i++) {
		const struct ns_span *s = &dp->busy[e][i];
		int64_t host = s->start + shift;
		if (use_sync)
			sync_map(sync, n_sync, c->nc, s->start, &host);
		v[c->n_busy[e]++] = (struct ns_span){ host - base, host - base + (s->end - s->start) };
	}
	return 0;
}

int ns_engine_timeline_build(const struct ns_devprof_ref *refs, size_t n, const struct ns_sysprof *sp,
			     const struct ns_trace *t, struct ns_engine_timeline *out, struct ns_error *err)
{
	struct sync_pt *sync = NULL;
	size_t n_sync = 0;
	int64_t base = t->has_base_time ? t->base_time_ns : 0;
	int rc = NS_ERR_NOMEM;
	memset(out, 0, sizeof(*out));
	if (!(out->align = calloc(n + 1, sizeof(*out->align))) || (sp && sync_points(sp, &sync, &n_sync)))
		goto out;
	for (size_t r = 0; r < n; r++) {
		const struct ns_devprof *dp = refs[r].dp;
		int64_t nc = refs[r].nc < 0 ? 0 : refs[r].nc, host, dummy;
		bool use_sync = dp->first_ns != NS_NONE && sync_map(sync, n_sync, nc, dp->first_ns, &dummy);
		int64_t shift = 0;
		if (dp->first_ns == NS_NONE)
			continue;
		if (use_sync)
			out->align[r] = NS_ALIGN_SYNC;
		else if (anchor(t, nc, refs[r].neff_hash, &host) || anchor(t, nc, NULL, &host)) {
			out->align[r] = NS_ALIGN_ANCHOR;
			shift = host - dp->first_ns;
		} else
			continue;
		struct ns_core_engines *c = core_of(out, nc);
		if (!c)
			goto out;
		for (int e = 0; e < NS_ENG__COUNT; e++)
			if (place(c, dp, (enum ns_engine)e, sync, n_sync, use_sync, shift, base))
				goto out;
	}
	for (size_t i = 0; i < out->n_cores; i++)
		for (int e = 0; e < NS_ENG__COUNT; e++)
			out->cores[i].n_busy[e] = spans_merge(out->cores[i].busy[e], out->cores[i].n_busy[e]);
	rc = 0;
out:
	free(sync);
	if (rc) {
		ns_engine_timeline_release(out);
		return ns_error_set(err, rc, "out of memory while placing device profiles");
	}
	return 0;
}

void ns_engine_timeline_release(struct ns_engine_timeline *tl)
{
	for (size_t i = 0; i < tl->n_cores; i++)
		for (int e = 0; e < NS_ENG__COUNT; e++)
			free(tl->cores[i].busy[e]);
	free(tl->cores);
	free(tl->align);
	memset(tl, 0, sizeof(*tl));
}

int64_t ns_engine_busy_in(const struct ns_engine_timeline *tl, int64_t nc, enum ns_engine e, int64_t start,
			  int64_t end)
{
	int64_t sum = 0;
	for (size_t i = 0; i < tl->n_cores; i++) {
		const struct ns_core_engines *c = &tl->cores[i];
		if (c->nc != nc)
			continue;
		/* first span ending after start */
		size_t lo = 0, hi = c->n_busy[e];
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (c->busy[e][mid].end <= start)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k < c->n_busy[e] && c->busy[e][k].start < end; k++) {
			int64_t s = c->busy[e][k].start > start ? c->busy[e][k].start : start;
			int64_t x = c->busy[e][k].end < end ? c->busy[e][k].end : end;
			sum += x > s ? x - s : 0;
		}
	}
	return sum;
}
