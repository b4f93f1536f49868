/* The system-profile JSON (neuron-formats.md §3.4c; also the §3.4d
 * nrt_sys_trace_fetch_events form). Only the events correlation needs are
 * kept: framework events, the runtime's execution events, and the hardware
 * execution and clock-sync events (docs/neuron.md "Correlation"). */
#include "ntff/ntff-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/vec.h"
#include "ingest/json/scan.h"
#include "neff/neff.h" /* ns_neff_hash_normalize */

#define FRAMEWORK_TYPE 99999 /* "type" of framework events in the JSON export */
#define MAX_NEST 3

/* Events of the hardware lane (§4.1 "hardware" filter group). */
static const char *const hardware_names[] = {
	"nc_exec_running", "cc_running", "cc_exec_barrier", "numerical_err", "nrt_model_switch",
	"nc_model_switch", "timestamp_sync_point", "hw_notify",
};

/* Runtime events of one execution, kept even without an exec_id. */
static const char *const exec_names[] = {
	"nrta_execute_schedule", "nrt_execute", "runtime_execute", "nrt_model_submit",
	"kbl_exec_pre", "kmgr_exec_core", "kbl_exec_wait", "kbl_exec_post",
};

static const char *const known_top[] = {
	"system_profile_metadata", "device_profile_list", "trace_event", "trace_events", "events",
	"device_mem_usage", "mem_usage", "cpu_util", "data_version", "warnings",
};

enum role { R_META, R_DEVLIST, R_EVENTS, R_WARNINGS, R_OTHER };

struct reader {
	struct ns_sysprof *sp;
	enum role role;
	bool unit_fixed;
	/* the event being read */
	struct ns_sys_event ev;
	long double ts, dur, end;
	bool has_ts, has_dur, has_end, ts_is_ns;
	char unit[8], group[64], src[32];
	int64_t type;
	int64_t nc_alt;       /* device_core_idx, when no nc_idx */
	int depth;            /* of nested payload objects */
	bool oom;
};

static bool in_list(const char *s, size_t len, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ns_jkey_is(s, len, list[i]))
			return true;
	return false;
}

static int push_flow(struct ns_sysprof *sp, int64_t id)
{
	if (sp->n_flows == sp->cap_flows) {
		size_t cap = sp->cap_flows ? sp->cap_flows * 2 : 1024;
		int64_t *v = realloc(sp->flows, cap * sizeof(*v));
		if (!v)
			return -1;
		sp->flows = v;
		sp->cap_flows = cap;
	}
	sp->flows[sp->n_flows++] = id;
	return 0;
}

/* Flow ids are string-encoded integers; anything else is hashed. */
static int flow_elem(void *ctx, const struct ns_jv *v)
{
	struct reader *r = ctx;
	int64_t id;
	if (!ns_jv_int(v, &id)) {
		uint64_t h = 14695981039346656037ULL;
		for (size_t i = 0; i < v->n; i++)
			h = (h ^ (unsigned char)v->p[i]) * 1099511628211ULL;
		id = (int64_t)(h >> 1);
	}
	if (push_flow(r->sp, id))
		return -2;
	r->ev.n_flows++;
	return 0;
}

static void set_int(const struct ns_jv *v, int64_t *out)
{
	int64_t x;
	if (ns_jv_int(v, &x))
		*out = x;
}

static ns_str intern_value(struct reader *r, const struct ns_jv *v)
{
	char buf[1024];
	size_t n = ns_jv_text(v, buf, sizeof(buf));
	ns_str id = ns_strtab_intern(&r->sp->strings, buf, n);
	if (id == UINT32_MAX) {
		r->oom = true;
		return 0;
	}
	return id;
}

static int event_field(void *ctx, const char *key, size_t len, const struct ns_jv *v);

/* Nested payloads (data, args, attributes, sync_info, ...) hold more of the
 * same keys. */
static int nested(struct reader *r, const struct ns_jv *v, int depth)
{
	size_t bad;
	if (depth >= MAX_NEST)
		return 0;
	if (v->type == 'o')
		return ns_jobj_walk(v, event_field, r, &bad) == -2 ? -2 : 0;
	if (v->type == 's') { /* extra_attributes_json: JSON text in a string */
		char *text = malloc(v->n + 1);
		if (!text)
			return -2;
		size_t n = ns_json_unescape(v->p, v->n, text);
		struct ns_jv inner = { text, n, 'o', false };
		size_t i = ns_json_skip_ws(text, n, 0);
		int rc = 0;
		if (i < n && text[i] == '{') {
			inner.p = text + i;
			inner.n = n - i;
			rc = ns_jobj_walk(&inner, event_field, r, &bad) == -2 ? -2 : 0;
		}
		free(text);
		return rc;
	}
	return 0;
}

/* The event keys read (docs/neuron.md "System-profile JSON"); the rest
 * are ignored, nested objects searched. */
enum field {
	F_NAME, F_TS, F_TS_NS, F_DUR, F_END, F_UNIT, F_TYPE, F_GROUP, F_SOURCE, F_PHASE, F_ID, F_PARENT, F_EXEC,
	F_TRACKING, F_SEQ, F_NC, F_NC_ALT, F_PCORE, F_PID, F_TID, F_FLOW, F_NC_TS, F_CPU_TS, F_CORR, F_EXT, F_NEFF, F_LABEL,
	F_NESTED_TEXT, F_INSTANCE,
};

#define KEY(k, f) { k, sizeof(k) - 1, f }
static const struct {
	const char *key;
	size_t len;
	enum field field;
} event_keys[] = {
	KEY("name", F_NAME), KEY("event_type", F_NAME), KEY("timestamp", F_TS), KEY("ts", F_TS),
	KEY("start_ts", F_TS), KEY("timestamp_ns", F_TS_NS), KEY("duration", F_DUR), KEY("dur", F_DUR),
	KEY("duration_ns", F_DUR), KEY("end_ts", F_END), KEY("timestamp_unit", F_UNIT), KEY("type", F_TYPE),
	KEY("group", F_GROUP), KEY("trace_event_source", F_SOURCE), KEY("phase", F_PHASE), KEY("id", F_ID),
	KEY("parent_id", F_PARENT), KEY("exec_id", F_EXEC), KEY("tracking_id", F_TRACKING),
	KEY("nrta_seq_id", F_SEQ), KEY("nc_idx", F_NC), KEY("lnc_idx", F_NC), KEY("nc_id", F_NC),
	KEY("device_core_idx", F_NC_ALT), KEY("pcore_idx", F_PCORE), KEY("process_id", F_PID),
	KEY("instance_id", F_INSTANCE), KEY("thread_id", F_TID),
	KEY("flow_id", F_FLOW), KEY("flow_ids", F_FLOW), KEY("nc_timestamp_ns", F_NC_TS),
	KEY("cpu_timestamp_ns", F_CPU_TS), KEY("correlation", F_CORR), KEY("External id", F_EXT),
	KEY("external_id", F_EXT), KEY("neff_hash", F_NEFF), KEY("neff", F_NEFF), KEY("neff_name", F_NEFF),
	KEY("model_name", F_LABEL), KEY("extra_attributes_json", F_NESTED_TEXT),
};
#undef KEY

static int event_field(void *ctx, const char *key, size_t len, const struct ns_jv *v)
{
	struct reader *r = ctx;
	struct ns_sys_event *ev = &r->ev;
	size_t k = 0, bad;
	char text[512], norm[65];
	while (k < NS_ARRAY_SIZE(event_keys) &&
	       (event_keys[k].len != len || memcmp(event_keys[k].key, key, len) != 0))
		k++;
	if (k == NS_ARRAY_SIZE(event_keys)) {
		if (v->type != 'o')
			return 0;
		r->depth++; /* data, args, attributes, sync_info, ... */
		int rc = nested(r, v, r->depth);
		r->depth--;
		return rc;
	}
	switch (event_keys[k].field) {
	case F_NAME:
		if (v->type == 's')
			ev->name = intern_value(r, v);
		break;
	case F_TS:
	case F_TS_NS:
		r->has_ts = ns_jv_num(v, &r->ts);
		r->ts_is_ns = event_keys[k].field == F_TS_NS;
		break;
	case F_DUR: r->has_dur = ns_jv_num(v, &r->dur); break;
	case F_END: r->has_end = ns_jv_num(v, &r->end); break;
	case F_UNIT: ns_jv_text(v, r->unit, sizeof(r->unit)); break;
	case F_TYPE: set_int(v, &r->type); break;
	case F_GROUP: ns_jv_text(v, r->group, sizeof(r->group)); break;
	case F_SOURCE: ns_jv_text(v, r->src, sizeof(r->src)); break;
	case F_PHASE:
		ns_jv_text(v, text, 16);
		ev->phase = strcasecmp(text, "start") == 0 ? NS_SYS_START : strcasecmp(text, "stop") == 0 ? NS_SYS_STOP
			    : strcasecmp(text, "instant") == 0 ? NS_SYS_INSTANT : NS_SYS_COMPLETE;
		break;
	case F_ID: set_int(v, &ev->id); break;
	case F_PARENT: set_int(v, &ev->parent_id); break;
	case F_EXEC: set_int(v, &ev->exec_id); break;
	case F_TRACKING: set_int(v, &ev->tracking_id); break;
	case F_SEQ: set_int(v, &ev->seq); break;
	case F_NC: set_int(v, &ev->nc); break;
	case F_NC_ALT: set_int(v, &r->nc_alt); break;
	case F_PCORE: set_int(v, &ev->pcore); break;
	case F_PID: set_int(v, &ev->pid); break;
	case F_TID: set_int(v, &ev->tid); break;
	case F_INSTANCE:
		if (v->type == 's')
			ev->instance = intern_value(r, v);
		break;
	case F_FLOW:
		if (v->type == 'a' ? ns_jarr_walk(v, flow_elem, r, &bad) == -2 : flow_elem(r, v) != 0)
			return -2;
		break;
	case F_NC_TS: set_int(v, &ev->nc_ts); break;
	case F_CPU_TS: set_int(v, &ev->cpu_ts); break;
	case F_CORR: set_int(v, &ev->correlation); break;
	case F_EXT: set_int(v, &ev->external_id); break;
	case F_NEFF: {
		size_t n = ns_neff_hash_normalize(text, ns_jv_text(v, text, sizeof(text)), norm, sizeof(norm));
		if ((ev->neff = ns_strtab_intern(&r->sp->strings, norm, n)) == UINT32_MAX)
			return -2;
		break;
	}
	case F_LABEL:
		ev->label = intern_value(r, v);
		/* the NEFF path real exports carry in model_name */
		if (!ev->neff && v->type == 's' && memmem(v->p, v->n, ".neff", 5)) {
			size_t n = ns_neff_hash_normalize(text, ns_jv_text(v, text, sizeof(text)), norm, sizeof(norm));
			if ((ev->neff = ns_strtab_intern(&r->sp->strings, norm, n)) == UINT32_MAX)
				return -2;
		}
		break;
	case F_NESTED_TEXT: /* the event's own further keys, as JSON text: no level deeper */
		return nested(r, v, r->depth);
	}
	return r->oom ? -2 : 0;
}

static enum ns_sys_source classify(const struct reader *r)
{
	const char *name = ns_strtab_get(&r->sp->strings, r->ev.name);
	if (strcmp(r->src, "framework") == 0 || r->type == FRAMEWORK_TYPE || strncmp(r->group, "framework", 9) == 0)
		return NS_SYS_FRAMEWORK;
	if (strcmp(r->src, "neuron_hw") == 0 ||
	    in_list(name, strlen(name), hardware_names, NS_ARRAY_SIZE(hardware_names)))
		return NS_SYS_HARDWARE;
	return NS_SYS_RUNTIME;
}

static bool keep(const struct reader *r, enum ns_sys_source src)
{
	const struct ns_sys_event *ev = &r->ev;
	const char *name = ns_strtab_get(&r->sp->strings, ev->name);
	size_t len = strlen(name);
	if (src == NS_SYS_FRAMEWORK)
		return true;
	if (src == NS_SYS_HARDWARE)
		return ns_jkey_is(name, len, "nc_exec_running") || ev->nc_ts != NS_NONE;
	return ev->exec_id != NS_NONE || ev->n_flows ||
	       in_list(name, len, exec_names, NS_ARRAY_SIZE(exec_names));
}

static int read_event(struct reader *r, const struct ns_jv *v, uint64_t offset, struct ns_error *err)
{
	struct ns_sysprof *sp = r->sp;
	struct ns_sys_event *ev = &r->ev;
	size_t flows_before = sp->n_flows, bad;
	enum ns_time_unit unit;
	memset(ev, 0, sizeof(*ev));
	ev->ts = ev->dur = ev->nc_ts = ev->cpu_ts = NS_NONE;
	ev->id = ev->parent_id = ev->exec_id = ev->tracking_id = ev->nc = ev->pid = ev->tid = ev->seq = NS_NONE;
	ev->correlation = ev->external_id = ev->pcore = NS_NONE;
	ev->flows_off = (uint32_t)sp->n_flows;
	ev->offset = offset;
	r->has_ts = r->has_dur = r->has_end = r->ts_is_ns = false;
	r->unit[0] = r->group[0] = r->src[0] = '\0';
	r->type = r->nc_alt = NS_NONE;
	sp->n_events++;
	if (v->type != 'o')
		return note_add(&sp->notes, sp->path, offset, "event is not an object; skipped") ? -1 : 0;
	int rc = ns_jobj_walk(v, event_field, r, &bad);
	if (rc == -2)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", sp->path);
	if (rc) {
		sp->n_flows = flows_before;
		return note_add(&sp->notes, sp->path, offset + bad, "event is not a valid object; skipped") ? -1 : 0;
	}
	if (!ev->name) {
		sp->n_flows = flows_before;
		return note_add(&sp->notes, sp->path, offset, "event without a name; skipped") ? -1 : 0;
	}
	if (ev->nc == NS_NONE)
		ev->nc = r->nc_alt;
	enum ns_sys_source src = classify(r);
	sp->n_source[src]++;
	if (!keep(r, src)) {
		sp->n_flows = flows_before;
		return 0;
	}
	ev->source = (uint8_t)src;
	/* the unit: this event's timestamp_unit, else the file's (first timestamp) */
	unit = r->ts_is_ns ? NS_TU_NS : ns_time_unit_parse(r->unit);
	if (unit == NS_TU_AUTO && r->has_ts && !r->unit_fixed) {
		sp->unit = unit_from_magnitude(r->ts);
		r->unit_fixed = true;
		snprintf(sp->unit_why, sizeof(sp->unit_why), "detected from the magnitude of the first timestamp (%.0Lf)",
			 r->ts);
	}
	if (unit == NS_TU_AUTO)
		unit = sp->unit;
	else if (!r->unit_fixed) {
		sp->unit = unit;
		r->unit_fixed = true;
		snprintf(sp->unit_why, sizeof(sp->unit_why), "given by the events (timestamp_unit / timestamp_ns)");
	}
	if (r->has_ts)
		ev->ts = to_ns(r->ts, unit);
	if (r->has_dur)
		ev->dur = to_ns(r->dur, unit);
	else if (r->has_end && r->has_ts)
		ev->dur = ev->ts == NS_NONE ? NS_NONE : ns_add_or_none(to_ns(r->end, unit), -ev->ts);
	if (ev->ts == NS_NONE && ev->nc_ts == NS_NONE && ev->cpu_ts == NS_NONE) {
		sp->n_flows = flows_before;
		return note_add(&sp->notes, sp->path, offset, "event '%s' has no timestamp; skipped",
				ns_strtab_get(&sp->strings, ev->name)) ? -1 : 0;
	}
	if (sp->n_ev == sp->cap_ev) {
		size_t cap = sp->cap_ev ? sp->cap_ev * 2 : 1024;
		struct ns_sys_event *grown = realloc(sp->ev, cap * sizeof(*grown));
		if (!grown)
			return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", sp->path);
		sp->ev = grown;
		sp->cap_ev = cap;
	}
	sp->ev[sp->n_ev++] = *ev;
	return 0;
}

static int on_key(void *ctx, const char *key)
{
	struct reader *r = ctx;
	size_t len = strlen(key);
	if (ns_jkey_is(key, len, "system_profile_metadata"))
		r->role = R_META;
	else if (ns_jkey_is(key, len, "device_profile_list"))
		r->role = R_DEVLIST;
	else if (ns_jkey_is(key, len, "warnings"))
		r->role = R_WARNINGS;
	else if (len == 0 || ns_jkey_is(key, len, "trace_event") || ns_jkey_is(key, len, "trace_events") ||
		 ns_jkey_is(key, len, "events"))
		r->role = R_EVENTS;
	else {
		r->role = R_OTHER;
		if (!in_list(key, len, known_top, NS_ARRAY_SIZE(known_top)) &&
		    keylist_add(&r->sp->unknown_keys, &r->sp->n_unknown_keys, key))
			r->oom = true;
		return NS_JS_SKIP;
	}
	return NS_JS_ELEMENTS;
}

static int on_elem(void *ctx, const char *key, const struct ns_jv *v, uint64_t offset, struct ns_error *err)
{
	struct reader *r = ctx;
	struct ns_sysprof *sp = r->sp;
	int rc = 0;
	(void)key;
	if (r->oom)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", sp->path);
	switch (r->role) {
	case R_META:
		if (!sp->metadata && v->type == 'o' && (rc = kv_from_object(v, &sp->metadata, &sp->n_metadata)) == -2)
			return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", sp->path);
		if ((v->type != 'o' || rc) && note_add(&sp->notes, sp->path, offset, "%s: not an object", key))
			return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", sp->path);
		return 0;
	case R_DEVLIST:
		sp->n_device_profiles++;
		return 0;
	case R_WARNINGS:
		return explorer_warning_add(&sp->explorer_warnings, sp->path, v, offset) ||
				       explorer_warning_keep(&sp->xwarn, v, offset)
			       ? ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", sp->path)
			       : 0;
	case R_EVENTS:
		rc = read_event(r, v, offset, err);
		return rc < 0 ? ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", sp->path) : rc;
	default:
		return 0;
	}
}

static int on_value(void *ctx, const char *key, const struct ns_jv *v, uint64_t offset, struct ns_error *err)
{
	struct reader *r = ctx;
	if (r->role == R_META && v->type == 'o')
		return on_elem(ctx, key, v, offset, err);
	if (note_add(&r->sp->notes, r->sp->path, offset, "%s: expected an array; ignored", key))
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	return 0;
}

int ns_sysprof_read(const char *path, struct ns_sysprof **out, struct ns_error *err)
{
	static const struct ns_json_stream_cb cb = { on_key, on_elem, on_value };
	struct ns_sysprof *sp = calloc(1, sizeof(*sp));
	struct reader r = { .sp = sp };
	int rc;
	*out = NULL;
	if (!sp || !(sp->path = strdup(path))) {
		free(sp);
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	ns_strtab_init(&sp->strings);
	sp->unit = NS_TU_NS;
	snprintf(sp->unit_why, sizeof(sp->unit_why), "assumed (no timestamp)");
	if ((rc = jstream_file(path, &cb, &r, &sp->truncated_at, err)))
		goto out;
	*out = sp;
	sp = NULL;
out:
	ns_sysprof_free(sp);
	return rc;
}

void ns_sysprof_free(struct ns_sysprof *sp)
{
	if (!sp)
		return;
	free(sp->path);
	ns_strtab_release(&sp->strings);
	free(sp->ev);
	free(sp->flows);
	kv_free(sp->metadata, sp->n_metadata);
	keylist_free(sp->unknown_keys, sp->n_unknown_keys);
	notes_release(&sp->notes);
	notes_release(&sp->explorer_warnings);
	xwarnings_release(&sp->xwarn);
	free(sp);
}

void ns_sysprof_keep_process(struct ns_sysprof *sp, const char *instance, int64_t pid)
{
	size_t out = 0;
	for (size_t i = 0; i < sp->n_ev; i++) {
		const struct ns_sys_event *ev = &sp->ev[i];
		const char *inst = ev->instance ? ns_strtab_get(&sp->strings, ev->instance) : "";
		if (ev->pid == NS_NONE)
			sp->n_no_process++;
		else if (ev->pid != pid || (instance && *instance && *inst && strcmp(inst, instance) != 0))
			sp->n_other_process++;
		else
			sp->ev[out++] = *ev;
	}
	sp->n_ev = out;
}
