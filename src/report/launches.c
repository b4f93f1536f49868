/* Launch overhead tables (launches.h). */
#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "common/vec.h"
#include "report/grid.h"
#include "report/launches.h"

static const char *op_name(const struct ns_agg *agg, int32_t op)
{
	return op >= 0 ? ns_strtab_get(&agg->trace->strings, agg->fevents[op].name) : "(no op)";
}

static struct ns_cell us(int64_t ns)
{
	return (struct ns_cell){ .type = NS_CELL_NS, .x = (double)ns };
}

/* One row per launch, as HTA's get_cuda_kernel_launch_stats. */
static void each_rows(struct ns_grid *g, const struct ns_agg *agg, const struct ns_launches *l)
{
	const struct ns_trace *t = agg->trace;
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Correlation", .key = "correlation" });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "CPU us", .key = "cpu_duration" });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Device us", .key = "gpu_duration" });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Delay us", .key = "launch_delay" });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Call", .key = "call", .left = true, .md_left = true });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Op", .key = "op", .left = true, .md_left = true, .cap = 55,
					      .cut = NS_CUT_END_DOTS });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Device work", .key = "work", .left = true, .md_left = true });
	for (size_t i = 0; i < l->n; i++) {
		const struct ns_launch *x = &l->v[i];
		struct ns_cell cells[] = {
			{ .type = NS_CELL_INT, .i = x->correlation }, us(x->cpu_ns), us(x->device_ns), us(x->delay_ns),
			{ .type = NS_CELL_TEXT, .text = ns_strtab_get(&t->strings, t->events[x->call].name) },
			{ .type = NS_CELL_TEXT, .text = op_name(agg, x->op) },
			{ .type = NS_CELL_TEXT, .text = ns_strtab_get(&t->strings, t->events[x->work].name) },
		};
		ns_grid_row(g, cells, true, false);
	}
}

struct op_stats {
	ns_str name;               /* 0: no op */
	size_t first, n;           /* its launches in the sorted order */
	int64_t delay_sum, cpu_sum, device_sum;
	int64_t short_work, slow_calls, late;
};

static int cmp_by_op(const void *x, const void *y, void *ctx)
{
	const struct ns_agg *agg = ctx;
	const struct ns_launch *p = x, *q = y;
	const char *a = p->op >= 0 ? ns_strtab_get(&agg->trace->strings, agg->fevents[p->op].name) : "";
	const char *b = q->op >= 0 ? ns_strtab_get(&agg->trace->strings, agg->fevents[q->op].name) : "";
	int c = strcmp(a, b);
	if (c)
		return c;
	return p->delay_ns < q->delay_ns ? -1 : p->delay_ns > q->delay_ns; /* (for the median) */
}

static int cmp_stats(const void *x, const void *y)
{
	const struct op_stats *p = x, *q = y;
	if (p->delay_sum != q->delay_sum)
		return p->delay_sum > q->delay_sum ? -1 : 1;
	return p->first < q->first ? -1 : p->first > q->first;
}

static double median_delay(const struct ns_launch *v, size_t n)
{
	return n % 2 ? (double)v[n / 2].delay_ns : ((double)v[n / 2 - 1].delay_ns + (double)v[n / 2].delay_ns) / 2;
}

/* One row per launching op: the delays' distribution and the outliers. */
static int op_rows(struct ns_grid *g, const struct ns_agg *agg, struct ns_launch *v, size_t n,
		   const struct ns_launch_opts *o)
{
	struct op_stats *s = calloc(n + 1, sizeof(*s));
	size_t ns = 0;
	if (!s)
		return -1;
	ns_sort_r(v, n, sizeof(*v), cmp_by_op, (void *)agg);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(op_name(agg, v[i - 1].op), op_name(agg, v[i].op)) != 0)
			s[ns++] = (struct op_stats){ .first = i };
		struct op_stats *st = &s[ns - 1];
		st->n++;
		st->delay_sum += v[i].delay_ns;
		st->cpu_sum += v[i].cpu_ns;
		st->device_sum += v[i].device_ns;
		st->short_work += v[i].device_ns < v[i].cpu_ns;
		st->slow_calls += v[i].cpu_ns > o->runtime_cutoff_ns;
		st->late += v[i].delay_ns > o->delay_cutoff_ns;
	}
	ns_sort(s, ns, sizeof(*s), cmp_stats);
	static const char *const heads[][2] = {
		{ "Launches", "launches" },       { "Delay total us", "delay_total" }, { "Delay mean us", "delay_mean" },
		{ "Delay median us", "delay_median" }, { "Delay max us", "delay_max" }, { "CPU mean us", "cpu_mean" },
		{ "Device mean us", "device_mean" }, { "Device < CPU", "short_work" },  { "Slow calls", "slow_calls" },
		{ "Late", "late" },
	};
	for (size_t c = 0; c < NS_ARRAY_SIZE(heads); c++)
		ns_grid_col(g, &(struct ns_grid_col){ .header = heads[c][0], .key = heads[c][1] });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Op", .key = "op", .left = true, .md_left = true, .cap = 55,
					      .cut = NS_CUT_END_DOTS });
	for (size_t k = 0; k < ns; k++) {
		const struct op_stats *st = &s[k];
		const struct ns_launch *first = &v[st->first];
		double cnt = (double)st->n;
		struct ns_cell cells[] = {
			{ .type = NS_CELL_INT, .i = (int64_t)st->n }, us(st->delay_sum),
			{ .type = NS_CELL_NS, .x = (double)st->delay_sum / cnt }, { .type = NS_CELL_NS, .x = median_delay(first, st->n) },
			us(first[st->n - 1].delay_ns), { .type = NS_CELL_NS, .x = (double)st->cpu_sum / cnt },
			{ .type = NS_CELL_NS, .x = (double)st->device_sum / cnt }, { .type = NS_CELL_INT, .i = st->short_work },
			{ .type = NS_CELL_INT, .i = st->slow_calls }, { .type = NS_CELL_INT, .i = st->late },
			{ .type = NS_CELL_TEXT, .text = op_name(agg, first->op) },
		};
		ns_grid_row(g, cells, true, false);
	}
	free(s);
	return 0;
}

int ns_report_launches(FILE *out, const struct ns_agg *agg, const struct ns_launches *l,
		       const struct ns_launch_opts *o, enum ns_format fmt, struct ns_error *err)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_COLUMNS;
	if (o->each)
		each_rows(&g, agg, l);
	else if (op_rows(&g, agg, l->v, l->n, o))
		g.oom = true;
	return ns_grid_render(out, &g, fmt, err);
}
