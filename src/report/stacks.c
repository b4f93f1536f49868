/* Folded stacks and the call-tree table (stacks.h). */
#include <stdlib.h>
#include <string.h>

#include "report/grid.h"
#include "report/stacks.h"

/* The node after n in depth-first order, or -1. */
static int32_t next_node(const struct ns_calltree *ct, int32_t n)
{
	if (ct->nodes[n].first_child >= 0)
		return ct->nodes[n].first_child;
	for (; n > 0; n = ct->nodes[n].parent)
		if (ct->nodes[n].next_sibling >= 0)
			return ct->nodes[n].next_sibling;
	return -1;
}

/* A frame of a folded line: ';' separates frames and a line ends at its
 * newline, so ';' is written as ':' and control characters visibly. */
static void put_frame(FILE *out, const char *name)
{
	char *owned = NULL;
	const char *s = ns_visible(name, &owned);
	for (; s && *s; s++)
		fputc(*s == ';' ? ':' : *s, out);
	free(owned);
}

static void put_path(FILE *out, const struct ns_agg *agg, const struct ns_calltree *ct, int32_t n)
{
	if (n == 0)
		return;
	put_path(out, agg, ct, ct->nodes[n].parent);
	if (ct->nodes[ct->nodes[n].parent].parent >= 0)
		fputc(';', out);
	put_frame(out, ns_strtab_get(&agg->trace->strings, ct->nodes[n].name));
}

void ns_stacks_write_folded(FILE *out, const struct ns_agg *agg, const struct ns_calltree *ct,
			    const struct ns_stacks_opts *o)
{
	for (int32_t n = next_node(ct, 0); n > 0; n = next_node(ct, n)) {
		const struct ns_cnode *c = &ct->nodes[n];
		/* (device time: the leaves' alone, which an op's own self time repeats) */
		int64_t v = o->value == NS_STACK_CPU ? c->self_cpu_ns : c->kind == NS_CNODE_DEVICE ? c->self_device_ns : 0;
		if (v <= 0)
			continue;
		if (o->prefix) {
			put_frame(out, o->prefix);
			fputc(';', out);
		}
		put_path(out, agg, ct, n);
		fprintf(out, " %lld\n", (long long)v);
	}
}

static const char *const kinds[] = { "op", "device", "python" }; /* enum ns_cnode_kind's order */

static struct ns_cell time_cell(int64_t ns)
{
	return (struct ns_cell){ .type = NS_CELL_TIME, .i = ns, .us = (double)ns / 1000.0 };
}

/* The columns: times, calls, then the name (indented by depth in the text
 * table; the other forms have depth and kind fields instead). */
static void tree_cols(struct ns_grid *g, bool device, const char *label, bool flat, char hdr[2][64])
{
	snprintf(hdr[0], 64, "Total %s", label);
	snprintf(hdr[1], 64, "Self %s", label);
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Total CPU", .key = "cpu_time_total", .md_dashes = 3 });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Self CPU", .key = "self_cpu_time_total", .md_dashes = 3 });
	if (device) {
		ns_grid_col(g, &(struct ns_grid_col){ .header = hdr[0], .key = "device_time_total", .md_dashes = 3 });
		ns_grid_col(g, &(struct ns_grid_col){ .header = hdr[1], .key = "self_device_time_total", .md_dashes = 3 });
	}
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Calls", .key = "count", .md_dashes = 3 });
	if (flat) {
		ns_grid_col(g, &(struct ns_grid_col){ .header = "Depth", .key = "depth", .md_dashes = 3 });
		ns_grid_col(g, &(struct ns_grid_col){ .header = "Kind", .key = "kind", .md_dashes = 3 });
	}
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Name", .key = "name", .left = true, .md_left = true, .md_dashes = 3 });
}

/* The name cell: indented by two spaces a level when not flat. */
static const char *name_text(const struct ns_agg *agg, const struct ns_cnode *c, bool flat, char **owned)
{
	const char *name = ns_strtab_get(&agg->trace->strings, c->name);
	size_t indent = flat ? 0 : 2 * (size_t)(c->depth - 1), len = strlen(name);
	if (!(*owned = malloc(indent + len + 1)))
		return NULL;
	memset(*owned, ' ', indent);
	memcpy(*owned + indent, name, len + 1);
	return *owned;
}

int ns_stacks_write_tree(FILE *out, const struct ns_agg *agg, const struct ns_calltree *ct,
			 const struct ns_stacks_opts *o, enum ns_format fmt, struct ns_error *err)
{
	struct ns_grid g;
	char hdr[2][64];
	/* (Markdown cells lose their leading blanks: it has the depth field too) */
	bool flat = fmt != NS_FMT_TABLE;
	bool device = agg->use_device;
	const char *label = o->device_label ? o->device_label : ns_backend_label(agg->backend);
	char **names = calloc(ct->n ? ct->n : 1, sizeof(*names));
	int64_t total = 0;
	bool oom = !names;
	ns_grid_init(&g, o->time_unit);
	g.style = NS_GRID_COLUMNS;
	tree_cols(&g, device, label, flat, hdr);
	for (int32_t n = ct->nodes[0].first_child; n > 0; n = ct->nodes[n].next_sibling)
		total += o->value == NS_STACK_CPU ? ct->nodes[n].cpu_ns : ct->nodes[n].device_ns;
	for (int32_t n = next_node(ct, 0); !oom && n > 0; n = next_node(ct, n)) {
		const struct ns_cnode *c = &ct->nodes[n];
		int64_t v = o->value == NS_STACK_CPU ? c->cpu_ns : c->device_ns;
		struct ns_cell cells[8];
		size_t k = 0;
		if (o->percent_limit > 0 && (double)v * 100.0 < o->percent_limit * (double)total)
			continue;
		cells[k++] = time_cell(c->cpu_ns);
		cells[k++] = time_cell(c->self_cpu_ns);
		if (device) {
			cells[k++] = time_cell(c->device_ns);
			cells[k++] = time_cell(c->self_device_ns);
		}
		cells[k++] = (struct ns_cell){ .type = NS_CELL_INT, .i = c->calls };
		if (flat) {
			cells[k++] = (struct ns_cell){ .type = NS_CELL_INT, .i = c->depth };
			cells[k++] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = kinds[c->kind] };
		}
		cells[k++] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = name_text(agg, c, flat, &names[n]) };
		if (!(oom = !cells[k - 1].text))
			ns_grid_row(&g, cells, true, false);
	}
	g.oom |= oom;
	int rc = ns_grid_render(out, &g, fmt, err);
	for (size_t i = 0; names && i < ct->n; i++)
		free(names[i]);
	free(names);
	return rc;
}
