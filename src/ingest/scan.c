#include "ingest/scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_CHUNK (1u << 20)

int ns_scan_init(struct ns_scan *s, const char *path, struct ns_source *src, struct ns_error *err)
{
	memset(s, 0, sizeof(*s));
	s->path = path;
	s->src = src;
	s->line = 1;
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

void ns_scan_release(struct ns_scan *s)
{
	free(s->buf);
	s->buf = NULL;
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
		memmove(s->buf, s->buf + drop, s->len - drop);
		s->len -= drop;
		s->pos -= drop;
		s->base += drop;
		if (keep)
			*keep -= drop;
	}
	if (s->cap - s->len < s->chunk) {
		if (s->cap >= NS_SCAN_MAX_VALUE + s->chunk) {
			ns_error_set(err, NS_ERR_NOMEM, "%s: byte %llu: a single JSON value exceeds %llu bytes",
				     s->path, (unsigned long long)(s->base + s->pos),
				     (unsigned long long)NS_SCAN_MAX_VALUE);
			return -1;
		}
		char *nb = realloc(s->buf, s->cap * 2);
		if (!nb) {
			ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", s->path);
			return -1;
		}
		s->buf = nb;
		s->cap *= 2;
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

static void count_lines(struct ns_scan *s, size_t from, size_t to)
{
	const char *p = s->buf + from, *e = s->buf + to;
	while ((p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
		s->line++;
		p++;
		s->line_start = s->base + (size_t)(p - s->buf);
	}
}

void ns_scan_advance(struct ns_scan *s, size_t n)
{
	count_lines(s, s->pos, s->pos + n);
	s->pos += n;
}

int ns_scan_peek(struct ns_scan *s, struct ns_error *err)
{
	for (;;) {
		while (s->pos < s->len) {
			char c = s->buf[s->pos];
			if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
				return (unsigned char)c;
			if (c == '\n') {
				s->line++;
				s->line_start = s->base + s->pos + 1;
			}
			s->pos++;
		}
		ssize_t got = refill(s, NULL, err);
		if (got < 0)
			return -2;
		if (got == 0)
			return -1;
	}
}

void ns_scan_where(const struct ns_scan *s, size_t i, char *out, size_t n)
{
	uint64_t line = s->line, line_start = s->line_start;
	for (size_t k = s->pos; k < i && k < s->len; k++) {
		if (s->buf[k] == '\n') {
			line++;
			line_start = s->base + k + 1;
		}
	}
	snprintf(out, n, "%s:%llu:%llu", s->path, (unsigned long long)line,
		 (unsigned long long)(s->base + i - line_start + 1));
}

/* Bytes value_extent() must look at; everything else is skipped in bulk. */
static const unsigned char interesting[256] = {
	['"'] = 1, ['\\'] = 1, ['{'] = 1, ['['] = 1, ['}'] = 1, [']'] = 1,
};

static bool is_delimiter(char c)
{
	return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* How far value_extent() got through a value the buffer cut short: it
 * resumes there once more input is read, rather than scanning the value
 * again from its start (which made a value that arrives in many small
 * reads, as from a decompressor, quadratic in its length). */
struct extent {
	size_t scanned;  /* bytes of the value looked at so far */
	int depth;       /* open brackets */
	bool in_string;
	bool escape;     /* the last byte looked at was a backslash in a string */
};

/* Finds the end of the value at buf[start]: an index past it, or 0 if the
 * buffer ends first (x then says where to resume). Only brackets and
 * strings are tracked here; the event parser validates the contents.
 * *depth_err is set on excessive nesting. A scalar ends at a delimiter;
 * one that starts with a delimiter is empty (*empty is set, the returned
 * index is meaningless). */
static size_t value_extent(const char *p, size_t n, size_t start, struct extent *x, bool *depth_err, bool *empty)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i = start + x->scanned;
	char c = p[start];
	if (c != '{' && c != '[' && c != '"') {
		/* a scalar: ends at a delimiter */
		if (is_delimiter(c)) {
			*empty = true;
			return 0;
		}
		while (i < n && !is_delimiter(p[i]))
			i++;
		x->scanned = i - start;
		return i < n ? i : 0;
	}
	for (; i < n; i++) {
		if (x->escape) { /* (the escaped byte) */
			x->escape = false;
			continue;
		}
		while (i < n && !interesting[u[i]])
			i++;
		if (i >= n)
			break;
		c = p[i];
		if (x->in_string) {
			if (c == '\\') {
				x->escape = true;
			} else if (c == '"') {
				x->in_string = false;
				if (x->depth == 0)
					return i + 1; /* the end of a string scalar */
			}
			continue;
		}
		if (c == '"') {
			x->in_string = true;
		} else if (c == '{' || c == '[') {
			if (++x->depth > NS_JSON_MAX_DEPTH) {
				*depth_err = true;
				return 0;
			}
		} else if (c == '}' || c == ']') {
			if (--x->depth == 0)
				return i + 1;
		}
	}
	x->scanned = n - start;
	return 0;
}

int ns_scan_value(struct ns_scan *s, size_t *start, size_t *end, struct ns_error *err)
{
	int c = ns_scan_peek(s, err);
	if (c == -2)
		return err->status;
	if (c == -1)
		return NS_SCAN_TRUNCATED;
	size_t begin = s->pos;
	struct extent x = { 0 };
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
		if (e) {
			*start = begin;
			*end = e;
			return 0;
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

static bool is_number_char(char c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* The number token at p[i] (a non-empty run of number characters): the
 * index past it, or 0 if there is none. */
static inline size_t skip_number(const char *p, size_t n, size_t i)
{
	size_t s = i;
	while (i < n && is_number_char(p[i]))
		i++;
	return i > s ? i : 0;
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
				i = skip_number(p, n, i);
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
		return skip_number(p, n, i);
	/* literals; NaN/Infinity are tolerated (Python's json writes them) */
	static const char *const lits[] = { "true", "false", "null", "NaN", "Infinity" };
	for (size_t k = 0; k < sizeof(lits) / sizeof(lits[0]); k++) {
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

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
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
			o += put_utf8(out + o, cp); /* <= 6 input bytes -> <= 4 output bytes */
			break;
		}
		default: out[o++] = c; break; /* \" \\ \/ and unknown escapes keep the char */
		}
	}
	return o;
}
