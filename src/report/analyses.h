/* Layouts of the HTA-style analyses (docs/analyses.md): `kernels`,
 * `breakdown`, `overlap` and `stragglers`, one grid each, in every
 * --format. */
#ifndef NS_REPORT_ANALYSES_H
#define NS_REPORT_ANALYSES_H

#include <stdio.h>

#include "aggregate/breakdown.h"
#include "aggregate/kernels.h"
#include "aggregate/overlap.h"
#include "aggregate/stragglers.h"
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

#endif
