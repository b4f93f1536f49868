/* A buffered, streaming JSON reader: it hands out one complete value at a
 * time as a contiguous byte span, so a trace of any size is read with a
 * window of memory the size of its largest event. Also the small JSON
 * primitives (string decode, value skip) that kineto.c parses events with. */
#ifndef NS_INGEST_JSON_SCAN_H
#define NS_INGEST_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common/error.h"
#include "ingest/json/blocks.h"
#include "ingest/source.h"

#define NS_JSON_MAX_DEPTH 256
#define NS_SCAN_MAX_VALUE ((size_t)1 << 30) /* one JSON value (an event) longer than this is refused */

struct ns_scan {
	const char *path;
	struct ns_source *src;
	char *buf;
	size_t pos, len, cap;
	uint64_t base;        /* stream offset of buf[0] */
	/* Lines are counted only when asked (ns_scan_sync_lines) and before
	 * the window drops what it read: a count on every advance was 2% of a
	 * parse, for error messages. */
	uint64_t line;        /* line number at buf[lines_to] (1-based) */
	uint64_t line_start;  /* stream offset where that line starts */
	size_t lines_to;      /* (at most pos) */
	size_t chunk;         /* the least free space a read is given */
	size_t max_value;     /* the longest value ns_scan_value takes: NS_SCAN_MAX_VALUE (tests set less) */
	bool eof;
};

int ns_scan_init(struct ns_scan *s, const char *path, struct ns_source *src, struct ns_error *err);
void ns_scan_release(struct ns_scan *s);
/* Moves the scanner to byte offset of a seekable source (ns_source_seek),
 * which is on line `line`, starting at offset line_start. */
int ns_scan_seek(struct ns_scan *s, uint64_t offset, uint64_t line, uint64_t line_start, struct ns_error *err);
/* Counts the lines up to buf[pos]: then s->line and s->line_start are
 * those of buf[pos]. */
void ns_scan_sync_lines(struct ns_scan *s);
/* Skips whitespace; returns the next byte without consuming it, or -1 at
 * the end of the input (err untouched) or -2 on a read error (err set). */
int ns_scan_peek(struct ns_scan *s, struct ns_error *err);
/* Consumes one byte (after ns_scan_peek said it is there). */
void ns_scan_advance(struct ns_scan *s, size_t n);
/* After an element of an array (close ']') or object (close '}'):
 * consumes ',' and returns 1 (an element follows), or close and returns 0
 * (the list ended); else returns -1 with *c the byte found, as
 * ns_scan_peek gives it. */
int ns_scan_list_next(struct ns_scan *s, char close, int *c, struct ns_error *err);
/* Finds the complete JSON value starting at the next non-space byte and
 * makes it contiguous in s->buf at [*start, *end). Returns 0,
 * NS_SCAN_TRUNCATED if the input ended inside it (or before it), or an error
 * status (> 0; a corrupt compressed stream is NS_ERR_INPUT, which is why
 * truncation is not 1). */
#define NS_SCAN_TRUNCATED (-1)
int ns_scan_value(struct ns_scan *s, size_t *start, size_t *end, struct ns_error *err);
/* Skips NUL bytes from the current position: 1 if they run to the end of
 * the input, 0 if another byte follows (the position is then at it), -1 on
 * a read error (err set). */
int ns_scan_rest_is_nul(struct ns_scan *s, struct ns_error *err);
/* Location of s->buf[i] for messages: "path:line:col". */
void ns_scan_where(const struct ns_scan *s, size_t i, char *out, size_t n);

/* Primitives over a complete in-memory span p[0..n). Each returns the index
 * just past what it consumed, or 0 on a syntax error. The two smallest are
 * inline: the event loop calls them for every key and value. */
static inline size_t ns_json_skip_ws(const char *p, size_t n, size_t i)
{
	/* (one compare for the usual non-space byte: every space is <= ' ') */
	while (i < n && (unsigned char)p[i] <= ' ' && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	return i;
}

static inline bool ns_json_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The number token at p[i] (RFC 8259's grammar, as number_next has it):
 * the index past it, or 0 if there is none. Straight loops over the
 * digits rather than number_next's state a byte: shapes and strides make
 * numbers the most common token of an event's args. */
static inline size_t ns_json_skip_number(const char *p, size_t n, size_t i)
{
	if (i < n && p[i] == '-')
		i++;
	if (i >= n || !ns_json_is_digit(p[i]))
		return 0;
	if (p[i++] != '0')
		while (i < n && ns_json_is_digit(p[i]))
			i++;
	if (i < n && p[i] == '.') {
		size_t digits = ++i;
		while (i < n && ns_json_is_digit(p[i]))
			i++;
		if (i == digits)
			return 0;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		if (++i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		size_t digits = i;
		while (i < n && ns_json_is_digit(p[i]))
			i++;
		if (i == digits)
			return 0;
	}
	return i;
}

/* ns_json_skip_number for a number that starts with a digit (p[i]), which
 * also reads it when it is plain, as fast_decimal (numparse.c) would:
 * at most 19 digits, at most 3 after a point, no exponent. *kind is then 1
 * + the digits after the point and *m the digits as an integer, else 0. */
static inline size_t ns_json_read_number(const char *p, size_t n, size_t i, uint64_t *m, uint8_t *kind)
{
	size_t first = i, decimals = 0;
	uint64_t v = 0;
	unsigned d; /* (one unsigned compare a digit) */
	*kind = 0;
	if (p[i++] != '0')
		for (v = (unsigned char)p[i - 1] - '0'; i < n && (d = (unsigned)(unsigned char)p[i] - '0') <= 9; i++)
			v = v * 10 + d;
	size_t int_digits = i - first;
	if (i < n && p[i] == '.') {
		size_t digits = ++i;
		for (; i < n && (d = (unsigned)(unsigned char)p[i] - '0') <= 9; i++)
			v = v * 10 + d;
		if (i == digits)
			return 0;
		decimals = i - digits;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E'))
		return ns_json_skip_number(p, n, first);
	if (int_digits + decimals <= 19 && decimals <= 3) {
		*m = v;
		*kind = (uint8_t)(decimals + 1);
	}
	return i;
}

/* depth is the nesting level of the value at p[i] (1 at the top): as in
 * ns_scan_value, an object or array below NS_JSON_MAX_DEPTH levels is an
 * error. */
size_t ns_json_skip_value(const char *p, size_t n, size_t i, int depth);
static inline bool ns_json_is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The escape at p[i] == '\\': the index past it, or 0. */
static inline size_t ns_json_escape_end(const char *p, size_t n, size_t i)
{
	if (i + 1 >= n)
		return 0;
	switch (p[i + 1]) {
	case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
		return i + 2;
	case 'u':
		if (n - i < 6)
			return 0;
		for (size_t k = 2; k < 6; k++)
			if (!ns_json_is_hex(p[i + k]))
				return 0;
		return i + 6;
	default:
		return 0;
	}
}

/* The index of the first '"', '\\' or control byte in p[i..n), or n. The
 * first 16 bytes are looked at here (most strings end within them), the
 * rest 32 or 64 bytes a step by ingest/json/blocks.c (names, call stacks
 * and file paths are most of a trace's bytes). */
static inline size_t ns_json_string_stop(const char *p, size_t n, size_t i)
{
#ifdef __SSE2__
	if (n - i >= 16) {
		const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), below = _mm_set1_epi8(0x1f);
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i control = _mm_cmpeq_epi8(_mm_min_epu8(v, below), v); /* v <= 0x1f, unsigned */
		unsigned hits = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), control));
		if (hits)
			return i + (size_t)__builtin_ctz(hits);
		i += 16;
	}
#endif
	return ns_json_find_string_stop(p, n, i);
}

/* Scans a string token starting at p[i] == '"'; returns the index past the
 * closing quote, and *has_escape says whether decoding is needed. 0 if the
 * string does not end within n bytes or is not JSON (a raw control
 * character, an escape other than \" \\ \/ \b \f \n \r \t \uXXXX):
 * the same strings ns_scan_value accepts. */
static inline size_t ns_json_string_end(const char *p, size_t n, size_t i, bool *has_escape)
{
	*has_escape = false;
	for (i++;;) {
		i = ns_json_string_stop(p, n, i);
		if (i >= n)
			return 0;
		if (p[i] == '"')
			return i + 1;
		if (p[i] != '\\' || !(i = ns_json_escape_end(p, n, i)))
			return 0;
		*has_escape = true;
	}
}
/* Decodes the string body p[i+1 .. end-1) into out (capacity >= the body
 * length: decoding never grows). A malformed \u escape becomes '?' and a lone
 * surrogate U+FFFD. Returns the decoded length. */
size_t ns_json_unescape(const char *body, size_t body_len, char *out);

#endif
