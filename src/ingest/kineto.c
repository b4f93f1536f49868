/* Kineto trace.json -> ns_trace. The top-level object is walked key by key;
 * traceEvents is streamed one event object at a time (spec Part B). */
#include "ingest/ingest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/flops.h"
#include "common/utf8.h"
#include "common/vec.h"
#include "neff/neff.h"
#include "ingest/json/scan.h"
#include "ingest/source.h"

#define PROGRESS_STEP (1u << 20) /* (the pipeline passes on only a changed percentage) */
/* The longest string the string table takes (common/strtab.c). */
#define STRING_MAX ((1u << 23) - 1)
#define SUM_LIMIT NS_SUM_LIMIT /* (common/trace.h) */

struct span {
	const char *p;
	size_t len;
	bool escaped; /* strings: needs ns_json_unescape */
	bool is_string;
	uint8_t num_kind; /* a plain number read as it was walked: 1 + its decimals (num: its digits); else 0 */
	uint64_t num;
};

/* The "pid" and "tid" tokens of the last event, as written (when short
 * and without escapes), and the thread they named: events of one thread
 * come in runs. */
struct last_track {
	char pid[24], tid[24];
	uint8_t pid_len, tid_len;
	bool has_pid, has_tid, valid;
	uint32_t thread;
};

/* A "cat" seen (when short and without escapes), its enum and its string:
 * a trace has a few, and events of three or four alternate (a Python call,
 * its op, the op's runtime call, a memory record), so the last one alone
 * was the same only half the time. Filled only once an event was read
 * whole, so its string is never one that a failed attempt (next_event)
 * took back. */
#define CAT_SLOTS 8
struct seen_cat {
	char text[32];
	uint8_t len; /* (0: an empty slot) */
	uint8_t cat;
	ns_str id;
};

/* intern_compact's results by the raw text they came from: an op's shapes
 * and types recur op after op, and a hit skips the compaction, the UTF-8
 * check and the string table's probe. */
#define COMPACT_SLOTS 256
#define COMPACT_TEXT 116
struct compact_slot {
	ns_str id;
	uint8_t len; /* 0: empty */
	char text[COMPACT_TEXT];
};

struct parser {
	struct ns_scan sc;
	struct ns_trace *t;
	const struct ns_ingest_opts *opts;
	char *scratch;
	size_t scratch_cap;
	struct compact_slot *compact; /* COMPACT_SLOTS of them, made on first use; NULL if that failed */
	bool compact_tried;
	struct array_seen *arrays; /* ARRAY_SLOTS of them, made on first use; NULL if that failed */
	bool arrays_tried;
	char *fixed;          /* UTF-8 repair output */
	size_t fixed_cap;
	int64_t dur_sum, bytes_sum; /* over kept events, up to SUM_LIMIT */
	struct last_track last_track;
	struct seen_cat cats[CAT_SLOTS];
	unsigned next_cat;          /* (the slot the next new one takes, round the slots) */
	struct ns_flow_pairs flows; /* with a flow sink */
	char *meta_text;      /* the decoded text of a metadata row */
	size_t meta_text_cap;
	uint64_t next_progress;
	struct ns_error *err;
	struct split *split;       /* a split file's parts (the main parse's, or a part's parse) */
	uint64_t split_check;      /* (the offset from which it looks for part split_next's start) */
	size_t split_next;
	bool in_part;              /* the parse of a part, on the second thread */
	const atomic_bool *stop;   /* the part's parse: set when it is not needed */
	bool attempt;              /* a first attempt at an element (next_event) */
	bool named_empty;          /* a thread_name event named a thread "" */
};

static bool span_is(const struct span *s, const char *lit)
{
	size_t n = strlen(lit);
	return s->len == n && memcmp(s->p, lit, n) == 0;
}

static int reserve(char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	char *nb = realloc(*buf, need);
	if (!nb)
		return -1;
	*buf = nb;
	*cap = need;
	return 0;
}

/* Text for the string table: invalid UTF-8 (and NUL) is replaced by U+FFFD,
 * so every output (table, CSV, JSON, database) is valid UTF-8. Valid text
 * is returned as is. -1 on OOM. */
static int repair_utf8(struct parser *ps, const char **text, size_t *len)
{
	size_t n = *len;
	if (ns_utf8_valid(*text, n))
		return 0;
	/* each bad byte becomes at most 3 bytes */
	if (n > SIZE_MAX / 3 || reserve(&ps->fixed, &ps->fixed_cap, 3 * n))
		return -1;
	*len = ns_utf8_repair(*text, n, ps->fixed);
	*text = ps->fixed;
	return 0;
}

/* Interns text after UTF-8 repair; -1 when it is too long or on OOM. A
 * string the table holds is valid UTF-8, so the check is for new ones. */
static int intern_text(struct parser *ps, const char *text, size_t len, ns_str *out)
{
	if ((*out = ns_strtab_find(&ps->t->strings, text, len)) != UINT32_MAX)
		return 0;
	if (repair_utf8(ps, &text, &len) || len > STRING_MAX)
		return -1;
	*out = ns_strtab_intern(&ps->t->strings, text, len);
	return *out == UINT32_MAX ? -1 : 0;
}

/* Interns a string span (decoding escapes) or a number token as text. */
static int intern_span(struct parser *ps, const struct span *s, ns_str *out)
{
	const char *text = s->p;
	size_t len = s->len;
	if (s->escaped) {
		if (reserve(&ps->scratch, &ps->scratch_cap, len))
			return -1;
		len = ns_json_unescape(s->p, s->len, ps->scratch);
		text = ps->scratch;
	}
	return intern_text(ps, text, len, out);
}

/* The slot of raw text p[0, len) (len <= COMPACT_TEXT), or NULL. Its hash
 * is a multiply a word and the slot its top bits: the mixing and finalizer
 * of strtab.c's hash_bytes (whose low bits the table uses) cost 0.7% of a
 * report here. */
static struct compact_slot *compact_slot(struct parser *ps, const char *p, size_t len)
{
	if (!ps->compact_tried) {
		ps->compact_tried = true;
		ps->compact = calloc(COMPACT_SLOTS, sizeof(*ps->compact));
	}
	if (!ps->compact)
		return NULL;
	uint64_t h = len, w;
	size_t i = 0;
	for (; i + sizeof(w) <= len; i += sizeof(w)) {
		memcpy(&w, p + i, sizeof(w));
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	}
	for (; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 0x9e3779b97f4a7c15ULL;
	return &ps->compact[h >> 56 & (COMPACT_SLOTS - 1)];
}

/* After next_event took back the strings from `count` on. */
static void compact_forget(struct parser *ps, uint32_t count)
{
	for (size_t i = 0; ps->compact && i < COMPACT_SLOTS; i++)
		if (ps->compact[i].id >= count)
			ps->compact[i].len = 0;
}

/* Interns JSON text with insignificant whitespace removed, so "[[1], []]"
 * and "[[1],[]]" are one string. */
static int intern_compact(struct parser *ps, const char *p, size_t len, ns_str *out)
{
	struct compact_slot *slot = len <= COMPACT_TEXT ? compact_slot(ps, p, len) : NULL;
	if (slot && slot->len == len && memcmp(slot->text, p, len) == 0) {
		*out = slot->id;
		return 0;
	}
	if (reserve(&ps->scratch, &ps->scratch_cap, len))
		return -1;
	size_t o = 0;
	bool in_str = false;
	for (size_t i = 0; i < len; i++) {
		char c = p[i];
		if (in_str) {
			ps->scratch[o++] = c;
			if (c == '\\' && i + 1 < len)
				ps->scratch[o++] = p[++i];
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
			ps->scratch[o++] = c;
		} else if (c != ' ' && c != '\n' && c != '\t' && c != '\r') {
			ps->scratch[o++] = c;
		}
	}
	if (intern_text(ps, ps->scratch, o, out))
		return -1;
	if (slot && len) {
		slot->id = *out;
		slot->len = (uint8_t)len;
		memcpy(slot->text, p, len);
	}
	return 0;
}

/* Frees what a parse allocated for itself. */
static void release_buffers(struct parser *ps)
{
	free(ps->compact);
	free(ps->arrays);
	free(ps->scratch);
	free(ps->fixed);
	free(ps->meta_text);
}

/* Where p is, for a message; not looked for in a first attempt at an
 * element, whose message is dropped (next_event): its line would be counted
 * from the last one known, up to a window back. */
static void where_at(const struct parser *ps, const char *p, char *where, size_t n)
{
	if (ps->attempt)
		snprintf(where, n, "%s", ps->sc.path);
	else
		ns_scan_where(&ps->sc, (size_t)(p - ps->sc.buf), where, n);
}

static int fail_at(struct parser *ps, const char *p, const char *what)
{
	char where[600];
	where_at(ps, p, where, sizeof(where));
	return ns_error_set(ps->err, NS_ERR_INPUT, "%s: %s", where, what);
}

/* A failed intern_* of len bytes at p: over the length limit, or OOM. */
static int intern_failed(struct parser *ps, const char *p, size_t len)
{
	char where[600];
	where_at(ps, p, where, sizeof(where));
	if (len > STRING_MAX)
		return ns_error_set(ps->err, NS_ERR_NOMEM,
				    "%s: a string of %zu bytes is longer than the limit of %u bytes", where,
				    len, STRING_MAX);
	return ns_error_set(ps->err, NS_ERR_NOMEM, "%s: out of memory", where);
}

/* NaN, Infinity, -Infinity (Python's json writes them) and the "inf"/"nan"
 * strings some args carry ("warps per SM": "inf"). */
static bool is_nonfinite(const struct span *v)
{
	const char *p = v->p;
	size_t n = v->len;
	if (n && (p[0] == '-' || p[0] == '+'))
		p++, n--;
	return (n == 3 && (strncasecmp(p, "nan", 3) == 0 || strncasecmp(p, "inf", 3) == 0)) ||
	       (n == 8 && strncasecmp(p, "infinity", 8) == 0);
}

/* True if v is a plain JSON integer token (digits, optional '-'): one that
 * fails to parse is out of range rather than malformed. */
static bool is_integer_token(const struct span *v)
{
	size_t i = v->len && v->p[0] == '-';
	if (i == v->len)
		return false;
	for (; i < v->len; i++)
		if (v->p[i] < '0' || v->p[i] > '9')
			return false;
	return true;
}

/* A plain number read as it was walked (span.num_kind), in units of
 * 10^-scale: false when it was not read or does not fit, and the text is
 * to be parsed (what fast_decimal in numparse.c answers for the text). */
static inline bool plain_number(const struct span *v, unsigned scale, int64_t *out)
{
	return ns_decimal_scaled(v->num, v->num_kind - 1u /* (not read: above every scale) */, scale, false, out);
}

/* Parses a "ts"/"dur" token into ns within +-NS_TIME_LIMIT_NS: 0, -1 for a
 * non-finite value, or an error status. */
static int time_field(struct parser *ps, const struct span *v, const char *key, int64_t *out)
{
	char msg[200];
	if ((plain_number(v, 3, out) || ns_parse_us_to_ns(v->p, v->len, out) == 0) && *out > -NS_TIME_LIMIT_NS &&
	    *out < NS_TIME_LIMIT_NS)
		return 0;
	if (is_nonfinite(v)) /* (which never parses: checked after the common case) */
		return -1;
	bool numeric = !v->is_string && v->len && (v->p[0] == '-' || (v->p[0] >= '0' && v->p[0] <= '9')) &&
		       ns_json_skip_value(v->p, v->len, 0, 1) == v->len;
	if (numeric)
		snprintf(msg, sizeof(msg), "\"%s\" is out of range (limit +-2^62 ns, about 146 years)", key);
	else
		snprintf(msg, sizeof(msg), "expected a number of microseconds for \"%s\"", key);
	return fail_at(ps, v->is_string ? v->p - 1 : v->p, msg);
}

/* Reads `"key": value` pairs of the object at p[0] == '{' (after
 * whitespace), which is at nesting level `depth`, calling fn for each, and
 * sets *end (if not NULL) past its '}'. Values are spans over the raw text
 * (strings without quotes).
 *
 * take (may be NULL) is offered each value that is an object before it is
 * read: it returns NOT_TAKEN, or reads the object at p (within n bytes)
 * itself, sets *len to its length and returns 0 or an error; fn is then
 * not called for it. An object that is walked anyway (an event's args) is
 * so read once, not skipped over first. */
typedef int (*field_fn)(struct parser *ps, void *ctx, const struct span *key, const struct span *val,
			const char *val_start);
typedef int (*object_fn)(struct parser *ps, void *ctx, const struct span *key, const char *p, size_t n,
			 size_t *len);
#define NOT_TAKEN (-1)

/* The index past `": "` or `", "` at p[i] (sep is ':' or ','), as Kineto
 * and json.dump write them, when a byte other than whitespace follows:
 * one compare instead of two whitespace skips; else 0. */
static inline size_t kineto_separator(const char *p, size_t n, size_t i, char sep)
{
	const char want[2] = { sep, ' ' };
	uint16_t two, sep_space;
	if (n - i < 3)
		return 0;
	memcpy(&two, p + i, sizeof(two));
	memcpy(&sep_space, want, sizeof(sep_space));
	return two == sep_space && (unsigned char)p[i + 2] > ' ' ? i + 2 : 0;
}

/* The arrays of args (shapes, strides, types, concrete inputs, grid,
 * block) repeat: a few dozen texts make most of a trace's. One that was
 * skipped once (found to be JSON, in args: at the same depth) is
 * remembered (192 KiB of slots a parse), and the same bytes again end where
 * it ended (an array's text ends with it) without being skipped. */
enum { ARRAY_SLOTS = 1024, ARRAY_TEXT_MAX = 191 };

struct array_seen {
	uint8_t len; /* 0: none */
	char text[ARRAY_TEXT_MAX];
};

/* ns_json_skip_value for the array at p[i] == '[', remembered in arrays
 * by its first 32 bytes and the arrays before it in the object (*prev:
 * the last one's slot, which they made); many start alike
 * (["c10::BFloat16", ...), and an op's arrays come together. */
static inline size_t skip_array_seen(struct array_seen *arrays, unsigned *prev, const char *p, size_t n, size_t i,
				     int depth)
{
	if (n - i < 32)
		return ns_json_skip_value(p, n, i, depth);
	uint64_t head[4];
	memcpy(head, p + i, sizeof(head));
	*prev = (unsigned)(((head[0] * 0x9e3779b97f4a7c15ULL) ^ (head[1] * 0xff51afd7ed558ccdULL) ^
			    (head[2] * 0xc2b2ae3d27d4eb4fULL) ^ (head[3] * 0x165667b19e3779f9ULL) ^
			    (*prev * 0xc4ceb9fe1a85ec53ULL)) >> 54);
	struct array_seen *a = &arrays[*prev];
	if (a->len && n - i >= a->len && memcmp(p + i, a->text, a->len) == 0)
		return i + a->len;
	size_t e = ns_json_skip_value(p, n, i, depth);
	if (e && e - i <= ARRAY_TEXT_MAX) {
		memcpy(a->text, p + i, e - i);
		a->len = (uint8_t)(e - i);
	}
	return e;
}

/* walk_object's loop, inlined into the walkers of events and their args
 * so that their field functions are inlined too (no indirect call a
 * field: a tenth of a parse). */
static inline __attribute__((always_inline)) int walk_fields(struct parser *ps, const char *p, size_t n, int depth,
							      struct array_seen *arrays, field_fn fn, object_fn take,
							      void *ctx, size_t *end)
{
	unsigned prev_array = 0; /* (arrays: the slot of the last array) */
	size_t i = ns_json_skip_ws(p, n, 0);
	if (i >= n || p[i] != '{')
		return fail_at(ps, p + i, "expected an object");
	i = ns_json_skip_ws(p, n, i + 1);
	if (i < n && p[i] == '}') {
		if (end)
			*end = i + 1;
		return 0;
	}
	for (;;) {
		struct span key, val; /* (each field set below: zeroing them cost 5% of a parse) */
		if (i >= n || p[i] != '"')
			return fail_at(ps, p + (i < n ? i : n - 1), "expected a quoted key");
		size_t e = ns_json_string_end(p, n, i, &key.escaped);
		if (!e)
			return fail_at(ps, p + i, "unterminated string");
		key.p = p + i + 1;
		key.len = e - i - 2;
		key.is_string = false; /* (as it always was: a key is not a value) */
		if (!(i = kineto_separator(p, n, e, ':'))) {
			i = ns_json_skip_ws(p, n, e);
			if (i >= n || p[i] != ':')
				return fail_at(ps, p + (i < n ? i : n - 1), "expected ':' after a key");
			i = ns_json_skip_ws(p, n, i + 1);
		}
		const char *val_start = p + i;
		size_t len = 0;
		int rc = NOT_TAKEN;
		if (i < n && p[i] == '{' && take && (rc = take(ps, ctx, &key, p + i, n - i, &len)) != NOT_TAKEN) {
			if (rc)
				return rc;
			e = i + len;
		} else if (i < n && p[i] == '"') {
			e = ns_json_string_end(p, n, i, &val.escaped);
			if (!e)
				return fail_at(ps, p + i, "unterminated string");
			val.p = p + i + 1;
			val.len = e - i - 2;
			val.is_string = true;
			val.num_kind = 0;
		} else {
			/* (numbers, most values after strings, without the general
			 * skip, read as they are scanned: ts, dur and the ids) */
			val.num_kind = 0;
			e = i < n && ns_json_is_digit(p[i]) ? ns_json_read_number(p, n, i, &val.num, &val.num_kind)
			    : arrays && i < n && p[i] == '[' ? skip_array_seen(arrays, &prev_array, p, n, i, depth + 1)
							     : ns_json_skip_value(p, n, i, depth + 1);
			if (!e)
				return fail_at(ps, p + i, "invalid JSON value");
			val.p = p + i;
			val.len = e - i;
			val.escaped = val.is_string = false;
		}
		if (rc == NOT_TAKEN && (rc = fn(ps, ctx, &key, &val, val_start)))
			return rc;
		if ((i = kineto_separator(p, n, e, ',')))
			continue;
		i = ns_json_skip_ws(p, n, e);
		if (i < n && p[i] == ',') {
			i = ns_json_skip_ws(p, n, i + 1);
			continue;
		}
		if (i < n && p[i] == '}') {
			if (end)
				*end = i + 1;
			return 0;
		}
		return fail_at(ps, p + (i < n ? i : n - 1), "expected ',' or '}' in an object");
	}
}

static int walk_object(struct parser *ps, const char *p, size_t n, int depth, field_fn fn, object_fn take,
		       void *ctx, size_t *end)
{
	return walk_fields(ps, p, n, depth, NULL, fn, take, ctx, end);
}

struct event_fields {
	struct span name, cat, ph, pid, tid, ts, dur, args, id;
	bool has_name, has_cat, has_ph, has_pid, has_tid, has_ts, has_dur, has_args, has_id;
	struct ns_row_event *raw;
};

static int int_field(struct parser *ps, const struct span *val, const char *val_start, const char *key,
		     int64_t *out)
{
	int64_t v;
	if (plain_number(val, 0, &v) || ns_parse_int64(val->p, val->len, &v) == 0) {
		*out = v;
		return 0;
	}
	if (is_nonfinite(val))
		return 0; /* not an id: the field stays absent */
	char msg[200];
	if (is_integer_token(val))
		snprintf(msg, sizeof(msg), "\"%s\" is out of the 64-bit integer range", key);
	else
		snprintf(msg, sizeof(msg), "expected an integer for \"%s\"", key);
	return fail_at(ps, val_start, msg);
}

/* args neff_hash / neff / neff_name / neff_path / model_name (a NEFF path) of device work: the first
 * one, normalized like capture file names (docs/neuron.md "NEFF hash"). */
static int neff_field(struct parser *ps, const struct span *val, const char *val_start, ns_str *out)
{
	char text[512], hash[65];
	size_t len = val->len;
	if (*out || val->p[0] == '{' || val->p[0] == '[' || len >= sizeof(text))
		return 0;
	len = val->escaped ? ns_json_unescape(val->p, len, text) : (memcpy(text, val->p, len), len);
	len = ns_neff_hash_normalize(text, len, hash, sizeof(hash));
	if (len && intern_text(ps, hash, len, out))
		return fail_at(ps, val_start, "out of memory");
	return 0;
}

/* The args keys the analysis and the store use. */
static int args_field(struct parser *ps, void *ctx, const struct span *key, const struct span *val,
		      const char *val_start)
{
	struct ns_row_event *raw = ctx;
	struct ns_event *ev = &raw->ev;
	switch (key->len) {
	case 4:
		if (span_is(key, "neff"))
			return neff_field(ps, val, val_start, &ev->neff);
		break;
	case 9:
		if (span_is(key, "neff_hash") || span_is(key, "neff_name") || span_is(key, "neff_path"))
			return neff_field(ps, val, val_start, &ev->neff);
		break;
	case 6:
		if (span_is(key, "stream"))
			return val->is_string ? 0 : int_field(ps, val, val_start, "stream", &raw->stream);
		if (span_is(key, "Ev Idx"))
			return int_field(ps, val, val_start, "Ev Idx", &raw->ev_idx);
		if (span_is(key, "device"))
			return val->is_string ? 0 : int_field(ps, val, val_start, "device", &raw->device);
		break;
	case 5:
		if (span_is(key, "Bytes"))
			return int_field(ps, val, val_start, "Bytes", &raw->bytes);
		/* a copy's size, an op's FLOPs: not an integer is absent, not an error */
		if (span_is(key, "bytes") && (val->is_string || ns_parse_int64(val->p, val->len, &raw->copy_bytes)))
			raw->copy_bytes = NS_NONE;
		if (span_is(key, "flops") && (val->is_string || ns_parse_int64(val->p, val->len, &raw->flops)))
			raw->flops = NS_NONE;
		break;
	case 8:
		if (span_is(key, "finished")) { /* a repeated key: the last one counts */
			if (span_is(val, "false"))
				ev->flags |= NS_EV_UNFINISHED;
			else
				ev->flags &= (uint8_t)~NS_EV_UNFINISHED;
		}
		break;
	case 11:
		if (span_is(key, "External id") || span_is(key, "external id"))
			return int_field(ps, val, val_start, "External id", &ev->external_id);
		if (span_is(key, "correlation"))
			return int_field(ps, val, val_start, "correlation", &ev->correlation);
		if (span_is(key, "Device Type")) {
			int64_t v = -1;
			int rc = int_field(ps, val, val_start, "Device Type", &v);
			raw->mem_device_type = (int16_t)(v >= 0 && v < 100 ? v : -1);
			return rc;
		}
		break;
	case 10:
		if (span_is(key, "Input Dims") || span_is(key, "Input dims"))
			return intern_compact(ps, val->p, val->len, &ev->input_dims) ? intern_failed(ps, val_start, val->len) : 0;
		if (span_is(key, "Call stack") && val->is_string)
			return intern_span(ps, val, &ev->stack) ? intern_failed(ps, val_start, val->len) : 0;
		if (span_is(key, "Input type"))
			return intern_compact(ps, val->p, val->len, &raw->input_types) ? intern_failed(ps, val_start, val->len) : 0;
		/* AWS's exports carry the NEFF path in model_name; other model
		 * names (NxDI's "token_generation_model") are not a NEFF */
		if (span_is(key, "model_name") && val->is_string && memmem(val->p, val->len, ".neff", 5))
			return neff_field(ps, val, val_start, &ev->neff);
		break;
	case 13:
		if (span_is(key, "Fwd thread id"))
			return int_field(ps, val, val_start, "Fwd thread id", &raw->fwd_tid);
		break;
	case 15:
		if (span_is(key, "Sequence number"))
			return int_field(ps, val, val_start, "Sequence number", &raw->seq_nr);
		if (span_is(key, "Concrete Inputs") && val->p[0] == '[') {
			raw->concrete = val->p;
			raw->concrete_len = val->len;
		}
		break;
	case 18:
		if (span_is(key, "Record function id"))
			return int_field(ps, val, val_start, "Record function id", &raw->rf_id);
		break;
	}
	return 0;
}

/* What args_field sets, back to "absent". */
static void reset_args(struct ns_row_event *raw)
{
	struct ns_event *ev = &raw->ev;
	ev->external_id = ev->correlation = NS_NONE;
	ev->input_dims = ev->stack = ev->neff = 0;
	raw->ev_idx = NS_NONE;
	raw->bytes = 0;
	raw->copy_bytes = NS_NONE;
	raw->mem_device_type = -1;
	ev->flags &= (uint8_t)~NS_EV_UNFINISHED;
	raw->rf_id = raw->seq_nr = raw->fwd_tid = raw->device = raw->stream = NS_NONE;
	raw->input_types = 0;
	raw->flops = NS_NONE;
	raw->concrete = NULL;
	raw->concrete_len = 0;
}

static int event_field(struct parser *ps, void *ctx, const struct span *key, const struct span *val,
		       const char *val_start)
{
	struct event_fields *f = ctx;
	(void)val_start;
	switch (key->len) {
	case 2:
		if (key->p[0] == 'p' && key->p[1] == 'h') {
			f->ph = *val;
			f->has_ph = true;
		} else if (key->p[0] == 't' && key->p[1] == 's') {
			f->ts = *val;
			f->has_ts = true;
		} else if (key->p[0] == 'i' && key->p[1] == 'd') {
			f->id = *val;
			f->has_id = true;
		}
		break;
	case 3:
		if (span_is(key, "cat")) {
			f->cat = *val;
			f->has_cat = true;
		} else if (span_is(key, "pid")) {
			f->pid = *val;
			f->has_pid = true;
		} else if (span_is(key, "tid")) {
			f->tid = *val;
			f->has_tid = true;
		} else if (span_is(key, "dur")) {
			f->dur = *val;
			f->has_dur = true;
		}
		break;
	case 4:
		if (span_is(key, "name")) {
			f->name = *val;
			f->has_name = true;
		} else if (span_is(key, "args")) { /* (an object is taken by event_object) */
			return fail_at(ps, val_start, "expected an object for \"args\"");
		}
		break;
	}
	return 0;
}

/* The args object of an event, read as it is walked. */
static int event_object(struct parser *ps, void *ctx, const struct span *key, const char *p, size_t n, size_t *len)
{
	struct event_fields *f = ctx;
	if (!span_is(key, "args"))
		return NOT_TAKEN;
	reset_args(f->raw); /* a repeated "args": the last one counts, as in Python */
	if (!ps->arrays_tried) {
		ps->arrays_tried = true;
		ps->arrays = calloc(ARRAY_SLOTS, sizeof(*ps->arrays));
	}
	int rc = walk_fields(ps, p, n, 2, ps->arrays, args_field, NULL, f->raw, len);
	if (rc == 0) {
		f->args = (struct span){ .p = p, .len = *len };
		f->has_args = true;
	}
	return rc;
}

/* {"name": "..."} of a thread_name metadata event */
static int name_field(struct parser *ps, void *ctx, const struct span *key, const struct span *val,
		      const char *val_start)
{
	(void)ps;
	(void)val_start;
	if (span_is(key, "name"))
		*(struct span *)ctx = *val;
	return 0;
}

static enum ns_ph ph_of(const struct span *ph)
{
	if (ph->len != 1)
		return NS_PH_OTHER;
	switch (ph->p[0]) {
	case 'X': return NS_PH_X;
	case 'i': case 'I': return NS_PH_I;
	case 's': return NS_PH_S;
	case 'f': return NS_PH_F;
	case 'M': return NS_PH_M;
	case 'C': return NS_PH_C;
	case 'B': return NS_PH_B;
	case 'E': return NS_PH_E;
	default: return NS_PH_OTHER;
	}
}

static bool same_token(const struct span *s, bool has, bool last_has, const char *last, uint8_t last_len)
{
	return has == last_has && (!has || (s->len == last_len && !s->escaped && memcmp(s->p, last, s->len) == 0));
}

static int thread_of(struct parser *ps, const struct event_fields *f, uint32_t *out)
{
	struct last_track *last = &ps->last_track;
	ns_str pid_text = 0, tid_text = 0;
	int64_t pid = NS_NONE, tid = NS_NONE;
	if (last->valid && same_token(&f->pid, f->has_pid, last->has_pid, last->pid, last->pid_len) &&
	    same_token(&f->tid, f->has_tid, last->has_tid, last->tid, last->tid_len)) {
		*out = last->thread;
		return 0;
	}
	if (f->has_pid) {
		if (intern_span(ps, &f->pid, &pid_text))
			return -1;
		if (ns_parse_int64(f->pid.p, f->pid.len, &pid))
			pid = NS_NONE;
	}
	if (f->has_tid) {
		if (intern_span(ps, &f->tid, &tid_text))
			return -1;
		if (ns_parse_int64(f->tid.p, f->tid.len, &tid))
			tid = NS_NONE;
	}
	int64_t th = ns_trace_thread(ps->t, pid_text, pid, tid_text, tid);
	if (th < 0)
		return -1;
	*out = (uint32_t)th;
	last->valid = f->pid.len <= sizeof(last->pid) && f->tid.len <= sizeof(last->tid) && !f->pid.escaped &&
		      !f->tid.escaped;
	if (last->valid) {
		last->has_pid = f->has_pid;
		last->has_tid = f->has_tid;
		last->pid_len = (uint8_t)f->pid.len;
		last->tid_len = (uint8_t)f->tid.len;
		if (f->has_pid)
			memcpy(last->pid, f->pid.p, f->pid.len);
		if (f->has_tid)
			memcpy(last->tid, f->tid.p, f->tid.len);
		last->thread = *out;
	}
	return 0;
}

/* Reads the fields of the event object at p (within n bytes: the object
 * may end before them) into *f and *raw, and sets *end past it. Its only
 * effects beyond those are the strings its args intern. */
static int read_event(struct parser *ps, const char *p, size_t n, struct event_fields *f,
		      struct ns_row_event *raw, size_t *end)
{
	memset(f, 0, sizeof(*f));
	f->raw = raw;
	memset(raw, 0, sizeof(*raw));
	reset_args(raw);
	raw->byte_offset = ps->sc.base + (size_t)(p - ps->sc.buf);
	if (ps->opts && ps->opts->sink) {
		ns_scan_sync_lines(&ps->sc);
		raw->line = ps->sc.line;
	}
	raw->ev.idx = (uint32_t)ps->t->n_trace_events;
	return walk_fields(ps, p, n, 1, NULL, event_field, event_object, f, end);
}

/* The legacy autograd profiler's export (EventList.export_chrome_trace:
 * PyTorch built without Kineto, or profile(use_kineto=False)) writes each
 * op as {"name", "ph": "X", "ts", "dur", "tid", "pid": "CPU functions",
 * "args": {}}: no "cat". Its ops are cpu_ops. */
static bool is_legacy_autograd_op(const struct event_fields *f, enum ns_ph ph)
{
	return ph == NS_PH_X && !f->has_cat && f->has_pid && f->pid.is_string && span_is(&f->pid, "CPU functions");
}

/* ... and each launch of device work as a flow start with "cat":
 * "cpu_to_cuda" (or "cpu_to_" + the device), which no device event with a
 * time follows. */
static bool is_untimed_launch(const struct event_fields *f, enum ns_ph ph)
{
	return ph == NS_PH_S && f->has_cat && f->cat.len > 7 && memcmp(f->cat.p, "cpu_to_", 7) == 0 &&
	       f->has_pid && f->pid.is_string && span_is(&f->pid, "CPU functions");
}

/* One counter value of a cuda_profiler_range event's args, added to the
 * trace's sum for its name. A value that is not a number is skipped. */
static int counter_field(struct parser *ps, void *ctx, const struct span *key, const struct span *val,
			 const char *val_start)
{
	struct ns_trace *t = ps->t;
	int64_t v = 0;
	char text[64];
	(void)ctx;
	if (val->is_string || !val->len || val->len >= sizeof(text) || val->p[0] == '{' || val->p[0] == '[' ||
	    is_nonfinite(val) || span_is(val, "true") || span_is(val, "false") || span_is(val, "null"))
		return 0;
	memcpy(text, val->p, val->len);
	text[val->len] = '\0';
	bool is_int = is_integer_token(val) && ns_parse_int64(val->p, val->len, &v) == 0;
	double d = strtod(text, NULL);
	ns_str name;
	if (intern_span(ps, key, &name))
		return intern_failed(ps, val_start, key->len);
	size_t i = 0;
	while (i < t->n_counters && t->counters[i].name != name)
		i++;
	if (i == t->n_counters) {
		if (NS_GROW(t->counters, t->cap_counters, t->n_counters + 1) < 0)
			return ns_error_set(ps->err, NS_ERR_NOMEM, "%s: out of memory", t->path);
		t->counters[t->n_counters++] = (struct ns_counter){ .name = name, .exact = true };
	}
	if (NS_GROW(t->counter_values, t->cap_counter_values, t->n_counter_values + 1) < 0)
		return ns_error_set(ps->err, NS_ERR_NOMEM, "%s: out of memory", t->path);
	/* (the range is the next event kept) */
	t->counter_values[t->n_counter_values++] = (struct ns_counter_value){
		.event = (uint32_t)t->n_events, .counter = (uint32_t)i, .is_int = is_int, .i = v, .d = d };
	ns_counter_add(&t->counters[i], is_int, v, d);
	return 0;
}

/* The value of one args key of a metadata event: the first one, as the
 * store always read it. */
struct meta_arg {
	const char *key;
	bool found;
	struct span val;
};

static int meta_field(struct parser *ps, void *ctx, const struct span *key, const struct span *val,
		      const char *val_start)
{
	struct meta_arg *arg = ctx;
	(void)ps;
	(void)val_start;
	if (!arg->found && span_is(key, arg->key)) {
		arg->found = true;
		arg->val = *val;
	}
	return 0;
}

/* The metadata events that say something of a process or thread, and the
 * args key they say it in. */
static const struct {
	const char *name, *arg;
	enum ns_row_meta_kind kind;
} meta_events[] = {
	{ "process_name", "name", NS_ROW_META_PROCESS_NAME },
	{ "process_labels", "labels", NS_ROW_META_PROCESS_LABELS },
	{ "process_sort_index", "sort_index", NS_ROW_META_PROCESS_SORT_INDEX },
	{ "thread_sort_index", "sort_index", NS_ROW_META_THREAD_SORT_INDEX },
};

/* A string value, decoded, up to a NUL; anything else is no text. */
static int meta_text(struct parser *ps, const struct span *val, struct ns_row_meta *m)
{
	if (!val->is_string)
		return 0;
	if (reserve(&ps->meta_text, &ps->meta_text_cap, val->len + 1))
		return fail_at(ps, val->p, "out of memory");
	size_t len = val->escaped ? ns_json_unescape(val->p, val->len, ps->meta_text)
				  : (memcpy(ps->meta_text, val->p, val->len), val->len);
	const char *nul = memchr(ps->meta_text, '\0', len);
	m->has_text = true;
	m->text = ps->meta_text;
	m->len = nul ? (size_t)(nul - ps->meta_text) : len;
	return 0;
}

/* A number value, truncated toward zero to an integer (NS_NONE out of
 * the 64-bit range); anything else is no number. */
static int meta_number(struct parser *ps, const struct span *val, struct ns_row_meta *m)
{
	if (val->is_string || !val->len || (val->p[0] != '-' && (val->p[0] < '0' || val->p[0] > '9')))
		return 0;
	if (reserve(&ps->scratch, &ps->scratch_cap, val->len + 1))
		return fail_at(ps, val->p, "out of memory");
	memcpy(ps->scratch, val->p, val->len);
	ps->scratch[val->len] = '\0';
	double d = strtod(ps->scratch, NULL);
	m->has_sort_index = true;
	m->sort_index = d >= -0x1p63 && d < 0x1p63 ? (int64_t)d : NS_NONE;
	return 0;
}

/* What a process_* or thread_sort_index event says, for the sink. */
static int decode_meta(struct parser *ps, const struct event_fields *f, struct ns_row_event *raw)
{
	struct ns_row_meta *m = &raw->meta;
	const char *name = ns_strtab_get(&ps->t->strings, raw->ev.name);
	struct meta_arg arg = { 0 };
	if (!f->has_args)
		return 0;
	m->kind = strncmp(name, "process_", 8) == 0 ? NS_ROW_META_PROCESS_OTHER : NS_ROW_META_NONE;
	for (size_t i = 0; i < NS_ARRAY_SIZE(meta_events); i++) {
		if (strcmp(name, meta_events[i].name) == 0) {
			m->kind = (uint8_t)meta_events[i].kind;
			arg.key = meta_events[i].arg;
		}
	}
	int rc = arg.key ? walk_object(ps, f->args.p, f->args.len, 2, meta_field, NULL, &arg, NULL) : 0;
	if (rc || !arg.found)
		return rc;
	if (!arg.val.is_string && is_nonfinite(&arg.val)) {
		m->kind = NS_ROW_META_NONE; /* (not JSON: such args never said anything) */
		return 0;
	}
	return strcmp(arg.key, "sort_index") == 0 ? meta_number(ps, &arg.val, m) : meta_text(ps, &arg.val, m);
}

/* A flow event's "id" token: an integer (also a quoted one), else its text
 * as written, without the quotes of a string. */
static void decode_flow_id(const struct span *id, struct ns_row_flow_id *out)
{
	*out = (struct ns_row_flow_id){ .present = true, .text = id->p, .len = id->len };
	out->is_int = ns_parse_int64(id->p, id->len, &out->num) == 0;
	if (!out->is_int && out->len >= 2 && out->text[0] == '"' && out->text[out->len - 1] == '"') {
		out->text++;
		out->len -= 2;
	}
}

/* The category of "cat" (its text as written) and its interned string:
 * a seen one's when the text is the same. */
static int cat_of(struct parser *ps, const struct span *s, enum ns_cat *cat, ns_str *text)
{
	bool cacheable = !s->escaped && s->len && s->len <= sizeof(ps->cats[0].text);
	for (unsigned i = 0; cacheable && i < CAT_SLOTS; i++) {
		const struct seen_cat *seen = &ps->cats[i];
		if (seen->len == s->len && memcmp(s->p, seen->text, s->len) == 0) {
			*cat = (enum ns_cat)seen->cat;
			*text = seen->id;
			return 0;
		}
	}
	*cat = ns_cat_from_string(s->p, s->len);
	if (intern_span(ps, s, text))
		return -1;
	if (cacheable) {
		struct seen_cat *slot = &ps->cats[ps->next_cat++ % CAT_SLOTS];
		memcpy(slot->text, s->p, s->len);
		slot->len = (uint8_t)s->len;
		slot->cat = (uint8_t)*cat;
		slot->id = *text;
	}
	return 0;
}

/* A python_function call's name, which only `stacks --python` and the
 * sink read: the others drop the call, and interning its name (a path and
 * a line, a fifth of a with_stack trace's events) would cost as much as
 * an op's. */
static bool names_unused(const struct parser *ps, enum ns_cat cat)
{
	return cat == NS_CAT_PYTHON_FUNCTION && !(ps->opts && (ps->opts->keep_python || ps->opts->sink));
}

/* The fields every event has: checks their types, interns name, category
 * and thread, converts ts and dur to ns, and notes args and id. */
static int convert_fields(struct parser *ps, const struct event_fields *f, struct ns_row_event *raw)
{
	struct ns_event *ev = &raw->ev;
	struct ns_trace *t = ps->t;
	int rc;

	if (f->has_ph && !f->ph.is_string)
		return fail_at(ps, f->ph.p, "expected a string for \"ph\"");
	if (f->has_name && !f->name.is_string)
		return fail_at(ps, f->name.p, "expected a string for \"name\"");
	if (f->has_cat && !f->cat.is_string)
		return fail_at(ps, f->cat.p, "expected a string for \"cat\"");

	raw->ph = (uint8_t)(f->has_ph ? ph_of(&f->ph) : NS_PH_OTHER);
	enum ns_cat cat = NS_CAT_OTHER;
	if (f->has_cat && cat_of(ps, &f->cat, &cat, &raw->cat_text))
		return intern_failed(ps, f->cat.p, f->cat.len);
	if (is_legacy_autograd_op(f, (enum ns_ph)raw->ph)) {
		cat = NS_CAT_CPU_OP;
		t->legacy_autograd = true;
	}
	ev->cat = (uint8_t)cat;
	if (f->has_name && !names_unused(ps, cat) && intern_span(ps, &f->name, &ev->name))
		return intern_failed(ps, f->name.p, f->name.len);
	if (thread_of(ps, f, &ev->thread)) {
		const struct span *long_one = f->has_pid && f->pid.len > f->tid.len ? &f->pid : &f->tid;
		return intern_failed(ps, long_one->p, long_one->len);
	}
	if (f->has_ts) {
		rc = time_field(ps, &f->ts, "ts", &ev->ts_ns);
		if (rc < 0)
			return fail_at(ps, f->ts.p, "\"ts\" is not a finite number");
		if (rc)
			return rc;
		/* (a plain number read as walked says whether it has decimals) */
		if (f->ts.num_kind ? f->ts.num_kind > 1 : memchr(f->ts.p, '.', f->ts.len) != NULL) {
			ev->flags |= NS_EV_TS_FRACTION;
			t->ts_has_fraction = true;
		}
	}
	/* A non-finite "dur" counts as absent (0), as a missing one does. */
	if (f->has_dur && (rc = time_field(ps, &f->dur, "dur", &ev->dur_ns)) != 0) {
		if (rc > 0)
			return rc;
		ev->dur_ns = 0;
	}
	if (ev->dur_ns < 0)
		ev->dur_ns = 0; /* Kineto writes negative durations as 0; so do we */
	if (f->has_args) {
		raw->args = f->args.p;
		raw->args_len = f->args.len;
	}
	if (f->has_id && (raw->ph == NS_PH_S || raw->ph == NS_PH_F))
		decode_flow_id(&f->id, &raw->flow_id);
	return 0;
}

/* What the analysis makes of the event, by its phase and category: sets
 * its kind and raw->kept for the ones it uses (slices, memory records,
 * ac2g flows), sums counters, names threads. */
static int classify_event(struct parser *ps, const char *p, const struct event_fields *f,
			  struct ns_row_event *raw)
{
	struct ns_event *ev = &raw->ev;
	struct ns_trace *t = ps->t;
	enum ns_cat cat = (enum ns_cat)ev->cat;
	int rc;

	switch (raw->ph) {
	case NS_PH_X:
		if (cat == NS_CAT_PYTHON_FUNCTION && ps->opts && ps->opts->keep_python && f->has_ts) {
			ev->kind = NS_KIND_PYTHON;
			raw->kept = true;
			break;
		}
		if (cat == NS_CAT_OTHER || cat == NS_CAT_PYTHON_FUNCTION || cat == NS_CAT_AC2G ||
		    cat == NS_CAT_FWDBWD)
			break;
		if (!f->has_ts)
			return fail_at(ps, p, "event without \"ts\"");
		ev->kind = NS_KIND_SLICE;
		if (cat == NS_CAT_CUDA_PROFILER_RANGE) {
			ev->kind = NS_KIND_COUNTER;
			if (f->has_args && (rc = walk_object(ps, f->args.p, f->args.len, 2, counter_field, NULL, NULL, NULL)))
				return rc;
		}
		raw->kept = true;
		break;
	case NS_PH_I:
		if (!f->has_name || !f->has_ts)
			break;
		if (span_is(&f->name, "[memory]"))
			ev->kind = NS_KIND_MEMORY;
		else if (span_is(&f->name, "[OutOfMemory]"))
			ev->kind = NS_KIND_OOM;
		else
			break;
		raw->kept = true;
		t->profile_memory = true;
		break;
	case NS_PH_S:
	case NS_PH_F:
		if (is_untimed_launch(f, (enum ns_ph)raw->ph))
			t->n_untimed_launches++;
		if (cat != NS_CAT_AC2G || !f->has_id || !f->has_ts)
			break;
		if (!raw->flow_id.is_int)
			break; /* a string flow id cannot link to a correlation */
		ev->correlation = raw->flow_id.num;
		ev->kind = raw->ph == NS_PH_S ? NS_KIND_FLOW_S : NS_KIND_FLOW_F;
		raw->kept = true;
		break;
	case NS_PH_M:
		if (ps->opts && ps->opts->sink && (rc = decode_meta(ps, f, raw)))
			return rc;
		if (f->has_name && span_is(&f->name, "thread_name") && f->has_args) {
			struct span thread_name = { 0 };
			rc = walk_object(ps, f->args.p, f->args.len, 2, name_field, NULL, &thread_name, NULL);
			if (rc)
				return rc;
			if (thread_name.is_string && intern_span(ps, &thread_name, &t->threads[ev->thread].name))
				return intern_failed(ps, thread_name.p, thread_name.len);
			ps->named_empty |= thread_name.is_string && t->threads[ev->thread].name == 0;
		}
		break;
	default:
		break;
	}
	return 0;
}

/* A slice without args "flops" gets PyTorch's FLOPs of its shapes, if
 * its op has a formula (common/flops.h) and they are > 0. */
static void shape_flops(const struct ns_trace *t, struct ns_row_event *raw)
{
	struct ns_event *ev = &raw->ev;
	if (ev->kind != NS_KIND_SLICE || raw->flops != NS_NONE || !ev->input_dims)
		return;
	int64_t flops = ns_flops_of_shapes(ns_strtab_get(&t->strings, ev->name), ns_strtab_len(&t->strings, ev->name),
					   ns_strtab_get(&t->strings, ev->input_dims),
					   ns_strtab_len(&t->strings, ev->input_dims), raw->concrete, raw->concrete_len);
	if (flops > 0) {
		raw->flops = flops;
		ev->flags |= NS_EV_FLOPS_SHAPES;
	}
}

/* Adds a kept event to the trace, within the limits on the sums of
 * durations and bytes. */
static int keep_event(struct parser *ps, const char *p, struct ns_row_event *raw)
{
	struct ns_event *ev = &raw->ev;
	struct ns_trace *t = ps->t;

	if (ns_event_is_memory(ev)) {
		/* (in place of the ids: a memory record links to nothing) */
		ev->mem.bytes = raw->bytes;
		ev->mem.device_type = raw->mem_device_type;
	}
	int64_t bytes = raw->bytes < 0 ? (raw->bytes == INT64_MIN ? INT64_MAX : -raw->bytes) : raw->bytes;
	if (ev->dur_ns > SUM_LIMIT - ps->dur_sum || bytes > SUM_LIMIT - ps->bytes_sum)
		return fail_at(ps, p, ev->dur_ns > SUM_LIMIT - ps->dur_sum
					      ? "the events' durations add up to more than 2^56 ns (2.3 years)"
					      : "the memory events' \"Bytes\" add up to more than 2^56");
	ps->dur_sum += ev->dur_ns;
	ps->bytes_sum += bytes;
	shape_flops(t, raw);
	if (ns_trace_push(t, ev) || (raw->flops != NS_NONE && ns_trace_push_flops(t, raw->flops)))
		return ns_error_set(ps->err, NS_ERR_NOMEM, "%s: out of memory after %zu events", t->path,
				    t->n_events);
	t->has_cat[ev->cat] = true;
	/* (an event without args keeps its tid as the stream: see ns_dev_args) */
	if (ev->kind == NS_KIND_SLICE && ns_cat_on_stream(ev->cat) && raw->args) {
		struct ns_dev_args a = { (uint32_t)(t->n_events - 1), raw->stream, raw->copy_bytes };
		if (ns_trace_push_dev_args(t, &a))
			return ns_error_set(ps->err, NS_ERR_NOMEM, "%s: out of memory after %zu events", t->path,
					    t->n_events);
	}
	return 0;
}

/* Hands the row of the element just read to the sinks, and the flow it
 * closes, if any. */
static int hand_out(struct parser *ps, const struct ns_row_event *raw)
{
	const struct ns_ingest_opts *o = ps->opts;
	int rc = 0;
	if (o && o->sink && (rc = o->sink(o->sink_ctx, ps->t, raw, ps->err)))
		return rc;
	if (o && o->flow_sink && raw->flow_id.present)
		rc = ns_flow_pairs_add(&ps->flows, ps->t, raw, o->flow_sink, o->sink_ctx, ps->err);
	return rc;
}

/* Makes the event that read_event read from p a traceEvents element:
 * checks and converts its fields, keeps it if the analysis uses it, and
 * hands it to the sink. */
static int finish_event(struct parser *ps, const char *p, const struct event_fields *f,
			struct ns_row_event *raw)
{
	int rc;
	if ((rc = convert_fields(ps, f, raw)) || (rc = classify_event(ps, p, f, raw)))
		return rc;
	if (!raw->kept || raw->ev.kind != NS_KIND_SLICE)
		raw->flops = NS_NONE; /* FLOPs are an op's (events.flops) */
	if (raw->kept && (rc = keep_event(ps, p, raw)))
		return rc;
	ps->t->n_trace_events++;
	return hand_out(ps, raw);
}

static void note_truncation(struct parser *ps, uint64_t offset)
{
	if (ps->t->truncated_at < 0)
		ps->t->truncated_at = (int64_t)offset;
}

/* At a NUL byte where JSON should continue: 1 if only NULs follow (the
 * zero-filled tail a crash can leave on some file systems, which counts as
 * the end of the file: truncation is noted at the first NUL), 0 if not (the
 * scanner is then at the first other byte), -1 on a read error. */
static int nul_tail(struct parser *ps)
{
	uint64_t at = ps->sc.base + ps->sc.pos;
	int r = ns_scan_rest_is_nul(&ps->sc, ps->err);
	if (r == 1)
		note_truncation(ps, at);
	return r;
}

#define AT_CUT (-1)

/* A byte the grammar does not allow here (c from ns_scan_peek): AT_CUT when
 * the text ends here (the end of the input, or NUL padding to the end: a
 * cut-off file), else the error status (NULs inside the text, a read error,
 * or `expected`). */
static int unexpected(struct parser *ps, int c, const char *expected)
{
	struct ns_scan *sc = &ps->sc;
	if (c == 0) {
		int r = nul_tail(ps);
		if (r != 0)
			return r > 0 ? AT_CUT : (int)ps->err->status;
		return fail_at(ps, sc->buf + sc->pos, "NUL bytes inside the JSON text (before this point)");
	}
	if (c == -1)
		return AT_CUT;
	if (c == -2)
		return ps->err->status;
	return fail_at(ps, sc->buf + sc->pos, expected);
}

/* Reads the next element of traceEvents into *f and *raw, and its extent in
 * the buffer into [*start, *end). The element is parsed where it lies, up
 * to the end of what is buffered. Only if that fails (the buffer ends
 * inside it, or it is malformed) is it framed first, which reads more input
 * as needed, and parsed again, with the failed attempt undone (its strings,
 * its message). Framing every element read each byte twice: a sixth of a
 * report's time. */
static int next_event(struct parser *ps, struct event_fields *f, struct ns_row_event *raw, size_t *start,
		      size_t *end)
{
	struct ns_scan *sc = &ps->sc;
	size_t len;
	int rc, c = ns_scan_peek(sc, ps->err);
	if (c == -2)
		return ps->err->status;
	if (c == '{') {
		struct ns_error *err = ps->err, attempt;
		uint32_t n_strings = ps->t->strings.count;
		ps->err = &attempt;
		ps->attempt = true;
		rc = read_event(ps, sc->buf + sc->pos, sc->len - sc->pos, f, raw, &len);
		ps->attempt = false;
		ps->err = err;
		if (rc == 0) {
			*start = sc->pos;
			*end = sc->pos + len;
			return 0;
		}
		ns_strtab_truncate(&ps->t->strings, n_strings);
		compact_forget(ps, n_strings);
	}
	if ((rc = ns_scan_value(sc, start, end, ps->err)))
		return rc;
	if (sc->buf[*start] != '{')
		return fail_at(ps, sc->buf + *start, "expected an event object in \"traceEvents\"");
	return read_event(ps, sc->buf + *start, *end - *start, f, raw, &len);
}

static int boundary_reached(struct parser *ps);
/* boundary_reached: the main parse appended the part that ends the array,
 * or a part's parse arrived at the next part's start */
#define SPLIT_READ (-2)

/* Streams the elements of an array from the scanner position (at the first
 * one) through its closing ']'. */
static int parse_elements(struct parser *ps)
{
	struct ns_scan *sc = &ps->sc;
	struct event_fields f;
	struct ns_row_event raw;
	int c;
	for (;;) {
		size_t start, end;
		int rc;
		if (ps->stop && atomic_load_explicit(ps->stop, memory_order_relaxed))
			return NS_ERR_IO; /* (the part's parse, not needed: nothing is reported) */
		if (ps->split && sc->base + sc->pos >= ps->split_check && (rc = boundary_reached(ps)))
			return rc == SPLIT_READ ? 0 : rc;
		rc = next_event(ps, &f, &raw, &start, &end);
		if (rc == NS_SCAN_TRUNCATED) {
			note_truncation(ps, sc->base + sc->pos);
			return 0;
		}
		if (rc || (rc = finish_event(ps, sc->buf + start, &f, &raw)))
			return rc;
		ns_scan_advance(sc, end - sc->pos);
		if (ps->opts && ps->opts->progress && sc->base + sc->pos >= ps->next_progress) {
			ps->opts->progress(ps->opts->progress_ctx, ns_source_consumed(sc->src),
					   ns_source_size(sc->src));
			ps->next_progress = sc->base + sc->pos + PROGRESS_STEP;
		}
		int more = ns_scan_list_next(sc, ']', &c, ps->err);
		if (more > 0)
			continue;
		if (more == 0)
			return 0;
		rc = unexpected(ps, c, "expected ',' or ']' after an event");
		if (rc == AT_CUT)
			note_truncation(ps, sc->base + sc->pos);
		return rc == AT_CUT ? 0 : rc;
	}
}

/* One file on two cores (docs/performance.md "One file on two cores"):
 * traceEvents is cut into parts at element boundaries, and a second thread
 * parses parts from the last one backwards, each into a trace of its own,
 * from its boundary to the next part's (or the array's ']'), while the
 * main parse reads from the start. A boundary is a guess ('}' ',' '{' with
 * only whitespace between may lie inside a string): a part is used only
 * when the main parse, element by element, arrives at its very ',', either
 * by reading or at the end of a part it used. Then the part is appended to
 * the trace as if the main parse had read it (ns_trace_append: its strings,
 * threads and events in the order that parse would have added them), and
 * the main parse goes on from the part's end. A part the other thread has
 * not begun is read by the main parse itself, and so is one that cannot be
 * used (damaged, cut, or with what appending cannot reproduce), so the
 * result is always the single-threaded one. Many parts, not two, because
 * the two threads do not read a byte equally fast (the second half of a
 * Kineto file, CUPTI's records, is cheaper than PyTorch's ops, and the
 * cores of a shared machine are not equally fast): they meet wherever they
 * meet, and the main parse waits at most for the one part being read. */
#define SPLIT_PART_BYTES (16u << 20) /* the parts' size when not asked */
#define SPLIT_PARTS_MAX 64
#define SPLIT_SEARCH_MAX (16u << 20) /* bytes searched for a boundary */

enum part_state {
	PART_WAITING,
	PART_READING, /* by the second thread */
	PART_READ,
	PART_MAIN,    /* read by the main parse itself */
};

struct split_part {
	uint64_t comma;         /* the ',' before its first element */
	enum part_state state;  /* (under split.lock) */
	struct ns_trace t;
	bool whole;             /* read to its end without error or cut */
	size_t next;            /* the part at whose start it ended, or split.n: the array's ']' */
	uint64_t end, end_line, end_line_start; /* where it ended, lines from the ',' */
	int64_t dur_sum, bytes_sum;
	bool named_empty;
	struct ns_error err;
};

struct split {
	pthread_t thread;
	bool started;
	struct ns_source *src;      /* the thread's reader over the same bytes */
	const char *path;
	struct ns_ingest_opts opts; /* the main parse's, without sinks or progress */
	atomic_bool stop;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool search_done;           /* (under lock) the parts' boundaries are known */
	size_t n;                   /* parts with a boundary, in file order */
	uint64_t *from;             /* n_from places to look for one from (then n <= n_from) */
	size_t n_from;
	struct split_part part[];
};

/* The offset of the ',' of the first "}" "," "{" (whitespace allowed
 * between) whose ',' lies in [from, limit), or UINT64_MAX. */
static uint64_t split_find(struct split *sp, uint64_t from, uint64_t limit)
{
	char buf[1 << 16];
	uint64_t at = from, comma = UINT64_MAX;
	int state = 0; /* 0: before '}', 1: after it, 2: after the ',' */
	struct ns_error err = { 0 };
	if (ns_source_seek(sp->src, from, &err))
		return UINT64_MAX;
	while (at < limit || state == 2) {
		ssize_t got = ns_source_read(sp->src, buf, sizeof(buf), &err);
		if (got <= 0)
			break;
		for (ssize_t i = 0; i < got; i++, at++) {
			char c = buf[i];
			if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
				if (state == 0)
					continue;
			} else if (state == 1 && c == ',' && at < limit) {
				state = 2;
				comma = at;
			} else if (state == 2 && c == '{') {
				return comma;
			} else if (at >= limit) {
				return UINT64_MAX;
			} else {
				state = c == '}';
			}
		}
	}
	return UINT64_MAX;
}

/* The first part that starts at or after `here` (the offset of the parse,
 * before an element), or NULL; the ones passed over started inside an
 * element. The parse looks for it from its start (split_check). */
static struct split_part *next_part(struct parser *ps, uint64_t here)
{
	struct split *sp = ps->split;
	while (ps->split_next < sp->n && sp->part[ps->split_next].comma + 1 < here)
		ps->split_next++;
	struct split_part *pt = ps->split_next < sp->n ? &sp->part[ps->split_next] : NULL;
	ps->split_check = pt ? pt->comma + 1 : UINT64_MAX;
	return pt;
}

/* The part's parse has arrived at or past the next part's start: 0 to read
 * on, SPLIT_READ when at that very ','. */
static int part_reached(struct parser *ps, uint64_t here)
{
	const struct split_part *pt = next_part(ps, here);
	return pt && pt->comma + 1 == here ? SPLIT_READ : 0;
}

/* Parses part i with the second thread's scanner (its window is kept
 * from part to part). */
static void read_part(struct split *sp, size_t i, struct ns_scan *sc)
{
	struct split_part *pt = &sp->part[i];
	struct parser ps = { .sc = *sc, .t = &pt->t, .opts = &sp->opts, .err = &pt->err, .stop = &sp->stop,
			     .split = sp, .split_next = i + 1, .in_part = true };
	next_part(&ps, pt->comma + 1);
	int rc = ns_scan_seek(&ps.sc, pt->comma + 1, 1, pt->comma + 1, &pt->err);
	if (!rc)
		rc = parse_elements(&ps);
	ns_scan_sync_lines(&ps.sc);
	pt->end = ps.sc.base + ps.sc.pos;
	pt->next = ps.split_next < sp->n && pt->end == sp->part[ps.split_next].comma + 1 ? ps.split_next : sp->n;
	pt->end_line = ps.sc.line;
	pt->end_line_start = ps.sc.line_start;
	pt->dur_sum = ps.dur_sum;
	pt->bytes_sum = ps.bytes_sum;
	pt->named_empty = ps.named_empty;
	/* (cut or damaged: the main parse finds and tells where) */
	pt->whole = rc == 0 && pt->t.truncated_at < 0;
	*sc = ps.sc; /* (its window may have grown) */
	release_buffers(&ps);
}

/* The second thread: finds the boundaries, then reads the parts from the
 * last one back, until it meets the main parse. */
static void *split_main(void *arg)
{
	struct split *sp = arg;
	struct ns_scan sc;
	struct ns_error err = { 0 };
	size_t n = 0;
	for (size_t i = 0; i < sp->n_from; i++) {
		uint64_t limit = i + 1 < sp->n_from ? sp->from[i + 1] : UINT64_MAX;
		if (limit - sp->from[i] > SPLIT_SEARCH_MAX)
			limit = sp->from[i] + SPLIT_SEARCH_MAX;
		uint64_t comma = split_find(sp, sp->from[i], limit);
		if (comma != UINT64_MAX)
			sp->part[n++].comma = comma;
	}
	bool have_scanner = ns_scan_init(&sc, sp->path, sp->src, &err) == 0; /* (else the main parse reads all) */
	pthread_mutex_lock(&sp->lock);
	sp->n = n;
	sp->search_done = true;
	for (;;) {
		pthread_cond_broadcast(&sp->changed);
		while (n > 0 && sp->part[n - 1].state != PART_WAITING)
			n--;
		if (n == 0 || !have_scanner || atomic_load(&sp->stop))
			break;
		sp->part[n - 1].state = PART_READING;
		pthread_mutex_unlock(&sp->lock);
		read_part(sp, n - 1, &sc);
		pthread_mutex_lock(&sp->lock);
		sp->part[n - 1].state = PART_READ;
	}
	pthread_mutex_unlock(&sp->lock);
	if (have_scanner)
		ns_scan_release(&sc);
	return NULL;
}

/* x * num / den without overflow, for num <= den < 2^32. */
static uint64_t scaled(uint64_t x, uint64_t num, uint64_t den)
{
	return x / den * num + x % den * num / den;
}

/* Starts the second thread for a large seekable file; quietly none when it
 * cannot be had. The first part after the main parse's starts split_permille
 * of the way from here (the array's first element) to the end, and the rest
 * of the way is cut evenly. */
static void split_start(struct parser *ps)
{
	const struct ns_ingest_opts *o = ps->opts;
	struct ns_scan *sc = &ps->sc;
	uint64_t here = sc->base + sc->pos, size = ns_source_size(sc->src);
	if (!o || !o->split_min || o->sink || o->flow_sink || !ns_source_seekable(sc->src) || size < o->split_min ||
	    size <= here)
		return;
	uint64_t span = size - here, parts = o->split_parts ? o->split_parts : span / SPLIT_PART_BYTES;
	parts = parts < 2 ? 2 : parts > SPLIT_PARTS_MAX ? SPLIT_PARTS_MAX : parts;
	uint32_t first = o->split_permille && o->split_permille < 1000 ? o->split_permille : (uint32_t)(1000 / parts);
	struct split *sp = calloc(1, sizeof(*sp) + (parts - 1) * sizeof(sp->part[0]));
	struct ns_error err = { 0 };
	if (!sp || !(sp->from = malloc((parts - 1) * sizeof(*sp->from)))) {
		free(sp);
		return;
	}
	sp->n_from = parts - 1;
	for (size_t i = 0; i < sp->n_from; i++) {
		sp->from[i] = here + scaled(span, first * (parts - 1) + (1000 - first) * i, 1000 * (parts - 1));
		ns_trace_init(&sp->part[i].t);
	}
	sp->path = sc->path;
	sp->opts = *o;
	sp->opts.progress = NULL;
	pthread_mutex_init(&sp->lock, NULL);
	pthread_cond_init(&sp->changed, NULL);
	atomic_init(&sp->stop, false);
	ps->split = sp;
	ps->split_check = sp->from[0];
	if (ns_source_open_at(sc->src, sp->from[0], &sp->src, &err) == 0 &&
	    pthread_create(&sp->thread, NULL, split_main, sp) == 0)
		sp->started = true;
	else
		ps->split_check = UINT64_MAX; /* (never reached: dropped at the end) */
}

/* Stops the second thread, if any, and forgets the parts. */
static void split_drop(struct parser *ps)
{
	struct split *sp = ps->split;
	if (!sp)
		return;
	if (sp->started) {
		atomic_store(&sp->stop, true);
		pthread_join(sp->thread, NULL);
	}
	ns_source_close(sp->src);
	for (size_t i = 0; i < sp->n_from; i++)
		ns_trace_release(&sp->part[i].t);
	pthread_mutex_destroy(&sp->lock);
	pthread_cond_destroy(&sp->changed);
	free(sp->from);
	free(sp);
	ps->split = NULL;
}

/* Whether the part can be appended as the main parse would have read it:
 * what it holds that appending does not carry over (counters, whose sums
 * of doubles depend on the order; a thread named "" over a name) makes the
 * main parse read it itself, and so do sums past the limits, for the
 * error to name the event. */
static bool part_usable(const struct parser *ps, const struct split_part *pt)
{
	return pt->whole && pt->t.n_counters == 0 && pt->t.n_counter_values == 0 && pt->t.n_xwarn == 0 &&
	       !pt->named_empty && pt->dur_sum <= SUM_LIMIT - ps->dur_sum &&
	       pt->bytes_sum <= SUM_LIMIT - ps->bytes_sum;
}

/* Appends a part read by the second thread at the main parse's position
 * (its start), and moves the main parse to its end. */
static int append_part(struct parser *ps, struct split_part *pt)
{
	struct ns_scan *sc = &ps->sc;
	if (ns_trace_append(ps->t, &pt->t))
		return ns_error_set(ps->err, NS_ERR_NOMEM, "%s: out of memory after %zu events", ps->t->path,
				    ps->t->n_events);
	if (ps->t->split_at < 0)
		ps->t->split_at = (int64_t)(sc->base + sc->pos);
	ps->dur_sum += pt->dur_sum;
	ps->bytes_sum += pt->bytes_sum;
	ns_trace_release(&pt->t);
	ns_scan_sync_lines(sc);
	return ns_scan_seek(sc, pt->end, sc->line + pt->end_line - 1,
			    pt->end_line > 1 ? pt->end_line_start : sc->line_start, ps->err);
}

/* The main parse at or past the next part's start, before an element:
 * SPLIT_READ when it appended the part that ends the array, 0 to read on
 * (the parts it used appended), else an error. */
static int split_reached(struct parser *ps)
{
	struct split *sp = ps->split;
	struct ns_scan *sc = &ps->sc;
	int rc = 0;
	pthread_mutex_lock(&sp->lock);
	while (!sp->search_done)
		pthread_cond_wait(&sp->changed, &sp->lock);
	for (;;) {
		uint64_t here = sc->base + sc->pos;
		struct split_part *pt = next_part(ps, here);
		if (!pt || pt->comma + 1 > here)
			break;
		if (pt->state == PART_WAITING)
			pt->state = PART_MAIN;
		while (pt->state == PART_READING)
			pthread_cond_wait(&sp->changed, &sp->lock);
		if (pt->state != PART_READ || !part_usable(ps, pt)) {
			ps->split_next++; /* (read on through it) */
			continue;
		}
		pthread_mutex_unlock(&sp->lock);
		rc = append_part(ps, pt);
		pthread_mutex_lock(&sp->lock);
		if (rc || pt->next == sp->n) {
			rc = rc ? rc : SPLIT_READ;
			break;
		}
		ps->split_next = pt->next;
	}
	pthread_mutex_unlock(&sp->lock);
	return rc;
}

static int boundary_reached(struct parser *ps)
{
	return ps->in_part ? part_reached(ps, ps->sc.base + ps->sc.pos) : split_reached(ps);
}

/* Streams the array at the scanner position (which is at '['). */
static int parse_events_array(struct parser *ps)
{
	struct ns_scan *sc = &ps->sc;
	int c;
	ns_scan_advance(sc, 1);
	c = ns_scan_peek(sc, ps->err);
	if (c == ']') {
		ns_scan_advance(sc, 1);
		return 0;
	}
	if (c >= 0 && !ps->stop)
		split_start(ps);
	int rc = parse_elements(ps);
	split_drop(ps);
	return rc;
}

static int add_meta(struct parser *ps, ns_str key, const char *val, size_t len)
{
	struct ns_trace *t = ps->t;
	ns_str v;
	if (len > NS_META_VALUE_MAX)
		return 0;
	for (size_t i = 0; i < t->n_meta; i++) {
		if (t->meta[2 * i] == key) { /* a repeated key: the last value counts */
			if (intern_text(ps, val, len, &v))
				return -1;
			t->meta[2 * i + 1] = v;
			return 0;
		}
	}
	if (t->n_meta == t->cap_meta) {
		size_t cap = t->cap_meta ? t->cap_meta * 2 : 16;
		ns_str *m = realloc(t->meta, cap * 2 * sizeof(*m));
		if (!m)
			return -1;
		t->meta = m;
		t->cap_meta = cap;
	}
	if (intern_text(ps, val, len, &v))
		return -1;
	t->meta[2 * t->n_meta] = key;
	t->meta[2 * t->n_meta + 1] = v;
	t->n_meta++;
	return 0;
}

/* distributedInfo: {"rank": 3, "world_size": 8, ...} */
static int dist_field(struct parser *ps, void *ctx, const struct span *key, const struct span *val,
		      const char *val_start)
{
	(void)ctx;
	(void)val_start;
	if (span_is(key, "rank"))
		ns_parse_int64(val->p, val->len, &ps->t->rank);
	else if (span_is(key, "world_size"))
		ns_parse_int64(val->p, val->len, &ps->t->world_size);
	return 0;
}

/* The extent of the value at the scanner: 0, AT_CUT where the file ends
 * first, or an error status. */
static int next_value(struct parser *ps, size_t *start, size_t *end)
{
	int rc = ns_scan_value(&ps->sc, start, end, ps->err);
	return rc == NS_SCAN_TRUNCATED ? AT_CUT : rc;
}

/* Reads a key of the top-level object and the ':' after it: 0 with
 * *key_id set, AT_CUT where the file ends, or an error status. */
static int read_top_key(struct parser *ps, ns_str *key_id)
{
	struct ns_scan *sc = &ps->sc;
	size_t start, end;
	int rc = next_value(ps, &start, &end);
	if (rc)
		return rc;
	struct span key = { .p = sc->buf + start + 1, .len = end - start - 2, .is_string = true };
	bool esc;
	ns_json_string_end(sc->buf, end, start, &esc);
	key.escaped = esc;
	if (intern_span(ps, &key, key_id))
		return intern_failed(ps, key.p, key.len);
	ns_scan_advance(sc, end - sc->pos);
	int c = ns_scan_peek(sc, ps->err);
	if (c == -1)
		return AT_CUT;
	if (c != ':')
		return fail_at(ps, sc->buf + sc->pos, "expected ':' after a key");
	ns_scan_advance(sc, 1);
	return 0;
}

/* The value of "traceEvents": 0, AT_CUT, or an error status. */
static int read_trace_events(struct parser *ps, bool saw_events)
{
	struct ns_scan *sc = &ps->sc;
	int c = ns_scan_peek(sc, ps->err);
	if (saw_events && c >= 0)
		return fail_at(ps, sc->buf + sc->pos, "\"traceEvents\" appears twice (a second array is not read)");
	if (c == -1)
		return AT_CUT;
	if (c == -2)
		return ps->err->status;
	if (c != '[')
		return fail_at(ps, sc->buf + sc->pos, "expected an array for \"traceEvents\"");
	return parse_events_array(ps);
}

/* Any other top-level value: kept as metadata; the few the analysis reads
 * (base time, profile_memory, distributedInfo) are read. 0, AT_CUT, or an
 * error status. */
static int read_top_meta(struct parser *ps, ns_str key_id, const char *key_text)
{
	struct ns_scan *sc = &ps->sc;
	struct ns_trace *t = ps->t;
	size_t start, end;
	int rc = next_value(ps, &start, &end);
	if (rc)
		return rc;
	const char *v = sc->buf + start;
	size_t vlen = end - start;
	if (vlen == 0 || ns_json_skip_value(v, vlen, 0, 1) != vlen)
		return fail_at(ps, v, "invalid JSON value");
	if (strcmp(key_text, "baseTimeNanoseconds") == 0) {
		t->has_base_time = ns_parse_int64(v, vlen, &t->base_time_ns) == 0;
		/* (an epoch time: base + ts, and the difference of two bases, must not overflow) */
		if (t->has_base_time && (t->base_time_ns < 0 || t->base_time_ns >= NS_TIME_LIMIT_NS))
			return fail_at(ps, v, "\"baseTimeNanoseconds\" is out of range (0 to 2^62 ns, "
					      "about the year 2116)");
	} else if (strcmp(key_text, "profile_memory") == 0) {
		t->profile_memory |= vlen == 1 && v[0] == '1';
	} else if (strcmp(key_text, "distributedInfo") == 0 && v[0] == '{') {
		rc = walk_object(ps, v, vlen, 1, dist_field, NULL, NULL, NULL);
		if (rc)
			return rc;
	}
	if (add_meta(ps, key_id, v, vlen))
		return ns_error_set(ps->err, NS_ERR_NOMEM, "out of memory");
	ns_scan_advance(sc, end - sc->pos);
	return 0;
}

static int parse_top_object(struct parser *ps)
{
	struct ns_scan *sc = &ps->sc;
	bool saw_events = false;
	int c, rc;
	ns_scan_advance(sc, 1);
	for (;;) {
		c = ns_scan_peek(sc, ps->err);
		if (c == '}')
			break;
		rc = c == '"' ? 0 : unexpected(ps, c, "expected a quoted key in the top-level object");
		ns_str key_id;
		if (!rc)
			rc = read_top_key(ps, &key_id);
		if (rc == AT_CUT)
			goto truncated;
		if (rc)
			return rc;
		const char *key_text = ns_strtab_get(&ps->t->strings, key_id);
		if (strcmp(key_text, "traceEvents") == 0) {
			rc = read_trace_events(ps, saw_events);
			if (rc == AT_CUT)
				goto truncated;
			if (rc)
				return rc;
			saw_events = true;
			if (ps->t->truncated_at >= 0)
				return 0;
		} else if ((rc = read_top_meta(ps, key_id, key_text)) != 0) {
			if (rc == AT_CUT)
				goto truncated;
			return rc;
		}
		c = ns_scan_peek(sc, ps->err);
		if (c == ',') {
			ns_scan_advance(sc, 1);
			continue;
		}
		if (c == '}')
			break;
		rc = unexpected(ps, c, "expected ',' or '}' in the top-level object");
		if (rc == AT_CUT)
			goto truncated;
		return rc;
	}
	ns_scan_advance(sc, 1);
	if (!saw_events) {
		ns_error_set(ps->err, NS_ERR_UNSUPPORTED,
			     "%s: no \"traceEvents\" array: not a Kineto/Chrome trace", ps->t->path);
		if (ns_trace_meta(ps->t, "nodes"))
			ns_error_hint(ps->err, "this looks like a PyTorch Execution Trace; pass the Kineto "
					       "trace (the *.pt.trace.json written by torch.profiler) instead");
		return NS_ERR_UNSUPPORTED;
	}
	return 0;
truncated:
	note_truncation(ps, sc->base + sc->pos);
	if (!saw_events)
		return ns_error_set(ps->err, NS_ERR_INPUT, "%s: file ends at byte %llu before \"traceEvents\"",
				    ps->t->path, (unsigned long long)(sc->base + sc->pos));
	return 0;
}

/* After the top-level value: only whitespace or NUL padding may follow.
 * Reading to the end also makes a compressed source check its end (the
 * gzip CRC; a missing trailer counts as truncation). Sets *extra_at to the
 * offset of anything else (which is ignored). */
static int check_end(struct parser *ps, int64_t *extra_at)
{
	struct ns_scan *sc = &ps->sc;
	int c = ns_scan_peek(sc, ps->err);
	if (c == 0) {
		int r = ns_scan_rest_is_nul(sc, ps->err);
		if (r < 0)
			return ps->err->status;
		if (r == 1)
			c = -1;
	}
	if (c == -2)
		return ps->err->status;
	if (c == -1) {
		if (ns_source_truncated(sc->src))
			note_truncation(ps, sc->base + sc->pos);
		return 0;
	}
	*extra_at = (int64_t)(sc->base + sc->pos);
	return 0;
}

/* A file in which no element is an event the analysis reads: an empty
 * table would look like a success, so it is an unsupported input, or a
 * damaged one when it was cut before its first complete event. */
static int no_events(const struct ns_trace *t, struct ns_error *err)
{
	if (t->truncated_at >= 0) /* damaged rather than unsupported */
		return ns_error_set(err, NS_ERR_INPUT,
				    "%s: truncated at byte %lld before its first complete event: nothing to report",
				    t->path, (long long)t->truncated_at);
	if (t->n_trace_events == 0)
		ns_error_set(err, NS_ERR_UNSUPPORTED, "%s: the trace has no events: nothing to report", t->path);
	else
		ns_error_set(err, NS_ERR_UNSUPPORTED,
			     "%s: none of its %llu events is one neuron-stats reads (a \"ph\": \"X\" event of a "
			     "Kineto category, a legacy autograd-profiler op, a [memory] record): nothing to report",
			     t->path, (unsigned long long)t->n_trace_events);
	ns_error_hint(err, "neuron-stats reads the trace.json that torch.profiler (Kineto) or the legacy autograd "
			   "profiler's export_chrome_trace() writes (docs/cli.md \"Inputs\")");
	return NS_ERR_UNSUPPORTED;
}

/* Parses the trace in src (owned: closed here) into t. */
static int ingest_source(const char *path, struct ns_source *src, struct ns_trace *t,
			 const struct ns_ingest_opts *opts, bool *read_to_end, struct ns_error *warn,
			 struct ns_error *err)
{
	struct parser ps = { .t = t, .opts = opts, .err = err };
	int rc, c;
	ns_flow_pairs_init(&ps.flows);

	if (opts && opts->read_chunk)
		ns_source_set_max_read(src, opts->read_chunk);
	rc = ns_scan_init(&ps.sc, path, src, err);
	if (rc)
		goto out;
	c = ns_scan_peek(&ps.sc, err);
	if (c == -2) {
		rc = err->status;
	} else if (c == -1) {
		rc = ns_error_set(err, NS_ERR_INPUT, "%s: empty file%s", path,
				  ns_source_truncated(src) ? " (the compressed stream is truncated)" : "");
	} else if (c == '[') {
		t->legacy_array = true;
		rc = parse_events_array(&ps);
	} else if (c == '{') {
		rc = parse_top_object(&ps);
	} else {
		char where[600];
		ns_scan_where(&ps.sc, ps.sc.pos, where, sizeof(where));
		rc = ns_error_set(err, NS_ERR_INPUT, "%s: not a JSON trace (expected '{' or '[')", where);
	}
	int64_t extra_at = -1;
	if (rc == 0 && t->truncated_at < 0)
		rc = check_end(&ps, &extra_at);
	if (rc == 0 && opts && opts->flow_sink) /* (the starts never closed) */
		rc = ns_flow_pairs_finish(&ps.flows, t, opts->flow_sink, opts->sink_ctx, err);
	if (rc == 0 && extra_at >= 0)
		ns_error_set(warn, NS_OK, "%s: data after the end of the JSON text at byte %lld is ignored", path,
			     (long long)extra_at);
	if (rc == 0 && t->truncated_at >= 0) {
		const char *why = ns_source_truncated(src) ? "the compressed stream is truncated" : "the file ends early";
		if (opts && opts->strict) {
			rc = ns_error_set(err, NS_ERR_INPUT,
					  "%s: truncated at byte %lld (%s); %llu complete events read", path,
					  (long long)t->truncated_at, why, (unsigned long long)t->n_trace_events);
		} else {
			ns_error_set(warn, NS_OK,
				     "%s: truncated at byte %lld (%s); using the %llu complete events before it",
				     path, (long long)t->truncated_at, why,
				     (unsigned long long)t->n_trace_events);
		}
	}
	if (rc == 0 && t->n_events == 0 && t->n_flows == 0)
		rc = no_events(t, err);
	if (rc == 0)
		ns_trace_trim(t);
out:
	ns_scan_release(&ps.sc);
	*read_to_end = ns_source_ended(src);
	ns_source_close(src);
	ns_flow_pairs_release(&ps.flows);
	release_buffers(&ps);
	return rc;
}

/* The trace is named after its input (messages, the store). */
static int name_trace(struct ns_trace *t, const char *name, struct ns_error *err)
{
	free(t->path);
	t->path = strdup(name);
	return t->path ? 0 : ns_error_set(err, NS_ERR_NOMEM, "out of memory");
}

/* A trace file, or a trace in memory (bytes, len). */
struct input {
	const char *name;
	bool in_memory;
	const void *bytes;
	size_t len;
};

/* Opens the input, names t after it, and ingests it. fast: gzip by ISA-L
 * (ns_source_fast_gzip); *stands is false when ISA-L was used and did not
 * read the input to its end (an error, or a parse that stopped before:
 * data after the JSON text). */
static int ingest_input(const struct input *in, struct ns_trace *t, const struct ns_ingest_opts *opts, bool fast,
			bool *stands, struct ns_error *warn, struct ns_error *err)
{
	uint64_t max_out = opts ? opts->max_decompressed : 0;
	uint32_t max_ratio = opts ? opts->max_ratio : 0;
	struct ns_source *src = NULL;
	int rc = name_trace(t, in->name, err);
	*stands = true; /* (a file that does not open was not read by ISA-L) */
	if (!rc)
		rc = in->in_memory ? ns_source_open_mem(in->bytes, in->len, in->name, max_out, max_ratio, &src, err)
			       : ns_source_open(in->name, max_out, max_ratio, &src, err);
	if (rc)
		return rc;
	bool read_to_end = false, fast_used = fast && ns_source_fast_gzip(src);
	rc = ingest_source(in->name, src, t, opts, &read_to_end, warn, err);
	*stands = !fast_used || (!rc && read_to_end);
	return rc;
}

/* ingest_input with gzip by ISA-L, unless rows go to a sink (they could
 * not be taken back) or opts ask for zlib. ISA-L gives a sound stream's
 * bytes, but not zlib's where it is damaged or cut: there it may decode
 * bytes past the place zlib stops at, which the parse has read by then.
 * So its load is kept only when it read the input to the end without an
 * error (every member's CRC checked); else zlib reads the input again,
 * and its load, error or warning is the one given. */
static int ingest(const struct input *in, struct ns_trace *t, const struct ns_ingest_opts *opts,
		  struct ns_error *warn, struct ns_error *err)
{
	bool fast = !(opts && (opts->sink || opts->flow_sink || opts->gzip_zlib)), stands;
	struct ns_error warn_before = warn ? *warn : (struct ns_error){ 0 };
	int rc = ingest_input(in, t, opts, fast, &stands, warn, err);
	if (stands)
		return rc;
	ns_trace_release(t);
	ns_trace_init(t);
	if (warn)
		*warn = warn_before;
	*err = (struct ns_error){ 0 };
	return ingest_input(in, t, opts, false, &stands, warn, err);
}

int ns_ingest_file(const char *path, struct ns_trace *t, const struct ns_ingest_opts *opts,
		   struct ns_error *warn, struct ns_error *err)
{
	return ingest(&(struct input){ .name = path }, t, opts, warn, err);
}

int ns_ingest_mem(const void *bytes, size_t len, const char *name, struct ns_trace *t,
		  const struct ns_ingest_opts *opts, struct ns_error *warn, struct ns_error *err)
{
	return ingest(&(struct input){ .name = name, .in_memory = true, .bytes = bytes, .len = len }, t, opts, warn, err);
}
