/* The streaming JSON walker (walk.h): a top-level object key by key, an
 * array element by element, over the scanner (scan.h). */
#include "ingest/json/walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "ingest/json/scan.h"
#include "ingest/source.h"

#define KEY_MAX 256

static int fail(struct ns_error *err, const struct ns_scan *sc, size_t i, const char *what)
{
	return ns_error_set(err, NS_ERR_INPUT, "%s: byte %llu: %s", sc->path,
			    (unsigned long long)(sc->base + i), what);
}

/* The value at buf[start, end) as a jv. */
static struct ns_jv span_value(const char *p, size_t n)
{
	struct ns_jv v = { p, n, 'l', false };
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
static int stream_array(struct ns_scan *sc, const struct ns_json_stream_cb *cb, void *ctx, const char *key, bool deliver,
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
			struct ns_jv v = span_value(sc->buf + start, end - start);
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

static int stream_object(struct ns_scan *sc, const struct ns_json_stream_cb *cb, void *ctx, struct ns_error *err)
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
		if (c == '[' && want != NS_JS_VALUE) {
			rc = stream_array(sc, cb, ctx, key, want == NS_JS_ELEMENTS, err);
		} else if (!(rc = next_value(sc, &start, &end, "invalid JSON value", err))) {
			if (want != NS_JS_SKIP) { /* NS_JS_ELEMENTS here: the value is not an array */
				struct ns_jv v = span_value(sc->buf + start, end - start);
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

int ns_json_stream_file(const char *path, const struct ns_json_stream_cb *cb, void *ctx, int64_t *truncated_at,
			struct ns_error *err)
{
	struct ns_source *src = NULL;
	struct ns_scan sc;
	bool scan_ready = false;
	int rc, c;
	*truncated_at = -1;
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
		rc = stream_array(&sc, cb, ctx, "", cb->on_key(ctx, "") == NS_JS_ELEMENTS, err);
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

bool ns_jkey_is(const char *key, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(key, lit, len) == 0;
}

static int walk(const struct ns_jv *v, char close, ns_jfield_fn fn, int (*efn)(void *, const struct ns_jv *), void *ctx,
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
		struct ns_jv val = span_value(p + i, e - i);
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

int ns_jobj_walk(const struct ns_jv *obj, ns_jfield_fn fn, void *ctx, size_t *bad)
{
	*bad = 0;
	if (obj->type != 'o')
		return -1;
	return walk(obj, '}', fn, NULL, ctx, bad);
}

int ns_jarr_walk(const struct ns_jv *arr, int (*fn)(void *ctx, const struct ns_jv *v), void *ctx, size_t *bad)
{
	*bad = 0;
	if (arr->type != 'a')
		return -1;
	return walk(arr, ']', NULL, fn, ctx, bad);
}

bool ns_jv_int(const struct ns_jv *v, int64_t *out)
{
	if (v->type != 'n' && v->type != 's')
		return false;
	if (ns_parse_int64(v->p, v->n, out) == 0)
		return true;
	long double d;
	/* an integral value written with a fraction or exponent ("1.5e3") */
	if (!ns_jv_num(v, &d) || d != floorl(d) || fabsl(d) > 9.2e18L)
		return false;
	*out = (int64_t)d;
	return true;
}

bool ns_jv_num(const struct ns_jv *v, long double *out)
{
	char buf[64], *end;
	if ((v->type != 'n' && v->type != 's') || v->n == 0 || v->n >= sizeof(buf))
		return false;
	memcpy(buf, v->p, v->n);
	buf[v->n] = '\0';
	*out = strtold(buf, &end);
	return end != buf && *end == '\0' && isfinite(*out);
}

size_t ns_jv_text(const struct ns_jv *v, char *out, size_t n)
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

char *ns_jv_strdup(const struct ns_jv *v)
{
	char *out = malloc(v->n + 1);
	if (out)
		ns_jv_text(v, out, v->n + 1);
	return out;
}
