/* Event selection before aggregation (--category, --steps): which events
 * of a trace every command then analyses, as if the trace held only those
 * (docs/report.md "Filters"). Rows are made from what is left, so the
 * numbers, percentages and totals are those of the selected events, unlike
 * --include/--exclude, which drop rows after aggregation. */
#ifndef NS_SELECT_H
#define NS_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/trace.h"

struct ns_select {
	uint64_t cats;                   /* --category: bits (1 << enum ns_cat) kept; 0: every category */
	bool steps;                      /* --steps A..B given */
	int64_t first_step, last_step;   /* ProfilerStep#first .. #last, inclusive */
	/* the analyses' --include/--exclude: whether an event of this name is
	 * kept (NULL: every name) */
	bool (*keep_name)(void *ctx, const char *name);
	void *name_ctx;
};

/* Whether sel drops anything at all. */
bool ns_select_active(const struct ns_select *sel);

/* Drops the events of t that sel does not keep, in place (flows stay; the
 * counter ranges and their sums follow the events). --steps first:
 *   - a step is a CPU user_annotation ProfilerStep#N, A <= N <= B; its
 *     interval is [ts, ts + dur) (the next step may start where it ends);
 *   - an event on the host (any category PyTorch gives no device type:
 *     cpu_op, user_annotation, runtime calls, memory records, ...) is kept
 *     when its start lies in a step's interval;
 *   - device work (kernel, gpu_memcpy, gpu_memset, cuda_sync,
 *     gpu_user_annotation, ...) is kept when the host event that launched
 *     it is: the runtime call with the same correlation id, else a host
 *     event with the same External id; with neither, when its own start
 *     lies in a step.
 * then --category keeps the events of those categories, and keep_name
 * the events whose name it rejects. The profiler's
 * own span (cat Trace, the time origin) always stays. NS_ERR_USAGE when
 * no step of the range is in t (the message says which steps are). */
int ns_trace_select(struct ns_trace *t, const struct ns_select *sel, struct ns_error *err);

/* Parses "A..B" (whole numbers, 0 <= A <= B) into sel; NS_ERR_USAGE. */
int ns_select_parse_steps(const char *arg, struct ns_select *sel, struct ns_error *err);
/* Parses "CAT[,CAT...]" (Kineto categories, legacy spellings too) into
 * sel->cats; NS_ERR_USAGE naming an unknown one. */
int ns_select_parse_categories(const char *arg, struct ns_select *sel, struct ns_error *err);
/* The analyses' --hide-annotations: the categories selected (every one
 * when none was) less user_annotation and gpu_user_annotation. */
void ns_select_hide_annotations(struct ns_select *sel);

#endif
