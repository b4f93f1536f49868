/* What the Neuron export readers share: the export stream (a JSON export,
 * or Explorer's Parquet tables read as one), notes and Explorer warnings,
 * key lists, flat key/values, time units and spans. The JSON walking itself
 * is ingest's (ingest/json/walk.h). */
#include "common/sort.h"
#include "ntff/ntff-internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int jstream_file(const char *path, const struct ns_json_stream_cb *cb, void *ctx, int64_t *truncated_at,
		 struct ns_error *err)
{
	if (pq_export_is(path)) { /* a table of a Parquet profile: its folder, as the JSON export (pqexport.c) */
		*truncated_at = -1;
		return pq_export_stream(path, cb, ctx, truncated_at, err);
	}
	return ns_json_stream_file(path, cb, ctx, truncated_at, err);
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

static int warn_field(void *ctx, const char *key, size_t len, const struct ns_jv *v)
{
	struct warn_ctx *w = ctx;
	if (ns_jkey_is(key, len, "message") || ns_jkey_is(key, len, "msg") || ns_jkey_is(key, len, "warning"))
		ns_jv_text(v, w->message, sizeof(w->message));
	else if (ns_jkey_is(key, len, "category") || ns_jkey_is(key, len, "type"))
		ns_jv_text(v, w->category, sizeof(w->category));
	return 0;
}

static void warn_parse(const struct ns_jv *v, struct warn_ctx *c)
{
	size_t bad;
	c->message[0] = c->category[0] = '\0';
	if (v->type == 'o')
		ns_jobj_walk(v, warn_field, c, &bad);
	if (!c->message[0] && v->type != 'o')
		ns_jv_text(v, c->message, sizeof(c->message));
	if (!c->message[0])
		snprintf(c->message, sizeof(c->message), "%.*s", (int)(v->n < 300 ? v->n : 300), v->p);
}

int explorer_warning_add(struct ns_notes *w, const char *path, const struct ns_jv *v, uint64_t offset)
{
	struct warn_ctx c;
	warn_parse(v, &c);
	return note_add(w, path, offset, "%s%s%s", c.category, c.category[0] ? ": " : "", c.message);
}

int explorer_warning_keep(struct ns_xwarnings *w, const struct ns_jv *v, uint64_t offset)
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

static int kv_field(void *ctx, const char *key, size_t key_len, const struct ns_jv *v)
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
	e->text = ns_jv_strdup(v);
	if (!e->key || !e->text) {
		free(e->key);
		free(e->text);
		return -2;
	}
	e->is_num = ns_jv_num(v, &d);
	e->num = e->is_num ? (double)d : 0;
	b->n++;
	return 0;
}

int kv_from_object(const struct ns_jv *obj, struct ns_kv **out, size_t *n)
{
	struct kv_build b = { 0 };
	size_t bad;
	int rc = ns_jobj_walk(obj, kv_field, &b, &bad);
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
	ns_sort(s, n, sizeof(*s), cmp_spans);
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
