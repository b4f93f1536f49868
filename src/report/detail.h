/* --device-detail: device time per HLO op, framework layer or opcode within
 * each NEFF, and the per-NEFF summary figures (docs/neuron.md "Device
 * detail"), printed after the main table. */
#ifndef NS_REPORT_DETAIL_H
#define NS_REPORT_DETAIL_H

#include <stdio.h>

#include "ntff/ntff.h"
#include "report/report.h"

/* Puts the profiles in report order: most instruction time first, then
 * by NEFF hash and core. */
void ns_detail_sort(struct ns_detail_neff *v, size_t n);

/* Writes the grouped rows of key for every profile, then the NEFF summary;
 * sources are printed under the tables (text) or as a JSON key. */
int ns_report_detail(FILE *out, const struct ns_detail_neff *v, size_t n, enum ns_detail key,
		     const struct ns_report_opts *o, enum ns_format fmt, char *const *sources, size_t n_sources,
		     struct ns_error *err);

#endif
