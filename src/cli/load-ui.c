/* The load's messages (pipeline/load.h struct ns_load_ui) on stderr. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pipeline/load.h"

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
	for (size_t i = 0; i < t->n_events; i++)
		n_ranges += t->events[i].kind == NS_KIND_COUNTER;
	if (!n_ranges)
		return;
	fprintf(stderr,
		"neuron-stats: note: %s: %llu CUPTI range-profiler ranges (\"cuda_profiler_range\") hold "
		"counters, not times: they are not in the table%s\n",
		t->path, (unsigned long long)n_ranges, t->n_counters ? "; each counter summed over the ranges:" : "");
	int width = 0;
	for (size_t i = 0; i < t->n_counters; i++) {
		int len = (int)strlen(ns_strtab_get(&t->strings, t->counters[i].name));
		width = len > width ? len : width;
	}
	for (size_t i = 0; i < t->n_counters; i++) {
		const struct ns_counter *c = &t->counters[i];
		const char *name = ns_strtab_get(&t->strings, c->name);
		if (c->exact)
			fprintf(stderr, "  %-*s  %lld\n", width, name, (long long)c->sum);
		else
			fprintf(stderr, "  %-*s  %.17g\n", width, name, c->sum_approx);
	}
}

/* "PATH:  42%" over itself; erased when the input ends (total 0). */
static void show_progress(void *ctx, const char *path, uint64_t done, uint64_t total)
{
	(void)ctx;
	if (total)
		fprintf(stderr, "\r%s: %3d%%", path, (int)(done * 100 / total));
	else
		fputs("\r\033[K", stderr);
}

const struct ns_load_ui *ns_cli_load_ui(void)
{
	static const struct ns_load_ui quiet = { .warn = warn, .note = note, .parsed = print_notes };
	static const struct ns_load_ui progress = { .warn = warn, .note = note, .parsed = print_notes,
						    .progress = show_progress };
	return !ns_cli_quiet && isatty(2) ? &progress : &quiet;
}
