/* The --device-detail tables: instruction time grouped by hlo_name, layer
 * or opcode per NEFF (exact decimal µs, share of the NEFF's instruction
 * time), and the per-NEFF Summary figures ("-" when absent). */
#include "report/detail.h"
#include "common/sort.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/xwarn.h"

#define GAP "  "
#define NUM_W 14

static int cmp_neff(const void *a, const void *b)
{
	const struct ns_detail_neff *x = a, *y = b;
	if (x->dp->instruction_ns != y->dp->instruction_ns)
		return x->dp->instruction_ns > y->dp->instruction_ns ? -1 : 1;
	int c = strcmp(x->neff, y->neff);
	return c ? c : (x->nc > y->nc) - (x->nc < y->nc);
}

void ns_detail_sort(struct ns_detail_neff *v, size_t n)
{
	ns_sort(v, n, sizeof(*v), cmp_neff);
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

static const char *row_name(const struct ns_detail_neff *p, const struct ns_detail_row *r)
{
	return ns_strtab_get(&p->dp->detail_names, r->name);
}

/* Share of the NEFF's instruction time, "12.34". */
static void percent(char *buf, size_t n, const struct ns_detail_neff *p, const struct ns_detail_row *r)
{
	int64_t all = p->dp->instruction_ns;
	snprintf(buf, n, "%.2f", all > 0 ? (double)r->total_ns * 100.0 / (double)all : 0.0);
}

static void neff_text(char *buf, size_t n, const struct ns_detail_neff *p)
{
	snprintf(buf, n, "%s", *p->neff ? p->neff : "?");
}

/* A figure as text: us for times, "12.34%" for percents, bytes whole; "-" when absent. */
static void metric_text(char *buf, size_t n, const struct ns_neff_metrics *m, int k, bool unit)
{
	if (!m->has[k]) {
		snprintf(buf, n, unit ? "-" : "");
		return;
	}
	switch (ns_metrics[k].kind) {
	case 't':
		ns_format_us(buf, n - 2, (int64_t)m->v[k]);
		if (unit)
			strcat(buf, "us");
		break;
	case 'p':
		snprintf(buf, n, unit ? "%.2f%%" : "%.4f", m->v[k]);
		break;
	default:
		snprintf(buf, n, "%.0f", m->v[k]);
		break;
	}
}

static void dashes(FILE *out, size_t w)
{
	for (size_t k = 0; k < w; k++)
		fputc('-', out);
	fputs(GAP, out);
}

/* The NEFF summary table under the detail table (neff_w: its NEFF column). */
static void write_text_summary(FILE *out, const struct ns_detail_neff *v, size_t n, size_t neff_w)
{
	char val[64];
	fputs("\nNEFF summary (the device profile's Summary; \"-\": not in the export)\n", out);
	dashes(out, neff_w), dashes(out, 4), dashes(out, NUM_W);
	for (int k = 0; k < NS_MET__COUNT; k++)
		dashes(out, NUM_W);
	fputc('\n', out);
	fprintf(out, "%*s" GAP "%4s" GAP "%*s" GAP, (int)neff_w, "NEFF", "Core", NUM_W, "Instr. time");
	for (int k = 0; k < NS_MET__COUNT; k++)
		fprintf(out, "%*s" GAP, NUM_W, ns_metrics[k].head);
	fputc('\n', out);
	dashes(out, neff_w), dashes(out, 4), dashes(out, NUM_W);
	for (int k = 0; k < NS_MET__COUNT; k++)
		dashes(out, NUM_W);
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		char neff[80], core[24];
		neff_text(neff, sizeof(neff), &v[i]);
		snprintf(core, sizeof(core), v[i].nc < 0 ? "-" : "%" PRId64, v[i].nc);
		ns_format_us(val, sizeof(val) - 2, v[i].dp->instruction_ns);
		strcat(val, "us");
		fprintf(out, "%*s" GAP "%4s" GAP "%*s" GAP, (int)neff_w, neff, core, NUM_W, val);
		for (int k = 0; k < NS_MET__COUNT; k++) {
			metric_text(val, sizeof(val), &v[i].m, k, true);
			fprintf(out, "%*s" GAP, NUM_W, val);
		}
		fputc('\n', out);
	}
	dashes(out, neff_w), dashes(out, 4), dashes(out, NUM_W);
	for (int k = 0; k < NS_MET__COUNT; k++)
		dashes(out, NUM_W);
	fputc('\n', out);
}

static void write_text(FILE *out, const struct ns_detail_neff *v, size_t n, enum ns_detail key,
		       const struct ns_report_opts *o, char *const *sources, size_t n_sources)
{
	static const char *const titles[NS_DETAIL__COUNT] = {
		[NS_DETAIL_HLO] = "HLO op", [NS_DETAIL_LAYER] = "framework layer", [NS_DETAIL_OPCODE] = "instruction opcode",
	};
	char none[64], val[64], pct[32];
	size_t name_w = 8, neff_w = 8;
	snprintf(none, sizeof(none), "(no %s)", ns_detail_field(key));
	for (size_t i = 0; i < n; i++) {
		neff_text(val, sizeof(val), &v[i]);
		neff_w = strlen(val) + 4 > neff_w ? strlen(val) + 4 : neff_w;
		for (size_t r = 0; r < v[i].dp->n_detail[key]; r++) {
			const char *s = row_name(&v[i], &v[i].dp->detail[key][r]);
			size_t w = (*s ? ns_visible_width(s) : strlen(none)) + 4;
			name_w = w > name_w ? w : name_w;
		}
	}
	if (o->max_name_width > 0 && name_w > (size_t)o->max_name_width)
		name_w = (size_t)o->max_name_width;
	fprintf(out, "\nDevice time per %s (%s) within each NEFF (instruction durations added; from the device profile)\n",
		titles[key], ns_detail_field(key));
	dashes(out, name_w), dashes(out, neff_w), dashes(out, 4), dashes(out, NUM_W), dashes(out, NUM_W),
		dashes(out, 10);
	fputc('\n', out);
	fprintf(out, "%*s" GAP "%*s" GAP "%4s" GAP "%*s" GAP "%*s" GAP "%10s" GAP "\n", (int)name_w, "Name", (int)neff_w,
		"NEFF", "Core", NUM_W, "Instructions", NUM_W, "Device time", "% of NEFF");
	dashes(out, name_w), dashes(out, neff_w), dashes(out, 4), dashes(out, NUM_W), dashes(out, NUM_W),
		dashes(out, 10);
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		char neff[80], core[24];
		neff_text(neff, sizeof(neff), &v[i]);
		snprintf(core, sizeof(core), v[i].nc < 0 ? "-" : "%" PRId64, v[i].nc);
		for (size_t r = 0; r < v[i].dp->n_detail[key]; r++) {
			const struct ns_detail_row *row = &v[i].dp->detail[key][r];
			char *owned = NULL;
			const char *name = *row_name(&v[i], row) ? ns_visible(row_name(&v[i], row), &owned) : none;
			if (!name)
				name = "?";
			if (o->max_name_width > 0 && ns_visible_width(name) + 4 > (size_t)o->max_name_width) {
				size_t keep = cut(name, (size_t)(o->max_name_width - 3));
				fprintf(out, "%.*s..." GAP, (int)keep, name);
			} else {
				fprintf(out, "%*s" GAP, (int)name_w, name);
			}
			free(owned);
			ns_format_us(val, sizeof(val) - 2, row->total_ns);
			strcat(val, "us");
			percent(pct, sizeof(pct), &v[i], row);
			strcat(pct, "%");
			fprintf(out, "%*s" GAP "%4s" GAP "%*" PRIu64 GAP "%*s" GAP "%10s" GAP "%s\n", (int)neff_w, neff, core,
				NUM_W, row->count, NUM_W, val, pct, ns_xwarn_detail_profile(&v[i]) ? NS_WARN_MARK : "");
		}
	}
	dashes(out, name_w), dashes(out, neff_w), dashes(out, 4), dashes(out, NUM_W), dashes(out, NUM_W),
		dashes(out, 10);
	fputc('\n', out);
	ns_xwarn_detail_note(out, v, n, false);

	write_text_summary(out, v, n, neff_w);
	for (size_t i = 0; i < n_sources; i++)
		fprintf(out, "%s %s\n", i ? "       " : "Source:", sources[i]);
}

/* CSV and JSON rows say whether they are warned (xwarn.h) whenever a trace
 * of the report or a profile has warnings, as key_averages does. */
static bool warned_field(const struct ns_detail_neff *v, size_t n, const struct ns_report_opts *o)
{
	return o->warned_column || ns_xwarn_detail_any(v, n);
}

static void write_json(FILE *out, const struct ns_detail_neff *v, size_t n, enum ns_detail key,
		       const struct ns_report_opts *o, char *const *sources, size_t n_sources)
{
	char val[64], pct[32];
	bool first = true, warned = warned_field(v, n, o);
	/* keys of the trace's report object (json_open) */
	fprintf(out, ", \"device_detail\": {\"key\": \"%s\", \"field\": \"%s\", \"rows\": [", ns_detail_name(key),
		ns_detail_field(key));
	for (size_t i = 0; i < n; i++)
		for (size_t r = 0; r < v[i].dp->n_detail[key]; r++) {
			const struct ns_detail_row *row = &v[i].dp->detail[key][r];
			fputs(first ? "\n  {\"name\": " : ",\n  {\"name\": ", out);
			first = false;
			ns_json_string(out, row_name(&v[i], row));
			fputs(", \"neff\": ", out);
			ns_json_string(out, v[i].neff);
			if (v[i].nc < 0)
				fputs(", \"core\": null", out);
			else
				fprintf(out, ", \"core\": %" PRId64, v[i].nc);
			ns_format_us(val, sizeof(val), row->total_ns);
			percent(pct, sizeof(pct), &v[i], row);
			fprintf(out, ", \"instructions\": %" PRIu64 ", \"device_time_us\": %s, \"percent\": %s", row->count, val,
				pct);
			if (warned)
				fprintf(out, ", \"device_time_warned\": %s", ns_xwarn_detail_profile(&v[i]) ? "true" : "false");
			fputc('}', out);
		}
	fputs(first ? "]}, \"neff_summary\": [" : "\n]}, \"neff_summary\": [", out);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n  {\"neff\": " : "\n  {\"neff\": ", out);
		ns_json_string(out, v[i].neff);
		if (v[i].nc < 0)
			fputs(", \"core\": null", out);
		else
			fprintf(out, ", \"core\": %" PRId64, v[i].nc);
		ns_format_us(val, sizeof(val), v[i].dp->instruction_ns);
		fprintf(out, ", \"instructions\": %" PRIu64 ", \"instruction_time_us\": %s", v[i].dp->n_instructions, val);
		for (int k = 0; k < NS_MET__COUNT; k++) {
			metric_text(val, sizeof(val), &v[i].m, k, false);
			fprintf(out, ", \"%s\": %s", ns_metrics[k].name, v[i].m.has[k] ? val : "null");
		}
		fputc('}', out);
	}
	fputs(n ? "\n], \"device_detail_sources\": [" : "], \"device_detail_sources\": [", out);
	for (size_t i = 0; i < n_sources; i++) {
		if (i)
			fputs(", ", out);
		ns_json_string(out, sources[i]);
	}
	fputc(']', out);
}

static void write_csv(FILE *out, const struct ns_detail_neff *v, size_t n, enum ns_detail key,
		      const struct ns_report_opts *o)
{
	char val[64], pct[32];
	bool warned = warned_field(v, n, o);
	fprintf(out, "%s,neff,core,instructions,device_time_us,percent%s\r\n", ns_detail_field(key),
		warned ? ",device_time_warned" : "");
	for (size_t i = 0; i < n; i++)
		for (size_t r = 0; r < v[i].dp->n_detail[key]; r++) {
			const struct ns_detail_row *row = &v[i].dp->detail[key][r];
			ns_csv_string(out, row_name(&v[i], row));
			fputc(',', out);
			ns_csv_string(out, v[i].neff);
			if (v[i].nc < 0)
				fputs(",", out);
			else
				fprintf(out, ",%" PRId64, v[i].nc);
			ns_format_us(val, sizeof(val), row->total_ns);
			percent(pct, sizeof(pct), &v[i], row);
			fprintf(out, ",%" PRIu64 ",%s,%s%s\r\n", row->count, val, pct,
				!warned ? "" : ns_xwarn_detail_profile(&v[i]) ? ",true" : ",false");
		}
	fputs("neff,core,instructions,instruction_time_us", out);
	for (int k = 0; k < NS_MET__COUNT; k++)
		fprintf(out, ",%s", ns_metrics[k].name);
	fputs("\r\n", out);
	for (size_t i = 0; i < n; i++) {
		ns_csv_string(out, v[i].neff);
		if (v[i].nc < 0)
			fputs(",", out);
		else
			fprintf(out, ",%" PRId64, v[i].nc);
		ns_format_us(val, sizeof(val), v[i].dp->instruction_ns);
		fprintf(out, ",%" PRIu64 ",%s", v[i].dp->n_instructions, val);
		for (int k = 0; k < NS_MET__COUNT; k++) {
			metric_text(val, sizeof(val), &v[i].m, k, false);
			fprintf(out, ",%s", val);
		}
		fputs("\r\n", out);
	}
}

int ns_report_detail(FILE *out, const struct ns_detail_neff *v, size_t n, enum ns_detail key,
		     const struct ns_report_opts *o, enum ns_format fmt, char *const *sources, size_t n_sources,
		     struct ns_error *err)
{
	(void)err;
	switch (fmt) {
	case NS_FMT_JSON:
		write_json(out, v, n, key, o, sources, n_sources);
		break;
	case NS_FMT_CSV:
		write_csv(out, v, n, key, o);
		break;
	default:
		write_text(out, v, n, key, o, sources, n_sources);
		break;
	}
	return 0;
}
