/* Text made safe for where it is written: a terminal or text table, JSON,
 * CSV, GitHub-flavoured Markdown. Names and paths come from the input and
 * may hold any character (docs/report.md "Control characters"). */
#ifndef NS_ESCAPE_H
#define NS_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether s has a character ns_visible rewrites. */
bool ns_has_control(const char *s);
/* Control characters made visible, as Python's repr() spells them: TAB,
 * LF, CR as \t \n \r; the other C0 controls, DEL and the C1 controls
 * (U+0080..U+009F, which some terminals obey as ESC sequences) as \xHH.
 * Every other character is kept, so a name without controls prints as
 * PyTorch prints it. Returns s when nothing changes, else a new string in
 * *owned (the caller frees it); NULL when out of memory. */
const char *ns_visible(const char *s, char **owned);
/* The number of code points of ns_visible(s) (Python's len(), which
 * PyTorch's table widths count), without making it. */
size_t ns_visible_width(const char *s);
/* fputs of s with its control characters made visible. */
void ns_fputs_visible(const char *s, FILE *out);

/* A JSON string literal, escaped. */
void ns_json_string(FILE *out, const char *s);
/* A JSON string literal of s[0..len), text that may not be UTF-8 (`sql` output):
 * \n \r \t and the other controls as \u00XX escaped, each byte that is not
 * part of a valid UTF-8 sequence as \ufffd. */
void ns_json_string_utf8(FILE *out, const char *s, size_t len);
/* A CSV field, quoted when needed (RFC 4180). */
void ns_csv_string(FILE *out, const char *s);
/* The same for s[0..len), which may hold NUL bytes. */
void ns_csv_string_n(FILE *out, const char *s, size_t len);
/* Text for GitHub-flavoured Markdown, inline (a table cell, a heading, a
 * list item) that renders as the characters of s and as nothing else:
 * control characters made visible (so no line break can end a table row),
 * each character that could start Markdown or HTML (\ ` * _ ~ [ ] ! < > &
 * | $) backslash-escaped, ":" before "/" and "." after "www" escaped (no
 * autolink), and a ZERO WIDTH SPACE after every "@" (no @-mention, no
 * e-mail autolink: GitHub finds those in the rendered text). */
void ns_md_text(FILE *out, const char *s);
/* "| " + ns_md_text(s) + " ": one cell of a Markdown table row. */
void ns_md_cell(FILE *out, const char *s);
/* Text for HTML, in an element or an attribute value: control characters
 * made visible, & < > " ' as character references. */
void ns_html_text(FILE *out, const char *s);

#endif
