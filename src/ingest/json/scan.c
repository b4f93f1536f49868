#include "ingest/json/scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/vec.h"

#define READ_CHUNK (1u << 20)

int ns_scan_init(struct ns_scan *s, const char *path, struct ns_source *src, struct ns_error *err)
{
	memset(s, 0, sizeof(*s));
	s->path = path;
	s->src = src;
	s->line = 1;
	s->max_value = NS_SCAN_MAX_VALUE;
	/* small inputs get a small window (many tiny files; fuzzing); the
	 * buffer still grows for a large value, or a highly compressed input */
	s->chunk = READ_CHUNK;
	while (s->chunk > 4096 && s->chunk / 2 > ns_source_size(src))
		s->chunk /= 2;
	s->cap = 4 * s->chunk;
	s->buf = malloc(s->cap);
	if (!s->buf)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
	return 0;
}

int ns_scan_seek(struct ns_scan *s, uint64_t offset, uint64_t line, uint64_t line_start, struct ns_error *err)
{
	int rc = ns_source_seek(s->src, offset, err);
	if (rc)
		return rc;
	s->base = offset;
	s->pos = s->len = 0;
	s->line = line;
	s->line_start = line_start;
	s->lines_to = 0;
	s->eof = false;
	return 0;
}

void ns_scan_release(struct ns_scan *s)
{
	free(s->buf);
	s->buf = NULL;
}

/* The newlines in p[0, n), 64 bytes a step: byte counters that compares
 * add to, summed before they can wrap (63 steps of 4). */
static size_t newlines_in(const char *p, size_t n)
{
	size_t count = 0, i = 0;
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
	while (n - i >= 64) {
		__m128i sums = zero;
		for (size_t k = 0; k < 63 && n - i >= 64; k++, i += 64) {
			const __m128i *q = (const __m128i *)(p + i);
			sums = _mm_sub_epi8(sums, _mm_cmpeq_epi8(_mm_loadu_si128(q), nl));
			sums = _mm_sub_epi8(sums, _mm_cmpeq_epi8(_mm_loadu_si128(q + 1), nl));
			sums = _mm_sub_epi8(sums, _mm_cmpeq_epi8(_mm_loadu_si128(q + 2), nl));
			sums = _mm_sub_epi8(sums, _mm_cmpeq_epi8(_mm_loadu_si128(q + 3), nl));
		}
		__m128i wide = _mm_sad_epu8(sums, zero);
		count += (size_t)_mm_cvtsi128_si32(wide) + (size_t)_mm_extract_epi16(wide, 4);
	}
#endif
	for (; i < n; i++)
		count += p[i] == '\n';
	return count;
}

/* The line of buf[to] (at or after buf[lines_to]) and the offset where it
 * starts. */
static void line_at(const struct ns_scan *s, size_t to, uint64_t *line, uint64_t *line_start)
{
	const char *from = s->buf + s->lines_to;
	size_t newlines = newlines_in(from, to - s->lines_to);
	uint64_t start = s->line_start;
	if (newlines)
		start = s->base + (size_t)((const char *)memrchr(from, '\n', to - s->lines_to) + 1 - s->buf);
	*line = s->line + newlines;
	*line_start = start;
}

static void count_lines(struct ns_scan *s, size_t to)
{
	line_at(s, to, &s->line, &s->line_start);
	s->lines_to = to;
}

/* Appends more input, first dropping what is before `keep` (an index into
 * buf that must stay valid; it is rebased). Returns bytes added, 0 at the
 * end, -1 on error. */
static ssize_t refill(struct ns_scan *s, size_t *keep, struct ns_error *err)
{
	size_t drop = keep ? *keep : s->pos;
	if (drop > s->pos)
		drop = s->pos;
	if (drop) {
		if (drop > s->lines_to)
			count_lines(s, drop);
		memmove(s->buf, s->buf + drop, s->len - drop);
		s->len -= drop;
		s->pos -= drop;
		s->lines_to -= drop;
		s->base += drop;
		if (keep)
			*keep -= drop;
	}
	if (s->cap - s->len < s->chunk) {
		/* (ns_scan_value stops a value longer than max_value: what is
		 * kept is at most that, so the window never needs more than
		 * max_value + 2 chunks) */
		size_t cap = s->cap * 2;
		if (cap > s->max_value + 2 * s->chunk)
			cap = s->max_value + 2 * s->chunk;
		if (cap > s->cap) {
			char *nb = realloc(s->buf, cap);
			if (!nb) {
				ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", s->path);
				return -1;
			}
			s->buf = nb;
			s->cap = cap;
		}
	}
	if (s->len == s->cap) { /* (not reached: see above) */
		ns_error_set(err, NS_ERR_NOMEM, "%s: a single JSON value exceeds %llu bytes", s->path,
			     (unsigned long long)s->max_value);
		return -1;
	}
	if (s->eof)
		return 0;
	ssize_t got = ns_source_read(s->src, s->buf + s->len, s->cap - s->len, err);
	if (got < 0)
		return -1;
	if (got == 0)
		s->eof = true;
	s->len += (size_t)got;
	return got;
}

void ns_scan_sync_lines(struct ns_scan *s)
{
	count_lines(s, s->pos);
}

void ns_scan_advance(struct ns_scan *s, size_t n)
{
	s->pos += n;
}

int ns_scan_peek(struct ns_scan *s, struct ns_error *err)
{
	for (;;) {
		while (s->pos < s->len) {
			char c = s->buf[s->pos];
			if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
				return (unsigned char)c;
			s->pos++;
		}
		ssize_t got = refill(s, NULL, err);
		if (got < 0)
			return -2;
		if (got == 0)
			return -1;
	}
}

int ns_scan_list_next(struct ns_scan *s, char close, int *c, struct ns_error *err)
{
	*c = ns_scan_peek(s, err);
	if (*c != ',' && *c != (unsigned char)close)
		return -1;
	ns_scan_advance(s, 1);
	return *c == ',';
}

void ns_scan_where(const struct ns_scan *s, size_t i, char *out, size_t n)
{
	uint64_t line, line_start;
	size_t to = i < s->len ? i : s->len;
	line_at(s, to > s->lines_to ? to : s->lines_to, &line, &line_start);
	snprintf(out, n, "%s:%llu:%llu", s->path, (unsigned long long)line,
		 (unsigned long long)(s->base + i - line_start + 1));
}

static bool is_delimiter(char c)
{
	return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Bytes a string body cannot skip over: its end, an escape, and the raw
 * control characters RFC 8259 forbids there. */
static const unsigned char string_stop[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1, [0x07] = 1,
	[0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1, [0x0e] = 1, [0x0f] = 1,
	[0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
	[0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1,
	['"'] = 1, ['\\'] = 1,
};

/* What value_extent() expects next. */
enum expect {
	X_VALUE,          /* a value (after ':', or ',' in an array) */
	X_VALUE_OR_CLOSE, /* after '[' */
	X_KEY,            /* after ',' in an object */
	X_KEY_OR_CLOSE,   /* after '{' */
	X_COLON,          /* after a key */
	X_NEXT,           /* after a value in an array or object: ',' or its close */
	X_STRING,         /* inside a string */
	X_ESCAPE,         /* after a backslash in a string */
	X_HEX,            /* inside \uXXXX */
	X_NUMBER,
	X_LITERAL,
	X_SCALAR_END,     /* a top-level number or literal is complete: a delimiter must follow */
};

/* Where a number is in RFC 8259's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
enum number_at { N_START, N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

/* The state after byte c of a number, or -1 if c cannot continue it. */
static int number_next(int at, unsigned char c)
{
	bool digit = c >= '0' && c <= '9', e = c == 'e' || c == 'E';
	switch (at) {
	case N_START: return c == '-' ? N_MINUS : c == '0' ? N_ZERO : digit ? N_INT : -1;
	case N_MINUS: return c == '0' ? N_ZERO : digit ? N_INT : -1;
	case N_ZERO: return c == '.' ? N_DOT : e ? N_E : -1;
	case N_INT: return digit ? N_INT : c == '.' ? N_DOT : e ? N_E : -1;
	case N_DOT: return digit ? N_FRAC : -1;
	case N_FRAC: return digit ? N_FRAC : e ? N_E : -1;
	case N_E: return digit ? N_EXP : c == '+' || c == '-' ? N_ESIGN : -1;
	case N_ESIGN:
	case N_EXP: return digit ? N_EXP : -1;
	}
	return -1;
}

static bool number_complete(int at)
{
	return at == N_ZERO || at == N_INT || at == N_FRAC || at == N_EXP;
}

/* How far value_extent() got through a value the buffer cut short: it
 * resumes there once more input is read, rather than scanning the value
 * again from its start (which made a value that arrives in many small
 * reads, as from a decompressor, quadratic in its length). */
struct extent {
	size_t scanned;  /* bytes of the value looked at so far */
	int depth;       /* open brackets */
	uint8_t expect;  /* enum expect */
	uint8_t number;  /* enum number_at, in X_NUMBER */
	uint8_t left;    /* hex digits still to come (X_HEX), literal bytes matched (X_LITERAL) */
	bool key;        /* the string being read is an object key */
	const char *literal;
	uint64_t objects[(NS_JSON_MAX_DEPTH + 64) / 64]; /* bit d: level d is an object */
	const char *error; /* set with error_at on invalid JSON */
	size_t error_at;
	char error_text[100];
};

static bool level_is_object(const struct extent *x)
{
	return x->objects[x->depth / 64] >> (x->depth % 64) & 1;
}

/* A byte for a message: 'x', or its hex value when it does not print. */
static const char *shown(unsigned char c, char out[8])
{
	if (c > 0x20 && c < 0x7f)
		snprintf(out, 8, "'%c'", c);
	else
		snprintf(out, 8, "0x%02x", c);
	return out;
}

/* Records the invalid byte c at i; the message is `what` with "%s"
 * replaced by c as shown(). */
static size_t invalid(struct extent *x, size_t i, unsigned char c, const char *what)
{
	char b[8];
	const char *at = strstr(what, "%s");
	snprintf(x->error_text, sizeof(x->error_text), "%.*s%s%s", (int)(at - what), what, shown(c, b), at + 2);
	x->error = x->error_text;
	x->error_at = i;
	return 0;
}

enum { VALUE_STARTED, VALUE_TOO_DEEP, VALUE_INVALID };

/* The state after c, the first byte of a value (inside an object or an
 * array): a bracket opens a level, a quote a string, and so on. */
static inline int start_value(struct extent *x, unsigned char c)
{
	if (c == '{' || c == '[') {
		if (++x->depth > NS_JSON_MAX_DEPTH)
			return VALUE_TOO_DEEP;
		uint64_t bit = UINT64_C(1) << (x->depth % 64);
		if (c == '{')
			x->objects[x->depth / 64] |= bit;
		else
			x->objects[x->depth / 64] &= ~bit;
		x->expect = c == '{' ? X_KEY_OR_CLOSE : X_VALUE_OR_CLOSE;
	} else if (c == '"') {
		x->expect = X_STRING;
		x->key = false;
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		x->expect = X_NUMBER;
		x->number = (uint8_t)number_next(N_START, c);
	} else if (c == 't' || c == 'f' || c == 'n' || c == 'N' || c == 'I') {
		static const char *const literals[] = { "true", "false", "null", "NaN", "Infinity" };
		const char *l = NULL;
		for (size_t k = 0; k < NS_ARRAY_SIZE(literals); k++)
			if ((unsigned char)literals[k][0] == c)
				l = literals[k];
		x->expect = X_LITERAL;
		x->literal = l;
		x->left = 1;
	} else {
		return VALUE_INVALID;
	}
	return VALUE_STARTED;
}

/* Finds the end of the value at p[start]: an index past it, or 0 if the
 * buffer ends first (x then says where to resume) or the text is not
 * JSON (x->error is set, x->error_at is the first byte that cannot be part
 * of a JSON text: RFC 8259, plus NaN, Infinity and -Infinity, which
 * Python's json writes; bytes >= 0x80 are not checked here). So a text
 * that ends inside a value without an error was cut, not damaged.
 * *depth_err is set on excessive nesting. A scalar ends at a delimiter;
 * one that starts with a delimiter is empty (*empty is set, the returned
 * index is meaningless).
 *
 * It is longer than a function should be for a reason: it is one state
 * machine over every byte of the trace, the hottest loop of ingest, and a
 * function per state would cost a call per byte. */
static size_t value_extent(const char *p, size_t n, size_t start, struct extent *x, bool *depth_err, bool *empty)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i = start + x->scanned;
	if (x->scanned == 0 && is_delimiter(p[start])) {
		*empty = true;
		return 0;
	}
	for (; i < n; i++) {
		unsigned char c = u[i];
		switch ((enum expect)x->expect) {
		case X_STRING:
			while (i < n && !string_stop[u[i]])
				i++;
			if (i >= n)
				goto more;
			c = u[i];
			if (c == '\\') {
				x->expect = X_ESCAPE;
			} else if (c == '"') {
				if (x->depth == 0)
					return i + 1; /* the end of a string scalar */
				x->expect = x->key ? X_COLON : X_NEXT;
			} else {
				return invalid(x, i, c, "raw control character %s inside a string");
			}
			break;
		case X_ESCAPE:
			if (c == 'u') {
				x->expect = X_HEX;
				x->left = 4;
			} else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
				   c == 't') {
				x->expect = X_STRING;
			} else {
				return invalid(x, i, c, "invalid escape: %s after a backslash");
			}
			break;
		case X_HEX:
			if (!ns_json_is_hex((char)c))
				return invalid(x, i, c, "invalid \\u escape: %s is not a hex digit");
			if (--x->left == 0)
				x->expect = X_STRING;
			break;
		case X_NUMBER: {
			int to = number_next(x->number, c);
			if (to >= 0) {
				x->number = (uint8_t)to;
				break;
			}
			if (x->number == N_MINUS && c == 'I') { /* -Infinity */
				x->expect = X_LITERAL;
				x->literal = "Infinity";
				x->left = 1;
				break;
			}
			if (!number_complete(x->number))
				return invalid(x, i, c, "invalid number: %s cannot continue it");
			/* the number is complete: c is what follows it */
			x->expect = x->depth == 0 ? X_SCALAR_END : X_NEXT;
			i--;
			break;
		}
		case X_LITERAL:
			if (c != (unsigned char)x->literal[x->left])
				return invalid(x, i, c,
					       "invalid literal (true, false, null, NaN, Infinity): %s cannot continue it");
			if (x->literal[++x->left] == '\0')
				x->expect = x->depth == 0 ? X_SCALAR_END : X_NEXT;
			break;
		case X_SCALAR_END:
			if (!is_delimiter((char)c))
				return invalid(x, i, c, "expected a delimiter after the value, not %s");
			return i;
		case X_COLON:
			if (is_ws(c))
				break;
			if (c != ':')
				return invalid(x, i, c, "expected ':' after a key, not %s");
			x->expect = X_VALUE;
			break;
		case X_NEXT:
			if (is_ws(c))
				break;
			if (c == ',') {
				x->expect = level_is_object(x) ? X_KEY : X_VALUE;
				break;
			}
			if (c != (level_is_object(x) ? '}' : ']'))
				return invalid(x, i, c, level_is_object(x) ? "expected ',' or '}' in an object, not %s"
									   : "expected ',' or ']' in an array, not %s");
			goto close;
		case X_KEY:
		case X_KEY_OR_CLOSE:
			if (is_ws(c))
				break;
			if (c == '}' && x->expect == X_KEY_OR_CLOSE)
				goto close;
			if (c != '"')
				return invalid(x, i, c, "expected a quoted key, not %s");
			x->expect = X_STRING;
			x->key = true;
			break;
		case X_VALUE:
		case X_VALUE_OR_CLOSE:
			if (is_ws(c))
				break;
			if (c == ']' && x->expect == X_VALUE_OR_CLOSE)
				goto close;
			switch (start_value(x, c)) {
			case VALUE_STARTED:
				break;
			case VALUE_TOO_DEEP:
				*depth_err = true;
				return 0;
			default:
				return invalid(x, i, c, "expected a JSON value, not %s");
			}
			break;
		}
		continue;
	close:
		if (--x->depth == 0)
			return i + 1;
		x->expect = X_NEXT;
	}
more:
	x->scanned = n - start;
	return 0;
}

/* The error for the invalid JSON value_extent() found in the value at
 * buf[begin]; NS_SCAN_TRUNCATED instead when the first bad byte is a NUL
 * and only NULs follow it (the zero-filled tail a crash can leave on some
 * file systems: the text was cut there). */
static int invalid_text(struct ns_scan *s, size_t begin, const struct extent *x, struct ns_error *err)
{
	char where[600];
	uint64_t at = s->base + x->error_at;
	ns_scan_where(s, x->error_at, where, sizeof(where));
	if (s->buf[x->error_at] == '\0') {
		uint64_t value_at = s->base + begin;
		s->pos = x->error_at; /* (passing only NULs: no line to count) */
		int r = ns_scan_rest_is_nul(s, err);
		if (r < 0)
			return err->status;
		if (r == 1) { /* the input is used up: the value cut off is where it stands */
			s->base = value_at;
			s->pos = s->len = s->lines_to = 0;
			return NS_SCAN_TRUNCATED;
		}
	}
	return ns_error_set(err, NS_ERR_INPUT, "%s: invalid JSON at byte %llu: %s", where,
			    (unsigned long long)at, x->error);
}

int ns_scan_value(struct ns_scan *s, size_t *start, size_t *end, struct ns_error *err)
{
	int c = ns_scan_peek(s, err);
	if (c == -2)
		return err->status;
	if (c == -1)
		return NS_SCAN_TRUNCATED;
	size_t begin = s->pos;
	struct extent x = { .expect = X_VALUE };
	for (;;) {
		bool depth_err = false, empty = false;
		size_t e = value_extent(s->buf, s->len, begin, &x, &depth_err, &empty);
		if (empty) {
			*start = *end = begin;
			return 0;
		}
		if (depth_err) {
			char where[600];
			ns_scan_where(s, begin, where, sizeof(where));
			return ns_error_set(err, NS_ERR_INPUT, "%s: JSON nested deeper than %d levels",
					    where, NS_JSON_MAX_DEPTH);
		}
		if (x.error)
			return invalid_text(s, begin, &x, err);
		if (e && e - begin <= s->max_value) {
			*start = begin;
			*end = e;
			return 0;
		}
		if ((e ? e : s->len) - begin > s->max_value) {
			char where[600];
			ns_scan_where(s, begin, where, sizeof(where));
			return ns_error_set(err, NS_ERR_NOMEM, "%s: a single JSON value exceeds %llu bytes", where,
					    (unsigned long long)s->max_value);
		}
		ssize_t got = refill(s, &begin, err);
		if (got < 0)
			return err->status;
		if (got == 0)
			return NS_SCAN_TRUNCATED;
	}
}

int ns_scan_rest_is_nul(struct ns_scan *s, struct ns_error *err)
{
	for (;;) {
		while (s->pos < s->len && s->buf[s->pos] == '\0')
			s->pos++; /* (no newline to count) */
		if (s->pos < s->len)
			return 0;
		ssize_t got = refill(s, NULL, err); /* drops what was passed: memory stays flat */
		if (got < 0)
			return -1;
		if (got == 0)
			return 1;
	}
}

size_t ns_json_skip_value(const char *p, size_t n, size_t i, int depth)
{
	if (i >= n)
		return 0;
	char c = p[i];
	if (c == '"') {
		bool esc;
		return ns_json_string_end(p, n, i, &esc);
	}
	if (c == '{' || c == '[') {
		if (depth > NS_JSON_MAX_DEPTH)
			return 0;
		char close = c == '{' ? '}' : ']';
		i = ns_json_skip_ws(p, n, i + 1);
		if (i < n && p[i] == close)
			return i + 1;
		for (;;) {
			if (c == '{') {
				if (i >= n || p[i] != '"')
					return 0;
				bool esc;
				i = ns_json_string_end(p, n, i, &esc);
				if (!i)
					return 0;
				i = ns_json_skip_ws(p, n, i);
				if (i >= n || p[i] != ':')
					return 0;
				i = ns_json_skip_ws(p, n, i + 1);
			}
			/* (shapes and strides are arrays of numbers: no call for each) */
			if (i < n && p[i] >= '0' && p[i] <= '9')
				i = ns_json_skip_number(p, n, i);
			else
				i = ns_json_skip_value(p, n, i, depth + 1);
			if (!i)
				return 0;
			i = ns_json_skip_ws(p, n, i);
			if (i >= n)
				return 0;
			if (p[i] == close)
				return i + 1;
			if (p[i] != ',')
				return 0;
			i = ns_json_skip_ws(p, n, i + 1);
		}
	}
	if (c == '-' && n - i >= 9 && memcmp(p + i, "-Infinity", 9) == 0)
		return i + 9;
	if (c == '-' || (c >= '0' && c <= '9'))
		return ns_json_skip_number(p, n, i);
	/* literals; NaN/Infinity are tolerated (Python's json writes them) */
	static const char *const lits[] = { "true", "false", "null", "NaN", "Infinity" };
	for (size_t k = 0; k < NS_ARRAY_SIZE(lits); k++) {
		size_t l = strlen(lits[k]);
		if (n - i >= l && memcmp(p + i, lits[k], l) == 0)
			return i + l;
	}
	return 0;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int k = 0; k < 4; k++) {
		char c = p[k];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

size_t ns_json_unescape(const char *body, size_t body_len, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < body_len; i++) {
		char c = body[i];
		if (c != '\\' || i + 1 >= body_len) {
			out[o++] = c;
			continue;
		}
		c = body[++i];
		switch (c) {
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'u': {
			unsigned cp, lo;
			if (i + 4 >= body_len || hex4(body + i + 1, &cp) < 0) {
				out[o++] = '?'; /* a bad \u escape: one byte, so decoding never grows */
				continue;
			}
			i += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < body_len && body[i + 1] == '\\' &&
			    body[i + 2] == 'u' && hex4(body + i + 3, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd;
			}
			o += ns_utf8_put(out + o, cp); /* <= 6 input bytes -> <= 4 output bytes */
			break;
		}
		default: out[o++] = c; break; /* \" \\ \/ and unknown escapes keep the char */
		}
	}
	return o;
}
