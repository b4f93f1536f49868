/* The HTML report (docs/report.md "HTML report"): one self-contained page,
 * no network. The page is the stylesheet and script of src/report/html/
 * (embedded at build time by tools/embed_assets.py), and the data as one
 * JSON document in a <script type="application/json"> element, which the
 * script lays out: the key_averages rows as the JSON form writes them
 * (report.h; the grid's JSON renderer), per-step times, provenance; for a
 * diff, the diff's JSON document (diff.h). The charts are SVG drawn by the
 * script. The bytes written depend only on the input: no clock, no host. */
#ifndef NS_HTML_H
#define NS_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "aggregate/aggregate.h"
#include "common/error.h"
#include "report/report.h"

/* One aggregated trace of the page. */
struct ns_html_trace {
	const struct ns_agg *agg;
	int64_t file_bytes;   /* the trace file's size, or -1 (unknown: a database, a stream) */
	const char *extra;    /* more keys of the trace's object (", \"engines\": [...]"), or NULL */
};

/* The report page's data document: {"kind": "report", "input": ...,
 * "traces": [...]}; each trace is the report's JSON object (ro's
 * device_label and grouping; every row, first-seen order) with "columns",
 * "steps", "neffs", "provenance" and the trace's extra keys added. */
int ns_html_report_data(FILE *out, const char *input, const struct ns_html_trace *traces, size_t n,
			const struct ns_report_opts *ro, struct ns_error *err);

/* The whole page: title (escaped), the assets and data[0..len), a JSON
 * document, embedded with every '<' written as \u003c (so "</script>" in
 * a name cannot end the element). */
void ns_html_page(FILE *out, const char *title, const char *data, size_t len);

#endif
