/* A grid of typed cells and one renderer per output form: PyTorch's
 * fixed-width text table (byte for byte, spec A6), CSV, JSON rows and
 * GitHub Markdown. A layout (table.c, fields.c) declares the columns,
 * adds rows of cells and renders; the cells keep their values, each
 * renderer formats them (a time is PyTorch's float µs in text and
 * Markdown, exact decimal µs in CSV and JSON).
 *
 *   struct ns_grid g;
 *   ns_grid_init(&g, NULL);
 *   size_t name = ns_grid_col(&g, &(struct ns_grid_col){ .header = "Name", .pad = 4 });
 *   ... ns_grid_row(&g, cells, true) per row ...
 *   rc = ns_grid_error(&g) ? -1 : ns_grid_write_text(out, &g);
 *   ns_grid_release(&g);
 *
 * Strings in cells and columns are borrowed: they must outlive the grid. */
#ifndef NS_GRID_H
#define NS_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ns_grid;

enum ns_cell_type {
	NS_CELL_EMPTY = 0, /* text and Markdown: the column's `none` (""); CSV: an empty field; JSON: null */
	NS_CELL_TEXT,      /* text (NULL: the column's `none`, "" in CSV and JSON) */
	NS_CELL_INT,       /* i, in decimal */
	NS_CELL_TIME,      /* us (PyTorch's float µs) in text/Markdown; ns (exact) in CSV/JSON */
	NS_CELL_SHARE,     /* value * 100 / total as "12.34%" ("NaN" when total is 0); text/Markdown only */
	NS_CELL_BYTES,     /* i bytes: "1.50 KB" in text/Markdown, the integer in CSV/JSON */
	NS_CELL_BOOL,      /* i != 0: true or false */
	NS_CELL_US,        /* i nanoseconds as exact decimal µs everywhere, "us" after it in text/Markdown */
	NS_CELL_NUM,       /* text: a number already spelled out, as is everywhere; JSON: null if not finite (Inf) */
	/* x nanoseconds (a double: a median may end in .5), rounded to the ns
	 * (half to even), as exact decimal µs everywhere, with no unit */
	NS_CELL_NS,
	/* x percent: "12.3%" in text/Markdown ("+inf"/"-inf": a change from 0),
	 * "12.345" in CSV/JSON, where an infinity is missing */
	NS_CELL_PCT,
	/* x a p-value: "0.0123" ("<0.0001" below 0.0001) in text/Markdown, 6
	 * significant digits in CSV/JSON */
	NS_CELL_P,
	/* FLOPs: text/Markdown x (i scaled to the column's unit) as "%8.3f", or
	 * "--" when i <= 0 (PyTorch's Total FLOPs cells); CSV/JSON: i */
	NS_CELL_FLOPS,
	/* x, a rate: "%.6f" in text/Markdown, 9 significant digits in CSV/JSON */
	NS_CELL_REAL,
	/* A NaN PCT, P or REAL is missing, printed as an EMPTY cell. */
	/* JSON only (elsewhere an empty cell): nested values from another
	 * grid, `sub`: ROW, its row i as an object; ROWS, its rows i to
	 * i + len - 1 as ns_grid_write_json writes rows. */
	NS_CELL_ROW,
	NS_CELL_ROWS,
};

struct ns_cell {
	enum ns_cell_type type;
	const char *text;
	int64_t i;            /* INT, BYTES, BOOL; TIME, US: exact nanoseconds */
	double us, total;     /* TIME: µs; SHARE: the value and its total */
	size_t len;           /* ROWS: how many; TEXT: its bytes, when they hold a NUL (CSV, and JSON with the grid's
				 json_string); 0: up to its NUL */
	double x;             /* NS, PCT, P, FLOPs (scaled), REAL */
	bool strong;          /* Markdown: in bold */
	const struct ns_grid *sub; /* ROW, ROWS (borrowed) */
};

/* How a text-table cell wider than the column's cap is cut (spec A6.7). */
enum ns_grid_cut {
	NS_CUT_NONE = 0,
	NS_CUT_END,       /* its first `cap` characters (Input Shapes) */
	NS_CUT_END_DOTS,  /* at cap - 3 or wider: its first cap - 3 characters and "..." (Name) */
	NS_CUT_FRONT_DOTS /* "..." and its last cap - 3 characters (Source Location) */
};

struct ns_grid_col {
	const char *header;   /* text table and Markdown */
	const char *key;      /* CSV header, JSON key */
	size_t width;         /* text table: fixed width; 0: the widest cell + pad */
	size_t pad, min, cap; /* widest cell + pad, at least min, at most cap (0: no cap) */
	size_t width_of;      /* > 0: as wide as column width_of - 1 (its cut still uses cap) */
	bool left;            /* text table: `{:<w}` (default `{:>w}`) */
	enum ns_grid_cut cut;
	char split;           /* text table: lines split at this character, one per line (stack frames) */
	const char *none;     /* text table and Markdown: a NULL text cell or an EMPTY one prints this ("" if NULL) */
	bool sign;            /* text table and Markdown: NS and PCT with their sign, "+" too (NS: the sign before rounding) */
	bool md_left;         /* Markdown: ":---" (default "---:") */
	int md_dashes;        /* Markdown: dashes in the rule row */
	/* Markdown: no column of its own: the cell goes on in the previous
	 * column's cell, after md_join and before md_end (a missing cell adds
	 * nothing), e.g. "base → new" */
	const char *md_join, *md_end;
	const char *group;    /* text table: a label on a line above the header, from this column on (left out
				 where the label before it reaches this far) */
	const char *json_sep; /* JSON: before this key in place of ", " (a line break: ",\n   ") */
	const char *gap;      /* NS_GRID_PLAIN: after this cell in place of the grid's gap */
};

enum ns_grid_style {
	NS_GRID_PYTORCH = 0, /* rules, header, every cell padded and followed by two spaces */
	NS_GRID_PLAIN,       /* no rules or header, indented by two, the last cell not padded (help text) */
	NS_GRID_COLUMNS,     /* the header, a line of dashes under each header, the rows; no blanks at the
				end of a line; headers count toward the widths (set it before adding columns) */
	/* the header over a rule (none above it); the last column open: its
	 * cells neither padded nor cut, its rule as wide as its header */
	NS_GRID_OPEN,
};

struct ns_grid {
	enum ns_grid_style style;
	const char *time_unit;     /* text/Markdown times: "s", "ms", "us" or NULL (automatic, as PyTorch) */
	const char *mark;          /* appended to a marked row: after its line; in Markdown after its first cell */
	struct ns_grid_col *cols;
	size_t n_cols, cols_cap;
	size_t *widths;            /* text: the widest cell seen per column (before pad) */
	struct ns_cell *cells;     /* n_rows * n_cols */
	size_t cells_cap;
	bool *marked;
	size_t n_rows, marked_cap;
	size_t n_footer;           /* the last rows: in the text table after its closing rule (totals) */
	bool oom;                  /* an allocation failed: rendering is refused */
	bool as_is;                /* text: cells and headers printed as given (the layout made them
				      visible); widths count each byte that is not part of a valid
				      UTF-8 sequence as one character */
	/* JSON: the escaper of keys and text cells, s[0..len) (NULL: keys as
	 * they are, text through ns_json_string) */
	void (*json_string)(FILE *out, const char *s, size_t len);
	const char *indent, *gap;  /* NS_GRID_PLAIN: before each line, between cells (NULL: two spaces) */
	bool json_values;          /* JSON: the rows as a list of their first cells' values, "[1, 2]" */
	/* JSON: cJSON's formatted style: a key a line, indented by tabs, "key":<tab>value;
	 * arrays on one line, "[{...}, {...}]" */
	bool json_tabs;
};

void ns_grid_init(struct ns_grid *g, const char *time_unit);
void ns_grid_release(struct ns_grid *g);
/* Adds a column (copied); returns its index. */
size_t ns_grid_col(struct ns_grid *g, const struct ns_grid_col *col);
/* Adds a row of n_cols cells (copied). A row not shown only counts for
 * the text table's widths (PyTorch sizes columns over every row, printed
 * or not). */
void ns_grid_row(struct ns_grid *g, const struct ns_cell *cells, bool shown, bool marked);
/* Adds a footer row (after every other row): the text table prints it
 * after its closing rule; the other forms as any row. */
void ns_grid_footer(struct ns_grid *g, const struct ns_cell *cells);
/* Whether an allocation failed since ns_grid_init. */
bool ns_grid_error(const struct ns_grid *g);

/* The text table's width of column c, and of a whole line (cells and
 * the gaps between them). */
size_t ns_grid_width(const struct ns_grid *g, size_t c);
size_t ns_grid_line_width(const struct ns_grid *g);

/* Renderers; 0, or -1 when out of memory (nothing more is written). */
int ns_grid_write_text(FILE *out, const struct ns_grid *g);
/* A CSV header line (when `header`) and one line per row, CRLF-ended. */
void ns_grid_write_csv(FILE *out, const struct ns_grid *g, bool header);
/* A JSON array of one object per row: "[\n  {...},\n  {...}\n]", or "[]"
 * (json_values: "[1, 2]"). */
void ns_grid_write_json(FILE *out, const struct ns_grid *g);
/* Row r as one JSON object, "{...}" (a document: its cells nest other
 * grids' rows). */
void ns_grid_write_json_row(FILE *out, const struct ns_grid *g, size_t r);
/* A JSON document of n grids, grids[0]'s row 0 nesting the others: that
 * row and a newline; -1 when any of them ran out of memory (nothing is
 * written). Then releases them all. */
int ns_grid_write_json_document(FILE *out, struct ns_grid *grids, size_t n);
void ns_grid_write_markdown(FILE *out, const struct ns_grid *g);

/* A cell's text as the text table and Markdown print it (before cutting);
 * buf holds 64 bytes. Returns buf or the text cell's string. */
const char *ns_grid_cell_text(const struct ns_grid *g, const struct ns_grid_col *col, const struct ns_cell *c,
			      char *buf, size_t n);
/* PyTorch's time: "%.3f" in s, ms or us, chosen by size unless unit is given. */
void ns_grid_fmt_time(char *buf, size_t n, double us, const char *unit);

/* A line of n characters c, then a newline. */
void ns_grid_rule(FILE *out, char c, size_t n);

#endif
