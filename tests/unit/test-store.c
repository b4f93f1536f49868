/* The SQLite store: write a hand-built trace, load it back field by field,
 * atomic replacement, the cache key, and `sql` (read-only enforcement and
 * the three output formats). No parser involved: the tests play ingest's
 * part by calling the sink the way ns_ingest_file does.
 *
 * Benchmark (not a test): NS_STORE_BENCH=1000000 ./test-store --filter 'store/bench'
 * prints the insert rate for that many synthetic events. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report/sqlout.h"
#include "store/rowq.h"
#include "store/store.h"

static char tmp_dir[] = "/tmp/test-store-XXXXXX";

static void make_tmp_dir(void)
{
	cr_assert_not_null(mkdtemp(tmp_dir));
}

static void remove_tmp_dir(void)
{
	DIR *d = opendir(tmp_dir);
	if (!d)
		return;
	for (struct dirent *de; (de = readdir(d));)
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rmdir(tmp_dir);
}

TestSuite(store, .init = make_tmp_dir, .fini = remove_tmp_dir);

static char *tmp_path(const char *name)
{
	char *path;
	cr_assert(asprintf(&path, "%s/%s", tmp_dir, name) > 0);
	return path;
}

static size_t count_dir_entries(void)
{
	size_t n = 0;
	DIR *d = opendir(tmp_dir);
	cr_assert_not_null(d);
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static bool file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* ---- building a trace the way ingest does ---- */

static ns_str S(struct ns_trace *t, const char *text)
{
	ns_str id = ns_strtab_intern(&t->strings, text, strlen(text));
	cr_assert_neq(id, UINT32_MAX);
	return id;
}

static uint32_t thread_of(struct ns_trace *t, const char *pid, const char *tid)
{
	int64_t pid_value, tid_value;
	char *end;
	pid_value = strtoll(pid, &end, 10);
	if (!*pid || *end)
		pid_value = NS_NONE;
	tid_value = strtoll(tid, &end, 10);
	if (!*tid || *end)
		tid_value = NS_NONE;
	int64_t th = ns_trace_thread(t, S(t, pid), pid_value, S(t, tid), tid_value);
	cr_assert_geq(th, 0);
	return (uint32_t)th;
}

struct raw_spec {
	enum ns_ph ph;
	const char *cat, *name, *pid, *tid;
	int64_t ts_ns, dur_ns;
	bool kept;
	enum ns_kind kind;
	int64_t external_id, correlation, ev_idx, bytes;
	int16_t mem_device_type;
	const char *input_dims, *input_types, *stack, *neff, *args, *id;
	int64_t rf_id, seq_nr, device, stream;
	struct ns_row_meta meta; /* ph M: what ingest decodes of its args */
};

#define META_TEXT(k, s) ((struct ns_row_meta){ .kind = (k), .has_text = true, .text = (s), .len = sizeof(s) - 1 })
#define META_SORT(k, v) ((struct ns_row_meta){ .kind = (k), .has_sort_index = true, .sort_index = (v) })

/* The flows of the trace being emitted, paired as ingest pairs them. */
static struct ns_flow_pairs emitted_flows;

/* A raw event with every optional field absent, as parse_event starts; the
 * call site overrides some of these defaults, which is the point. */
#pragma GCC diagnostic ignored "-Woverride-init"
#define RAW(...)                                                                                        \
	((struct raw_spec){ .external_id = NS_NONE, .correlation = NS_NONE, .ev_idx = NS_NONE,           \
			    .rf_id = NS_NONE, .seq_nr = NS_NONE, .device = NS_NONE, .stream = NS_NONE,     \
			    .mem_device_type = -1, .pid = "", .tid = "", __VA_ARGS__ })

/* Pushes (if kept) and sinks one traceEvents element, and the flow it
 * closes. */
static void emit(struct ns_store *s, struct ns_trace *t, struct raw_spec spec)
{
	struct ns_row_event raw;
	struct ns_error err = { 0 };
	memset(&raw, 0, sizeof(raw));
	raw.flops = NS_NONE;
	raw.ev.idx = (uint32_t)t->n_trace_events;
	raw.ev.ts_ns = spec.ts_ns;
	raw.ev.dur_ns = spec.dur_ns;
	raw.ev.external_id = spec.external_id;
	raw.ev.correlation = spec.correlation;
	if (spec.kind == NS_KIND_MEMORY || spec.kind == NS_KIND_OOM) { /* as parse_event does */
		raw.ev.mem.bytes = spec.bytes;
		raw.ev.mem.device_type = spec.mem_device_type;
	}
	raw.ev_idx = spec.ev_idx;
	raw.bytes = spec.bytes;
	raw.mem_device_type = spec.mem_device_type;
	raw.ev.name = S(t, spec.name);
	raw.ev.input_dims = spec.input_dims ? S(t, spec.input_dims) : 0;
	raw.ev.stack = spec.stack ? S(t, spec.stack) : 0;
	raw.ev.neff = spec.neff ? S(t, spec.neff) : 0;
	raw.ev.thread = thread_of(t, spec.pid, spec.tid);
	raw.ev.cat = (uint8_t)(spec.cat ? ns_cat_from_string(spec.cat, strlen(spec.cat)) : NS_CAT_OTHER);
	raw.ev.kind = (uint8_t)spec.kind;
	raw.ev.flags = spec.ts_ns % 1000 ? NS_EV_TS_FRACTION : 0;
	raw.kept = spec.kept;
	raw.ph = (uint8_t)spec.ph;
	raw.cat_text = spec.cat ? S(t, spec.cat) : 0;
	raw.rf_id = spec.rf_id;
	raw.seq_nr = spec.seq_nr;
	raw.fwd_tid = NS_NONE;
	raw.device = spec.device;
	raw.stream = spec.stream;
	raw.input_types = spec.input_types ? S(t, spec.input_types) : 0;
	raw.args = spec.args;
	raw.args_len = spec.args ? strlen(spec.args) : 0;
	if (spec.id) {
		char *end;
		raw.flow_id = (struct ns_row_flow_id){ .present = true, .text = spec.id, .len = strlen(spec.id) };
		raw.flow_id.num = strtoll(spec.id, &end, 10);
		raw.flow_id.is_int = !*end;
	}
	raw.meta = spec.meta;
	if (raw.kept) {
		cr_assert_eq(ns_trace_push(t, &raw.ev), 0);
		t->has_cat[raw.ev.cat] = true;
	}
	t->n_trace_events++;
	cr_assert_eq(ns_store_event(s, t, &raw, &err), 0, "%s", err.msg);
	if (raw.flow_id.present)
		cr_assert_eq(ns_flow_pairs_add(&emitted_flows, t, &raw, ns_store_flow, s, &err), 0, "%s", err.msg);
}

/* The flows still open, at the end of the trace's events. */
static void emit_end(struct ns_store *s, struct ns_trace *t)
{
	struct ns_error err = { 0 };
	cr_assert_eq(ns_flow_pairs_finish(&emitted_flows, t, ns_store_flow, s, &err), 0, "%s", err.msg);
	ns_flow_pairs_release(&emitted_flows);
	ns_flow_pairs_init(&emitted_flows);
}

static void add_meta(struct ns_trace *t, const char *key, const char *value_json)
{
	if (t->n_meta == t->cap_meta) {
		t->cap_meta = t->cap_meta ? t->cap_meta * 2 : 4;
		t->meta = realloc(t->meta, t->cap_meta * 2 * sizeof(*t->meta));
		cr_assert_not_null(t->meta);
	}
	t->meta[2 * t->n_meta] = S(t, key);
	t->meta[2 * t->n_meta + 1] = S(t, value_json);
	t->n_meta++;
}

/* The spec's worked example (key-averages-spec.md D1), cut down, plus the
 * odd cases: a string pid, string flow ids, an unmatched flow end, events
 * the model does not keep. */
static void write_example_events(struct ns_store *s, struct ns_trace *t)
{
	emit(s, t, RAW(.ph = NS_PH_X, .cat = "user_annotation", .name = "ProfilerStep#1", .pid = "4242",
		       .tid = "4242", .ts_ns = 1010000, .dur_ns = 200000, .kept = true, .external_id = 1,
		       .ev_idx = 0, .rf_id = 0, .args = "{\"External id\": 1, \"Ev Idx\": 0}"));
	emit(s, t, RAW(.ph = NS_PH_X, .cat = "cpu_op", .name = "aten::add", .pid = "4242", .tid = "4242",
		       .ts_ns = 1020500, .dur_ns = 30250, .kept = true, .external_id = 2, .ev_idx = 1,
		       .input_dims = "[[1024],[1024],[]]", .input_types = "[\"float\",\"float\",\"Scalar\"]",
		       .stack = "a.py(1): f;b.py(2): g", .seq_nr = 7,
		       .args = "{\"External id\": 2, \"Input Dims\": [[1024], [1024], []]}"));
	emit(s, t, RAW(.ph = NS_PH_I, .cat = "cpu_instant_event", .name = "[memory]", .pid = "4242",
		       .tid = "4242", .ts_ns = 1023000, .kept = true, .kind = NS_KIND_MEMORY, .bytes = 4096,
		       .mem_device_type = 1, .ev_idx = 3,
		       .args = "{\"Total Reserved\": 2097152, \"Total Allocated\": 4096, \"Bytes\": 4096, "
			       "\"Addr\": 139872634142720, \"Device Id\": 0, \"Device Type\": 1, \"Ev Idx\": 3}"));
	emit(s, t, RAW(.ph = NS_PH_X, .cat = "cuda_runtime", .name = "cudaLaunchKernel", .pid = "4242",
		       .tid = "4242", .ts_ns = 1030000, .dur_ns = 12400, .kept = true, .external_id = 2,
		       .correlation = 101, .args = "{\"External id\": 2, \"cbid\": 211, \"correlation\": 101}"));
	emit(s, t, RAW(.ph = NS_PH_S, .cat = "ac2g", .name = "ac2g", .pid = "4242", .tid = "4242",
		       .ts_ns = 1030000, .kept = true, .kind = NS_KIND_FLOW_S, .correlation = 101, .id = "101"));
	emit(s, t, RAW(.ph = NS_PH_X, .cat = "kernel", .name = "void add_kernel<4>(int)", .pid = "0", .tid = "7",
		       .ts_ns = 1045000, .dur_ns = 4321, .kept = true, .external_id = 2, .correlation = 101,
		       .device = 0, .stream = 7, .neff = "5f1c0a9e",
		       .args = "{\"External id\": 2, \"device\": 0, \"stream\": 7, \"correlation\": 101}"));
	emit(s, t, RAW(.ph = NS_PH_F, .cat = "ac2g", .name = "ac2g", .pid = "0", .tid = "7", .ts_ns = 1045000,
		       .kept = true, .kind = NS_KIND_FLOW_F, .correlation = 101, .id = "101"));
	emit(s, t, RAW(.ph = NS_PH_M, .name = "process_name", .pid = "4242", .tid = "0", .ts_ns = 1000000,
		       .args = "{\"name\": \"python3\"}", .meta = META_TEXT(NS_ROW_META_PROCESS_NAME, "python3")));
	emit(s, t, RAW(.ph = NS_PH_M, .name = "process_labels", .pid = "4242", .tid = "0", .ts_ns = 1000000,
		       .args = "{\"labels\": \"CPU\"}", .meta = META_TEXT(NS_ROW_META_PROCESS_LABELS, "CPU")));
	emit(s, t, RAW(.ph = NS_PH_M, .name = "process_sort_index", .pid = "0", .tid = "0", .ts_ns = 1000000,
		       .args = "{\"sort_index\": 5000000}",
		       .meta = META_SORT(NS_ROW_META_PROCESS_SORT_INDEX, 5000000)));
	emit(s, t, RAW(.ph = NS_PH_M, .name = "thread_name", .pid = "4242", .tid = "4242", .ts_ns = 1000000,
		       .args = "{\"name\": \"thread 4242 (python3)\"}"));
	t->threads[thread_of(t, "4242", "4242")].name = S(t, "thread 4242 (python3)");
	emit(s, t, RAW(.ph = NS_PH_M, .name = "thread_sort_index", .pid = "0", .tid = "7", .ts_ns = 1000000,
		       .args = "{\"sort_index\": 7}", .meta = META_SORT(NS_ROW_META_THREAD_SORT_INDEX, 7)));
	emit(s, t, RAW(.ph = NS_PH_F, .cat = "fwdbwd", .name = "fwdbwd", .pid = "4242", .tid = "4243",
		       .ts_ns = 1200000, .id = "x7"));
	emit(s, t, RAW(.ph = NS_PH_S, .cat = "fwdbwd", .name = "fwdbwd", .pid = "4242", .tid = "4242",
		       .ts_ns = 1020500, .id = "x7"));
	emit(s, t, RAW(.ph = NS_PH_F, .cat = "ac2g", .name = "ac2g", .pid = "0", .tid = "7", .ts_ns = 1100000,
		       .kept = true, .kind = NS_KIND_FLOW_F, .correlation = 555, .id = "555"));
	emit(s, t, RAW(.ph = NS_PH_X, .cat = "python_function", .name = "train.py(10): step", .pid = "4242",
		       .tid = "4242", .ts_ns = 1005000, .dur_ns = 250000, .args = "{\"Python id\": 1}"));
	emit(s, t, RAW(.ph = NS_PH_X, .cat = "Trace", .name = "PyTorch Profiler (0)", .pid = "Spans",
		       .tid = "PyTorch Profiler", .ts_ns = 1000000, .dur_ns = 300000, .kept = true,
		       .args = "{\"Op count\": 0}"));
	emit(s, t, RAW(.ph = NS_PH_I, .name = "Record Window End", .ts_ns = 1300500));
	emit_end(s, t);
}

static void fill_example_trace_fields(struct ns_trace *t)
{
	t->path = strdup("traces/example.json");
	t->base_time_ns = 1730000000000000000;
	t->has_base_time = true;
	t->ts_has_fraction = true;
	t->profile_memory = true;
	t->rank = 3;
	t->world_size = 8;
	add_meta(t, "schemaVersion", "1");
	add_meta(t, "trace_id", "\"8E41C2A7\"");
	add_meta(t, "deviceProperties", "[]");
}

/* The aggregator's view of the example, by hand (PyTorch's numbers from
 * the spec's D2 where they exist). The self columns follow from the
 * children and the device totals; the memory columns from the one record
 * (event 2: 4096 device bytes inside aten::add; has_records marks the ops
 * whose span holds it, as assign_memory does). Row 3 stands for a
 * [memory] row with no FunctionEvent behind it. */
static void build_example_agg(struct ns_trace *t, struct ns_agg *agg)
{
	static struct ns_fevent fevents[4];
	static struct ns_avg avgs[4];
	static int64_t mem_ts[1] = { 1023000 }; /* event 2's time */
	static int64_t mem_cpu_sum[2] = { 0, 0 }, mem_dev_sum[2] = { 0, 4096 };
	memset(fevents, 0, sizeof(fevents));
	memset(avgs, 0, sizeof(avgs));
	memset(agg, 0, sizeof(*agg));
	ns_str step = S(t, "ProfilerStep*"), add = S(t, "aten::add"), launch = S(t, "cudaLaunchKernel");
	ns_str kernel = S(t, "void add_kernel<4>(int)"), memory = S(t, "[memory]");
	ns_str shapes = S(t, "[[1024], [1024], []]");
	fevents[0] = (struct ns_fevent){ .event = 0, .name = step,
					 .is_user_annotation = true, .link = -1, .first_child = 1, .next_sibling = -1,
					 .device_ns = 4321, .has_records = true };
	fevents[1] = (struct ns_fevent){ .event = 1, .name = add,
					 .link = 0, .first_child = 2, .next_sibling = -1, .device_ns = 4321,
					 .has_records = true };
	fevents[2] = (struct ns_fevent){ .event = 3, .name = launch,
					 .link = 1, .first_child = -1, .next_sibling = -1 };
	fevents[3] = (struct ns_fevent){ .event = 4, /* (flow ends are not events) */ .name = kernel, .thread = 1, .device_type = NS_DEV_CUDA,
					 .link = 1, .first_child = -1, .next_sibling = -1, .device_ns = 4321 };
	/* self CPU ns: 169750, 17850, 12400; cpu_ns is the span: 200000, 30250, 12400 */
	avgs[0] = (struct ns_avg){ .key = step, .is_user_annotation = true, .first = 0, .count = 1,
				   .cpu_ns = 200000, .self_cpu_ns = 169750, .device_ns = 4321,
				   .device_mem = 4096 };
	avgs[1] = (struct ns_avg){ .key = add, .input_shapes = shapes, .stack = S(t, "a.py(1): f"), .first = 1,
				   .count = 1, .cpu_ns = 30250, .self_cpu_ns = 17850, .device_ns = 4321,
				   .self_device_ns = 4321, .device_mem = 4096, .self_device_mem = 4096 };
	avgs[2] = (struct ns_avg){ .key = kernel, .device_type = NS_DEV_CUDA, .first = 3, .count = 1,
				   .device_ns = 4321, .self_device_ns = 4321 };
	avgs[3] = (struct ns_avg){ .key = memory, .first = -1, .count = 1, .cpu_mem = -512, .self_cpu_mem = -512 };
	agg->trace = t;
	agg->backend = NS_BACKEND_CUDA;
	agg->use_device = true;
	agg->fevents = fevents;
	agg->n_fevents = 4;
	agg->has_mem = true;
	agg->mem_ts = mem_ts;
	agg->mem_cpu_sum = mem_cpu_sum;
	agg->mem_dev_sum = mem_dev_sum;
	agg->n_mem_recs = 1;
	agg->avgs = avgs;
	agg->n_avgs = 4;
}

static const struct ns_source_id example_source = {
	.path = "traces/example.json", .abspath = "/data/traces/example.json", .size = 4242,
	.mtime_ns = 1700000000123456789,
};

/* Writes the example trace (and, with two_traces, a second tiny one) to
 * db_path; leaves the written model in *t. */
static void write_example_db(const char *db_path, struct ns_trace *t, bool two_traces)
{
	struct ns_store *s;
	struct ns_error err = { 0 };
	struct ns_agg agg;
	int64_t trace_id;
	cr_assert_eq(ns_store_create(db_path, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_store_begin_trace(s, &example_source, &trace_id, &err), 0, "%s", err.msg);
	cr_assert_eq(trace_id, 1);
	ns_trace_init(t);
	fill_example_trace_fields(t);
	write_example_events(s, t);
	build_example_agg(t, &agg);
	cr_assert_eq(ns_store_end_trace(s, t, &agg, &err), 0, "%s", err.msg);
	if (two_traces) {
		struct ns_trace second;
		struct ns_source_id src = { .path = "b.json", .abspath = "/data/b.json", .size = 10, .mtime_ns = 20 };
		ns_trace_init(&second);
		second.path = strdup("b.json");
		cr_assert_eq(ns_store_begin_trace(s, &src, &trace_id, &err), 0, "%s", err.msg);
		cr_assert_eq(trace_id, 2);
		emit(s, &second, RAW(.ph = NS_PH_X, .cat = "cpu_op", .name = "aten::mm", .pid = "1", .tid = "1",
				     .ts_ns = 5000, .dur_ns = 70, .kept = true, .args = "{}"));
		cr_assert_eq(ns_store_end_trace(s, &second, NULL, &err), 0, "%s", err.msg);
		ns_trace_release(&second);
	}
	cr_assert_eq(ns_store_commit(s, &err), 0, "%s", err.msg);
}

/* Runs a query and returns its output (caller frees). */
static char *query(const char *db_path, const char *sql, enum ns_sql_format fmt, struct ns_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	cr_assert_not_null(out);
	struct ns_sql_result result;
	int rc = ns_sql_query(db_path, sql, NULL, &result, err);
	if (!rc)
		rc = ns_sql_write(out, &result, fmt, db_path, err);
	ns_sql_result_release(&result);
	fclose(out);
	if (rc) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void expect_query(const char *db_path, const char *sql, enum ns_sql_format fmt, const char *expected)
{
	struct ns_error err = { 0 };
	char *got = query(db_path, sql, fmt, &err);
	cr_assert_not_null(got, "%s: %s", sql, err.msg);
	cr_expect_str_eq(got, expected, "query: %s\n--- got:\n%s--- expected:\n%s", sql, got, expected);
	free(got);
}

/* ---- write, then load back ---- */

Test(store, load_rebuilds_the_model)
{
	char *db = tmp_path("example.db");
	struct ns_trace written, *loaded;
	struct ns_error err = { 0 };
	size_t n;
	write_example_db(db, &written, true);
	cr_assert(ns_store_is_db(db));
	cr_assert_eq(ns_store_load(db, &loaded, &n, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 2);
	const struct ns_trace *t = &loaded[0];

	cr_expect_str_eq(t->path, written.path);
	cr_expect_eq(t->n_trace_events, written.n_trace_events);
	cr_expect_eq(t->base_time_ns, written.base_time_ns);
	cr_expect_eq(t->has_base_time, written.has_base_time);
	cr_expect_eq(t->rank, 3);
	cr_expect_eq(t->world_size, 8);
	cr_expect_eq(t->ts_has_fraction, written.ts_has_fraction);
	cr_expect_eq(t->profile_memory, written.profile_memory);
	cr_expect_eq(t->legacy_array, written.legacy_array);
	cr_expect_eq(t->truncated_at, -1);
	for (int cat = 0; cat < NS_CAT__COUNT; cat++)
		cr_expect_eq(t->has_cat[cat], written.has_cat[cat], "has_cat[%d]", cat);

	/* the same string ids, so every ns_str below compares as an integer */
	cr_assert_eq(t->strings.count, written.strings.count);
	for (ns_str id = 0; id < written.strings.count; id++)
		cr_expect_str_eq(ns_strtab_get(&t->strings, id), ns_strtab_get(&written.strings, id), "string %u", id);

	cr_assert_eq(t->n_threads, written.n_threads);
	for (size_t i = 0; i < written.n_threads; i++) {
		const struct ns_thread *a = &t->threads[i], *b = &written.threads[i];
		cr_expect_eq(a->pid_text, b->pid_text, "thread %zu", i);
		cr_expect_eq(a->tid_text, b->tid_text, "thread %zu", i);
		cr_expect_eq(a->pid, b->pid, "thread %zu", i);
		cr_expect_eq(a->tid, b->tid, "thread %zu", i);
		cr_expect_eq(a->name, b->name, "thread %zu", i);
	}

	cr_assert_eq(t->n_events, written.n_events);
	for (size_t i = 0; i < written.n_events; i++) {
		const struct ns_event *a = &t->events[i], *b = &written.events[i];
		cr_expect_eq(a->idx, b->idx, "event %zu", i);
		cr_expect_eq(a->ts_ns, b->ts_ns, "event %zu", i);
		cr_expect_eq(a->dur_ns, b->dur_ns, "event %zu", i);
		/* the ids, or for memory records the bytes and device type */
		cr_expect_eq(a->external_id, b->external_id, "event %zu", i);
		cr_expect_eq(a->correlation, b->correlation, "event %zu", i);
		cr_expect_eq(a->name, b->name, "event %zu", i);
		cr_expect_eq(a->input_dims, b->input_dims, "event %zu", i);
		cr_expect_eq(a->thread, b->thread, "event %zu", i);
		cr_expect_eq(a->stack, b->stack, "event %zu", i);
		cr_expect_eq(a->neff, b->neff, "event %zu", i);
		cr_expect_eq(a->cat, b->cat, "event %zu", i);
		cr_expect_eq(a->kind, b->kind, "event %zu", i);
		cr_expect_eq(a->flags, b->flags, "event %zu", i);
	}

	cr_assert_eq(t->n_meta, written.n_meta);
	for (size_t i = 0; i < 2 * written.n_meta; i++)
		cr_expect_eq(t->meta[i], written.meta[i]);
	cr_expect_str_eq(ns_trace_meta(t, "trace_id"), "\"8E41C2A7\"");

	/* the second trace has its own string numbering */
	cr_expect_eq(loaded[1].n_events, 1);
	cr_expect_eq(loaded[1].events[0].idx, 0); /* events.id 18 - first_event_id 18 */
	cr_expect_str_eq(ns_strtab_get(&loaded[1].strings, loaded[1].events[0].name), "aten::mm");
	cr_expect_eq(loaded[1].rank, NS_NONE);

	for (size_t i = 0; i < n; i++)
		ns_trace_release(&loaded[i]);
	free(loaded);
	ns_trace_release(&written);
	free(db);
}

Test(store, tables_hold_what_the_sink_saw)
{
	char *db = tmp_path("example.db");
	struct ns_trace t;
	write_example_db(db, &t, false);
	ns_trace_release(&t);

	expect_query(db, "SELECT id, path, abspath, size, mtime_ns, rank, world_size, backend, n_trace_events, "
			 "n_events, truncated_at FROM traces",
		     NS_SQL_CSV,
		     "id,path,abspath,size,mtime_ns,rank,world_size,backend,n_trace_events,n_events,truncated_at\r\n"
		     "1,traces/example.json,/data/traces/example.json,4242,1700000000123456789,3,8,CUDA,18,9,\r\n");
	expect_query(db, "SELECT pid, typeof(pid) AS type, name, labels, sort_index FROM processes ORDER BY rowid",
		     NS_SQL_TABLE,
		     " pid  type     name     labels  sort_index\n"
		     "----  -------  -------  ------  ----------\n"
		     "4242  integer  python3  CPU\n"
		     "   0  integer                      5000000\n");
	expect_query(db, "SELECT id, pid, tid, name, sort_index FROM threads ORDER BY id", NS_SQL_TABLE,
		     "id  pid    tid               name                   sort_index\n"
		     "--  -----  ----------------  ---------------------  ----------\n"
		     " 0  4242   4242              thread 4242 (python3)\n"
		     " 1  0      7                                                 7\n"
		     " 2  4242   0\n"
		     " 3  0      0\n"
		     " 4  4242   4243\n"
		     " 5  Spans  PyTorch Profiler\n"
		     " 6\n");
	/* s/f paired by (cat, id) in file order, wherever they are */
	expect_query(db, "SELECT cat, id, start_event_id, start_pid, start_tid, start_ts_ns, end_event_id, end_pid, "
			 "end_tid, end_ts_ns FROM flows ORDER BY cat, id",
		     NS_SQL_TABLE,
		     "cat     id   start_event_id  start_pid  start_tid  start_ts_ns  end_event_id  end_pid  end_tid  end_ts_ns\n"
		     "------  ---  --------------  ---------  ---------  -----------  ------------  -------  -------  ---------\n"
		     "ac2g    101               4       4242       4242      1030000             6        0        7    1045000\n"
		     "ac2g    555                                                               14        0        7    1100000\n"
		     "fwdbwd  x7                                                                12     4242     4243    1200000\n"
		     "fwdbwd  x7               13       4242       4242      1020500\n");
	expect_query(db, "SELECT id, kept, ph, cat, activity, name, pid, tid, ts_ns, dur_ns, correlation, input_dims, "
			 "stack FROM named_events WHERE id IN (1, 7, 15, 16) ORDER BY id",
		     NS_SQL_JSON,
		     "[\n"
		     "  {\"id\": 1, \"kept\": 1, \"ph\": \"X\", \"cat\": \"cpu_op\", \"activity\": \"cpu_op\", "
		     "\"name\": \"aten::add\", \"pid\": 4242, \"tid\": 4242, \"ts_ns\": 1020500, \"dur_ns\": 30250, "
		     "\"correlation\": null, \"input_dims\": \"[[1024],[1024],[]]\", \"stack\": \"a.py(1): f;b.py(2): g\"},\n"
		     "  {\"id\": 7, \"kept\": 0, \"ph\": \"M\", \"cat\": null, \"activity\": \"other\", "
		     "\"name\": \"process_name\", \"pid\": 4242, \"tid\": 0, \"ts_ns\": 1000000, \"dur_ns\": 0, "
		     "\"correlation\": null, \"input_dims\": null, \"stack\": null},\n"
		     "  {\"id\": 15, \"kept\": 0, \"ph\": \"X\", \"cat\": \"python_function\", \"activity\": "
		     "\"python_function\", \"name\": \"train.py(10): step\", \"pid\": 4242, \"tid\": 4242, \"ts_ns\": "
		     "1005000, \"dur_ns\": 250000, \"correlation\": null, \"input_dims\": null, \"stack\": null},\n"
		     "  {\"id\": 16, \"kept\": 1, \"ph\": \"X\", \"cat\": \"Trace\", \"activity\": \"Trace\", \"name\": "
		     "\"PyTorch Profiler (0)\", \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\", \"ts_ns\": 1000000, "
		     "\"dur_ns\": 300000, \"correlation\": null, \"input_dims\": null, \"stack\": null}\n"
		     "]\n");
	expect_query(db, "SELECT key, value_json FROM metadata ORDER BY ord", NS_SQL_CSV,
		     "key,value_json\r\nschemaVersion,1\r\ntrace_id,\"\"\"8E41C2A7\"\"\"\r\ndeviceProperties,[]\r\n");
	free(db);
}

Test(store, derived_tables_and_views)
{
	char *db = tmp_path("example.db");
	struct ns_trace t;
	write_example_db(db, &t, false);
	ns_trace_release(&t);

	/* one event_stats row per FunctionEvent; event_memory for those with memory */
	expect_query(db, "SELECT event_id, parent_event_id, depth, thread_id, s.text AS key, device_type, removed, "
			 "start_ns, end_ns, self_cpu_ns, self_device_ns, device_ns, launched_by_event_id "
			 "FROM event_stats JOIN strings s ON s.id = key_id ORDER BY event_id",
		     NS_SQL_TABLE,
		     "event_id  parent_event_id  depth  thread_id  key                      device_type  removed  start_ns   end_ns  self_cpu_ns  self_device_ns  device_ns  launched_by_event_id\n"
		     "--------  ---------------  -----  ---------  -----------------------  -----------  -------  --------  -------  -----------  --------------  ---------  --------------------\n"
		     "       0                       0          0  ProfilerStep*                      0        0   1010000  1210000       169750               0       4321\n"
		     "       1                0      1          0  aten::add                          0        0   1020500  1050750        17850            4321       4321\n"
		     "       3                1      2          0  cudaLaunchKernel                   0        0   1030000  1042400        12400               0          0\n"
		     "       5                       0          1  void add_kernel<4>(int)            1        0   1045000  1049321            0            4321       4321                     1\n");
	expect_query(db, "SELECT * FROM event_memory ORDER BY event_id", NS_SQL_TABLE,
		     "trace_id  event_id  cpu_mem  self_cpu_mem  device_mem  self_device_mem\n"
		     "--------  --------  -------  ------------  ----------  ---------------\n"
		     "       1         0        0             0        4096                0\n"
		     "       1         1        0             0        4096             4096\n");
	expect_query(db, "SELECT row, key, input_shapes, stack, device_type, calls, self_cpu_us, cpu_us, "
			 "self_device_us, cpu_ns, self_cpu_mem, device_mem FROM key_averages ORDER BY row",
		     NS_SQL_TABLE,
		     "row  key                      input_shapes          stack       device_type  calls  self_cpu_us  cpu_us  self_device_us  cpu_ns  self_cpu_mem  device_mem\n"
		     "---  -----------------------  --------------------  ----------  -----------  -----  -----------  ------  --------------  ------  ------------  ----------\n"
		     "  0  ProfilerStep*                                              CPU              1       169.75   200.0             0.0  200000             0        4096\n"
		     "  1  aten::add                [[1024], [1024], []]  a.py(1): f  CPU              1        17.85   30.25           4.321   30250             0        4096\n"
		     "  2  void add_kernel<4>(int)                                    CUDA             1          0.0     0.0           4.321       0             0           0\n"
		     "  3  [memory]                                                   CPU              1          0.0     0.0             0.0       0          -512           0\n");
	expect_query(db, "SELECT event_id, name, neff, op_name, runtime_name, launch_to_start_ns, launch_delay_ns FROM kernels",
		     NS_SQL_TABLE,
		     "event_id  name                     neff      op_name    runtime_name      launch_to_start_ns  launch_delay_ns\n"
		     "--------  -----------------------  --------  ---------  ----------------  ------------------  ---------------\n"
		     "       5  void add_kernel<4>(int)  5f1c0a9e  aten::add  cudaLaunchKernel               15000             2600\n");
	expect_query(db, "SELECT name, key, depth, is_user_annotation, self_cpu_us, cpu_ns, device_mem, self_device_mem, "
			 "input_dims FROM ops ORDER BY event_id",
		     NS_SQL_TABLE,
		     "name              key               depth  is_user_annotation  self_cpu_us  cpu_ns  device_mem  self_device_mem  input_dims\n"
		     "----------------  ----------------  -----  ------------------  -----------  ------  ----------  ---------------  ------------------\n"
		     "ProfilerStep#1    ProfilerStep*         0                   1       169.75  200000        4096                0\n"
		     "aten::add         aten::add             1                   0        17.85   30250        4096             4096  [[1024],[1024],[]]\n"
		     "cudaLaunchKernel  cudaLaunchKernel      2                   0         12.4   12400           0                0\n");
	expect_query(db, "SELECT name, step, dur_us, cpu_ns, device_ns FROM steps", NS_SQL_TABLE,
		     "name            step  dur_us  cpu_ns  device_ns\n"
		     "--------------  ----  ------  ------  ---------\n"
		     "ProfilerStep#1     1   200.0  200000       4321\n");
	/* the planner's row counts: the writer's for the tables it fills row by row, ANALYZE's for the rest */
	expect_query(db, "SELECT tbl, idx, stat FROM sqlite_stat1 WHERE tbl IN ('events', 'event_stats', 'event_memory', "
			 "'flows', 'threads') ORDER BY tbl, idx",
		     NS_SQL_CSV,
		     "tbl,idx,stat\r\nevent_memory,,2\r\nevent_stats,,4\r\nevents,,18\r\n"
		     "events,events_by_correlation,5 5 3\r\nflows,,4\r\nthreads,threads,7 7 1\r\n");
	expect_query(db, "SELECT (SELECT count(*) FROM event_memory), (SELECT count(*) FROM event_stats), "
			 "(SELECT count(*) FROM events), (SELECT count(*) FROM flows)",
		     NS_SQL_CSV, "(SELECT count(*) FROM event_memory),(SELECT count(*) FROM event_stats),"
				 "(SELECT count(*) FROM events),(SELECT count(*) FROM flows)\r\n2,4,18,4\r\n");
	expect_query(db, "SELECT event_id, bytes, device_type, total_allocated, total_reserved FROM memory_events",
		     NS_SQL_TABLE,
		     "event_id  bytes  device_type  total_allocated  total_reserved\n"
		     "--------  -----  -----------  ---------------  --------------\n"
		     "       2   4096            1             4096         2097152\n");
	free(db);
}

Test(store, load_refuses_other_schema_versions)
{
	char *db = tmp_path("old.db");
	struct ns_trace t, *loaded = NULL;
	struct ns_error err = { 0 };
	sqlite3 *raw;
	size_t n;
	write_example_db(db, &t, false);
	ns_trace_release(&t);
	cr_assert_eq(sqlite3_open(db, &raw), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(raw, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	cr_expect(ns_store_is_db(db));
	cr_expect_eq(ns_store_load(db, &loaded, &n, &err), NS_ERR_UNSUPPORTED);
	cr_expect_not_null(strstr(err.msg, "schema version 99"), "%s", err.msg);
	cr_expect_null(loaded);
	free(db);
}

/* A damaged database: the example with `sql` run on it must fail to load
 * with exit 1 (NS_ERR_INPUT) and `want` after "PATH: " (issue 16: such
 * databases overflowed times, hung in a recursive view, or allocated by
 * the largest id rather than the rows present). */
static void expect_damaged(const char *sql, const char *want)
{
	char *db = tmp_path("damaged.db");
	struct ns_trace t, *loaded = NULL;
	struct ns_error err = { 0 };
	sqlite3 *raw;
	size_t n;
	char msg[600];
	write_example_db(db, &t, false);
	ns_trace_release(&t);
	cr_assert_eq(sqlite3_open(db, &raw), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(raw));
	sqlite3_close(raw);
	cr_expect_eq(ns_store_load(db, &loaded, &n, &err), NS_ERR_INPUT, "%s: %s", sql, err.msg);
	snprintf(msg, sizeof(msg), "%s: %s", db, want);
	cr_expect_str_eq(err.msg, msg, "%s: %s", sql, err.msg);
	cr_expect_null(loaded);
	unlink(db);
	free(db);
}

Test(store, load_checks_values_as_they_are_read)
{
	expect_damaged("UPDATE events SET ts_ns = NULL WHERE id = 3",
		       "damaged database: table events, row 3: ts_ns is NULL");
	expect_damaged("UPDATE events SET ts_ns = 9223372036854775807 WHERE id = 3",
		       "damaged database: table events, row 3: ts_ns is out of range");
	expect_damaged("UPDATE events SET dur_ns = -9223372036854775808 WHERE id = 3",
		       "damaged database: table events, row 3: dur_ns is out of range");
	expect_damaged("UPDATE events SET dur_ns = 'x' WHERE id = 3",
		       "damaged database: table events, row 3: dur_ns is not an integer");
	expect_damaged("UPDATE events SET dur_ns = 36028797018963968 WHERE kept", /* 2^55 each: the third (ids from 0) passes 2^56 */
		       "damaged database: table events, row 2: the durations add up to more than 2^56 ns");
	expect_damaged("UPDATE events SET activity = 200 WHERE id = 1",
		       "damaged database: table events, row 1: activity is out of range");
	expect_damaged("UPDATE traces SET base_time_ns = -1",
		       "damaged database: table traces, row 1: base_time_ns is out of range");
}

Test(store, load_refuses_views_in_place_of_tables)
{
	expect_damaged("DROP TABLE events; CREATE VIEW events AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL "
		       "SELECT x + 1 FROM r) SELECT * FROM r",
		       "damaged database: \"events\" is a view, not a table");
	expect_damaged("DROP TABLE strings", "damaged database: \"strings\" is missing, not a table");
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* A string id of 5e8 in a small file: the load's memory is by the rows
 * present (it was an array indexed by the largest id: 2 GB). */
Test(store, load_memory_follows_rows_not_ids)
{
	char *db = tmp_path("bigid.db");
	struct ns_trace t, *loaded = NULL;
	struct ns_error err = { 0 };
	sqlite3 *raw;
	size_t n;
	write_example_db(db, &t, false);
	cr_assert_eq(sqlite3_open(db, &raw), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(raw, "PRAGMA foreign_keys = OFF; "
				       "UPDATE strings SET id = 500000000 WHERE id = (SELECT max(id) FROM strings); "
				       "UPDATE trace_strings SET string_id = 500000000 WHERE string_id = "
				       "(SELECT max(string_id) FROM trace_strings)",
				 NULL, NULL, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(raw));
	sqlite3_close(raw);
	struct rlimit old, lim;
	cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)1 << 30; /* a 2 GB array does not fit; the trace does */
	bool limited = !UNDER_ASAN && setrlimit(RLIMIT_AS, &lim) == 0; /* (ASan's shadow needs more) */
	int rc = ns_store_load(db, &loaded, &n, &err);
	if (limited)
		setrlimit(RLIMIT_AS, &old);
	cr_assert_eq(rc, 0, "%s", err.msg);
	cr_expect_eq(n, 1);
	cr_expect_eq(loaded[0].n_events, t.n_events);
	for (size_t i = 0; i < n; i++)
		ns_trace_release(&loaded[i]);
	free(loaded);
	ns_trace_release(&t);
	free(db);
}

Test(store, is_db)
{
	char *db = tmp_path("plain.db"), *text = tmp_path("trace.json");
	sqlite3 *raw;
	FILE *f = fopen(text, "w");
	fputs("{\"traceEvents\": []}", f);
	fclose(f);
	cr_assert_eq(sqlite3_open(db, &raw), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(raw, "CREATE TABLE x (y)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	cr_expect_not(ns_store_is_db(db), "another application's SQLite file");
	cr_expect_not(ns_store_is_db(text));
	cr_expect_not(ns_store_is_db("/nonexistent/x.db"));
	free(db);
	free(text);
}

/* ---- atomicity ---- */

Test(store, abort_leaves_nothing)
{
	char *db = tmp_path("aborted.db");
	struct ns_store *s;
	struct ns_error err = { 0 };
	struct ns_trace t;
	int64_t id;
	cr_assert_eq(ns_store_create(db, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_store_begin_trace(s, &example_source, &id, &err), 0);
	ns_trace_init(&t);
	write_example_events(s, &t);
	ns_store_abort(s);
	ns_store_abort(NULL);
	cr_expect_not(file_exists(db));
	cr_expect_eq(count_dir_entries(), 0, "no temp file left");
	ns_trace_release(&t);
	free(db);
}

Test(store, existing_db_survives_an_abort_and_is_replaced_by_a_commit)
{
	char *db = tmp_path("kept.db");
	struct ns_store *s;
	struct ns_error err = { 0 };
	struct ns_trace t;
	int64_t id;
	write_example_db(db, &t, false);
	ns_trace_release(&t);
	const char *count = "SELECT count(*) AS n FROM traces";

	cr_assert_eq(ns_store_create(db, &s, &err), 0, "%s", err.msg);
	ns_store_abort(s);
	expect_query(db, count, NS_SQL_CSV, "n\r\n1\r\n");

	/* a commit with no traces replaces it */
	cr_assert_eq(ns_store_create(db, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_store_begin_trace(s, &example_source, &id, &err), 0);
	ns_trace_init(&t);
	cr_assert_eq(ns_store_end_trace(s, &t, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_store_commit(s, &err), 0, "%s", err.msg);
	expect_query(db, "SELECT n_trace_events FROM traces", NS_SQL_CSV, "n_trace_events\r\n0\r\n");
	cr_expect_eq(count_dir_entries(), 1);
	ns_trace_release(&t);
	free(db);
}

/* A pid that no longer exists: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	return pid;
}

Test(store, stale_temp_files_of_dead_writers_are_removed)
{
	char *db = tmp_path("stale.db"), *stale, *live, *other;
	struct ns_store *s;
	struct ns_error err = { 0 };

	/* a writer killed mid-ingest leaves its temp file behind */
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct ns_store *killed;
		if (ns_store_create(db, &killed, NULL) == 0)
			kill(getpid(), SIGKILL);
		_exit(1);
	}
	int status;
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert(WIFSIGNALED(status));
	cr_assert_eq(count_dir_entries(), 1, "the killed writer's temp file");

	cr_assert(asprintf(&stale, "%s.tmp-%ld-0badc0de", db, (long)dead_pid()) > 0);
	cr_assert(asprintf(&live, "%s.tmp-%ld-12345678", db, (long)dead_pid()) > 0); /* a pid from elsewhere */
	cr_assert(asprintf(&other, "%s/unrelated.db.tmp-%ld-0badc0de", tmp_dir, (long)dead_pid()) > 0);
	fclose(fopen(stale, "w"));
	fclose(fopen(other, "w"));
	/* a live writer holds a lock on its file (the pid in its name does not matter) */
	int live_fd = open(live, O_RDWR | O_CREAT | O_EXCL, 0666);
	cr_assert_geq(live_fd, 0);
	cr_assert_eq(flock(live_fd, LOCK_EX | LOCK_NB), 0);

	cr_assert_eq(ns_store_create(db, &s, &err), 0, "%s", err.msg);
	ns_store_abort(s);
	cr_expect_not(file_exists(stale));
	cr_expect(file_exists(live), "its writer (this process) holds its lock");
	cr_expect(file_exists(other), "another database's temp file");
	cr_expect_eq(count_dir_entries(), 2);
	close(live_fd);
	free(stale);
	free(live);
	free(other);
	free(db);
}

/* The path of the one temp file beside db (NULL if none). */
static char *find_temp_file(const char *db)
{
	const char *base = strrchr(db, '/') + 1;
	char *found = NULL;
	DIR *d = opendir(tmp_dir);
	cr_assert_not_null(d);
	for (struct dirent *de; (de = readdir(d));)
		if (strncmp(de->d_name, base, strlen(base)) == 0 && strstr(de->d_name, ".tmp-"))
			cr_assert(asprintf(&found, "%s/%s", tmp_dir, de->d_name) > 0);
	closedir(d);
	return found;
}

/* ns_store_reserve takes disk blocks past the temp file's end; the commit
 * gives back what the database did not use. */
Test(store, reserved_blocks_are_given_back_at_commit)
{
	char *db = tmp_path("reserved.db");
	struct ns_store *s;
	struct ns_error err = { 0 };
	struct ns_trace t;
	struct stat st;
	int64_t id;
	cr_assert_eq(ns_store_create(db, &s, &err), 0, "%s", err.msg);
	ns_store_reserve(s, 64 << 20);
	char *tmp = find_temp_file(db);
	cr_assert_not_null(tmp);
	cr_assert_eq(stat(tmp, &st), 0);
	cr_expect_geq((int64_t)st.st_blocks * 512, 64 << 20, "reserved");
	cr_expect_lt(st.st_size, 1 << 20, "past the end: the size is SQLite's");

	cr_assert_eq(ns_store_begin_trace(s, &example_source, &id, &err), 0);
	ns_trace_init(&t);
	write_example_events(s, &t);
	cr_assert_eq(ns_store_end_trace(s, &t, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_store_commit(s, &err), 0, "%s", err.msg);
	cr_assert_eq(stat(db, &st), 0);
	cr_expect_lt((int64_t)st.st_blocks * 512, 1 << 20, "given back");
	expect_query(db, "SELECT count(*) > 0 AS n FROM events", NS_SQL_CSV, "n\r\n1\r\n");
	ns_trace_release(&t);
	free(tmp);
	free(db);
}

Test(store, create_in_a_missing_directory_fails_cleanly)
{
	struct ns_store *s = (struct ns_store *)1;
	struct ns_error err = { 0 };
	cr_expect_eq(ns_store_create("/nonexistent-dir/x.db", &s, &err), NS_ERR_IO);
	cr_expect_null(s);
	cr_expect_not_null(strstr(err.msg, "/nonexistent-dir/x.db"), "%s", err.msg);
}

/* A write that fails half-way (here: the file size limit; a full disk
 * takes the same path) is an I/O error naming the database, and leaves
 * nothing behind. */
Test(store, write_failure_is_an_io_error_and_leaves_nothing)
{
	char *db = tmp_path("big.db");
	struct ns_store *s;
	struct ns_error err = { 0 };
	struct ns_trace t;
	int64_t id;
	int rc;
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit limit = { 256 * 1024, 256 * 1024 };
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
	cr_assert_eq(ns_store_create(db, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_store_begin_trace(s, &example_source, &id, &err), 0);
	ns_trace_init(&t);
	do {
		struct ns_row_event raw;
		memset(&raw, 0, sizeof(raw));
		raw.ev.idx = (uint32_t)t.n_trace_events++;
		raw.ev.ts_ns = raw.ev.external_id = raw.ev.correlation = raw.ev_idx = NS_NONE;
		raw.rf_id = raw.seq_nr = raw.fwd_tid = raw.device = raw.stream = NS_NONE;
		raw.flops = NS_NONE;
		raw.args = "{\"padding\": \"................................................................\"}";
		raw.args_len = strlen(raw.args);
		rc = ns_store_event(s, &t, &raw, &err);
	} while (rc == 0 && t.n_trace_events < 100000);
	if (rc == 0 && (rc = ns_store_end_trace(s, &t, NULL, &err)) == 0)
		rc = ns_store_commit(s, &err);
	else
		ns_store_abort(s);
	cr_expect_eq(rc, NS_ERR_IO, "%s", err.msg);
	cr_expect_not_null(strstr(err.msg, db), "%s", err.msg);
	cr_expect_eq(count_dir_entries(), 0, "no database, no temp file");
	ns_trace_release(&t);
	free(db);
}

/* ---- the cache ---- */

Test(store, cache_path_and_validity)
{
	char *db;
	struct ns_trace t;
	struct ns_source_id changed = example_source;
	db = ns_cache_path(tmp_dir, &example_source, 1);
	cr_assert_not_null(db);
	cr_expect_eq(strncmp(db, tmp_dir, strlen(tmp_dir)), 0, "%s", db);
	cr_expect_str_eq(db + strlen(db) - 3, ".db");
	changed.size++;
	char *other = ns_cache_path(tmp_dir, &changed, 1);
	cr_expect_str_neq(db, other, "the key covers the size");
	free(other);
	char *again = ns_cache_path(tmp_dir, &example_source, 1);
	cr_expect_str_eq(db, again);
	free(again);

	cr_expect_not(ns_cache_valid(db, &example_source, 1), "no database yet");
	write_example_db(db, &t, false);
	ns_trace_release(&t);
	cr_expect(ns_cache_valid(db, &example_source, 1));
	cr_expect_not(ns_cache_valid(db, &changed, 1));
	changed = example_source;
	changed.mtime_ns++;
	cr_expect_not(ns_cache_valid(db, &changed, 1));
	cr_expect_not(ns_cache_valid(db, &example_source, 0));
	free(db);
}

/* A file of `size` bytes whose mtime is `age` seconds before now. */
static char *make_file(const char *name, size_t size, int age)
{
	char *path;
	cr_assert_geq(asprintf(&path, "%s/%s", tmp_dir, name), 0);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	for (size_t i = 0; i < size; i++)
		fputc('x', f);
	fclose(f);
	struct timespec times[2] = { { time(NULL) - age, 0 }, { time(NULL) - age, 0 } };
	cr_assert_eq(utimensat(AT_FDCWD, path, times, 0), 0);
	return path;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

Test(store, cache_prune_deletes_least_recently_used_first)
{
	char *a = make_file("0123456789abcdef0123456789abcdef.db", 100, 400); /* oldest */
	char *b = make_file("11111111111111111111111111111111.db", 200, 300); /* the one just written */
	char *c = make_file("22222222222222222222222222222222.db", 300, 200);
	char *d = make_file("33333333333333333333333333333333.db", 400, 100); /* newest */
	char *notes = make_file("notes.txt", 5000, 900);                    /* not ours: never deleted */
	char *odd = make_file("x.db", 5000, 900);
	char *upper = make_file("0123456789ABCDEF0123456789ABCDEF.db", 5000, 900);
	/* 1000 bytes of cache databases: a, then c, go (b is kept) -> 600 <= 750 */
	cr_expect_eq(ns_cache_prune(b, 750), 2);
	cr_expect_not(exists(a));
	cr_expect(exists(b), "the database in use is kept");
	cr_expect_not(exists(c));
	cr_expect(exists(d));
	cr_expect(exists(notes) && exists(odd) && exists(upper), "only cache-named files are deleted");
	cr_expect_eq(ns_cache_prune(b, 600), 0, "within the bound: nothing to do");
	cr_expect_eq(ns_cache_prune(b, 0), 1, "the kept one survives even a zero bound");
	cr_expect_not(exists(d));
	cr_expect(exists(b));
	ns_cache_touch(b);
	struct stat st;
	cr_assert_eq(stat(b, &st), 0);
	cr_expect_geq(st.st_mtime, time(NULL) - 5, "touched: now the most recently used");
	for (char **p = (char *[]){ a, b, c, d, notes, odd, upper, NULL }; *p; p++) {
		unlink(*p);
		free(*p);
	}
}

/* ---- sql ---- */

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	char *buf = malloc(*len ? *len : 1);
	cr_assert_eq(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

Test(store, sql_is_read_only)
{
	char *db = tmp_path("ro.db"), *attached = tmp_path("attached.db"), *vacuumed = tmp_path("copy.db");
	struct ns_trace t;
	write_example_db(db, &t, false);
	ns_trace_release(&t);
	size_t before_len, after_len;
	char *before = read_file(db, &before_len);
	char *attach_sql, *vacuum_sql;
	cr_assert(asprintf(&attach_sql, "ATTACH DATABASE '%s' AS x", attached) > 0);
	cr_assert(asprintf(&vacuum_sql, "VACUUM INTO '%s'", vacuumed) > 0);
	const struct {
		const char *sql, *message;
	} refused[] = {
		{ "DROP TABLE events", "query refused: DROP TABLE is not allowed" },
		{ "drop view kernels", "query refused: DROP VIEW is not allowed" },
		{ "INSERT INTO strings VALUES (999, 'x')", "query refused: INSERT into strings is not allowed" },
		{ "UPDATE strings SET text = 'x'", "query refused: UPDATE of strings is not allowed" },
		{ "DELETE FROM strings", "query refused: DELETE from strings is not allowed" },
		{ "/* c */ CREATE TABLE t (x)", "query refused: CREATE TABLE is not allowed" },
		{ "ALTER TABLE events RENAME TO e", "query refused: ALTER TABLE events is not allowed" },
		{ attach_sql, "query refused: ATTACH DATABASE is not allowed" },
		{ "PRAGMA user_version = 5", "query refused: PRAGMA user_version is not allowed" },
		{ "PRAGMA writable_schema = ON", "query refused: PRAGMA writable_schema is not allowed" },
		{ "BEGIN", "query refused: BEGIN is not allowed" },
		{ "ANALYZE", "query refused: ANALYZE is not allowed" },
		{ vacuum_sql, "query refused: the statement would write" },
		{ "SELECT 1; DROP TABLE events", "query refused: give one SQL statement, not several" },
		{ "SELECT 1; SELECT 2", "query refused: give one SQL statement, not several" },
		{ "SELECT * FROM no_such_table", "SQL error: no such table: no_such_table" },
		{ " -- nothing\n ; ", "the query is empty" },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct ns_error err = { 0 };
		char *out = query(db, refused[i].sql, NS_SQL_TABLE, &err);
		cr_expect_null(out, "accepted: %s", refused[i].sql);
		free(out);
		cr_expect_eq(err.status, NS_ERR_USAGE, "%s", refused[i].sql);
		cr_expect_not_null(strstr(err.msg, db), "names the database: %s", err.msg);
		cr_expect_not_null(strstr(err.msg, refused[i].message), "%s\n  got: %s", refused[i].sql, err.msg);
	}
	char *after = read_file(db, &after_len);
	cr_expect_eq(before_len, after_len);
	cr_expect_eq(memcmp(before, after, before_len), 0, "the database is unchanged");
	cr_expect_not(file_exists(attached));
	cr_expect_not(file_exists(vacuumed));
	/* trailing semicolons and comments are one statement */
	expect_query(db, "SELECT count(*) AS n FROM traces; -- done\n", NS_SQL_CSV, "n\r\n1\r\n");
	free(before);
	free(after);
	free(attach_sql);
	free(vacuum_sql);
	free(attached);
	free(vacuumed);
	free(db);
}

Test(store, sql_errors_name_the_database)
{
	struct ns_error err = { 0 };
	char *out = query("/nonexistent/x.db", "SELECT 1", NS_SQL_TABLE, &err);
	cr_expect_null(out);
	cr_expect_eq(err.status, NS_ERR_IO);
	cr_expect_str_eq(err.msg, "/nonexistent/x.db: cannot open the database: No such file or directory");
}

/* One small result in every format: integers, reals (shortest round trip,
 * ".0" on integral values, Inf), text needing quotes/escapes, UTF-8, NULL. */
static const char tiny_query[] =
	"SELECT 1 AS n, 'plain' AS s, 2.5 AS r, NULL AS z UNION ALL "
	"SELECT -22, 'a,b \"q\"', 0.1 + 0.2, 'x' UNION ALL "
	"SELECT 333, 'héllo' || char(10) || 'x', 100.0, 1.0 / 3 UNION ALL "
	"SELECT 4, '', 1e999, -1e999";

Test(store, sql_table_format)
{
	char *db = tmp_path("fmt.db");
	struct ns_trace t;
	write_example_db(db, &t, false);
	ns_trace_release(&t);
	/* n and r hold only numbers: right-aligned; z mixes text and numbers;
	 * the newline in s is shown escaped so the row stays on one line */
	expect_query(db, tiny_query, NS_SQL_TABLE,
		     "  n  s                           r  z\n"
		     "---  --------  -------------------  ------------------\n"
		     "  1  plain                     2.5\n"
		     "-22  a,b \"q\"   0.30000000000000004  x\n"
		     "333  héllo\\nx                100.0  0.3333333333333333\n"
		     "  4                            Inf  -Inf\n");
	expect_query(db, "SELECT 1 AS a WHERE 0", NS_SQL_TABLE, "a\n-\n");
	free(db);
}

Test(store, sql_csv_format)
{
	char *db = tmp_path("fmt.db");
	struct ns_trace t;
	write_example_db(db, &t, false);
	ns_trace_release(&t);
	expect_query(db, tiny_query, NS_SQL_CSV,
		     "n,s,r,z\r\n"
		     "1,plain,2.5,\r\n"
		     "-22,\"a,b \"\"q\"\"\",0.30000000000000004,x\r\n"
		     "333,\"héllo\nx\",100.0,0.3333333333333333\r\n"
		     "4,,Inf,-Inf\r\n");
	free(db);
}

Test(store, sql_json_format)
{
	char *db = tmp_path("fmt.db");
	struct ns_trace t;
	write_example_db(db, &t, false);
	ns_trace_release(&t);
	expect_query(db, tiny_query, NS_SQL_JSON,
		     "[\n"
		     "  {\"n\": 1, \"s\": \"plain\", \"r\": 2.5, \"z\": null},\n"
		     "  {\"n\": -22, \"s\": \"a,b \\\"q\\\"\", \"r\": 0.30000000000000004, \"z\": \"x\"},\n"
		     "  {\"n\": 333, \"s\": \"héllo\\nx\", \"r\": 100.0, \"z\": 0.3333333333333333},\n"
		     "  {\"n\": 4, \"s\": \"\", \"r\": null, \"z\": null}\n"
		     "]\n");
	expect_query(db, "SELECT CAST(x'ff41' AS TEXT) AS bad, x'00ff' AS blob", NS_SQL_JSON,
		     "[\n  {\"bad\": \"\\ufffdA\", \"blob\": \"00ff\"}\n]\n");
	expect_query(db, "SELECT 1 AS a WHERE 0", NS_SQL_JSON, "[]\n");
	free(db);
}

/* ---- benchmark ---- */

/* Wall time: the inserts run on the store's writer thread, so the
 * process's CPU time would count both threads. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Kernel launches as a Kineto trace has them (op, runtime call, flow start,
 * kernel, flow end) with realistic args. The events are prepared first so
 * only the store is timed: the sink, then end_trace (event_stats for every
 * X event, flows) and commit (indexes). */
Test(store, bench)
{
	const char *env = getenv("NS_STORE_BENCH");
	if (!env)
		cr_skip_test("set NS_STORE_BENCH=<events> to measure the insert rate");
	size_t n_events = (size_t)atol(env);
	char *db = tmp_path("bench.db");
	struct ns_store *s;
	struct ns_error err = { 0 };
	struct ns_trace t;
	struct ns_agg agg = { 0 };
	struct ns_row_event *raws = calloc(n_events, sizeof(*raws));
	enum { N_ARGS = 1024 };
	char *args[N_ARGS], *flow_ids[N_ARGS];
	int64_t id;
	cr_assert_not_null(raws);
	ns_trace_init(&t);
	uint32_t cpu = thread_of(&t, "4242", "4242"), gpu = thread_of(&t, "0", "7");
	ns_str ops[97], cats[5] = { S(&t, "cpu_op"), S(&t, "cuda_runtime"), S(&t, "ac2g"), S(&t, "kernel"), S(&t, "ac2g") };
	ns_str launch = S(&t, "cudaLaunchKernel"), kernel = S(&t, "void gemm_kernel<128>(float*)"), dims = S(&t, "[[1024,4096],[4096]]");
	for (int k = 0; k < 97; k++) {
		char name[32];
		snprintf(name, sizeof(name), "aten::op_%d", k);
		ops[k] = S(&t, name);
	}
	for (int k = 0; k < N_ARGS; k++) {
		cr_assert(asprintf(&args[k], "{\"External id\": %d, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, "
				   "\"correlation\": %d, \"grid\": [128, 1, 1], \"block\": [256, 1, 1]}", 100000 + k, 100000 + k) > 0);
		cr_assert(asprintf(&flow_ids[k], "%d", 100000 + k) > 0);
	}
	for (size_t i = 0; i < n_events; i++) {
		struct ns_row_event *raw = &raws[i];
		int phase = (int)(i % 5);
		int64_t corr = 100000 + (int64_t)(i / 5);
		raw->ev = (struct ns_event){ .ts_ns = 1000000 + (int64_t)i * 1000, .external_id = corr,
					     .correlation = phase ? corr : NS_NONE,
					     .idx = (uint32_t)i, .thread = phase < 3 ? cpu : gpu,
					     .cat = (uint8_t)ns_cat_from_string(ns_strtab_get(&t.strings, cats[phase]),
										ns_strtab_len(&t.strings, cats[phase])) };
		raw->ev.name = phase == 0 ? ops[(i / 5) % 97] : phase == 1 ? launch : phase == 3 ? kernel : cats[2];
		raw->ev.input_dims = phase == 0 ? dims : 0;
		raw->ev.dur_ns = phase == 0 ? 5000 : phase == 1 ? 2000 : phase == 3 ? 3000 : 0;
		raw->ev.kind = phase == 2 ? NS_KIND_FLOW_S : phase == 4 ? NS_KIND_FLOW_F : NS_KIND_SLICE;
		raw->kept = true;
		raw->ph = phase == 2 ? NS_PH_S : phase == 4 ? NS_PH_F : NS_PH_X;
		raw->cat_text = cats[phase];
		raw->rf_id = raw->seq_nr = raw->fwd_tid = raw->device = raw->stream = NS_NONE;
		raw->ev_idx = phase ? NS_NONE : (int64_t)i;
		raw->mem_device_type = -1;
		if (raw->ph == NS_PH_X) {
			raw->args = args[i % N_ARGS];
			raw->args_len = strlen(raw->args);
		} else {
			const char *flow_id = flow_ids[(i / 5) % N_ARGS];
			raw->flow_id = (struct ns_row_flow_id){ .present = true, .is_int = true, .num = atoll(flow_id),
								.text = flow_id, .len = strlen(flow_id) };
		}
		cr_assert_eq(ns_trace_push(&t, &raw->ev), 0);
		t.n_trace_events++;
	}
	/* one FunctionEvent per X event, as the aggregator makes */
	agg.trace = &t;
	agg.fevents = calloc(n_events, sizeof(*agg.fevents));
	cr_assert_not_null(agg.fevents);
	for (size_t i = 0; i < n_events; i++) {
		if (raws[i].ph != NS_PH_X)
			continue;
		/* f is also the model's index: the X events are kept, the flow ends go to t.flows */
		int32_t f = (int32_t)agg.n_fevents++;
		agg.fevents[f] = (struct ns_fevent){ .event = f, .name = raws[i].ev.name, .thread = raws[i].ev.thread,
						     .device_type = i % 5 == 3 ? NS_DEV_CUDA : NS_DEV_CPU,
						     .link = i % 5 == 3 ? f - 2 : -1, .first_child = -1,
						     .next_sibling = -1 };
	}
	cr_assert_eq(ns_store_create(db, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_store_begin_trace(s, &example_source, &id, &err), 0);
	double start = now_s();
	for (size_t i = 0; i < n_events; i++) {
		cr_assert_eq(ns_store_event(s, &t, &raws[i], &err), 0, "%s", err.msg);
		if (raws[i].flow_id.present)
			cr_assert_eq(ns_flow_pairs_add(&emitted_flows, &t, &raws[i], ns_store_flow, s, &err), 0, "%s", err.msg);
	}
	emit_end(s, &t);
	double sunk = now_s();
	cr_assert_eq(ns_store_end_trace(s, &t, &agg, &err), 0, "%s", err.msg);
	double ended = now_s();
	cr_assert_eq(ns_store_commit(s, &err), 0, "%s", err.msg);
	double done = now_s();
	struct stat st;
	stat(db, &st);
	fprintf(stderr, "store bench: %zu events: wall time: sink %.3f s, end_trace %.3f s, commit %.3f s: %.0f events/s, %.1f MB\n",
		n_events, sunk - start, ended - sunk, done - ended, (double)n_events / (done - start),
		(double)st.st_size / 1e6);
	for (int k = 0; k < N_ARGS; k++) {
		free(args[k]);
		free(flow_ids[k]);
	}
	free(agg.fevents);
	free(raws);
	ns_trace_release(&t);
	free(db);
}

/* events.id is unique in the database: a later trace's ids start after the
 * earlier one's, at its traces.first_event_id, and load turns them back
 * into positions in traceEvents. */
/* event_memory rows are held back in batches, so that they do not break
 * the runs of event_stats rows: 5000 of 10000 ops have memory, more than a
 * batch, and every one of them gets its row, no other op does. */
Test(store, event_memory_has_a_row_per_op_with_memory)
{
	enum { N_OPS = 10000 };
	static struct ns_fevent fevents[N_OPS];
	static int64_t mem_ts[N_OPS / 2], mem_cpu_sum[N_OPS / 2 + 1], mem_dev_sum[N_OPS / 2 + 1];
	char *db = tmp_path("memory.db");
	struct ns_store *s;
	struct ns_trace t;
	struct ns_agg agg = { 0 };
	struct ns_error err = { 0 };
	int64_t trace_id;
	cr_assert_eq(ns_store_create(db, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_store_begin_trace(s, &example_source, &trace_id, &err), 0, "%s", err.msg);
	ns_trace_init(&t);
	t.path = strdup("memory.json");
	for (int i = 0; i < N_OPS; i++) {
		emit(s, &t, RAW(.ph = NS_PH_X, .cat = "cpu_op", .name = "aten::empty", .pid = "1", .tid = "1",
				.ts_ns = 1000 * (int64_t)i, .dur_ns = 500, .kept = true));
		fevents[i] = (struct ns_fevent){ .event = i, .name = S(&t, "aten::empty"), .link = -1,
						 .first_child = -1, .next_sibling = -1, .has_records = i % 2 == 0 };
	}
	for (int k = 0; k < N_OPS / 2; k++) { /* one record of k + 1 bytes inside every even op */
		mem_ts[k] = 2000 * (int64_t)k + 100;
		mem_cpu_sum[k + 1] = mem_cpu_sum[k] + k + 1;
	}
	agg.trace = &t;
	agg.fevents = fevents;
	agg.n_fevents = N_OPS;
	agg.has_mem = true;
	agg.mem_ts = mem_ts;
	agg.mem_cpu_sum = mem_cpu_sum;
	agg.mem_dev_sum = mem_dev_sum;
	agg.n_mem_recs = N_OPS / 2;
	cr_assert_eq(ns_store_end_trace(s, &t, &agg, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_store_commit(s, &err), 0, "%s", err.msg);
	ns_trace_release(&t);
	expect_query(db, "SELECT count(*), sum(event_id % 2), min(event_id), max(event_id), sum(cpu_mem), "
			 "sum(self_cpu_mem = cpu_mem), sum(device_mem) FROM event_memory",
		     NS_SQL_CSV,
		     "count(*),sum(event_id % 2),min(event_id),max(event_id),sum(cpu_mem),sum(self_cpu_mem = cpu_mem),"
		     "sum(device_mem)\r\n5000,0,0,9998,12502500,5000,0\r\n");
	expect_query(db, "SELECT count(*), sum(cpu_mem), sum(cpu_mem = event_id / 2 + 1) FROM ops", NS_SQL_CSV,
		     "count(*),sum(cpu_mem),sum(cpu_mem = event_id / 2 + 1)\r\n10000,12502500,5000\r\n");
	free(db);
}

Test(store, event_ids_are_unique_across_traces)
{
	char *db = tmp_path("example.db");
	struct ns_trace t;
	write_example_db(db, &t, true);
	ns_trace_release(&t);
	expect_query(db, "SELECT id, path, n_trace_events, first_event_id FROM traces ORDER BY id", NS_SQL_TABLE,
		     "id  path                 n_trace_events  first_event_id\n"
		     "--  -------------------  --------------  --------------\n"
		     " 1  traces/example.json              18               0\n"
		     " 2  b.json                            1              18\n");
	expect_query(db, "SELECT e.trace_id, e.id, e.id - t.first_event_id AS position, e.name, s.event_id "
			 "FROM named_events e JOIN traces t ON t.id = e.trace_id "
			 "LEFT JOIN event_stats s ON s.event_id = e.id WHERE e.id >= 16 ORDER BY e.id",
		     NS_SQL_TABLE,
		     "trace_id  id  position  name                  event_id\n"
		     "--------  --  --------  --------------------  --------\n"
		     "       1  16        16  PyTorch Profiler (0)\n"
		     "       1  17        17  Record Window End\n"
		     "       2  18         0  aten::mm\n");
	free(db);
}

/* ---- the writer thread's row queue (store/rowq.h) ---- */

static const struct ns_rowq_stmt rowq_insert[] = { { .table = "r", .what = "cannot store a row" } };

/* A database with table r, in a transaction (as the store's), committed
 * by rowq_close. */
static sqlite3 *rowq_db(const char *path, const char *table_sql)
{
	sqlite3 *db;
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL),
		     SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN", NULL, NULL, NULL),
		     SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, table_sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	return db;
}

static void rowq_close(sqlite3 *db)
{
	cr_assert_eq(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
}

/* Rows arrive in order with every value, in the producer's thread and in
 * the writer's, including a text larger than a chunk. */
Test(store, rowq_runs_every_row_in_order)
{
	enum { N = 20000, BIG = 3 << 20 };
	char *big = malloc(BIG);
	cr_assert_not_null(big);
	memset(big, 'x', BIG);
	for (int threaded = 0; threaded <= 1; threaded++) {
		char *path = tmp_path(threaded ? "threaded.db" : "inline.db");
		sqlite3 *db = rowq_db(path, "CREATE TABLE r (i INTEGER NOT NULL, n INTEGER, t TEXT)");
		struct ns_rowq *q;
		struct ns_error err = { 0 };
		cr_assert_eq(ns_rowq_start(&q, db, rowq_insert, 1, path, threaded, &err), 0);
		for (int i = 0; i < N; i++) {
			char text[32];
			int len = snprintf(text, sizeof(text), "row %d", i);
			ns_rowq_row(q, 0);
			ns_rowq_int(q, i);
			ns_rowq_opt(q, i % 2 ? (int64_t)i * 1000000000 : NS_NONE);
			if (i == N / 2)
				ns_rowq_text(q, big, BIG);
			else
				ns_rowq_text(q, text, (size_t)len);
			cr_assert_eq(ns_rowq_end_row(q, &err), 0, "%s", err.msg);
		}
		cr_assert_eq(ns_rowq_finish(q, &err), 0, "%s", err.msg);
		rowq_close(db);
		expect_query(path, "SELECT count(*), sum(i), count(n), sum(n) / 1000000000, max(length(t)), "
				   "sum(rowid != i + 1), (SELECT t FROM r WHERE i = 12345) FROM r",
			     NS_SQL_CSV,
			     "count(*),sum(i),count(n),sum(n) / 1000000000,max(length(t)),sum(rowid != i + 1),"
			     "(SELECT t FROM r WHERE i = 12345)\r\n"
			     "20000,199990000,10000,100000000,3145728,0,row 12345\r\n");
		free(path);
	}
	free(big);
}

/* The writer stops at its first failure, and the producer hears of it
 * with SQLite's message and what the row was. */
Test(store, rowq_reports_the_writers_failure)
{
	for (int threaded = 0; threaded <= 1; threaded++) {
		char *path = tmp_path(threaded ? "threaded.db" : "inline.db");
		sqlite3 *db = rowq_db(path, "CREATE TABLE r (i INTEGER NOT NULL, n INTEGER, t TEXT)");
		struct ns_rowq *q;
		struct ns_error err = { 0 };
		int rc = 0, i;
		cr_assert_eq(ns_rowq_start(&q, db, rowq_insert, 1, path, threaded, &err), 0);
		for (i = 0; i < 100000 && !rc; i++) {
			ns_rowq_row(q, 0);
			ns_rowq_opt(q, i == 5000 ? NS_NONE : i); /* NOT NULL */
			ns_rowq_null(q);
			ns_rowq_text(q, "a text of some length to fill the chunks", 41);
			rc = ns_rowq_end_row(q, &err);
		}
		if (!rc)
			rc = ns_rowq_finish(q, &err);
		else
			cr_expect_eq(ns_rowq_finish(q, NULL), NS_ERR_IO);
		cr_expect_eq(rc, NS_ERR_IO);
		char *expected;
		cr_assert(asprintf(&expected, "%s: cannot store a row: NOT NULL constraint failed: r.i", path) > 0);
		cr_expect_str_eq(err.msg, expected);
		rowq_close(db);
		expect_query(path, "SELECT count(*), max(i) FROM r", NS_SQL_CSV, "count(*),max(i)\r\n5000,4999\r\n");
		free(expected);
		free(path);
	}
}

/* A row with the wrong number of values is a programming error (the
 * statement and its caller disagree): NS_ASSERT aborts, never an input
 * error with exit 1. */
Test(store, rowq_aborts_on_a_row_with_the_wrong_number_of_values, .signal = SIGABRT)
{
	char *path = tmp_path("arity.db");
	sqlite3 *db = rowq_db(path, "CREATE TABLE r (i, n, t)");
	struct ns_rowq *q;
	struct ns_error err = { 0 };
	cr_assert_eq(ns_rowq_start(&q, db, rowq_insert, 1, path, false, &err), 0);
	ns_rowq_row(q, 0);
	ns_rowq_int(q, 1);
	ns_rowq_int(q, 2);
	ns_rowq_end_row(q, &err);
}

/* The result cache's entries (store/result.c): a written entry reads back
 * as written; any other key, and any cut or changed byte, is a miss. */
Test(store, a_result_entry_reads_back_only_whole_and_for_its_own_key)
{
	static const unsigned char log[] = { 2, 3, 0, 0, 0, 'w', '!', '\n', 1, 2, 0, 0, 0, 'o', 'k' };
	const char *key = "command report\narg 5:x.json\n";
	char *path = ns_result_path(tmp_dir, key, strlen(key));
	struct ns_error err = { 0 };
	struct ns_result r;
	cr_assert_not_null(path);
	cr_assert_eq(ns_result_read(path, key, strlen(key), &r), -1, "no entry yet: a miss");
	cr_assert_eq(ns_result_write(path, key, strlen(key), 4, log, sizeof(log), &err), 0, "%s", err.msg);
	cr_assert_eq(ns_result_read(path, key, strlen(key), &r), 0);
	cr_expect_eq(r.code, 4);
	cr_assert_eq(r.len, sizeof(log));
	cr_expect_eq(memcmp(r.log, log, sizeof(log)), 0);
	ns_result_release(&r);
	cr_expect_eq(ns_result_read(path, "command report\narg 5:y.json\n", strlen(key), &r), -1, "another key");
	/* the file: 28 header bytes, the key, the log, an 8-byte checksum */
	FILE *f = fopen(path, "rb");
	unsigned char whole[256];
	size_t n = fread(whole, 1, sizeof(whole), f);
	fclose(f);
	cr_assert_eq(n, 28 + strlen(key) + sizeof(log) + 8);
	for (size_t cut = 0; cut < n; cut += 7) { /* cut short */
		f = fopen(path, "wb");
		fwrite(whole, 1, cut, f);
		fclose(f);
		cr_expect_eq(ns_result_read(path, key, strlen(key), &r), -1, "cut at %zu", cut);
	}
	for (size_t at = 0; at < n; at++) { /* one bit flipped anywhere */
		whole[at] ^= 0x10;
		f = fopen(path, "wb");
		fwrite(whole, 1, n, f);
		fclose(f);
		cr_expect_eq(ns_result_read(path, key, strlen(key), &r), -1, "byte %zu flipped", at);
		whole[at] ^= 0x10;
	}
	cr_expect(!ns_result_log_valid(log, sizeof(log) - 1), "a cut record");
	cr_expect(ns_result_log_valid((const unsigned char[]){ 3, 0, 0, 0, 0 }, 5), "stream 3: html -o's page");
	cr_expect(!ns_result_log_valid((const unsigned char[]){ 4, 0, 0, 0, 0 }, 5), "stream 4");
	cr_expect(!ns_result_log_valid((const unsigned char[]){ 0, 0, 0, 0, 0 }, 5), "stream 0");
	unlink(path);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_expect_eq(ns_result_write(path, key, strlen(key), 0, log, sizeof(log), &err), NS_ERR_IO);
	cr_expect(strstr(err.msg, "is a directory; not replaced"), "%s", err.msg);
	rmdir(path);
	free(path);
}

/* Pruning counts result entries with the databases, and deletes them too. */
Test(store, pruning_takes_result_entries_into_account)
{
	char *old = ns_result_path(tmp_dir, "a", 1), *keep = ns_result_path(tmp_dir, "b", 1);
	static const unsigned char log[4096 + 5] = { 1, 0, 16, 0, 0 };
	struct ns_error err = { 0 };
	cr_assert_eq(ns_result_write(old, "a", 1, 0, log, sizeof(log), &err), 0);
	struct timespec past[2] = { { .tv_sec = 1000 }, { .tv_sec = 1000 } };
	utimensat(AT_FDCWD, old, past, 0);
	cr_assert_eq(ns_result_write(keep, "b", 1, 0, log, sizeof(log), &err), 0);
	cr_expect_eq(ns_cache_prune(keep, 6000), 1);
	cr_expect_neq(access(old, F_OK), 0, "the older entry is deleted");
	cr_expect_eq(access(keep, F_OK), 0, "the entry just written stays");
	unlink(keep);
	free(old);
	free(keep);
}
