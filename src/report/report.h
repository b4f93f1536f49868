/* Report writers: key_averages rows -> PyTorch's table() text (byte for
 * byte), CSV, JSON and Markdown. Every column and sort key is one row of
 * the field table (fields.h); the forms are rendered by the grid (grid.h). */
#ifndef NS_REPORT_H
#define NS_REPORT_H

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>

#include "aggregate/aggregate.h"
#include "common/error.h"
#include "report/escape.h"
#include "report/fields.h"

enum ns_format { NS_FMT_TABLE = 0, NS_FMT_CSV, NS_FMT_JSON, NS_FMT_MARKDOWN };

/* Resolves a --sort argument (PyTorch attribute or alias, fields.h); NULL
 * if unknown. */
const struct ns_sort_key *ns_sort_key_find(const char *arg);

/* --include/--exclude: the rows whose name matches one of include (all
 * when none) and none of exclude. Rows are dropped after aggregation: every
 * number of a kept row, the percentages and totals included, is the
 * unfiltered table's (docs/report.md "Filters"). */
struct ns_name_filter {
	const regex_t *include, *exclude;
	size_t n_include, n_exclude;
};
bool ns_name_filter_keeps(const struct ns_name_filter *f, const char *name);

struct ns_report_opts {
	const struct ns_sort_key *sort;  /* NULL: first-seen order */
	long row_limit;                  /* -1: all rows; PyTorch's default is 100 */
	bool top_level_only;
	struct ns_name_filter filter;    /* --include/--exclude: the rows printed */
	/* --hide-annotations: rows of user annotations (user_annotation,
	 * gpu_user_annotation: ProfilerStep*, record_function ranges) are left
	 * out, and out of the totals, so of the percentages' denominators */
	bool hide_annotations;
	const char *time_unit;           /* "s", "ms", "us" or NULL (automatic) */
	const char *device_label;        /* "NEURON", "CUDA", ... (NULL: from the backend) */
	const char *header;              /* printed above the table (NULL: none) */
	int max_name_width;              /* 55 */
	int max_shapes_width;            /* 80 */
	int max_src_width;               /* 75 */
	bool show_neff;                  /* --by-neff: a NEFF column (ns_avg.neff; docs/neuron.md) */
	bool shape_flops;                /* --flops: "FLOPs from" and "TFLOP/s" columns (the aggregation was
					    asked for the shapes' FLOPs: ns_agg_opts.shape_flops) */
	/* One document for several traces (docs/cli.md, "report"): */
	bool json_open;                  /* JSON: leave the object open (no "}"): the caller adds keys, closes it */
	bool trace_columns;              /* CSV: leading "path" and "rank" columns */
	bool no_csv_header;              /* CSV: rows only (a later trace of the same document) */
	bool warned_column;              /* CSV/JSON: a device_time_warned field even for a trace without
					    Explorer warnings (another trace of the document has some) */
};

void ns_report_opts_init(struct ns_report_opts *o);
/* Writes one aggregated trace. The JSON form names the trace's path and rank. */
int ns_report_write(FILE *out, const struct ns_agg *agg, const struct ns_report_opts *o, enum ns_format fmt,
		    struct ns_error *err);

/* A field's header (fields.h) with "{D}" replaced by the device label, "{F}" by the FLOPs unit. */
void ns_report_header_text(char *buf, size_t n, const char *tmpl, const char *device, const char *flops);

/* Renders g in fmt (JSON: the array and a newline) and releases it: 0, or
 * NS_ERR_NOMEM when a grid allocation failed. */
struct ns_grid;
int ns_grid_render(FILE *out, struct ns_grid *g, enum ns_format fmt, struct ns_error *err);

/* Exact decimal microseconds from nanoseconds: 1234567 -> "1234.567". */
void ns_format_us(char *buf, size_t n, int64_t ns);

/* Shared with the diff writers (diff.c). */
/* Whether a row's Self device time counts in the "Self <device> time total"
 * footer (spec A6.6: CUDA/PrivateUse1/MTIA rows, user annotations excluded). */
bool ns_avg_counts_for_device_total(const struct ns_avg *r);

#endif
