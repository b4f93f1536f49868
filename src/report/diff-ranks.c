/* diff --ranks match: one line per rank pair, its verdict counts and its
 * totals (docs/diff.md "Rank by rank"), so that the rank that regressed
 * shows without reading every pair's diff. */
#include <math.h>

#include "common/vec.h"
#include "report/diff.h"
#include "report/grid.h"

static struct ns_cell count_cell(size_t n)
{
	return (struct ns_cell){ .type = NS_CELL_INT, .i = (int64_t)n };
}

static struct ns_cell us_cell(int64_t ns)
{
	return (struct ns_cell){ .type = NS_CELL_US, .i = ns };
}

/* The change of the totals in percent: +inf from 0, missing when both are 0. */
static struct ns_cell change_cell(int64_t base, int64_t new_ns)
{
	double x = base ? 100.0 * (double)(new_ns - base) / (double)base : new_ns > 0 ? INFINITY : NAN;
	return (struct ns_cell){ .type = NS_CELL_PCT, .x = x };
}

int ns_diff_write_rank_outcomes(FILE *out, const struct ns_diff_rank_outcome *v, size_t n, enum ns_format fmt,
				struct ns_error *err)
{
	static const char *const h[][2] = {
		{ "Rank", "rank" },		     { "Regressed", "regressed" },
		{ "Improved", "improved" },	     { "New", "new" },
		{ "Removed", "removed" },	     { "Unchanged", "unchanged" },
		{ "Base self CPU", "base_self_cpu_us" }, { "New self CPU", "new_self_cpu_us" },
		{ "CPU change", "self_cpu_change_pct" }, { "Base self device", "base_self_device_us" },
		{ "New self device", "new_self_device_us" }, { "Device change", "self_device_change_pct" },
	};
	static const enum ns_verdict counted[] = { NS_VERDICT_REGRESSED, NS_VERDICT_IMPROVED, NS_VERDICT_NEW,
						   NS_VERDICT_REMOVED, NS_VERDICT_UNCHANGED };
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	for (size_t c = 0; c < NS_ARRAY_SIZE(h); c++)
		ns_grid_col(&g, &(struct ns_grid_col){ .header = h[c][0], .key = h[c][1], .pad = 2, .sign = c == 8 || c == 11 });
	for (size_t i = 0; i < n; i++) {
		const struct ns_diff_metric *cpu = &v[i].total[NS_DIFF_SELF_CPU], *dev = &v[i].total[NS_DIFF_SELF_DEVICE];
		struct ns_cell cells[NS_ARRAY_SIZE(h)] = { { .type = NS_CELL_INT, .i = v[i].rank } };
		for (size_t k = 0; k < NS_ARRAY_SIZE(counted); k++)
			cells[1 + k] = count_cell(v[i].n_verdict[counted[k]]);
		cells[6] = us_cell(cpu->base_ns);
		cells[7] = us_cell(cpu->new_ns);
		cells[8] = change_cell(cpu->base_ns, cpu->new_ns);
		cells[9] = us_cell(dev->base_ns);
		cells[10] = us_cell(dev->new_ns);
		cells[11] = change_cell(dev->base_ns, dev->new_ns);
		ns_grid_row(&g, cells, true, false);
	}
	if (fmt != NS_FMT_JSON)
		return ns_grid_render(out, &g, fmt, err);
	int rc = ns_grid_error(&g) ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
	if (rc == 0)
		ns_grid_write_json(out, &g); /* (an element of the ranks document: no newline) */
	ns_grid_release(&g);
	return rc;
}
