/* The key_averages report (spec A6): layouts over the field table
 * (fields.c) and the grid (grid.c) for PyTorch's table() text, CSV, JSON
 * and Markdown. */
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "common/vec.h"
#include "report/fields.h"
#include "report/grid.h"
#include "report/xwarn.h"

#define COL_W 12

const struct ns_sort_key *ns_sort_key_find(const char *arg)
{
	return ns_sort_key_find_field(arg, NULL);
}

void ns_report_opts_init(struct ns_report_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->row_limit = 100;
	o->max_name_width = 55;
	o->max_shapes_width = 80;
	o->max_src_width = 75;
}

void ns_format_us(char *buf, size_t n, int64_t ns)
{
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(buf, n, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", mag / 1000, mag % 1000);
}

/* ---- rows, sorted ---- */

struct view {
	const struct ns_agg *agg;
	const struct ns_report_opts *o;
	const struct ns_strtab *strings;
	size_t *order;   /* row indices in display order */
	size_t n;
	bool has_device_time, has_device_mem, has_shapes, has_stack, has_overloads, profile_memory;
	int64_t min_flops;      /* the smallest FLOPs > 0 of a row, or 0: none (no FLOPs column) */
	const char *device;
	double total_self_cpu, total_self_device;
	int64_t total_self_cpu_ns, total_self_device_ns;
	bool warned;     /* the device time comes from an export with Explorer warnings */
};

/* Rows whose device time comes from a Neuron export that carried
 * neuron-explorer's own warnings (docs/neuron.md "Explorer's warnings") are
 * marked so (NS_WARN_MARK), and a footnote names the export (xwarn.h). */
static bool row_warned(const struct view *v, const struct ns_avg *r)
{
	return v->warned && (r->device_ns != 0 || r->self_device_ns != 0);
}

/* What cmp_rows sorts by (traces are written on several threads: no globals). */
struct row_order {
	const struct ns_sort_key *key;
	double (*value)(const struct ns_avg *r);
	const struct ns_agg *agg;
};

static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct row_order *by = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct ns_avg *ra = &by->agg->avgs[a], *rb = &by->agg->avgs[b];
	int c = 0;
	if (by->value) {
		double va = by->value(ra), vb = by->value(rb);
		c = va > vb ? -1 : va < vb ? 1 : 0;
	} else {
		const struct ns_strtab *st = &by->agg->trace->strings;
		c = strcmp(ns_strtab_get(st, ra->key), ns_strtab_get(st, rb->key));
		c = by->key->ascending ? c : -c;
	}
	/* Python's sort is stable, even with reverse=True */
	return c ? c : (a < b ? -1 : a > b);
}

bool ns_avg_counts_for_device_total(const struct ns_avg *r)
{
	/* spec A6.6: device rows of CUDA/PrivateUse1/MTIA, user annotations excluded */
	return (r->device_type == NS_DEV_CUDA || r->device_type == NS_DEV_PRIVATEUSE1 ||
		r->device_type == NS_DEV_MTIA) &&
	       !r->is_user_annotation;
}

static bool matches_any(const regex_t *re, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (regexec(&re[i], name, 0, NULL, 0) == 0)
			return true;
	return false;
}

bool ns_name_filter_keeps(const struct ns_name_filter *f, const char *name)
{
	return (f->n_include == 0 || matches_any(f->include, f->n_include, name)) &&
	       !matches_any(f->exclude, f->n_exclude, name);
}

static int view_init(struct view *v, const struct ns_agg *agg, const struct ns_report_opts *o)
{
	memset(v, 0, sizeof(*v));
	v->agg = agg;
	v->o = o;
	v->strings = &agg->trace->strings;
	v->n = agg->n_avgs;
	v->order = malloc((v->n + 1) * sizeof(*v->order));
	if (!v->order)
		return -1;
	v->device = o->device_label ? o->device_label : ns_backend_label(agg->backend);
	v->profile_memory = agg->profile_memory;
	v->warned = agg->trace->n_xwarn > 0;
	for (size_t i = 0; i < v->n; i++) {
		const struct ns_avg *r = &agg->avgs[i];
		v->order[i] = i;
		v->has_device_time |= r->self_device_time_total > 0;
		v->has_device_mem |= r->self_device_mem > 0;
		v->has_shapes |= r->input_shapes && strcmp(ns_strtab_get(v->strings, r->input_shapes), "[]") != 0;
		v->has_stack |= r->stack != 0;
		v->has_overloads |= r->overload && ns_strtab_len(v->strings, r->overload) > 0;
		if (r->flops > 0 && (v->min_flops == 0 || r->flops < v->min_flops))
			v->min_flops = r->flops;
		if (o->hide_annotations && r->is_user_annotation)
			continue; /* (nor in the totals, so not in the percentages' denominators) */
		/* denominators over all rows, in first-seen order, naive += (spec A6.6) */
		v->total_self_cpu += r->self_cpu_time_total;
		v->total_self_cpu_ns += r->self_cpu_ns;
		if (ns_avg_counts_for_device_total(r)) {
			v->total_self_device += r->self_device_time_total;
			v->total_self_device_ns += r->self_device_ns;
		}
	}
	if (!*v->device)
		v->device = "None";
	if (o->sort) {
		struct row_order by = { o->sort, ns_sort_key_field(o->sort)->sort_value, agg };
		ns_sort_r(v->order, v->n, sizeof(*v->order), cmp_rows, &by);
	}
	return 0;
}

/* Rows printed: row_limit is checked before the top-level filter (A6.7),
 * and counts only the rows --include/--exclude and --hide-annotations keep. */
static bool row_printed(const struct view *v, size_t k, long *printed)
{
	const struct ns_avg *r = &v->agg->avgs[v->order[k]];
	if (!ns_name_filter_keeps(&v->o->filter, ns_strtab_get(v->strings, r->key)) ||
	    (v->o->hide_annotations && r->is_user_annotation))
		return false;
	if (v->o->row_limit >= 0 && *printed == v->o->row_limit)
		return false;
	if (v->o->top_level_only && r->first >= 0 && ns_fevent_parent(&v->agg->fevents[r->first]) >= 0)
		return false;
	(*printed)++;
	return true;
}

static bool rows_done(const struct view *v, long printed)
{
	return v->o->row_limit >= 0 && printed == v->o->row_limit;
}

/* ---- layouts: the fields of a form, in a grid ---- */

#define MAX_COLS 40

static int field_at(const struct ns_field *f, enum ns_format fmt)
{
	return fmt == NS_FMT_TABLE ? f->at.text : fmt == NS_FMT_MARKDOWN ? f->at.markdown : f->at.machine;
}

/* Whether the trace has device columns in CSV and JSON: PyTorch's
 * use_device is set. */
static bool has_device(const struct view *v)
{
	return v->agg->backend != NS_BACKEND_NONE;
}

static bool is_device_field(const struct ns_field *f)
{
	return f->when == NS_WHEN_DEVICE || f->when == NS_WHEN_DEVICE_MEMORY;
}

/* Whether field f is a column of the form (fields.h, ns_field_when). */
static bool field_shown(const struct view *v, const struct ns_field *f, enum ns_format fmt)
{
	bool machine = fmt == NS_FMT_CSV || fmt == NS_FMT_JSON;
	if (!field_at(f, fmt))
		return false;
	if (machine && is_device_field(f)) /* a CSV of several traces has one header: it keeps them */
		return has_device(v) || (fmt == NS_FMT_CSV && v->o->trace_columns);
	switch (f->when) {
	case NS_WHEN_DEVICE:
		return v->has_device_time;
	case NS_WHEN_MEMORY:
		return machine || v->profile_memory;
	case NS_WHEN_DEVICE_MEMORY:
		return v->profile_memory && has_device(v) && v->has_device_mem;
	case NS_WHEN_OVERLOADS:
		return machine || v->has_overloads;
	case NS_WHEN_SHAPES:
		return machine || v->has_shapes;
	case NS_WHEN_STACK:
		return machine || v->has_stack;
	case NS_WHEN_NEFF:
		return v->o->show_neff;
	case NS_WHEN_WARNED:
		return v->o->warned_column || v->warned;
	case NS_WHEN_FLOPS:
		return v->min_flops > 0;
	case NS_WHEN_SHAPE_FLOPS:
		return v->o->shape_flops && v->min_flops > 0;
	case NS_WHEN_ALWAYS:
		break;
	}
	return true;
}

/* The form's fields in their order; returns how many. */
static size_t layout_fields(const struct view *v, enum ns_format fmt, const struct ns_field **out)
{
	size_t n = 0;
	for (size_t i = 0; i < ns_n_fields; i++) {
		const struct ns_field *f = &ns_fields[i];
		if (!field_shown(v, f, fmt) || n == MAX_COLS)
			continue;
		size_t k = n++;
		for (; k > 0 && field_at(out[k - 1], fmt) > field_at(f, fmt); k--)
			out[k] = out[k - 1];
		out[k] = f;
	}
	return n;
}

/* PyTorch's auto_scale_flops (spec A6.8): the unit of the smallest FLOPs
 * of a row, m > 0: e = floor(clamp(log10(m) / 3, 0, 5)), the scale
 * 10^(-3e). Returns the unit's name. */
static const char *flops_unit(int64_t m, double *scale)
{
	static const char *const units[] = { "FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs" };
	double log_flops = fmax(0.0, fmin(log10((double)m) / 3, (double)(NS_ARRAY_SIZE(units) - 1)));
	*scale = pow(10, floor(log_flops) * -3.0);
	return units[(int)log_flops];
}

/* A field's header (fields.h): "{D}" replaced by the device label, "{F}" by
 * the FLOPs unit. */
void ns_report_header_text(char *buf, size_t n, const char *tmpl, const char *device, const char *flops)
{
	const char *d = tmpl ? strstr(tmpl, "{D}") : NULL;
	const char *f = tmpl ? strstr(tmpl, "{F}") : NULL;
	if (d)
		snprintf(buf, n, "%.*s%s%s", (int)(d - tmpl), tmpl, device, d + 3);
	else if (f)
		snprintf(buf, n, "%.*s%s%s", (int)(f - tmpl), tmpl, flops, f + 3);
	else
		snprintf(buf, n, "%s", tmpl ? tmpl : "");
}

/* The grid column of field f in form fmt (spec A6.3 widths). */
static struct ns_grid_col field_col(const struct view *v, const struct ns_field *f, enum ns_format fmt,
				    const char *header)
{
	const struct ns_report_opts *o = v->o;
	struct ns_grid_col c = { .header = header, .key = f->machine, .md_dashes = f->md_dashes };
	size_t name_cap = o->max_name_width > 0 ? (size_t)o->max_name_width : 0;
	switch (f->width) {
	case NS_WIDTH_FIXED:
		c.width = COL_W;
		break;
	case NS_WIDTH_NAME:
	case NS_WIDTH_AS_NAME:
		c.pad = 4, c.cap = name_cap, c.cut = NS_CUT_END_DOTS, c.md_left = true;
		c.width_of = f->width == NS_WIDTH_AS_NAME; /* column 0: Name comes first */
		break;
	case NS_WIDTH_SHAPES:
		c.pad = 4, c.cap = o->max_shapes_width > 0 ? (size_t)o->max_shapes_width : 0, c.cut = NS_CUT_END;
		c.none = "[]";
		break;
	case NS_WIDTH_SOURCE:
		c.pad = 4, c.cap = o->max_src_width > 0 ? (size_t)o->max_src_width : 0, c.cut = NS_CUT_FRONT_DOTS;
		c.split = ';', c.left = true;
		break;
	case NS_WIDTH_HASH:
		c.pad = 4, c.min = 8, c.cap = 63, c.none = "-";
		break;
	}
	if (fmt == NS_FMT_MARKDOWN && f->md_header)
		c.header = f->md_header;
	return c;
}

struct layout {
	const struct ns_field *fields[MAX_COLS];
	char headers[MAX_COLS][64];
	size_t n, first; /* fields; grid column of the first field (after path and rank) */
	struct ns_field_ctx ctx;
	struct ns_grid grid;
};

/* The layout of form fmt: its columns, the rows added by fill(). */
static void layout_init(struct layout *l, const struct view *v, enum ns_format fmt)
{
	ns_grid_init(&l->grid, v->o->time_unit);
	l->grid.mark = NS_WARN_MARK;
	l->ctx = (struct ns_field_ctx){ .strings = v->strings, .total_self_cpu = v->total_self_cpu,
					.total_self_device = v->total_self_device, .warned = v->warned,
					.flops_scale = 1.0, .rate_on_device = v->has_device_time };
	const char *unit = v->min_flops > 0 ? flops_unit(v->min_flops, &l->ctx.flops_scale) : "FLOPs";
	l->n = layout_fields(v, fmt, l->fields);
	l->first = 0;
	if (fmt == NS_FMT_CSV && v->o->trace_columns) {
		ns_grid_col(&l->grid, &(struct ns_grid_col){ .key = "path" });
		ns_grid_col(&l->grid, &(struct ns_grid_col){ .key = "rank" });
		l->first = 2;
	}
	for (size_t k = 0; k < l->n; k++) {
		ns_report_header_text(l->headers[k], sizeof(l->headers[k]), l->fields[k]->header, v->device, unit);
		struct ns_grid_col c = field_col(v, l->fields[k], fmt, l->headers[k]);
		ns_grid_col(&l->grid, &c);
	}
}

/* Adds row r (shown or, for the text widths, not). */
static void layout_row(struct layout *l, const struct view *v, const struct ns_avg *r, bool machine, bool shown)
{
	const struct ns_trace *t = v->agg->trace;
	struct ns_cell cells[MAX_COLS + 2];
	if (l->first) {
		cells[0] = (struct ns_cell){ .type = NS_CELL_TEXT, .text = t->path ? t->path : "" };
		cells[1] = (struct ns_cell){ .type = t->rank != NS_NONE ? NS_CELL_INT : NS_CELL_EMPTY, .i = t->rank };
	}
	for (size_t k = 0; k < l->n; k++) {
		struct ns_cell *c = &cells[l->first + k];
		if (machine && is_device_field(l->fields[k]) && !has_device(v))
			*c = (struct ns_cell){ .type = NS_CELL_EMPTY };
		else
			l->fields[k]->get(&l->ctx, r, c);
	}
	ns_grid_row(&l->grid, cells, shown, row_warned(v, r));
}

/* The rows in display order: the printed ones shown; in the text form the
 * others too, unshown: PyTorch sizes its columns over every row. */
static int layout_fill(struct layout *l, struct view *v, enum ns_format fmt)
{
	bool machine = fmt == NS_FMT_CSV || fmt == NS_FMT_JSON;
	long printed = 0;
	for (size_t k = 0; k < v->n; k++) {
		bool shown = !rows_done(v, printed) && row_printed(v, k, &printed);
		if (shown || fmt == NS_FMT_TABLE)
			layout_row(l, v, &v->agg->avgs[v->order[k]], machine, shown);
	}
	return ns_grid_error(&l->grid) ? -1 : 0;
}

/* ---- the forms ---- */

static int write_text(FILE *out, struct view *v, struct layout *l)
{
	const struct ns_report_opts *o = v->o;
	size_t line = ns_grid_line_width(&l->grid);
	char total[64];
	if (o->header) {
		ns_grid_rule(out, '=', line);
		ns_fputs_visible(o->header, out);
		fputc('\n', out);
	}
	if (o->top_level_only) {
		ns_grid_rule(out, '=', line);
		fputs("This report only display top-level ops statistics\n", out);
	}
	if (ns_grid_write_text(out, &l->grid))
		return -1;
	ns_grid_fmt_time(total, sizeof(total), v->total_self_cpu, o->time_unit);
	fprintf(out, "Self CPU time total: %s\n", total);
	if (v->has_device_time) {
		ns_grid_fmt_time(total, sizeof(total), v->total_self_device, o->time_unit);
		fprintf(out, "Self %s time total: %s\n", v->device, total);
	}
	ns_xwarn_trace_note(out, v->agg->trace, false);
	return 0;
}

static void write_json(FILE *out, struct view *v, struct layout *l)
{
	const struct ns_trace *t = v->agg->trace;
	char a[64], b[64];
	ns_format_us(a, sizeof(a), v->total_self_cpu_ns);
	ns_format_us(b, sizeof(b), v->total_self_device_ns);
	fputs("{\"device\": ", out);
	if (has_device(v))
		ns_json_string(out, v->device);
	else
		fputs("null", out);
	if (t->path) {
		fputs(", \"path\": ", out);
		ns_json_string(out, t->path);
	}
	if (t->rank != NS_NONE)
		fprintf(out, ", \"rank\": %" PRId64, t->rank);
	fprintf(out, ", \"self_cpu_time_total_us\": %s", a);
	if (has_device(v))
		fprintf(out, ", \"self_device_time_total_us\": %s", b);
	for (size_t i = 0; i < t->n_xwarn; i++) { /* neuron-explorer's own warnings */
		const struct ns_xwarn_ref *w = &t->xwarn[i];
		fputs(i ? ", {\"file\": " : ", \"explorer_warnings\": [{\"file\": ", out);
		ns_json_string(out, ns_strtab_get(v->strings, w->file));
		fputs(", \"category\": ", out);
		if (w->category)
			ns_json_string(out, ns_strtab_get(v->strings, w->category));
		else
			fputs("null", out);
		fputs(", \"message\": ", out);
		ns_json_string(out, ns_strtab_get(v->strings, w->message));
		fputs(i + 1 == t->n_xwarn ? "}]" : "}", out);
	}
	fputs(", \"rows\": ", out);
	ns_grid_write_json(out, &l->grid);
	if (!v->o->json_open)
		fputs("}\n", out);
}

/* A GitHub table: the name (and overload), calls and the main times; the
 * device columns only when the table has them (spec A6.1 has_device_time).
 * Every cell goes through ns_md_cell (escape.h); several traces are each
 * headed by their file and rank. */
static void write_markdown(FILE *out, struct view *v, struct layout *l)
{
	char t[64];
	if (v->o->header) {
		fputs("### ", out);
		ns_md_text(out, v->o->header);
		fputs("\n\n", out);
	}
	ns_grid_write_markdown(out, &l->grid);
	ns_grid_fmt_time(t, sizeof(t), v->total_self_cpu, v->o->time_unit);
	fprintf(out, "\nSelf CPU time total: %s", t);
	if (v->has_device_time) {
		ns_grid_fmt_time(t, sizeof(t), v->total_self_device, v->o->time_unit);
		fputs("; Self ", out);
		ns_md_text(out, v->device);
		fprintf(out, " time total: %s", t);
	}
	fputc('\n', out);
	ns_xwarn_trace_note(out, v->agg->trace, true);
}

int ns_report_write(FILE *out, const struct ns_agg *agg, const struct ns_report_opts *o, enum ns_format fmt,
		    struct ns_error *err)
{
	struct view v;
	struct layout l;
	int rc = 0;
	if (view_init(&v, agg, o))
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	if (fmt == NS_FMT_TABLE && !agg->n_avgs) { /* PyTorch returns "" for an empty event list */
		free(v.order);
		return 0;
	}
	layout_init(&l, &v, fmt);
	rc = layout_fill(&l, &v, fmt);
	if (rc == 0) {
		switch (fmt) {
		case NS_FMT_TABLE:
			rc = write_text(out, &v, &l);
			break;
		case NS_FMT_JSON:
			write_json(out, &v, &l);
			break;
		case NS_FMT_CSV:
			ns_grid_write_csv(out, &l.grid, !o->no_csv_header);
			break;
		case NS_FMT_MARKDOWN:
			write_markdown(out, &v, &l);
			break;
		}
	}
	ns_grid_release(&l.grid);
	free(v.order);
	if (rc)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	return 0;
}
