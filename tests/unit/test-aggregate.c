/* Aggregate (src/aggregate/aggregate.c): PyTorch's FunctionEvent tree and
 * key_averages over small hand-built traces (spec A2-A5, B2, B7). Every
 * trace is era C (baseTimeNanoseconds, 3-decimal µs) with the
 * "PyTorch Profiler (0)" span at ts 0, so start_us == ts, unless a test
 * says otherwise. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregate/aggregate.h"
#include "aggregate/select.h"
#include "aggregate/overlap.h"
#include "aggregate/stragglers.h"
#include "common/trace.h"
#include "common/vec.h"
#include "ingest/ingest.h"

/* one complete event; pid 1 (host) or 0 (device) */
#define X(cat, name, tid, ts, dur, args)                                                                   \
	"{\"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"" name "\", \"pid\": 1, \"tid\": " #tid ", \"ts\": " #ts \
	", \"dur\": " #dur ", \"args\": {" args "}},\n"
#define K(cat, name, tid, ts, dur, args)                                                                   \
	"{\"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"" name "\", \"pid\": 0, \"tid\": " #tid ", \"ts\": " #ts \
	", \"dur\": " #dur ", \"args\": {" args "}},\n"
#define MEM(tid, ts, bytes, devtype)                                                                        \
	"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": " #tid \
	", \"ts\": " #ts ", \"args\": {\"Bytes\": " #bytes ", \"Device Type\": " #devtype ", \"Device Id\": 0}},\n"
#define OOM(tid, ts, bytes)                                                                                 \
	"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[OutOfMemory]\", \"pid\": 1, \"tid\": " #tid \
	", \"ts\": " #ts ", \"args\": {\"Bytes\": " #bytes ", \"Device Type\": 1, \"Device Id\": 0}},\n"
#define FLOW(ph, id, pid, tid, ts)                                                                          \
	"{\"ph\": \"" ph "\", \"id\": " #id ", \"pid\": " #pid ", \"tid\": " #tid ", \"ts\": " #ts                \
	", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"

static char tmpdir[256];

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ns-test-agg-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(tree, .init = setup, .fini = teardown);
TestSuite(dedup, .init = setup, .fini = teardown);
TestSuite(link, .init = setup, .fini = teardown);
TestSuite(events, .init = setup, .fini = teardown);
TestSuite(memory, .init = setup, .fini = teardown);
TestSuite(rows, .init = setup, .fini = teardown);
TestSuite(select, .init = setup, .fini = teardown);
TestSuite(analyses, .init = setup, .fini = teardown);

struct fx {
	struct ns_trace t;
	struct ns_agg a;
};

static int n_files;

static void build_text(struct fx *f, const char *text, const struct ns_agg_opts *opts)
{
	char path[512];
	struct ns_error warn = { 0 }, err = { 0 };
	snprintf(path, sizeof(path), "%s/t%d.json", tmpdir, n_files++);
	FILE *fp = fopen(path, "w");
	cr_assert_not_null(fp);
	fputs(text, fp);
	fclose(fp);
	ns_trace_init(&f->t);
	cr_assert_eq(ns_ingest_file(path, &f->t, NULL, &warn, &err), 0, "ingest: %s\n%s", err.msg, text);
	cr_assert_eq(ns_aggregate(&f->t, opts, &f->a, &err), 0, "aggregate: %s", err.msg);
}

/* An era C trace of these events (malloc'd): the span at 0 and a base time. */
static char *era_c(const char *events, const char *base_time_ns)
{
	size_t n = strlen(events) + 1024;
	char *text = malloc(n);
	cr_assert_not_null(text);
	snprintf(text, n,
		 "{\"schemaVersion\": 1, \"baseTimeNanoseconds\": %s, \"traceEvents\": [\n%s"
		 "{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": \"Spans\", "
		 "\"tid\": \"PyTorch Profiler\", \"ts\": 0.000, \"dur\": 100000.000, \"args\": {\"Op count\": 0}}\n]}\n",
		 base_time_ns, events);
	return text;
}

static void build(struct fx *f, const char *events, const struct ns_agg_opts *opts)
{
	char *text = era_c(events, "1700000000000000000");
	build_text(f, text, opts);
	free(text);
}

static void release(struct fx *f)
{
	ns_agg_release(&f->a);
	ns_trace_release(&f->t);
}

static const char *S(const struct fx *f, ns_str id)
{
	return ns_strtab_get(&f->t.strings, id);
}

/* the n-th (in (start, -end) order) non-removed FunctionEvent with this name */
static int64_t fe(const struct fx *f, const char *name, int nth)
{
	for (size_t i = 0; i < f->a.n_fevents; i++)
		if (!f->a.fevents[i].removed && strcmp(S(f, f->a.fevents[i].name), name) == 0 && nth-- == 0)
			return (int64_t)i;
	return -1;
}

static const struct ns_fevent *FE(const struct fx *f, const char *name, int nth)
{
	int64_t i = fe(f, name, nth);
	cr_assert_geq(i, 0, "no FunctionEvent %s #%d", name, nth);
	return &f->a.fevents[i];
}

/* the key_averages row with this name and device type (NULL if none) */
static const struct ns_avg *row_dev(const struct fx *f, const char *name, int dev)
{
	for (size_t i = 0; i < f->a.n_avgs; i++)
		if (strcmp(S(f, f->a.avgs[i].key), name) == 0 && (dev < 0 || f->a.avgs[i].device_type == dev))
			return &f->a.avgs[i];
	return NULL;
}

static const struct ns_avg *ROW(const struct fx *f, const char *name)
{
	const struct ns_avg *r = row_dev(f, name, -1);
	cr_assert_not_null(r, "no row %s", name);
	return r;
}

static int64_t parent_of(const struct fx *f, const char *name)
{
	return ns_fevent_parent(FE(f, name, 0));
}

/* ---- A3 _populate_cpu_children boundary rules ---- */

Test(tree, start_at_parent_end_is_not_a_child)
{
	struct fx f;
	build(&f, X("cpu_op", "P", 1, 0.000, 10.000, "") X("cpu_op", "C", 1, 10.000, 2.000, ""), NULL);
	cr_assert_eq(parent_of(&f, "C"), -1);
	cr_assert_eq(ROW(&f, "P")->self_cpu_time_total, 10.0);
	cr_assert_eq(ROW(&f, "C")->self_cpu_time_total, 2.0);
	release(&f);
}

Test(tree, end_at_parent_end_is_a_child)
{
	struct fx f;
	build(&f, X("cpu_op", "P", 1, 0.000, 10.000, "") X("cpu_op", "C", 1, 5.000, 5.000, ""), NULL);
	cr_assert_eq(parent_of(&f, "C"), fe(&f, "P", 0));
	cr_assert_eq(ROW(&f, "P")->self_cpu_time_total, 5.0);
	cr_assert_eq(ROW(&f, "P")->cpu_time_total, 10.0);
	cr_assert_eq(parent_of(&f, "P"), -1, "C is at depth 1");
	release(&f);
}

Test(tree, identical_intervals_first_in_order_is_the_parent)
{
	struct fx f;
	build(&f, X("cpu_op", "A", 1, 0.000, 10.000, "") X("cpu_op", "B", 1, 0.000, 10.000, ""), NULL);
	cr_assert_eq(parent_of(&f, "B"), fe(&f, "A", 0));
	cr_assert_eq(ROW(&f, "A")->self_cpu_time_total, 0.0);
	cr_assert_eq(f.a.avgs[0].key, FE(&f, "A", 0)->name, "A is seen first");
	release(&f);
	build(&f, X("cpu_op", "B", 1, 0.000, 10.000, "") X("cpu_op", "A", 1, 0.000, 10.000, ""), NULL);
	cr_assert_eq(parent_of(&f, "A"), fe(&f, "B", 0));
	release(&f);
}

Test(tree, partial_overlap_is_no_relation_and_pops_the_stack)
{
	struct fx f;
	/* C overlaps P partly: no relation, and P leaves the stack, so D (inside
	 * both P and C) becomes C's child, not P's */
	build(&f,
	      X("cpu_op", "P", 1, 0.000, 10.000, "") X("cpu_op", "C", 1, 5.000, 10.000, "")
		      X("cpu_op", "D", 1, 6.000, 2.000, ""),
	      NULL);
	cr_assert_eq(parent_of(&f, "C"), -1);
	cr_assert_eq(parent_of(&f, "D"), fe(&f, "C", 0));
	cr_assert_eq(ROW(&f, "P")->self_cpu_time_total, 10.0);
	cr_assert_eq(ROW(&f, "C")->self_cpu_time_total, 8.0);
	release(&f);
}

Test(tree, threads_are_separate)
{
	struct fx f;
	build(&f, X("cpu_op", "P", 1, 0.000, 10.000, "") X("cpu_op", "C", 2, 2.000, 2.000, ""), NULL);
	cr_assert_eq(parent_of(&f, "C"), -1);
	cr_assert_eq(ROW(&f, "P")->self_cpu_time_total, 10.0);
	release(&f);
}

Test(tree, device_events_have_no_parent)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "P", 1, 0.000, 10.000, "\"External id\": 1")
		      K("kernel", "k", 1, 2.000, 1.000, "\"External id\": 1, \"correlation\": 5"),
	      NULL);
	cr_assert_eq(parent_of(&f, "k"), -1);
	cr_assert_eq(FE(&f, "k", 0)->device_type, NS_DEV_CUDA);
	cr_assert_eq(ROW(&f, "P")->self_device_time_total, 1.0);
	cr_assert_eq(ROW(&f, "k")->cpu_time_total, 0.0);
	cr_assert_eq(ROW(&f, "k")->self_cpu_time_total, 0.0);
	cr_assert_eq(ROW(&f, "k")->self_device_time_total, 1.0);
	release(&f);
}

/* ---- A3 _remove_dup_nodes ---- */

Test(dedup, same_name_only_child_is_merged)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "aten::mul", 1, 0.000, 100.000, "") X("cpu_op", "aten::mul", 1, 10.000, 50.000, "")
		      X("cpu_op", "aten::empty", 1, 20.000, 10.000, ""),
	      NULL);
	const struct ns_avg *mul = ROW(&f, "aten::mul");
	cr_assert_eq(mul->count, 1);
	cr_assert_eq(mul->cpu_time_total, 100.0);
	cr_assert_eq(mul->self_cpu_time_total, 90.0, "the inner call's self time folds into the outer");
	cr_assert_eq(parent_of(&f, "aten::empty"), fe(&f, "aten::mul", 0));
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_start(&f.a, FE(&f, "aten::mul", 0))), 0.0);
	cr_assert_eq(fe(&f, "aten::mul", 1), -1, "the inner call is removed");
	release(&f);
}

Test(dedup, chain_of_three_collapses_to_one)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "a::x", 1, 0.000, 100.000, "") X("cpu_op", "a::x", 1, 10.000, 80.000, "")
		      X("cpu_op", "a::x", 1, 20.000, 60.000, "") X("cpu_op", "a::y", 1, 30.000, 10.000, ""),
	      NULL);
	cr_assert_eq(ROW(&f, "a::x")->count, 1);
	cr_assert_eq(ROW(&f, "a::x")->self_cpu_time_total, 90.0);
	cr_assert_eq(parent_of(&f, "a::y"), fe(&f, "a::x", 0));
	release(&f);
}

Test(dedup, parent_with_two_children_is_not_merged)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "aten::mul", 1, 0.000, 100.000, "") X("cpu_op", "aten::mul", 1, 10.000, 10.000, "")
		      X("cpu_op", "aten::add", 1, 30.000, 10.000, ""),
	      NULL);
	cr_assert_eq(ROW(&f, "aten::mul")->count, 2);
	cr_assert_eq(ROW(&f, "aten::mul")->self_cpu_time_total, 80.0 + 10.0);
	release(&f);
}

Test(dedup, merged_child_replaces_the_parents_kernels)
{
	/* outer (External id 1) owns kernel k_outer (3 µs), inner (2) owns
	 * k_inner (5 µs): after the merge the op row shows only 5 µs */
	struct fx f;
	build(&f,
	      X("cpu_op", "aten::mul", 1, 0.000, 100.000, "\"External id\": 1")
		      X("cpu_op", "aten::mul", 1, 10.000, 50.000, "\"External id\": 2")
			      K("kernel", "k_outer", 7, 200.000, 3.000, "\"External id\": 1")
				      K("kernel", "k_inner", 7, 210.000, 5.000, "\"External id\": 2"),
	      NULL);
	const struct ns_avg *mul = ROW(&f, "aten::mul");
	cr_assert_eq(mul->count, 1);
	cr_assert_eq(mul->device_time_total, 5.0);
	cr_assert_eq(mul->self_device_time_total, 5.0);
	cr_assert_eq(ROW(&f, "k_outer")->self_device_time_total, 3.0);
	cr_assert_eq(ROW(&f, "k_inner")->self_device_time_total, 5.0);
	release(&f);
}

Test(dedup, user_annotation_and_op_of_one_name_also_merge)
{
	/* _remove_dup_nodes compares names only */
	struct fx f;
	build(&f,
	      X("user_annotation", "step", 1, 0.000, 100.000, "") X("cpu_op", "step", 1, 10.000, 50.000, ""), NULL);
	cr_assert_eq(f.a.n_avgs, 1);
	cr_assert_eq(ROW(&f, "step")->count, 1);
	cr_assert(ROW(&f, "step")->is_user_annotation);
	cr_assert_eq(ROW(&f, "step")->self_cpu_time_total, 100.0);
	release(&f);
}

/* ---- A2 step 6 / B7: linking and re-threading ---- */

Test(link, runtime_moves_to_its_ops_thread)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "aten::add", 1, 0.000, 100.000, "\"External id\": 5")
		      X("cuda_runtime", "cudaLaunchKernel", 2, 10.000, 10.000, "\"External id\": 5, \"correlation\": 9")
			      K("kernel", "k", 7, 30.000, 2.000, "\"External id\": 5, \"correlation\": 9"),
	      NULL);
	cr_assert_eq(FE(&f, "cudaLaunchKernel", 0)->thread, FE(&f, "aten::add", 0)->thread);
	cr_assert_eq(parent_of(&f, "cudaLaunchKernel"), fe(&f, "aten::add", 0));
	cr_assert_eq(ROW(&f, "aten::add")->self_cpu_time_total, 90.0);
	cr_assert_eq(ROW(&f, "aten::add")->self_device_time_total, 2.0);
	release(&f);
}

Test(link, unlinked_host_activity_goes_to_the_main_thread)
{
	/* the main thread is tid == pid (1); runtime calls with no op and CUPTI
	 * overhead land there and nest under the op that spans them */
	struct fx f;
	build(&f,
	      X("cpu_op", "aten::add", 1, 0.000, 100.000, "\"External id\": 5")
		      X("cuda_runtime", "cudaDeviceSynchronize", 2, 40.000, 10.000, "\"correlation\": 99")
	      "{\"ph\": \"X\", \"cat\": \"overhead\", \"name\": \"Activity Buffer Request\", \"pid\": -1, \"tid\": 0, "
	      "\"ts\": 60.000, \"dur\": 5.000},\n",
	      NULL);
	cr_assert_eq(FE(&f, "cudaDeviceSynchronize", 0)->thread, FE(&f, "aten::add", 0)->thread);
	cr_assert_eq(FE(&f, "Activity Buffer Request", 0)->thread, FE(&f, "aten::add", 0)->thread);
	cr_assert_eq(parent_of(&f, "Activity Buffer Request"), fe(&f, "aten::add", 0));
	cr_assert_eq(ROW(&f, "aten::add")->self_cpu_time_total, 85.0);
	release(&f);
}

Test(link, external_id_wins_over_correlation_in_era_c)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "A", 1, 0.000, 50.000, "\"External id\": 1")
		      X("cpu_op", "B", 1, 100.000, 50.000, "\"External id\": 2")
			      X("cuda_runtime", "cudaLaunchKernel", 1, 110.000, 5.000,
				"\"External id\": 2, \"correlation\": 9")
				      K("kernel", "k", 7, 200.000, 4.000, "\"External id\": 1, \"correlation\": 9"),
	      NULL);
	cr_assert_eq(ROW(&f, "A")->self_device_time_total, 4.0);
	cr_assert_eq(ROW(&f, "B")->device_time_total, 0.0);
	release(&f);
}

Test(link, correlation_when_there_is_no_external_id)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "A", 1, 0.000, 50.000, "\"External id\": 1")
		      X("cpu_op", "B", 1, 100.000, 50.000, "\"External id\": 2")
			      X("cuda_runtime", "cudaLaunchKernel", 1, 110.000, 5.000,
				"\"External id\": 2, \"correlation\": 9")
				      K("kernel", "k", 7, 200.000, 4.000, "\"correlation\": 9"),
	      NULL);
	cr_assert_eq(ROW(&f, "A")->device_time_total, 0.0);
	cr_assert_eq(ROW(&f, "B")->self_device_time_total, 4.0);
	release(&f);
}

Test(link, correlation_to_a_runtime_without_external_id_uses_the_enclosing_op)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "A", 1, 0.000, 50.000, "\"External id\": 1")
		      X("cpu_op", "B", 1, 100.000, 50.000, "\"External id\": 2")
			      X("cuda_runtime", "cudaLaunchKernel", 1, 110.000, 5.000, "\"correlation\": 9")
				      K("kernel", "k", 7, 200.000, 4.000, "\"correlation\": 9"),
	      NULL);
	cr_assert_eq(ROW(&f, "B")->self_device_time_total, 4.0);
	release(&f);
}

Test(link, ac2g_flow_when_there_is_neither)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "A", 1, 0.000, 50.000, "\"External id\": 1")
		      X("cpu_op", "B", 1, 100.000, 50.000, "\"External id\": 2")
			      X("cuda_runtime", "cudaLaunchKernel", 1, 110.000, 5.000, "\"External id\": 2")
				      FLOW("s", 33, 1, 1, 110.000)
					      K("kernel", "k", 7, 200.000, 4.000, "\"device\": 0") FLOW("f", 33, 0, 7, 200.000),
	      NULL);
	cr_assert_eq(ROW(&f, "A")->device_time_total, 0.0);
	cr_assert_eq(ROW(&f, "B")->self_device_time_total, 4.0);
	release(&f);
}

Test(link, correlation_wins_over_the_flow)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "A", 1, 0.000, 50.000, "\"External id\": 1")
		      X("cuda_runtime", "cudaLaunchKernel", 1, 10.000, 5.000, "\"External id\": 1, \"correlation\": 8")
			      X("cpu_op", "B", 1, 100.000, 50.000, "\"External id\": 2")
				      X("cuda_runtime", "cudaLaunchKernel", 1, 110.000, 5.000, "\"External id\": 2")
					      FLOW("s", 33, 1, 1, 110.000)
						      K("kernel", "k", 7, 200.000, 4.000, "\"correlation\": 8")
							      FLOW("f", 33, 0, 7, 200.000),
	      NULL);
	cr_assert_eq(ROW(&f, "A")->self_device_time_total, 4.0);
	cr_assert_eq(ROW(&f, "B")->device_time_total, 0.0);
	release(&f);
}

Test(link, external_id_of_a_filtered_op_attaches_to_nothing)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "P", 1, 0.000, 50.000, "\"External id\": 1")
		      X("cpu_op", "aten::is_leaf", 1, 10.000, 5.000, "\"External id\": 3")
			      X("cpu_op", "B", 1, 100.000, 50.000, "\"External id\": 2")
				      X("cuda_runtime", "cudaLaunchKernel", 1, 110.000, 5.000,
					"\"External id\": 2, \"correlation\": 9")
					      K("kernel", "k", 7, 200.000, 4.000, "\"External id\": 3, \"correlation\": 9"),
	      NULL);
	cr_assert_eq(ROW(&f, "P")->device_time_total, 0.0);
	cr_assert_eq(ROW(&f, "B")->device_time_total, 0.0);
	cr_assert_eq(ROW(&f, "k")->self_device_time_total, 4.0, "the kernel is still a row");
	cr_assert_null(row_dev(&f, "aten::is_leaf", -1));
	release(&f);
}

Test(link, era_a_ignores_external_id_and_uses_the_enclosing_op)
{
	/* integer µs, no baseTimeNanoseconds: External id is the event's own
	 * correlation id, which here happens to be the External id of another op */
	const char *text =
		"{\"schemaVersion\": 1, \"traceEvents\": [\n"
		X("cpu_op", "aten::add", 1, 1000, 100, "\"External id\": 5")
		X("cuda_runtime", "cudaLaunchKernel", 1, 1010, 10, "\"External id\": 77, \"correlation\": 77")
		K("kernel", "k", 7, 1200, 10, "\"External id\": 77, \"correlation\": 77")
		X("cpu_op", "aten::mul", 1, 2000, 100, "\"External id\": 77")
		"{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": \"Spans\", "
		"\"tid\": \"PyTorch Profiler\", \"ts\": 1000, \"dur\": 5000}\n]}\n";
	struct fx f;
	build_text(&f, text, NULL);
	cr_assert_eq(ROW(&f, "aten::add")->self_device_time_total, 10.0);
	cr_assert_eq(ROW(&f, "aten::mul")->device_time_total, 0.0);
	cr_assert_eq(ROW(&f, "aten::add")->self_cpu_time_total, 90.0);
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_start(&f.a, FE(&f, "aten::add", 0))), 0.0);
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_start(&f.a, FE(&f, "aten::mul", 0))), 1000.0);
	release(&f);
}

/* spec B7's enclosing op (the innermost op on the call's thread whose [ts,
 * ts+dur] holds the call's ts, as the walk of PyTorch's ops with a stack
 * of open ops finds it), era A: B inside A, C from inside B to after A,
 * D starting with its call, E ending with its call. The same answers when
 * a second thread's calls are answered too (its ops first in the trace,
 * so that it is the first thread), and when the ops are out of order in
 * the trace (D written first), which walks the ops sorted rather than in
 * trace order. */
#define ENCLOSED_OPS                                                     \
	X("cpu_op", "A", 1, 1000, 100, "") X("cpu_op", "B", 1, 1010, 40, "") \
	X("cpu_op", "C", 1, 1040, 160, "")
#define OP_D X("cpu_op", "D", 1, 1300, 100, "")
#define OP_E X("cpu_op", "E", 1, 1500, 100, "")
#define ENCLOSED_CALL(tid, ts, corr, kernel_ts, kernel_dur)                                    \
	X("cuda_runtime", "cudaLaunchKernel", tid, ts, 1, "\"correlation\": " #corr)             \
	K("kernel", "k", 7, kernel_ts, kernel_dur, "\"correlation\": " #corr)
#define ENCLOSED_CALLS                                                                    \
	ENCLOSED_CALL(1, 1020, 1, 2000, 1) ENCLOSED_CALL(1, 1045, 2, 2010, 2)                  \
	ENCLOSED_CALL(1, 1050, 3, 2020, 4) ENCLOSED_CALL(1, 1300, 4, 2030, 8)                  \
	ENCLOSED_CALL(1, 1600, 5, 2040, 16)
#define ERA_A(events)                                                                             \
	"{\"schemaVersion\": 1, \"traceEvents\": [\n" events                                        \
	"{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": \"Spans\", " \
	"\"tid\": \"PyTorch Profiler\", \"ts\": 900, \"dur\": 5000}\n]}\n"

Test(link, the_enclosing_op_in_trace_order_and_sorted)
{
	static const char *const traces[] = {
		ERA_A(ENCLOSED_OPS OP_D OP_E ENCLOSED_CALLS),
		ERA_A(X("cpu_op", "F", 2, 950, 10, "") ENCLOSED_OPS OP_D OP_E X("cpu_op", "G", 2, 1100, 200, "")
			      X("cpu_op", "H", 2, 1400, 10, "") ENCLOSED_CALLS ENCLOSED_CALL(2, 1150, 6, 2050, 32)
				      ENCLOSED_CALL(2, 1405, 7, 2060, 64)),
		ERA_A(OP_D ENCLOSED_OPS OP_E ENCLOSED_CALLS),
	};
	for (size_t k = 0; k < NS_ARRAY_SIZE(traces); k++) {
		struct fx f;
		build_text(&f, traces[k], NULL);
		cr_expect_eq(ROW(&f, "A")->self_device_time_total, 0.0, "trace %zu", k);
		cr_expect_eq(ROW(&f, "A")->device_time_total, 1.0, "trace %zu", k);
		cr_expect_eq(ROW(&f, "B")->self_device_time_total, 1.0, "trace %zu", k);
		cr_expect_eq(ROW(&f, "C")->self_device_time_total, 6.0, "trace %zu", k);
		cr_expect_eq(ROW(&f, "D")->self_device_time_total, 8.0, "trace %zu", k);
		cr_expect_eq(ROW(&f, "E")->self_device_time_total, 16.0, "trace %zu", k);
		if (k == 1) {
			cr_expect_eq(ROW(&f, "F")->device_time_total, 0.0);
			cr_expect_eq(ROW(&f, "G")->self_device_time_total, 32.0);
			cr_expect_eq(ROW(&f, "H")->self_device_time_total, 64.0);
		}
		release(&f);
	}
}

/* _parse_kineto_results gives a kernel to every CPU FunctionEvent, not
 * async, whose id is the kernel's linked id (External id): a user
 * annotation's too (docs/report.md, rule 1) */
Test(link, user_annotations_take_the_kernels_of_their_id)
{
	struct fx f;
	build(&f,
	      X("user_annotation", "my_scope", 1, 0.000, 100.000, "\"External id\": 1")
		      X("cuda_runtime", "cudaLaunchKernel", 1, 10.000, 5.000, "\"External id\": 1, \"correlation\": 9")
			      K("kernel", "k", 7, 200.000, 4.000, "\"External id\": 1, \"correlation\": 9"),
	      NULL);
	cr_assert_eq(ROW(&f, "my_scope")->self_device_time_total, 4.0);
	release(&f);
}

Test(link, kernels_are_summed_in_start_order)
{
	/* result.events() is sorted by start (spec A2 steps 6 and 8), so an op's
	 * kernel list is in start order even when the file lists the kernels out
	 * of order; the naive double sum depends on that order */
	struct fx f;
	build(&f,
	      X("cpu_op", "op", 1, 0.000, 100.000, "\"External id\": 1")
		      K("kernel", "k3", 9, 59.222, 3.453, "\"External id\": 1")
			      K("kernel", "k1", 7, 5.159, 4.918, "\"External id\": 1")
				      K("kernel", "k2", 8, 9.182, 4.449, "\"External id\": 1"),
	      NULL);
	double d1 = 10077 / 1000.0 - 5159 / 1000.0, d2 = 13631 / 1000.0 - 9182 / 1000.0,
	       d3 = 62675 / 1000.0 - 59222 / 1000.0;
	double want = 0.0;
	want += d1;
	want += d2;
	want += d3;
	double file_order = ((0.0 + d3) + d1) + d2;
	cr_assert_neq(want, file_order, "test bug: the orders must give different doubles");
	cr_assert_eq(ROW(&f, "op")->device_time_total, want, "got %.17g, want %.17g (file order gives %.17g)",
		     ROW(&f, "op")->device_time_total, want, file_order);
	release(&f);
}

/* ---- A2 steps 1-3: which events, names, times ---- */

Test(events, filtered_names_fold_into_the_parent)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "P", 1, 0.000, 100.000, "") X("cpu_op", "aten::is_leaf", 1, 10.000, 20.000, "")
		      X("cpu_op", "Q", 1, 12.000, 5.000, "")
			      X("cpu_op", "profiler::_record_function_enter_new", 1, 40.000, 5.000, "")
				      X("cpu_op", "profiler::_record_function_enter", 1, 50.000, 1.000, "")
					      X("cpu_op", "profiler::_record_function_exit", 1, 52.000, 1.000, "")
						      X("cpu_op", "aten::output_nr", 1, 54.000, 1.000, "")
							      X("cpu_op", "aten::_version", 1, 56.000, 1.000, ""),
	      NULL);
	cr_assert_eq(f.a.n_avgs, 2, "only P and Q are rows");
	cr_assert_eq(parent_of(&f, "Q"), fe(&f, "P", 0), "Q is re-parented past the filtered op");
	cr_assert_eq(ROW(&f, "P")->self_cpu_time_total, 95.0);
	release(&f);
}

Test(events, unfinished_ops_are_dropped)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "U", 1, 0.000, 100.000, "\"finished\": false") X("cpu_op", "C", 1, 10.000, 10.000, ""),
	      NULL);
	cr_assert_null(row_dev(&f, "U", -1));
	cr_assert_eq(parent_of(&f, "C"), -1);
	cr_assert_eq(f.a.n_avgs, 1);
	release(&f);
}

Test(events, profiler_step_is_renamed_and_split_by_device)
{
	struct fx f;
	build(&f,
	      X("user_annotation", "ProfilerStep#12", 1, 0.000, 100.000, "\"External id\": 1")
		      X("cpu_op", "aten::add", 1, 10.000, 20.000, "\"External id\": 2")
			      K("kernel", "k", 7, 40.000, 4.000, "\"External id\": 2")
				      K("gpu_user_annotation", "ProfilerStep#12", 7, 39.999, 4.002, "\"External id\": 1")
					      X("user_annotation", "ProfilerStep#13", 1, 100.000, 50.000, "\"External id\": 3"),
	      NULL);
	const struct ns_avg *cpu = row_dev(&f, "ProfilerStep*", NS_DEV_CPU);
	const struct ns_avg *gpu = row_dev(&f, "ProfilerStep*", NS_DEV_CUDA);
	cr_assert_not_null(cpu);
	cr_assert_not_null(gpu);
	cr_assert_eq(cpu->count, 2);
	cr_assert(cpu->is_user_annotation && gpu->is_user_annotation);
	cr_assert_eq(cpu->device_time_total, 4.0);
	cr_assert_eq(gpu->self_device_time_total, 4.0, "un-widened: 4.002 - 2 ns");
	cr_assert_eq(f.a.n_avgs, 4);
	cr_assert_str_eq(S(&f, f.a.avgs[0].key), "ProfilerStep*");
	cr_assert_null(row_dev(&f, "ProfilerStep#12", -1));
	release(&f);
}

Test(events, profiler_step_prefix_alone_is_renamed_too)
{
	/* PyTorch's _rewrite_name: name.startswith("ProfilerStep#") */
	struct fx f;
	build(&f, X("user_annotation", "ProfilerStep#", 1, 0.000, 10.000, ""), NULL);
	cr_assert_not_null(row_dev(&f, "ProfilerStep*", -1));
	release(&f);
}

Test(events, gpu_annotation_unwidening_era_c)
{
	struct fx f;
	build(&f,
	      K("kernel", "k", 7, 10.000, 4.000, "") K("gpu_user_annotation", "ann", 7, 9.999, 4.002, "")
		      K("gpu_user_annotation", "lonely", 7, 50.000, 3.000, "")
			      K("gpu_user_annotation", "other_stream", 8, 9.999, 4.002, ""),
	      NULL);
	const struct ns_fevent *ann = FE(&f, "ann", 0);
	cr_assert_eq(ns_fevent_start(&f.a, ann), 10000);
	cr_assert_eq(ns_fevent_end(&f.a, ann), 14000);
	cr_assert_eq(ROW(&f, "ann")->self_device_time_total, 4.0);
	cr_assert_eq(ns_fevent_start(&f.a, FE(&f, "lonely", 0)), 50000, "no device work starts at ts+1ns: kept as written");
	cr_assert_eq(ns_fevent_end(&f.a, FE(&f, "lonely", 0)), 53000);
	cr_assert_eq(ns_fevent_start(&f.a, FE(&f, "other_stream", 0)), 9999, "a kernel on another stream does not count");
	release(&f);
}

Test(events, gpu_annotation_unwidening_era_a)
{
	const char *text =
		"{\"traceEvents\": [\n"
		X("cpu_op", "op", 1, 1000, 100, "")
		K("kernel", "k", 7, 1010, 4, "")
		K("gpu_user_Annotation", "ann", 7, 1009, 5, "")
		"{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": \"Spans\", "
		"\"tid\": \"PyTorch Profiler\", \"ts\": 1000, \"dur\": 5000}\n]}\n";
	struct fx f;
	build_text(&f, text, NULL);
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_start(&f.a, FE(&f, "ann", 0))), 10.0);
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_end(&f.a, FE(&f, "ann", 0))), 14.0);
	cr_assert_eq(ROW(&f, "ann")->self_device_time_total, 4.0);
	release(&f);
}

Test(events, mangled_names_are_demangled)
{
	struct fx f;
	build(&f,
	      K("kernel", "_Z3fooi", 7, 1.000, 1.000, "") K("kernel", "_ZN2at6native6launchEPKci", 7, 3.000, 1.000, "")
		      K("kernel", "_Zgarbage", 7, 5.000, 1.000, "") K("kernel", "_Z", 7, 7.000, 1.000, "")
			      X("cuda_runtime", "cudaLaunchKernel", 1, 0.000, 1.000, ""),
	      NULL);
	cr_assert_not_null(row_dev(&f, "foo(int)", -1));
	cr_assert_not_null(row_dev(&f, "at::native::launch(char const*, int)", -1));
	cr_assert_not_null(row_dev(&f, "_Zgarbage", -1), "not a valid mangling: kept");
	cr_assert_not_null(row_dev(&f, "_Z", -1));
	release(&f);
}

Test(events, times_are_relative_to_the_span_as_doubles)
{
	struct fx f;
	build(&f, X("cpu_op", "a", 1, 1020.500, 30.250, "") X("cpu_op", "b", 1, 0.001, 0.001, ""), NULL);
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_start(&f.a, FE(&f, "a", 0))), 1020500 / 1000.0);
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_end(&f.a, FE(&f, "a", 0))), 1050750 / 1000.0);
	cr_assert_eq(ROW(&f, "a")->cpu_time_total, 1050750 / 1000.0 - 1020500 / 1000.0);
	cr_assert_eq(ns_fevent_cpu_ns(&f.a, FE(&f, "a", 0)), 30250);
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_start(&f.a, FE(&f, "b", 0))), 0.001);
	release(&f);
}

Test(events, no_span_means_the_first_cpu_event_is_t0)
{
	const char *text = "{\"baseTimeNanoseconds\": 1, \"traceEvents\": [\n"
			   X("cpu_op", "b", 1, 1010.500, 1.000, "")
			   K("kernel", "k", 7, 900.000, 1.000, "")
			   X("cpu_op", "a", 1, 1000.000, 1.000, "")
			   X("cpu_op", "c", 1, 1020.000, 1.000, "")
			   "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"m\"}}]}";
	struct fx f;
	build_text(&f, text, NULL);
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_start(&f.a, FE(&f, "a", 0))), 0.0);
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_start(&f.a, FE(&f, "b", 0))), 10.5);
	cr_assert_eq(ns_fevent_us(&f.a, ns_fevent_start(&f.a, FE(&f, "k", 0))), -100.0);
	release(&f);
}

Test(events, event_order_is_start_then_longest_first)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "late", 1, 50.000, 1.000, "") X("cpu_op", "short", 2, 10.000, 1.000, "")
		      X("cpu_op", "long", 3, 10.000, 5.000, "") X("cpu_op", "same1", 4, 20.000, 1.000, "")
			      X("cpu_op", "same2", 5, 20.000, 1.000, ""),
	      NULL);
	const char *want[] = { "long", "short", "same1", "same2", "late" };
	cr_assert_eq(f.a.n_avgs, 5);
	for (int i = 0; i < 5; i++)
		cr_assert_str_eq(S(&f, f.a.avgs[i].key), want[i], "row %d", i);
	release(&f);
}

/* ---- A2 step 7: memory ---- */

Test(memory, inclusive_bounds_and_unused_records)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "op", 1, 10.000, 10.000, "") MEM(1, 10.000, 100, 0) MEM(1, 20.000, 1000, 1)
		      MEM(1, 9.999, 7, 0) MEM(1, 20.001, 9, 0),
	      NULL);
	const struct ns_avg *op = ROW(&f, "op");
	cr_assert_eq(op->cpu_mem, 100);
	cr_assert_eq(op->device_mem, 1000);
	cr_assert_eq(op->self_cpu_mem, 100);
	cr_assert_eq(op->self_device_mem, 1000);
	const struct ns_avg *m = ROW(&f, "[memory]");
	cr_assert_eq(m->count, 2);
	cr_assert_eq(m->cpu_mem, 16);
	cr_assert_eq(m->self_cpu_mem, 16);
	cr_assert_eq(m->device_type, NS_DEV_CPU);
	cr_assert_eq(m->cpu_time_total, 0.0);
	cr_assert(f.a.profile_memory);
	/* the unused records are zero-length rows at their own time */
	cr_assert_eq(ns_fevent_start(&f.a, FE(&f, "[memory]", 0)), 9999);
	cr_assert_eq(ns_fevent_start(&f.a, FE(&f, "[memory]", 1)), 20001);
	cr_assert_str_eq(S(&f, f.a.avgs[0].key), "[memory]", "first seen: the record at 9.999");
	release(&f);
}

Test(memory, nested_ops_each_count_a_record_and_self_subtracts)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "parent", 1, 0.000, 100.000, "") X("cpu_op", "child", 1, 10.000, 10.000, "")
		      MEM(1, 15.000, 64, 0) MEM(1, 30.000, -4096, 1),
	      NULL);
	cr_assert_eq(ROW(&f, "parent")->cpu_mem, 64);
	cr_assert_eq(ROW(&f, "parent")->self_cpu_mem, 0);
	cr_assert_eq(ROW(&f, "parent")->device_mem, -4096);
	cr_assert_eq(ROW(&f, "parent")->self_device_mem, -4096);
	cr_assert_eq(ROW(&f, "child")->cpu_mem, 64);
	cr_assert_eq(ROW(&f, "child")->self_cpu_mem, 64);
	cr_assert_null(row_dev(&f, "[memory]", -1));
	release(&f);
}

Test(memory, any_thread_any_cpu_event)
{
	/* the thread is not checked; runtime calls and annotations count too */
	struct fx f;
	build(&f,
	      X("user_annotation", "scope", 1, 0.000, 100.000, "")
		      X("cuda_runtime", "cudaMalloc", 1, 40.000, 20.000, "") X("cpu_op", "other", 2, 45.000, 1.000, "")
			      MEM(3, 45.500, 2048, 0)
				      K("kernel", "k", 7, 44.000, 3.000, ""),
	      NULL);
	cr_assert_eq(ROW(&f, "scope")->cpu_mem, 2048);
	cr_assert_eq(ROW(&f, "cudaMalloc")->cpu_mem, 2048);
	cr_assert_eq(ROW(&f, "cudaMalloc")->self_cpu_mem, 2048);
	cr_assert_eq(ROW(&f, "scope")->self_cpu_mem, 0);
	cr_assert_eq(ROW(&f, "other")->cpu_mem, 2048);
	cr_assert_eq(ROW(&f, "k")->cpu_mem, 0, "device events get no memory");
	cr_assert_null(row_dev(&f, "[memory]", -1));
	release(&f);
}

Test(memory, device_types)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "op", 1, 0.000, 100.000, "") MEM(1, 1.000, 1, 0) MEM(1, 2.000, 2, 2) MEM(1, 3.000, 4, 5)
		      MEM(1, 4.000, 8, 1) MEM(1, 5.000, 16, 6) MEM(1, 6.000, 32, 20) MEM(1, 7.000, 64, 12)
			      MEM(1, 8.000, 128, 13),
	      NULL);
	cr_assert_eq(ROW(&f, "op")->cpu_mem, 1 + 2 + 4);
	cr_assert_eq(ROW(&f, "op")->device_mem, 8 + 16 + 32 + 64, "CUDA, HIP, PrivateUse1, XPU");
	release(&f);
}

Test(memory, out_of_memory_is_always_a_row)
{
	struct fx f;
	build(&f, X("cpu_op", "op", 1, 0.000, 100.000, "") OOM(1, 50.000, 1073741824), NULL);
	cr_assert_eq(ROW(&f, "op")->device_mem, 0, "OOM records are not assigned");
	const struct ns_avg *oom = ROW(&f, "[OutOfMemory]");
	cr_assert_eq(oom->count, 1);
	cr_assert_eq(oom->device_mem, 1073741824);
	cr_assert_eq(parent_of(&f, "[OutOfMemory]"), fe(&f, "op", 0), "a zero-length CPU event inside op");
	cr_assert_eq(ROW(&f, "op")->self_device_mem, -1073741824);
	release(&f);
}

/* Unused [memory] records and OOM records become FunctionEvents in the
 * order of the one list of records, the file's (key-averages-spec A2 step 7
 * and its pseudocode: mem.append in file order), so at one time the stable
 * (start, -end) sort keeps the file's order of the two kinds. */
Test(memory, unused_records_and_ooms_keep_the_trace_order)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "op", 1, 0.000, 1.000, "") OOM(1, 5.000, 8) MEM(1, 5.000, 16, 1) OOM(1, 5.000, 32)
		      MEM(1, 5.000, 64, 1),
	      NULL);
	cr_assert_lt(fe(&f, "[OutOfMemory]", 0), fe(&f, "[memory]", 0));
	cr_assert_lt(fe(&f, "[memory]", 0), fe(&f, "[OutOfMemory]", 1));
	cr_assert_lt(fe(&f, "[OutOfMemory]", 1), fe(&f, "[memory]", 1));
	cr_assert_str_eq(S(&f, f.a.avgs[1].key), "[OutOfMemory]", "first seen after op: the OOM at 5.000");
	release(&f);
}

/* ---- A4/A5 rows ---- */

Test(rows, worked_example_part_d)
{
	/* spec D2: every averaged number of the worked example */
	const char *ev =
		X("user_annotation", "ProfilerStep#1", 4242, 1010.000, 200.000, "\"External id\": 1")
		X("cpu_op", "aten::add", 4242, 1020.500, 30.250, "\"External id\": 2")
		X("cpu_op", "aten::empty", 4242, 1022.000, 3.125, "\"External id\": 3")
		"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 4242, "
		"\"ts\": 1023.000, \"args\": {\"Bytes\": 4096, \"Device Type\": 1}},\n"
		X("cpu_op", "aten::add", 4242, 1100.000, 20.000, "\"External id\": 4")
		"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 4242, "
		"\"ts\": 1150.000, \"args\": {\"Bytes\": -4096, \"Device Type\": 1}},\n"
		X("cuda_runtime", "cudaLaunchKernel", 4242, 1030.000, 12.400, "\"External id\": 2, \"correlation\": 101")
		K("kernel", "kern", 7, 1045.000, 4.321, "\"External id\": 2, \"correlation\": 101")
		X("cuda_runtime", "cudaLaunchKernel", 4242, 1105.000, 8.000, "\"External id\": 4, \"correlation\": 102")
		K("kernel", "kern", 7, 1115.000, 4.679, "\"External id\": 4, \"correlation\": 102")
		K("gpu_user_annotation", "ProfilerStep#1", 7, 1044.999, 74.681, "\"External id\": 1");
	char *text = malloc(strlen(ev) + 512);
	sprintf(text,
		"{\"baseTimeNanoseconds\": 1730000000000000000, \"traceEvents\": [\n%s"
		"{\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 1000.000, \"dur\": 300.000, \"pid\": \"Spans\", "
		"\"tid\": \"PyTorch Profiler\", \"name\": \"PyTorch Profiler (0)\"}]}",
		ev);
	struct fx f;
	build_text(&f, text, NULL);
	free(text);
	cr_assert_eq(f.a.backend, NS_BACKEND_CUDA);
	cr_assert_eq(f.a.n_avgs, 6);
	const struct ns_avg *ps = row_dev(&f, "ProfilerStep*", NS_DEV_CPU);
	cr_assert_eq(ps->self_cpu_time_total, 200.0 - 30.25 - 20.0);
	cr_assert_eq(ps->cpu_time_total, 200.0);
	cr_assert_eq(ps->device_time_total, 9.0);
	cr_assert_eq(ps->self_device_time_total, 0.0);
	cr_assert_eq(ps->device_mem, 0);
	cr_assert_eq(ps->self_device_mem, -4096);
	const struct ns_avg *add = ROW(&f, "aten::add");
	cr_assert_eq(add->count, 2);
	cr_assert_eq(add->cpu_time_total, 50.25);
	cr_assert_eq(add->device_time_total, 9.0);
	cr_assert_eq(add->self_device_time_total, 9.0);
	cr_assert_eq(add->device_mem, 4096);
	cr_assert_eq(add->self_device_mem, 0);
	/* as Python: self = total - sum(children) per event, then += per row */
	double add1 = (50750 / 1000.0 - 20500 / 1000.0) - ((25125 / 1000.0 - 22000 / 1000.0) + (42400 / 1000.0 - 30000 / 1000.0));
	double add2 = (120000 / 1000.0 - 100000 / 1000.0) - (113000 / 1000.0 - 105000 / 1000.0);
	cr_assert_eq(add->self_cpu_time_total, (0.0 + add1) + add2);
	cr_assert_float_eq(add->self_cpu_time_total, 26.725, 1e-9);
	const struct ns_avg *empty = ROW(&f, "aten::empty");
	cr_assert_eq(empty->self_device_mem, 4096);
	cr_assert_eq(ROW(&f, "cudaLaunchKernel")->count, 2);
	cr_assert_float_eq(ROW(&f, "cudaLaunchKernel")->cpu_time_total, 20.4, 1e-9);
	const struct ns_avg *gps = row_dev(&f, "ProfilerStep*", NS_DEV_CUDA);
	cr_assert_float_eq(gps->self_device_time_total, 74.679, 1e-9);
	cr_assert_eq(ROW(&f, "kern")->count, 2);
	/* first-seen order (D2) */
	const char *order[] = { "ProfilerStep*", "aten::add", "aten::empty", "cudaLaunchKernel", "ProfilerStep*", "kern" };
	for (int i = 0; i < 6; i++)
		cr_assert_str_eq(S(&f, f.a.avgs[i].key), order[i]);
	cr_assert_eq(f.a.avgs[0].device_type, NS_DEV_CPU);
	cr_assert_eq(f.a.avgs[4].device_type, NS_DEV_CUDA);
	/* in two steps (as ingest does it): no rows after the first, then the same rows */
	struct ns_agg two;
	struct ns_error err = { 0 };
	cr_assert_eq(ns_aggregate_fevents(&f.t, NULL, &two, &err), 0, "%s", err.msg);
	cr_assert_eq(two.n_fevents, f.a.n_fevents);
	cr_assert_eq(two.n_avgs, 0);
	cr_assert_eq(ns_aggregate_rows(&two, &err), 0, "%s", err.msg);
	cr_assert_eq(two.n_avgs, f.a.n_avgs);
	for (size_t i = 0; i < two.n_avgs; i++) {
		const struct ns_avg *x = &two.avgs[i], *y = &f.a.avgs[i];
		cr_assert(x->key == y->key && x->device_type == y->device_type && x->count == y->count &&
				  x->cpu_ns == y->cpu_ns && x->self_cpu_ns == y->self_cpu_ns && x->device_ns == y->device_ns &&
				  x->self_device_ns == y->self_device_ns && x->self_cpu_time_total == y->self_cpu_time_total &&
				  x->device_mem == y->device_mem && x->self_device_mem == y->self_device_mem,
			  "row %zu", i);
	}
	ns_agg_release(&two);
	release(&f);
}

Test(rows, op_and_annotation_of_one_name_are_two_rows)
{
	struct fx f;
	build(&f, X("cpu_op", "foo", 1, 0.000, 10.000, "") X("user_annotation", "foo", 1, 20.000, 10.000, ""), NULL);
	cr_assert_eq(f.a.n_avgs, 2);
	cr_assert(!f.a.avgs[0].is_user_annotation);
	cr_assert(f.a.avgs[1].is_user_annotation);
	release(&f);
}

Test(rows, group_by_input_shape)
{
	struct fx f;
	struct ns_agg_opts o = { .group_by = NS_GROUP_SHAPE, .backend_override = -1 };
	build(&f,
	      X("cpu_op", "aten::add", 1, 0.000, 1.000, "\"Input Dims\": [[1024], [1024], []]")
		      X("cpu_op", "aten::add", 1, 2.000, 1.000, "\"Input Dims\": [[8], [8], []]")
			      X("cpu_op", "aten::add", 1, 4.000, 1.000, "\"Input Dims\": [[1024],[1024],[]]")
				      X("cpu_op", "aten::cat", 1, 6.000, 1.000, "\"Input Dims\": [[[64, 32], [64, 32]], []]")
					      X("cpu_op", "aten::zero", 1, 8.000, 1.000, ""),
	      &o);
	cr_assert_eq(f.a.n_avgs, 4);
	cr_assert_str_eq(S(&f, f.a.avgs[0].input_shapes), "[[1024], [1024], []]");
	cr_assert_eq(f.a.avgs[0].count, 2);
	cr_assert_str_eq(S(&f, f.a.avgs[1].input_shapes), "[[8], [8], []]");
	cr_assert_eq(f.a.avgs[1].count, 1);
	cr_assert_str_eq(S(&f, f.a.avgs[2].input_shapes), "[[], []]", "a TensorList input is []");
	cr_assert_str_eq(S(&f, f.a.avgs[3].input_shapes), "[]", "no Input Dims is str([])");
	release(&f);
	/* without the option the shapes are not part of the key */
	build(&f,
	      X("cpu_op", "aten::add", 1, 0.000, 1.000, "\"Input Dims\": [[1024], [1024], []]")
		      X("cpu_op", "aten::add", 1, 2.000, 1.000, "\"Input Dims\": [[8], [8], []]"),
	      NULL);
	cr_assert_eq(f.a.n_avgs, 1);
	cr_assert_eq(f.a.avgs[0].input_shapes, 0);
	release(&f);
}

Test(rows, group_by_overload)
{
	struct fx f;
	struct ns_agg_opts o = { .group_by = NS_GROUP_OVERLOAD, .split_overloads = true, .backend_override = -1 };
	build(&f,
	      X("cpu_op", "aten::add.Tensor", 1, 0.000, 1.000, "") X("cpu_op", "aten::add.out", 1, 2.000, 1.000, "")
		      X("cpu_op", "aten::add.Tensor", 1, 4.000, 1.000, ""),
	      &o);
	cr_assert_eq(f.a.n_avgs, 2);
	cr_assert_str_eq(S(&f, f.a.avgs[0].key), "aten::add");
	cr_assert_str_eq(S(&f, f.a.avgs[0].overload), "Tensor");
	cr_assert_eq(f.a.avgs[0].count, 2);
	cr_assert_str_eq(S(&f, f.a.avgs[1].overload), "out");
	release(&f);
}

Test(rows, group_by_stack_drops_profiler_frames)
{
	/* _filter_stack_entry drops autograd/__init__ ... backward frames before
	 * the first N are taken (spec A3 _set_backward_stacktraces, A5) */
	struct fx f;
	struct ns_agg_opts o = { .stack_n = 2, .backend_override = -1 };
	const char *ev =
		X("cpu_op", "op", 1, 0.000, 1.000,
		  "\"Call stack\": \"a.py(1): f;/x/torch/autograd/__init__.py(9): backward;b.py(3): g;c.py(4): h\"")
		X("cpu_op", "op", 1, 2.000, 1.000, "\"Call stack\": \"a.py(1): f;b.py(3): g;d.py(5): k\"")
		X("cpu_op", "op", 1, 4.000, 1.000, "\"Call stack\": \"e.py(1): f;b.py(3): g\"")
		X("cpu_op", "nostack", 1, 6.000, 1.000, "");
	build(&f, ev, &o);
	cr_assert_eq(f.a.n_avgs, 3);
	cr_assert_str_eq(S(&f, f.a.avgs[0].stack), "a.py(1): f;b.py(3): g");
	cr_assert_eq(f.a.avgs[0].count, 2);
	cr_assert_str_eq(S(&f, f.a.avgs[1].stack), "e.py(1): f;b.py(3): g");
	cr_assert_eq(f.a.avgs[2].stack, 0);
	release(&f);
	o.stack_n = 3;
	build(&f, ev, &o);
	cr_assert_eq(f.a.n_avgs, 4, "the third kept frame tells the first two apart");
	cr_assert_str_eq(S(&f, f.a.avgs[0].stack), "a.py(1): f;b.py(3): g;c.py(4): h");
	release(&f);
}

Test(rows, first_event_fixes_the_top_level_parent)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "outer", 1, 0.000, 10.000, "") X("cpu_op", "x", 1, 2.000, 1.000, "")
		      X("cpu_op", "x", 1, 20.000, 1.000, ""),
	      NULL);
	const struct ns_avg *x = ROW(&f, "x");
	cr_assert_eq(x->count, 2);
	cr_assert_geq(ns_fevent_parent(&f.a.fevents[x->first]), 0, "the first x has a parent, so the row is not top level");
	release(&f);
}

/* With two threads the rows are made by name halves and merged: still in
 * first-seen order (spec A5), each row summing its own events in order. */
Test(rows, two_threads_keep_the_first_seen_order)
{
	static const char *const order[] = { "n5", "n1", "n9", "n3", "n0", "n7", "n2", "n8", "n4", "n6", "n11", "n10" };
	char events[4096];
	size_t len = 0;
	for (size_t round = 0; round < 3; round++) /* each name three times, in this order; k's lasts (k + 1) x 100 ns */
		for (size_t k = 0; k < NS_ARRAY_SIZE(order); k++)
			len += (size_t)snprintf(events + len, sizeof(events) - len,
						"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1, "
						"\"tid\": 1, \"ts\": %zu.000, \"dur\": %zu.%03zu, \"args\": {}},\n",
						order[k], 10 * (round * NS_ARRAY_SIZE(order) + k), (k + 1) / 10, (k + 1) % 10 * 100);
	struct ns_agg_opts opts = { .backend_override = -1, .threads = 2 };
	struct fx f;
	build(&f, events, &opts);
	cr_assert_eq(f.a.n_avgs, NS_ARRAY_SIZE(order));
	for (size_t k = 0; k < NS_ARRAY_SIZE(order); k++) {
		const struct ns_avg *r = &f.a.avgs[k];
		cr_expect_str_eq(S(&f, r->key), order[k], "row %zu", k);
		cr_expect_eq(r->count, 3);
		cr_expect_eq(r->cpu_ns, 3 * 100 * (int64_t)(k + 1), "row %zu", k);
	}
	for (size_t i = 0; i < f.a.n_fevents; i++)
		cr_expect_eq(f.a.avgs[f.a.fevents[i].avg].key, f.a.fevents[i].name, "fevent %zu's row", i);
	release(&f);
}

Test(rows, backends_and_device_types)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "op", 1, 0.000, 10.000, "\"External id\": 1")
		      X("privateuse1_runtime", "nrta_execute_schedule", 1, 1.000, 1.000,
			"\"External id\": 1, \"correlation\": 5")
			      K("kernel", "neuron_graph::mul", 1, 3.000, 2.000, "\"External id\": 1, \"correlation\": 5"),
	      NULL);
	cr_assert_eq(f.a.backend, NS_BACKEND_PRIVATEUSE1);
	cr_assert_str_eq(ns_backend_label(f.a.backend), "NEURON");
	cr_assert_eq(ROW(&f, "neuron_graph::mul")->device_type, NS_DEV_PRIVATEUSE1);
	cr_assert_eq(ROW(&f, "op")->self_device_time_total, 2.0);
	release(&f);

	build(&f, X("cpu_op", "op", 1, 0.000, 10.000, "") X("mtia_runtime", "rt", 1, 1.000, 1.000, "")
			  K("mtia_ccp_events", "mk", 1, 3.000, 2.000, ""),
	      NULL);
	cr_assert_eq(f.a.backend, NS_BACKEND_MTIA);
	cr_assert_eq(ROW(&f, "mk")->device_type, NS_DEV_MTIA);
	cr_assert_eq(ROW(&f, "mk")->self_device_time_total, 2.0);
	release(&f);

	/* CPU only: no use_device, so no device time at all */
	build(&f, X("cpu_op", "op", 1, 0.000, 10.000, "") K("gpu_user_annotation", "ann", 7, 1.000, 2.000, ""), NULL);
	cr_assert_eq(f.a.backend, NS_BACKEND_NONE);
	cr_assert_eq(ROW(&f, "ann")->self_device_time_total, 0.0);
	release(&f);

	struct ns_agg_opts o = { .backend_override = NS_BACKEND_PRIVATEUSE1 };
	build(&f, X("cpu_op", "op", 1, 0.000, 10.000, "") K("kernel", "k", 7, 1.000, 2.000, ""), &o);
	cr_assert_eq(f.a.backend, NS_BACKEND_PRIVATEUSE1);
	cr_assert_eq(ROW(&f, "k")->device_type, NS_DEV_PRIVATEUSE1);
	release(&f);
}

Test(rows, exact_ns_twins)
{
	struct fx f;
	build(&f,
	      X("cpu_op", "p", 1, 0.001, 10.002, "\"External id\": 1") X("cpu_op", "c", 1, 1.000, 2.500, "")
		      K("kernel", "k", 7, 5.000, 0.333, "\"External id\": 1"),
	      NULL);
	const struct ns_avg *p = ROW(&f, "p");
	cr_assert_eq(p->cpu_ns, 10002);
	cr_assert_eq(p->self_cpu_ns, 7502);
	cr_assert_eq(p->device_ns, 333);
	cr_assert_eq(p->self_device_ns, 333);
	release(&f);
}

/* Ingests two trace texts and merges them into *out: ns_trace_merge's status. */
static int merge_texts(const char *const texts[2], struct ns_trace *out, struct ns_error *err)
{
	struct ns_trace in[2];
	struct ns_error warn = { 0 };
	for (int k = 0; k < 2; k++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/rank%d.json", tmpdir, k);
		FILE *fp = fopen(path, "w");
		cr_assert_not_null(fp);
		fputs(texts[k], fp);
		fclose(fp);
		ns_trace_init(&in[k]);
		cr_assert_eq(ns_ingest_file(path, &in[k], NULL, &warn, err), 0, "%s", err->msg);
	}
	int rc = ns_trace_merge(in, 2, out, err);
	ns_trace_release(&in[0]);
	ns_trace_release(&in[1]);
	return rc;
}

Test(rows, merged_ranks_are_aligned_on_base_time)
{
	struct ns_trace out;
	struct ns_error err = { 0 };
	const char *const texts[2] = {
		"{\"baseTimeNanoseconds\": 1000000000, \"distributedInfo\": {\"rank\": 0}, \"traceEvents\": ["
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": 1.000, \"dur\": 2.000}]}",
		"{\"baseTimeNanoseconds\": 1000005000, \"distributedInfo\": {\"rank\": 1}, \"traceEvents\": ["
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": 1.000, \"dur\": 3.000}]}",
	};
	cr_assert_eq(merge_texts(texts, &out, &err), 0, "%s", err.msg);
	cr_assert_eq(out.n_events, 2);
	cr_assert_eq(out.events[0].ts_ns, 1000);
	cr_assert_eq(out.events[1].ts_ns, 6000, "rank 1 starts 5 µs later");
	cr_assert_neq(out.events[0].thread, out.events[1].thread, "same pid/tid in two files are two threads");
	struct ns_agg a;
	cr_assert_eq(ns_aggregate(&out, NULL, &a, &err), 0);
	cr_assert_eq(a.n_avgs, 1);
	cr_assert_eq(a.avgs[0].count, 2);
	cr_assert_eq(a.avgs[0].cpu_time_total, 5.0);
	ns_agg_release(&a);
	ns_trace_release(&out);
}

/* Ids are per process and may be any 64-bit value: file 1's 5 must not
 * meet file 0's 2^40 + 5 (merges used to add 2^40 per file), and
 * INT64_MAX must not overflow (the fuzz smoke found that). */
Test(rows, merged_ranks_link_only_their_own_ids)
{
#define EXT(id) "\"External id\": " #id
	struct fx f;
	struct ns_error err = { 0 };
	char *texts[2] = {
		era_c(X("cpu_op", "op0", 1, 1.000, 10.000, EXT(1099511627781))
			      K("kernel", "k", 7, 2.000, 1.000, EXT(1099511627781)), "1000000000"),
		era_c(X("cpu_op", "op1", 1, 1.000, 10.000, EXT(5)) K("kernel", "k", 7, 2.000, 3.000, EXT(5))
			      X("cpu_op", "op2", 1, 20.000, 10.000, EXT(9223372036854775807))
				      K("kernel", "k", 7, 21.000, 2.000, EXT(9223372036854775807)), "1000000000"),
	};
#undef EXT
	cr_assert_eq(merge_texts((const char *const *)texts, &f.t, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_aggregate(&f.t, NULL, &f.a, &err), 0, "%s", err.msg);
	cr_assert_eq(ROW(&f, "op0")->device_ns, 1000, "file 0's kernel only");
	cr_assert_eq(ROW(&f, "op1")->device_ns, 3000);
	cr_assert_eq(ROW(&f, "op2")->device_ns, 2000);
	release(&f);
	free(texts[0]);
	free(texts[1]);
}

Test(rows, merge_refuses_base_times_too_far_apart)
{
	struct ns_trace out;
	struct ns_error err = { 0 };
	char *texts[2] = {
		era_c(X("cpu_op", "op", 1, 1.000, 2.000, ""), "0"),
		/* 4.5e18 + 2e17 ns is past 2^62 */
		era_c(X("cpu_op", "op", 1, 200000000000000.000, 2.000, ""), "4500000000000000000"),
	};
	int rc = merge_texts((const char *const *)texts, &out, &err);
	cr_assert_eq(rc, NS_ERR_INPUT, "rc %d: %s", rc, err.msg);
	char want[512];
	snprintf(want, sizeof(want),
		 "%s/rank1.json: cannot be merged with the other traces: its baseTimeNanoseconds (4500000000000000000) "
		 "is too far from the earliest (0); merged times must stay within +-2^62 ns",
		 tmpdir);
	cr_assert_str_eq(err.msg, want);
	ns_trace_release(&out);
	free(texts[0]);
	free(texts[1]);
}

/* ---- --steps, --category (aggregate/select.h) ---- */

/* Two steps on thread 1: #1 [0, 100) us, #2 [100, 200); an op and a launch
 * in each; step 1's kernel runs after step 1 ended; an op on thread 2
 * starts exactly where step 1 ends; a memcpy with no launch at 50. */
#define TWO_STEPS                                                                                          \
	X("user_annotation", "ProfilerStep#1", 1, 0, 100, "\"External id\": 1")                            \
	X("cpu_op", "aten::a", 1, 10, 20, "\"External id\": 2")                                            \
	X("cuda_runtime", "cudaLaunchKernel", 1, 15, 5, "\"External id\": 2, \"correlation\": 7")           \
	X("user_annotation", "ProfilerStep#2", 1, 100, 100, "\"External id\": 3")                          \
	X("cpu_op", "aten::b", 1, 120, 20, "\"External id\": 4")                                           \
	X("cuda_runtime", "cudaLaunchKernel", 1, 125, 5, "\"External id\": 4, \"correlation\": 8")          \
	X("cpu_op", "aten::edge", 2, 100, 5, "\"External id\": 5")                                         \
	K("kernel", "k_of_a", 7, 150, 10, "\"External id\": 2, \"correlation\": 7")                          \
	K("kernel", "k_of_b", 7, 165, 10, "\"External id\": 4, \"correlation\": 8")                          \
	K("gpu_memcpy", "copy_alone", 7, 50, 3, "")

static void ingest_selected(struct fx *f, const char *events, const struct ns_select *sel, struct ns_error *err,
			    int want_rc)
{
	char path[512], *text = era_c(events, "1700000000000000000");
	struct ns_error warn = { 0 };
	snprintf(path, sizeof(path), "%s/t%d.json", tmpdir, n_files++);
	FILE *fp = fopen(path, "w");
	cr_assert_not_null(fp);
	fputs(text, fp);
	fclose(fp);
	free(text);
	ns_trace_init(&f->t);
	cr_assert_eq(ns_ingest_file(path, &f->t, NULL, &warn, err), 0, "ingest: %s", err->msg);
	cr_assert_eq(ns_trace_select(&f->t, sel, err), want_rc, "select: %s", err->msg);
}

static bool has_event(const struct fx *f, const char *name)
{
	for (size_t i = 0; i < f->t.n_events; i++)
		if (strcmp(S(f, f->t.events[i].name), name) == 0)
			return true;
	return false;
}

Test(select, steps_keep_host_events_by_start_and_device_work_by_its_launch)
{
	struct fx f;
	struct ns_error err = { 0 };
	struct ns_select sel = { 0 };
	cr_assert_eq(ns_select_parse_steps("1..1", &sel, &err), 0);
	ingest_selected(&f, TWO_STEPS, &sel, &err, 0);
	cr_assert(has_event(&f, "ProfilerStep#1") && has_event(&f, "aten::a") && has_event(&f, "cudaLaunchKernel"));
	cr_assert(has_event(&f, "k_of_a"), "launched in step 1, though it runs after it");
	cr_assert(has_event(&f, "copy_alone"), "no launch: by its own start");
	cr_assert(!has_event(&f, "ProfilerStep#2") && !has_event(&f, "aten::b") && !has_event(&f, "k_of_b"));
	cr_assert(!has_event(&f, "aten::edge"), "[ts, ts + dur): the end belongs to the next step");
	cr_assert_eq(ns_aggregate(&f.t, &(struct ns_agg_opts){ .backend_override = -1 }, &f.a, &err), 0);
	cr_assert_eq(f.a.fevents[fe(&f, "k_of_a", 0)].link, (int32_t)fe(&f, "aten::a", 0), "still linked to its op");
	release(&f);
}

Test(select, steps_range_with_no_step_is_a_usage_error_naming_the_steps)
{
	struct fx f;
	struct ns_error err = { 0 };
	struct ns_select sel = { 0 };
	cr_assert_eq(ns_select_parse_steps("5..9", &sel, &err), 0);
	ingest_selected(&f, TWO_STEPS, &sel, &err, NS_ERR_USAGE);
	cr_assert(strstr(err.msg, "--steps 5..9: no such step") && strstr(err.msg, "(its steps: 1..2)"), "%s", err.msg);
	ns_trace_release(&f.t);
}

Test(select, steps_syntax)
{
	struct ns_error err = { 0 };
	struct ns_select sel = { 0 };
	cr_assert_eq(ns_select_parse_steps("3..12", &sel, &err), 0);
	cr_assert(sel.steps && sel.first_step == 3 && sel.last_step == 12);
	const char *bad[] = { "3", "3-4", "..4", "3..", "4..3", "a..b", "-1..2", "1..2x", "1...2" };
	for (size_t i = 0; i < NS_ARRAY_SIZE(bad); i++)
		cr_assert_eq(ns_select_parse_steps(bad[i], &sel, &err), NS_ERR_USAGE, "%s", bad[i]);
}

Test(select, category_keeps_only_those_events)
{
	struct fx f;
	struct ns_error err = { 0 };
	struct ns_select sel = { 0 };
	cr_assert_eq(ns_select_parse_categories("kernel,Operator", &sel, &err), 0, "legacy spellings too");
	ingest_selected(&f, TWO_STEPS, &sel, &err, 0);
	cr_assert(has_event(&f, "aten::a") && has_event(&f, "k_of_b"));
	cr_assert(!has_event(&f, "cudaLaunchKernel") && !has_event(&f, "copy_alone") && !has_event(&f, "ProfilerStep#1"));
	cr_assert(has_event(&f, "PyTorch Profiler (0)"), "the profiler's span stays");
	cr_assert(!f.t.has_cat[NS_CAT_CUDA_RUNTIME] && f.t.has_cat[NS_CAT_KERNEL]);
	ns_trace_release(&f.t);
	cr_assert_eq(ns_select_parse_categories("kernel,kernels", &sel, &err), NS_ERR_USAGE);
	cr_assert(strstr(err.msg, "'kernels'"), "%s", err.msg);
	cr_assert_eq(ns_select_parse_categories("ac2g", &sel, &err), NS_ERR_USAGE, "flows are not selected");
}

/* HTA's get_comm_comp_overlap: the union of the communication kernels
 * against the union of the compute kernels; per step, the kernels launched
 * in it. */
Test(analyses, overlap_is_the_intersection_of_unions)
{
	struct fx f;
	struct ns_error err = { 0 };
	build(&f,
	      X("user_annotation", "ProfilerStep#4", 1, 0.000, 40.000, "")
	      X("cuda_runtime", "cudaLaunchKernel", 1, 1.000, 1.000, "\"correlation\": 1")
	      X("cuda_runtime", "cudaLaunchKernel", 1, 2.000, 1.000, "\"correlation\": 2")
	      X("cuda_runtime", "cudaLaunchKernel", 1, 3.000, 1.000, "\"correlation\": 3")
	      X("cuda_runtime", "cudaLaunchKernel", 1, 50.000, 1.000, "\"correlation\": 4")
	      K("kernel", "ncclKernel_AllReduce", 7, 10.000, 10.000, "\"stream\": 7, \"correlation\": 1")
	      K("kernel", "ncclKernel_AllReduce", 7, 15.000, 15.000, "\"stream\": 7, \"correlation\": 2")
	      K("kernel", "gemm", 8, 25.000, 15.000, "\"stream\": 8, \"correlation\": 3")
	      K("kernel", "gemm", 8, 60.000, 5.000, "\"stream\": 8, \"correlation\": 4"),
	      NULL);
	struct ns_kevents k;
	struct ns_psteps steps;
	struct ns_overlap o;
	cr_assert_eq(ns_kevents_collect(&f.t, &k, &err), 0);
	cr_assert_eq(ns_psteps_collect(&f.t, &steps, &err), 0);
	cr_assert_eq(ns_overlap_compute(&k, &steps, &o, &err), 0);
	cr_assert_eq(o.n, 2);
	cr_assert_eq(o.v[0].step, NS_NONE);
	cr_assert_eq(o.v[0].communication_ns, 20000, "[10, 30) us");
	cr_assert_eq(o.v[0].overlap_ns, 5000, "with [25, 40): [25, 30)");
	cr_assert_eq(o.v[0].compute_ns, 20000);
	cr_assert_eq(o.v[1].step, 4);
	cr_assert_eq(o.v[1].compute_ns, 15000, "the gemm launched at 50 us is in no step");
	cr_assert_eq(o.v[1].overlap_ns, 5000);
	ns_overlap_release(&o);
	ns_psteps_release(&steps);
	ns_kevents_release(&k);
	release(&f);
}

/* Two ranks 5 us apart on their base times: step ends, the median, the last
 * rank; a collective's wait until the last rank starts it; a name only one
 * rank has is not matched. */
Test(analyses, stragglers_on_one_clock)
{
	struct fx f[2];
	struct ns_error err = { 0 };
	struct ns_kevents k[2];
	struct ns_psteps steps[2];
	struct ns_straggler_input in[2];
	const char *events[2] = {
		X("user_annotation", "ProfilerStep#3", 1, 0.000, 50.000, "")
		K("kernel", "ncclKernel_AllReduce", 7, 10.000, 20.000, "\"stream\": 7")
		K("kernel", "ncclKernel_Broadcast", 7, 31.000, 2.000, "\"stream\": 7"),
		X("user_annotation", "ProfilerStep#3", 1, 0.000, 60.000, "")
		K("kernel", "ncclKernel_AllReduce", 7, 10.000, 5.000, "\"stream\": 7"),
	};
	const char *bases[2] = { "1000000000", "1000005000" };
	for (int i = 0; i < 2; i++) {
		char *text = era_c(events[i], bases[i]);
		build_text(&f[i], text, NULL);
		free(text);
		cr_assert_eq(ns_kevents_collect(&f[i].t, &k[i], &err), 0);
		cr_assert_eq(ns_psteps_collect(&f[i].t, &steps[i], &err), 0);
		in[i] = (struct ns_straggler_input){ &f[i].t, i, &k[i], &steps[i] };
	}
	struct ns_stragglers s;
	cr_assert_eq(ns_stragglers_compute(in, 2, &s, &err), 0);
	cr_assert_eq(s.n_steps, 1);
	cr_assert_eq(s.steps[0].step, 3);
	cr_assert_eq(s.steps[0].last_rank, 1);
	cr_assert_eq(s.steps[0].last_end_ns, 65000, "rank 1 starts 5 us later");
	cr_assert_eq(s.steps[0].median_end_ns, 57500.0);
	cr_assert_eq(s.n_step_ranks, 2);
	cr_assert_eq(s.step_ranks[1].start_ns, 5000);
	cr_assert_eq(s.step_ranks[1].behind_median_ns, 7500.0);
	cr_assert(s.step_ranks[1].last && !s.step_ranks[0].last);
	cr_assert_eq(s.collectives[0].count, 2);
	cr_assert_eq(s.collectives[0].matched, 1);
	cr_assert_eq(s.collectives[0].wait_ns, 5000, "from 10 us until rank 1 starts at 15 us");
	cr_assert_eq(s.collectives[1].wait_ns, 0);
	cr_assert_eq(s.collectives[1].last_arrivals, 1);
	ns_stragglers_release(&s);
	for (int i = 0; i < 2; i++) {
		ns_psteps_release(&steps[i]);
		ns_kevents_release(&k[i]);
		release(&f[i]);
	}
}
