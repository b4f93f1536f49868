/* The 64-byte block classifier (src/ingest/json/blocks.c): each variant
 * (scalar, SSE2, AVX2; forced in turn, those this CPU has) gives the bits
 * a byte-at-a-time reference gives, on the same inputs, including quotes
 * and runs of backslashes across the 16-, 32- and 64-byte edges; and the
 * string scanner of scan.h ends the same strings with each. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/json/blocks.h"
#include "ingest/json/scan.h"

static const enum ns_json_simd all_variants[] = { NS_JSON_SIMD_SCALAR, NS_JSON_SIMD_SSE2, NS_JSON_SIMD_AVX2 };

static void restore(void)
{
	if (!ns_json_simd_force(NS_JSON_SIMD_AVX2) && !ns_json_simd_force(NS_JSON_SIMD_SSE2))
		ns_json_simd_force(NS_JSON_SIMD_SCALAR);
}

TestSuite(blocks, .fini = restore);

/* A deterministic byte soup weighted towards what matters here. */
static void fill(char *p, size_t n, unsigned seed)
{
	static const char alphabet[] = "\"\\\\\\{}[]:, \t\r\nab01\x01\x1f\x7f\x80\xff";
	uint32_t x = seed * 2654435761u + 1;
	for (size_t k = 0; k < n; k++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		p[k] = alphabet[x % (sizeof(alphabet) - 1)];
	}
}

static void reference(const char *p, struct ns_json_block *b)
{
	memset(b, 0, sizeof(*b));
	for (unsigned k = 0; k < NS_JSON_BLOCK; k++) {
		unsigned char c = (unsigned char)p[k];
		uint64_t bit = UINT64_C(1) << k;
		if (c == '"')
			b->quote |= bit;
		if (c == '\\')
			b->backslash |= bit;
		if (c < 0x20)
			b->control |= bit;
		if (c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',')
			b->structural |= bit;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			b->space |= bit;
	}
}

Test(blocks, every_variant_classifies_as_the_reference)
{
	char buf[NS_JSON_BLOCK];
	int tested = 0;
	for (size_t v = 0; v < sizeof(all_variants) / sizeof(all_variants[0]); v++) {
		if (!ns_json_simd_force(all_variants[v]))
			continue;
		tested++;
		cr_assert_eq(ns_json_simd_used(), all_variants[v]);
		for (unsigned seed = 0; seed < 2000; seed++) {
			struct ns_json_block want, got;
			fill(buf, sizeof(buf), seed);
			reference(buf, &want);
			ns_json_classify(buf, &got);
			cr_assert(memcmp(&want, &got, sizeof(want)) == 0, "%s differs on seed %u",
				  ns_json_simd_name(all_variants[v]), seed);
		}
	}
	cr_assert_geq(tested, 1);
#if defined(__x86_64__) && !defined(NS_JSON_NO_SIMD)
	cr_assert_geq(tested, 2, "SSE2 is the x86-64 baseline");
#endif
}

/* Real quotes and the bytes inside strings, a byte at a time: a byte is
 * escaped after an odd run of backslashes. */
static void reference_strings(const char *p, size_t n, uint64_t *quotes, uint64_t *inside)
{
	bool escaped = false, in = false;
	memset(quotes, 0, n / 8);
	memset(inside, 0, n / 8);
	for (size_t k = 0; k < n; k++) {
		uint64_t bit = UINT64_C(1) << (k % 64);
		bool real = p[k] == '"' && !escaped;
		escaped = p[k] == '\\' && !escaped;
		if (real) {
			quotes[k / 64] |= bit;
			in = !in;
		}
		if (in)
			inside[k / 64] |= bit;
	}
}

static void check_strings(const char *text, size_t n, const char *what)
{
	uint64_t want_q[8], want_in[8];
	cr_assert(n % 64 == 0 && n <= 512);
	reference_strings(text, n, want_q, want_in);
	for (size_t v = 0; v < sizeof(all_variants) / sizeof(all_variants[0]); v++) {
		if (!ns_json_simd_force(all_variants[v]))
			continue;
		struct ns_json_carry carry = { 0 };
		for (size_t b = 0; b < n / 64; b++) {
			struct ns_json_block blk;
			uint64_t inside;
			ns_json_classify(text + 64 * b, &blk);
			uint64_t q = ns_json_block_strings(&blk, &carry, &inside);
			cr_assert_eq(q, want_q[b], "%s, %s: quotes of block %zu", what, ns_json_simd_name(all_variants[v]), b);
			cr_assert_eq(inside, want_in[b], "%s, %s: strings of block %zu", what,
				     ns_json_simd_name(all_variants[v]), b);
		}
	}
}

Test(blocks, backslash_runs_across_block_edges)
{
	/* a run of r backslashes ending at byte 63 + shift, then a quote: the
	 * quote is real when r is even */
	for (int shift = -3; shift <= 3; shift++) {
		for (int r = 0; r <= 6; r++) {
			char text[256];
			memset(text, 'a', sizeof(text));
			text[10] = '"'; /* opens a string */
			int end = 63 + shift;
			for (int k = 0; k < r; k++)
				text[end - k] = '\\';
			text[end + 1] = '"';
			text[130] = '"';
			text[190] = '"';
			char what[64];
			snprintf(what, sizeof(what), "run of %d ending at %d", r, end);
			check_strings(text, sizeof(text), what);
		}
	}
	/* whole blocks of backslashes: the carry crosses several edges */
	char text[256];
	memset(text, '\\', sizeof(text));
	text[0] = '"';
	text[255] = '"';
	check_strings(text, sizeof(text), "all backslashes");
	text[200] = '"';
	check_strings(text, sizeof(text), "all backslashes, a quote at 200");
	for (unsigned seed = 0; seed < 500; seed++) {
		fill(text, sizeof(text), seed);
		check_strings(text, sizeof(text), "random");
	}
}

static size_t reference_stop(const char *p, size_t n, size_t i)
{
	while (i < n && p[i] != '"' && p[i] != '\\' && (unsigned char)p[i] >= 0x20)
		i++;
	return i;
}

Test(blocks, string_stop_and_string_end_agree_in_every_variant)
{
	char buf[300];
	for (size_t v = 0; v < sizeof(all_variants) / sizeof(all_variants[0]); v++) {
		if (!ns_json_simd_force(all_variants[v]))
			continue;
		for (size_t stop = 0; stop < 200; stop++) {
			/* one stop byte at each position, after runs of plain text */
			memset(buf, 'x', sizeof(buf));
			buf[stop] = "\"\\\x01"[stop % 3];
			for (size_t from = 0; from <= stop; from += 7)
				cr_assert_eq(ns_json_find_string_stop(buf, sizeof(buf), from), stop, "%s: stop %zu from %zu",
					     ns_json_simd_name(all_variants[v]), stop, from);
		}
		memset(buf, 'x', sizeof(buf));
		cr_assert_eq(ns_json_find_string_stop(buf, 77, 3), 77);
		for (unsigned seed = 0; seed < 300; seed++) {
			fill(buf, sizeof(buf), seed);
			for (size_t from = 0; from < 80; from++)
				cr_assert_eq(ns_json_find_string_stop(buf, sizeof(buf), from),
					     reference_stop(buf, sizeof(buf), from));
		}
		/* strings whose escapes straddle the 16-, 32- and 64-byte edges */
		for (size_t at = 1; at < 140; at++) {
			memset(buf, 'y', sizeof(buf));
			buf[0] = '"';
			memcpy(buf + at, "\\\\\\\"\\u00e9", 10); /* \\ \" \u00e9 */
			buf[at + 10 + at % 5] = '"';
			bool esc;
			size_t end = ns_json_string_end(buf, sizeof(buf), 0, &esc);
			cr_assert_eq(end, at + 11 + at % 5, "%s: escape at %zu", ns_json_simd_name(all_variants[v]), at);
			cr_assert(esc);
			buf[at + 3] = '\x02'; /* a raw control byte: not a JSON string */
			cr_assert_eq(ns_json_string_end(buf, sizeof(buf), 0, &esc), 0);
		}
	}
}
