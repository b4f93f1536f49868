/* `neuron-stats sql` output (sqlout.h): one grid column per result
 * column, one grid row per result row. The table form is the grid's
 * columns style over text the layout made visible; CSV and JSON are the
 * grid's, with the keys escaped (column names come from the query). */
#include "report/sqlout.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/escape.h"
#include "report/grid.h"

/* A control byte as the table shows it (\n, \r, \t, \xHH): its length (0
 * for a byte shown as is), written to out. */
static size_t escape_control(unsigned char ch, char out[5])
{
	if (ch >= 0x20 && ch != 0x7f)
		return 0;
	if (ch == '\n' || ch == '\r' || ch == '\t') {
		out[0] = '\\';
		out[1] = ch == '\n' ? 'n' : ch == '\r' ? 'r' : 't';
		return 2;
	}
	snprintf(out, 5, "\\x%02x", ch);
	return 4;
}

/* s[0..len) (NUL bytes included) with its control bytes escaped, in
 * *copy (caller frees), or NULL in *copy when s has none. -1 when out of
 * memory. */
static int visible_copy(const char *s, size_t len, char **copy)
{
	char esc[5];
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += escape_control((unsigned char)s[i], esc);
	*copy = NULL;
	if (!n && !memchr(s, '\0', len))
		return 0;
	char *o = *copy = malloc(len + n + 1);
	if (!o)
		return -1;
	for (size_t i = 0; i < len; i++) {
		size_t k = escape_control((unsigned char)s[i], esc);
		if (k) {
			memcpy(o, esc, k);
			o += k;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return 0;
}

static bool is_number(enum ns_sql_type t)
{
	return t == NS_SQL_INTEGER || t == NS_SQL_REAL;
}

/* Whether column c holds numbers (NULLs aside) and at least one. */
static bool numeric_column(const struct ns_sql_result *r, size_t c)
{
	bool any = false;
	for (size_t row = 0; row < r->n_rows; row++) {
		enum ns_sql_type t = r->values[row * r->n_cols + c].type;
		if (is_number(t))
			any = true;
		else if (t != NS_SQL_NULL)
			return false;
	}
	return any;
}

/* shown: v's text, or the table's visible copy of it (no NUL in it). */
static struct ns_cell value_cell(const struct ns_sql_value *v, const char *shown)
{
	if (v->type == NS_SQL_NULL)
		return (struct ns_cell){ .type = NS_CELL_EMPTY };
	return (struct ns_cell){ .type = is_number(v->type) ? NS_CELL_NUM : NS_CELL_TEXT, .text = shown,
				 .len = shown == v->text ? v->len : 0 };
}

/* The names, then the values (row-major), as the table shows them: [k]
 * is a copy made visible, or NULL where the text has no control byte.
 * NULL when out of memory. */
static char **visible_texts(const struct ns_sql_result *r)
{
	size_t n_names = r->n_cols, n = n_names + r->n_rows * r->n_cols;
	char **texts = calloc(n ? n : 1, sizeof(*texts));
	for (size_t k = 0; texts && k < n; k++) {
		const char *s = k < n_names ? r->names[k] : r->values[k - n_names].text;
		size_t len = k < n_names ? strlen(s) : r->values[k - n_names].len;
		if (visible_copy(s, len, &texts[k]) < 0) {
			while (k--)
				free(texts[k]);
			free(texts);
			return NULL;
		}
	}
	return texts;
}

/* Name or value k (names first) as a cell shows it. */
static const char *text_of(const struct ns_sql_result *r, char *const *shown, size_t k)
{
	if (shown && shown[k])
		return shown[k];
	return k < r->n_cols ? r->names[k] : r->values[k - r->n_cols].text;
}

/* Fills g: its columns, then its rows; shown: the visible texts (table)
 * or NULL (the values as they are). */
static void fill(struct ns_grid *g, const struct ns_sql_result *r, char *const *shown)
{
	for (size_t c = 0; c < r->n_cols; c++)
		ns_grid_col(g, &(struct ns_grid_col){ .header = text_of(r, shown, c), .key = r->names[c],
						      .left = !numeric_column(r, c) });
	struct ns_cell *cells = calloc(r->n_cols, sizeof(*cells));
	if (!cells) {
		g->oom = true;
		return;
	}
	for (size_t row = 0; row < r->n_rows; row++) {
		for (size_t c = 0; c < r->n_cols; c++) {
			size_t k = row * r->n_cols + c;
			cells[c] = value_cell(&r->values[k], text_of(r, shown, r->n_cols + k));
		}
		ns_grid_row(g, cells, true, false);
	}
	free(cells);
}

/* Renders g in fmt; -1 when out of memory. */
static int render(FILE *out, const struct ns_grid *g, enum ns_sql_format fmt)
{
	if (ns_grid_error(g))
		return -1;
	if (fmt == NS_SQL_TABLE)
		return ns_grid_write_text(out, g);
	if (fmt == NS_SQL_CSV) {
		for (size_t c = 0; c < g->n_cols; c++) {
			fputs(c ? "," : "", out);
			ns_csv_string(out, g->cols[c].key);
		}
		fputs("\r\n", out);
		ns_grid_write_csv(out, g, false);
	} else {
		ns_grid_write_json(out, g);
		fputc('\n', out);
	}
	return 0;
}

int ns_sql_write(FILE *out, const struct ns_sql_result *r, enum ns_sql_format fmt, const char *db_path,
		 struct ns_error *err)
{
	struct ns_grid g;
	char **shown = NULL;
	size_t n_shown = r->n_cols + r->n_rows * r->n_cols;
	int rc = 0;
	if ((unsigned)fmt > NS_SQL_JSON)
		return ns_error_set(err, NS_ERR_USAGE, "unknown output format %d", (int)fmt);
	if (!r->n_cols)
		return 0;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	g.as_is = true;
	g.json_string = ns_json_string_utf8;
	if (fmt == NS_SQL_TABLE && !(shown = visible_texts(r)))
		g.oom = true;
	else
		fill(&g, r, shown);
	if (render(out, &g, fmt) < 0)
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory printing the query result", db_path);
	else if (ferror(out))
		rc = ns_error_set(err, NS_ERR_IO, "cannot write the query result");
	ns_grid_release(&g);
	for (size_t k = 0; shown && k < n_shown; k++)
		free(shown[k]);
	free(shown);
	return rc;
}
