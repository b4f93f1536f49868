/* Rows whose device time comes from a Neuron export that carried
 * neuron-explorer's own warnings (docs/neuron.md "Explorer's warnings"):
 * which rows of --engines and --device-detail are marked, and the footnote
 * under them. */
#ifndef NS_REPORT_XWARN_H
#define NS_REPORT_XWARN_H

#include <stdbool.h>
#include <stdio.h>

#include "common/trace.h"
#include "ntff/ntff.h"

#define NS_WARN_MARK "\xe2\x80\xa1" /* U+2021 DOUBLE DAGGER, after the row */

/* An --engines row with engine time, whose device intervals the system
 * export placed: warned when that export had warnings (t->xwarn). */
bool ns_xwarn_engines_row(const struct ns_trace *t, bool has_time);
/* The --device-detail rows of a device profile: warned when the profile's
 * own export had warnings. */
bool ns_xwarn_detail_profile(const struct ns_detail_neff *p);
bool ns_xwarn_detail_any(const struct ns_detail_neff *v, size_t n);

/* "‡ device time from a Neuron export with N neuron-explorer warning(s)
 * (categories): FILE[, FILE...]" for the system export's warnings (as
 * under key_averages); nothing when there are none. */
void ns_xwarn_trace_note(FILE *out, const struct ns_trace *t, bool markdown);
/* The same for the device profiles of --device-detail that had warnings. */
void ns_xwarn_detail_note(FILE *out, const struct ns_detail_neff *v, size_t n, bool markdown);

#endif
