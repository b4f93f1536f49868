/* The field table: one row per column of the key_averages report (perf's
 * sort_dimensions[] / perf_hpp__format[]). Each row names the column as
 * PyTorch's header prints it, its machine name (CSV header, JSON key), its
 * sort keys, its help text, how to get its cell from a key_averages row,
 * where it stands in each output form and when it applies. The text, CSV,
 * JSON and Markdown layouts (table.c), the --sort lookup and the sort-key
 * part of `report --help` all come from it (docs/architecture.md,
 * "Output: fields and the grid"). */
#ifndef NS_FIELDS_H
#define NS_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "aggregate/aggregate.h"
#include "report/grid.h"

/* What a field holds. */
enum ns_field_kind {
	NS_KIND_TEXT, NS_KIND_COUNT, NS_KIND_TIME, NS_KIND_PERCENT, NS_KIND_BYTES, NS_KIND_FLAG,
	NS_KIND_FLOPS, /* an integer, scaled to the column's unit in text (NS_CELL_FLOPS) */
	NS_KIND_RATE,  /* a real number, missing when NaN (NS_CELL_REAL) */
};

/* When a field is a column, beyond its place in a form. The text and
 * Markdown forms show what the trace has (PyTorch's table); CSV and JSON
 * keep a fixed set: there only DEVICE, DEVICE_MEMORY, NEFF and WARNED
 * count, the first two meaning "the trace has a device" (docs/cli.md,
 * "report"). */
enum ns_field_when {
	NS_WHEN_ALWAYS = 0,
	NS_WHEN_DEVICE,        /* some row has Self device time */
	NS_WHEN_MEMORY,        /* the trace was profiled with memory */
	NS_WHEN_DEVICE_MEMORY, /* memory, a device and some positive Self device memory */
	NS_WHEN_OVERLOADS,     /* some row has an overload name (--group-by overload) */
	NS_WHEN_SHAPES,        /* some row has input shapes (--group-by shape) */
	NS_WHEN_STACK,         /* some row has a stack (--group-by stack=N) */
	NS_WHEN_NEFF,          /* --by-neff */
	NS_WHEN_WARNED,        /* device time from an export with Explorer warnings (or another trace's) */
	NS_WHEN_FLOPS,         /* some row has FLOPs > 0 (args "flops"; with --flops, the shapes' too) */
	NS_WHEN_SHAPE_FLOPS,   /* --flops, and some row has FLOPs > 0 */
};

/* Text-table width rules. */
enum ns_field_width {
	NS_WIDTH_FIXED = 0, /* 12 (PyTorch's column width for numbers) */
	NS_WIDTH_NAME,      /* widest + 4, capped by --max-name-width; cut with "..." */
	NS_WIDTH_AS_NAME,   /* as wide as Name, cut as Name */
	NS_WIDTH_SHAPES,    /* widest + 4, capped at 80, cut */
	NS_WIDTH_SOURCE,    /* widest frame + 4, capped at 75, one line per frame, "..." + tail */
	NS_WIDTH_HASH,      /* widest + 4, from 8 to 63 */
};

/* What a getter needs beside the row. */
struct ns_field_ctx {
	const struct ns_strtab *strings;
	double total_self_cpu, total_self_device; /* the percentages' totals (spec A6.6) */
	bool warned;                              /* the trace has Explorer warnings */
	double flops_scale;                       /* Total FLOPs' unit: 10^-3e (spec A6.8) */
	bool rate_on_device;                      /* TFLOP/s over Self device time (else Self CPU) */
};

struct ns_sort_key {
	const char *name;    /* PyTorch attribute name (after cuda/xpu/privateuse1 -> device); NULL: none */
	const char *aliases; /* space-separated short names ("" if none) */
	bool ascending;      /* PyTorch sorts descending (reverse=True); `name` sorts A->Z */
	const char *help;    /* --help's line (NULL: the field's help) */
};

/* Where a field stands in each form: columns are written in increasing
 * order; 0: not in that form. Numbers step by 10 so a new field fits in. */
struct ns_field_at {
	int text, machine, markdown;
};

struct ns_field {
	const char *header;    /* PyTorch's header; "{D}" is the device label ("CUDA", "NEURON"), "{F}"
				  the FLOPs unit ("FLOPs", "KFLOPs", ...) */
	const char *md_header; /* Markdown's header (NULL: header) */
	const char *machine;   /* CSV/JSON name */
	const char *help;
	enum ns_field_kind kind;
	enum ns_field_when when;
	enum ns_field_width width;
	struct ns_field_at at;
	int md_dashes;         /* Markdown rule row: dashes; the Name columns are left-aligned */
	void (*get)(const struct ns_field_ctx *ctx, const struct ns_avg *r, struct ns_cell *cell);
	double (*sort_value)(const struct ns_avg *r); /* NULL: sorts by the row's name */
	struct ns_sort_key sort[2];                   /* its --sort keys (the name has two) */
};

extern const struct ns_field ns_fields[];
extern const size_t ns_n_fields;

/* Resolves a --sort argument (PyTorch attribute, its cuda/xpu/privateuse1/
 * neuron spelling, or an alias); NULL if unknown. *field (not NULL) gets
 * the key's field. */
const struct ns_sort_key *ns_sort_key_find_field(const char *arg, const struct ns_field **field);
/* The field whose sort key k is. */
const struct ns_field *ns_sort_key_field(const struct ns_sort_key *k);
/* The sort-key part of `report --help`: one line per key with its aliases
 * and help. */
void ns_fields_write_sort_help(FILE *out);
/* Writes each word of a space-separated list on a line of its own. */
void ns_write_words(FILE *out, const char *list);
/* Every --sort key and alias, one per line (shell completion). */
void ns_fields_write_sort_words(FILE *out);

#endif
