/* The load's messages (pipeline/load.h struct ns_load_ui) on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pipeline/load.h"
#include "report/grid.h"

static void warn(void *ctx, const struct ns_error *w)
{
	(void)ctx;
	ns_cli_warn(w);
}

static void note(void *ctx, const char *text)
{
	(void)ctx;
	if (!ns_cli_quiet)
		fprintf(stderr, "neuron-stats: %s\n", text);
}

/* What a parse learned that the table does not show (docs/report.md):
 * device launches the legacy export gives no time, and the counters of a
 * CUPTI range-profiler trace, which are not times. */
/* Each counter's name and sum, in a column as wide as the longest name
 * (the grid's plain style). */
static void print_counters(const struct ns_trace *t)
{
	struct ns_grid g;
	char(*approx)[32] = calloc(t->n_counters ? t->n_counters : 1, sizeof(*approx)); /* the inexact sums */
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_PLAIN;
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	for (size_t i = 0; approx && i < t->n_counters; i++) {
		const struct ns_counter *c = &t->counters[i];
		struct ns_cell cells[2] = { { .type = NS_CELL_TEXT, .text = ns_strtab_get(&t->strings, c->name) },
					    { .type = NS_CELL_INT, .i = (int64_t)c->sum } };
		if (!c->exact) {
			snprintf(approx[i], sizeof(approx[i]), "%.17g", c->sum_approx);
			cells[1] = (struct ns_cell){ .type = NS_CELL_NUM, .text = approx[i] };
		}
		ns_grid_row(&g, cells, true, false);
	}
	if (!approx || ns_grid_write_text(stderr, &g) < 0)
		fputs("  (out of memory)\n", stderr);
	ns_grid_release(&g);
	free(approx);
}

static void print_notes(void *ctx, const struct ns_trace *t)
{
	(void)ctx;
	if (ns_cli_quiet)
		return;
	if (t->legacy_autograd && t->n_untimed_launches)
		fprintf(stderr,
			"neuron-stats: warning: %s: a legacy autograd-profiler export (PyTorch without Kineto) "
			"records %llu launches of device work but not their device time: the table has no device "
			"columns (docs/report.md \"What an exported trace cannot carry\")\n",
			t->path, (unsigned long long)t->n_untimed_launches);
	uint64_t n_ranges = 0;
	if (!t->has_cat[NS_CAT_CUDA_PROFILER_RANGE]) /* (the ranges' category: no pass over the events) */
		return;
	for (size_t i = 0; i < t->n_events; i++)
		n_ranges += t->events[i].kind == NS_KIND_COUNTER;
	if (!n_ranges)
		return;
	fprintf(stderr,
		"neuron-stats: note: %s: %llu CUPTI range-profiler ranges (\"cuda_profiler_range\") hold "
		"counters, not times: they are not in the table (per kernel: neuron-stats counters)%s\n",
		t->path, (unsigned long long)n_ranges, t->n_counters ? "; each counter summed over the ranges:" : "");
	print_counters(t);
}

/* "PATH:  42%" over itself (the rest of the line cleared); erased when
 * the input ends (total 0). */
static void show_progress(void *ctx, const char *path, uint64_t done, uint64_t total)
{
	(void)ctx;
	FILE *out = ns_cli_progress_stream(); /* (never into the result cache) */
	if (total)
		fprintf(out, "\r%s: %3d%%\033[K", path, (int)(done * 100 / total));
	else
		fputs("\r\033[K", out);
}

const struct ns_load_ui *ns_cli_load_ui(void)
{
	static const struct ns_load_ui quiet = { .warn = warn, .note = note, .parsed = print_notes };
	static const struct ns_load_ui progress = { .warn = warn, .note = note, .parsed = print_notes,
						    .progress = show_progress };
	return !ns_cli_quiet && isatty(2) ? &progress : &quiet;
}
