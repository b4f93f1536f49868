/* UTF-8 text: validity, repair, encoding, and widths.
 *
 * Valid means what Python's bytes.decode("utf-8") accepts: no overlong
 * form, no surrogate (U+D800..U+DFFF), nothing above U+10FFFF. Repair
 * replaces what is not valid as Python's errors="replace" does: one
 * U+FFFD for each maximal invalid subpart (the longest prefix of a
 * sequence that could still have become valid, or else one byte).
 *
 * A width is the number of characters (code points) that PyTorch's tables
 * count, Python's len() of the decoded text; a byte that is not a
 * continuation byte starts a character. Widths of text that was never
 * repaired still count each lead or stray byte as one character, never a
 * continuation byte. Wide (East Asian) characters count as one, as in
 * PyTorch.
 *
 * The checks a parser runs on every string are inline here; the rest is
 * in utf8.c. */
#ifndef NS_UTF8_H
#define NS_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The bytes U+FFFD takes (EF BF BD): what repair puts in. */
#define NS_UTF8_REPLACEMENT "\xef\xbf\xbd"

/* Whether byte c starts a character (is not a continuation byte 10xxxxxx). */
static inline bool ns_utf8_starts_char(unsigned char c)
{
	return (c & 0xc0) != 0x80;
}

/* Length (1..4) of the valid UTF-8 sequence at p[0..n) (n >= 1), or 0 if
 * none starts there. A NUL byte is a valid sequence of 1. *maximal (not
 * NULL) gets the length of the maximal subpart at p (>= 1): what one
 * U+FFFD replaces when the sequence is not valid. */
static inline size_t ns_utf8_seq(const unsigned char *p, size_t n, size_t *maximal)
{
	unsigned char c = p[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
	*maximal = 1;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	for (size_t k = 1; k < len; k++) {
		if (k >= n || p[k] < (k == 1 ? lo : 0x80) || p[k] > (k == 1 ? hi : 0xbf))
			return 0;
		*maximal = k + 1;
	}
	return len;
}

/* Length of the longest prefix of s[0..n) that is valid UTF-8 with no NUL
 * byte (NUL cannot live in a C string): n when all of s is. */
static inline size_t ns_utf8_valid_prefix(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, m;
	/* 8 bytes a step while they are all 0x01..0x7f: names, shapes and
	 * stacks are ASCII (a byte that is 0 or >= 0x80 sets its top bit in
	 * w - 0x01.. or in w) */
	for (uint64_t w; n - i >= 8; i += 8) {
		memcpy(&w, p + i, 8);
		if (((w - UINT64_C(0x0101010101010101)) | w) & UINT64_C(0x8080808080808080))
			break;
	}
	while (i < n && p[i] >= 0x01 && p[i] < 0x80)
		i++;
	while (i < n && p[i]) {
		size_t l = ns_utf8_seq(p + i, n - i, &m);
		if (!l)
			break;
		i += l;
	}
	return i;
}

/* Whether s[0..n) is valid UTF-8 with no NUL byte. */
static inline bool ns_utf8_valid(const char *s, size_t n)
{
	return ns_utf8_valid_prefix(s, n) == n;
}

/* Writes s[0..n) to out with each NUL byte and each maximal invalid
 * subpart replaced by U+FFFD; valid text is copied as is. out holds 3 * n
 * bytes (it is not NUL-terminated). Returns the length written. */
size_t ns_utf8_repair(const char *s, size_t n, char *out);

/* Writes code point cp (< 0x110000) as UTF-8 to out (4 bytes room);
 * returns its length (1..4). */
size_t ns_utf8_put(char *out, unsigned cp);

/* The width of s[0..n): the bytes that start a character. */
size_t ns_utf8_width(const char *s, size_t n);

/* The byte length of the longest prefix of s[0..n) holding at most w
 * characters, with each character whole (it stops before the byte that
 * starts character w + 1). */
size_t ns_utf8_cut(const char *s, size_t n, size_t w);

#endif
