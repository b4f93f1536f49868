#include "ingest/json/blocks.h"

#include <stdatomic.h>
#include <string.h>

/* (-DNS_JSON_NO_SIMD builds the scalar code alone, as on other CPUs) */
#if (defined(__x86_64__) || defined(__i386__)) && !defined(NS_JSON_NO_SIMD)
#define HAVE_X86 1
#include <emmintrin.h>
#include <immintrin.h>
#endif

/* ---- scalar: any CPU ---- */

enum { C_QUOTE = 1, C_BACKSLASH = 2, C_CONTROL = 4, C_STRUCTURAL = 8, C_SPACE = 16 };

static const unsigned char byte_class[256] = {
	[0x00] = C_CONTROL, [0x01] = C_CONTROL, [0x02] = C_CONTROL, [0x03] = C_CONTROL,
	[0x04] = C_CONTROL, [0x05] = C_CONTROL, [0x06] = C_CONTROL, [0x07] = C_CONTROL,
	[0x08] = C_CONTROL, [0x09] = C_CONTROL | C_SPACE, [0x0a] = C_CONTROL | C_SPACE, [0x0b] = C_CONTROL,
	[0x0c] = C_CONTROL, [0x0d] = C_CONTROL | C_SPACE, [0x0e] = C_CONTROL, [0x0f] = C_CONTROL,
	[0x10] = C_CONTROL, [0x11] = C_CONTROL, [0x12] = C_CONTROL, [0x13] = C_CONTROL,
	[0x14] = C_CONTROL, [0x15] = C_CONTROL, [0x16] = C_CONTROL, [0x17] = C_CONTROL,
	[0x18] = C_CONTROL, [0x19] = C_CONTROL, [0x1a] = C_CONTROL, [0x1b] = C_CONTROL,
	[0x1c] = C_CONTROL, [0x1d] = C_CONTROL, [0x1e] = C_CONTROL, [0x1f] = C_CONTROL,
	[' '] = C_SPACE, ['"'] = C_QUOTE, ['\\'] = C_BACKSLASH,
	['{'] = C_STRUCTURAL, ['}'] = C_STRUCTURAL, ['['] = C_STRUCTURAL, [']'] = C_STRUCTURAL,
	[':'] = C_STRUCTURAL, [','] = C_STRUCTURAL,
};

static void classify_scalar(const char *p, struct ns_json_block *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned k = 0; k < NS_JSON_BLOCK; k++) {
		unsigned c = byte_class[(unsigned char)p[k]];
		uint64_t bit = UINT64_C(1) << k;
		out->quote |= c & C_QUOTE ? bit : 0;
		out->backslash |= c & C_BACKSLASH ? bit : 0;
		out->control |= c & C_CONTROL ? bit : 0;
		out->structural |= c & C_STRUCTURAL ? bit : 0;
		out->space |= c & C_SPACE ? bit : 0;
	}
}

static size_t find_stop_scalar(const char *p, size_t n, size_t i)
{
	while (i < n && !(byte_class[(unsigned char)p[i]] & (C_QUOTE | C_BACKSLASH | C_CONTROL)))
		i++;
	return i;
}

#ifdef HAVE_X86
/* ---- SSE2: every x86-64 CPU ---- */

/* The five masks of 16 bytes, in the low 16 bits of each. */
static inline void classify16(__m128i v, unsigned m[5])
{
	const __m128i lower = _mm_or_si128(v, _mm_set1_epi8(0x20)); /* '[' ']' -> '{' '}' */
	__m128i control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
	__m128i structural = _mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(lower, _mm_set1_epi8('{')), _mm_cmpeq_epi8(lower, _mm_set1_epi8('}'))),
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')), _mm_cmpeq_epi8(v, _mm_set1_epi8(','))));
	__m128i space = _mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))),
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))));
	m[0] = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
	m[1] = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
	m[2] = (unsigned)_mm_movemask_epi8(control);
	m[3] = (unsigned)_mm_movemask_epi8(structural);
	m[4] = (unsigned)_mm_movemask_epi8(space);
}

static void classify_sse2(const char *p, struct ns_json_block *out)
{
	uint64_t m[5] = { 0 };
	for (unsigned k = 0; k < 4; k++) {
		unsigned part[5];
		classify16(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k)), part);
		for (unsigned j = 0; j < 5; j++)
			m[j] |= (uint64_t)part[j] << (16 * k);
	}
	*out = (struct ns_json_block){ m[0], m[1], m[2], m[3], m[4] };
}

static size_t find_stop_sse2(const char *p, size_t n, size_t i)
{
	const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), below = _mm_set1_epi8(0x1f);
	for (; n - i >= 16; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
					    _mm_cmpeq_epi8(_mm_min_epu8(v, below), v));
		unsigned hits = (unsigned)_mm_movemask_epi8(stop);
		if (hits)
			return i + (size_t)__builtin_ctz(hits);
	}
	return find_stop_scalar(p, n, i);
}

/* ---- AVX2: chosen at run time ---- */

__attribute__((target("avx2"))) static inline void classify32(__m256i v, uint32_t m[5])
{
	const __m256i lower = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
	__m256i control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v);
	__m256i structural = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(lower, _mm256_set1_epi8('{')),
							     _mm256_cmpeq_epi8(lower, _mm256_set1_epi8('}'))),
					     _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(':')),
							     _mm256_cmpeq_epi8(v, _mm256_set1_epi8(','))));
	__m256i space = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(' ')),
							_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\t'))),
					_mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\r')),
							_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\n'))));
	m[0] = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')));
	m[1] = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\')));
	m[2] = (uint32_t)_mm256_movemask_epi8(control);
	m[3] = (uint32_t)_mm256_movemask_epi8(structural);
	m[4] = (uint32_t)_mm256_movemask_epi8(space);
}

__attribute__((target("avx2"))) static void classify_avx2(const char *p, struct ns_json_block *out)
{
	uint32_t lo[5], hi[5];
	classify32(_mm256_loadu_si256((const __m256i *)(const void *)p), lo);
	classify32(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32)), hi);
	*out = (struct ns_json_block){
		lo[0] | (uint64_t)hi[0] << 32, lo[1] | (uint64_t)hi[1] << 32, lo[2] | (uint64_t)hi[2] << 32,
		lo[3] | (uint64_t)hi[3] << 32, lo[4] | (uint64_t)hi[4] << 32,
	};
}

__attribute__((target("avx2"))) static size_t find_stop_avx2(const char *p, size_t n, size_t i)
{
	const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\'),
		      below = _mm256_set1_epi8(0x1f);
	for (; n - i >= 32; i += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
		__m256i stop = _mm256_or_si256(
			_mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)),
			_mm256_cmpeq_epi8(_mm256_min_epu8(v, below), v));
		uint32_t hits = (uint32_t)_mm256_movemask_epi8(stop);
		if (hits)
			return i + (size_t)__builtin_ctz(hits);
	}
	return find_stop_sse2(p, n, i);
}
#endif

/* ---- dispatch ---- */

struct variant {
	void (*classify)(const char *p, struct ns_json_block *out);
	size_t (*find_stop)(const char *p, size_t n, size_t i);
};

static const struct variant variants[] = {
	[NS_JSON_SIMD_SCALAR] = { classify_scalar, find_stop_scalar },
#ifdef HAVE_X86
	[NS_JSON_SIMD_SSE2] = { classify_sse2, find_stop_sse2 },
	[NS_JSON_SIMD_AVX2] = { classify_avx2, find_stop_avx2 },
#endif
};

/* -1 until the first call picks one (threads that race there pick the same) */
static _Atomic int chosen = -1;

static bool available(enum ns_json_simd v)
{
	switch (v) {
	case NS_JSON_SIMD_SCALAR: return true;
#ifdef HAVE_X86
	case NS_JSON_SIMD_SSE2: return true;
	case NS_JSON_SIMD_AVX2: return __builtin_cpu_supports("avx2");
#endif
	default: return false;
	}
}

enum ns_json_simd ns_json_simd_used(void)
{
	int v = atomic_load_explicit(&chosen, memory_order_relaxed);
	if (v < 0) {
		v = available(NS_JSON_SIMD_AVX2) ? NS_JSON_SIMD_AVX2
		    : available(NS_JSON_SIMD_SSE2) ? NS_JSON_SIMD_SSE2
						   : NS_JSON_SIMD_SCALAR;
		atomic_store_explicit(&chosen, v, memory_order_relaxed);
	}
	return (enum ns_json_simd)v;
}

const char *ns_json_simd_name(enum ns_json_simd v)
{
	static const char *const names[] = { "scalar", "sse2", "avx2" };
	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

bool ns_json_simd_force(enum ns_json_simd v)
{
	if (!available(v))
		return false;
	atomic_store_explicit(&chosen, (int)v, memory_order_relaxed);
	return true;
}

void ns_json_classify(const char *p, struct ns_json_block *out)
{
	variants[ns_json_simd_used()].classify(p, out);
}

size_t ns_json_find_string_stop(const char *p, size_t n, size_t i)
{
	return variants[ns_json_simd_used()].find_stop(p, n, i);
}

/* ---- strings across blocks: bit arithmetic, the same for every variant ---- */

/* Bit k set: an odd number of the bits 0..k of x are set. */
static inline uint64_t prefix_xor(uint64_t x)
{
	x ^= x << 1;
	x ^= x << 2;
	x ^= x << 4;
	x ^= x << 8;
	x ^= x << 16;
	x ^= x << 32;
	return x;
}

/* The bytes a backslash escapes (simdjson's odd-length backslash runs): a
 * run of backslashes starting at an even bit, escaping the byte after its
 * end when its length is odd, found with one subtraction. */
static inline uint64_t escaped_bytes(uint64_t backslash, uint64_t *carry)
{
	const uint64_t odd_bits = UINT64_C(0xAAAAAAAAAAAAAAAA);
	if (!backslash) {
		uint64_t escaped = *carry;
		*carry = 0;
		return escaped;
	}
	uint64_t potential = backslash & ~*carry; /* (the first one may itself be escaped) */
	uint64_t codes = ((potential << 1 | odd_bits) - potential) ^ odd_bits;
	uint64_t escaped = codes ^ (backslash | *carry);
	*carry = (codes & backslash) >> 63;
	return escaped;
}

uint64_t ns_json_block_strings(const struct ns_json_block *b, struct ns_json_carry *c, uint64_t *inside)
{
	uint64_t quotes = b->quote & ~escaped_bytes(b->backslash, &c->escaped);
	uint64_t in = prefix_xor(quotes) ^ c->in_string;
	c->in_string = (uint64_t)((int64_t)in >> 63);
	*inside = in;
	return quotes;
}
