/* --category and --steps: events dropped before aggregation (select.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate/aggregate.h"
#include "aggregate/select.h"
#include "common/i64map.h"
#include "common/sort.h"

bool ns_select_active(const struct ns_select *sel)
{
	return sel->cats != 0 || sel->steps || sel->keep_name;
}

/* ---- parsing ---- */

static bool parse_step_number(const char *s, const char *end, int64_t *out)
{
	if (s == end || end - s > 18)
		return false;
	int64_t v = 0;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return true;
}

int ns_select_parse_steps(const char *arg, struct ns_select *sel, struct ns_error *err)
{
	const char *dots = strstr(arg, "..");
	if (!dots || !parse_step_number(arg, dots, &sel->first_step) ||
	    !parse_step_number(dots + 2, dots + strlen(dots), &sel->last_step))
		return ns_error_set(err, NS_ERR_USAGE, "--steps: not a step range A..B (whole numbers), '%s'", arg);
	if (sel->first_step > sel->last_step)
		return ns_error_set(err, NS_ERR_USAGE, "--steps: the first step is after the last, '%s'", arg);
	sel->steps = true;
	return 0;
}

int ns_select_parse_categories(const char *arg, struct ns_select *sel, struct ns_error *err)
{
	const char *p = arg;
	for (;;) {
		size_t len = strcspn(p, ",");
		enum ns_cat cat = ns_cat_from_string(p, len);
		if (cat == NS_CAT_OTHER || cat == NS_CAT_AC2G || cat == NS_CAT_FWDBWD)
			return ns_error_set(err, NS_ERR_USAGE,
					    "--category: unknown event category '%.*s' (Kineto's: cpu_op, user_annotation, "
					    "kernel, gpu_user_annotation, cuda_runtime, ...; see docs/report.md)",
					    (int)len, p);
		sel->cats |= UINT64_C(1) << cat;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

void ns_select_hide_annotations(struct ns_select *sel)
{
	_Static_assert(NS_CAT__COUNT <= 64, "a category is a bit of ns_select.cats");
	uint64_t every = NS_CAT__COUNT == 64 ? UINT64_MAX : (UINT64_C(1) << NS_CAT__COUNT) - 1;
	sel->cats = (sel->cats ? sel->cats : every) &
		    ~(UINT64_C(1) << NS_CAT_USER_ANNOTATION | UINT64_C(1) << NS_CAT_GPU_USER_ANNOTATION);
}

/* ---- --steps ---- */

struct interval {
	int64_t start, end;
};

static int cmp_interval(const void *x, const void *y)
{
	const struct interval *a = x, *b = y;
	return (a->start > b->start) - (a->start < b->start);
}

/* The step number of a ProfilerStep#N annotation, or -1. */
static int64_t step_number(const struct ns_trace *t, const struct ns_event *ev)
{
	const char *name = ns_strtab_get(&t->strings, ev->name);
	int64_t n;
	if (ev->kind != NS_KIND_SLICE || ev->cat != NS_CAT_USER_ANNOTATION || strncmp(name, "ProfilerStep#", 13) != 0 ||
	    !parse_step_number(name + 13, name + strlen(name), &n))
		return -1;
	return n;
}

/* The union of the selected steps' intervals, sorted and disjoint. */
static int step_intervals(const struct ns_trace *t, const struct ns_select *sel, struct interval **out, size_t *n_out,
			  struct ns_error *err)
{
	struct interval *v = malloc((t->n_events + 1) * sizeof(*v));
	size_t n = 0;
	int64_t lo = INT64_MAX, hi = -1;
	if (!v)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", t->path);
	for (size_t i = 0; i < t->n_events; i++) {
		int64_t step = step_number(t, &t->events[i]);
		if (step < 0)
			continue;
		lo = step < lo ? step : lo;
		hi = step > hi ? step : hi;
		if (step >= sel->first_step && step <= sel->last_step)
			v[n++] = (struct interval){ t->events[i].ts_ns, t->events[i].ts_ns + t->events[i].dur_ns };
	}
	if (n == 0) {
		free(v);
		if (hi < 0)
			return ns_error_set(err, NS_ERR_USAGE, "--steps: %s has no ProfilerStep#N annotation", t->path);
		return ns_error_set(err, NS_ERR_USAGE, "--steps %" PRId64 "..%" PRId64 ": no such step in %s (its steps: %" PRId64
				    "..%" PRId64 ")", sel->first_step, sel->last_step, t->path, lo, hi);
	}
	ns_sort(v, n, sizeof(*v), cmp_interval);
	size_t m = 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i].start <= v[m].end)
			v[m].end = v[i].end > v[m].end ? v[i].end : v[m].end;
		else
			v[++m] = v[i];
	}
	*out = v;
	*n_out = m + 1;
	return 0;
}

static bool in_steps(const struct interval *v, size_t n, int64_t ts)
{
	size_t lo = 0, hi = n; /* the first interval starting after ts */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].start <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && ts < v[lo - 1].end;
}

/* The ids a host event carries (memory records carry none). */
static bool has_ids(const struct ns_event *ev)
{
	return !ns_event_is_memory(ev) && ev->kind != NS_KIND_COUNTER;
}

/* keep[i] for --steps: host events by their start, then device work by
 * its launch (select.h). */
static int keep_steps(const struct ns_trace *t, const struct ns_select *sel, bool *keep, struct ns_error *err)
{
	struct interval *steps = NULL;
	size_t n_steps = 0;
	struct ns_i64map by_corr, by_ext; /* id -> 1 when a host event with it is kept, else 0 */
	int rc = step_intervals(t, sel, &steps, &n_steps, err);
	if (rc)
		return rc;
	ns_i64map_init(&by_corr);
	ns_i64map_init(&by_ext);
	for (size_t i = 0; rc == 0 && i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		if (ns_cat_on_device(ev->cat))
			continue;
		keep[i] = in_steps(steps, n_steps, ev->ts_ns);
		if (!has_ids(ev))
			continue;
		if (ev->correlation != NS_NONE)
			rc |= keep[i] ? ns_i64map_set(&by_corr, ev->correlation, 1)
				      : ns_i64map_put_first(&by_corr, ev->correlation, 0);
		if (ev->external_id != NS_NONE)
			rc |= keep[i] ? ns_i64map_set(&by_ext, ev->external_id, 1)
				      : ns_i64map_put_first(&by_ext, ev->external_id, 0);
	}
	for (size_t i = 0; rc == 0 && i < t->n_events; i++) {
		const struct ns_event *ev = &t->events[i];
		if (!ns_cat_on_device(ev->cat))
			continue;
		int64_t launched = -1;
		if (has_ids(ev) && ev->correlation != NS_NONE)
			launched = ns_i64map_get(&by_corr, ev->correlation, -1);
		if (launched < 0 && has_ids(ev) && ev->external_id != NS_NONE)
			launched = ns_i64map_get(&by_ext, ev->external_id, -1);
		keep[i] = launched < 0 ? in_steps(steps, n_steps, ev->ts_ns) : launched == 1;
	}
	if (rc)
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", t->path);
	ns_i64map_release(&by_corr);
	ns_i64map_release(&by_ext);
	free(steps);
	return rc;
}

/* ---- dropping ---- */

/* The counter ranges of kept events, renumbered, and the sums again. */
static void compact_counters(struct ns_trace *t, const uint32_t *new_index, const bool *keep)
{
	size_t n = 0;
	for (size_t c = 0; c < t->n_counters; c++)
		t->counters[c] = (struct ns_counter){ .name = t->counters[c].name, .exact = true };
	for (size_t i = 0; i < t->n_counter_values; i++) {
		struct ns_counter_value cv = t->counter_values[i];
		if (cv.event >= t->n_events || !keep[cv.event])
			continue;
		cv.event = new_index[cv.event];
		ns_counter_add(&t->counters[cv.counter], cv.is_int, cv.i, cv.d);
		t->counter_values[n++] = cv;
	}
	t->n_counter_values = n;
}

/* The side tables keyed by event index (FLOPs, device args) of kept
 * events, renumbered; both are in ascending event order. */
static void compact_side_tables(struct ns_trace *t, const uint32_t *new_index, const bool *keep)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n_flops; i++)
		if (t->flops[i].event < t->n_events && keep[t->flops[i].event]) {
			t->flops[n] = t->flops[i];
			t->flops[n++].event = new_index[t->flops[i].event];
		}
	t->n_flops = n;
	n = 0;
	for (size_t i = 0; i < t->n_dev_args; i++)
		if (t->dev_args[i].event < t->n_events && keep[t->dev_args[i].event]) {
			t->dev_args[n] = t->dev_args[i];
			t->dev_args[n++].event = new_index[t->dev_args[i].event];
		}
	t->n_dev_args = n;
}

/* Keeps the events with keep[i]; has_cat forgets categories left with none. */
static int compact(struct ns_trace *t, const bool *keep, struct ns_error *err)
{
	uint32_t *new_index = malloc((t->n_events + 1) * sizeof(*new_index));
	bool left[NS_CAT__COUNT] = { false }, dropped[NS_CAT__COUNT] = { false };
	size_t n = 0;
	if (!new_index)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", t->path);
	for (size_t i = 0; i < t->n_events; i++) {
		uint8_t cat = t->events[i].cat < NS_CAT__COUNT ? t->events[i].cat : NS_CAT_OTHER;
		new_index[i] = (uint32_t)n;
		(keep[i] ? left : dropped)[cat] = true;
		if (keep[i])
			t->events[n++] = t->events[i];
	}
	compact_counters(t, new_index, keep);
	compact_side_tables(t, new_index, keep);
	t->n_events = n;
	for (size_t c = 0; c < NS_CAT__COUNT; c++)
		if (dropped[c] && !left[c])
			t->has_cat[c] = false;
	free(new_index);
	return 0;
}

int ns_trace_select(struct ns_trace *t, const struct ns_select *sel, struct ns_error *err)
{
	if (!ns_select_active(sel))
		return 0;
	bool *keep = malloc(t->n_events + 1);
	int rc = 0;
	if (!keep)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", t->path);
	memset(keep, 1, t->n_events + 1);
	if (sel->steps)
		rc = keep_steps(t, sel, keep, err);
	for (size_t i = 0; rc == 0 && sel->cats && i < t->n_events; i++)
		keep[i] = keep[i] && t->events[i].cat < 64 && (sel->cats >> t->events[i].cat & 1);
	for (size_t i = 0; rc == 0 && sel->keep_name && i < t->n_events; i++)
		keep[i] = keep[i] && sel->keep_name(sel->name_ctx, ns_strtab_get(&t->strings, t->events[i].name));
	for (size_t i = 0; t->has_cat[NS_CAT_TRACE] && i < t->n_events; i++)
		keep[i] |= t->events[i].cat == NS_CAT_TRACE; /* the profiler's own span: the time origin */
	if (rc == 0)
		rc = compact(t, keep, err);
	free(keep);
	return rc;
}
