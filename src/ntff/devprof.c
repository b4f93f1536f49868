/* The legacy device-profile JSON (neuron-formats.md §3.4a): an object of
 * arrays. Busy intervals per engine come from active_time, else from the
 * instruction (per engine label) and dma arrays (docs/neuron.md). */
#include "ntff/ntff-internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "common/vec.h"
#include "neff/neff.h" /* ns_neff_hash_normalize */

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
	{ "throttle_summary", NS_DP_OTHER, true }, /* Parquet ThrottleSummary: see on_elem */
};

/* --device-detail keys: the instruction field each groups by. */
static const struct {
	const char *name, *field;
} details[NS_DETAIL__COUNT] = {
	[NS_DETAIL_HLO] = { "hlo", "hlo_name" },
	[NS_DETAIL_LAYER] = { "layer", "layer" },
	[NS_DETAIL_OPCODE] = { "opcode", "opcode" },
};

const char *ns_detail_name(enum ns_detail k)
{
	return k < NS_DETAIL__COUNT ? details[k].name : "";
}

const char *ns_detail_field(enum ns_detail k)
{
	return k < NS_DETAIL__COUNT ? details[k].field : "";
}

enum ns_detail ns_detail_parse(const char *s)
{
	for (int k = 0; s && k < NS_DETAIL__COUNT; k++)
		if (strcmp(s, details[k].name) == 0)
			return (enum ns_detail)k;
	return NS_DETAIL__COUNT;
}

/* An interval in file units, before the unit is known. */
struct raw {
	long double start, end;
	ns_str opcode;  /* instruction: its opcode in detail_names ("" for none); dma: "" */
	uint8_t engine; /* enum ns_engine, NS_ENG__COUNT unknown */
	uint8_t role;   /* NS_DP_INSTRUCTION, NS_DP_DMA or NS_DP_ACTIVE_TIME */
};

struct reader {
	struct ns_devprof *dp;
	struct raw *raw;
	size_t n_raw, cap_raw;
	int role;            /* of the array being streamed */
	bool in_warnings;    /* the array is "warnings" */
	bool in_throttle;    /* the array is "throttle_summary" */
	/* fields of the element being read */
	struct ns_jv f_start, f_dur, f_end, f_engine, f_detail[NS_DETAIL__COUNT];
	bool has_start, has_dur, has_end, has_engine, has_detail[NS_DETAIL__COUNT];
	/* instruction durations (file units) and counts per detail_names id, per key */
	long double *sum[NS_DETAIL__COUNT];
	uint64_t *cnt[NS_DETAIL__COUNT];
	size_t cap_acc;
	long double sum_all;
};

static int element_field(void *ctx, const char *key, size_t len, const struct ns_jv *v)
{
	struct reader *r = ctx;
	if (ns_jkey_is(key, len, "timestamp") || ns_jkey_is(key, len, "start_ts") || ns_jkey_is(key, len, "start")) {
		r->f_start = *v;
		r->has_start = true;
	} else if (ns_jkey_is(key, len, "duration") || ns_jkey_is(key, len, "duration_ns")) {
		r->f_dur = *v;
		r->has_dur = true;
	} else if (ns_jkey_is(key, len, "end_ts") || ns_jkey_is(key, len, "end")) {
		r->f_end = *v;
		r->has_end = true;
	} else if (ns_jkey_is(key, len, "engine") || (!r->has_engine && (ns_jkey_is(key, len, "label") ||
								       ns_jkey_is(key, len, "timeline_track")))) {
		r->f_engine = *v;
		r->has_engine = true;
	} else if (r->role == NS_DP_INSTRUCTION) {
		for (int k = 0; k < NS_DETAIL__COUNT; k++)
			if (ns_jkey_is(key, len, details[k].field)) {
				r->f_detail[k] = *v;
				r->has_detail[k] = true;
			}
	}
	return 0;
}

/* Adds one instruction of dur (file units) to the group of each key;
 * *opcode: the id of its opcode. */
static int add_detail(struct reader *r, long double dur, ns_str *opcode)
{
	struct ns_devprof *dp = r->dp;
	char text[512];
	r->sum_all += dur;
	dp->n_instructions++;
	for (int k = 0; k < NS_DETAIL__COUNT; k++) {
		size_t n = 0;
		/* a string, or a scalar written as one; anything else is no name */
		if (r->has_detail[k] && (r->f_detail[k].type == 's' || r->f_detail[k].type == 'n'))
			n = ns_jv_text(&r->f_detail[k], text, sizeof(text));
		ns_str id = ns_strtab_intern(&dp->detail_names, n ? text : "", n);
		if (id == UINT32_MAX)
			return -1;
		if (k == NS_DETAIL_OPCODE)
			*opcode = id;
		if (id >= r->cap_acc) {
			size_t cap = r->cap_acc ? r->cap_acc * 2 : 64;
			while (cap <= id)
				cap *= 2;
			for (int j = 0; j < NS_DETAIL__COUNT; j++) {
				long double *s = realloc(r->sum[j], cap * sizeof(*s));
				if (s)
					r->sum[j] = s;
				uint64_t *c = s ? realloc(r->cnt[j], cap * sizeof(*c)) : NULL;
				if (!c)
					return -1;
				r->cnt[j] = c;
				memset(s + r->cap_acc, 0, (cap - r->cap_acc) * sizeof(*s));
				memset(c + r->cap_acc, 0, (cap - r->cap_acc) * sizeof(*c));
			}
			r->cap_acc = cap;
		}
		r->sum[k][id] += dur;
		r->cnt[k][id]++;
	}
	return 0;
}

static const struct ns_strtab *sort_names;

static int cmp_detail(const void *a, const void *b)
{
	const struct ns_detail_row *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(ns_strtab_get(sort_names, x->name), ns_strtab_get(sort_names, y->name));
}

/* The groups of each key in ns, most time first (then by name). */
static int build_detail(struct reader *r)
{
	struct ns_devprof *dp = r->dp;
	dp->instruction_ns = dp->n_instructions ? to_ns(r->sum_all, dp->unit) : 0;
	for (int k = 0; k < NS_DETAIL__COUNT; k++) {
		size_t n = 0;
		if (!(dp->detail[k] = malloc((dp->detail_names.count + 1) * sizeof(*dp->detail[k]))))
			return -1;
		for (size_t id = 0; id < r->cap_acc && id < dp->detail_names.count; id++)
			if (r->cnt[k][id]) {
				int64_t ns = to_ns(r->sum[k][id], dp->unit);
				dp->detail[k][n++] = (struct ns_detail_row){ (ns_str)id, r->cnt[k][id], ns == NS_NONE ? 0 : ns };
			}
		sort_names = &dp->detail_names;
		ns_sort(dp->detail[k], n, sizeof(*dp->detail[k]), cmp_detail);
		dp->n_detail[k] = n;
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
static int read_interval(struct reader *r, const struct ns_jv *v, uint64_t offset, struct ns_error *err)
{
	struct ns_devprof *dp = r->dp;
	const char *sec = section_name(r->role);
	struct raw x = { 0, 0, 0, NS_ENG__COUNT, (uint8_t)r->role };
	long double dur;
	size_t bad;
	r->has_start = r->has_dur = r->has_end = r->has_engine = false;
	memset(r->has_detail, 0, sizeof(r->has_detail));
	if (ns_jobj_walk(v, element_field, r, &bad))
		return note_add(&dp->notes, dp->path, offset + bad, "%s: element is not a valid object; skipped", sec) ? -1 : 0;
	if (!r->has_start || !ns_jv_num(&r->f_start, &x.start))
		return note_add(&dp->notes, dp->path, offset, "%s: %s; skipped", sec,
				r->has_start ? "timestamp is not a number" : "no timestamp") ? -1 : 0;
	if (r->has_end && ns_jv_num(&r->f_end, &x.end))
		;
	else if (r->has_dur && ns_jv_num(&r->f_dur, &dur))
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
	if (r->role == NS_DP_INSTRUCTION && add_detail(r, x.end - x.start, &x.opcode))
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", dp->path);
	if (r->role == NS_DP_DMA && (x.opcode = ns_strtab_intern(&dp->detail_names, "", 0)) == UINT32_MAX)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", dp->path);
	if (push_raw(r, &x))
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", dp->path);
	return 0;
}

struct info_ctx {
	struct ns_devprof *dp;
};

static int info_field(void *ctx, const char *key, size_t len, const struct ns_jv *v)
{
	struct ns_devprof *dp = ((struct info_ctx *)ctx)->dp;
	char text[256];
	if (v->type != 's' && v->type != 'n')
		return 0;
	size_t n = ns_jv_text(v, text, sizeof(text));
	if (ns_jkey_is(key, len, "ntff_filename") || ns_jkey_is(key, len, "ntff"))
		memcpy(dp->ntff_filename, text, n + 1);
	else if (ns_jkey_is(key, len, "neff_hash") || ns_jkey_is(key, len, "neff") || ns_jkey_is(key, len, "neff_name") ||
		 ns_jkey_is(key, len, "neff_id") || ns_jkey_is(key, len, "neff_filename") ||
		 (ns_jkey_is(key, len, "model_name") && !dp->neff_hash[0] && memmem(text, n, ".neff", 5)))
		ns_neff_hash_normalize(text, n, dp->neff_hash, sizeof(dp->neff_hash));
	return 0;
}

/* One ThrottleSummary row: its throttle_active_time_ns when it covers every
 * throttle type ("all", or no type); the longest such row is kept. */
static int read_throttle(struct ns_devprof *dp, const struct ns_jv *v, uint64_t offset)
{
	struct ns_kv *kv = NULL;
	size_t n = 0;
	int rc = kv_from_object(v, &kv, &n);
	if (rc == -2)
		return -1;
	if (rc)
		return note_add(&dp->notes, dp->path, offset, "throttle_summary: not a valid object");
	const struct ns_kv *type = kv_find(kv, n, "throttle_type"), *t = kv_find(kv, n, "throttle_active_time_ns");
	if (t && t->is_num && (!type || strcmp(type->text, "all") == 0)) {
		int64_t ns;
		struct ns_jv tok = { t->text, strlen(t->text), 'n', false };
		if (!ns_jv_int(&tok, &ns))
			ns = (int64_t)t->num;
		if (dp->throttle_ns == NS_NONE || ns > dp->throttle_ns)
			dp->throttle_ns = ns;
	}
	kv_free(kv, n);
	return 0;
}

static int on_key(void *ctx, const char *key)
{
	struct reader *r = ctx;
	r->in_warnings = strcmp(key, "warnings") == 0;
	r->in_throttle = strcmp(key, "throttle_summary") == 0;
	for (size_t i = 0; i < NS_ARRAY_SIZE(sections); i++)
		if (strcmp(sections[i].key, key) == 0) {
			r->role = sections[i].role;
			return sections[i].stream ? NS_JS_ELEMENTS : NS_JS_SKIP;
		}
	r->role = NS_DP_OTHER;
	if (keylist_add(&r->dp->unknown_keys, &r->dp->n_unknown_keys, key))
		return NS_JS_SKIP; /* out of memory shows later as a missing key, not a crash */
	return NS_JS_SKIP;
}

static int on_elem(void *ctx, const char *key, const struct ns_jv *v, uint64_t offset, struct ns_error *err)
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
	if (r->in_throttle)
		return read_throttle(dp, v, offset) ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
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
		ns_jobj_walk(v, info_field, &ic, &bad);
		return 0;
	}
	default:
		return 0;
	}
}

/* A section that is not an array: one object is taken as its only element. */
static int on_value(void *ctx, const char *key, const struct ns_jv *v, uint64_t offset, struct ns_error *err)
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
		struct ns_jv tok = { first_hw->text, strlen(first_hw->text), 'n', false };
		dp->origin_ns = ns_jv_int(&tok, &v) ? v : (int64_t)first_hw->num;
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

/* Every instruction and dma row's duration in ns, its engine and opcode,
 * in file order (kernels --by-engine: ns_engine_stats_compute). */
static int build_instr(struct reader *r)
{
	struct ns_devprof *dp = r->dp;
	if (!(dp->instr = malloc((r->n_raw + 1) * sizeof(*dp->instr))))
		return -1;
	for (size_t i = 0; i < r->n_raw; i++) {
		const struct raw *x = &r->raw[i];
		int64_t dur = x->role == NS_DP_ACTIVE_TIME ? NS_NONE : to_ns(x->end - x->start, dp->unit);
		if (dur != NS_NONE)
			dp->instr[dp->n_instr++] = (struct ns_dp_instr){ dur, x->opcode, x->engine, x->role == NS_DP_DMA };
	}
	return 0;
}

int ns_devprof_read(const char *path, enum ns_time_unit unit, struct ns_devprof **out, struct ns_error *err)
{
	static const struct ns_json_stream_cb cb = { on_key, on_elem, on_value };
	struct ns_devprof *dp = calloc(1, sizeof(*dp));
	struct reader r = { .dp = dp };
	int rc;
	*out = NULL;
	if (!dp || !(dp->path = strdup(path))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	ns_strtab_init(&dp->detail_names);
	dp->throttle_ns = NS_NONE;
	if ((rc = jstream_file(path, &cb, &r, &dp->truncated_at, err)))
		goto out;
	detect_unit(&r, unit);
	/* no NEFF in profile_info: the NEFF path of metadata's model_name */
	const struct ns_kv *model = kv_find(dp->metadata, dp->n_metadata, "model_name");
	if (!dp->neff_hash[0] && model && strstr(model->text, ".neff"))
		ns_neff_hash_normalize(model->text, strlen(model->text), dp->neff_hash, sizeof(dp->neff_hash));
	if (build_busy(&r) || build_detail(&r) || build_instr(&r)) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
		goto out;
	}
	*out = dp;
	dp = NULL;
out:
	free(r.raw);
	for (int k = 0; k < NS_DETAIL__COUNT; k++) {
		free(r.sum[k]);
		free(r.cnt[k]);
	}
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
	for (int k = 0; k < NS_DETAIL__COUNT; k++)
		free(dp->detail[k]);
	free(dp->instr);
	ns_strtab_release(&dp->detail_names);
	free(dp);
}

/* The summary keys of the NEFF summary figures (Summary table fields,
 * profile-schema-reference.rst "Summary"); throttling has none there. */
const struct ns_metric_info ns_metrics[NS_MET__COUNT] = {
	[NS_MET_TOTAL_TIME] = { "total_time_us", "total_time_ns", "Device time", 't' },
	[NS_MET_MFU] = { "mfu_percent", "mfu_percent", "MFU", 'p' },
	[NS_MET_MBU] = { "mbu_percent", "mbu_percent", "MBU", 'p' },
	[NS_MET_HBM_READ] = { "hbm_read_bytes", "hbm_read_bytes", "HBM read B", 'b' },
	[NS_MET_HBM_WRITE] = { "hbm_write_bytes", "hbm_write_bytes", "HBM write B", 'b' },
	[NS_MET_SPILL_SAVE] = { "spill_save_bytes", "spill_save_bytes", "Spill save B", 'b' },
	[NS_MET_SPILL_RELOAD] = { "spill_reload_bytes", "spill_reload_bytes", "Spill reload B", 'b' },
	[NS_MET_THROTTLE] = { "throttle_us", "throttle_ns", "Throttled", 't' },
};

static const char *const metric_keys[NS_MET__COUNT] = {
	[NS_MET_TOTAL_TIME] = "total_time",         [NS_MET_MFU] = "mfu_estimated_percent",
	[NS_MET_MBU] = "mbu_estimated_percent",     [NS_MET_HBM_READ] = "hbm_read_bytes",
	[NS_MET_HBM_WRITE] = "hbm_write_bytes",     [NS_MET_SPILL_SAVE] = "spill_save_bytes",
	[NS_MET_SPILL_RELOAD] = "spill_reload_bytes", [NS_MET_THROTTLE] = NULL,
};

static bool suffix_is(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* "throttle_active_nc<N>_time_ns": summary-json's per-core throttle time. */
static bool is_throttle_key(const char *k)
{
	static const char head[] = "throttle_active_nc", tail[] = "_time_ns";
	size_t n = strlen(k), i = sizeof(head) - 1;
	if (strncmp(k, head, i) != 0 || !suffix_is(k, tail) || n < i + sizeof(tail))
		return false;
	for (; i < n - (sizeof(tail) - 1); i++)
		if (k[i] < '0' || k[i] > '9')
			return false;
	return true;
}

/* A value of kind 't' (seconds, or ns for *_ns keys), 'p' or 'b'. */
static bool metric_value(const struct ns_kv *kv, char kind, bool fraction, double *out)
{
	if (!kv || !kv->is_num)
		return false;
	if (kind == 't')
		*out = suffix_is(kv->key, "_ns") ? kv->num : (double)llroundl((long double)kv->num * 1e9L);
	else if (kind == 'p')
		*out = fraction ? kv->num * 100.0 : kv->num;
	else
		*out = kv->num;
	return true;
}

void ns_devprof_metrics(const struct ns_devprof *dp, const struct ns_summary *s, const struct ns_summary_node *sn,
			struct ns_neff_metrics *out)
{
	bool any = false, fraction = true;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < dp->n_summary; i++)
		if (dp->summary[i].is_num && suffix_is(dp->summary[i].key, "_percent")) {
			any = true;
			fraction &= fabs(dp->summary[i].num) <= 1.0;
		}
	fraction &= any;
	for (int m = 0; m < NS_MET__COUNT; m++) {
		if (!metric_keys[m])
			continue;
		out->has[m] = metric_value(kv_find(dp->summary, dp->n_summary, metric_keys[m]), ns_metrics[m].kind,
					   fraction, &out->v[m]);
		if (!out->has[m] && sn)
			out->has[m] = metric_value(kv_find(sn->kv, sn->n_kv, metric_keys[m]), ns_metrics[m].kind,
						   s && s->percent_is_fraction, &out->v[m]);
	}
	if (dp->throttle_ns != NS_NONE) {
		out->v[NS_MET_THROTTLE] = (double)dp->throttle_ns;
		out->has[NS_MET_THROTTLE] = true;
	}
	for (size_t i = 0; sn && dp->throttle_ns == NS_NONE && i < sn->n_kv; i++)
		if (sn->kv[i].is_num && is_throttle_key(sn->kv[i].key) &&
		    (!out->has[NS_MET_THROTTLE] || sn->kv[i].num > out->v[NS_MET_THROTTLE])) {
			out->v[NS_MET_THROTTLE] = sn->kv[i].num;
			out->has[NS_MET_THROTTLE] = true;
		}
}
