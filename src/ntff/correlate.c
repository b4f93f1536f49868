/* System profile -> device events of the ns_trace model (docs/neuron.md
 * "Correlation"). Each hardware execution interval (nc_exec_running)
 * becomes one NS_CAT_KERNEL event carrying the correlation / External id of
 * the framework event that launched it, so aggregate.c attributes it with
 * the same rules as a kernel written in trace.json:
 *
 *   hardware interval --flow id--> framework event
 *                     --flow id / exec_id--> runtime event --flow id--> framework event
 *   launcher (framework, else runtime) --ids in its attributes, else the
 *   trace.json event of the same name at the same host time--> op
 */
#include "ntff/ntff-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/i64map.h"
#include "common/sort.h"
#include "common/vec.h"

#define NONE (-1)
#define MATCH_TOLERANCE_NS 1000 /* host-clock slack between the system profile and trace.json */
#define SKEW_WINDOW_NS 1000000  /* the largest host-clock skew looked for (1 ms) */
#define HW_EXEC "nc_exec_running"

/* trace.json categories a launcher may be found as. */
static const enum ns_cat launcher_cats[] = { NS_CAT_CPU_OP, NS_CAT_PRIVATEUSE1_RUNTIME, NS_CAT_PRIVATEUSE1_DRIVER };

/* Runtime events of one execution, most specific launcher first. */
static const char *const exec_rank[] = {
	"nrta_execute_schedule", "nrt_execute", "runtime_execute", "nrt_model_submit",
	"kbl_exec_pre", "kmgr_exec_core", "kbl_exec_wait", "kbl_exec_post",
};

struct interval {
	int64_t host, dur, nc, pcore, exec_id;
	int64_t correlation, external_id;
	size_t ev;               /* the START (or complete) event */
	size_t stop;             /* the STOP event, or ev */
	ns_str neff, label;
};

static int cmp_sync(const void *a, const void *b)
{
	const struct sync_pt *x = a, *y = b;
	if (x->nc != y->nc)
		return x->nc < y->nc ? -1 : 1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

int sync_points(const struct ns_sysprof *sp, struct sync_pt **out, size_t *n)
{
	struct sync_pt *p = malloc((sp->n_ev + 1) * sizeof(*p));
	size_t k = 0;
	if (!p)
		return -1;
	for (size_t i = 0; i < sp->n_ev; i++) {
		const struct ns_sys_event *ev = &sp->ev[i];
		if (ev->nc_ts != NS_NONE && ev->cpu_ts != NS_NONE)
			p[k++] = (struct sync_pt){ ev->nc == NS_NONE ? 0 : ev->nc, ev->nc_ts, ev->cpu_ts };
	}
	ns_sort(p, k, sizeof(*p), cmp_sync);
	*out = p;
	*n = k;
	return 0;
}

bool sync_map(const struct sync_pt *p, size_t n, int64_t nc, int64_t dev, int64_t *host)
{
	const struct sync_pt *best = NULL;
	for (size_t i = 0; i < n; i++) {
		if (p[i].nc != nc)
			continue;
		if (!best || p[i].dev <= dev)
			best = &p[i];
		if (p[i].dev > dev)
			break;
	}
	if (!best)
		return false;
	*host = best->host + (dev - best->dev);
	return true;
}

static int rank_of(const struct ns_sysprof *sp, const struct ns_sys_event *ev)
{
	const char *name = ns_strtab_get(&sp->strings, ev->name);
	for (size_t i = 0; i < NS_ARRAY_SIZE(exec_rank); i++)
		if (strcmp(name, exec_rank[i]) == 0)
			return (int)i;
	return (int)NS_ARRAY_SIZE(exec_rank);
}

struct work {
	const struct ns_sysprof *sp;
	struct ns_trace *t;
	struct sync_pt *sync;
	size_t n_sync;
	struct ns_i64map fw_by_flow, rt_by_flow, rt_by_exec, start_by_key;
	struct interval *iv;
	size_t n_iv;
	/* trace events a launcher can match by time, sorted by (name, ts) */
	struct match { ns_str name; int64_t ts; size_t ev; } *match;
	size_t n_match;
	int64_t skew;            /* added to launcher host times before matching */
};

/* The host time of an event's start: its timestamp, else its own clock
 * sample, else its device time through the core's samples. */
static bool host_start(const struct work *w, const struct ns_sys_event *ev, int64_t *out)
{
	if (ev->ts != NS_NONE) {
		*out = ev->ts;
		return true;
	}
	if (ev->cpu_ts != NS_NONE) {
		*out = ev->cpu_ts;
		return true;
	}
	return ev->nc_ts != NS_NONE && sync_map(w->sync, w->n_sync, ev->nc == NS_NONE ? 0 : ev->nc, ev->nc_ts, out);
}

static int build_maps(struct work *w)
{
	const struct ns_sysprof *sp = w->sp;
	for (size_t i = 0; i < sp->n_ev; i++) {
		const struct ns_sys_event *ev = &sp->ev[i];
		struct ns_i64map *by_flow = ev->source == NS_SYS_FRAMEWORK ? &w->fw_by_flow
					    : ev->source == NS_SYS_RUNTIME ? &w->rt_by_flow : NULL;
		for (uint32_t f = 0; by_flow && f < ev->n_flows; f++)
			if (ns_i64map_put_first(by_flow, sp->flows[ev->flows_off + f], (int64_t)i))
				return -1;
		if (ev->source == NS_SYS_RUNTIME && ev->exec_id != NS_NONE) {
			int64_t have = ns_i64map_get(&w->rt_by_exec, ev->exec_id, NONE);
			if ((have == NONE || rank_of(sp, ev) < rank_of(sp, &sp->ev[have])) &&
			    ns_i64map_set(&w->rt_by_exec, ev->exec_id, (int64_t)i))
				return -1;
		}
	}
	return 0;
}

/* START/STOP halves pair by tracking_id, else by (exec_id, core); and by
 * physical core, as LNC2 runs one execution (same ids) on two. */
static int64_t pair_key(const struct ns_sys_event *ev)
{
	uint64_t pcore = ev->pcore == NS_NONE ? 0 : (uint64_t)ev->pcore + 1;
	if (ev->tracking_id != NS_NONE)
		return (int64_t)((uint64_t)ev->tracking_id ^ pcore * 0x9E3779B97F4A7C15ULL);
	return (int64_t)(((uint64_t)ev->exec_id << 8) ^ (uint64_t)(ev->nc == NS_NONE ? 0 : ev->nc) ^ (1ULL << 62) ^
			 pcore * 0x9E3779B97F4A7C15ULL);
}

static int add_interval(struct work *w, size_t start, size_t stop, int64_t host, int64_t dur)
{
	const struct ns_sys_event *a = &w->sp->ev[start], *b = &w->sp->ev[stop];
	struct interval *grown = realloc(w->iv, (w->n_iv + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	w->iv = grown;
	w->iv[w->n_iv++] = (struct interval){
		.host = host,
		.dur = dur < 0 ? 0 : dur,
		.nc = a->nc != NS_NONE ? a->nc : b->nc != NS_NONE ? b->nc : 0,
		.pcore = a->pcore != NS_NONE ? a->pcore : b->pcore,
		.exec_id = a->exec_id != NS_NONE ? a->exec_id : b->exec_id,
		.correlation = a->correlation != NS_NONE ? a->correlation : b->correlation,
		.external_id = a->external_id != NS_NONE ? a->external_id : b->external_id,
		.ev = start,
		.stop = stop,
		.neff = a->neff ? a->neff : b->neff,
		.label = a->label ? a->label : b->label,
	};
	return 0;
}

/* Hardware execution intervals: complete events as written; START/STOP
 * halves with the device-clock difference as duration when both carry one
 * (the host sees the stop late), else the host difference. */
static int build_intervals(struct work *w, struct ns_attach_stats *st)
{
	const struct ns_sysprof *sp = w->sp;
	for (size_t i = 0; i < sp->n_ev; i++) {
		const struct ns_sys_event *ev = &sp->ev[i];
		int64_t host;
		if (ev->source != NS_SYS_HARDWARE || strcmp(ns_strtab_get(&sp->strings, ev->name), HW_EXEC) != 0)
			continue;
		if (ev->phase == NS_SYS_START) {
			if (ns_i64map_set(&w->start_by_key, pair_key(ev), (int64_t)i))
				return -1;
			continue;
		}
		if (ev->phase == NS_SYS_STOP) {
			int64_t s = ns_i64map_get(&w->start_by_key, pair_key(ev), NONE);
			const struct ns_sys_event *a = s != NONE ? &sp->ev[s] : NULL;
			int64_t stop_host;
			if (!a || !host_start(w, a, &host)) {
				st->unpaired++;
				continue;
			}
			ns_i64map_set(&w->start_by_key, pair_key(ev), NONE);
			int64_t dur = a->nc_ts != NS_NONE && ev->nc_ts != NS_NONE ? ev->nc_ts - a->nc_ts
				      : host_start(w, ev, &stop_host) ? stop_host - host : 0;
			if (add_interval(w, (size_t)s, i, host, dur))
				return -1;
			continue;
		}
		if (ev->dur != NS_NONE && host_start(w, ev, &host) && add_interval(w, i, i, host, ev->dur))
			return -1;
	}
	/* starts never stopped */
	int64_t key, start;
	for (size_t pos = 0; ns_i64map_next(&w->start_by_key, &pos, &key, &start);)
		st->unpaired += start != NONE;
	return 0;
}

static int cmp_core_start(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;
	if (x->nc != y->nc)
		return x->nc < y->nc ? -1 : 1;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return x->pcore < y->pcore ? -1 : x->pcore > y->pcore;
}

/* The logical core size: the caller's (NEFF headers), else the most
 * physical cores (pcore_idx) one logical core's hardware events name, else 1. */
static void lnc_size(const struct work *w, struct ns_attach_stats *st)
{
	int64_t most = 0;
	for (size_t i = 0, j; i < w->n_iv; i = j) {
		uint64_t seen = 0; /* pcore_idx 0..63 */
		for (j = i; j < w->n_iv && w->iv[j].nc == w->iv[i].nc; j++)
			if (w->iv[j].pcore >= 0 && w->iv[j].pcore < 64)
				seen |= 1ULL << w->iv[j].pcore;
		if (__builtin_popcountll(seen) > most)
			most = __builtin_popcountll(seen);
	}
	if (w->sp->lnc_size) {
		st->lnc_size = w->sp->lnc_size;
		st->lnc_from = "the NEFF header's lnc_size";
	} else if (most > 1) {
		st->lnc_size = (uint32_t)most;
		st->lnc_from = "the pcore_idx values of the hardware events";
	} else {
		st->lnc_size = 1;
		st->lnc_from = "no NEFF header or pcore_idx saying otherwise";
	}
}

/* LNC2: a logical core's execution runs on each of its physical cores, and
 * the hardware lane shows it once per physical core (neuron_hw/NC0:4 and
 * :5). Intervals of one logical core that overlap in time, on different
 * physical cores (when named) and with the same exec_id (when both carry
 * one), up to the LNC size, are one execution: kept as one interval from
 * the first start to the last end. A logical core runs one execution at a
 * time, so overlap is what ties the copies. */
static void fold_physical(struct work *w, struct ns_attach_stats *st)
{
	size_t out = 0;
	st->hw_intervals = w->n_iv;
	ns_sort(w->iv, w->n_iv, sizeof(*w->iv), cmp_core_start);
	lnc_size(w, st);
	for (size_t i = 0; i < w->n_iv;) {
		struct interval g = w->iv[i];
		int64_t end = g.host + g.dur;
		uint64_t pcores = g.pcore >= 0 && g.pcore < 64 ? 1ULL << g.pcore : 0;
		uint32_t members = 1;
		size_t j = i + 1;
		for (; j < w->n_iv && members < st->lnc_size; j++) {
			const struct interval *c = &w->iv[j];
			bool pc_known = c->pcore >= 0 && c->pcore < 64;
			if (c->nc != g.nc || c->host >= end || (pc_known && (pcores & (1ULL << c->pcore))) ||
			    (c->exec_id != NS_NONE && g.exec_id != NS_NONE && c->exec_id != g.exec_id))
				break;
			if (pc_known)
				pcores |= 1ULL << c->pcore;
			if (c->host + c->dur > end)
				end = c->host + c->dur;
			if (g.correlation == NS_NONE && g.external_id == NS_NONE) {
				g.correlation = c->correlation;
				g.external_id = c->external_id;
			}
			if (g.exec_id == NS_NONE)
				g.exec_id = c->exec_id;
			if (!g.neff)
				g.neff = c->neff;
			if (!g.label)
				g.label = c->label;
			members++;
			st->folded++;
		}
		g.dur = end - g.host;
		w->iv[out++] = g;
		i = j;
	}
	w->n_iv = out;
}

static int cmp_match(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int build_match_index(struct work *w)
{
	const struct ns_trace *t = w->t;
	int64_t base = t->has_base_time ? t->base_time_ns : 0;
	w->match = malloc((t->n_events + 1) * sizeof(*w->match));
	if (!w->match)
		return -1;
	for (size_t i = 0; i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		bool ok = false;
		for (size_t c = 0; c < NS_ARRAY_SIZE(launcher_cats); c++)
			ok |= ev->cat == launcher_cats[c];
		if (ok && ev->kind == NS_KIND_SLICE)
			w->match[w->n_match++] = (struct match){ ev->name, ev->ts_ns + base, i };
	}
	ns_sort(w->match, w->n_match, sizeof(*w->match), cmp_match);
	return 0;
}

/* The first entry of the match index at or after (name, ts). */
static size_t match_lower(const struct work *w, ns_str id, int64_t ts)
{
	size_t lo = 0, hi = w->n_match;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (w->match[mid].name < id || (w->match[mid].name == id && w->match[mid].ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The trace event of the launcher's name nearest its host time (within
 * the tolerance), or NULL. */
static const struct ns_event *match_by_time(const struct work *w, const struct ns_sys_event *l)
{
	const char *name = ns_strtab_get(&w->sp->strings, l->name);
	ns_str id = ns_strtab_find(&w->t->strings, name, strlen(name));
	const struct ns_event *best = NULL;
	int64_t best_d = MATCH_TOLERANCE_NS + 1, host;
	if (id == UINT32_MAX || !host_start(w, l, &host))
		return NULL;
	host += w->skew;
	for (size_t k = match_lower(w, id, host - MATCH_TOLERANCE_NS);
	     k < w->n_match && w->match[k].name == id && w->match[k].ts <= host + MATCH_TOLERANCE_NS; k++) {
		int64_t d = w->match[k].ts > host ? w->match[k].ts - host : host - w->match[k].ts;
		if (d < best_d) {
			best_d = d;
			best = &w->t->events[w->match[k].ev];
		}
	}
	return best;
}

static int64_t first_in(const struct ns_i64map *m, const struct ns_sysprof *sp, const struct ns_sys_event *ev)
{
	for (uint32_t f = 0; f < ev->n_flows; f++) {
		int64_t i = ns_i64map_get(m, sp->flows[ev->flows_off + f], NONE);
		if (i != NONE)
			return i;
	}
	return NONE;
}

/* Fills iv's correlation / External id from its launcher. */
static void link(struct work *w, struct interval *iv, struct ns_attach_stats *st)
{
	const struct ns_sysprof *sp = w->sp;
	const struct ns_sys_event *hw = &sp->ev[iv->ev];
	int64_t fw = first_in(&w->fw_by_flow, sp, hw), rt = NONE;
	if (fw == NONE)
		fw = first_in(&w->fw_by_flow, sp, &sp->ev[iv->stop]);
	if (fw == NONE) {
		rt = first_in(&w->rt_by_flow, sp, hw);
		if (rt == NONE && iv->exec_id != NS_NONE) {
			rt = ns_i64map_get(&w->rt_by_exec, iv->exec_id, NONE);
			if (rt != NONE && sp->ev[rt].nc != NS_NONE && sp->ev[rt].nc != iv->nc)
				rt = NONE;
		}
		if (rt != NONE)
			fw = first_in(&w->fw_by_flow, sp, &sp->ev[rt]);
	}
	/* ids: the interval's own, else the framework event's, else the runtime event's */
	const int64_t cand[2] = { fw, rt };
	for (int k = 0; k < 2 && iv->correlation == NS_NONE && iv->external_id == NS_NONE; k++)
		if (cand[k] != NONE) {
			iv->correlation = sp->ev[cand[k]].correlation;
			iv->external_id = sp->ev[cand[k]].external_id;
		}
	if (!iv->neff)
		for (int k = 0; k < 2 && !iv->neff; k++)
			if (cand[k] != NONE)
				iv->neff = sp->ev[cand[k]].neff;
	if (iv->correlation != NS_NONE || iv->external_id != NS_NONE) {
		st->by_ids++;
		return;
	}
	for (int k = 0; k < 2; k++) {
		const struct ns_event *m = cand[k] != NONE ? match_by_time(w, &sp->ev[cand[k]]) : NULL;
		if (m) {
			iv->correlation = m->cat == NS_CAT_CPU_OP ? NS_NONE : m->correlation;
			iv->external_id = m->external_id;
			st->by_time++;
			return;
		}
	}
	st->unlinked++;
}

/* The launcher link() would match by time: the runtime event of the
 * interval's exec_id (the profile has no flow ids). NONE if none. */
static int64_t exec_launcher(const struct work *w, const struct interval *iv)
{
	int64_t rt = iv->exec_id != NS_NONE ? ns_i64map_get(&w->rt_by_exec, iv->exec_id, NONE) : NONE;
	if (rt != NONE && w->sp->ev[rt].nc != NS_NONE && w->sp->ev[rt].nc != iv->nc)
		rt = NONE;
	return rt;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Without flow ids, launchers reach trace.json by name and host time only,
 * and a few microseconds of skew between the two host clocks loses every
 * match. For each launcher, the offsets to the same-name trace events within
 * SKEW_WINDOW_NS are candidates; the offset most launchers agree with (within
 * the match tolerance; the smallest on a tie, and 0 when it does as well) is
 * applied. */
static int measure_skew(struct work *w, struct ns_attach_stats *st)
{
	int64_t *d = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	if (w->sp->n_flows)
		return 0;
	for (size_t k = 0; k < w->n_iv; k++) {
		int64_t rt = exec_launcher(w, &w->iv[k]), host;
		const struct ns_sys_event *l = rt != NONE ? &w->sp->ev[rt] : NULL;
		const char *name = l ? ns_strtab_get(&w->sp->strings, l->name) : NULL;
		ns_str id = name ? ns_strtab_find(&w->t->strings, name, strlen(name)) : UINT32_MAX;
		if (id == UINT32_MAX || !host_start(w, l, &host))
			continue;
		bool any = false;
		for (size_t m = match_lower(w, id, host - SKEW_WINDOW_NS);
		     m < w->n_match && w->match[m].name == id && w->match[m].ts <= host + SKEW_WINDOW_NS; m++) {
			if (n == cap) {
				size_t c2 = cap ? cap * 2 : 256;
				int64_t *g = realloc(d, c2 * sizeof(*g));
				if (!g) {
					rc = -1;
					goto out;
				}
				d = g;
				cap = c2;
			}
			d[n++] = w->match[m].ts - host;
			any = true;
		}
		st->skew_candidates += any;
	}
	ns_sort(d, n, sizeof(*d), cmp_i64);
	size_t best = 0, zero = 0;
	int64_t best_off = 0;
	for (size_t i = 0, j = 0; i < n; i++) { /* window [d[i], d[i] + 2 * tolerance], centred */
		while (j < n && d[j] <= d[i] + 2 * MATCH_TOLERANCE_NS)
			j++;
		if (j - i > best) {
			best = j - i;
			best_off = d[i] + (d[j - 1] - d[i]) / 2;
		}
	}
	for (size_t i = 0; i < n; i++)
		zero += d[i] >= -MATCH_TOLERANCE_NS && d[i] <= MATCH_TOLERANCE_NS;
	if (best > zero) {
		w->skew = best_off;
		st->skew_ns = best_off;
		st->skew_votes = best;
	}
out:
	free(d);
	return rc;
}

static int cmp_intervals(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return x->nc < y->nc ? -1 : x->nc > y->nc;
}

/* Appends the intervals to t as kernel events on thread (core, "neuron_hw"). */
static int emit(struct work *w)
{
	struct ns_trace *t = w->t;
	const struct ns_sysprof *sp = w->sp;
	int64_t base = t->has_base_time ? t->base_time_ns : 0;
	ns_str tid = ns_strtab_intern(&t->strings, "neuron_hw", 9);
	if (tid == UINT32_MAX)
		return -1;
	ns_sort(w->iv, w->n_iv, sizeof(*w->iv), cmp_intervals);
	for (size_t k = 0; k < w->n_iv; k++) {
		const struct interval *iv = &w->iv[k];
		char pid[32], name[128];
		const char *text;
		snprintf(pid, sizeof(pid), "%lld", (long long)iv->nc);
		if (iv->label)
			text = ns_strtab_get(&sp->strings, iv->label);
		else if (iv->neff)
			text = (snprintf(name, sizeof(name), "neff_%s", ns_strtab_get(&sp->strings, iv->neff)), name);
		else
			text = HW_EXEC;
		ns_str pid_text = ns_strtab_intern(&t->strings, pid, strlen(pid));
		struct ns_event ev = {
			.ts_ns = iv->host - base,
			.dur_ns = iv->dur,
			.external_id = iv->external_id,
			.correlation = iv->correlation,
			.idx = (uint32_t)(t->n_trace_events + k),
			.name = ns_strtab_intern(&t->strings, text, strlen(text)),
			.cat = NS_CAT_KERNEL,
			.kind = NS_KIND_SLICE,
		};
		if (iv->neff) {
			const char *h = ns_strtab_get(&sp->strings, iv->neff);
			ev.neff = ns_strtab_intern(&t->strings, h, strlen(h));
		}
		int64_t th = pid_text == UINT32_MAX ? -1 : ns_trace_thread(t, pid_text, iv->nc, tid, NS_NONE);
		if (th < 0 || ev.name == UINT32_MAX || ev.neff == UINT32_MAX)
			return -1;
		ev.thread = (uint32_t)th;
		if (ns_trace_push(t, &ev))
			return -1;
	}
	if (w->n_iv) {
		t->has_cat[NS_CAT_KERNEL] = true;
		/* the device events are Neuron's: make the backend PrivateUse1 */
		if (!t->has_cat[NS_CAT_PRIVATEUSE1_RUNTIME] && !t->has_cat[NS_CAT_PRIVATEUSE1_DRIVER])
			t->has_cat[NS_CAT_PRIVATEUSE1_DRIVER] = true;
	}
	return 0;
}

int ns_sysprof_attach(const struct ns_sysprof *sp, struct ns_trace *t, struct ns_attach_stats *st,
		      struct ns_error *err)
{
	struct work w = { .sp = sp, .t = t };
	int rc = -1;
	memset(st, 0, sizeof(*st));
	ns_i64map_init(&w.fw_by_flow);
	ns_i64map_init(&w.rt_by_flow);
	ns_i64map_init(&w.rt_by_exec);
	ns_i64map_init(&w.start_by_key);
	if (sync_points(sp, &w.sync, &w.n_sync) || build_maps(&w) || build_intervals(&w, st) || build_match_index(&w))
		goto out;
	fold_physical(&w, st);
	if (measure_skew(&w, st))
		goto out;
	for (size_t k = 0; k < w.n_iv; k++)
		link(&w, &w.iv[k], st);
	st->intervals = w.n_iv;
	rc = emit(&w);
out:
	free(w.sync);
	free(w.iv);
	free(w.match);
	ns_i64map_release(&w.fw_by_flow);
	ns_i64map_release(&w.rt_by_flow);
	ns_i64map_release(&w.rt_by_exec);
	ns_i64map_release(&w.start_by_key);
	if (rc)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory while correlating", sp->path);
	return 0;
}
