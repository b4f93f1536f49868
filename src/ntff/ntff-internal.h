/* Shared by the src/ntff sources: a streaming walk over a top-level JSON object
 * (ingest/scan.h keeps one value in memory at a time), a walk over the keys
 * of one small in-memory object, value coercions, and notes. */
#ifndef NS_NTFF_INTERNAL_H
#define NS_NTFF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntff/ntff.h"

/* A JSON value as a span of the text: strings without their quotes. */
struct jv {
	const char *p;
	size_t n;
	char type;       /* 's' string, 'n' number, 'o' object, 'a' array, 'l' true/false/null */
	bool escaped;    /* a string with backslash escapes */
};

enum { JS_SKIP = 0, JS_ELEMENTS, JS_VALUE };

struct jstream_cb {
	/* For each top-level key ("" for a top-level array): JS_ELEMENTS to get
	 * each element of an array value, JS_VALUE to get the whole value,
	 * JS_SKIP to pass over it (arrays are skipped element by element).
	 * A JS_ELEMENTS key whose value is not an array goes to on_value. */
	int (*on_key)(void *ctx, const char *key);
	int (*on_elem)(void *ctx, const char *key, const struct jv *v, uint64_t offset, struct ns_error *err);
	int (*on_value)(void *ctx, const char *key, const struct jv *v, uint64_t offset, struct ns_error *err);
};

/* Streams the file's top-level object (or array). On a file that ends
 * early returns 0 with *truncated_at set to the byte offset. */
int jstream_file(const char *path, const struct jstream_cb *cb, void *ctx, int64_t *truncated_at,
		 struct ns_error *err);

/* Explorer's Parquet output (pqexport.c): path is one table file of a
 * profile folder. pq_export_stream streams the folder's tables of the same
 * kind (system or device profile) to cb as the JSON export's arrays; it is
 * what jstream_file does for a path ending in ".parquet". */
bool pq_export_is(const char *path);
bool pq_export_system(const char *path);
int pq_export_stream(const char *path, const struct jstream_cb *cb, void *ctx, int64_t *truncated_at,
		     struct ns_error *err);

/* Calls fn for each key of the object v (keys raw, unescaped only if they
 * had no escapes). Returns 0, fn's non-zero result, or -1 on a syntax error
 * with *bad set to the offset within v. */
typedef int (*jfield_fn)(void *ctx, const char *key, size_t key_len, const struct jv *v);
int jobj_walk(const struct jv *obj, jfield_fn fn, void *ctx, size_t *bad);
/* Calls fn for each element of the array v. */
int jarr_walk(const struct jv *arr, int (*fn)(void *ctx, const struct jv *v), void *ctx, size_t *bad);

bool jkey_is(const char *key, size_t len, const char *lit);
/* A number, or a string holding one ("123", "0x1f" is not). Integers are exact. */
bool jv_int(const struct jv *v, int64_t *out);
bool jv_num(const struct jv *v, long double *out);
/* The text of a string (unescaped) or of a scalar token, into out (n > 0). */
size_t jv_text(const struct jv *v, char *out, size_t n);
/* The same, malloc'ed. */
char *jv_strdup(const struct jv *v);

/* Adds a note "path: byte N: what" (keeps the first NS_NOTES_KEPT). -1 on OOM. */
int note_add(struct ns_notes *notes, const char *path, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void notes_release(struct ns_notes *notes);
/* Keeps one element of an export's "warnings" array: a string, or an
 * object's "message" (with its "category"), else its JSON text. -1 on OOM. */
int explorer_warning_add(struct ns_notes *w, const char *path, const struct jv *v, uint64_t offset);
/* The same entry as (category, message), into a list. -1 on OOM. */
int explorer_warning_keep(struct ns_xwarnings *w, const struct jv *v, uint64_t offset);
void xwarnings_release(struct ns_xwarnings *w);

/* Appends a copy of key to a list unless present. -1 on OOM. */
int keylist_add(char ***list, size_t *n, const char *key);
void keylist_free(char **list, size_t n);

/* A flat object -> key/values (nested values keep their JSON text). */
int kv_from_object(const struct jv *obj, struct ns_kv **out, size_t *n);
void kv_free(struct ns_kv *kv, size_t n);
const struct ns_kv *kv_find(const struct ns_kv *kv, size_t n, const char *key);

/* ns per unit. */
long double unit_factor(enum ns_time_unit u);
/* The unit of an epoch-or-relative timestamp from its magnitude
 * (docs/neuron.md "Time units"): >= 1e17 ns, >= 1e14 us, >= 1e11 ms,
 * >= 1e8 s (epoch values); anything smaller is taken as relative ns. */
enum ns_time_unit unit_from_magnitude(long double v);
/* v in unit u as integer ns, or NS_NONE when it is not finite or beyond int64. */
int64_t to_ns(long double v, enum ns_time_unit u);
/* a + b, or NS_NONE when either is NS_NONE or the sum overflows. */
int64_t ns_add_or_none(int64_t a, int64_t b);

/* Sorts and merges spans in place; returns the new count. */
size_t spans_merge(struct ns_span *s, size_t n);

/* A clock sample: the same moment on a core's device clock and the host
 * clock (nc_timestamp_ns / cpu_timestamp_ns, §4.3). */
struct sync_pt {
	int64_t nc, dev, host;
};
/* Every sample of sp, sorted by (core, device time). -1 on OOM. */
int sync_points(const struct ns_sysprof *sp, struct sync_pt **out, size_t *n);
/* host = host_sync + (dev - dev_sync) with the last sample of core nc at or
 * before dev (else its first). False when the core has no sample. */
bool sync_map(const struct sync_pt *p, size_t n, int64_t nc, int64_t dev, int64_t *host);

#endif
