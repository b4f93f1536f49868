/* The escapers of every writer (escape.h). */
#include "report/escape.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/utf8.h"

/* Byte length of the control character at s (1, or 2 for a C1 control in
 * UTF-8), or 0 when s does not start with one. */
static size_t control_at(const unsigned char *s)
{
	if (*s < 0x20 || *s == 0x7f)
		return 1;
	if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 2;
	return 0;
}

/* The visible form of the control character at s (4 bytes at most + NUL). */
static void control_text(const unsigned char *s, size_t len, char out[5])
{
	unsigned code = len == 2 ? s[1] : s[0];
	if (code == '\t')
		strcpy(out, "\\t");
	else if (code == '\n')
		strcpy(out, "\\n");
	else if (code == '\r')
		strcpy(out, "\\r");
	else
		snprintf(out, 5, "\\x%02x", code);
}

bool ns_has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (control_at(p))
			return true;
	return false;
}

const char *ns_visible(const char *s, char **owned)
{
	*owned = NULL;
	if (!ns_has_control(s))
		return s;
	char *buf = malloc(strlen(s) * 4 + 1), *o = buf;
	if (!buf)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = control_at(p);
		if (n) {
			char text[5];
			control_text(p, n, text);
			o = stpcpy(o, text);
			p += n;
		} else {
			*o++ = (char)*p++;
		}
	}
	*o = '\0';
	*owned = buf;
	return buf;
}

size_t ns_visible_width(const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = control_at(p);
		if (n) {
			char text[5];
			control_text(p, n, text);
			w += strlen(text);
			p += n;
		} else {
			w += ns_utf8_starts_char(*p++); /* continuation bytes do not count */
		}
	}
	return w;
}

void ns_fputs_visible(const char *s, FILE *out)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = control_at(p);
		if (n) {
			char text[5];
			control_text(p, n, text);
			fputs(text, out);
			p += n;
		} else {
			fputc(*p++, out);
		}
	}
}

void ns_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

void ns_csv_string(FILE *out, const char *s)
{
	ns_csv_string_n(out, s, strlen(s));
}

void ns_csv_string_n(FILE *out, const char *s, size_t len)
{
	if (!memchr(s, ',', len) && !memchr(s, '"', len) && !memchr(s, '\n', len) && !memchr(s, '\r', len)) {
		fwrite(s, 1, len, out);
		return;
	}
	fputc('"', out);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"')
			fputc('"', out);
		fputc(s[i], out);
	}
	fputc('"', out);
}

/* One visible character (not a control) for Markdown. */
static void md_char(FILE *out, const char *start, const char *p)
{
	bool escape = strchr("\\`*_~[]!<>&|$", *p) != NULL;
	/* autolinks: "scheme://" and "www." */
	escape |= *p == ':' && p[1] == '/';
	escape |= *p == '.' && p - start >= 3 && strncasecmp(p - 3, "www", 3) == 0;
	if (escape)
		fputc('\\', out);
	fputc(*p, out);
	if (*p == '@')
		fputs("\u200b", out);
}

void ns_md_text(FILE *out, const char *s)
{
	for (const char *p = s; *p;) {
		size_t n = control_at((const unsigned char *)p);
		if (n) {
			/* "\x1b" as text: its backslash escaped like any other */
			char text[5];
			control_text((const unsigned char *)p, n, text);
			fputc('\\', out);
			fputs(text, out);
			p += n;
		} else {
			md_char(out, s, p++);
		}
	}
}

void ns_md_cell(FILE *out, const char *s)
{
	fputs("| ", out);
	ns_md_text(out, s);
	fputc(' ', out);
}

void ns_html_text(FILE *out, const char *s)
{
	char *owned = NULL;
	const char *v = ns_visible(s, &owned);
	for (const char *p = v ? v : "(out of memory)"; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*p, out);
		}
	}
	free(owned);
}

void ns_json_string_utf8(FILE *out, const char *s, size_t len)
{
	size_t maximal;
	fputc('"', out);
	for (size_t i = 0; i < len;) {
		unsigned char ch = (unsigned char)s[i];
		size_t n = ns_utf8_seq((const unsigned char *)s + i, len - i, &maximal);
		if (!n) {
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", out);
		else if (ch == '\r')
			fputs("\\r", out);
		else if (ch == '\t')
			fputs("\\t", out);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fwrite(s + i, 1, n, out);
		i += n;
	}
	fputc('"', out);
}
