/* Report writers (src/report/table.c): PyTorch's _build_table byte for byte
 * (spec A6, D3) and the CSV/JSON/Markdown forms. Most tables below are built
 * from hand-made key_averages rows; their expected text was produced by the
 * independent Python reference (tests/oracle/key_averages.py build_table)
 * from the same rows and checked by eye against spec A6. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate/aggregate.h"
#include "aggregate/ranks.h"
#include "common/trace.h"
#include "ingest/ingest.h"
#include "report/report.h"
#include "report/analyses.h"

/* spec D3, verbatim */
static const char D3_DEFAULT[] =
	"-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"                                                   Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg       CPU Mem  Self CPU Mem      CUDA Mem  Self CUDA Mem    # of Calls  \n"
	"-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"                                          ProfilerStep*        74.88%     149.750us       100.00%     200.000us     200.000us       0.000us         0.00%       9.000us       9.000us           0 B           0 B           0 B      -4.00 KB             1  \n"
	"                                              aten::add        13.36%      26.725us        25.12%      50.250us      25.125us       9.000us       100.00%       9.000us       4.500us           0 B           0 B       4.00 KB           0 B             2  \n"
	"                                            aten::empty         1.56%       3.125us         1.56%       3.125us       3.125us       0.000us         0.00%       0.000us       0.000us           0 B           0 B       4.00 KB       4.00 KB             1  \n"
	"                                       cudaLaunchKernel        10.20%      20.400us        10.20%      20.400us      10.200us       0.000us         0.00%       0.000us       0.000us           0 B           0 B           0 B           0 B             2  \n"
	"                                          ProfilerStep*         0.00%       0.000us         0.00%       0.000us       0.000us      74.679us       829.77%      74.679us      74.679us           0 B           0 B           0 B           0 B             1  \n"
	"void at::native::vectorized_elementwise_kernel<4, at...         0.00%       0.000us         0.00%       0.000us       0.000us       9.000us       100.00%       9.000us       4.500us           0 B           0 B           0 B           0 B             2  \n"
	"-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 200.000us\n"
	"Self CUDA time total: 9.000us\n";

static const char *const D3_SORTED_PREFIXES[] = {
	"                                          ProfilerStep*         0.00%       0.000us         0.00%       0.000us       0.000us      74.679us       829.77%",
	"                                              aten::add        13.36%      26.725us        25.12%      50.250us      25.125us       9.000us       100.00%",
	"void at::native::vectorized_elementwise_kernel<4, at...         0.00%       0.000us",
	"                                          ProfilerStep*        74.88%     149.750us       100.00%",
	"                                            aten::empty",
	"                                       cudaLaunchKernel",
};

/* expected tables (see the comment at the top) */
static const char CPU_BASIC[] =
	"-------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"         Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
	"-------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"    aten::add        60.00%      30.000us       100.00%      50.000us      25.000us             2  \n"
	"    aten::mul        40.00%      20.000us        40.00%      20.000us      20.000us             1  \n"
	"-------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 50.000us\n";

static const char SORT_STABLE[] =
	"-----  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	" Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
	"-----  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"    B        29.17%       7.000us        29.17%       7.000us       7.000us             1  \n"
	"    D        29.17%       7.000us        29.17%       7.000us       7.000us             1  \n"
	"    A        20.83%       5.000us        20.83%       5.000us       5.000us             1  \n"
	"    C        20.83%       5.000us        20.83%       5.000us       5.000us             1  \n"
	"    E         0.00%       0.000us         0.00%       0.000us       0.000us             1  \n"
	"-----  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 24.000us\n";

static const char MEM_UNITS[] =
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"  Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg       CPU Mem  Self CPU Mem      CUDA Mem  Self CUDA Mem    # of Calls  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"    m0        12.50%       1.000us        12.50%       1.000us       1.000us           0 B           0 B           0 B           1 B             1  \n"
	"    m1        12.50%       1.000us        12.50%       1.000us       1.000us        1023 B       -1023 B        1023 B        1023 B             1  \n"
	"    m2        12.50%       1.000us        12.50%       1.000us       1.000us       1.00 KB      -1.00 KB       1.00 KB       1.00 KB             1  \n"
	"    m3        12.50%       1.000us        12.50%       1.000us       1.000us      -1.50 KB       1.50 KB      -1.50 KB      -1.50 KB             1  \n"
	"    m4        12.50%       1.000us        12.50%       1.000us       1.000us       1.00 MB      -1.00 MB       1.00 MB       1.00 MB             1  \n"
	"    m5        12.50%       1.000us        12.50%       1.000us       1.000us       1.50 GB      -1.50 GB       1.50 GB       1.50 GB             1  \n"
	"    m6        12.50%       1.000us        12.50%       1.000us       1.000us       -1023 B        1023 B       -1023 B       -1023 B             1  \n"
	"    m7        12.50%       1.000us        12.50%       1.000us       1.000us       5.00 GB      -5.00 GB       5.00 GB       5.00 GB             1  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 8.000us\n";

static const char NAMES[] =
	"-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"                                                   Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
	"-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"    nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn        33.33%       1.000us        33.33%       1.000us       1.000us             1  \n"
	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...        33.33%       1.000us        33.33%       1.000us       1.000us             1  \n"
	"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy...        33.33%       1.000us        33.33%       1.000us       1.000us             1  \n"
	"-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 3.000us\n";

static const char NAME_WIDTH_ALL_ROWS[] =
	"---------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"                       Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
	"---------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"                      short        33.33%       1.000us        33.33%       1.000us       1.000us             1  \n"
	"---------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 3.000us\n";

static const char TOP_LEVEL_LIMIT[] =
	"==========================================================================================\n"
	"This report only display top-level ops statistics\n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"  Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"    t1        20.00%       1.000us        20.00%       1.000us       1.000us             1  \n"
	"    t2        20.00%       1.000us        20.00%       1.000us       1.000us             1  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 5.000us\n";

static const char LIMIT_ZERO[] =
	"------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"  Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 5.000us\n";

static const char AUTO_UNITS[] =
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"  Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg    # of Calls  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"    op       100.00%    1000.000us    150000.08%        1.500s     500.000ms       0.000us         0.00%       0.000us       0.000us             3  \n"
	"     k         0.00%       0.000us         0.00%       0.000us       0.000us       2.500ms       100.00%       2.500ms       2.500ms             1  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 1000.000us\n"
	"Self CUDA time total: 2.500ms\n";

static const char MS_UNITS[] =
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"  Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg    # of Calls  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"    op       100.00%       1.000ms    150000.08%    1500.000ms     500.000ms       0.000ms         0.00%       0.000ms       0.000ms             3  \n"
	"     k         0.00%       0.000ms         0.00%       0.000ms       0.000ms       2.500ms       100.00%       2.500ms       2.500ms             1  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 1.000ms\n"
	"Self CUDA time total: 2.500ms\n";

static const char S_UNITS[] =
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"  Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg    # of Calls  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"    op       100.00%        0.001s    150000.08%        1.500s        0.500s        0.000s         0.00%        0.000s        0.000s             3  \n"
	"     k         0.00%        0.000s         0.00%        0.000s        0.000s        0.003s       100.00%        0.003s        0.003s             1  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 0.001s\n"
	"Self CUDA time total: 0.003s\n";

static const char US_UNITS[] =
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"  Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg    # of Calls  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"    op       100.00%    1000.000us    150000.08%  1500000.000us  500000.000us       0.000us         0.00%       0.000us       0.000us             3  \n"
	"     k         0.00%       0.000us         0.00%       0.000us       0.000us    2500.000us       100.00%    2500.000us    2500.000us             1  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 1000.000us\n"
	"Self CUDA time total: 2500.000us\n";

static const char NAN_TABLE[] =
	"------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"  Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"     z           NaN       0.000us           NaN       0.000us       0.000us             1  \n"
	"    z2           NaN       0.000us           NaN       0.000us       0.000us             2  \n"
	"------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 0.000us\n";

static const char NPU[] =
	"-----------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"             Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg      Self NPU    Self NPU %     NPU total  NPU time avg    # of Calls  \n"
	"-----------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"    ProfilerStep*        83.33%      10.000us       100.00%      12.000us      12.000us       0.000us         0.00%       3.000us       3.000us             1  \n"
	"               op        16.67%       2.000us        16.67%       2.000us       2.000us       3.000us       100.00%       3.000us       3.000us             1  \n"
	"    ProfilerStep*         0.00%       0.000us         0.00%       0.000us       0.000us       6.000us       200.00%       6.000us       6.000us             1  \n"
	"             kern         0.00%       0.000us         0.00%       0.000us       0.000us       3.000us       100.00%       3.000us       3.000us             1  \n"
	"-----------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
	"Self CPU time total: 12.000us\n"
	"Self NPU time total: 3.000us\n";

static const char STACK[] =
	"-----  ------------  ------------  ------------  ------------  ------------  ------------  ------------------------  ----------------------------------------  \n"
	" Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls              Input Shapes  Source Location                           \n"
	"-----  ------------  ------------  ------------  ------------  ------------  ------------  ------------------------  ----------------------------------------  \n"
	"    a        50.00%       1.000us        50.00%       1.000us       1.000us             1      [[1024], [1024], []]  x.py(1): f                                \n"
	"                                                                                                                     ...that_is_long.py(123): function_name_x  \n"
	"                                                                                                                                                               \n"
	"    b        50.00%       1.000us        50.00%       1.000us       1.000us             1                        []                                            \n"
	"                                                                                                                                                               \n"
	"-----  ------------  ------------  ------------  ------------  ------------  ------------  ------------------------  ----------------------------------------  \n"
	"Self CPU time total: 2.000us\n";

static const char SHAPES_MISSING[] =
	"-------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------------------  \n"
	"         Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg    # of Calls              Input Shapes  \n"
	"-------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------------------  \n"
	"    aten::add       100.00%       3.000us       100.00%       3.000us       3.000us       0.000us         0.00%       0.000us       0.000us             1      [[1024], [1024], []]  \n"
	"         kern         0.00%       0.000us         0.00%       0.000us       0.000us       2.000us       100.00%       2.000us       2.000us             1                        []  \n"
	"-------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------------------  \n"
	"Self CPU time total: 3.000us\n"
	"Self CUDA time total: 2.000us\n";

/* ---- hand-built rows ---- */

struct hb {
	struct ns_trace t;
	struct ns_agg a;
	size_t cap;
};

static void hb_init(struct hb *h, enum ns_backend backend, bool profile_memory)
{
	memset(h, 0, sizeof(*h));
	ns_trace_init(&h->t);
	h->a.trace = &h->t;
	h->a.backend = backend;
	h->a.profile_memory = profile_memory;
	h->cap = 64;
	h->a.avgs = calloc(h->cap, sizeof(*h->a.avgs));
	h->a.fevents = calloc(h->cap, sizeof(*h->a.fevents));
}

static ns_str str(struct hb *h, const char *s)
{
	return ns_strtab_intern(&h->t.strings, s, strlen(s));
}

/* a row whose single event has no parent */
static struct ns_avg *hb_row(struct hb *h, const char *name, int dev, double self_cpu, double cpu, double self_dev,
			     double dev_total, int64_t count)
{
	size_t i = h->a.n_avgs++;
	cr_assert_lt(i, h->cap);
	struct ns_avg *r = &h->a.avgs[i];
	struct ns_fevent *fe = &h->a.fevents[h->a.n_fevents++];
	fe->link = -1;
	fe->name = str(h, name);
	fe->device_type = (uint8_t)dev;
	r->key = fe->name;
	r->device_type = (uint8_t)dev;
	r->first = (int64_t)i;
	r->self_cpu_time_total = self_cpu;
	r->cpu_time_total = cpu;
	r->self_device_time_total = self_dev;
	r->device_time_total = dev_total;
	r->count = count;
	return r;
}

static struct ns_avg *cpu_row(struct hb *h, const char *name, double self_cpu, double cpu, int64_t count)
{
	return hb_row(h, name, NS_DEV_CPU, self_cpu, cpu, 0, 0, count);
}

static void hb_release(struct hb *h)
{
	free(h->a.avgs);
	free(h->a.fevents);
	ns_trace_release(&h->t);
}

static char *render(const struct ns_agg *a, const struct ns_report_opts *o, enum ns_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ns_error err = { 0 };
	cr_assert_eq(ns_report_write(f, a, o, fmt, &err), 0, "%s", err.msg);
	fclose(f);
	return buf;
}

static void expect_table(const struct ns_agg *a, const struct ns_report_opts *o, const char *want)
{
	char *got = render(a, o, NS_FMT_TABLE);
	cr_assert_str_eq(got, want, "\n--- got\n%s--- want\n%s", got, want);
	free(got);
}

static struct ns_report_opts defaults(void)
{
	struct ns_report_opts o;
	ns_report_opts_init(&o);
	return o;
}

Test(table, cpu_only_basic)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, "aten::add", 30.0, 50.0, 2);
	cpu_row(&h, "aten::mul", 20.0, 20.0, 1);
	struct ns_report_opts o = defaults();
	expect_table(&h.a, &o, CPU_BASIC);
	hb_release(&h);
}

Test(table, empty_event_list_prints_nothing)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_CUDA, true);
	struct ns_report_opts o = defaults();
	expect_table(&h.a, &o, "");
	hb_release(&h);
}

Test(table, sort_is_stable_and_descending)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, "A", 5.0, 5.0, 1);
	cpu_row(&h, "B", 7.0, 7.0, 1);
	cpu_row(&h, "C", 5.0, 5.0, 1);
	cpu_row(&h, "D", 7.0, 7.0, 1);
	cpu_row(&h, "E", 0.0, 0.0, 1);
	struct ns_report_opts o = defaults();
	o.sort = ns_sort_key_find("self_cpu_time_total");
	cr_assert_not_null(o.sort);
	expect_table(&h.a, &o, SORT_STABLE);
	hb_release(&h);
}

Test(table, sort_stability_on_many_equal_keys)
{
	/* qsort is not stable: a large run of equal keys catches a comparator
	 * that does not tie-break on the first-seen position */
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	free(h.a.avgs);
	free(h.a.fevents);
	h.cap = 400;
	h.a.avgs = calloc(h.cap, sizeof(*h.a.avgs));
	h.a.fevents = calloc(h.cap, sizeof(*h.a.fevents));
	char name[32];
	for (int i = 0; i < 400; i++) {
		snprintf(name, sizeof(name), "op%03d", i);
		cpu_row(&h, name, (double)(i % 3), 1.0, 1);
	}
	struct ns_report_opts o = defaults();
	o.row_limit = -1;
	o.sort = ns_sort_key_find("self_cpu");
	char *got = render(&h.a, &o, NS_FMT_CSV);
	/* expected: i%3==2 in order, then i%3==1, then i%3==0 */
	char *p = strchr(got, '\n') + 1;
	for (int want_mod = 2; want_mod >= 0; want_mod--)
		for (int i = 0; i < 400; i++) {
			if (i % 3 != want_mod)
				continue;
			snprintf(name, sizeof(name), "op%03d,", i);
			cr_assert(strncmp(p, name, strlen(name)) == 0, "expected %s at: %.20s", name, p);
			p = strchr(p, '\n') + 1;
		}
	free(got);
	hb_release(&h);
}

Test(table, sort_by_key_is_z_to_a_and_stable)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_CUDA, false);
	cpu_row(&h, "b", 1.0, 1.0, 1);
	hb_row(&h, "ProfilerStep*", NS_DEV_CPU, 1.0, 1.0, 0, 0, 1);
	cpu_row(&h, "c", 1.0, 1.0, 1);
	hb_row(&h, "ProfilerStep*", NS_DEV_CUDA, 0, 0, 1.0, 1.0, 7);
	struct ns_report_opts o = defaults();
	o.sort = ns_sort_key_find("key");
	char *got = render(&h.a, &o, NS_FMT_CSV);
	cr_assert(strstr(got, "\r\nc,") < strstr(got, "\r\nb,"));
	cr_assert(strstr(got, "\r\nb,") < strstr(got, "\r\nProfilerStep*,,,,1,"));
	cr_assert(strstr(got, "\r\nProfilerStep*,,,,1,") < strstr(got, "\r\nProfilerStep*,,,,7,"),
		  "equal keys keep first-seen order:\n%s", got);
	free(got);
	hb_release(&h);
}

Test(sort_keys, lookup)
{
	cr_assert_str_eq(ns_sort_key_find("self_cuda_time_total")->name, "self_device_time_total");
	cr_assert_str_eq(ns_sort_key_find("self_privateuse1_time_total")->name, "self_device_time_total");
	cr_assert_str_eq(ns_sort_key_find("self_xpu_time_total")->name, "self_device_time_total");
	cr_assert_str_eq(ns_sort_key_find("self_device_time_total")->name, "self_device_time_total");
	cr_assert_str_eq(ns_sort_key_find("self_neuron")->name, "self_device_time_total");
	cr_assert_str_eq(ns_sort_key_find("cuda_time_total")->name, "device_time_total");
	cr_assert_str_eq(ns_sort_key_find("cuda_time")->name, "device_time");
	cr_assert_str_eq(ns_sort_key_find("cpu_time_total")->name, "cpu_time_total");
	cr_assert_str_eq(ns_sort_key_find("cpu_time")->name, "cpu_time");
	cr_assert_str_eq(ns_sort_key_find("self_cpu_time_total")->name, "self_cpu_time_total");
	cr_assert_str_eq(ns_sort_key_find("cuda_memory_usage")->name, "device_memory_usage");
	cr_assert_str_eq(ns_sort_key_find("self_cuda_memory_usage")->name, "self_device_memory_usage");
	cr_assert_str_eq(ns_sort_key_find("cpu_memory_usage")->name, "cpu_memory_usage");
	cr_assert_str_eq(ns_sort_key_find("count")->name, "count");
	cr_assert_str_eq(ns_sort_key_find("key")->name, "key");
	cr_assert_null(ns_sort_key_find("bogus"));
	cr_assert_null(ns_sort_key_find(""));
	cr_assert_null(ns_sort_key_find("self_cpu_time_totalx"));
}

Test(table, memory_units)
{
	static const int64_t vals[] = { 0, 1023, 1024, -1536, 1048576, 1610612736, -1023, INT64_C(5) * 1024 * 1024 * 1024 };
	struct hb h;
	hb_init(&h, NS_BACKEND_CUDA, true);
	for (int i = 0; i < 8; i++) {
		char name[8];
		snprintf(name, sizeof(name), "m%d", i);
		struct ns_avg *r = cpu_row(&h, name, 1.0, 1.0, 1);
		r->cpu_mem = vals[i];
		r->self_cpu_mem = -vals[i];
		r->device_mem = vals[i];
		r->self_device_mem = i == 0 ? 1 : vals[i];
	}
	struct ns_report_opts o = defaults();
	expect_table(&h.a, &o, MEM_UNITS);
	hb_release(&h);
}

Test(table, device_memory_columns_need_a_positive_self_value)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_CUDA, true);
	struct ns_avg *r = cpu_row(&h, "free", 1.0, 1.0, 1);
	r->device_mem = -4096;
	r->self_device_mem = -4096;
	struct ns_report_opts o = defaults();
	char *got = render(&h.a, &o, NS_FMT_TABLE);
	cr_assert(strstr(got, "CPU Mem") != NULL);
	cr_assert(strstr(got, "CUDA Mem") == NULL, "only frees: no device memory columns\n%s", got);
	free(got);
	hb_release(&h);
}

Test(table, name_truncation_at_52_plus_dots)
{
	char n51[52], n52[53], n53[54];
	memset(n51, 'n', 51);
	n51[51] = 0;
	memset(n52, 'x', 52);
	n52[52] = 0;
	memset(n53, 'y', 53);
	n53[53] = 0;
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, n51, 1.0, 1.0, 1);
	cpu_row(&h, n52, 1.0, 1.0, 1);
	cpu_row(&h, n53, 1.0, 1.0, 1);
	struct ns_report_opts o = defaults();
	expect_table(&h.a, &o, NAMES);
	hb_release(&h);
}

Test(table, name_width_counts_rows_that_are_not_printed)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, "short", 1.0, 1.0, 1);
	cpu_row(&h, "ab", 1.0, 1.0, 1);
	cpu_row(&h, "a_rather_long_name_here", 1.0, 1.0, 1);
	struct ns_report_opts o = defaults();
	o.row_limit = 1;
	expect_table(&h.a, &o, NAME_WIDTH_ALL_ROWS);
	hb_release(&h);
}

Test(table, name_width_counts_code_points)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, "\xc3\xa9t\xc3\xa9", 1.0, 1.0, 1); /* "été": 3 code points, 5 bytes */
	struct ns_report_opts o = defaults();
	char *got = render(&h.a, &o, NS_FMT_TABLE);
	/* name width 3 + 4 = 7 */
	cr_assert(strncmp(got, "-------  ", 9) == 0, "%s", got);
	cr_assert(strstr(got, "\n   Name  ") != NULL, "%s", got);
	cr_assert(strstr(got, "\n    \xc3\xa9t\xc3\xa9  ") != NULL, "%s", got);
	free(got);
	hb_release(&h);
}

Test(table, row_limit_is_checked_before_the_top_level_filter)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, "c1", 1.0, 1.0, 1);
	cpu_row(&h, "c2", 1.0, 1.0, 1);
	cpu_row(&h, "t1", 1.0, 1.0, 1);
	cpu_row(&h, "t2", 1.0, 1.0, 1);
	cpu_row(&h, "t3", 1.0, 1.0, 1);
	h.a.fevents[0].link = 2; /* c1 and c2 have a CPU parent */
	h.a.fevents[1].link = 2;
	struct ns_report_opts o = defaults();
	o.row_limit = 2;
	o.top_level_only = true;
	expect_table(&h.a, &o, TOP_LEVEL_LIMIT);
	o.top_level_only = false;
	o.row_limit = 0;
	expect_table(&h.a, &o, LIMIT_ZERO);
	hb_release(&h);
}

static void units_rows(struct hb *h)
{
	hb_init(h, NS_BACKEND_CUDA, false);
	cpu_row(h, "op", 999.9995, 1500000.0, 3);
	hb_row(h, "k", NS_DEV_CUDA, 0, 0, 2500.0, 2500.0, 1);
}

Test(table, time_formatting_and_time_unit)
{
	struct hb h;
	units_rows(&h);
	struct ns_report_opts o = defaults();
	expect_table(&h.a, &o, AUTO_UNITS);
	o.time_unit = "ms";
	expect_table(&h.a, &o, MS_UNITS);
	o.time_unit = "s";
	expect_table(&h.a, &o, S_UNITS);
	o.time_unit = "us";
	expect_table(&h.a, &o, US_UNITS);
	hb_release(&h);
}

Test(table, negative_times_stay_in_microseconds)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, "neg", -5000.0, 10.0, 1);
	cpu_row(&h, "pos", 5010.0, 5010.0, 1);
	struct ns_report_opts o = defaults();
	char *got = render(&h.a, &o, NS_FMT_TABLE);
	cr_assert(strstr(got, " -5000.000us  ") != NULL, "%s", got);
	cr_assert(strstr(got, "     5.010ms  ") != NULL, "%s", got);
	free(got);
	hb_release(&h);
}

Test(table, nan_share_when_the_total_is_zero)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, "z", 0, 0, 1);
	cpu_row(&h, "z2", 0, 0, 2);
	struct ns_report_opts o = defaults();
	expect_table(&h.a, &o, NAN_TABLE);
	hb_release(&h);
}

Test(table, device_label_and_annotation_excluded_from_the_total)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_PRIVATEUSE1, false);
	struct ns_avg *r = hb_row(&h, "ProfilerStep*", NS_DEV_CPU, 10.0, 12.0, 0, 3.0, 1);
	r->is_user_annotation = true;
	hb_row(&h, "op", NS_DEV_CPU, 2.0, 2.0, 3.0, 3.0, 1);
	r = hb_row(&h, "ProfilerStep*", NS_DEV_PRIVATEUSE1, 0, 0, 6.0, 6.0, 1);
	r->is_user_annotation = true;
	hb_row(&h, "kern", NS_DEV_PRIVATEUSE1, 0, 0, 3.0, 3.0, 1);
	struct ns_report_opts o = defaults();
	o.device_label = "NPU";
	expect_table(&h.a, &o, NPU);
	/* without a label: the backend's, NEURON */
	o.device_label = NULL;
	char *got = render(&h.a, &o, NS_FMT_TABLE);
	cr_assert(strstr(got, "   Self NEURON  Self NEURON %  NEURON total  NEURON time avg  ") != NULL, "%s", got);
	cr_assert(strstr(got, "\nSelf NEURON time total: 3.000us\n") != NULL, "%s", got);
	free(got);
	hb_release(&h);
}

Test(table, async_rows_print_an_integer_zero_share)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	struct ns_avg *r = cpu_row(&h, "async_op", 0, 4.0, 1);
	r->is_async = true;
	cpu_row(&h, "op", 4.0, 4.0, 1);
	struct ns_report_opts o = defaults();
	char *got = render(&h.a, &o, NS_FMT_TABLE);
	cr_assert(strstr(got, "  async_op         0.00%       0.000us             0       4.000us       4.000us             1  \n") !=
			  NULL,
		  "%s", got);
	free(got);
	hb_release(&h);
}

Test(table, stack_and_shapes_columns)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	struct ns_avg *a = cpu_row(&h, "a", 1.0, 1.0, 1);
	a->input_shapes = str(&h, "[[1024], [1024], []]");
	a->stack = str(&h, "x.py(1): f;/very/long/path/to/some/module/file_name_that_is_long.py(123): function_name_x");
	struct ns_avg *b = cpu_row(&h, "b", 1.0, 1.0, 1);
	b->input_shapes = str(&h, "[]");
	struct ns_report_opts o = defaults();
	o.max_src_width = 40;
	expect_table(&h.a, &o, STACK);
	hb_release(&h);
}

Test(table, rows_without_recorded_shapes_print_an_empty_list)
{
	/* PyTorch keeps input_shapes == [] on events without shapes (kernels,
	 * runtime calls), so with group_by_input_shape they print "[]" */
	struct hb h;
	hb_init(&h, NS_BACKEND_CUDA, false);
	struct ns_avg *a = cpu_row(&h, "aten::add", 3.0, 3.0, 1);
	a->input_shapes = str(&h, "[[1024], [1024], []]");
	hb_row(&h, "kern", NS_DEV_CUDA, 0, 0, 2.0, 2.0, 1); /* input_shapes 0: the event had no "Input Dims" */
	struct ns_report_opts o = defaults();
	expect_table(&h.a, &o, SHAPES_MISSING);
	hb_release(&h);
}

Test(table, header_line)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, "aten::add", 30.0, 50.0, 2);
	cpu_row(&h, "aten::mul", 20.0, 20.0, 1);
	struct ns_report_opts o = defaults();
	o.header = "trace.json (rank 3)";
	char *got = render(&h.a, &o, NS_FMT_TABLE);
	char want[4096];
	/* line length: 13 + 6 * 12 + 6 * 2 = 97 */
	snprintf(want, sizeof(want), "%.*s\ntrace.json (rank 3)\n%s", 97,
		 "==================================================================================================================",
		 CPU_BASIC);
	cr_assert_str_eq(got, want);
	free(got);
	hb_release(&h);
}

/* ---- the worked example end to end (spec D1 -> D3) ---- */

static void load_example(struct ns_trace *t, struct ns_agg *a)
{
	const char *root = getenv("NS_SOURCE_ROOT");
	char path[1024];
	struct ns_error warn = { 0 }, err = { 0 };
	snprintf(path, sizeof(path), "%s/tests/oracle/spec_example.json", root ? root : "..");
	ns_trace_init(t);
	cr_assert_eq(ns_ingest_file(path, t, NULL, &warn, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_aggregate(t, NULL, a, &err), 0, "%s", err.msg);
}

Test(example, d3_default_table)
{
	struct ns_trace t;
	struct ns_agg a;
	load_example(&t, &a);
	struct ns_report_opts o = defaults();
	expect_table(&a, &o, D3_DEFAULT);
	ns_agg_release(&a);
	ns_trace_release(&t);
}

Test(example, d3_sorted_by_self_cuda)
{
	struct ns_trace t;
	struct ns_agg a;
	load_example(&t, &a);
	struct ns_report_opts o = defaults();
	o.sort = ns_sort_key_find("self_cuda_time_total");
	o.row_limit = -1;
	char *got = render(&a, &o, NS_FMT_TABLE);
	const char *line = got;
	for (int i = 0; i < 3; i++)
		line = strchr(line, '\n') + 1;
	for (size_t i = 0; i < sizeof(D3_SORTED_PREFIXES) / sizeof(D3_SORTED_PREFIXES[0]); i++) {
		cr_assert(strncmp(line, D3_SORTED_PREFIXES[i], strlen(D3_SORTED_PREFIXES[i])) == 0, "row %zu: %.80s", i,
			  line);
		line = strchr(line, '\n') + 1;
	}
	free(got);
	ns_agg_release(&a);
	ns_trace_release(&t);
}

Test(example, d3_top_level_only)
{
	struct ns_trace t;
	struct ns_agg a;
	load_example(&t, &a);
	struct ns_report_opts o = defaults();
	o.top_level_only = true;
	char *got = render(&a, &o, NS_FMT_TABLE);
	char eq[252];
	memset(eq, '=', 251);
	eq[251] = 0;
	cr_assert(strncmp(got, eq, 251) == 0 && got[251] == '\n', "%.260s", got);
	cr_assert(strncmp(got + 252, "This report only display top-level ops statistics\n", 50) == 0);
	/* rows: CPU ProfilerStep*, GPU ProfilerStep*, the kernel; same footers */
	const char *rows = got + 252 + 50; /* separator, header, separator */
	rows = strchr(rows, '\n') + 1;
	rows = strchr(rows, '\n') + 1;
	rows = strchr(rows, '\n') + 1;
	cr_assert(strncmp(rows, "                                          ProfilerStep*        74.88%  ", 71) == 0, "%.100s", rows);
	rows = strchr(rows, '\n') + 1;
	cr_assert(strncmp(rows, "                                          ProfilerStep*         0.00%  ", 71) == 0, "%.100s", rows);
	rows = strchr(rows, '\n') + 1;
	cr_assert(strncmp(rows, "void at::native::vectorized_elementwise_kernel<4, at...", 55) == 0, "%.100s", rows);
	rows = strchr(rows, '\n') + 1;
	cr_assert(strncmp(rows, "-------", 7) == 0);
	cr_assert(strstr(rows, "\nSelf CPU time total: 200.000us\nSelf CUDA time total: 9.000us\n") != NULL);
	free(got);
	ns_agg_release(&a);
	ns_trace_release(&t);
}

/* ---- machine-readable forms ---- */

static void machine_rows(struct hb *h)
{
	hb_init(h, NS_BACKEND_CUDA, true);
	struct ns_avg *r = hb_row(h, "aten::add", NS_DEV_CPU, 26.725, 50.25, 9.0, 9.0, 2);
	r->cpu_ns = 50250;
	r->self_cpu_ns = 26725;
	r->device_ns = 9000;
	r->self_device_ns = 9000;
	r->device_mem = 4096;
	r->input_shapes = str(h, "[[1024], [1024], []]");
	r = hb_row(h, "name, with \"quotes\"|*_<x>", NS_DEV_CUDA, 0, 0, 4.0, 4.0, 3);
	r->device_ns = 4000;
	r->self_device_ns = 4000;
	r->cpu_mem = -1;
}

Test(formats, csv)
{
	struct hb h;
	machine_rows(&h);
	struct ns_report_opts o = defaults();
	char *got = render(&h.a, &o, NS_FMT_CSV);
	cr_assert_str_eq(got,
			 "name,overload,input_shapes,stack,calls,self_cpu_us,cpu_total_us,cpu_avg_us,self_device_us,"
			 "device_total_us,device_avg_us,cpu_mem_bytes,self_cpu_mem_bytes,device_mem_bytes,self_device_mem_bytes\r\n"
			 "aten::add,,\"[[1024], [1024], []]\",,2,26.725,50.250,25.125,9.000,9.000,4.500,0,0,4096,0\r\n"
			 "\"name, with \"\"quotes\"\"|*_<x>\",,,,3,0.000,0.000,0.000,4.000,4.000,1.333,-1,0,0,0\r\n");
	free(got);
	hb_release(&h);
}

Test(formats, json)
{
	struct hb h;
	machine_rows(&h);
	struct ns_report_opts o = defaults();
	o.row_limit = 1;
	char *got = render(&h.a, &o, NS_FMT_JSON);
	cr_assert_str_eq(got,
			 "{\"device\": \"CUDA\", \"self_cpu_time_total_us\": 26.725, \"self_device_time_total_us\": 4.000, \"rows\": [\n"
			 "  {\"name\": \"aten::add\", \"overload\": \"\", \"input_shapes\": \"[[1024], [1024], []]\", \"stack\": \"\", "
			 "\"calls\": 2, \"self_cpu_us\": 26.725, \"cpu_total_us\": 50.250, \"cpu_avg_us\": 25.125, \"self_device_us\": 9.000, "
			 "\"device_total_us\": 9.000, \"device_avg_us\": 4.500, \"cpu_mem_bytes\": 0, \"self_cpu_mem_bytes\": 0, "
			 "\"device_mem_bytes\": 4096, \"self_device_mem_bytes\": 0}\n"
			 "]}\n");
	free(got);
	o.row_limit = 0;
	got = render(&h.a, &o, NS_FMT_JSON);
	cr_assert(strstr(got, "\"rows\": []}\n") != NULL, "%s", got);
	free(got);
	hb_release(&h);
}

Test(formats, markdown)
{
	struct hb h;
	machine_rows(&h);
	struct ns_report_opts o = defaults();
	char *got = render(&h.a, &o, NS_FMT_MARKDOWN);
	cr_assert_str_eq(got,
			 "| Name | Calls | Self CPU | CPU total | Self CUDA | CUDA total | Self CUDA % |\n"
			 "|:-----|------:|---------:|----------:|-------:|--------:|--------:|\n"
			 "| aten::add | 2 | 26.725us | 50.250us | 9.000us | 9.000us | 225.00% |\n"
			 "| name, with \"quotes\"\\|\\*\\_\\<x\\> | 3 | 0.000us | 0.000us | 4.000us | 4.000us | 100.00% |\n"
			 "\nSelf CPU time total: 26.725us; Self CUDA time total: 4.000us\n");
	free(got);
	hb_release(&h);
}

Test(formats, format_us)
{
	char b[64];
	ns_format_us(b, sizeof(b), 1234567);
	cr_assert_str_eq(b, "1234.567");
	ns_format_us(b, sizeof(b), 0);
	cr_assert_str_eq(b, "0.000");
	ns_format_us(b, sizeof(b), -1);
	cr_assert_str_eq(b, "-0.001");
	ns_format_us(b, sizeof(b), 999);
	cr_assert_str_eq(b, "0.999");
	ns_format_us(b, sizeof(b), INT64_MIN);
	cr_assert_str_eq(b, "-9223372036854775.808");
	ns_format_us(b, sizeof(b), INT64_MAX);
	cr_assert_str_eq(b, "9223372036854775.807");
}

/* escape.c: what each writer does with hostile text. The expected strings
 * are written out by hand from docs/report.md's rules. */
static char *md(const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cr_assert(f);
	ns_md_text(f, s);
	fclose(f);
	return text;
}

Test(escape, controls_become_visible_and_nothing_else_changes)
{
	char *owned;
	const char *same = "aten::add.Tensor \\x1b caf\xc3\xa9 \xe2\x80\xa8";
	cr_expect(ns_visible(same, &owned) == same && owned == NULL, "a name without controls is kept as it is");
	const char *v = ns_visible("a\tb\nc\rd\x1b[31m\x07\x7f\xc2\x9b\xc2\xa0" "e", &owned);
	cr_expect_str_eq(v, "a\\tb\\nc\\rd\\x1b[31m\\x07\\x7f\\x9b\xc2\xa0" "e");
	cr_expect_eq(ns_visible_width("a\tb\xc2\x9b\xc3\xa9"), 1 + 2 + 1 + 4 + 1);
	free(owned);
}

Test(escape, markdown_text_is_inert_in_github_markdown)
{
	struct {
		const char *in, *out;
	} cases[] = {
		{ "aten::add", "aten::add" },
		{ "a|b", "a\\|b" },
		{ "a\n#### 0 regressed", "a\\\\n#### 0 regressed" },
		{ "back\\slash", "back\\\\slash" },
		{ "![x](http://e/p.png)", "\\!\\[x\\](http\\://e/p.png)" },
		{ "<img src=x>", "\\<img src=x\\>" },
		{ "`c` *e* _e_ ~~s~~ $m$ &amp;", "\\`c\\` \\*e\\* \\_e\\_ \\~\\~s\\~\\~ \\$m\\$ \\&amp;" },
		{ "www.e.com WWW.e", "www\\.e.com WWW\\.e" },
		{ "@alice a@b.c", "@\xe2\x80\x8b" "alice a@\xe2\x80\x8b" "b.c" },
		{ "esc\x1b[1m\xc2\x9b", "esc\\\\x1b\\[1m\\\\x9b" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = md(cases[i].in);
		cr_expect_str_eq(got, cases[i].out, "%s", cases[i].in);
		free(got);
	}
}

/* ---- FLOPs (spec A6.8; docs/report.md "FLOPs") ---- */

/* PyTorch's unit comes from the smallest positive row: log10(m) / 3
 * floored (999 -> FLOPs, 1000 -> KFLOPs); cells "%8.3f" of the scaled
 * value, "--" for none. */
Test(fields, flops_header_scale_and_cells)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, "aten::mm", 10, 10, 1)->flops = 2500000;
	cpu_row(&h, "aten::add", 5, 5, 1)->flops = 1000;
	cpu_row(&h, "aten::relu", 5, 5, 1);
	struct ns_report_opts o = defaults();
	char *got = render(&h.a, &o, NS_FMT_TABLE);
	cr_assert(strstr(got, "# of Calls  Total KFLOPs  \n"), "%s", got);
	cr_assert(strstr(got, "           1      2500.000  \n"), "%s", got);
	cr_assert(strstr(got, "           1         1.000  \n"), "%s", got);
	cr_assert(strstr(got, "           1            --  \n"), "%s", got);
	free(got);
	h.a.avgs[1].flops = 999;
	got = render(&h.a, &o, NS_FMT_TABLE);
	cr_assert(strstr(got, "  Total FLOPs  \n") && strstr(got, "   999.000  \n"), "%s", got);
	free(got);
	got = render(&h.a, &o, NS_FMT_CSV);
	cr_assert(strstr(got, ",self_cpu_mem_bytes,flops\r\n") && strstr(got, ",0,2500000\r\n") &&
		  strstr(got, ",0,999\r\n") && strstr(got, ",0,0\r\n"), "%s", got);
	free(got);
	hb_release(&h);
}

Test(fields, no_flops_no_column)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	cpu_row(&h, "aten::mm", 10, 10, 1);
	struct ns_report_opts o = defaults();
	o.shape_flops = true;
	char *got = render(&h.a, &o, NS_FMT_TABLE);
	cr_assert(!strstr(got, "FLOP"), "%s", got);
	free(got);
	got = render(&h.a, &o, NS_FMT_JSON);
	cr_assert(!strstr(got, "flop"), "%s", got);
	free(got);
	hb_release(&h);
}

/* --flops: where the FLOPs came from, and FLOPs / Self CPU time (no
 * device): 2e12 FLOPs in 1 s is 2 TFLOP/s; over Self device time when the
 * table has a device. */
Test(fields, flops_from_and_tflops)
{
	struct hb h;
	hb_init(&h, NS_BACKEND_NONE, false);
	struct ns_avg *mm = cpu_row(&h, "aten::mm", 1e6, 1e6, 1);
	mm->flops = mm->flops_shapes = 2000000000000;
	mm->self_cpu_ns = 1000000000;
	struct ns_avg *add = cpu_row(&h, "aten::add", 5, 5, 1);
	add->flops = 3000;
	add->flops_shapes = 1000;
	add->has_trace_flops = true;
	add->self_cpu_ns = 5000;
	cpu_row(&h, "aten::relu", 5, 5, 1);
	struct ns_report_opts o = defaults();
	o.shape_flops = true;
	char *got = render(&h.a, &o, NS_FMT_TABLE);
	cr_assert(strstr(got, "Total KFLOPs    FLOPs from       TFLOP/s  \n"), "%s", got);
	cr_assert(strstr(got, "2000000000.000        shapes      2.000000  \n"), "%s", got);
	cr_assert(strstr(got, "    3.000  trace+shapes      0.000600  \n"), "%s", got);
	free(got);
	got = render(&h.a, &o, NS_FMT_CSV);
	cr_assert(strstr(got, ",flops,flops_from,tflop_per_s\r\n") && strstr(got, ",2000000000000,shapes,2\r\n") &&
		  strstr(got, ",3000,trace+shapes,0.0006\r\n") && strstr(got, ",0,,\r\n"), "%s", got);
	free(got);
	mm->self_device_time_total = 500000;
	mm->self_device_ns = 500000000;
	h.a.backend = NS_BACKEND_CUDA;
	got = render(&h.a, &o, NS_FMT_TABLE);
	cr_assert(strstr(got, "shapes      4.000000  \n"), "%s", got);
	free(got);
	hb_release(&h);
}

/* ---- ranks (aggregate/ranks.h, report/analyses.h) ---- */

/* 18 ranks: aten::mm on every rank (rank k: 100 + k µs of self device;
 * ranks 16 and 17 tie at the top), aten::add on rank 0 only. */
static void ranks_build(struct hb *h, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		hb_init(&h[k], NS_BACKEND_CUDA, false);
		int64_t ns = (int64_t)(100 + (k < 17 ? k : 16)) * 1000;
		struct ns_avg *r = cpu_row(&h[k], "aten::mm", 1.0, 1.0, 1);
		r->self_device_ns = ns;
		if (k == 0)
			cpu_row(&h[k], "aten::add", 1.0, 1.0, 2)->self_device_ns = 5000;
	}
}

Test(ranks, matched_across_ranks_slowest_first_on_tie_missing_is_zero)
{
	struct hb h[18];
	struct ns_agg aggs[18];
	struct ns_rank_ops r;
	struct ns_error err = { 0 };
	ranks_build(h, 18);
	for (size_t k = 0; k < 18; k++)
		aggs[k] = h[k].a;
	cr_assert_eq(ns_rank_ops_compute(aggs, 18, NS_RANK_SELF_DEVICE, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.n_ops, 2);
	cr_assert_str_eq(ns_strtab_get(&r.strings, r.ops[0].name), "aten::mm");
	cr_expect_eq(r.ops[0].slowest, 16, "ranks 16 and 17 tie: the first");
	cr_expect_eq(r.ops[0].max, 116000);
	cr_expect_eq(r.ops[0].min, 100000);
	cr_expect_float_eq(r.ops[0].median, 108500.0, 1e-9, "even count: the mean of the two middle values");
	cr_expect_eq(r.values[1 * 18 + 0], 5000);
	cr_expect_eq(r.values[1 * 18 + 1], 0, "missing on a rank: 0");
	cr_expect_float_eq(r.ops[1].median, 0.0, 1e-9);

	int64_t ranks[18];
	for (size_t k = 0; k < 18; k++)
		ranks[k] = (int64_t)k;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(ns_report_rank_ops(f, &r, ranks, NS_RANK_SELF_DEVICE, false, -1, NS_FMT_CSV, &err), 0);
	fclose(f);
	cr_expect_str_eq(buf, "name,min_us,median_us,max_us,total_us,slowest_rank,spread\r\n"
			      "aten::mm,100.000,108.500,116.000,1952.000,16,1.06912442\r\n"
			      "aten::add,0.000,0.000,5.000,5.000,0,\r\n",
			 "above 16 ranks: min, median and max; no spread over a median of 0");
	free(buf);
	ns_rank_ops_release(&r);
	for (size_t k = 0; k < 18; k++)
		hb_release(&h[k]);
}
