/* SIMD classification of JSON text in 64-byte blocks, as simdjson's stage 1
 * does: one bit a byte for quotes, backslashes, control bytes, structural
 * characters and whitespace, then (with the carries between blocks) which
 * quotes are real and which bytes are inside strings. Three variants of
 * the classifier: SSE2 (the x86-64 baseline), AVX2 (chosen at run time
 * when the CPU has it) and portable scalar code (other CPUs); all give the
 * same bits, which tests/unit/test-blocks.c checks by forcing each. */
#ifndef NS_INGEST_JSON_BLOCKS_H
#define NS_INGEST_JSON_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NS_JSON_BLOCK 64

/* Bit k of each mask is byte k of the block. */
struct ns_json_block {
	uint64_t quote;      /* '"' */
	uint64_t backslash;  /* '\\' */
	uint64_t control;    /* < 0x20 (whitespace other than ' ' included) */
	uint64_t structural; /* { } [ ] : , */
	uint64_t space;      /* ' ' \t \r \n */
};

enum ns_json_simd { NS_JSON_SIMD_SCALAR, NS_JSON_SIMD_SSE2, NS_JSON_SIMD_AVX2 };

/* Classifies the 64 bytes at p, with the variant in use. */
void ns_json_classify(const char *p, struct ns_json_block *out);
/* The variant in use: the best the CPU has, unless forced. */
enum ns_json_simd ns_json_simd_used(void);
const char *ns_json_simd_name(enum ns_json_simd v);
/* For tests and benchmarks: use v from now on. False (nothing changes)
 * when this build or CPU does not have it. Not thread-safe. */
bool ns_json_simd_force(enum ns_json_simd v);

/* What one block leaves to the next. Zeroed: at the start of the text,
 * outside any string. */
struct ns_json_carry {
	uint64_t escaped;   /* 1: the block ended in an odd run of backslashes inside a string */
	uint64_t in_string; /* all ones: the block ended inside a string */
};

/* The real quotes of block b (those no backslash escapes) and, in
 * *inside, the bytes from each opening quote up to (not including) its
 * closing one. Advances *c to the next block. */
uint64_t ns_json_block_strings(const struct ns_json_block *b, struct ns_json_carry *c, uint64_t *inside);

/* The index of the first '"', '\\' or control byte in p[i..n), or n:
 * where a string body scan stops. */
size_t ns_json_find_string_stop(const char *p, size_t n, size_t i);

#endif
