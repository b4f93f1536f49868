/* The HTML report page (html.h): the data document and the page around it. */
#include "report/html.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "report/escape.h"
#include "report/fields.h"

/* src/report/html/report.css and report.js (tools/embed_assets.py) */
extern const char ns_html_css[], ns_html_js[];

#define META_VALUE_SHOWN 256 /* longer top-level values are named with their size only */

static const char *kind_name(enum ns_field_kind k)
{
	static const char *const names[] = { "text", "count", "time", "percent", "bytes", "flag" };
	return (size_t)k < NS_ARRAY_SIZE(names) ? names[k] : "text";
}

static void write_us(FILE *out, int64_t ns)
{
	char buf[64];
	ns_format_us(buf, sizeof(buf), ns);
	fputs(buf, out);
}

/* "columns": the JSON rows' keys in order, with the table's headers; the
 * FLOPs fields only when the rows have them (as ns_report_write does). */
static void write_columns(FILE *out, const struct ns_agg *agg, const char *device)
{
	char header[64];
	bool first = true, flops = false;
	for (size_t i = 0; i < agg->n_avgs; i++)
		flops |= agg->avgs[i].flops > 0;
	fputs(", \"columns\": [", out);
	for (size_t i = 0; i < ns_n_fields; i++) {
		const struct ns_field *f = &ns_fields[i];
		if (!f->machine || !f->at.machine)
			continue;
		if ((f->when == NS_WHEN_FLOPS && !flops) ||
		    (f->when == NS_WHEN_SHAPE_FLOPS && !(flops && agg->opts.shape_flops)))
			continue;
		ns_report_header_text(header, sizeof(header), f->header, device, "FLOPs");
		fputs(first ? "{\"key\": " : ", {\"key\": ", out);
		ns_json_string(out, f->machine);
		fputs(", \"header\": ", out);
		ns_json_string(out, header);
		fprintf(out, ", \"kind\": \"%s\", \"at\": %d}", kind_name(f->kind), f->at.machine);
		first = false;
	}
	fputc(']', out);
}

/* ---- steps: each ProfilerStep#N's span and the device's busy time in it ---- */

struct span {
	int64_t start, end;
};

static bool is_device_work(const struct ns_fevent *fe)
{
	return fe->device_type != NS_DEV_CPU && !fe->is_user_annotation && !fe->removed;
}

/* The union of the device work's spans, ascending (fevents are sorted by
 * start). NULL with *n 0 when there is none; -1 when out of memory. */
static int device_spans(const struct ns_agg *a, struct span **out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < a->n_fevents; i++) {
		const struct ns_fevent *fe = &a->fevents[i];
		if (!is_device_work(fe))
			continue;
		int64_t s = ns_fevent_start(a, fe), e = ns_fevent_end(a, fe);
		if (*n && s <= (*out)[*n - 1].end) {
			if (e > (*out)[*n - 1].end)
				(*out)[*n - 1].end = e;
			continue;
		}
		if (NS_GROW(*out, cap, *n + 1)) {
			free(*out);
			*out = NULL;
			return -1;
		}
		(*out)[(*n)++] = (struct span){ s, e };
	}
	return 0;
}

/* The device's busy time within [s, e). */
static int64_t busy_within(const struct span *spans, size_t n, int64_t s, int64_t e)
{
	size_t lo = 0, hi = n; /* the first span that ends after s */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (spans[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	int64_t busy = 0;
	for (size_t k = lo; k < n && spans[k].start < e; k++)
		busy += (spans[k].end < e ? spans[k].end : e) - (spans[k].start > s ? spans[k].start : s);
	return busy;
}

/* The CPU ProfilerStep#N annotation of fevent fe, its N in *number (by
 * its table name first, so that the other fevents' events are not read). */
static bool is_step(const struct ns_agg *a, const struct ns_fevent *fe, long long *number)
{
	if (fe->name != a->profiler_step || fe->device_type != NS_DEV_CPU || fe->removed)
		return false;
	const char *name = ns_strtab_get(&a->trace->strings, a->trace->events[fe->event].name);
	if (strncmp(name, "ProfilerStep#", 13) != 0)
		return false;
	char *end;
	*number = strtoll(name + 13, &end, 10);
	return end != name + 13;
}

/* "steps": [{"step": N, "start_us", "dur_us", "device_busy_us"}], in start order. */
static int write_steps(FILE *out, const struct ns_agg *a)
{
	struct span *spans;
	size_t n_spans;
	bool first = true;
	if (device_spans(a, &spans, &n_spans))
		return -1;
	fputs(", \"steps\": [", out);
	for (size_t i = 0; i < a->n_fevents; i++) {
		const struct ns_fevent *fe = &a->fevents[i];
		long long number;
		if (!is_step(a, fe, &number))
			continue;
		int64_t s = ns_fevent_start(a, fe), e = ns_fevent_end(a, fe);
		fprintf(out, "%s{\"step\": %lld, \"start_us\": ", first ? "" : ", ", number);
		write_us(out, s - a->t0_ns);
		fputs(", \"dur_us\": ", out);
		write_us(out, e - s);
		fputs(", \"device_busy_us\": ", out);
		write_us(out, busy_within(spans, n_spans, s, e));
		fputc('}', out);
		first = false;
	}
	fputc(']', out);
	free(spans);
	return 0;
}

/* ---- Neuron: device time per NEFF ---- */

struct neff_sum {
	ns_str neff;
	int64_t device_ns, count;
};

/* "neffs": the device work's time per NEFF hash, in first-seen order
 * (the page sorts); [] for a trace without NEFF hashes. */
static int write_neffs(FILE *out, const struct ns_agg *a)
{
	struct neff_sum *sums = NULL;
	size_t n = 0, cap = 0, last = 0;
	for (size_t i = 0; i < a->n_fevents; i++) {
		const struct ns_fevent *fe = &a->fevents[i];
		if (!is_device_work(fe))
			continue;
		ns_str neff = a->trace->events[fe->event].neff;
		if (!neff)
			continue;
		if (!(n && sums[last].neff == neff)) { /* consecutive work mostly shares its NEFF */
			for (last = 0; last < n && sums[last].neff != neff; last++)
				;
			if (last == n) {
				if (NS_GROW(sums, cap, n + 1)) {
					free(sums);
					return -1;
				}
				sums[n++] = (struct neff_sum){ .neff = neff };
			}
		}
		sums[last].device_ns += ns_fevent_span_ns(a, fe);
		sums[last].count++;
	}
	fputs(", \"neffs\": [", out);
	for (size_t k = 0; k < n; k++) {
		fputs(k ? ", {\"neff\": " : "{\"neff\": ", out);
		ns_json_string(out, ns_strtab_get(&a->trace->strings, sums[k].neff));
		fprintf(out, ", \"calls\": %" PRId64 ", \"device_us\": ", sums[k].count);
		write_us(out, sums[k].device_ns);
		fputc('}', out);
	}
	fputc(']', out);
	free(sums);
	return 0;
}

/* ---- provenance ---- */

static void write_int_or_null(FILE *out, const char *key, int64_t v, int64_t none)
{
	fprintf(out, ", \"%s\": ", key);
	if (v == none)
		fputs("null", out);
	else
		fprintf(out, "%" PRId64, v);
}

/* "metadata": the trace's top-level keys and their raw JSON text, a long
 * value named by its size. */
static void write_metadata(FILE *out, const struct ns_trace *t)
{
	fputs(", \"metadata\": [", out);
	for (size_t i = 0; i < t->n_meta; i++) {
		const char *key = ns_strtab_get(&t->strings, t->meta[2 * i]);
		size_t len = ns_strtab_len(&t->strings, t->meta[2 * i + 1]);
		fputs(i ? ", [" : "[", out);
		ns_json_string_utf8(out, key, strlen(key));
		fputs(", ", out);
		if (len <= META_VALUE_SHOWN) {
			ns_json_string_utf8(out, ns_strtab_get(&t->strings, t->meta[2 * i + 1]), len);
		} else {
			fprintf(out, "\"(%zu bytes)\"", len);
		}
		fputc(']', out);
	}
	fputc(']', out);
}

static void write_provenance(FILE *out, const struct ns_html_trace *ht)
{
	const struct ns_trace *t = ht->agg->trace;
	fputs(", \"provenance\": {\"file\": ", out);
	ns_json_string(out, t->path ? t->path : "");
	write_int_or_null(out, "bytes", ht->file_bytes, -1);
	fprintf(out, ", \"trace_events\": %" PRIu64 ", \"kept_events\": %zu, \"threads\": %zu", t->n_trace_events,
		t->n_events, t->n_threads);
	write_int_or_null(out, "world_size", t->world_size, NS_NONE);
	write_int_or_null(out, "truncated_at", t->truncated_at, -1);
	fprintf(out, ", \"legacy_autograd\": %s, \"untimed_launches\": %" PRIu64, t->legacy_autograd ? "true" : "false",
		t->n_untimed_launches);
	write_metadata(out, t);
	fputc('}', out);
}

/* ---- the documents ---- */

static int write_trace(FILE *out, const struct ns_html_trace *ht, const struct ns_report_opts *ro, struct ns_error *err)
{
	struct ns_report_opts o = *ro;
	o.row_limit = -1; /* every row: the page sorts and filters */
	o.sort = NULL;
	o.json_open = true;
	o.header = NULL;
	int rc = ns_report_write(out, ht->agg, &o, NS_FMT_JSON, err);
	if (rc)
		return rc;
	write_columns(out, ht->agg, o.device_label ? o.device_label : ns_backend_label(ht->agg->backend));
	if (write_steps(out, ht->agg) || write_neffs(out, ht->agg))
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	write_provenance(out, ht);
	if (ht->extra)
		fputs(ht->extra, out);
	fputc('}', out);
	return 0;
}

int ns_html_report_data(FILE *out, const char *input, const struct ns_html_trace *traces, size_t n,
			const struct ns_report_opts *ro, struct ns_error *err)
{
	fputs("{\"kind\": \"report\", \"input\": ", out);
	ns_json_string(out, input);
	fputs(", \"traces\": [\n", out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(",\n", out);
		int rc = write_trace(out, &traces[i], ro, err);
		if (rc)
			return rc;
	}
	fputs("]}", out);
	return 0;
}

void ns_html_page(FILE *out, const char *title, const char *data, size_t len)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"neuron-stats\">\n<title>",
	      out);
	ns_html_text(out, title);
	fputs("</title>\n<style>\n", out);
	fputs(ns_html_css, out);
	fputs("</style>\n</head>\n<body>\n<noscript>This report draws its tables and charts with JavaScript.</noscript>\n"
	      "<main id=\"app\"></main>\n<script id=\"ns-data\" type=\"application/json\">\n",
	      out);
	for (size_t i = 0; i < len; i++) { /* '<' only occurs inside JSON strings: \u003c there */
		if (data[i] == '<')
			fputs("\\u003c", out);
		else
			fputc(data[i], out);
	}
	fputs("\n</script>\n<script>\n", out);
	fputs(ns_html_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
}
