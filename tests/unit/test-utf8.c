/* src/common/utf8.h: validity, repair (Python's errors="replace"),
 * encoding, width and cut, on exact bytes. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/vec.h"

#define S(lit) lit, sizeof(lit) - 1

/* ns_utf8_repair of in, as a NUL-terminated string (the test frees it). */
static char *repaired(const char *in, size_t n, size_t *out_len)
{
	char *out = malloc(3 * n + 1);
	cr_assert_not_null(out);
	*out_len = ns_utf8_repair(in, n, out);
	out[*out_len] = '\0';
	return out;
}

static void expect_repair(const char *in, size_t n, const char *want, size_t want_len)
{
	size_t len;
	char *got = repaired(in, n, &len);
	cr_expect_eq(len, want_len, "length %zu, want %zu", len, want_len);
	cr_expect(len == want_len && memcmp(got, want, len) == 0, "bytes differ");
	cr_expect(ns_utf8_valid(got, len), "the repair is valid UTF-8");
	free(got);
}

Test(utf8, valid_text_is_valid)
{
	cr_expect(ns_utf8_valid(S("")));
	cr_expect(ns_utf8_valid(S("aten::matmul")));
	cr_expect(ns_utf8_valid(S("\xc2\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"))); /* © € 😀 */
	cr_expect(ns_utf8_valid(S("\xed\x9f\xbf")));                        /* U+D7FF */
	cr_expect(ns_utf8_valid(S("\xee\x80\x80")));                        /* U+E000 */
	cr_expect(ns_utf8_valid(S("\xf4\x8f\xbf\xbf")));                    /* U+10FFFF */
	cr_expect(ns_utf8_valid(S("\xef\xbf\xbd")));                        /* U+FFFD */
}

Test(utf8, invalid_text_and_where_it_starts)
{
	static const struct {
		const char *s;
		size_t n, prefix;
	} cases[] = {
		{ S("ab\xff"), 2 },             /* never a lead byte */
		{ S("a\x80"), 1 },              /* a stray continuation byte */
		{ S("\xc0\xaf"), 0 },           /* overlong '/' */
		{ S("\xc1\xbf"), 0 },           /* overlong */
		{ S("\xe0\x80\xaf"), 0 },       /* overlong, 3 bytes */
		{ S("\xf0\x80\x80\xaf"), 0 },   /* overlong, 4 bytes */
		{ S("x\xed\xa0\x80"), 1 },      /* U+D800, a surrogate */
		{ S("\xf4\x90\x80\x80"), 0 },   /* U+110000 */
		{ S("\xf5\x80\x80\x80"), 0 },   /* lead byte above F4 */
		{ S("ok\xe2\x82"), 2 },         /* cut short */
		{ S("\xc2\xa9\xc2"), 2 },       /* cut short after a valid one */
		{ "a\0b", 3, 1 },               /* NUL cannot live in a C string */
	};
	for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
		cr_expect(!ns_utf8_valid(cases[i].s, cases[i].n), "case %zu is invalid", i);
		cr_expect_eq(ns_utf8_valid_prefix(cases[i].s, cases[i].n), cases[i].prefix,
			     "case %zu: prefix %zu", i, ns_utf8_valid_prefix(cases[i].s, cases[i].n));
	}
}

Test(utf8, sequence_length_and_maximal_subpart)
{
	size_t m;
	cr_expect_eq(ns_utf8_seq((const unsigned char *)"\0", 1, &m), 1); /* NUL is UTF-8 */
	cr_expect_eq(ns_utf8_seq((const unsigned char *)"\xe2\x82\xac", 3, &m), 3);
	cr_expect_eq(m, 3);
	cr_expect_eq(ns_utf8_seq((const unsigned char *)"\xe2\x82" "A", 3, &m), 0);
	cr_expect_eq(m, 2);
	cr_expect_eq(ns_utf8_seq((const unsigned char *)"\xf0\x9f\x98", 3, &m), 0);
	cr_expect_eq(m, 3);
	cr_expect_eq(ns_utf8_seq((const unsigned char *)"\xe0\x80\x80", 3, &m), 0);
	cr_expect_eq(m, 1); /* E0 80: no valid sequence goes on like that */
	cr_expect_eq(ns_utf8_seq((const unsigned char *)"\xed\xa0\x80", 3, &m), 0);
	cr_expect_eq(m, 1);
}

Test(utf8, repair_keeps_valid_text)
{
	expect_repair(S("aten::add_"), S("aten::add_"));
	expect_repair(S("\xc2\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), S("\xc2\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
	expect_repair(S(""), S(""));
}

Test(utf8, repair_replaces_as_python_does)
{
	/* b"...".decode("utf-8", errors="replace").encode() in Python 3 */
	expect_repair(S("ab\xff" "cd"), S("ab\xef\xbf\xbd" "cd"));
	expect_repair(S("\x80\x80"), S("\xef\xbf\xbd\xef\xbf\xbd"));
	/* a cut-short sequence is one maximal subpart: one U+FFFD */
	expect_repair(S("\xe2\x82" "A"), S("\xef\xbf\xbd" "A"));
	expect_repair(S("\xf0\x9f\x98"), S("\xef\xbf\xbd"));
	/* an overlong form and a surrogate: one U+FFFD per byte */
	expect_repair(S("\xc0\xaf"), S("\xef\xbf\xbd\xef\xbf\xbd"));
	expect_repair(S("\xed\xa0\x80"), S("\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));
	expect_repair(S("\xf4\x90\x80\x80"), S("\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));
	/* NUL is replaced too (the output goes into C strings) */
	expect_repair("a\0b", 3, S("a\xef\xbf\xbd" "b"));
	/* valid text after a bad byte is kept */
	expect_repair(S("\xff\xc2\xa9!"), S("\xef\xbf\xbd\xc2\xa9!"));
}

Test(utf8, repair_never_takes_more_than_three_bytes_a_byte)
{
	char in[64];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(0x80 + i);
	size_t len;
	char *got = repaired(in, sizeof(in), &len);
	cr_expect_eq(len, 3 * sizeof(in));
	free(got);
}

Test(utf8, put_encodes_each_length)
{
	static const struct {
		unsigned cp;
		const char *want;
	} cases[] = {
		{ 0x41, "A" },
		{ 0x7f, "\x7f" },
		{ 0x80, "\xc2\x80" },
		{ 0xa9, "\xc2\xa9" },
		{ 0x7ff, "\xdf\xbf" },
		{ 0x800, "\xe0\xa0\x80" },
		{ 0x20ac, "\xe2\x82\xac" },
		{ 0xfffd, "\xef\xbf\xbd" },
		{ 0x10000, "\xf0\x90\x80\x80" },
		{ 0x1f600, "\xf0\x9f\x98\x80" },
		{ 0x10ffff, "\xf4\x8f\xbf\xbf" },
	};
	for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
		char out[4];
		size_t n = ns_utf8_put(out, cases[i].cp);
		cr_expect_eq(n, strlen(cases[i].want), "U+%04X: %zu bytes", cases[i].cp, n);
		cr_expect(memcmp(out, cases[i].want, n) == 0, "U+%04X: bytes", cases[i].cp);
	}
}

Test(utf8, width_counts_characters)
{
	cr_expect_eq(ns_utf8_width(S("")), 0);
	cr_expect_eq(ns_utf8_width(S("aten::mm")), 8);
	cr_expect_eq(ns_utf8_width(S("\xc2\xa9\xe2\x82\xac\xf0\x9f\x98\x80")), 3); /* © € 😀 */
	cr_expect_eq(ns_utf8_width(S("\xe4\xb8\xad\xe6\x96\x87")), 2);             /* 中文: len() 2 */
	/* unrepaired text: a stray continuation byte counts nothing, a lead byte one */
	cr_expect_eq(ns_utf8_width(S("a\x80" "b")), 2);
	cr_expect_eq(ns_utf8_width(S("a\xff" "b")), 3);
}

Test(utf8, cut_keeps_whole_characters)
{
	const char s[] = "\xc2\xa9" "ab" "\xe2\x82\xac" "\xf0\x9f\x98\x80"; /* ©ab€😀 */
	const size_t n = sizeof(s) - 1;
	const size_t want[] = { 0, 2, 3, 4, 7, 11, 11, 11 };
	for (size_t w = 0; w < NS_ARRAY_SIZE(want); w++)
		cr_expect_eq(ns_utf8_cut(s, n, w), want[w], "cut to %zu: %zu bytes, want %zu", w,
			     ns_utf8_cut(s, n, w), want[w]);
	cr_expect_eq(ns_utf8_cut(s, 4, 10), 4, "n bounds the cut");
	cr_expect_eq(ns_utf8_cut(S(""), 3), 0);
}
