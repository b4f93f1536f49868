/* The field table (fields.h) and what is generated from it: the --sort
 * lookup and the sort keys of `report --help`. */
#include "report/fields.h"

#include <math.h>
#include <string.h>

#include "common/vec.h"

/* ---- getters ---- */

static void text_cell(struct ns_cell *c, const char *text)
{
	*c = (struct ns_cell){ .type = NS_CELL_TEXT, .text = text };
}

/* A time: PyTorch's float µs and the exact nanoseconds. */
static void time_cell(struct ns_cell *c, double us, int64_t ns)
{
	*c = (struct ns_cell){ .type = NS_CELL_TIME, .us = us, .i = ns };
}

static void share_cell(struct ns_cell *c, double value, double total)
{
	*c = (struct ns_cell){ .type = NS_CELL_SHARE, .us = value, .total = total };
}

static void int_cell(struct ns_cell *c, enum ns_cell_type type, int64_t i)
{
	*c = (struct ns_cell){ .type = type, .i = i };
}

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

#define STRING_GETTER(fn, member)                                                                  \
	static void fn(const struct ns_field_ctx *x, const struct ns_avg *r, struct ns_cell *c)    \
	{                                                                                          \
		text_cell(c, r->member ? ns_strtab_get(x->strings, r->member) : NULL);             \
	}
STRING_GETTER(g_name, key)
STRING_GETTER(g_overload, overload)
STRING_GETTER(g_shapes, input_shapes)
STRING_GETTER(g_stack, stack)
STRING_GETTER(g_neff, neff)

#define TIME_GETTER(fn, value, ns)                                                                 \
	static void fn(const struct ns_field_ctx *x, const struct ns_avg *r, struct ns_cell *c)    \
	{                                                                                          \
		(void)x;                                                                           \
		time_cell(c, value(r), ns);                                                        \
	}
TIME_GETTER(g_self_cpu, v_self_cpu, r->self_cpu_ns)
TIME_GETTER(g_cpu_total, v_cpu_total, r->cpu_ns)
TIME_GETTER(g_cpu_avg, v_cpu_avg, avg_ns(r->cpu_ns, r->count))
TIME_GETTER(g_self_dev, v_self_dev, r->self_device_ns)
TIME_GETTER(g_dev_total, v_dev_total, r->device_ns)
TIME_GETTER(g_dev_avg, v_dev_avg, avg_ns(r->device_ns, r->count))

#define INT_GETTER(fn, type, member)                                                               \
	static void fn(const struct ns_field_ctx *x, const struct ns_avg *r, struct ns_cell *c)    \
	{                                                                                          \
		(void)x;                                                                           \
		int_cell(c, type, r->member);                                                      \
	}
INT_GETTER(g_cpu_mem, NS_CELL_BYTES, cpu_mem)
INT_GETTER(g_self_cpu_mem, NS_CELL_BYTES, self_cpu_mem)
INT_GETTER(g_dev_mem, NS_CELL_BYTES, device_mem)
INT_GETTER(g_self_dev_mem, NS_CELL_BYTES, self_device_mem)
INT_GETTER(g_count, NS_CELL_INT, count)

static void g_self_cpu_share(const struct ns_field_ctx *x, const struct ns_avg *r, struct ns_cell *c)
{
	share_cell(c, r->self_cpu_time_total, x->total_self_cpu);
}

static void g_cpu_total_share(const struct ns_field_ctx *x, const struct ns_avg *r, struct ns_cell *c)
{
	if (r->is_async) /* PyTorch prints an integer 0 for async rows (spec A6.7) */
		text_cell(c, "0");
	else
		share_cell(c, r->cpu_time_total, x->total_self_cpu);
}

static void g_self_dev_share(const struct ns_field_ctx *x, const struct ns_avg *r, struct ns_cell *c)
{
	share_cell(c, r->self_device_time_total, x->total_self_device);
}

static void g_warned(const struct ns_field_ctx *x, const struct ns_avg *r, struct ns_cell *c)
{
	int_cell(c, NS_CELL_BOOL, x->warned && (r->device_ns != 0 || r->self_device_ns != 0));
}

static double v_flops(const struct ns_avg *r) { return (double)r->flops; }

/* Total FLOPs: the integer, and the value in the column's unit as
 * PyTorch computes it (flops * scale, spec A6.8) */
static void g_flops(const struct ns_field_ctx *x, const struct ns_avg *r, struct ns_cell *c)
{
	*c = (struct ns_cell){ .type = NS_CELL_FLOPS, .i = r->flops, .x = (double)r->flops * x->flops_scale };
}

/* Where a row's FLOPs come from: "trace" (args "flops"), "shapes", both. */
static void g_flops_from(const struct ns_field_ctx *x, const struct ns_avg *r, struct ns_cell *c)
{
	(void)x;
	bool shapes = r->flops_shapes > 0, trace = r->has_trace_flops;
	text_cell(c, trace && shapes ? "trace+shapes" : trace ? "trace" : shapes ? "shapes" : "");
}

/* Achieved TFLOP/s: FLOPs / Self device time (Self CPU time when the table
 * has no device time); none without FLOPs or time. FLOPs per ns are
 * GFLOP/s. */
static void g_tflops(const struct ns_field_ctx *x, const struct ns_avg *r, struct ns_cell *c)
{
	int64_t ns = x->rate_on_device ? r->self_device_ns : r->self_cpu_ns;
	bool none = r->flops <= 0 || ns <= 0;
	*c = (struct ns_cell){ .type = NS_CELL_REAL, .x = none ? NAN : (double)r->flops / (double)ns / 1000.0 };
}

/* ---- the table ---- */

#define SORT(name, aliases) { { name, aliases, false, NULL } }

const struct ns_field ns_fields[] = {
	{ "Name", NULL, "name", "the op or event name (the row's key)", NS_KIND_TEXT, NS_WHEN_ALWAYS, NS_WIDTH_NAME,
	  { 10, 10, 10 }, 5, g_name, NULL,
	  { { "key", "", false, "name, Z to A (PyTorch's order)" }, { "name", "", true, "name, A to Z" } } },
	{ "Overload Name", NULL, "overload", "the op's overload name", NS_KIND_TEXT, NS_WHEN_OVERLOADS,
	  NS_WIDTH_AS_NAME, { 20, 20, 20 }, 5, g_overload, NULL, { { 0 } } },
	{ "NEFF", NULL, "neff", "the NEFF hash (--by-neff)", NS_KIND_TEXT, NS_WHEN_NEFF, NS_WIDTH_HASH, { 30, 160, 0 }, 0,
	  g_neff, NULL, { { 0 } } },
	{ "Self CPU %", NULL, NULL, "Self CPU time, share of the total", NS_KIND_PERCENT, NS_WHEN_ALWAYS, NS_WIDTH_FIXED,
	  { 40, 0, 0 }, 0, g_self_cpu_share, NULL, { { 0 } } },
	{ "Self CPU", NULL, "self_cpu_us", "Self CPU time", NS_KIND_TIME, NS_WHEN_ALWAYS, NS_WIDTH_FIXED, { 50, 60, 40 },
	  9, g_self_cpu, v_self_cpu, SORT("self_cpu_time_total", "self_cpu") },
	{ "CPU total %", NULL, NULL, "CPU total time, share of the Self CPU total", NS_KIND_PERCENT, NS_WHEN_ALWAYS,
	  NS_WIDTH_FIXED, { 60, 0, 0 }, 0, g_cpu_total_share, NULL, { { 0 } } },
	{ "CPU total", NULL, "cpu_total_us", "CPU total time", NS_KIND_TIME, NS_WHEN_ALWAYS, NS_WIDTH_FIXED,
	  { 70, 70, 50 }, 10, g_cpu_total, v_cpu_total, SORT("cpu_time_total", "cpu_total") },
	{ "CPU time avg", NULL, "cpu_avg_us", "CPU time per call", NS_KIND_TIME, NS_WHEN_ALWAYS, NS_WIDTH_FIXED,
	  { 80, 80, 0 }, 0, g_cpu_avg, v_cpu_avg, SORT("cpu_time", "cpu_avg") },
	{ "Self {D}", NULL, "self_device_us", "Self device time", NS_KIND_TIME, NS_WHEN_DEVICE, NS_WIDTH_FIXED,
	  { 90, 90, 60 }, 7, g_self_dev, v_self_dev,
	  SORT("self_device_time_total", "self_device self_neuron self_cuda self_xpu self_mtia self_hpu") },
	{ "Self {D} %", NULL, NULL, "Self device time, share of the total", NS_KIND_PERCENT, NS_WHEN_DEVICE,
	  NS_WIDTH_FIXED, { 100, 0, 80 }, 8, g_self_dev_share, NULL, { { 0 } } },
	{ "{D} total", NULL, "device_total_us", "device total time", NS_KIND_TIME, NS_WHEN_DEVICE, NS_WIDTH_FIXED,
	  { 110, 100, 70 }, 8, g_dev_total, v_dev_total,
	  SORT("device_time_total", "device_total neuron_total cuda_total xpu_total") },
	{ "{D} time avg", NULL, "device_avg_us", "device time per call", NS_KIND_TIME, NS_WHEN_DEVICE, NS_WIDTH_FIXED,
	  { 120, 110, 0 }, 0, g_dev_avg, v_dev_avg, SORT("device_time", "device_avg neuron_avg cuda_avg") },
	{ "CPU Mem", NULL, "cpu_mem_bytes", "CPU memory", NS_KIND_BYTES, NS_WHEN_MEMORY, NS_WIDTH_FIXED,
	  { 130, 120, 0 }, 0, g_cpu_mem, v_cpu_mem, SORT("cpu_memory_usage", "cpu_mem") },
	{ "Self CPU Mem", NULL, "self_cpu_mem_bytes", "Self CPU memory", NS_KIND_BYTES, NS_WHEN_MEMORY, NS_WIDTH_FIXED,
	  { 140, 130, 0 }, 0, g_self_cpu_mem, v_self_cpu_mem, SORT("self_cpu_memory_usage", "self_cpu_mem") },
	{ "{D} Mem", NULL, "device_mem_bytes", "device memory", NS_KIND_BYTES, NS_WHEN_DEVICE_MEMORY, NS_WIDTH_FIXED,
	  { 150, 140, 0 }, 0, g_dev_mem, v_dev_mem, SORT("device_memory_usage", "device_mem cuda_mem neuron_mem") },
	{ "Self {D} Mem", NULL, "self_device_mem_bytes", "Self device memory", NS_KIND_BYTES, NS_WHEN_DEVICE_MEMORY,
	  NS_WIDTH_FIXED, { 160, 150, 0 }, 0, g_self_dev_mem, v_self_dev_mem,
	  SORT("self_device_memory_usage", "self_device_mem self_cuda_mem self_neuron_mem") },
	{ "# of Calls", "Calls", "calls", "number of calls", NS_KIND_COUNT, NS_WHEN_ALWAYS, NS_WIDTH_FIXED,
	  { 170, 50, 30 }, 6, g_count, v_count, SORT("count", "calls") },
	{ "Input Shapes", NULL, "input_shapes", "the inputs' shapes (--group-by shape)", NS_KIND_TEXT, NS_WHEN_SHAPES,
	  NS_WIDTH_SHAPES, { 180, 30, 0 }, 0, g_shapes, NULL, { { 0 } } },
	{ "Source Location", NULL, "stack", "the Python stack, innermost frame first (--group-by stack=N)", NS_KIND_TEXT,
	  NS_WHEN_STACK, NS_WIDTH_SOURCE, { 190, 40, 0 }, 0, g_stack, NULL, { { 0 } } },
	{ "Total {F}", NULL, "flops", "FLOPs, summed (args \"flops\")", NS_KIND_FLOPS,
	  NS_WHEN_FLOPS, NS_WIDTH_FIXED, { 195, 162, 90 }, 12, g_flops, v_flops, SORT("flops", "total_flops") },
	{ "FLOPs from", NULL, "flops_from", "where the FLOPs come from: trace (args), shapes, trace+shapes",
	  NS_KIND_TEXT, NS_WHEN_SHAPE_FLOPS, NS_WIDTH_FIXED, { 196, 164, 0 }, 0, g_flops_from, NULL, { { 0 } } },
	{ "TFLOP/s", NULL, "tflop_per_s", "FLOPs / Self device time (Self CPU time without a device), in TFLOP/s",
	  NS_KIND_RATE, NS_WHEN_SHAPE_FLOPS, NS_WIDTH_FIXED, { 197, 166, 100 }, 12, g_tflops, NULL, { { 0 } } },
	{ NULL, NULL, "device_time_warned", "device time from an export with neuron-explorer warnings", NS_KIND_FLAG,
	  NS_WHEN_WARNED, NS_WIDTH_FIXED, { 0, 170, 0 }, 0, g_warned, NULL, { { 0 } } },
};
const size_t ns_n_fields = NS_ARRAY_SIZE(ns_fields);

/* ---- sort keys ---- */

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

const struct ns_sort_key *ns_sort_key_find_field(const char *arg, const struct ns_field **field)
{
	char norm[128];
	normalize_sort_name(arg, norm, sizeof(norm));
	for (size_t i = 0; i < ns_n_fields; i++)
		for (size_t k = 0; k < NS_ARRAY_SIZE(ns_fields[i].sort); k++) {
			const struct ns_sort_key *key = &ns_fields[i].sort[k];
			if (key->name && (strcmp(key->name, arg) == 0 || strcmp(key->name, norm) == 0 ||
					  word_in(key->aliases, arg))) {
				if (field)
					*field = &ns_fields[i];
				return key;
			}
		}
	return NULL;
}

const struct ns_field *ns_sort_key_field(const struct ns_sort_key *k)
{
	for (size_t i = 0; i < ns_n_fields; i++)
		if (k >= ns_fields[i].sort && k < ns_fields[i].sort + NS_ARRAY_SIZE(ns_fields[i].sort))
			return &ns_fields[i];
	return NULL;
}

/* The sort keys of fields with (numeric) or without a sort value, one
 * row each: key, help, aliases. */
static void sort_help_rows(struct ns_grid *g, bool numeric)
{
	for (size_t i = 0; i < ns_n_fields; i++)
		for (size_t k = 0; k < NS_ARRAY_SIZE(ns_fields[i].sort); k++) {
			const struct ns_sort_key *key = &ns_fields[i].sort[k];
			if (!key->name || (ns_fields[i].sort_value != NULL) != numeric)
				continue;
			struct ns_cell cells[3];
			text_cell(&cells[0], key->name);
			text_cell(&cells[1], key->help ? key->help : ns_fields[i].help);
			text_cell(&cells[2], key->aliases);
			ns_grid_row(g, cells, true, false);
		}
}

void ns_write_words(FILE *out, const char *list)
{
	for (const char *p = list; *p;) {
		size_t w = strcspn(p, " ");
		fprintf(out, "%.*s\n", (int)w, p);
		p += w + (p[w] == ' ');
	}
}

void ns_fields_write_sort_words(FILE *out)
{
	for (size_t i = 0; i < ns_n_fields; i++)
		for (size_t k = 0; k < NS_ARRAY_SIZE(ns_fields[i].sort); k++)
			if (ns_fields[i].sort[k].name) {
				fprintf(out, "%s\n", ns_fields[i].sort[k].name);
				ns_write_words(out, ns_fields[i].sort[k].aliases);
			}
}

/* "  KEY  HELP  ALIASES", aligned by the grid: the numbers, then the name. */
void ns_fields_write_sort_help(FILE *out)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_PLAIN;
	for (int c = 0; c < 3; c++)
		ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	sort_help_rows(&g, true);
	sort_help_rows(&g, false);
	fputs("Sort keys (--sort KEY: largest first unless noted; aliases last):\n", out);
	if (ns_grid_write_text(out, &g))
		fputs("  (out of memory)\n", out);
	fputs("PyTorch's spellings with cuda, xpu or privateuse1 for device are accepted too.\n", out);
	ns_grid_release(&g);
}
