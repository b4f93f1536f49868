/* Layouts of the HTA-style analyses (docs/analyses.md): `kernels`,
 * `breakdown`, `overlap`, `stragglers` and `ranks`, one grid each, in
 * every --format. */
#ifndef NS_REPORT_ANALYSES_H
#define NS_REPORT_ANALYSES_H

#include <stdio.h>

#include "aggregate/breakdown.h"
#include "aggregate/kernels.h"
#include "aggregate/overlap.h"
#include "aggregate/ranks.h"
#include "aggregate/stragglers.h"
#include "ntff/engstats.h"
#include "report/report.h"

/* One trace (rank) of a run: its label and its numbers. */
struct ns_rank_kstats {
	const char *path;
	int64_t rank;
	const struct ns_kstats *stats;
};
struct ns_rank_breakdown {
	const char *path;
	int64_t rank;
	const struct ns_breakdown *b;
};
struct ns_rank_overlap {
	const char *path;
	int64_t rank;
	const struct ns_overlap *o;
};

/* kernels --by-engine / --by-opcode: one trace's engine rows. */
struct ns_rank_engine_stats {
	const char *path;
	int64_t rank;
	const struct ns_engine_stats *stats;
};
int ns_report_engine_stats(FILE *out, const struct ns_rank_engine_stats *r, size_t n, enum ns_format fmt,
			   struct ns_error *err);

int ns_report_kernels(FILE *out, const struct ns_rank_kstats *r, size_t n, enum ns_format fmt, struct ns_error *err);
/* The rows with calls that have args "bytes" (memcpy, memset): count,
 * time, bytes and bandwidth (docs/analyses.md). */
int ns_report_kernel_bytes(FILE *out, const struct ns_rank_kstats *r, size_t n, enum ns_format fmt,
			   struct ns_error *err);
/* what: the temporal breakdown per rank (and per step), or the idle-time
 * breakdown */
enum { NS_BREAKDOWN_TEMPORAL = 0, NS_BREAKDOWN_IDLE = 1, NS_BREAKDOWN_STEPS = 2 };
int ns_report_breakdown(FILE *out, const struct ns_rank_breakdown *r, size_t n, int what, enum ns_format fmt,
			struct ns_error *err);

/* steps: false, the whole trace only (HTA's table); true, each step too */
int ns_report_overlap(FILE *out, const struct ns_rank_overlap *r, size_t n, bool steps, enum ns_format fmt,
		      struct ns_error *err);
enum ns_straggler_view { NS_STRAGGLERS_STEPS = 0, NS_STRAGGLERS_RANKS, NS_STRAGGLERS_COLLECTIVES };
int ns_report_stragglers(FILE *out, const struct ns_stragglers *s, enum ns_straggler_view view, enum ns_format fmt,
			 struct ns_error *err);

/* `ranks`: more ranks than this are summarised (min, median, max) rather
 * than shown side by side. */
#define NS_RANK_SIDE_BY_SIDE_MAX 16
#define NS_RANK_LABEL 32 /* bytes of a rank column's header or key */
/* One row per op: the metric of each rank (ranks[k] names rank k of r;
 * summary: their min, median and max instead), the total, the slowest
 * rank and max/median; at most row_limit rows (-1: all). */
int ns_report_rank_ops(FILE *out, const struct ns_rank_ops *r, const int64_t *ranks, enum ns_rank_metric m,
		       bool summary, long row_limit, enum ns_format fmt, struct ns_error *err);
/* One row per profiler step: each rank's step duration (ranks[0..n), the
 * run's ranks; summary: min, median, max), the rank with the longest one,
 * the rank that ended last, and max/median of the durations. */
int ns_report_rank_steps(FILE *out, const struct ns_stragglers *s, const int64_t *ranks, size_t n, bool summary,
			 enum ns_format fmt, struct ns_error *err);

#endif
