/* What the diff's computation (diff.c) and its writers (diff-write.c)
 * share. */
#ifndef NS_DIFF_INTERNAL_H
#define NS_DIFF_INTERNAL_H

#include "report/diff.h"

extern const char *const ns_diff_metric_keys[NS_DIFF_N_METRICS]; /* "self_cpu", "self_device" */

/* (now - base) in percent of |base|; +-inf from 0, NAN when both are 0. */
double ns_diff_change_pct(double base, double now);
/* A row's verdict from its metrics': regressed wins, then improved. */
enum ns_verdict ns_diff_combined_verdict(const struct ns_diff_metric *m);
/* The values shown and judged: per-step medians, or totals. */
double ns_diff_shown_base(const struct ns_diff_metric *m);
double ns_diff_shown_new(const struct ns_diff_metric *m);

/* Whether the opt-in "decided by" forms are written (--test other than
 * per-step), and whether the metric columns show tests (MAD, p). */
bool ns_diff_shows_decided_by(const struct ns_diff *d);
bool ns_diff_shows_tests(const struct ns_diff *d);
/* What decided a row (or the total) with verdict v: the metric that gave
 * the verdict, the device metric first. */
enum ns_diff_basis ns_diff_decided_by(const struct ns_diff_metric *m, enum ns_verdict v);

#endif
