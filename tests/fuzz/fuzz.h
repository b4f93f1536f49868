/* Helpers shared by the fuzz targets (tests/fuzz/fuzz-*.c). Each target is
 * one translation unit defining LLVMFuzzerTestOneInput; it is linked either
 * with libFuzzer (-Dfuzzers=true, clang) or with replay.c, which feeds it the
 * files of tests/fuzz/corpus/NAME and tests/fuzz/regressions/NAME under
 * `meson test`. A target reports a bug by crashing: FUZZ_CHECK aborts. */
#ifndef NS_FUZZ_H
#define NS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv); /* optional */

#define FUZZ_CHECK(cond, ...)                                                          \
	do {                                                                               \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                              \
	} while (0)

/* True if s[0..n) is valid UTF-8 (RFC 3629: no overlongs, surrogates or
 * code points above U+10FFFF). */
static inline bool fuzz_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned char c = p[i];
		size_t len;
		unsigned char lo = 0x80, hi = 0xbf;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		else
			return false;
		if (n - i < len || p[i + 1] < lo || p[i + 1] > hi)
			return false;
		for (size_t k = 2; k < len; k++)
			if (p[i + k] < 0x80 || p[i + k] > 0xbf)
				return false;
		i += len;
	}
	return true;
}

/* A stable 64-bit hash of the input, to derive knobs (read sizes, cut
 * points) that stay the same when an input is replayed. */
static inline uint64_t fuzz_hash(const uint8_t *data, size_t size)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < size; i++) {
		h ^= data[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* A private directory for targets whose API takes paths (created on first
 * use, removed at exit). */
const char *fuzz_tmpdir(void);
/* Writes bytes to fuzz_tmpdir()/name and returns the path (static buffer). */
const char *fuzz_write_file(const char *name, const void *data, size_t size);
/* Removes everything below dir (not dir itself). */
void fuzz_clear_dir(const char *dir);

#endif
