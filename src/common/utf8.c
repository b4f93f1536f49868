/* UTF-8 repair, encoding and widths (utf8.h). */
#include "common/utf8.h"

#include <string.h>

size_t ns_utf8_repair(const char *s, size_t n, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = ns_utf8_valid_prefix(s, n), o = i;
	if (i)
		memcpy(out, s, i);
	while (i < n) {
		size_t m = 1, l = p[i] ? ns_utf8_seq(p + i, n - i, &m) : 0;
		if (l) {
			memcpy(out + o, p + i, l);
			o += l;
			i += l;
		} else {
			memcpy(out + o, NS_UTF8_REPLACEMENT, 3);
			o += 3;
			i += m;
		}
	}
	return o;
}

size_t ns_utf8_put(char *out, unsigned cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t ns_utf8_width(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		w += ns_utf8_starts_char((unsigned char)s[i]);
	return w;
}

size_t ns_utf8_cut(const char *s, size_t n, size_t w)
{
	size_t i = 0;
	for (size_t seen = 0; i < n; i++) {
		if (ns_utf8_starts_char((unsigned char)s[i])) {
			if (seen == w)
				break;
			seen++;
		}
	}
	return i;
}
