/* `neuron-stats launches`: launch overhead per op, or per launch
 * (aggregate/launches.h). */
#ifndef NS_REPORT_LAUNCHES_H
#define NS_REPORT_LAUNCHES_H

#include <stdio.h>

#include "aggregate/launches.h"
#include "report/report.h"

struct ns_launch_opts {
	bool each;                 /* a row per launch (HTA's table) instead of per op */
	int64_t runtime_cutoff_ns; /* a call longer than this is a runtime outlier (HTA: 50 us) */
	int64_t delay_cutoff_ns;   /* a delay longer than this is a delay outlier (HTA: 100 us) */
};

/* (The per-op table reorders l's launches.) */
int ns_report_launches(FILE *out, const struct ns_agg *agg, const struct ns_launches *l,
		       const struct ns_launch_opts *o, enum ns_format fmt, struct ns_error *err);

#endif
