/* Shared by the src/ntff sources (export.c): an export's stream (the JSON
 * walk of ingest/json/walk.h, or Explorer's Parquet tables read as one),
 * notes and Explorer warnings, key lists, flat key/values, time units. */
#ifndef NS_NTFF_INTERNAL_H
#define NS_NTFF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/json/walk.h"
#include "ntff/ntff.h"

/* Streams an export: a JSON file's top-level object (or array), as
 * ns_json_stream_file, or a Parquet profile's tables (pq_export_stream).
 * On a file that ends early returns 0 with *truncated_at set to the byte
 * offset. */
int jstream_file(const char *path, const struct ns_json_stream_cb *cb, void *ctx, int64_t *truncated_at,
		 struct ns_error *err);

/* Explorer's Parquet output (pqexport.c): path is one table file of a
 * profile folder. pq_export_stream streams the folder's tables of the same
 * kind (system or device profile) to cb as the JSON export's arrays; it is
 * what jstream_file does for a path ending in ".parquet". */
bool pq_export_is(const char *path);
bool pq_export_system(const char *path);
int pq_export_stream(const char *path, const struct ns_json_stream_cb *cb, void *ctx, int64_t *truncated_at,
		     struct ns_error *err);

/* Adds a note "path: byte N: what" (keeps the first NS_NOTES_KEPT). -1 on OOM. */
int note_add(struct ns_notes *notes, const char *path, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void notes_release(struct ns_notes *notes);
/* Keeps one element of an export's "warnings" array: a string, or an
 * object's "message" (with its "category"), else its JSON text. -1 on OOM. */
int explorer_warning_add(struct ns_notes *w, const char *path, const struct ns_jv *v, uint64_t offset);
/* The same entry as (category, message), into a list. -1 on OOM. */
int explorer_warning_keep(struct ns_xwarnings *w, const struct ns_jv *v, uint64_t offset);
void xwarnings_release(struct ns_xwarnings *w);

/* Appends a copy of key to a list unless present. -1 on OOM. */
int keylist_add(char ***list, size_t *n, const char *key);
void keylist_free(char **list, size_t n);

/* A flat object -> key/values (nested values keep their JSON text). */
int kv_from_object(const struct ns_jv *obj, struct ns_kv **out, size_t *n);
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
