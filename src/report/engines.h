/* --engines: engine active time per key_averages row (docs/neuron.md
 * "Engines"), printed after the main table. */
#ifndef NS_REPORT_ENGINES_H
#define NS_REPORT_ENGINES_H

#include <stdio.h>

#include "ntff/rows.h"
#include "report/report.h"

/* Rows with any engine time, in key_averages (first-seen) order; sources
 * are printed under the table, one line each (where the numbers came from). */
int ns_report_engines(FILE *out, const struct ns_agg *agg, const struct ns_engine_rows *rows,
		      const struct ns_report_opts *o, enum ns_format fmt, char *const *sources, size_t n_sources,
		      struct ns_error *err);

#endif
