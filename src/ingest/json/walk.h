/* The streaming JSON walker: a file's top-level object is walked key by
 * key, an array value element by element, with the scanner of
 * ingest/json/scan.h, so memory is bounded by the largest element (files
 * of 100s of MB, often one line). Also a walk over the keys of one small
 * in-memory object or array, and value coercions. The Neuron exports
 * (src/ntff/) are read with it; Kineto traces have their own top-level
 * loop over the same scanner (kineto.c; docs/architecture.md "One JSON
 * layer, two loops"). */
#ifndef NS_INGEST_JSON_WALK_H
#define NS_INGEST_JSON_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* A JSON value as a span of the text: strings without their quotes. */
struct ns_jv {
	const char *p;
	size_t n;
	char type;       /* 's' string, 'n' number, 'o' object, 'a' array, 'l' true/false/null */
	bool escaped;    /* a string with backslash escapes */
};

enum { NS_JS_SKIP = 0, NS_JS_ELEMENTS, NS_JS_VALUE };

struct ns_json_stream_cb {
	/* For each top-level key ("" for a top-level array): NS_JS_ELEMENTS to
	 * get each element of an array value, NS_JS_VALUE to get the whole
	 * value, NS_JS_SKIP to pass over it (arrays are skipped element by
	 * element). An NS_JS_ELEMENTS key whose value is not an array goes to
	 * on_value. */
	int (*on_key)(void *ctx, const char *key);
	int (*on_elem)(void *ctx, const char *key, const struct ns_jv *v, uint64_t offset, struct ns_error *err);
	int (*on_value)(void *ctx, const char *key, const struct ns_jv *v, uint64_t offset, struct ns_error *err);
};

/* Streams the JSON file's top-level object (or array) to cb. On a file
 * that ends early returns 0 with *truncated_at set to the byte offset
 * (else -1). Errors are "path: byte N: what". */
int ns_json_stream_file(const char *path, const struct ns_json_stream_cb *cb, void *ctx, int64_t *truncated_at,
			struct ns_error *err);

/* Calls fn for each key of the object v (keys raw, unescaped only if they
 * had no escapes). Returns 0, fn's non-zero result, or -1 on a syntax error
 * with *bad set to the offset within v. */
typedef int (*ns_jfield_fn)(void *ctx, const char *key, size_t key_len, const struct ns_jv *v);
int ns_jobj_walk(const struct ns_jv *obj, ns_jfield_fn fn, void *ctx, size_t *bad);
/* Calls fn for each element of the array v. */
int ns_jarr_walk(const struct ns_jv *arr, int (*fn)(void *ctx, const struct ns_jv *v), void *ctx, size_t *bad);

bool ns_jkey_is(const char *key, size_t len, const char *lit);
/* A number, or a string holding one ("123", "0x1f" is not). Integers are exact. */
bool ns_jv_int(const struct ns_jv *v, int64_t *out);
bool ns_jv_num(const struct ns_jv *v, long double *out);
/* The text of a string (unescaped) or of a scalar token, into out (n > 0). */
size_t ns_jv_text(const struct ns_jv *v, char *out, size_t n);
/* The same, malloc'ed. */
char *ns_jv_strdup(const struct ns_jv *v);

#endif
