/* The --engines table: per row, the busy time of each NeuronCore engine
 * inside the row's own device intervals (exact decimal µs). A layout over
 * the grid (grid.h): Name, NEFF (--by-neff), one column per engine. */
#include "report/engines.h"

#include <stdlib.h>
#include <string.h>

#include "report/grid.h"
#include "report/xwarn.h"

#define ENGINE_W 14

static bool row_has_time(const struct ns_engine_rows *rows, size_t r)
{
	for (int e = 0; e < NS_ENG__COUNT; e++)
		if (rows->ns[r][e])
			return true;
	return false;
}

/* CSV and JSON rows say whether they are warned (xwarn.h) whenever a trace
 * of the report has warnings, as key_averages does. */
static bool warned_field(const struct ns_agg *agg, const struct ns_report_opts *o)
{
	return o->warned_column || agg->trace->n_xwarn > 0;
}

/* Column texts that outlive the grid. */
struct engine_names {
	char header[NS_ENG__COUNT][32], key[NS_ENG__COUNT][32];
};

/* The columns: Name and NEFF as wide as their widest text + 4 (at least
 * 8), then one column of exact µs per engine. */
static void engine_cols(struct ns_grid *g, struct engine_names *names, const struct ns_report_opts *o,
			bool warned_col)
{
	size_t name_cap = o->max_name_width > 0 ? (size_t)o->max_name_width : 0;
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Name", .key = "name", .pad = 4, .min = 8, .cap = name_cap,
					      .cut = NS_CUT_END_DOTS });
	if (o->show_neff)
		ns_grid_col(g, &(struct ns_grid_col){ .header = "NEFF", .key = "neff", .pad = 4, .min = 8, .none = "-" });
	for (int e = 0; e < NS_ENG__COUNT; e++) {
		const char *name = ns_engine_name((enum ns_engine)e);
		if (e == NS_ENG_DMA)
			snprintf(names->header[e], sizeof(names->header[e]), "%s", name);
		else
			snprintf(names->header[e], sizeof(names->header[e]), "%s (%s)", name,
				 ns_engine_alias((enum ns_engine)e));
		snprintf(names->key[e], sizeof(names->key[e]), "%s_us", name);
		ns_grid_col(g, &(struct ns_grid_col){ .header = names->header[e], .key = names->key[e], .width = ENGINE_W });
	}
	if (warned_col)
		ns_grid_col(g, &(struct ns_grid_col){ .header = "", .key = "device_time_warned" });
}

/* The rows with any engine time, in key_averages order. */
static void engine_rows(struct ns_grid *g, const struct ns_agg *agg, const struct ns_engine_rows *rows,
			const struct ns_report_opts *o, bool warned_col)
{
	const struct ns_strtab *st = &agg->trace->strings;
	for (size_t r = 0; r < rows->n; r++) {
		struct ns_cell cells[NS_ENG__COUNT + 3];
		size_t c = 0;
		if (!row_has_time(rows, r))
			continue;
		cells[c++] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = ns_strtab_get(st, agg->avgs[r].key) };
		if (o->show_neff)
			cells[c++] = (struct ns_cell){ .type = NS_CELL_TEXT,
						       .text = agg->avgs[r].neff ? ns_strtab_get(st, agg->avgs[r].neff) : NULL };
		for (int e = 0; e < NS_ENG__COUNT; e++)
			cells[c++] = (struct ns_cell){ .type = NS_CELL_US, .i = rows->ns[r][e] };
		bool warned = ns_xwarn_engines_row(agg->trace, true);
		if (warned_col)
			cells[c++] = (struct ns_cell){ .type = NS_CELL_BOOL, .i = warned };
		ns_grid_row(g, cells, true, warned);
	}
}

int ns_report_engines(FILE *out, const struct ns_agg *agg, const struct ns_engine_rows *rows,
		      const struct ns_report_opts *o, enum ns_format fmt, char *const *sources, size_t n_sources,
		      struct ns_error *err)
{
	struct ns_grid g;
	struct engine_names names;
	int rc = 0;
	/* the warned flag is a field of CSV and JSON; the text marks the row */
	bool warned_col = (fmt == NS_FMT_JSON || fmt == NS_FMT_CSV) && warned_field(agg, o);
	ns_grid_init(&g, NULL);
	g.mark = NS_WARN_MARK;
	engine_cols(&g, &names, o, warned_col);
	engine_rows(&g, agg, rows, o, warned_col);
	if (ns_grid_error(&g)) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	} else if (fmt == NS_FMT_JSON) { /* keys of the trace's report object (json_open) */
		fputs(", \"engines\": ", out);
		ns_grid_write_json(out, &g);
		fputs(", \"sources\": [", out);
		for (size_t i = 0; i < n_sources; i++) {
			fputs(i ? ", " : "", out);
			ns_json_string(out, sources[i]);
		}
		fputc(']', out);
	} else if (fmt == NS_FMT_CSV) {
		ns_grid_write_csv(out, &g, true);
	} else {
		fputs("\nNeuronCore engine active time (self, inside each op's own device work; from the device profile)\n",
		      out);
		if (ns_grid_write_text(out, &g))
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		if (rc == 0)
			ns_xwarn_trace_note(out, agg->trace, false);
		for (size_t i = 0; rc == 0 && i < n_sources; i++)
			fprintf(out, "%s %s\n", i ? "       " : "Source:", sources[i]);
	}
	ns_grid_release(&g);
	return rc;
}
