/* A byte source over a trace file: plain, gzip (.gz, by magic) or zstd
 * (by magic), decompressed on the fly with bounded output. */
#ifndef NS_SOURCE_H
#define NS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

struct ns_source;

/* Opens path ("-": standard input). A pipe, FIFO or device is read as a
 * stream, once, front to back; its size is NS_SOURCE_SIZE_UNKNOWN. */
int ns_source_open(const char *path, uint64_t max_out, uint32_t max_ratio, struct ns_source **out,
		   struct ns_error *err);
/* The same over bytes in memory (not copied: they must outlive the source);
 * name is used in messages. */
int ns_source_open_mem(const void *bytes, size_t len, const char *name, uint64_t max_out,
		       uint32_t max_ratio, struct ns_source **out, struct ns_error *err);
/* Reads up to n decompressed bytes into buf. Returns the count, 0 at the
 * end, or -1 with err set (corrupt/truncated stream, limits, I/O). */
ssize_t ns_source_read(struct ns_source *s, char *buf, size_t n, struct ns_error *err);
/* True once a read returned 0: every byte was handed out. */
bool ns_source_ended(const struct ns_source *s);
/* Caps every read at n bytes (0: no cap), so tests and fuzzers can drive the
 * scanner's refill logic with small inputs. */
void ns_source_set_max_read(struct ns_source *s, size_t n);
uint64_t ns_source_consumed(const struct ns_source *s); /* compressed bytes read so far */
/* Decodes a gzip source with ISA-L, several times faster than zlib, where
 * this build has it (meson option isal); call it before the first
 * ns_source_read. True when it now does. A sound stream gives the same
 * bytes either way (DEFLATE leaves a decoder no choice), but in a damaged
 * one ISA-L may decode bytes past the place zlib stops at, and it reads
 * a cut one as damaged (an error): what it read counts only once it read
 * to the end (ns_source_ended), else the caller reads the file again
 * without it for zlib's bytes and message (ns_ingest_file does). */
bool ns_source_fast_gzip(struct ns_source *s);
/* A plain file or bytes in memory (not compressed, not a stream nor
 * standard input, reads not capped): the bytes can be read from any
 * offset. */
bool ns_source_seekable(const struct ns_source *s);
/* Moves a seekable source to byte offset (what it had read ahead is
 * dropped). */
int ns_source_seek(struct ns_source *s, uint64_t offset, struct ns_error *err);
/* A second source over the bytes of a seekable one, from offset, that
 * another thread may read while s is read: a file's through pread on the
 * same descriptor (so the very file s opened), memory's directly. s must
 * outlive it. NS_ERR_IO without a message when s is not seekable. */
int ns_source_open_at(const struct ns_source *s, uint64_t offset, struct ns_source **out, struct ns_error *err);
#define NS_SOURCE_SIZE_UNKNOWN UINT64_MAX
uint64_t ns_source_size(const struct ns_source *s);     /* file size, or NS_SOURCE_SIZE_UNKNOWN */
/* True once the end of a gzip/zstd stream was missing (the file was cut). */
bool ns_source_truncated(const struct ns_source *s);
void ns_source_close(struct ns_source *s);

#endif
