/* Byte sources (src/ingest/source.c): gzip/zstd detection, decompression
 * with caps, truncation and corruption.
 *
 * Each input is used three ways:
 * 1. as is, as a (possibly compressed, possibly damaged) stream read in
 *    pieces: no crash, the output stays under the cap;
 * 2. gzip- and zstd-compressed here, then read back in pieces of 1..4096
 *    bytes: the output equals the input and nothing is reported truncated;
 * 3. those compressed streams cut short: what comes out is a prefix of the
 *    input, and the source reports a truncated stream (or a corrupt one);
 * 4. as is again, gzip decoded by ISA-L (ns_source_fast_gzip) where the
 *    build has it: when it reads the stream to its end without an error,
 *    zlib reads the same bytes, whole, which is what ns_ingest_file's
 *    keeping ISA-L's load rests on; and 2 through it gives the input. */
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "fuzz.h"
#include "ingest/source.h"

#define CAP (8u << 20)

/* Reads everything; returns the bytes produced (into out, up to out_cap) or
 * -1 on an error; *truncated from ns_source_truncated. */
static long long drain_by(const void *bytes, size_t len, size_t piece, char *out, size_t out_cap, bool *truncated,
			  uint64_t max_out, bool *fast)
{
	struct ns_source *src;
	struct ns_error err = { 0 };
	long long total = 0;
	*truncated = false;
	if (ns_source_open_mem(bytes, len, "fuzz", max_out, UINT32_MAX, &src, &err))
		return -1;
	if (fast)
		*fast = ns_source_fast_gzip(src);
	ns_source_set_max_read(src, piece);
	char buf[4096];
	for (;;) {
		ssize_t got = ns_source_read(src, buf, sizeof(buf), &err);
		if (got < 0) {
			FUZZ_CHECK(err.msg[0] != '\0', "an error without a message");
			total = -1;
			break;
		}
		if (got == 0)
			break;
		FUZZ_CHECK((size_t)got <= piece, "read %zd bytes, cap %zu", got, piece);
		if (out && (size_t)total + (size_t)got <= out_cap)
			memcpy(out + total, buf, (size_t)got);
		total += got;
		FUZZ_CHECK((uint64_t)total <= max_out + sizeof(buf), "produced %lld past the cap", total);
	}
	*truncated = ns_source_truncated(src);
	ns_source_close(src);
	return total;
}

static long long drain(const void *bytes, size_t len, size_t piece, char *out, size_t out_cap, bool *truncated,
		       uint64_t max_out)
{
	return drain_by(bytes, len, piece, out, out_cap, truncated, max_out, NULL);
}

/* 4: ISA-L's whole read (no error) is zlib's, byte for byte. */
static void fast_is_zlib(const uint8_t *data, size_t size, size_t piece)
{
	enum { OUT = 1u << 20 };
	char *fast_out = malloc(OUT), *zlib_out = malloc(OUT);
	bool fast_cut, zlib_cut, used = true;
	FUZZ_CHECK(fast_out && zlib_out, "malloc");
	long long fast = drain_by(data, size, piece, fast_out, OUT, &fast_cut, OUT, &used);
	if (used && fast >= 0) {
		long long zlib = drain(data, size, piece, zlib_out, OUT, &zlib_cut, OUT);
		FUZZ_CHECK(!fast_cut, "ISA-L reported a cut instead of an error");
		FUZZ_CHECK(zlib == fast && !zlib_cut, "ISA-L read %lld bytes whole, zlib %lld%s", fast, zlib,
			   zlib_cut ? " (cut)" : "");
		FUZZ_CHECK(memcmp(fast_out, zlib_out, (size_t)fast) == 0, "ISA-L and zlib read other bytes");
	}
	free(fast_out);
	free(zlib_out);
}

static size_t gzip_compress(const uint8_t *data, size_t size, uint8_t *out, size_t cap, int level, uint64_t h)
{
	z_stream z = { 0 };
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (Bytef *)data;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	/* feed in two parts with a flush between, as a writer killed mid-way might */
	size_t first = size ? (size_t)(h % (size + 1)) : 0;
	z.avail_in = (uInt)first;
	deflate(&z, (h & 1) ? Z_FULL_FLUSH : Z_NO_FLUSH);
	z.avail_in = (uInt)(size - first);
	int rc = deflate(&z, Z_FINISH);
	size_t n = rc == Z_STREAM_END ? z.total_out : 0;
	deflateEnd(&z);
	return n;
}

static void roundtrip(const uint8_t *data, size_t size, const uint8_t *comp, size_t clen, size_t piece, uint64_t h,
		      char *out)
{
	bool truncated;
	for (int k = 0; k < 2; k++) {
		bool fast = true;
		long long got = drain_by(comp, clen, piece, out, size, &truncated, CAP, k ? &fast : NULL);
		FUZZ_CHECK(got == (long long)size, "round trip gave %lld of %zu bytes", got, size);
		FUZZ_CHECK(memcmp(out, data, size) == 0, "round trip changed the bytes");
		FUZZ_CHECK(!truncated, "a complete stream reported truncated");
	}

	/* cut it short: a prefix comes out, and the cut is noticed */
	if (clen < 5)
		return;
	/* from 4 bytes on, so the magic number is there */
	size_t cut = 4 + (size_t)(h % (clen - 4));
	long long got = drain(comp, cut, piece, out, size, &truncated, CAP);
	if (got >= 0) {
		FUZZ_CHECK(got <= (long long)size && memcmp(out, data, (size_t)got) == 0,
			   "a cut stream gave bytes that are not a prefix");
		/* a cut inside the header may not even be recognised as compressed */
		if (cut >= 18)
			FUZZ_CHECK(truncated || got < (long long)size,
				   "cut at %zu of %zu: all %lld bytes and no truncation", cut, clen, got);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fuzz_hash(data, size);
	size_t piece = 1 + (size_t)(h % 4096);
	bool truncated;

	/* 1: the input as a stream, with a small output cap */
	drain(data, size, piece, NULL, 0, &truncated, 1u << 16);
	drain(data, size, 1 + (size_t)((h >> 16) % 7), NULL, 0, &truncated, CAP);

	if (size > (1u << 16))
		return 0;
	fast_is_zlib(data, size, piece);
	char *out = malloc(size + 1);
	size_t cap = ZSTD_compressBound(size) + compressBound((uLong)size) + 64;
	uint8_t *comp = malloc(cap);
	FUZZ_CHECK(out && comp, "malloc");

	/* 2, 3: gzip */
	size_t clen = gzip_compress(data, size, comp, cap, 1 + (int)((h >> 20) % 9), h >> 24);
	if (clen)
		roundtrip(data, size, comp, clen, piece, h >> 32, out);

	/* 2, 3: zstd */
	clen = ZSTD_compress(comp, cap, data, size, 1 + (int)((h >> 40) % 5));
	if (!ZSTD_isError(clen))
		roundtrip(data, size, comp, clen, piece, h >> 44, out);

	free(out);
	free(comp);
	return 0;
}
