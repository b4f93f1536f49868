/* The --engines table: per row, the busy time of each NeuronCore engine
 * inside the row's own device intervals (exact decimal µs). */
#include "report/engines.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/xwarn.h"

#define ENGINE_W 14
#define GAP "  "

static bool row_has_time(const struct ns_engine_rows *rows, size_t r)
{
	for (int e = 0; e < NS_ENG__COUNT; e++)
		if (rows->ns[r][e])
			return true;
	return false;
}

/* CSV and JSON rows say whether they are warned (xwarn.h) whenever a trace
 * of the report has warnings, as key_averages does. */
static bool warned_field(const struct ns_agg *agg, const struct ns_report_opts *o)
{
	return o->warned_column || agg->trace->n_xwarn > 0;
}

/* Byte length of s cut to at most w code points (UTF-8). */
static size_t cut(const char *s, size_t w)
{
	size_t i = 0, cps = 0;
	for (; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && cps++ == w)
			break;
	return i;
}

static void rule(FILE *out, size_t name_w, size_t neff_w)
{
	for (size_t k = 0; k < name_w; k++)
		fputc('-', out);
	fputs(GAP, out);
	for (size_t k = 0; neff_w && k < neff_w; k++)
		fputc('-', out);
	if (neff_w)
		fputs(GAP, out);
	for (int e = 0; e < NS_ENG__COUNT; e++)
		fprintf(out, "%.*s" GAP, ENGINE_W, "----------------------------------------");
	fputc('\n', out);
}

static void write_text(FILE *out, const struct ns_agg *agg, const struct ns_engine_rows *rows,
		       const struct ns_report_opts *o, char *const *sources, size_t n_sources)
{
	const struct ns_strtab *st = &agg->trace->strings;
	size_t name_w = 8, neff_w = o->show_neff ? 8 : 0;
	char head[32], val[64];
	for (size_t r = 0; r < rows->n; r++) {
		if (!row_has_time(rows, r))
			continue;
		size_t w = ns_visible_width(ns_strtab_get(st, agg->avgs[r].key)) + 4;
		name_w = w > name_w ? w : name_w;
		if (o->show_neff && ns_strtab_len(st, agg->avgs[r].neff) + 4 > neff_w)
			neff_w = ns_strtab_len(st, agg->avgs[r].neff) + 4;
	}
	if (o->max_name_width > 0 && name_w > (size_t)o->max_name_width)
		name_w = (size_t)o->max_name_width;
	fputs("\nNeuronCore engine active time (self, inside each op's own device work; from the device profile)\n", out);
	rule(out, name_w, neff_w);
	fprintf(out, "%*s" GAP, (int)name_w, "Name");
	if (neff_w)
		fprintf(out, "%*s" GAP, (int)neff_w, "NEFF");
	for (int e = 0; e < NS_ENG__COUNT; e++) {
		snprintf(head, sizeof(head), e == NS_ENG_DMA ? "%s" : "%s (%s)", ns_engine_name((enum ns_engine)e),
			 ns_engine_alias((enum ns_engine)e));
		fprintf(out, "%*s" GAP, ENGINE_W, head);
	}
	fputc('\n', out);
	rule(out, name_w, neff_w);
	for (size_t r = 0; r < rows->n; r++) {
		if (!row_has_time(rows, r))
			continue;
		char *owned;
		const char *name = ns_visible(ns_strtab_get(st, agg->avgs[r].key), &owned); /* escape.h */
		if (!name)
			name = "?";
		size_t len = strlen(name), pad = 0;
		if (o->max_name_width > 0 && len >= (size_t)(o->max_name_width - 3)) {
			size_t b = cut(name, (size_t)(o->max_name_width - 3));
			pad = name_w > (size_t)o->max_name_width ? 0 : name_w - (size_t)o->max_name_width;
			fprintf(out, "%*s%.*s..." GAP, (int)pad, "", (int)b, name);
		} else {
			fprintf(out, "%*s" GAP, (int)name_w, name);
		}
		free(owned);
		if (neff_w)
			fprintf(out, "%*s" GAP, (int)neff_w, agg->avgs[r].neff ? ns_strtab_get(st, agg->avgs[r].neff) : "-");
		for (int e = 0; e < NS_ENG__COUNT; e++) {
			ns_format_us(val, sizeof(val) - 2, rows->ns[r][e]);
			strcat(val, "us");
			fprintf(out, "%*s" GAP, ENGINE_W, val);
		}
		fputs(ns_xwarn_engines_row(agg->trace, true) ? NS_WARN_MARK "\n" : "\n", out);
	}
	rule(out, name_w, neff_w);
	ns_xwarn_trace_note(out, agg->trace, false);
	for (size_t i = 0; i < n_sources; i++)
		fprintf(out, "%s %s\n", i ? "       " : "Source:", sources[i]);
}

static void write_json(FILE *out, const struct ns_agg *agg, const struct ns_engine_rows *rows,
		       const struct ns_report_opts *o, char *const *sources, size_t n_sources)
{
	const struct ns_strtab *st = &agg->trace->strings;
	char val[64];
	bool first = true;
	fputs(", \"engines\": [", out); /* keys of the trace's report object (json_open) */
	for (size_t r = 0; r < rows->n; r++) {
		if (!row_has_time(rows, r))
			continue;
		fputs(first ? "\n  {\"name\": " : ",\n  {\"name\": ", out);
		first = false;
		ns_json_string(out, ns_strtab_get(st, agg->avgs[r].key));
		if (o->show_neff) {
			fputs(", \"neff\": ", out);
			ns_json_string(out, ns_strtab_get(st, agg->avgs[r].neff));
		}
		for (int e = 0; e < NS_ENG__COUNT; e++) {
			ns_format_us(val, sizeof(val), rows->ns[r][e]);
			fprintf(out, ", \"%s_us\": %s", ns_engine_name((enum ns_engine)e), val);
		}
		if (warned_field(agg, o))
			fprintf(out, ", \"device_time_warned\": %s", ns_xwarn_engines_row(agg->trace, true) ? "true" : "false");
		fputc('}', out);
	}
	fputs(first ? "], \"sources\": [" : "\n], \"sources\": [", out);
	for (size_t i = 0; i < n_sources; i++) {
		if (i)
			fputs(", ", out);
		ns_json_string(out, sources[i]);
	}
	fputc(']', out);
}

static void write_csv(FILE *out, const struct ns_agg *agg, const struct ns_engine_rows *rows,
		      const struct ns_report_opts *o)
{
	const struct ns_strtab *st = &agg->trace->strings;
	char val[64];
	fputs(o->show_neff ? "name,neff" : "name", out);
	for (int e = 0; e < NS_ENG__COUNT; e++)
		fprintf(out, ",%s_us", ns_engine_name((enum ns_engine)e));
	fputs(warned_field(agg, o) ? ",device_time_warned\r\n" : "\r\n", out);
	for (size_t r = 0; r < rows->n; r++) {
		if (!row_has_time(rows, r))
			continue;
		ns_csv_string(out, ns_strtab_get(st, agg->avgs[r].key));
		if (o->show_neff) {
			fputc(',', out);
			ns_csv_string(out, ns_strtab_get(st, agg->avgs[r].neff));
		}
		for (int e = 0; e < NS_ENG__COUNT; e++) {
			ns_format_us(val, sizeof(val), rows->ns[r][e]);
			fprintf(out, ",%s", val);
		}
		if (warned_field(agg, o))
			fputs(ns_xwarn_engines_row(agg->trace, true) ? ",true" : ",false", out);
		fputs("\r\n", out);
	}
}

int ns_report_engines(FILE *out, const struct ns_agg *agg, const struct ns_engine_rows *rows,
		      const struct ns_report_opts *o, enum ns_format fmt, char *const *sources, size_t n_sources,
		      struct ns_error *err)
{
	(void)err;
	switch (fmt) {
	case NS_FMT_JSON:
		write_json(out, agg, rows, o, sources, n_sources);
		break;
	case NS_FMT_CSV:
		write_csv(out, agg, rows, o);
		break;
	default:
		write_text(out, agg, rows, o, sources, n_sources);
		break;
	}
	return 0;
}
