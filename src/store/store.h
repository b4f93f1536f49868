/* The SQLite store (schema: docs/schema.md). Writing is atomic: everything
 * goes to a temp file beside the target, renamed over it on commit; an
 * aborted or killed writer leaves the previous database untouched. */
#ifndef NS_STORE_H
#define NS_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "aggregate/aggregate.h"
#include "common/error.h"
#include "common/trace.h"
#include "ingest/rows.h"
#include "ntff/ntff.h"
#include "store/sql.h"

#define NS_SCHEMA_VERSION 10 /* 2: events.neff; 3: events.id is the rowid, unique in the database;
                               4: event_stats slimmed, event_memory; 5: explorer_warnings;
                               6: device_detail, neff_summary; 7: events.bytes of memcpy/memset,
                               events.flops; 8: views hta_device_events, kernel_stats,
                               launches; 9: the view rank_op_totals; 10: engine_opcodes */

struct ns_store;

/* Identity of an input file, used as the cache key. A stream (standard
 * input, a pipe, a FIFO, a device) has none: its abspath is the path as
 * given, size and mtime_ns are 0, and the cache is not used for it. */
struct ns_source_id {
	const char *path;     /* as given */
	const char *abspath;  /* realpath */
	int64_t size;
	int64_t mtime_ns;
	uint64_t dev, ino;    /* the file itself (ns_store_check_output compares them) */
	bool stream;          /* not a regular file */
};

/* Checks, before any work, that a user's output path may receive a
 * database, and sets *target (caller frees) to where it goes: db_path, or
 * the file a symbolic link there names (written through: the link stays).
 * Refused with NS_ERR_USAGE: one of the inputs (by device and inode), a
 * directory, anything but a regular file (a device, FIFO, socket), a link
 * to no file, and, unless force, an existing file that is not a
 * neuron-stats database. */
int ns_store_check_output(const char *db_path, bool force, const struct ns_source_id *inputs, size_t n,
			  char **target, struct ns_error *err);
/* Starts a database at db_path (written to a temp file beside it; see
 * ns_store_commit). Anything at db_path but a regular file is NS_ERR_IO. */
int ns_store_create(const char *db_path, struct ns_store **out, struct ns_error *err);
/* Reserves disk blocks for a database of about bytes, beyond the end of the
 * file, so that SQLite's writes need no block allocation (on ext4, 40% of
 * a write's cost). Best effort: without fallocate, or without the space,
 * nothing is reserved. ns_store_commit gives back what was not used. */
void ns_store_reserve(struct ns_store *s, int64_t bytes);
/* Starts a trace; returns its trace id in *trace_id. */
int ns_store_begin_trace(struct ns_store *s, const struct ns_source_id *src, int64_t *trace_id,
			 struct ns_error *err);
/* An ns_event_sink (ctx = struct ns_store *): inserts the row of one
 * traceEvents element (its process and thread metadata kept for the
 * processes and threads tables). */
int ns_store_event(void *ctx, const struct ns_trace *t, const struct ns_row_event *row, struct ns_error *err);
/* An ns_flow_sink (ctx = struct ns_store *): keeps one flow for the flows
 * table, written by ns_store_end_events. */
int ns_store_flow(void *ctx, const struct ns_trace *t, const struct ns_row_flow *row, struct ns_error *err);
/* Writes what the events alone give (threads, processes, metadata, the
 * paired flows) and frees what was kept for it: call it before aggregating,
 * so that the flow list is not alive beside the aggregator's arrays.
 * ns_store_end_trace calls it if it was not called. */
int ns_store_end_events(struct ns_store *s, const struct ns_trace *t, struct ns_error *err);
/* Queues the aggregator's per-event rows (event_stats, event_memory). agg
 * needs only its FunctionEvents (ns_aggregate_fevents): its key_averages
 * rows may be made on another thread meanwhile. ns_store_end_trace calls
 * it if it was not called. */
int ns_store_event_stats(struct ns_store *s, const struct ns_trace *t, const struct ns_agg *agg,
			 struct ns_error *err);
/* Finishes the current trace: the above, strings, and the key_averages
 * rows. */
int ns_store_end_trace(struct ns_store *s, const struct ns_trace *t, const struct ns_agg *agg,
		       struct ns_error *err);
/* Neuron device detail of the current trace (docs/schema.md
 * device_detail, neff_summary): per device profile, its instruction time
 * by hlo_name / layer / opcode and its summary figures. */
int ns_store_device_detail(struct ns_store *s, const struct ns_detail_neff *v, size_t n, struct ns_error *err);
/* Builds indexes and views, closes, and renames the temp file into place,
 * with the mode and owner of the file it replaces; anything at db_path
 * but a regular file is never replaced (NS_ERR_IO). Always frees s; on
 * failure the temp file is removed as by ns_store_abort. */
int ns_store_commit(struct ns_store *s, struct ns_error *err);
/* Closes and deletes the temp file (safe after a failed call, and with NULL). */
void ns_store_abort(struct ns_store *s);

/* Writes the traces of the databases shards[0..n) (of this schema
 * version, each checked before any work) into a new database at db_path,
 * renumbering the database's ids (docs/schema.md "Merging databases"):
 * the result is the database an ingest of all their traces together
 * writes, in the same order (by traces.path; the same path by rank, then
 * in the order given).
 * Atomic as ns_store_create/ns_store_commit; streaming, one shard open at a
 * time. */
int ns_store_merge(const char *db_path, char *const *shards, size_t n, struct ns_error *err);

/* Loads every trace of a database back into models (for report from a db or
 * a cache). *out is an array of *n initialised traces; free with
 * ns_trace_release on each, then free(*out). */
int ns_store_load(const char *db_path, struct ns_trace **out, size_t *n, struct ns_error *err);

/* True if db_path is a neuron-stats database (checks the SQLite magic and
 * PRAGMA user_version / application_id). */
bool ns_store_is_db(const char *db_path);

/* Cache (the mechanism; the policy and the folder are the pipeline's,
 * pipeline/cache.h): the path of the cached database for a set of inputs
 * in cache_dir, and whether it is still valid (every source's size and
 * mtime unchanged). Caller frees the returned path. ns_cache_path creates
 * cache_dir if missing (and removes the temporary databases of writers
 * that are gone from it), and returns NULL without cache_dir or when a
 * source is a stream. */
char *ns_cache_path(const char *cache_dir, const struct ns_source_id *srcs, size_t n);
bool ns_cache_valid(const char *db_path, const struct ns_source_id *srcs, size_t n);
/* Marks a cache database as just used (its mtime orders the pruning). */
void ns_cache_touch(const char *db_path);
/* Keeps the cache directory of `keep` (a cache database path) within
 * max_bytes: deletes the least recently used databases (oldest mtime first)
 * until the rest fit, never `keep` itself. Only files named like cache
 * databases or result entries (32 hex digits + ".db" or ".res") are ever
 * deleted, and both count toward max_bytes. Returns how many were
 * deleted; errors (an unreadable directory) just stop the pruning. */
size_t ns_cache_prune(const char *keep, uint64_t max_bytes);
/* The result cache (store/result.c): one entry per key, "<32 hex>.res" in
 * the cache folder. The log is what the command wrote, as records: one byte
 * for the stream (1 stdout, 2 stderr, 3 the file of html -o), its length (4 bytes, little-endian),
 * the bytes. */
struct ns_result {
	int code;                 /* the exit code */
	const unsigned char *log; /* the records (inside buf) */
	size_t len;
	unsigned char *buf;
};
/* The entry of key in cache_dir (not created); NULL when out of memory. */
char *ns_result_path(const char *cache_dir, const char *key, size_t key_len);
/* 0 and *r when path holds key's entry, whole and intact; -1 (a miss)
 * otherwise: missing, cut, damaged, another key's. Free with
 * ns_result_release. */
int ns_result_read(const char *path, const char *key, size_t key_len, struct ns_result *r);
void ns_result_release(struct ns_result *r);
/* A record's stream (its first byte). */
enum ns_result_stream { NS_RESULT_STDOUT = 1, NS_RESULT_STDERR = 2, NS_RESULT_FILE = 3 };
#define NS_RESULT_RECORD_HEAD 5 /* the stream byte and the length */
/* Writes a record's head (stream, n) at rec; its n bytes follow. */
void ns_result_record_head(unsigned char *rec, enum ns_result_stream stream, uint32_t n);
/* The length of the bytes of the record at rec (after its head). */
uint32_t ns_result_record_len(const unsigned char *rec);
/* Whether log is a sequence of whole records. */
bool ns_result_log_valid(const unsigned char *log, size_t len);
/* Writes key's entry to path through a temporary file renamed over it;
 * anything at path but a regular file is left alone (NS_ERR_IO). */
int ns_result_write(const char *path, const char *key, size_t key_len, int code, const unsigned char *log,
		    size_t len, struct ns_error *err);
/* Removes the temporary databases in dir whose names is_temp_name accepts
 * and whose writer is gone (its lock is free; where the filesystem has no
 * locks, untouched for a day). */
void ns_store_remove_stale_temps(const char *dir, bool (*is_temp_name)(const char *name, void *ctx), void *ctx);
/* Creates "<path>.tmp-<pid>-<random>" exclusively (open flags | O_CREAT |
 * O_EXCL), holding an exclusive flock on it, and checks that no cleaner
 * (ns_store_remove_stale_temps) took or removed it before the lock: the
 * fd, *tmp its name (the caller's to free). The writer keeps the fd open,
 * so the lock, until it has renamed or removed the file. -1 with errno
 * (ENOMEM; EEXIST after 16 names taken; open's) and *tmp NULL. */
int ns_store_create_temp(const char *path, int flags, char **tmp);
#define NS_CACHE_MAX_DEFAULT (UINT64_C(4) << 30) /* 4 GiB */
/* Fills (*out)[i] for paths[i] (realpath and stat; path points into paths;
 * "-" is standard input). Free with ns_source_ids_free. */
int ns_source_ids(char *const *paths, size_t n, struct ns_source_id **out, struct ns_error *err);
void ns_source_ids_free(struct ns_source_id *ids, size_t n);

#endif
