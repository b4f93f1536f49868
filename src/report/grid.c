/* The grid engine (grid.h): typed cells, and the text, CSV, JSON and
 * Markdown renderers. */
#include "report/grid.h"
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/vec.h"
#include "report/escape.h"
#include "report/report.h"

#define GAP 2 /* spaces after every text-table cell (PyTorch's SPACING_SIZE) */

void ns_grid_init(struct ns_grid *g, const char *time_unit)
{
	memset(g, 0, sizeof(*g));
	g->time_unit = time_unit;
}

void ns_grid_release(struct ns_grid *g)
{
	free(g->cols);
	free(g->widths);
	free(g->cells);
	free(g->marked);
	memset(g, 0, sizeof(*g));
}

bool ns_grid_error(const struct ns_grid *g)
{
	return g->oom;
}

static size_t text_width(const struct ns_grid *g, const char *s, size_t len);

size_t ns_grid_col(struct ns_grid *g, const struct ns_grid_col *col)
{
	/* widths is grown to cols_cap after cols: once one of them failed
	 * (oom), their capacities differ and nothing more is added */
	size_t widths_cap = g->cols_cap;
	if (g->oom || g->n_rows || NS_GROW(g->cols, g->cols_cap, g->n_cols + 1) ||
	    NS_GROW(g->widths, widths_cap, g->cols_cap)) {
		g->oom = true; /* columns come before rows */
		return 0;
	}
	g->cols[g->n_cols] = *col;
	g->widths[g->n_cols] = 0;
	if (g->style == NS_GRID_COLUMNS && col->header)
		g->widths[g->n_cols] = text_width(g, col->header, strlen(col->header));
	return g->n_cols++;
}

/* ---- cell text (text table and Markdown) ---- */

void ns_grid_fmt_time(char *buf, size_t n, double us, const char *unit)
{
	if (unit && strcmp(unit, "s") == 0)
		snprintf(buf, n, "%.3fs", us / 1e6);
	else if (unit && strcmp(unit, "ms") == 0)
		snprintf(buf, n, "%.3fms", us / 1e3);
	else if (unit && strcmp(unit, "us") == 0)
		snprintf(buf, n, "%.3fus", us);
	else if (us >= 1e6)
		snprintf(buf, n, "%.3fs", us / 1e6);
	else if (us >= 1e3)
		snprintf(buf, n, "%.3fms", us / 1e3);
	else
		snprintf(buf, n, "%.3fus", us);
}

/* PyTorch's _format_memory: binary units, two decimals. */
static void fmt_bytes(char *buf, size_t n, int64_t bytes)
{
	const double K = 1024.0, M = K * 1024.0, G = M * 1024.0;
	double mag = fabs((double)bytes);
	if (mag >= G)
		snprintf(buf, n, "%.2f GB", (double)bytes * 1.0 / G);
	else if (mag >= M)
		snprintf(buf, n, "%.2f MB", (double)bytes * 1.0 / M);
	else if (mag >= K)
		snprintf(buf, n, "%.2f KB", (double)bytes * 1.0 / K);
	else
		snprintf(buf, n, "%" PRId64 " B", bytes);
}

/* Whether a cell has no value: EMPTY, a ROW or ROWS of no grid, a NaN
 * PCT or P and, where a number must be finite (CSV, JSON), an infinite
 * one. */
static bool missing(const struct ns_cell *c, bool finite)
{
	if (c->type == NS_CELL_EMPTY)
		return true;
	if (c->type == NS_CELL_ROW || c->type == NS_CELL_ROWS)
		return c->sub == NULL;
	if (c->type != NS_CELL_PCT && c->type != NS_CELL_P && c->type != NS_CELL_REAL)
		return false;
	return isnan(c->x) || (finite && isinf(c->x));
}

/* NS: x ns rounded to the ns (half to even: nearbyint in the default
 * rounding mode) as decimal µs; signed: "+" or "-" by the sign of x, then
 * the rounded magnitude. */
static void fmt_ns(char *buf, size_t n, double x, bool sign)
{
	if (!sign) {
		ns_format_us(buf, n, (int64_t)nearbyint(x));
		return;
	}
	buf[0] = x < 0 ? '-' : '+';
	ns_format_us(buf + 1, n - 1, (int64_t)nearbyint(fabs(x)));
}

static void fmt_pct(char *buf, size_t n, double pct, bool sign)
{
	if (isinf(pct))
		snprintf(buf, n, "%s", pct > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, n, sign ? "%+.1f%%" : "%.1f%%", pct);
}

const char *ns_grid_cell_text(const struct ns_grid *g, const struct ns_grid_col *col, const struct ns_cell *c,
			      char *buf, size_t n)
{
	buf[0] = '\0';
	if (missing(c, false))
		return col->none ? col->none : "";
	switch (c->type) {
	case NS_CELL_EMPTY:
		break;
	case NS_CELL_NS:
		fmt_ns(buf, n, c->x, col->sign);
		break;
	case NS_CELL_PCT:
		fmt_pct(buf, n, c->x, col->sign);
		break;
	case NS_CELL_P:
		snprintf(buf, n, c->x < 0.0001 ? "<0.0001" : "%.4f", c->x);
		break;
	case NS_CELL_FLOPS:
		if (c->i <= 0)
			snprintf(buf, n, "--");
		else
			snprintf(buf, n, "%8.3f", c->x);
		break;
	case NS_CELL_REAL:
		snprintf(buf, n, "%.6f", c->x);
		break;
	case NS_CELL_TEXT:
		return c->text ? c->text : col->none ? col->none : "";
	case NS_CELL_INT:
		snprintf(buf, n, "%" PRId64, c->i);
		break;
	case NS_CELL_TIME:
		ns_grid_fmt_time(buf, n, c->us, g->time_unit);
		break;
	case NS_CELL_SHARE:
		if (c->total == 0)
			snprintf(buf, n, "NaN");
		else
			snprintf(buf, n, "%.2f%%", c->us * 100.0 / c->total);
		break;
	case NS_CELL_BYTES:
		fmt_bytes(buf, n, c->i);
		break;
	case NS_CELL_BOOL:
		snprintf(buf, n, "%s", c->i ? "true" : "false");
		break;
	case NS_CELL_US:
		ns_format_us(buf, n - 2, c->i);
		strcat(buf, "us");
		break;
	case NS_CELL_NUM:
		return c->text ? c->text : "";
	case NS_CELL_ROW:
	case NS_CELL_ROWS:
		break;
	}
	return buf;
}

/* ---- rows and widths ---- */

/* The width of s[0..len) in characters (grid.h, as_is). */
static size_t text_width(const struct ns_grid *g, const char *s, size_t len)
{
	if (!g->as_is)
		return ns_utf8_width(s, len);
	size_t w = 0;
	for (size_t i = 0, maximal; i < len; w++) {
		size_t n = ns_utf8_seq((const unsigned char *)s + i, len - i, &maximal);
		i += n ? n : 1;
	}
	return w;
}

/* The text a text-table cell or header shows: s, or s made visible
 * (*owned, which the caller frees); NULL when out of memory. */
static const char *shown_text(const struct ns_grid *g, const char *s, char **owned)
{
	*owned = NULL;
	return g->as_is ? s : ns_visible(s, owned);
}

/* The widest line of s (split at `split`, when not 0), in characters. */
static size_t widest_piece(const struct ns_grid *g, const char *s, char split)
{
	size_t widest = 0;
	for (;;) {
		const char *end = split ? strchr(s, split) : NULL;
		size_t len = end ? (size_t)(end - s) : strlen(s), w = text_width(g, s, len);
		widest = w > widest ? w : widest;
		if (!end)
			return widest;
		s = end + 1;
	}
}

/* Widens the auto-sized columns to the row's cells (visible text). */
static void measure(struct ns_grid *g, const struct ns_cell *cells)
{
	char buf[64];
	for (size_t c = 0; c < g->n_cols && !g->oom; c++) {
		const struct ns_grid_col *col = &g->cols[c];
		if (col->width || col->width_of)
			continue;
		char *owned;
		const char *text = shown_text(g, ns_grid_cell_text(g, col, &cells[c], buf, sizeof(buf)), &owned);
		if (!text) {
			g->oom = true;
			return;
		}
		size_t w = widest_piece(g, text, col->split);
		free(owned);
		g->widths[c] = w > g->widths[c] ? w : g->widths[c];
	}
}

void ns_grid_row(struct ns_grid *g, const struct ns_cell *cells, bool shown, bool marked)
{
	if (g->oom)
		return;
	measure(g, cells);
	if (!shown)
		return;
	if (NS_GROW(g->cells, g->cells_cap, (g->n_rows + 1) * g->n_cols) ||
	    NS_GROW(g->marked, g->marked_cap, g->n_rows + 1)) {
		g->oom = true;
		return;
	}
	/* A grid may have no columns (an hlo_stats.json with no known key): its
	 * rows are then empty and cells may still be NULL. */
	if (g->n_cols)
		memcpy(&g->cells[g->n_rows * g->n_cols], cells, g->n_cols * sizeof(*cells));
	g->marked[g->n_rows++] = marked;
}

void ns_grid_footer(struct ns_grid *g, const struct ns_cell *cells)
{
	ns_grid_row(g, cells, true, false);
	if (!g->oom)
		g->n_footer++;
}

size_t ns_grid_width(const struct ns_grid *g, size_t c)
{
	const struct ns_grid_col *col = &g->cols[c];
	if (col->width)
		return col->width;
	if (col->width_of)
		return ns_grid_width(g, col->width_of - 1);
	size_t w = g->widths[c] + col->pad;
	w = w < col->min ? col->min : w;
	return col->cap > 0 && w > col->cap ? col->cap : w;
}

size_t ns_grid_line_width(const struct ns_grid *g)
{
	size_t w = 0;
	for (size_t c = 0; c < g->n_cols; c++)
		w += ns_grid_width(g, c) + (c ? GAP : 0);
	return w;
}

/* ---- the text table ---- */

void ns_grid_rule(FILE *out, char c, size_t n)
{
	for (size_t k = 0; k < n; k++)
		fputc(c, out);
	fputc('\n', out);
}

static void spaces(FILE *out, size_t n)
{
	for (size_t k = 0; k < n; k++)
		fputc(' ', out);
}

/* Text as a text-table cell shows it: "..." + s[0..len) + "...", either
 * dots empty; `width` in characters. */
struct shown {
	const char *before, *s, *after;
	size_t len, width;
};

/* s[0..len) cut as the column says (spec A6.7). */
static struct shown cut(const struct ns_grid *g, const struct ns_grid_col *col, const char *s, size_t len)
{
	size_t w = text_width(g, s, len), cap = col->cap;
	struct shown out = { "", s, "", len, w };
	if (col->cut == NS_CUT_END_DOTS && cap >= 3 && w >= cap - 3) {
		out.len = ns_utf8_cut(s, len, cap - 3);
		out.after = "...";
		out.width = cap;
	} else if (cap == 0 || w <= cap || col->cut == NS_CUT_NONE || col->cut == NS_CUT_END_DOTS) {
		return out;
	} else if (col->cut == NS_CUT_END) {
		out.len = ns_utf8_cut(s, len, cap);
		out.width = cap;
	} else { /* NS_CUT_FRONT_DOTS: the last cap characters, the first three of them dots */
		size_t skip = ns_utf8_cut(s, len, w - cap);
		if (cap > 3) {
			skip += ns_utf8_cut(s + skip, len - skip, 3);
			out.before = "...";
		}
		out.s = s + skip;
		out.len = len - skip;
		out.width = cap;
	}
	return out;
}

/* Piece `line` of text split at `split` ("" past the last piece; the
 * whole text when split is 0): its start and *len; *more: whether another
 * piece follows. */
static const char *piece(const char *text, char split, size_t line, size_t *len, bool *more)
{
	const char *s = text, *end = split ? strchr(s, split) : NULL;
	for (size_t k = 0; k < line; k++) {
		s = end ? end + 1 : s + strlen(s);
		end = end ? strchr(s, split) : NULL;
	}
	*len = end ? (size_t)(end - s) : strlen(s);
	*more = end != NULL;
	return s;
}

/* One cell: piece `line` of its visible text, cut (not a header), padded
 * to the column's width and followed by the gap; in the plain style the
 * last cell is not padded. Whether the text has a piece after this one. */
static bool put_cell(FILE *out, const struct ns_grid *g, const struct ns_cell *cells, size_t c, const char *text,
		     size_t line, bool header)
{
	struct ns_grid_col col = g->cols[c];
	size_t len;
	bool more;
	const char *s = piece(text, header ? 0 : col.split, line, &len, &more);
	bool plain = g->style == NS_GRID_PLAIN, last = c + 1 == g->n_cols;
	bool open_end = g->style == NS_GRID_OPEN && last;
	if (plain && cells && !last) { /* no trailing blanks: the last cell is the last one with text */
		last = true;
		for (size_t k = c + 1; k < g->n_cols && last; k++)
			last = cells[k].type == NS_CELL_TEXT && (!cells[k].text || !*cells[k].text);
	}
	if (header || open_end)
		col.cut = NS_CUT_NONE;
	struct shown sh = cut(g, &col, s, len);
	size_t w = ns_grid_width(g, c), pad = sh.width < w && !open_end ? w - sh.width : 0;
	if (!col.left)
		spaces(out, pad);
	fprintf(out, "%s%.*s%s", sh.before, (int)sh.len, sh.s, sh.after);
	if ((plain || open_end) && last)
		return more;
	if (col.left)
		spaces(out, pad);
	if (plain && (col.gap || g->gap))
		fputs(col.gap ? col.gap : g->gap, out);
	else
		spaces(out, GAP);
	return more;
}

/* One line of a row: piece `line` of each cell (cells NULL: a blank line;
 * header: the column headers, not cut); *more: whether any has more. */
static int put_line(FILE *out, const struct ns_grid *g, const struct ns_cell *cells, size_t line, bool *more,
		    bool header)
{
	char buf[64];
	*more = false;
	for (size_t c = 0; c < g->n_cols; c++) {
		char *owned = NULL;
		const char *text = "";
		if (header)
			text = shown_text(g, g->cols[c].header ? g->cols[c].header : "", &owned);
		else if (cells)
			text = shown_text(g, ns_grid_cell_text(g, &g->cols[c], &cells[c], buf, sizeof(buf)), &owned);
		if (!text)
			return -1;
		if (put_cell(out, g, cells, c, text, line, header))
			*more = true;
		free(owned);
	}
	return 0;
}

static bool any_split(const struct ns_grid *g)
{
	for (size_t c = 0; c < g->n_cols; c++)
		if (g->cols[c].split)
			return true;
	return false;
}

/* A row, its further lines (stack frames) and, when a column splits, the
 * blank line PyTorch puts after each row (spec A6.7). */
static int put_row(FILE *out, const struct ns_grid *g, size_t r)
{
	const struct ns_cell *cells = &g->cells[r * g->n_cols];
	bool more;
	if (g->style == NS_GRID_PLAIN)
		fputs(g->indent ? g->indent : "  ", out);
	if (put_line(out, g, cells, 0, &more, false))
		return -1;
	fprintf(out, "%s\n", g->marked[r] && g->mark ? g->mark : "");
	for (size_t line = 1; more; line++) {
		if (put_line(out, g, cells, line, &more, false))
			return -1;
		fputc('\n', out);
	}
	if (any_split(g)) {
		put_line(out, g, NULL, 0, &more, false);
		fputc('\n', out);
	}
	return 0;
}

/* "------  ----  "; in the open style, the last column as wide as its
 * header and no gap after it */
static void separator(FILE *out, const struct ns_grid *g)
{
	for (size_t c = 0; c < g->n_cols; c++) {
		bool open_end = g->style == NS_GRID_OPEN && c + 1 == g->n_cols;
		size_t w = open_end ? ns_visible_width(g->cols[c].header ? g->cols[c].header : "") : ns_grid_width(g, c);
		for (size_t k = w; k > 0; k--)
			fputc('-', out);
		if (!open_end)
			spaces(out, GAP);
	}
	fputc('\n', out);
}

/* The group labels, each from the start of its column on. */
static void group_line(FILE *out, const struct ns_grid *g)
{
	size_t at = 0, cursor = 0;
	bool any = false;
	for (size_t c = 0; c < g->n_cols; c++)
		any |= g->cols[c].group != NULL;
	if (!any)
		return;
	for (size_t c = 0; c < g->n_cols; c++) {
		const char *label = g->cols[c].group;
		if (label && cursor <= at) {
			spaces(out, at - cursor);
			ns_fputs_visible(label, out);
			cursor = at + ns_visible_width(label);
		}
		at += ns_grid_width(g, c) + GAP;
	}
	fputc('\n', out);
}

/* buf[0..len) with the blanks at the end of each line dropped. */
static void put_trimmed(FILE *out, const char *buf, size_t len)
{
	for (const char *line = buf, *end = buf + len; line < end;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		size_t n = eol ? (size_t)(eol - line) : (size_t)(end - line);
		size_t kept = n;
		while (kept && line[kept - 1] == ' ')
			kept--;
		fwrite(line, 1, kept, out);
		if (eol)
			fputc('\n', out);
		line += n + 1;
	}
}

/* NS_GRID_COLUMNS: the table is made in memory, then written with the
 * blanks at the end of its lines dropped. */
static int write_columns(FILE *out, const struct ns_grid *g)
{
	char *buf = NULL;
	size_t len = 0;
	bool more;
	int rc = -1;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		return -1;
	if (put_line(mem, g, NULL, 0, &more, true) == 0) {
		fputc('\n', mem);
		separator(mem, g);
		rc = 0;
		for (size_t r = 0; r < g->n_rows && rc == 0; r++)
			rc = put_row(mem, g, r);
	}
	if (fclose(mem) || rc) {
		free(buf);
		return -1;
	}
	put_trimmed(out, buf, len);
	free(buf);
	return 0;
}

int ns_grid_write_text(FILE *out, const struct ns_grid *g)
{
	bool more, ruled = g->style != NS_GRID_PLAIN;
	if (g->oom)
		return -1;
	if (g->style == NS_GRID_COLUMNS)
		return write_columns(out, g);
	group_line(out, g);
	if (ruled) {
		if (g->style == NS_GRID_PYTORCH)
			separator(out, g);
		if (put_line(out, g, NULL, 0, &more, true))
			return -1;
		fputc('\n', out);
		separator(out, g);
	}
	for (size_t r = 0; r < g->n_rows; r++) {
		if (ruled && r == g->n_rows - g->n_footer)
			separator(out, g);
		if (put_row(out, g, r))
			return -1;
	}
	if (ruled && g->n_footer == 0)
		separator(out, g);
	return 0;
}

/* ---- machine forms: CSV and JSON ---- */

/* The bytes of a TEXT cell's text. */
static size_t text_len(const struct ns_cell *c)
{
	return c->len ? c->len : c->text ? strlen(c->text) : 0;
}

/* Whether a NUM cell's text is a finite number (JSON has no Inf). */
static bool finite_number(const char *s)
{
	return s && *s && isfinite(strtod(s, NULL));
}

static void json_row(FILE *out, const struct ns_grid *g, size_t r, int depth);
static void json_rows(FILE *out, const struct ns_grid *g, size_t from, size_t n, int depth);

/* A cell as CSV or JSON writes it: strings escaped, times in exact
 * decimal microseconds; depth: of a JSON value nested in tab style. */
static void put_value(FILE *out, const struct ns_cell *c, bool json, int depth)
{
	char buf[64];
	if (missing(c, true)) {
		fputs(json ? "null" : "", out);
		return;
	}
	switch (c->type) {
	case NS_CELL_EMPTY:
		break;
	case NS_CELL_NS:
		fmt_ns(buf, sizeof(buf), c->x, false);
		fputs(buf, out);
		break;
	case NS_CELL_PCT:
		fprintf(out, "%.3f", c->x);
		break;
	case NS_CELL_P:
		fprintf(out, "%.6g", c->x);
		break;
	case NS_CELL_REAL:
		fprintf(out, "%.9g", c->x);
		break;
	case NS_CELL_TEXT:
		if (json)
			ns_json_string(out, c->text ? c->text : "");
		else
			ns_csv_string_n(out, c->text ? c->text : "", text_len(c));
		break;
	case NS_CELL_TIME:
	case NS_CELL_US:
		ns_format_us(buf, sizeof(buf), c->i);
		fputs(buf, out);
		break;
	case NS_CELL_SHARE: /* a ratio has no exact form: the percentage */
		fprintf(out, "%.17g", c->total ? c->us * 100.0 / c->total : 0.0);
		break;
	case NS_CELL_BOOL:
		fputs(c->i ? "true" : "false", out);
		break;
	case NS_CELL_INT:
	case NS_CELL_BYTES:
	case NS_CELL_FLOPS:
		fprintf(out, "%" PRId64, c->i);
		break;
	case NS_CELL_NUM:
		fputs(json && !finite_number(c->text) ? "null" : c->text ? c->text : "", out);
		break;
	case NS_CELL_ROW:
		if (json)
			json_row(out, c->sub, (size_t)c->i, depth);
		break;
	case NS_CELL_ROWS:
		if (json)
			json_rows(out, c->sub, (size_t)c->i, c->len, depth);
		break;
	}
}

void ns_grid_write_csv(FILE *out, const struct ns_grid *g, bool header)
{
	for (size_t c = 0; header && c < g->n_cols; c++)
		fprintf(out, "%s%s", c ? "," : "", g->cols[c].key);
	if (header)
		fputs("\r\n", out);
	for (size_t r = 0; r < g->n_rows; r++) {
		for (size_t c = 0; c < g->n_cols; c++) {
			if (c)
				fputc(',', out);
			put_value(out, &g->cells[r * g->n_cols + c], false, 0);
		}
		fputs("\r\n", out);
	}
}

static void tabs(FILE *out, int n)
{
	for (int k = 0; k < n; k++)
		fputc('\t', out);
}

/* A key and its separators: ", " (or the column's json_sep) before all but
 * the first; in tab style a line of its own, at depth. */
static void json_key(FILE *out, const struct ns_grid *g, size_t c, int depth)
{
	const char *key = g->cols[c].key ? g->cols[c].key : "";
	if (g->json_tabs) {
		fputs(c ? ",\n" : "\n", out);
		tabs(out, depth);
	} else if (c) {
		fputs(g->cols[c].json_sep ? g->cols[c].json_sep : ", ", out);
	}
	if (g->json_string)
		g->json_string(out, key, strlen(key));
	else
		fprintf(out, "\"%s\"", key);
	fputs(g->json_tabs ? ":\t" : ": ", out);
}

/* Row r as an object; depth counts the objects and arrays around it, as
 * cJSON's formatted style indents. */
static void json_row(FILE *out, const struct ns_grid *g, size_t r, int depth)
{
	fputc('{', out);
	depth++;
	for (size_t c = 0; c < g->n_cols; c++) {
		const struct ns_cell *cell = &g->cells[r * g->n_cols + c];
		json_key(out, g, c, depth);
		if (g->json_string && cell->type == NS_CELL_TEXT)
			g->json_string(out, cell->text ? cell->text : "", text_len(cell));
		else
			put_value(out, cell, true, depth);
	}
	if (g->json_tabs) {
		fputc('\n', out);
		tabs(out, depth - 1);
	}
	fputc('}', out);
}

/* Rows from..from+n-1 as an array: of objects, "[\n  {...},\n  {...}\n]"
 * (tab style: "[{...}, {...}]"), or of the first cells' values, "[1, 2]". */
static void json_rows(FILE *out, const struct ns_grid *g, size_t from, size_t n, int depth)
{
	bool inline_list = g->json_values || g->json_tabs;
	fputc('[', out);
	for (size_t r = from; r < from + n && r < g->n_rows; r++) {
		fputs(inline_list ? (r > from ? ", " : "") : (r > from ? ",\n  " : "\n  "), out);
		if (g->json_values)
			put_value(out, &g->cells[r * g->n_cols], true, depth + 1);
		else
			json_row(out, g, r, depth + 1);
	}
	fputs(n && !inline_list ? "\n]" : "]", out);
}

void ns_grid_write_json_row(FILE *out, const struct ns_grid *g, size_t r)
{
	json_row(out, g, r, 0);
}

int ns_grid_write_json_document(FILE *out, struct ns_grid *grids, size_t n)
{
	int rc = 0;
	for (size_t k = 0; k < n; k++)
		rc = ns_grid_error(&grids[k]) || grids[0].n_rows == 0 ? -1 : rc;
	if (rc == 0) {
		ns_grid_write_json_row(out, &grids[0], 0);
		fputc('\n', out);
	}
	for (size_t k = 0; k < n; k++)
		ns_grid_release(&grids[k]);
	return rc;
}

void ns_grid_write_json(FILE *out, const struct ns_grid *g)
{
	json_rows(out, g, 0, g->n_rows, 0);
}

/* ---- GitHub Markdown ---- */

/* A cell in Markdown: text escaped (it comes from the inputs), a number
 * as it is; in bold when strong. */
static void md_value(FILE *out, const struct ns_grid *g, size_t c, const struct ns_cell *cell)
{
	char buf[64];
	const char *text = ns_grid_cell_text(g, &g->cols[c], cell, buf, sizeof(buf));
	fputs(cell->strong ? "**" : "", out);
	if (cell->type == NS_CELL_TEXT || cell->type == NS_CELL_EMPTY)
		ns_md_text(out, text);
	else
		fputs(text, out);
	fputs(cell->strong ? "**" : "", out);
}

/* The header and the rule row (joined columns have neither). */
static void md_head(FILE *out, const struct ns_grid *g)
{
	for (size_t c = 0; c < g->n_cols; c++)
		if (!g->cols[c].md_join)
			ns_md_cell(out, g->cols[c].header);
	fputs("|\n|", out);
	for (size_t c = 0; c < g->n_cols; c++) {
		if (g->cols[c].md_join)
			continue;
		fputs(g->cols[c].md_left ? ":" : "", out);
		for (int k = 0; k < g->cols[c].md_dashes; k++)
			fputc('-', out);
		fputs(g->cols[c].md_left ? "|" : ":|", out);
	}
	fputc('\n', out);
}

void ns_grid_write_markdown(FILE *out, const struct ns_grid *g)
{
	md_head(out, g);
	for (size_t r = 0; r < g->n_rows; r++) {
		const struct ns_cell *cells = &g->cells[r * g->n_cols];
		for (size_t c = 0; c < g->n_cols; c++) {
			const struct ns_grid_col *col = &g->cols[c];
			if (col->md_join) {
				if (missing(&cells[c], false))
					continue;
				fputs(col->md_join, out);
				md_value(out, g, c, &cells[c]);
				fputs(col->md_end ? col->md_end : "", out);
				continue;
			}
			fputs(c ? " | " : "| ", out);
			md_value(out, g, c, &cells[c]);
			if (c == 0 && g->marked[r] && g->mark) /* the mark after the first cell's text */
				fprintf(out, " %s", g->mark);
		}
		fputs(" |\n", out);
	}
}

int ns_grid_render(FILE *out, struct ns_grid *g, enum ns_format fmt, struct ns_error *err)
{
	int rc = 0;
	if (ns_grid_error(g)) {
		rc = -1;
	} else if (fmt == NS_FMT_JSON) {
		ns_grid_write_json(out, g);
		fputc('\n', out);
	} else if (fmt == NS_FMT_CSV) {
		ns_grid_write_csv(out, g, true);
	} else if (fmt == NS_FMT_MARKDOWN) {
		ns_grid_write_markdown(out, g);
	} else {
		rc = ns_grid_write_text(out, g);
	}
	ns_grid_release(g);
	return rc ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
}
