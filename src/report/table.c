/* PyTorch's _build_table (spec A6), and the CSV/JSON/Markdown forms. */
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

#define COL_W 12
#define SPACING 2

static double v_self_cpu(const struct ns_avg *r) { return r->self_cpu_time_total; }
static double v_cpu_total(const struct ns_avg *r) { return r->cpu_time_total; }
static double v_cpu_avg(const struct ns_avg *r) { return r->count ? r->cpu_time_total / (double)r->count : 0.0; }
static double v_self_dev(const struct ns_avg *r) { return r->self_device_time_total; }
static double v_dev_total(const struct ns_avg *r) { return r->device_time_total; }
static double v_dev_avg(const struct ns_avg *r) { return r->count ? r->device_time_total / (double)r->count : 0.0; }
static double v_cpu_mem(const struct ns_avg *r) { return (double)r->cpu_mem; }
static double v_self_cpu_mem(const struct ns_avg *r) { return (double)r->self_cpu_mem; }
static double v_dev_mem(const struct ns_avg *r) { return (double)r->device_mem; }
static double v_self_dev_mem(const struct ns_avg *r) { return (double)r->self_device_mem; }
static double v_count(const struct ns_avg *r) { return (double)r->count; }

const struct ns_sort_key ns_sort_keys[] = {
	{ "self_cpu_time_total", "self_cpu", "Self CPU time", v_self_cpu, false },
	{ "cpu_time_total", "cpu_total", "CPU total time", v_cpu_total, false },
	{ "cpu_time", "cpu_avg", "CPU time per call", v_cpu_avg, false },
	{ "self_device_time_total", "self_device self_neuron self_cuda self_xpu self_mtia self_hpu",
	  "Self device time", v_self_dev, false },
	{ "device_time_total", "device_total neuron_total cuda_total xpu_total", "device total time", v_dev_total,
	  false },
	{ "device_time", "device_avg neuron_avg cuda_avg", "device time per call", v_dev_avg, false },
	{ "cpu_memory_usage", "cpu_mem", "CPU memory", v_cpu_mem, false },
	{ "self_cpu_memory_usage", "self_cpu_mem", "Self CPU memory", v_self_cpu_mem, false },
	{ "device_memory_usage", "device_mem cuda_mem neuron_mem", "device memory", v_dev_mem, false },
	{ "self_device_memory_usage", "self_device_mem self_cuda_mem self_neuron_mem", "Self device memory",
	  v_self_dev_mem, false },
	{ "count", "calls", "number of calls", v_count, false },
	{ "key", "", "name, Z to A (PyTorch's order)", NULL, false },
	{ "name", "", "name, A to Z", NULL, true },
};
const size_t ns_n_sort_keys = NS_ARRAY_SIZE(ns_sort_keys);

/* PyTorch maps sort_by "cuda"/"xpu"/"privateuse1" to "device"; we also
 * accept the backend names the aliases use. */
static void normalize_sort_name(const char *in, char *out, size_t n)
{
	static const char *const backends[] = { "privateuse1", "cuda", "xpu", "neuron", "mtia", "hpu" };
	size_t o = 0;
	for (size_t i = 0; in[i] && o + 7 < n;) {
		size_t k;
		for (k = 0; k < NS_ARRAY_SIZE(backends); k++) {
			size_t l = strlen(backends[k]);
			if (strncmp(in + i, backends[k], l) == 0) {
				memcpy(out + o, "device", 6);
				o += 6;
				i += l;
				break;
			}
		}
		if (k == NS_ARRAY_SIZE(backends))
			out[o++] = in[i++];
	}
	out[o] = '\0';
}

static bool word_in(const char *list, const char *word)
{
	size_t l = strlen(word);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == l && strncmp(p, word, l) == 0)
			return true;
		p += len;
		while (*p == ' ')
			p++;
	}
	return false;
}

const struct ns_sort_key *ns_sort_key_find(const char *arg)
{
	char norm[128];
	normalize_sort_name(arg, norm, sizeof(norm));
	for (size_t i = 0; i < ns_n_sort_keys; i++)
		if (strcmp(ns_sort_keys[i].name, arg) == 0 || strcmp(ns_sort_keys[i].name, norm) == 0 ||
		    word_in(ns_sort_keys[i].aliases, arg))
			return &ns_sort_keys[i];
	return NULL;
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

/* ---- PyTorch's formatters (spec A6.8) ---- */

static void fmt_time(char *buf, size_t n, double us, const char *unit)
{
	if (unit && strcmp(unit, "s") == 0)
		snprintf(buf, n, "%.3fs", us / 1e6);
	else if (unit && strcmp(unit, "ms") == 0)
		snprintf(buf, n, "%.3fms", us / 1e3);
	else if (unit && strcmp(unit, "us") == 0)
		snprintf(buf, n, "%.3fus", us);
	else if (us >= 1e6)
		snprintf(buf, n, "%.3fs", us / 1e6);
	else if (us >= 1e3)
		snprintf(buf, n, "%.3fms", us / 1e3);
	else
		snprintf(buf, n, "%.3fus", us);
}

static void fmt_share(char *buf, size_t n, double v, double total)
{
	if (total == 0)
		snprintf(buf, n, "NaN");
	else
		snprintf(buf, n, "%.2f%%", v * 100.0 / total);
}

static void fmt_mem(char *buf, size_t n, int64_t bytes)
{
	const double K = 1024.0, M = K * 1024.0, G = M * 1024.0;
	double mag = fabs((double)bytes);
	if (mag >= G)
		snprintf(buf, n, "%.2f GB", (double)bytes * 1.0 / G);
	else if (mag >= M)
		snprintf(buf, n, "%.2f MB", (double)bytes * 1.0 / M);
	else if (mag >= K)
		snprintf(buf, n, "%.2f KB", (double)bytes * 1.0 / K);
	else
		snprintf(buf, n, "%" PRId64 " B", bytes);
}

/* Python len(): code points of UTF-8 text (continuation bytes do not count). */
static size_t text_width(const char *s, size_t len)
{
	size_t w = 0;
	for (size_t i = 0; i < len; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/* Byte length of the first `cps` code points. */
static size_t prefix_bytes(const char *s, size_t len, size_t cps)
{
	size_t i = 0;
	for (size_t seen = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (seen == cps)
				break;
			seen++;
		}
	}
	return i;
}

/* ---- rows, sorted ---- */

struct view {
	const struct ns_agg *agg;
	const struct ns_report_opts *o;
	const struct ns_strtab *strings;
	size_t *order;   /* row indices in display order */
	size_t n;
	bool has_device_time, has_device_mem, has_shapes, has_stack, has_overloads, profile_memory;
	const char *device;
	double total_self_cpu, total_self_device;
	int64_t total_self_cpu_ns, total_self_device_ns;
	bool warned;     /* the device time comes from an export with Explorer warnings */
};

/* Rows whose device time comes from a Neuron export that carried
 * neuron-explorer's own warnings (docs/neuron.md "Explorer's warnings") are
 * marked so, and a footnote names the export. */
#define WARN_MARK "\xe2\x80\xa1" /* U+2021 DOUBLE DAGGER */

static bool row_warned(const struct view *v, const struct ns_avg *r)
{
	return v->warned && (r->device_ns != 0 || r->self_device_ns != 0);
}

/* "‡ device time from a Neuron export with N neuron-explorer warning(s)
 * (categories): FILE[, FILE...]" */
static void write_warn_note(FILE *out, const struct view *v, bool markdown)
{
	const struct ns_trace *t = v->agg->trace;
	if (!v->warned)
		return;
	bool several = false;
	for (size_t i = 1; i < t->n_xwarn && !several; i++)
		several = t->xwarn[i].file != t->xwarn[0].file;
	fprintf(out, "%s" WARN_MARK " device time from %s with %zu neuron-explorer warning%s",
		markdown ? "\n" : "", several ? "Neuron exports" : "a Neuron export", t->n_xwarn,
		t->n_xwarn == 1 ? "" : "s");
	size_t shown = 0;
	for (size_t i = 0; i < t->n_xwarn; i++) {
		ns_str c = t->xwarn[i].category;
		bool seen = !c;
		for (size_t j = 0; j < i && !seen; j++)
			seen = t->xwarn[j].category == c;
		if (seen)
			continue;
		fputs(shown++ ? ", " : " (", out);
		if (markdown)
			ns_md_text(out, ns_strtab_get(v->strings, c));
		else
			ns_fputs_visible(ns_strtab_get(v->strings, c), out);
	}
	fputs(shown ? "): " : ": ", out);
	for (size_t i = 0; i < t->n_xwarn; i++) { /* each export once (several when merged) */
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = t->xwarn[j].file == t->xwarn[i].file;
		if (seen)
			continue;
		if (i)
			fputs(", ", out);
		if (markdown)
			ns_md_text(out, ns_strtab_get(v->strings, t->xwarn[i].file));
		else
			ns_fputs_visible(ns_strtab_get(v->strings, t->xwarn[i].file), out);
	}
	fputc('\n', out);
}

static const struct ns_sort_key *g_sort_key; /* qsort has no context argument in C11 */
static const struct ns_agg *g_sort_agg;

static int cmp_rows(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct ns_avg *ra = &g_sort_agg->avgs[a], *rb = &g_sort_agg->avgs[b];
	int c = 0;
	if (g_sort_key->value) {
		double va = g_sort_key->value(ra), vb = g_sort_key->value(rb);
		c = va > vb ? -1 : va < vb ? 1 : 0;
	} else {
		const struct ns_strtab *st = &g_sort_agg->trace->strings;
		c = strcmp(ns_strtab_get(st, ra->key), ns_strtab_get(st, rb->key));
		c = g_sort_key->ascending ? c : -c;
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
		g_sort_key = o->sort;
		g_sort_agg = agg;
		qsort(v->order, v->n, sizeof(*v->order), cmp_rows);
	}
	return 0;
}

/* Rows printed: row_limit is checked before the top-level filter (A6.7). */
static bool row_printed(const struct view *v, size_t k, long *printed)
{
	const struct ns_avg *r = &v->agg->avgs[v->order[k]];
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

/* ---- text table ---- */

struct line {
	char *buf;
	size_t len, cap;
};

static int line_put(struct line *l, const char *s, size_t n)
{
	if (l->len + n + 1 > l->cap) {
		size_t cap = l->cap ? l->cap : 256;
		while (cap < l->len + n + 1)
			cap *= 2;
		char *b = realloc(l->buf, cap);
		if (!b)
			return -1;
		l->buf = b;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = '\0';
	return 0;
}

static int line_pad(struct line *l, char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (line_put(l, &c, 1))
			return -1;
	return 0;
}

/* One cell of `{: >w}` (or `<`) plus the two-space gap; control
 * characters are made visible (escape.h), the one way the table departs
 * from PyTorch's, which prints them as they are (docs/report.md). */
static int cell(struct line *l, const char *text, size_t w, bool left)
{
	char *owned;
	const char *s = ns_visible(text, &owned);
	int rc = -1;
	if (!s)
		return -1;
	size_t len = strlen(s), tw = text_width(s, len);
	size_t pad = tw < w ? w - tw : 0;
	if ((left || !line_pad(l, ' ', pad)) && !line_put(l, s, len) && (!left || !line_pad(l, ' ', pad)))
		rc = line_pad(l, ' ', SPACING);
	free(owned);
	return rc;
}

/* A copy of s with its control characters made visible; NULL on OOM. */
static char *visible_dup(const char *s)
{
	char *owned;
	const char *v = ns_visible(s, &owned);
	return owned ? owned : v ? strdup(v) : NULL;
}

/* A Name or Overload Name cell: cut to max_name_width - 3 characters and
 * "..." as PyTorch cuts (spec A6.7), counted on the visible text. */
static int name_cell(struct line *l, const char *text, size_t w, int max_w)
{
	char *s = visible_dup(text), *cut = NULL;
	int rc = -1;
	if (!s)
		return -1;
	size_t len = strlen(s);
	if (max_w >= 3 && text_width(s, len) >= (size_t)(max_w - 3)) {
		if (asprintf(&cut, "%.*s...", (int)prefix_bytes(s, len, (size_t)(max_w - 3)), s) < 0)
			cut = NULL;
		rc = cut ? cell(l, cut, w, false) : -1;
	} else {
		rc = cell(l, s, w, false);
	}
	free(cut);
	free(s);
	return rc;
}

struct columns {
	const char *headers[24];
	size_t widths[24];
	bool left[24];
	size_t n;
};

static void add_col(struct columns *c, const char *h, size_t w, bool left)
{
	c->headers[c->n] = h;
	c->widths[c->n] = w;
	c->left[c->n] = left;
	c->n++;
}

/* Splits a "a;b;c" stack into frames (pointers into a copy). */
static size_t split_stack(char *copy, char **frames, size_t max)
{
	size_t n = 0;
	for (char *p = copy; p && n < max;) {
		char *semi = strchr(p, ';');
		if (semi)
			*semi = '\0';
		frames[n++] = p;
		p = semi ? semi + 1 : NULL;
	}
	return n;
}

static void trim_path(const char *path, size_t w, char *out, size_t n)
{
	size_t len = strlen(path), cps = text_width(path, len);
	if (cps > w) {
		const char *tail = path + prefix_bytes(path, len, cps - w);
		if (w > 3)
			snprintf(out, n, "...%s", tail + prefix_bytes(tail, strlen(tail), 3));
		else
			snprintf(out, n, "%s", tail);
	} else {
		snprintf(out, n, "%s", path);
	}
}

#define MAX_FRAMES 256

/* --by-neff column: the widest hash (or "NEFF"), plus the 4 of PyTorch's
 * name column. */
static size_t neff_width(const struct view *v)
{
	size_t w = 8;
	for (size_t i = 0; i < v->n; i++) {
		ns_str h = v->agg->avgs[i].neff;
		if (h && ns_strtab_len(v->strings, h) + 4 > w)
			w = ns_strtab_len(v->strings, h) + 4;
	}
	return w < 63 ? w : 63;
}

static int write_text(FILE *out, struct view *v)
{
	const struct ns_report_opts *o = v->o;
	const struct ns_agg *agg = v->agg;
	const char *D = v->device;
	char h_self_d[64], h_self_dp[64], h_d_total[64], h_d_avg[64], h_d_mem[64], h_self_d_mem[64];
	struct columns c = { 0 };
	struct line l = { 0 };
	size_t name_w = 0, shapes_w = 0, src_w = 0, line_len;
	bool has_overloads = v->has_overloads;
	long printed = 0;
	int rc = -1;

	for (size_t i = 0; i < v->n; i++) {
		const struct ns_avg *r = &agg->avgs[i];
		size_t w = ns_visible_width(ns_strtab_get(v->strings, r->key)) + 4;
		name_w = w > name_w ? w : name_w;
		const char *shapes = r->input_shapes ? ns_strtab_get(v->strings, r->input_shapes) : "[]";
		w = ns_visible_width(shapes) + 4;
		shapes_w = w > shapes_w ? w : shapes_w;
		if (r->stack) {
			char *copy = visible_dup(ns_strtab_get(v->strings, r->stack));
			char *frames[MAX_FRAMES];
			if (!copy)
				goto out;
			size_t nf = split_stack(copy, frames, MAX_FRAMES);
			for (size_t f = 0; f < nf; f++) {
				w = text_width(frames[f], strlen(frames[f])) + 4;
				src_w = w > src_w ? w : src_w;
			}
			free(copy);
		}
	}
	if (o->max_name_width > 0 && name_w > (size_t)o->max_name_width)
		name_w = (size_t)o->max_name_width;
	if (o->max_shapes_width > 0 && shapes_w > (size_t)o->max_shapes_width)
		shapes_w = (size_t)o->max_shapes_width;
	if (o->max_src_width > 0 && src_w > (size_t)o->max_src_width)
		src_w = (size_t)o->max_src_width;

	snprintf(h_self_d, sizeof(h_self_d), "Self %s", D);
	snprintf(h_self_dp, sizeof(h_self_dp), "Self %s %%", D);
	snprintf(h_d_total, sizeof(h_d_total), "%s total", D);
	snprintf(h_d_avg, sizeof(h_d_avg), "%s time avg", D);
	snprintf(h_d_mem, sizeof(h_d_mem), "%s Mem", D);
	snprintf(h_self_d_mem, sizeof(h_self_d_mem), "Self %s Mem", D);
	add_col(&c, "Name", name_w, false);
	if (has_overloads) /* C+ group_by_overload_name: as wide as Name (spec A6.3) */
		add_col(&c, "Overload Name", name_w, false);
	if (o->show_neff)
		add_col(&c, "NEFF", neff_width(v), false);
	add_col(&c, "Self CPU %", COL_W, false);
	add_col(&c, "Self CPU", COL_W, false);
	add_col(&c, "CPU total %", COL_W, false);
	add_col(&c, "CPU total", COL_W, false);
	add_col(&c, "CPU time avg", COL_W, false);
	if (v->has_device_time) {
		add_col(&c, h_self_d, COL_W, false);
		add_col(&c, h_self_dp, COL_W, false);
		add_col(&c, h_d_total, COL_W, false);
		add_col(&c, h_d_avg, COL_W, false);
	}
	if (v->profile_memory) {
		add_col(&c, "CPU Mem", COL_W, false);
		add_col(&c, "Self CPU Mem", COL_W, false);
		if (agg->backend != NS_BACKEND_NONE && v->has_device_mem) {
			add_col(&c, h_d_mem, COL_W, false);
			add_col(&c, h_self_d_mem, COL_W, false);
		}
	}
	add_col(&c, "# of Calls", COL_W, false);
	if (v->has_shapes)
		add_col(&c, "Input Shapes", shapes_w, false);
	if (v->has_stack)
		add_col(&c, "Source Location", src_w, true);
	line_len = 0;
	for (size_t k = 0; k < c.n; k++)
		line_len += c.widths[k] + (k ? SPACING : 0);

	if (o->header) {
		for (size_t k = 0; k < line_len; k++)
			fputc('=', out);
		fputc('\n', out);
		ns_fputs_visible(o->header, out);
		fputc('\n', out);
	}
	if (o->top_level_only) {
		for (size_t k = 0; k < line_len; k++)
			fputc('=', out);
		fputs("\nThis report only display top-level ops statistics\n", out);
	}
	struct line sep = { 0 };
	for (size_t k = 0; k < c.n; k++)
		if (line_pad(&sep, '-', c.widths[k]) || line_pad(&sep, ' ', SPACING))
			goto out;
	fprintf(out, "%s\n", sep.buf);
	for (size_t k = 0; k < c.n; k++)
		if (cell(&l, c.headers[k], c.widths[k], c.left[k]))
			goto out;
	fprintf(out, "%s\n%s\n", l.buf, sep.buf);

	for (size_t k = 0; k < v->n && !rows_done(v, printed); k++) {
		if (!row_printed(v, k, &printed))
			continue;
		const struct ns_avg *r = &agg->avgs[v->order[k]];
		char cells[24][64];
		size_t nc = 1 + has_overloads; /* the name (and overload) go straight to the line */
		l.len = 0;
		if (name_cell(&l, ns_strtab_get(v->strings, r->key), name_w, o->max_name_width) ||
		    (has_overloads && name_cell(&l, ns_strtab_get(v->strings, r->overload), name_w, o->max_name_width)))
			goto out;
		if (o->show_neff)
			snprintf(cells[nc++], sizeof(cells[0]), "%s", r->neff ? ns_strtab_get(v->strings, r->neff) : "-");
		fmt_share(cells[nc++], sizeof(cells[0]), r->self_cpu_time_total, v->total_self_cpu);
		fmt_time(cells[nc++], sizeof(cells[0]), r->self_cpu_time_total, o->time_unit);
		if (r->is_async)
			snprintf(cells[nc++], sizeof(cells[0]), "0");
		else
			fmt_share(cells[nc++], sizeof(cells[0]), r->cpu_time_total, v->total_self_cpu);
		fmt_time(cells[nc++], sizeof(cells[0]), r->cpu_time_total, o->time_unit);
		fmt_time(cells[nc++], sizeof(cells[0]), v_cpu_avg(r), o->time_unit);
		if (v->has_device_time) {
			fmt_time(cells[nc++], sizeof(cells[0]), r->self_device_time_total, o->time_unit);
			fmt_share(cells[nc++], sizeof(cells[0]), r->self_device_time_total, v->total_self_device);
			fmt_time(cells[nc++], sizeof(cells[0]), r->device_time_total, o->time_unit);
			fmt_time(cells[nc++], sizeof(cells[0]), v_dev_avg(r), o->time_unit);
		}
		if (v->profile_memory) {
			fmt_mem(cells[nc++], sizeof(cells[0]), r->cpu_mem);
			fmt_mem(cells[nc++], sizeof(cells[0]), r->self_cpu_mem);
			if (agg->backend != NS_BACKEND_NONE && v->has_device_mem) {
				fmt_mem(cells[nc++], sizeof(cells[0]), r->device_mem);
				fmt_mem(cells[nc++], sizeof(cells[0]), r->self_device_mem);
			}
		}
		snprintf(cells[nc++], sizeof(cells[0]), "%" PRId64, r->count);
		for (size_t k2 = 1 + has_overloads; k2 < nc; k2++)
			if (cell(&l, cells[k2], c.widths[k2], c.left[k2]))
				goto out;
		if (v->has_shapes) {
			const char *shapes = r->input_shapes ? ns_strtab_get(v->strings, r->input_shapes) : "[]";
			char *shown = visible_dup(shapes);
			int bad = !shown;
			if (shown) {
				shown[prefix_bytes(shown, strlen(shown), shapes_w)] = '\0';
				bad = cell(&l, shown, shapes_w, false);
			}
			free(shown);
			if (bad)
				goto out;
		}
		char *frames[MAX_FRAMES];
		size_t nf = 0;
		char *copy = NULL;
		if (v->has_stack) {
			char src[1024] = "";
			if (r->stack) {
				copy = visible_dup(ns_strtab_get(v->strings, r->stack));
				if (!copy)
					goto out;
				nf = split_stack(copy, frames, MAX_FRAMES);
				trim_path(frames[0], src_w, src, sizeof(src));
			}
			if (cell(&l, src, src_w, true)) {
				free(copy);
				goto out;
			}
		}
		fprintf(out, "%s%s\n", l.buf, row_warned(v, r) ? WARN_MARK : "");
		if (v->has_stack) {
			/* further frames, then a blank separator row (spec A6.7) */
			for (size_t f = 1; f <= nf; f++) {
				char src[1024] = "";
				if (f < nf)
					trim_path(frames[f], src_w, src, sizeof(src));
				l.len = 0;
				for (size_t k2 = 0; k2 + 1 < c.n; k2++)
					cell(&l, "", c.widths[k2], c.left[k2]);
				cell(&l, src, src_w, true);
				fprintf(out, "%s\n", l.buf);
			}
			if (nf == 0) {
				l.len = 0;
				for (size_t k2 = 0; k2 < c.n; k2++)
					cell(&l, "", c.widths[k2], c.left[k2]);
				fprintf(out, "%s\n", l.buf);
			}
		}
		free(copy);
	}
	char total[64];
	fmt_time(total, sizeof(total), v->total_self_cpu, o->time_unit);
	fprintf(out, "%s\nSelf CPU time total: %s\n", sep.buf, total);
	if (v->has_device_time) {
		fmt_time(total, sizeof(total), v->total_self_device, o->time_unit);
		fprintf(out, "Self %s time total: %s\n", D, total);
	}
	write_warn_note(out, v, false);
	free(sep.buf);
	rc = 0;
out:
	free(l.buf);
	return rc;
}

/* ---- machine-readable forms: exact decimal microseconds ---- */

/* Average in exact decimal: ns / count, rounded half to even to the ns. */
static int64_t avg_ns(int64_t total, int64_t count)
{
	if (count <= 0)
		return 0;
	int64_t q = total / count, r = total % count;
	if (r < 0) {
		r = -r;
		if (2 * r > count || (2 * r == count && (q & 1)))
			q--;
	} else if (2 * r > count || (2 * r == count && (q & 1))) {
		q++;
	}
	return q;
}

/* The columns of the machine forms; `device` ones exist only for a trace
 * recorded with a device (docs/cli.md, "report"). */
static const struct {
	const char *name;
	bool device;
} machine_columns[] = {
	{ "name", false },		 { "overload", false },		{ "input_shapes", false },
	{ "stack", false },		 { "calls", false },		{ "self_cpu_us", false },
	{ "cpu_total_us", false },	 { "cpu_avg_us", false },	{ "self_device_us", true },
	{ "device_total_us", true },	 { "device_avg_us", true },	{ "cpu_mem_bytes", false },
	{ "self_cpu_mem_bytes", false }, { "device_mem_bytes", true },	{ "self_device_mem_bytes", true },
};
#define N_MACHINE_COLUMNS (NS_ARRAY_SIZE(machine_columns))

/* Whether the trace has device columns: PyTorch's use_device is set. */
static bool has_device(const struct view *v)
{
	return v->agg->backend != NS_BACKEND_NONE;
}

/* Whether column c is written: a CSV of several traces has one header, so
 * it keeps the device columns (empty for a trace without a device). */
static bool column_written(const struct view *v, size_t c)
{
	return !machine_columns[c].device || has_device(v) || v->o->trace_columns;
}

/* The row's values for the machine forms, as text; [0..3] are strings. */
static void machine_values(const struct view *v, const struct ns_avg *r, char vals[][64], const char *strs[4])
{
	strs[0] = ns_strtab_get(v->strings, r->key);
	strs[1] = ns_strtab_get(v->strings, r->overload);
	strs[2] = ns_strtab_get(v->strings, r->input_shapes);
	strs[3] = ns_strtab_get(v->strings, r->stack);
	snprintf(vals[4], 64, "%" PRId64, r->count);
	ns_format_us(vals[5], 64, r->self_cpu_ns);
	ns_format_us(vals[6], 64, r->cpu_ns);
	ns_format_us(vals[7], 64, avg_ns(r->cpu_ns, r->count));
	ns_format_us(vals[8], 64, r->self_device_ns);
	ns_format_us(vals[9], 64, r->device_ns);
	ns_format_us(vals[10], 64, avg_ns(r->device_ns, r->count));
	snprintf(vals[11], 64, "%" PRId64, r->cpu_mem);
	snprintf(vals[12], 64, "%" PRId64, r->self_cpu_mem);
	snprintf(vals[13], 64, "%" PRId64, r->device_mem);
	snprintf(vals[14], 64, "%" PRId64, r->self_device_mem);
}

/* The printed rows in a machine form: JSON objects (",\n  {...}") or CSV
 * lines. Returns whether any row was printed. */
static bool write_machine_rows(FILE *out, struct view *v, bool json)
{
	const struct ns_trace *t = v->agg->trace;
	void (*string)(FILE *, const char *) = json ? ns_json_string : ns_csv_string;
	long printed = 0;
	bool any = false;
	for (size_t k = 0; k < v->n && !rows_done(v, printed); k++) {
		if (!row_printed(v, k, &printed))
			continue;
		const struct ns_avg *r = &v->agg->avgs[v->order[k]];
		char vals[N_MACHINE_COLUMNS][64];
		const char *strs[4];
		machine_values(v, r, vals, strs);
		if (json) {
			fputs(any ? ",\n  {" : "\n  {", out);
		} else if (v->o->trace_columns) {
			ns_csv_string(out, t->path ? t->path : "");
			if (t->rank != NS_NONE)
				fprintf(out, ",%" PRId64, t->rank);
			fputc(',', out);
		}
		any = true;
		for (size_t c = 0; c < N_MACHINE_COLUMNS; c++) {
			if (!column_written(v, c) || (json && machine_columns[c].device && !has_device(v)))
				continue;
			if (c)
				fputs(json ? ", " : ",", out);
			if (json)
				fprintf(out, "\"%s\": ", machine_columns[c].name);
			if (c < 4)
				string(out, strs[c]);
			else if (!machine_columns[c].device || has_device(v))
				fputs(vals[c], out);
		}
		if (v->o->show_neff) {
			fputs(json ? ", \"neff\": " : ",", out);
			string(out, ns_strtab_get(v->strings, r->neff));
		}
		if (v->o->warned_column || v->warned)
			fprintf(out, "%s%s", json ? ", \"device_time_warned\": " : ",", row_warned(v, r) ? "true" : "false");
		fputs(json ? "}" : "\r\n", out);
	}
	return any;
}

static void write_json(FILE *out, struct view *v)
{
	char a[64], b[64];
	ns_format_us(a, sizeof(a), v->total_self_cpu_ns);
	ns_format_us(b, sizeof(b), v->total_self_device_ns);
	fputs("{\"device\": ", out);
	if (has_device(v))
		ns_json_string(out, v->device);
	else
		fputs("null", out);
	if (v->agg->trace->path) {
		fputs(", \"path\": ", out);
		ns_json_string(out, v->agg->trace->path);
	}
	if (v->agg->trace->rank != NS_NONE)
		fprintf(out, ", \"rank\": %" PRId64, v->agg->trace->rank);
	fprintf(out, ", \"self_cpu_time_total_us\": %s", a);
	if (has_device(v))
		fprintf(out, ", \"self_device_time_total_us\": %s", b);
	for (size_t i = 0; i < v->agg->trace->n_xwarn; i++) { /* neuron-explorer's own warnings */
		const struct ns_xwarn_ref *w = &v->agg->trace->xwarn[i];
		fputs(i ? ", {\"file\": " : ", \"explorer_warnings\": [{\"file\": ", out);
		ns_json_string(out, ns_strtab_get(v->strings, w->file));
		fputs(", \"category\": ", out);
		if (w->category)
			ns_json_string(out, ns_strtab_get(v->strings, w->category));
		else
			fputs("null", out);
		fputs(", \"message\": ", out);
		ns_json_string(out, ns_strtab_get(v->strings, w->message));
		fputs(i + 1 == v->agg->trace->n_xwarn ? "}]" : "}", out);
	}
	fputs(", \"rows\": [", out);
	fputs(write_machine_rows(out, v, true) ? "\n]" : "]", out);
	if (!v->o->json_open)
		fputs("}\n", out);
}

static void write_csv(FILE *out, struct view *v)
{
	if (!v->o->no_csv_header) {
		if (v->o->trace_columns)
			fputs("path,rank,", out);
		for (size_t c = 0; c < N_MACHINE_COLUMNS; c++)
			if (column_written(v, c))
				fprintf(out, "%s%s", c ? "," : "", machine_columns[c].name);
		fputs(v->o->show_neff ? ",neff" : "", out);
		fputs(v->o->warned_column || v->warned ? ",device_time_warned\r\n" : "\r\n", out);
	}
	write_machine_rows(out, v, false);
}

/* A GitHub table: the name (and overload), calls and the main times; the
 * device columns only when the table has them (spec A6.1 has_device_time).
 * Every cell goes through ns_md_cell (escape.h); several traces are each
 * headed by their file and rank. */
static void write_markdown(FILE *out, struct view *v)
{
	long printed = 0;
	char t[64];
	if (v->o->header) {
		fputs("### ", out);
		ns_md_text(out, v->o->header);
		fputs("\n\n", out);
	}
	fputs(v->has_overloads ? "| Name | Overload Name " : "| Name ", out);
	fputs("| Calls | Self CPU | CPU total ", out);
	if (v->has_device_time) { /* "Self D", "D total", "Self D %" */
		fputs("| Self ", out);
		ns_md_text(out, v->device);
		fputs(" | ", out);
		ns_md_text(out, v->device);
		fputs(" total | Self ", out);
		ns_md_text(out, v->device);
		fputs(" % ", out);
	}
	fputs(v->has_overloads ? "|\n|:-----|:-----|" : "|\n|:-----|", out);
	fputs("------:|---------:|----------:|", out);
	if (v->has_device_time)
		fputs("-------:|--------:|--------:|", out);
	fputc('\n', out);
	for (size_t k = 0; k < v->n && !rows_done(v, printed); k++) {
		if (!row_printed(v, k, &printed))
			continue;
		const struct ns_avg *r = &v->agg->avgs[v->order[k]];
		if (row_warned(v, r)) { /* the mark after the name */
			char *marked = NULL;
			if (asprintf(&marked, "%s " WARN_MARK, ns_strtab_get(v->strings, r->key)) < 0)
				marked = NULL;
			ns_md_cell(out, marked ? marked : ns_strtab_get(v->strings, r->key));
			free(marked);
		} else {
			ns_md_cell(out, ns_strtab_get(v->strings, r->key));
		}
		if (v->has_overloads)
			ns_md_cell(out, ns_strtab_get(v->strings, r->overload));
		snprintf(t, sizeof(t), "%" PRId64, r->count);
		ns_md_cell(out, t);
		fmt_time(t, sizeof(t), r->self_cpu_time_total, v->o->time_unit);
		ns_md_cell(out, t);
		fmt_time(t, sizeof(t), r->cpu_time_total, v->o->time_unit);
		ns_md_cell(out, t);
		if (v->has_device_time) {
			fmt_time(t, sizeof(t), r->self_device_time_total, v->o->time_unit);
			ns_md_cell(out, t);
			fmt_time(t, sizeof(t), r->device_time_total, v->o->time_unit);
			ns_md_cell(out, t);
			fmt_share(t, sizeof(t), r->self_device_time_total, v->total_self_device);
			ns_md_cell(out, t);
		}
		fputs("|\n", out);
	}
	fmt_time(t, sizeof(t), v->total_self_cpu, v->o->time_unit);
	fprintf(out, "\nSelf CPU time total: %s", t);
	if (v->has_device_time) {
		fmt_time(t, sizeof(t), v->total_self_device, v->o->time_unit);
		fputs("; Self ", out);
		ns_md_text(out, v->device);
		fprintf(out, " time total: %s", t);
	}
	fputc('\n', out);	write_warn_note(out, v, true);
}

int ns_report_write(FILE *out, const struct ns_agg *agg, const struct ns_report_opts *o, enum ns_format fmt,
		    struct ns_error *err)
{
	struct view v;
	int rc = 0;
	if (view_init(&v, agg, o))
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	switch (fmt) {
	case NS_FMT_TABLE:
		if (agg->n_avgs) /* PyTorch returns "" for an empty event list */
			rc = write_text(out, &v);
		break;
	case NS_FMT_JSON:
		write_json(out, &v);
		break;
	case NS_FMT_CSV:
		write_csv(out, &v);
		break;
	case NS_FMT_MARKDOWN:
		write_markdown(out, &v);
		break;
	}
	free(v.order);
	if (rc)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	return 0;
}
