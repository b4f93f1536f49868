/* `neuron-stats counters`: each CUPTI range-profiler range with its
 * launching ops and counters (aggregate/counters.h). */
#ifndef NS_REPORT_COUNTERS_H
#define NS_REPORT_COUNTERS_H

#include <stdio.h>

#include "aggregate/counters.h"
#include "report/report.h"

int ns_report_counters(FILE *out, const struct ns_agg *agg, const struct ns_counter_ranges *ranges,
		       enum ns_format fmt, struct ns_error *err);

#endif
