/* `neuron-stats stacks`: the call tree (aggregate/calltree.h) as folded
 * stacks for flame graphs, or as a tree table (docs/report.md "stacks"). */
#ifndef NS_STACKS_H
#define NS_STACKS_H

#include <stdio.h>

#include "aggregate/calltree.h"
#include "report/report.h"

enum ns_stack_value { NS_STACK_CPU = 0, NS_STACK_DEVICE };

struct ns_stacks_opts {
	enum ns_stack_value value;
	const char *prefix;     /* folded: a first frame on every line (a run's rank), or NULL */
	double percent_limit;   /* tree: hide nodes under this share of the total (0: none) */
	const char *time_unit;  /* tree text/Markdown: "s", "ms", "us" or NULL (automatic) */
	const char *device_label; /* NULL: the trace's backend */
};

/* One line per node with a positive self value: "frame;frame;... N", the
 * root's child first, N in nanoseconds. ct's children in any order. */
void ns_stacks_write_folded(FILE *out, const struct ns_agg *agg, const struct ns_calltree *ct,
			    const struct ns_stacks_opts *o);
/* The tree: a row per node in depth-first order (children as ct orders
 * them), with total and self CPU and device time and calls. */
int ns_stacks_write_tree(FILE *out, const struct ns_agg *agg, const struct ns_calltree *ct,
			 const struct ns_stacks_opts *o, enum ns_format fmt, struct ns_error *err);

#endif
