/* The counters table (counters.h): a row per range, a column per counter. */
#include <stdlib.h>
#include <string.h>

#include "report/counters.h"
#include "common/vec.h"
#include "report/grid.h"

/* The strings the grid borrows: op stacks and non-integer values. */
struct owned {
	char **v;
	size_t n, cap;
	bool oom;
};

static const char *own(struct owned *o, const char *s)
{
	char *copy = strdup(s);
	if (!copy || NS_GROW(o->v, o->cap, o->n + 1) < 0) {
		free(copy);
		o->oom = true;
		return "";
	}
	return o->v[o->n++] = copy;
}

static const char *op_text(const struct ns_trace *t, ns_str op)
{
	return op ? ns_strtab_get(&t->strings, op) : "";
}

/* The cpu_op stack of a range's launch, outermost first, joined by ';'
 * into buf (cut at n - 1 bytes). */
static void op_stack(const struct ns_agg *a, const struct ns_counter_range *r, char *buf, size_t n)
{
	size_t len = 0, depth = 0;
	int32_t chain[256];
	buf[0] = '\0';
	for (int32_t p = r->launch >= 0 ? ns_fevent_parent(&a->fevents[r->launch]) : -1;
	     p >= 0 && depth < NS_ARRAY_SIZE(chain); p = ns_fevent_parent(&a->fevents[p]))
		if (a->trace->events[a->fevents[p].event].cat == NS_CAT_CPU_OP)
			chain[depth++] = p;
	while (depth-- > 0 && len + 1 < n) {
		const char *name = ns_strtab_get(&a->trace->strings, a->trace->events[a->fevents[chain[depth]].event].name);
		int w = snprintf(buf + len, n - len, "%s%s", len ? ";" : "", name);
		len = w < 0 || (size_t)w >= n - len ? n - 1 : len + (size_t)w;
	}
}

static void add_row(struct ns_grid *g, const struct ns_agg *agg, const struct ns_counter_range *r, bool flat,
		    struct ns_cell *cells, struct owned *o)
{
	const struct ns_trace *t = agg->trace;
	char buf[4096];
	size_t c = 0;
	cells[c++] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = ns_strtab_get(&t->strings, t->events[r->event].name) };
	cells[c++] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = op_text(t, r->top_op) };
	cells[c++] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = op_text(t, r->bottom_op) };
	if (flat) {
		op_stack(agg, r, buf, sizeof(buf));
		cells[c++] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = own(o, buf) };
	}
	for (size_t k = 0; k < t->n_counters; k++)
		cells[c + k] = (struct ns_cell){ .type = NS_CELL_EMPTY };
	for (size_t v = r->values_off; v < r->values_off + r->n_values; v++) {
		const struct ns_counter_value *cv = &t->counter_values[v];
		snprintf(buf, sizeof(buf), "%.17g", cv->d);
		cells[c + cv->counter] = cv->is_int ? (struct ns_cell){ .type = NS_CELL_INT, .i = cv->i }
						    : (struct ns_cell){ .type = NS_CELL_NUM, .text = own(o, buf) };
	}
	ns_grid_row(g, cells, true, false);
}

static void add_cols(struct ns_grid *g, const struct ns_trace *t, bool flat)
{
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Kernel", .key = "name", .left = true, .cap = 55,
					      .cut = NS_CUT_END_DOTS, .md_left = true, .md_dashes = 3 });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Top-level op", .key = "top_level_op", .left = true,
					      .md_left = true, .md_dashes = 3 });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Bottom-level op", .key = "bottom_level_op", .left = true,
					      .md_left = true, .md_dashes = 3 });
	if (flat)
		ns_grid_col(g, &(struct ns_grid_col){ .header = "Op stack", .key = "op_stack" });
	for (size_t k = 0; k < t->n_counters; k++) {
		const char *name = ns_strtab_get(&t->strings, t->counters[k].name);
		ns_grid_col(g, &(struct ns_grid_col){ .header = name, .key = name, .md_dashes = 3 });
	}
}

int ns_report_counters(FILE *out, const struct ns_agg *agg, const struct ns_counter_ranges *ranges,
		       enum ns_format fmt, struct ns_error *err)
{
	const struct ns_trace *t = agg->trace;
	bool flat = fmt == NS_FMT_CSV || fmt == NS_FMT_JSON; /* (the op stack: too long for a table) */
	struct ns_grid g;
	struct owned o = { 0 };
	struct ns_cell *cells = calloc(t->n_counters + 4, sizeof(*cells));
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	add_cols(&g, t, flat);
	for (size_t i = 0; cells && i < ranges->n; i++)
		add_row(&g, agg, &ranges->v[i], flat, cells, &o);
	g.oom |= !cells || o.oom;
	int rc = ns_grid_render(out, &g, fmt, err);
	for (size_t i = 0; i < o.n; i++)
		free(o.v[i]);
	free(o.v);
	free(cells);
	return rc;
}
