/* Streaming over export JSON (files of 100s of MB, often one line): the
 * top-level object is walked key by key with ingest's scanner, arrays
 * element by element, so memory is bounded by the largest element. */
#include "ntff/ntff-internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "ingest/scan.h"
#include "ingest/source.h"

#define KEY_MAX 256

static int fail(struct ns_error *err, const struct ns_scan *sc, size_t i, const char *what)
{
	return ns_error_set(err, NS_ERR_INPUT, "%s: byte %llu: %s", sc->path,
			    (unsigned long long)(sc->base + i), what);
}

/* The value at buf[start, end) as a jv. */
static struct jv span_value(const char *p, size_t n)
{
	struct jv v = { p, n, 'l', false };
	switch (p[0]) {
	case '"': {
		bool esc;
		ns_json_string_end(p, n, 0, &esc);
		v.p = p + 1;
		v.n = n >= 2 ? n - 2 : 0;
		v.type = 's';
		v.escaped = esc;
		break;
	}
	case '{': v.type = 'o'; break;
	case '[': v.type = 'a'; break;
	default:
		if (p[0] == '-' || (p[0] >= '0' && p[0] <= '9'))
			v.type = 'n';
		break;
	}
	return v;
}

#define AT_CUT NS_SCAN_TRUNCATED

/* The next value's span, checked to be one JSON value; AT_CUT if the input
 * ends inside it. */
static int next_value(struct ns_scan *sc, size_t *start, size_t *end, const char *what, struct ns_error *err)
{
	int rc = ns_scan_value(sc, start, end, err);
	if (rc)
		return rc;
	return ns_json_skip_value(sc->buf, *end, *start, 1) ? 0 : fail(err, sc, *start, what);
}

/* A byte the grammar does not allow here (c from ns_scan_peek): AT_CUT at
 * the end of the input, else the error status. */
static int unexpected(struct ns_scan *sc, int c, const char *expected, struct ns_error *err)
{
	if (c == -1)
		return AT_CUT;
	return c == -2 ? (int)err->status : fail(err, sc, sc->pos, expected);
}

/* Streams the array at the scanner position (at '['). */
static int stream_array(struct ns_scan *sc, const struct jstream_cb *cb, void *ctx, const char *key, bool deliver,
			struct ns_error *err)
{
	int c;
	ns_scan_advance(sc, 1);
	if ((c = ns_scan_peek(sc, err)) == ']') {
		ns_scan_advance(sc, 1);
		return 0;
	}
	for (;;) {
		size_t start, end;
		int rc = next_value(sc, &start, &end, "invalid JSON value in an array", err);
		if (rc)
			return rc;
		if (deliver) {
			struct jv v = span_value(sc->buf + start, end - start);
			if ((rc = cb->on_elem(ctx, key, &v, sc->base + start, err)))
				return rc;
		}
		ns_scan_advance(sc, end - sc->pos);
		int more = ns_scan_list_next(sc, ']', &c, err);
		if (more > 0)
			continue;
		return more == 0 ? 0 : unexpected(sc, c, "expected ',' or ']' in an array", err);
	}
}

static int stream_object(struct ns_scan *sc, const struct jstream_cb *cb, void *ctx, struct ns_error *err)
{
	char key[KEY_MAX];
	int c;
	ns_scan_advance(sc, 1);
	for (;;) {
		size_t start, end;
		c = ns_scan_peek(sc, err);
		if (c == '}')
			return 0;
		int rc = c == '"' ? ns_scan_value(sc, &start, &end, err)
				  : unexpected(sc, c, "expected a quoted key in the top-level object", err);
		if (rc)
			return rc;
		size_t body = end - start - 2;
		if (body >= KEY_MAX)
			body = KEY_MAX - 1;
		body = ns_json_unescape(sc->buf + start + 1, body, key);
		key[body] = '\0';
		ns_scan_advance(sc, end - sc->pos);
		c = ns_scan_peek(sc, err);
		if (c != ':')
			return unexpected(sc, c, "expected ':' after a key", err);
		ns_scan_advance(sc, 1);
		c = ns_scan_peek(sc, err);
		if (c == -1)
			return AT_CUT;
		int want = cb->on_key(ctx, key);
		if (c == '[' && want != JS_VALUE) {
			rc = stream_array(sc, cb, ctx, key, want == JS_ELEMENTS, err);
		} else if (!(rc = next_value(sc, &start, &end, "invalid JSON value", err))) {
			if (want != JS_SKIP) { /* JS_ELEMENTS here: the value is not an array */
				struct jv v = span_value(sc->buf + start, end - start);
				rc = cb->on_value(ctx, key, &v, sc->base + start, err);
			}
			ns_scan_advance(sc, end - sc->pos);
		}
		if (rc)
			return rc;
		c = ns_scan_peek(sc, err);
		if (c == ',') {
			ns_scan_advance(sc, 1);
			continue;
		}
		if (c == '}')
			return 0;
		return unexpected(sc, c, "expected ',' or '}' in the top-level object", err);
	}
}

int jstream_file(const char *path, const struct jstream_cb *cb, void *ctx, int64_t *truncated_at,
		 struct ns_error *err)
{
	struct ns_source *src = NULL;
	struct ns_scan sc;
	bool scan_ready = false;
	int rc, c;
	*truncated_at = -1;
	if (pq_export_is(path)) /* a table of a Parquet profile: its folder, as the JSON export (pqexport.c) */
		return pq_export_stream(path, cb, ctx, truncated_at, err);
	if ((rc = ns_source_open(path, 0, 0, &src, err)))
		return rc;
	if ((rc = ns_scan_init(&sc, path, src, err)))
		goto out;
	scan_ready = true;
	c = ns_scan_peek(&sc, err);
	if (c == -2)
		rc = err->status;
	else if (c == -1)
		rc = ns_error_set(err, NS_ERR_INPUT, "%s: byte 0: empty file", path);
	else if (c == '{')
		rc = stream_object(&sc, cb, ctx, err);
	else if (c == '[')
		rc = stream_array(&sc, cb, ctx, "", cb->on_key(ctx, "") == JS_ELEMENTS, err);
	else
		rc = fail(err, &sc, sc.pos, "not JSON (expected '{' or '[')");
	if (rc == AT_CUT) { /* salvaged: the caller reports where the file was cut */
		*truncated_at = (int64_t)(sc.base + sc.pos);
		rc = 0;
	}
out:
	if (scan_ready)
		ns_scan_release(&sc);
	ns_source_close(src);
	return rc;
}

bool jkey_is(const char *key, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(key, lit, len) == 0;
}

static int walk(const struct jv *v, char close, jfield_fn fn, int (*efn)(void *, const struct jv *), void *ctx,
		size_t *bad)
{
	const char *p = v->p;
	size_t n = v->n, i = ns_json_skip_ws(p, n, 1);
	if (i < n && p[i] == close)
		return 0;
	for (;;) {
		const char *key = NULL;
		size_t key_len = 0, e;
		if (close == '}') {
			bool esc;
			if (i >= n || p[i] != '"' || !(e = ns_json_string_end(p, n, i, &esc)))
				goto bad;
			key = p + i + 1;
			key_len = e - i - 2;
			i = ns_json_skip_ws(p, n, e);
			if (i >= n || p[i] != ':')
				goto bad;
			i = ns_json_skip_ws(p, n, i + 1);
		}
		if (i >= n || !(e = ns_json_skip_value(p, n, i, 1)))
			goto bad;
		struct jv val = span_value(p + i, e - i);
		int rc = close == '}' ? fn(ctx, key, key_len, &val) : efn(ctx, &val);
		if (rc)
			return rc;
		i = ns_json_skip_ws(p, n, e);
		if (i < n && p[i] == ',') {
			i = ns_json_skip_ws(p, n, i + 1);
			continue;
		}
		if (i < n && p[i] == close)
			return 0;
		goto bad;
	}
bad:
	*bad = i < n ? i : n;
	return -1;
}

int jobj_walk(const struct jv *obj, jfield_fn fn, void *ctx, size_t *bad)
{
	*bad = 0;
	if (obj->type != 'o')
		return -1;
	return walk(obj, '}', fn, NULL, ctx, bad);
}

int jarr_walk(const struct jv *arr, int (*fn)(void *ctx, const struct jv *v), void *ctx, size_t *bad)
{
	*bad = 0;
	if (arr->type != 'a')
		return -1;
	return walk(arr, ']', NULL, fn, ctx, bad);
}

bool jv_int(const struct jv *v, int64_t *out)
{
	if (v->type != 'n' && v->type != 's')
		return false;
	if (ns_parse_int64(v->p, v->n, out) == 0)
		return true;
	long double d;
	/* an integral value written with a fraction or exponent ("1.5e3") */
	if (!jv_num(v, &d) || d != floorl(d) || fabsl(d) > 9.2e18L)
		return false;
	*out = (int64_t)d;
	return true;
}

bool jv_num(const struct jv *v, long double *out)
{
	char buf[64], *end;
	if ((v->type != 'n' && v->type != 's') || v->n == 0 || v->n >= sizeof(buf))
		return false;
	memcpy(buf, v->p, v->n);
	buf[v->n] = '\0';
	*out = strtold(buf, &end);
	return end != buf && *end == '\0' && isfinite(*out);
}

size_t jv_text(const struct jv *v, char *out, size_t n)
{
	size_t len = v->n;
	if (v->type == 's' && v->escaped) {
		char *tmp = malloc(v->n + 1);
		if (!tmp) {
			out[0] = '\0';
			return 0;
		}
		len = ns_json_unescape(v->p, v->n, tmp);
		if (len >= n)
			len = n - 1;
		memcpy(out, tmp, len);
		free(tmp);
	} else {
		if (len >= n)
			len = n - 1;
		memcpy(out, v->p, len);
	}
	out[len] = '\0';
	return len;
}

char *jv_strdup(const struct jv *v)
{
	char *out = malloc(v->n + 1);
	if (out)
		jv_text(v, out, v->n + 1);
	return out;
}

int note_add(struct ns_notes *notes, const char *path, uint64_t offset, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	notes->total++;
	if (notes->n >= NS_NOTES_KEPT)
		return 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	const char *base = strrchr(path, '/');
	if (asprintf(&notes->v[notes->n], "%s: byte %llu: %s", base ? base + 1 : path,
		     (unsigned long long)offset, what) < 0) {
		notes->v[notes->n] = NULL;
		return -1;
	}
	notes->n++;
	return 0;
}

struct warn_ctx {
	char message[400], category[64];
};

static int warn_field(void *ctx, const char *key, size_t len, const struct jv *v)
{
	struct warn_ctx *w = ctx;
	if (jkey_is(key, len, "message") || jkey_is(key, len, "msg") || jkey_is(key, len, "warning"))
		jv_text(v, w->message, sizeof(w->message));
	else if (jkey_is(key, len, "category") || jkey_is(key, len, "type"))
		jv_text(v, w->category, sizeof(w->category));
	return 0;
}

static void warn_parse(const struct jv *v, struct warn_ctx *c)
{
	size_t bad;
	c->message[0] = c->category[0] = '\0';
	if (v->type == 'o')
		jobj_walk(v, warn_field, c, &bad);
	if (!c->message[0] && v->type != 'o')
		jv_text(v, c->message, sizeof(c->message));
	if (!c->message[0])
		snprintf(c->message, sizeof(c->message), "%.*s", (int)(v->n < 300 ? v->n : 300), v->p);
}

int explorer_warning_add(struct ns_notes *w, const char *path, const struct jv *v, uint64_t offset)
{
	struct warn_ctx c;
	warn_parse(v, &c);
	return note_add(w, path, offset, "%s%s%s", c.category, c.category[0] ? ": " : "", c.message);
}

int explorer_warning_keep(struct ns_xwarnings *w, const struct jv *v, uint64_t offset)
{
	struct warn_ctx c;
	w->total++;
	if (w->n >= NS_XWARN_KEPT)
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 8;
		struct ns_xwarn *grown = realloc(w->v, cap * sizeof(*grown));
		if (!grown)
			return -1;
		w->v = grown;
		w->cap = cap;
	}
	warn_parse(v, &c);
	struct ns_xwarn *x = &w->v[w->n];
	x->offset = offset;
	x->category = strdup(c.category);
	x->message = strdup(c.message);
	if (!x->category || !x->message) {
		free(x->category);
		free(x->message);
		return -1;
	}
	w->n++;
	return 0;
}

void xwarnings_release(struct ns_xwarnings *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].category);
		free(w->v[i].message);
	}
	free(w->v);
	memset(w, 0, sizeof(*w));
}

void notes_release(struct ns_notes *notes)
{
	for (size_t i = 0; i < notes->n; i++)
		free(notes->v[i]);
	memset(notes, 0, sizeof(*notes));
}

int keylist_add(char ***list, size_t *n, const char *key)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*list)[i], key) == 0)
			return 0;
	char **v = realloc(*list, (*n + 1) * sizeof(*v));
	if (!v)
		return -1;
	*list = v;
	if (!(v[*n] = strdup(key)))
		return -1;
	(*n)++;
	return 0;
}

void keylist_free(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

struct kv_build {
	struct ns_kv *kv;
	size_t n;
};

static int kv_field(void *ctx, const char *key, size_t key_len, const struct jv *v)
{
	struct kv_build *b = ctx;
	struct ns_kv *grown = realloc(b->kv, (b->n + 1) * sizeof(*grown));
	long double d;
	if (!grown)
		return -2;
	b->kv = grown;
	struct ns_kv *e = &b->kv[b->n];
	memset(e, 0, sizeof(*e));
	e->key = strndup(key, key_len);
	e->text = jv_strdup(v);
	if (!e->key || !e->text) {
		free(e->key);
		free(e->text);
		return -2;
	}
	e->is_num = jv_num(v, &d);
	e->num = e->is_num ? (double)d : 0;
	b->n++;
	return 0;
}

int kv_from_object(const struct jv *obj, struct ns_kv **out, size_t *n)
{
	struct kv_build b = { 0 };
	size_t bad;
	int rc = jobj_walk(obj, kv_field, &b, &bad);
	if (rc) {
		kv_free(b.kv, b.n);
		return rc;
	}
	*out = b.kv;
	*n = b.n;
	return 0;
}

void kv_free(struct ns_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].text);
	}
	free(kv);
}

const struct ns_kv *kv_find(const struct ns_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0)
			return &kv[i];
	return NULL;
}

long double unit_factor(enum ns_time_unit u)
{
	switch (u) {
	case NS_TU_US: return 1e3L;
	case NS_TU_MS: return 1e6L;
	case NS_TU_S: return 1e9L;
	default: return 1.0L;
	}
}

enum ns_time_unit unit_from_magnitude(long double v)
{
	v = fabsl(v);
	if (v >= 1e17L)
		return NS_TU_NS;
	if (v >= 1e14L)
		return NS_TU_US;
	if (v >= 1e11L)
		return NS_TU_MS;
	if (v >= 1e8L)
		return NS_TU_S;
	return NS_TU_NS;
}

int64_t to_ns(long double v, enum ns_time_unit u)
{
	long double ns = roundl(v * unit_factor(u));
	/* (llroundl of a value beyond int64 is unspecified; the bound is 2^63) */
	if (!isfinite(ns) || ns <= -9223372036854775808.0L || ns >= 9223372036854775808.0L)
		return NS_NONE;
	return (int64_t)ns;
}

int64_t ns_add_or_none(int64_t a, int64_t b)
{
	int64_t sum;
	if (a == NS_NONE || b == NS_NONE || __builtin_add_overflow(a, b, &sum) || sum == NS_NONE)
		return NS_NONE;
	return sum;
}

static int cmp_spans(const void *a, const void *b)
{
	const struct ns_span *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

size_t spans_merge(struct ns_span *s, size_t n)
{
	size_t o = 0;
	if (n == 0)
		return 0;
	qsort(s, n, sizeof(*s), cmp_spans);
	for (size_t i = 1; i < n; i++) {
		if (s[i].start <= s[o].end) {
			if (s[i].end > s[o].end)
				s[o].end = s[i].end;
		} else {
			s[++o] = s[i];
		}
	}
	return o + 1;
}
