/* The legacy device-profile JSON (neuron-formats.md §3.4a): an object of
 * arrays. Busy intervals per engine come from active_time, else from the
 * instruction (per engine label) and dma arrays (docs/neuron.md). */
#include "ntff/ntff-internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

/* Top-level keys by role; anything else is kept as an unknown key. */
static const struct {
	const char *key;
	int role; /* NS_DP_* */
	bool stream;
} sections[] = {
	{ "instruction", NS_DP_INSTRUCTION, true },  { "dma", NS_DP_DMA, true },
	{ "active_time", NS_DP_ACTIVE_TIME, true },  { "layer_summary", NS_DP_LAYER, true },
	{ "summary", NS_DP_SUMMARY, true },          { "metadata", NS_DP_METADATA, true },
	{ "profile_info", NS_DP_PROFILE_INFO, true }, { "annotation", NS_DP_OTHER, false },
	{ "summary_groups", NS_DP_OTHER, false },    { "neff_node", NS_DP_OTHER, false },
	{ "warnings", NS_DP_OTHER, true }, /* kept: see on_elem */
};

/* An interval in file units, before the unit is known. */
struct raw {
	long double start, end;
	uint8_t engine; /* enum ns_engine, NS_ENG__COUNT unknown */
	uint8_t role;   /* NS_DP_INSTRUCTION, NS_DP_DMA or NS_DP_ACTIVE_TIME */
};

struct reader {
	struct ns_devprof *dp;
	struct raw *raw;
	size_t n_raw, cap_raw;
	int role;            /* of the array being streamed */
	bool in_warnings;    /* the array is "warnings" */
	/* fields of the element being read */
	struct jv f_start, f_dur, f_end, f_engine;
	bool has_start, has_dur, has_end, has_engine;
};

static int element_field(void *ctx, const char *key, size_t len, const struct jv *v)
{
	struct reader *r = ctx;
	if (jkey_is(key, len, "timestamp") || jkey_is(key, len, "start_ts") || jkey_is(key, len, "start")) {
		r->f_start = *v;
		r->has_start = true;
	} else if (jkey_is(key, len, "duration") || jkey_is(key, len, "duration_ns")) {
		r->f_dur = *v;
		r->has_dur = true;
	} else if (jkey_is(key, len, "end_ts") || jkey_is(key, len, "end")) {
		r->f_end = *v;
		r->has_end = true;
	} else if (jkey_is(key, len, "engine") || (!r->has_engine && (jkey_is(key, len, "label") ||
								       jkey_is(key, len, "timeline_track")))) {
		r->f_engine = *v;
		r->has_engine = true;
	}
	return 0;
}

static int push_raw(struct reader *r, const struct raw *x)
{
	if (r->n_raw == r->cap_raw) {
		size_t cap = r->cap_raw ? r->cap_raw * 2 : 1024;
		struct raw *v = realloc(r->raw, cap * sizeof(*v));
		if (!v)
			return -1;
		r->raw = v;
		r->cap_raw = cap;
	}
	r->raw[r->n_raw++] = *x;
	return 0;
}

static const char *section_name(int role)
{
	for (size_t i = 0; i < NS_ARRAY_SIZE(sections); i++)
		if (sections[i].role == role)
			return sections[i].key;
	return "?";
}

/* One element of instruction / dma / active_time. */
static int read_interval(struct reader *r, const struct jv *v, uint64_t offset, struct ns_error *err)
{
	struct ns_devprof *dp = r->dp;
	const char *sec = section_name(r->role);
	struct raw x = { 0, 0, NS_ENG__COUNT, (uint8_t)r->role };
	long double dur;
	size_t bad;
	r->has_start = r->has_dur = r->has_end = r->has_engine = false;
	if (jobj_walk(v, element_field, r, &bad))
		return note_add(&dp->notes, dp->path, offset + bad, "%s: element is not a valid object; skipped", sec) ? -1 : 0;
	if (!r->has_start || !jv_num(&r->f_start, &x.start))
		return note_add(&dp->notes, dp->path, offset, "%s: %s; skipped", sec,
				r->has_start ? "timestamp is not a number" : "no timestamp") ? -1 : 0;
	if (r->has_end && jv_num(&r->f_end, &x.end))
		;
	else if (r->has_dur && jv_num(&r->f_dur, &dur))
		x.end = x.start + dur;
	else
		return note_add(&dp->notes, dp->path, offset, "%s: no usable duration or end; skipped", sec) ? -1 : 0;
	if (r->role == NS_DP_DMA) {
		x.engine = NS_ENG_DMA;
	} else if (r->has_engine && r->f_engine.type == 's') {
		x.engine = (uint8_t)ns_engine_from_label(r->f_engine.p, r->f_engine.n);
	} else if (r->has_engine && note_add(&dp->notes, dp->path, offset, "%s: engine is not a string", sec)) {
		return -1;
	}
	if (x.end < x.start && note_add(&dp->notes, dp->path, offset, "%s: ends before it starts; skipped", sec))
		return -1;
	if (x.end < x.start)
		return 0;
	if (push_raw(r, &x))
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", dp->path);
	return 0;
}

struct info_ctx {
	struct ns_devprof *dp;
};

static int info_field(void *ctx, const char *key, size_t len, const struct jv *v)
{
	struct ns_devprof *dp = ((struct info_ctx *)ctx)->dp;
	char text[256];
	if (v->type != 's' && v->type != 'n')
		return 0;
	size_t n = jv_text(v, text, sizeof(text));
	if (jkey_is(key, len, "ntff_filename") || jkey_is(key, len, "ntff"))
		memcpy(dp->ntff_filename, text, n + 1);
	else if (jkey_is(key, len, "neff_hash") || jkey_is(key, len, "neff") || jkey_is(key, len, "neff_name") ||
		 jkey_is(key, len, "neff_id") || jkey_is(key, len, "neff_filename") ||
		 (jkey_is(key, len, "model_name") && !dp->neff_hash[0] && memmem(text, n, ".neff", 5)))
		ns_neff_hash_normalize(text, n, dp->neff_hash, sizeof(dp->neff_hash));
	return 0;
}

static int on_key(void *ctx, const char *key)
{
	struct reader *r = ctx;
	r->in_warnings = strcmp(key, "warnings") == 0;
	for (size_t i = 0; i < NS_ARRAY_SIZE(sections); i++)
		if (strcmp(sections[i].key, key) == 0) {
			r->role = sections[i].role;
			return sections[i].stream ? JS_ELEMENTS : JS_SKIP;
		}
	r->role = NS_DP_OTHER;
	if (keylist_add(&r->dp->unknown_keys, &r->dp->n_unknown_keys, key))
		return JS_SKIP; /* out of memory shows later as a missing key, not a crash */
	return JS_SKIP;
}

static int on_elem(void *ctx, const char *key, const struct jv *v, uint64_t offset, struct ns_error *err)
{
	struct reader *r = ctx;
	struct ns_devprof *dp = r->dp;
	(void)key;
	dp->count[r->role]++;
	if (r->in_warnings)
		return explorer_warning_add(&dp->explorer_warnings, dp->path, v, offset)
			       ? ns_error_set(err, NS_ERR_NOMEM, "out of memory")
			       : 0;
	if (v->type != 'o')
		return note_add(&dp->notes, dp->path, offset, "%s: element is not an object; skipped",
				section_name(r->role)) ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
	switch (r->role) {
	case NS_DP_INSTRUCTION:
	case NS_DP_DMA:
	case NS_DP_ACTIVE_TIME: {
		int rc = read_interval(r, v, offset, err);
		return rc < 0 ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : rc;
	}
	case NS_DP_SUMMARY:
	case NS_DP_METADATA: {
		struct ns_kv **kv = r->role == NS_DP_SUMMARY ? &dp->summary : &dp->metadata;
		size_t *n = r->role == NS_DP_SUMMARY ? &dp->n_summary : &dp->n_metadata;
		if (*kv)
			return 0; /* the first element describes the profile */
		int rc = kv_from_object(v, kv, n);
		if (rc == -2 || (rc && note_add(&dp->notes, dp->path, offset, "%s: not a valid object",
						section_name(r->role))))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		return 0;
	}
	case NS_DP_PROFILE_INFO: {
		struct info_ctx ic = { dp };
		size_t bad;
		jobj_walk(v, info_field, &ic, &bad);
		return 0;
	}
	default:
		return 0;
	}
}

/* A section that is not an array: one object is taken as its only element. */
static int on_value(void *ctx, const char *key, const struct jv *v, uint64_t offset, struct ns_error *err)
{
	struct reader *r = ctx;
	if (v->type == 'o')
		return on_elem(ctx, key, v, offset, err);
	if (note_add(&r->dp->notes, r->dp->path, offset, "%s: expected an array; ignored", key))
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	return 0;
}

/* The unit that makes the busy span match summary total_time (seconds). */
static void detect_unit(struct reader *r, enum ns_time_unit given)
{
	struct ns_devprof *dp = r->dp;
	const struct ns_kv *total = kv_find(dp->summary, dp->n_summary, "total_time");
	long double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < r->n_raw; i++) {
		lo = fminl(lo, r->raw[i].start);
		hi = fmaxl(hi, r->raw[i].end);
	}
	if (given != NS_TU_AUTO) {
		dp->unit = given;
		snprintf(dp->unit_why, sizeof(dp->unit_why), "given (--device-time-unit)");
		return;
	}
	dp->unit = NS_TU_NS;
	if (!total || !total->is_num || total->num <= 0 || !(hi > lo)) {
		snprintf(dp->unit_why, sizeof(dp->unit_why), "assumed: no summary total_time to compare with");
		return;
	}
	long double best = INFINITY;
	for (int u = NS_TU_NS; u <= NS_TU_S; u++) {
		long double expect = (long double)total->num * 1e9L / unit_factor((enum ns_time_unit)u);
		long double d = fabsl(log10l((hi - lo) / expect));
		if (d < best) {
			best = d;
			dp->unit = (enum ns_time_unit)u;
		}
	}
	snprintf(dp->unit_why, sizeof(dp->unit_why), "detected: busy span %.6Lg vs summary total_time %.6g s",
		 hi - lo, total->num);
}

/* Converts the raw intervals to ns busy lists per engine. */
static int build_busy(struct reader *r)
{
	struct ns_devprof *dp = r->dp;
	bool from_active[NS_ENG__COUNT] = { false };
	const struct ns_kv *first_hw = kv_find(dp->metadata, dp->n_metadata, "first_hw_timestamp");
	int64_t max_start = INT64_MIN;
	for (size_t i = 0; i < r->n_raw; i++) {
		if (r->raw[i].role == NS_DP_ACTIVE_TIME && r->raw[i].engine < NS_ENG__COUNT)
			from_active[r->raw[i].engine] = true;
		int64_t s = to_ns(r->raw[i].start, dp->unit); /* (NS_NONE is INT64_MIN: never the max) */
		max_start = s > max_start ? s : max_start;
	}
	/* timestamps below first_hw_timestamp are relative to it */
	if (first_hw && first_hw->is_num && r->n_raw && max_start < (int64_t)first_hw->num) {
		int64_t v;
		struct jv tok = { first_hw->text, strlen(first_hw->text), 'n', false };
		dp->origin_ns = jv_int(&tok, &v) ? v : (int64_t)first_hw->num;
	}
	dp->first_ns = dp->last_ns = NS_NONE;
	for (int e = 0; e < NS_ENG__COUNT; e++) {
		size_t n = 0;
		dp->busy[e] = malloc((r->n_raw + 1) * sizeof(*dp->busy[e]));
		if (!dp->busy[e])
			return -1;
		for (size_t i = 0; i < r->n_raw; i++) {
			const struct raw *x = &r->raw[i];
			if (x->engine != e || (x->role == NS_DP_ACTIVE_TIME) != from_active[e])
				continue;
			int64_t start = ns_add_or_none(to_ns(x->start, dp->unit), dp->origin_ns);
			int64_t end = ns_add_or_none(to_ns(x->end, dp->unit), dp->origin_ns);
			if (start == NS_NONE || end == NS_NONE)
				continue; /* beyond the ns range: no time to count */
			dp->busy[e][n].start = start;
			dp->busy[e][n].end = end;
			dp->busy_src[e] = from_active[e] ? NS_ESRC_ACTIVE_TIME : x->role == NS_DP_DMA ? NS_ESRC_DMA
												 : NS_ESRC_INSTRUCTION;
			n++;
		}
		dp->n_busy[e] = spans_merge(dp->busy[e], n);
		if (dp->n_busy[e]) {
			if (dp->first_ns == NS_NONE || dp->busy[e][0].start < dp->first_ns)
				dp->first_ns = dp->busy[e][0].start;
			if (dp->last_ns == NS_NONE || dp->busy[e][dp->n_busy[e] - 1].end > dp->last_ns)
				dp->last_ns = dp->busy[e][dp->n_busy[e] - 1].end;
		}
	}
	for (size_t i = 0; i < r->n_raw; i++)
		dp->unknown_engine += r->raw[i].engine >= NS_ENG__COUNT;
	return 0;
}

int ns_devprof_read(const char *path, enum ns_time_unit unit, struct ns_devprof **out, struct ns_error *err)
{
	static const struct jstream_cb cb = { on_key, on_elem, on_value };
	struct ns_devprof *dp = calloc(1, sizeof(*dp));
	struct reader r = { .dp = dp };
	int rc;
	*out = NULL;
	if (!dp || !(dp->path = strdup(path))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = jstream_file(path, &cb, &r, &dp->truncated_at, err)))
		goto out;
	detect_unit(&r, unit);
	/* no NEFF in profile_info: the NEFF path of metadata's model_name */
	const struct ns_kv *model = kv_find(dp->metadata, dp->n_metadata, "model_name");
	if (!dp->neff_hash[0] && model && strstr(model->text, ".neff"))
		ns_neff_hash_normalize(model->text, strlen(model->text), dp->neff_hash, sizeof(dp->neff_hash));
	if (build_busy(&r)) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
		goto out;
	}
	*out = dp;
	dp = NULL;
out:
	free(r.raw);
	ns_devprof_free(dp);
	return rc;
}

void ns_devprof_free(struct ns_devprof *dp)
{
	if (!dp)
		return;
	free(dp->path);
	kv_free(dp->summary, dp->n_summary);
	kv_free(dp->metadata, dp->n_metadata);
	notes_release(&dp->explorer_warnings);
	for (int e = 0; e < NS_ENG__COUNT; e++)
		free(dp->busy[e]);
	keylist_free(dp->unknown_keys, dp->n_unknown_keys);
	notes_release(&dp->notes);
	free(dp);
}
