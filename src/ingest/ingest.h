/* Ingest: Kineto trace files (plain, .gz, .zst; object or legacy array
 * form) -> struct ns_trace, streaming. The traceEvents array is scanned one
 * event at a time; no JSON tree of the file is ever built. */
#ifndef NS_INGEST_H
#define NS_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/trace.h"
#include "ingest/rows.h"

struct ns_ingest_opts {
	bool strict;                 /* a truncated file is an error, not a warning */
	uint64_t max_decompressed;   /* cap on decompressed bytes (0 = default 64 GiB) */
	uint32_t max_ratio;          /* cap on decompressed/compressed ratio (0 = default 1000) */
	uint32_t read_chunk;         /* tests: at most this many bytes per source read (0 = no cap) */
	bool keep_python;            /* keep python_function calls (NS_KIND_PYTHON: `stacks --python`) */
	/* optional: every element as a decoded row (rows.h), and, with
	 * flow_sink, the flows paired */
	ns_event_sink sink;
	ns_flow_sink flow_sink;
	void *sink_ctx;
	/* One file on two cores: a plain file (or bytes) of at least split_min
	 * bytes (0: never), read without sinks, has its traceEvents cut into
	 * split_parts parts (0: one each 16 MiB, 2 to 64) that a second thread
	 * parses while the main one reads from the start, the first of them
	 * split_permille of the way from the array's start (0: an even cut);
	 * the result is the same. */
	uint64_t split_min;
	uint32_t split_parts;
	uint32_t split_permille;
	/* gzip by zlib even where ISA-L is built in (ns_source_fast_gzip;
	 * NEURON_STATS_GZIP=zlib): the result is the same, only slower */
	bool gzip_zlib;
	/* optional progress: bytes of input consumed so far, total input size */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

/* Parses one trace file into t (which must be ns_trace_init'ed). On a
 * truncated file without opts->strict, returns NS_OK with
 * t->truncated_at >= 0 and a warning message in *warn (if not NULL). */
int ns_ingest_file(const char *path, struct ns_trace *t, const struct ns_ingest_opts *opts,
		   struct ns_error *warn, struct ns_error *err);

/* The same over a trace in memory (plain, gzip or zstd bytes); name is used
 * as the trace's path in messages. */
int ns_ingest_mem(const void *bytes, size_t len, const char *name, struct ns_trace *t,
		  const struct ns_ingest_opts *opts, struct ns_error *warn, struct ns_error *err);

/* Parses a decimal JSON number token as microseconds into exact integer
 * nanoseconds (round half to even below 1 ns). Returns 0, or -1 if the
 * token is not a number or out of range. */
int ns_parse_us_to_ns(const char *tok, size_t len, int64_t *out_ns);
/* Parses a JSON integer token (also "12.0", or a quoted integer string). */
int ns_parse_int64(const char *tok, size_t len, int64_t *out);
/* The common case of both: a plain decimal's digits (at most 19, as an
 * integer) of which `decimals` follow its point, times 10^scale (scale <=
 * 3), negated if neg; false when decimals > scale or the result leaves
 * int64, and the token is then parsed the general way. */
static inline bool ns_decimal_scaled(uint64_t digits, unsigned decimals, unsigned scale, bool neg, int64_t *out)
{
	static const uint64_t pow10[] = { 1, 10, 100, 1000 };
	uint64_t m;
	if (decimals > scale || __builtin_mul_overflow(digits, pow10[scale - decimals], &m) || m > (uint64_t)INT64_MAX + neg)
		return false;
	*out = neg ? (int64_t)(0 - m) : (int64_t)m;
	return true;
}

/* Directories a walk has entered, by (device, inode): with symbolic links a
 * tree can hold a directory more than once, or a loop, which would make a
 * walk list files twice or take exponential time. */
struct ns_dirset {
	uint64_t *ids; /* dev, ino pairs */
	size_t n, cap;
};
/* True if dir was entered before (or cannot be stat'ed); else records it.
 * Out of memory: false (the walk goes on; its depth is bounded anyway). */
bool ns_dirset_seen(struct ns_dirset *set, const char *dir);
void ns_dirset_release(struct ns_dirset *set);

/* Calls visit(ctx, path, name, st) for every regular file below dir (not
 * following names that start with '.'), entering subdirectories up to
 * max_depth levels down and each directory once (`seen`). A non-zero
 * return from visit, or an error, stops the walk with that status. */
struct stat;
typedef int (*ns_file_visit)(void *ctx, const char *path, const char *name, const struct stat *st,
			     struct ns_error *err);
int ns_walk_files(const char *dir, int max_depth, struct ns_dirset *seen, ns_file_visit visit, void *ctx,
		  struct ns_error *err);

/* Lists the trace files in a directory (recursively, sorted by path):
 * trace.json, *.pt.trace.json[.gz|.zst], *.json.gz, *.json.zst and *.json
 * files whose content starts like a Kineto trace. A plain file path (or a
 * stream: "-" for standard input, a pipe, a FIFO) yields itself. Caller
 * frees each string and the array. */
int ns_find_traces(const char *path, char ***out_paths, size_t *out_n, struct ns_error *err);

#endif
