/* Cross-rank op totals (docs/analyses.md "ranks"): the key_averages rows of
 * every rank of a job matched by the report's key (as --merge and diff
 * group them), one metric of each rank side by side, with its minimum,
 * median, maximum, the rank that spent the most (the slowest) and the
 * spread (maximum over median). An op absent from a rank counts 0 there. */
#ifndef NS_RANKS_H
#define NS_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregate/aggregate.h"
#include "common/error.h"
#include "common/strtab.h"

/* The metric compared (--metric), in ns_rank_metric_names' order. */
enum ns_rank_metric {
	NS_RANK_SELF_DEVICE = 0,
	NS_RANK_SELF_CPU,
	NS_RANK_DEVICE_TOTAL,
	NS_RANK_CPU_TOTAL,
	NS_RANK_CALLS,
	NS_RANK_METRIC__COUNT
};
/* "self_device", "self_cpu", "device_total", "cpu_total", "calls", NULL */
extern const char *const ns_rank_metric_names[NS_RANK_METRIC__COUNT + 1];
/* Whether the metric is a time (ns), else a count. */
bool ns_rank_metric_is_time(enum ns_rank_metric m);
/* A key_averages row's value of the metric (ns, or calls). */
int64_t ns_rank_metric_value(enum ns_rank_metric m, const struct ns_avg *row);

/* One op over the ranks. */
struct ns_rank_op {
	ns_str name, overload, shapes, stack, neff; /* in ns_rank_ops.strings */
	bool on_device, is_user_annotation;
	int64_t total, min, max; /* over the ranks (a rank without the op: 0) */
	double median;           /* the middle value, or the mean of the two middle ones */
	size_t slowest;          /* the rank (index) with the largest value; on a tie, the first */
};

struct ns_rank_ops {
	struct ns_strtab strings;
	size_t n_ranks;
	struct ns_rank_op *ops; /* largest total first, then by name */
	size_t n_ops;
	int64_t *values;        /* [op * n_ranks + rank], in the order of ops */
};

/* Matches the rows of aggs[0..n) (one per rank, in the order given) and
 * computes each op's figures. */
int ns_rank_ops_compute(const struct ns_agg *aggs, size_t n, enum ns_rank_metric metric, struct ns_rank_ops *out,
			struct ns_error *err);
void ns_rank_ops_release(struct ns_rank_ops *r);

/* The median of x[0..n) (n > 0; sorts x): the middle value, or the mean of
 * the two middle ones. */
double ns_median_i64(int64_t *x, size_t n);

#endif
