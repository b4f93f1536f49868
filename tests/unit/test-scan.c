/* Ingest: the streaming scanner (src/ingest/json/scan.c), the byte sources
 * (source.c: plain, gzip, zstd) and the Kineto event parser (kineto.c),
 * driven through ns_ingest_file on small inline traces written to a
 * temporary directory (spec Part B). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "common/trace.h"
#include "common/vec.h"
#include "ingest/ingest.h"
#include "ingest/json/scan.h"

static char tmpdir[256];

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ns-test-scan-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(scan, .init = setup, .fini = teardown);
TestSuite(kineto, .init = setup, .fini = teardown);
TestSuite(errors, .init = setup, .fini = teardown);
TestSuite(compressed, .init = setup, .fini = teardown);

/* ---- helpers ---- */

static char *path_for(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ & 3];
	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

static const char *write_bytes(const char *name, const void *data, size_t len)
{
	const char *p = path_for(name);
	FILE *f = fopen(p, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
	return p;
}

static const char *write_text(const char *name, const char *text)
{
	return write_bytes(name, text, strlen(text));
}

/* gzip with zlib (gzip header, so the magic 1f 8b is there) */
static size_t gzip_bytes(const char *in, size_t n, unsigned char **out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	size_t cap = deflateBound(&z, (uLong)n) + 64;
	*out = malloc(cap);
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)n;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	size_t len = cap - z.avail_out;
	deflateEnd(&z);
	return len;
}

static size_t zstd_bytes(const char *in, size_t n, unsigned char **out)
{
	size_t cap = ZSTD_compressBound(n);
	*out = malloc(cap);
	size_t len = ZSTD_compress(*out, cap, in, n, 3);
	cr_assert(!ZSTD_isError(len));
	return len;
}

struct loaded {
	struct ns_trace t;
	struct ns_error warn, err;
	int rc;
};

static void load(struct loaded *l, const char *path, bool strict)
{
	struct ns_ingest_opts o = { .strict = strict };
	memset(l, 0, sizeof(*l));
	ns_trace_init(&l->t);
	l->rc = ns_ingest_file(path, &l->t, &o, &l->warn, &l->err);
}

static void load_ok(struct loaded *l, const char *path)
{
	load(l, path, false);
	cr_assert_eq(l->rc, 0, "ingest of %s failed: %s", path, l->err.msg);
}

static const char *S(const struct ns_trace *t, ns_str id)
{
	return ns_strtab_get(&t->strings, id);
}

static const struct ns_event *find_event(const struct ns_trace *t, const char *name, int nth)
{
	for (size_t i = 0; i < t->n_events; i++)
		if (strcmp(S(t, t->events[i].name), name) == 0 && nth-- == 0)
			return &t->events[i];
	cr_assert_fail("no event named %s", name);
	return NULL;
}

/* "path:LINE:COL: " for the first occurrence of `needle` in `text` */
static void where(char *out, size_t n, const char *path, const char *text, const char *needle)
{
	const char *hit = strstr(text, needle);
	cr_assert_not_null(hit, "test bug: '%s' not in the text", needle);
	int line = 1;
	const char *line_start = text;
	for (const char *p = text; p < hit; p++)
		if (*p == '\n') {
			line++;
			line_start = p + 1;
		}
	snprintf(out, n, "%s:%d:%d", path, line, (int)(hit - line_start) + 1);
}

/* The worked example's shape (spec D1), trimmed: era C. */
static const char ERA_C[] =
	"{\n"
	"  \"schemaVersion\": 1,\n"
	"  \"deviceProperties\": [ { \"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\" } ],\n"
	"  \"cuda_runtime_version\": 12040, \"profile_memory\": 1,\n"
	"  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 8, \"pg_count\": 1},\n"
	"  \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1730000000000000000,\n"
	"  \"traceEvents\": [\n"
	"  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 4242, \"tid\": 4242,\n"
	"   \"ts\": 1010.000, \"dur\": 200.000, \"args\": {\"External id\": 1, \"Record function id\": 0, \"Ev Idx\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 4242, \"tid\": 4242, \"ts\": 1020.500, \"dur\": 30.250,\n"
	"   \"args\": {\"External id\": 2, \"Input Dims\": [[1024], [1024], []], \"Input type\": [\"float\", \"float\", \"Scalar\"],\n"
	"            \"Sequence number\": 7, \"Fwd thread id\": 0, \"Ev Idx\": 1}},\n"
	"  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 4242, \"tid\": 4242, \"ts\": 1023.000,\n"
	"   \"args\": {\"Total Reserved\": 2097152, \"Total Allocated\": 4096, \"Bytes\": -4096, \"Addr\": 139872634142720,\n"
	"            \"Device Id\": 0, \"Device Type\": 1, \"Ev Idx\": 3}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 4242, \"tid\": 4242, \"ts\": 1030.000,\n"
	"   \"dur\": 12.400, \"args\": {\"External id\": 2, \"cbid\": 211, \"correlation\": 101}},\n"
	"  {\"ph\": \"s\", \"id\": 101, \"pid\": 4242, \"tid\": 4242, \"ts\": 1030.000, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void k<4>(int)\", \"pid\": 0, \"tid\": 7, \"ts\": 1045.000, \"dur\": 4.321,\n"
	"   \"args\": {\"External id\": 2, \"device\": 0, \"stream\": 7, \"correlation\": 101, \"warps per SM\": \"inf\",\n"
	"            \"grid\": [2, 1, 1], \"block\": [128, 1, 1]}},\n"
	"  {\"ph\": \"f\", \"id\": 101, \"pid\": 0, \"tid\": 7, \"ts\": 1045.000, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"
	"  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 1000.000, \"pid\": 4242, \"tid\": 4242, \"args\": {\"name\": \"thread 4242 (python3)\"}},\n"
	"  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 1000.000, \"pid\": 0, \"tid\": 7, \"args\": {\"name\": \"stream 7 \"}},\n"
	"  {\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"train.py(12): step\", \"pid\": 4242, \"tid\": 4242, \"ts\": 1011.000, \"dur\": 1.0},\n"
	"  {\"ph\": \"X\", \"cat\": \"some_future_category\", \"name\": \"mystery\", \"pid\": 4242, \"tid\": 4242, \"ts\": 1012.000, \"dur\": 1.0},\n"
	"  {\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 1000.000, \"dur\": 300.000, \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
	"   \"name\": \"PyTorch Profiler (0)\", \"args\": {\"Op count\": 0}},\n"
	"  {\"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": 1000.000},\n"
	"  {\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": 1300.500}\n"
	"  ],\n"
	"  \"traceName\": \"trace.json\"\n"
	"}\n";

#define ERA_C_ELEMENTS 14 /* elements of traceEvents above */

static void check_era_c(const struct loaded *l)
{
	const struct ns_trace *t = &l->t;
	cr_assert_eq(t->n_trace_events, ERA_C_ELEMENTS);
	/* kept: 1 annotation, 1 op, 1 memory, 1 runtime, 1 kernel, 1 Trace span; and 2 flow ends */
	cr_assert_eq(t->n_events, 6, "kept %zu events", t->n_events);
	cr_assert_eq(t->n_flows, 2, "kept %zu flow ends", t->n_flows);
	cr_assert(!t->legacy_array);
	cr_assert(t->has_base_time);
	cr_assert_eq(t->base_time_ns, INT64_C(1730000000000000000));
	cr_assert(t->ts_has_fraction);
	cr_assert(t->profile_memory);
	cr_assert_eq(t->rank, 3);
	cr_assert_eq(t->world_size, 8);
	cr_assert_eq(t->truncated_at, -1);

	const struct ns_event *ua = find_event(t, "ProfilerStep#1", 0);
	cr_assert_eq(ua->cat, NS_CAT_USER_ANNOTATION);
	cr_assert_eq(ua->kind, NS_KIND_SLICE);
	cr_assert_eq(ua->ts_ns, 1010000);
	cr_assert_eq(ua->dur_ns, 200000);
	cr_assert_eq(ua->external_id, 1);
	/* ("Ev Idx" goes to the store only: tests/unit/test-store.c) */
	cr_assert_eq(ua->idx, 0);

	const struct ns_event *op = find_event(t, "aten::add", 0);
	cr_assert_eq(op->cat, NS_CAT_CPU_OP);
	cr_assert_eq(op->ts_ns, 1020500);
	cr_assert_eq(op->dur_ns, 30250);
	cr_assert_eq(op->external_id, 2);
	cr_assert_eq(op->correlation, NS_NONE);
	cr_assert_eq(op->idx, 1);
	cr_assert_str_eq(S(t, op->input_dims), "[[1024],[1024],[]]");
	cr_assert(op->flags & NS_EV_TS_FRACTION);

	const struct ns_event *mem = find_event(t, "[memory]", 0);
	cr_assert_eq(mem->kind, NS_KIND_MEMORY);
	cr_assert_eq(mem->mem.bytes, -4096);
	cr_assert_eq(mem->mem.device_type, 1);
	cr_assert_eq(mem->ts_ns, 1023000);

	const struct ns_event *rt = find_event(t, "cudaLaunchKernel", 0);
	cr_assert_eq(rt->cat, NS_CAT_CUDA_RUNTIME);
	cr_assert_eq(rt->correlation, 101);
	cr_assert_eq(rt->external_id, 2);
	cr_assert_eq(rt->dur_ns, 12400);

	const struct ns_event *k = find_event(t, "void k<4>(int)", 0);
	cr_assert_eq(k->cat, NS_CAT_KERNEL);
	cr_assert_eq(k->dur_ns, 4321);
	cr_assert_eq(k->correlation, 101);
	cr_assert_eq(t->threads[k->thread].pid, 0);
	cr_assert_eq(t->threads[k->thread].tid, 7);
	cr_assert_str_eq(S(t, t->threads[k->thread].name), "stream 7 ");
	cr_assert_str_eq(S(t, t->threads[op->thread].name), "thread 4242 (python3)");
	cr_assert_eq(op->thread, rt->thread);
	cr_assert_neq(op->thread, k->thread);

	const struct ns_flow *fs = &t->flows[0], *ff = &t->flows[1];
	cr_assert_eq(fs->kind, NS_KIND_FLOW_S);
	cr_assert_eq(ff->kind, NS_KIND_FLOW_F);
	cr_assert_eq(fs->id, 101);
	cr_assert_eq(ff->id, 101);
	cr_assert_eq(ff->thread, k->thread);

	const struct ns_event *span = find_event(t, "PyTorch Profiler (0)", 0);
	cr_assert_eq(span->cat, NS_CAT_TRACE);
	cr_assert_eq(span->ts_ns, 1000000);
	const struct ns_thread *sth = &t->threads[span->thread];
	cr_assert_eq(sth->pid, NS_NONE);
	cr_assert_eq(sth->tid, NS_NONE);
	cr_assert_str_eq(S(t, sth->pid_text), "Spans");
	cr_assert_str_eq(S(t, sth->tid_text), "PyTorch Profiler");

	/* unknown and python_function categories are counted, not kept */
	for (size_t i = 0; i < t->n_events; i++) {
		cr_assert_str_neq(S(t, t->events[i].name), "mystery");
		cr_assert_str_neq(S(t, t->events[i].name), "train.py(12): step");
	}
	cr_assert(t->has_cat[NS_CAT_CPU_OP] && t->has_cat[NS_CAT_KERNEL] && t->has_cat[NS_CAT_CUDA_RUNTIME]);
	cr_assert(!t->has_cat[NS_CAT_PYTHON_FUNCTION]);
	cr_assert(!t->has_cat[NS_CAT_OTHER]);

	/* metadata keys, in file order, raw JSON text */
	cr_assert_str_eq(ns_trace_meta(t, "schemaVersion"), "1");
	cr_assert_str_eq(ns_trace_meta(t, "displayTimeUnit"), "\"ms\"");
	cr_assert_str_eq(ns_trace_meta(t, "traceName"), "\"trace.json\"");
	cr_assert_str_eq(ns_trace_meta(t, "baseTimeNanoseconds"), "1730000000000000000");
	cr_assert_null(ns_trace_meta(t, "traceEvents"));
}

Test(kineto, object_form_era_c)
{
	struct loaded l;
	load_ok(&l, write_text("trace.json", ERA_C));
	cr_assert_str_empty(l.warn.msg);
	check_era_c(&l);
	ns_trace_release(&l.t);
}

Test(compressed, gzip_gives_the_same_model)
{
	unsigned char *gz;
	size_t n = gzip_bytes(ERA_C, strlen(ERA_C), &gz);
	struct loaded l;
	load_ok(&l, write_bytes("trace.json.gz", gz, n));
	check_era_c(&l);
	ns_trace_release(&l.t);
	free(gz);
}

Test(compressed, gzip_detected_by_magic_not_name)
{
	unsigned char *gz;
	size_t n = gzip_bytes(ERA_C, strlen(ERA_C), &gz);
	struct loaded l;
	load_ok(&l, write_bytes("plain-name.json", gz, n));
	check_era_c(&l);
	ns_trace_release(&l.t);
	free(gz);
}

Test(compressed, concatenated_gzip_members)
{
	size_t half = strlen(ERA_C) / 2;
	unsigned char *a, *b;
	size_t na = gzip_bytes(ERA_C, half, &a), nb = gzip_bytes(ERA_C + half, strlen(ERA_C) - half, &b);
	unsigned char *both = malloc(na + nb);
	memcpy(both, a, na);
	memcpy(both + na, b, nb);
	struct loaded l;
	load_ok(&l, write_bytes("two-members.json.gz", both, na + nb));
	check_era_c(&l);
	ns_trace_release(&l.t);
	free(a);
	free(b);
	free(both);
}

Test(compressed, zstd_gives_the_same_model)
{
	unsigned char *zs;
	size_t n = zstd_bytes(ERA_C, strlen(ERA_C), &zs);
	struct loaded l;
	load_ok(&l, write_bytes("trace.json.zst", zs, n));
	check_era_c(&l);
	ns_trace_release(&l.t);
	free(zs);
}

Test(compressed, truncated_gzip_is_a_warning_with_salvaged_events)
{
	unsigned char *gz;
	/* make the file big enough that a cut keeps whole events */
	size_t one = strlen("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": 12345, \"dur\": 2},\n");
	size_t cap = 64 + 3000 * (one + 8);
	char *text = malloc(cap), *p = text;
	p += sprintf(p, "{\"traceEvents\": [\n");
	for (int i = 0; i < 3000; i++)
		p += sprintf(p, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 2},\n",
			     i, 10 * i);
	p += sprintf(p, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"last\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}\n");
	size_t n = gzip_bytes(text, (size_t)(p - text), &gz);
	const char *path = write_bytes("cut.json.gz", gz, n / 2);
	struct loaded l;
	load(&l, path, false);
	cr_assert_eq(l.rc, 0, "%s", l.err.msg);
	cr_assert_gt(l.t.n_events, 10);
	cr_assert_lt(l.t.n_events, 3001);
	cr_assert_geq(l.t.truncated_at, 0);
	char want[1024];
	snprintf(want, sizeof(want), "%s: truncated at byte %lld (the compressed stream is truncated); using the %zu complete events before it",
		 path, (long long)l.t.truncated_at, l.t.n_events);
	cr_assert_str_eq(l.warn.msg, want);
	/* salvaged events are whole and in order */
	for (size_t i = 0; i < l.t.n_events; i++) {
		char name[32];
		snprintf(name, sizeof(name), "op%zu", i);
		cr_assert_str_eq(S(&l.t, l.t.events[i].name), name);
		cr_assert_eq(l.t.events[i].ts_ns, (int64_t)(10000 * i));
	}
	ns_trace_release(&l.t);

	load(&l, path, true);
	cr_assert_eq(l.rc, NS_ERR_INPUT);
	cr_assert_eq(l.err.status, NS_ERR_INPUT);
	cr_assert(strstr(l.err.msg, "truncated at byte") != NULL, "%s", l.err.msg);
	cr_assert(strstr(l.err.msg, "the compressed stream is truncated") != NULL, "%s", l.err.msg);
	ns_trace_release(&l.t);
	free(gz);
	free(text);
}

Test(compressed, truncated_zstd_is_reported)
{
	unsigned char *zs;
	size_t n = zstd_bytes(ERA_C, strlen(ERA_C), &zs);
	const char *path = write_bytes("cut.json.zst", zs, n - 8);
	struct loaded l;
	load(&l, path, true);
	cr_assert_neq(l.rc, 0, "a cut zstd file must not load silently in strict mode");
	ns_trace_release(&l.t);
	free(zs);
}

/* Two loads are the same: status, messages and events. */
static void same_load(const struct loaded *x, const struct loaded *y, const char *what)
{
	cr_assert_eq(x->rc, y->rc, "%s: %d (%s) against %d (%s)", what, x->rc, x->err.msg, y->rc, y->err.msg);
	cr_assert_str_eq(x->err.msg, y->err.msg, "%s", what);
	cr_assert_str_eq(x->warn.msg, y->warn.msg, "%s", what);
	cr_assert_eq(x->t.n_events, y->t.n_events, "%s", what);
	cr_assert_eq(x->t.n_trace_events, y->t.n_trace_events, "%s", what);
	cr_assert_eq(x->t.truncated_at, y->t.truncated_at, "%s", what);
	for (size_t i = 0; i < x->t.n_events; i++) {
		cr_assert_str_eq(S(&x->t, x->t.events[i].name), S(&y->t, y->t.events[i].name), "%s", what);
		cr_assert_eq(x->t.events[i].ts_ns, y->t.events[i].ts_ns, "%s", what);
		cr_assert_eq(x->t.events[i].dur_ns, y->t.events[i].dur_ns, "%s", what);
	}
}

/* load() of bytes in memory, named name, with opts o. */
static void load_bytes(struct loaded *l, const void *bytes, size_t n, const char *name, struct ns_ingest_opts o)
{
	memset(l, 0, sizeof(*l));
	ns_trace_init(&l->t);
	l->rc = ns_ingest_mem(bytes, n, name, &l->t, &o, &l->warn, &l->err);
}

/* A file's stream is decompressed on a thread of its own (source.c
 * "ahead"), bytes in memory on each read: a trace of many 1 MiB chunks,
 * whole and cut, gives the same model and the same warning both ways. */
static void same_from_file_and_memory(const char *name, const unsigned char *bytes, size_t n)
{
	struct loaded f, m;
	const char *path = write_bytes(name, bytes, n);
	load(&f, path, false);
	load_bytes(&m, bytes, n, path, (struct ns_ingest_opts){ 0 });
	same_load(&f, &m, name);
	ns_trace_release(&f.t);
	ns_trace_release(&m.t);
}

Test(compressed, decompressed_ahead_equals_decompressed_on_read)
{
	size_t cap = 7u << 20, len = 0;
	char *text = malloc(cap);
	len += (size_t)sprintf(text, "{\"traceEvents\": [\n");
	for (int i = 0; len < (6u << 20); i++)
		len += (size_t)sprintf(text + len, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, "
					     "\"tid\": 1, \"ts\": %d, \"dur\": 2, \"args\": {\"Call stack\": \"%0*d\"}},\n",
				       i, 10 * i, 40 + i % 200, i);
	len += (size_t)sprintf(text + len, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"last\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}\n");
	cr_assert_gt(len, 5u << 20); /* more chunks than the decoder's slots */
	unsigned char *gz, *zs;
	size_t ngz = gzip_bytes(text, len, &gz), nzs = zstd_bytes(text, len, &zs);
	same_from_file_and_memory("big.json.gz", gz, ngz);
	same_from_file_and_memory("big.json.zst", zs, nzs);
	same_from_file_and_memory("big-cut.json.gz", gz, ngz * 2 / 3);
	same_from_file_and_memory("big-cut.json.zst", zs, nzs * 2 / 3);
	for (size_t i = ngz / 2; i < ngz / 2 + 40; i++)
		gz[i] ^= 0x5a;
	same_from_file_and_memory("big-bad.json.gz", gz, ngz);
	free(gz);
	free(zs);
	free(text);
}

/* Every byte of a gzip source, read n at a most a time (max_read; 0: as
 * the scanner would), through ISA-L when fast, and how it ended. */
static char *read_all(const unsigned char *gz, size_t len, bool fast, size_t n, size_t *out_len, int *end)
{
	struct ns_source *src;
	struct ns_error err = { 0 };
	cr_assert_eq(ns_source_open_mem(gz, len, "t.json.gz", 0, 0, &src, &err), 0, "%s", err.msg);
	bool used = fast && ns_source_fast_gzip(src);
#ifdef NS_HAVE_ISAL
	cr_assert_eq(used, fast, "ISA-L is built in but was not used");
#else
	cr_assert(!used);
#endif
	ns_source_set_max_read(src, n);
	size_t cap = 1 << 16, got = 0;
	char *out = malloc(cap);
	ssize_t r;
	while ((r = ns_source_read(src, out + got, cap - got, &err)) > 0)
		if ((got += (size_t)r) == cap)
			out = realloc(out, cap *= 2);
	*end = r < 0 ? -1 : ns_source_truncated(src) ? 1 : 0;
	ns_source_close(src);
	*out_len = got;
	return out;
}

/* A sound gzip stream: ISA-L hands out the bytes zlib does, across
 * members and the NUL padding after them, whatever the read size, and
 * never falls back (an error here would make every such file be read
 * twice: ns_ingest_file). The expected bytes are zlib's. */
Test(compressed, isal_reads_the_bytes_zlib_reads)
{
	size_t len = 0;
	char *text = malloc(3u << 20);
	for (int i = 0; len < (5u << 19); i++)
		len += (size_t)sprintf(text + len, "{\"name\": \"op%d\", \"ts\": %d, \"stack\": \"%0*d\"},\n", i * 7919 % 1000,
				       i, 1 + i % 300, i);
	unsigned char *a, *b;
	size_t na = gzip_bytes(text, len / 3, &a), nb = gzip_bytes(text + len / 3, len - len / 3, &b);
	unsigned char *two = malloc(na + nb + 4096);
	memcpy(two, a, na);
	memcpy(two + na, b, nb);
	memset(two + na + nb, 0, 4096); /* NUL padding, as tar and some writers leave */
	const struct { const unsigned char *gz; size_t len; } cases[] = { { a, na }, { two, na + nb }, { two, na + nb + 4096 } };
	const size_t reads[] = { 0, 1, 7, 4096, 1u << 20 };
	for (size_t c = 0; c < NS_ARRAY_SIZE(cases); c++) {
		for (size_t k = 0; k < NS_ARRAY_SIZE(reads); k++) {
			if (reads[k] == 1 && c > 0)
				continue; /* (byte by byte: the first case is enough) */
			size_t nz, ni;
			int ez, ei;
			char *z = read_all(cases[c].gz, cases[c].len, false, reads[k], &nz, &ez);
			char *i = read_all(cases[c].gz, cases[c].len, true, reads[k], &ni, &ei);
			cr_assert_eq(ez, 0, "case %zu: zlib ended with %d", c, ez);
			cr_assert_eq(ei, 0, "case %zu, reads of %zu: ISA-L ended with %d", c, reads[k], ei);
			cr_assert_eq(ni, nz, "case %zu, reads of %zu: %zu bytes against zlib's %zu", c, reads[k], ni, nz);
			cr_assert(memcmp(i, z, nz) == 0, "case %zu, reads of %zu", c, reads[k]);
			free(z);
			free(i);
		}
	}
	free(a);
	free(b);
	free(two);
	free(text);
}

/* A damaged or cut gzip trace loads as with zlib alone: the same error
 * (message, byte), warning and events. ISA-L decodes bytes past the
 * place zlib stops at in many damaged streams (a few to a hundred here),
 * which the parse reads; ns_ingest_mem reads those again with zlib. The
 * expected loads are zlib's (opts.gzip_zlib). */
Test(compressed, damaged_gzip_loads_as_with_zlib)
{
	size_t len = 0;
	char *text = malloc(1u << 16);
	len += (size_t)sprintf(text, "{\"traceEvents\": [\n");
	for (int i = 0; i < 300; i++)
		len += (size_t)sprintf(text + len, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, "
					     "\"tid\": 1, \"ts\": %d, \"dur\": %d}%s\n", i * 37 % 101, 10 * i, 1 + i % 9,
				       i < 299 ? "," : "");
	len += (size_t)sprintf(text + len, "]}\n");
	unsigned char *gz, *bad = NULL, *second;
	size_t n = gzip_bytes(text, len, &gz), n2 = gzip_bytes("\n", 1, &second);
	/* reserved flag bits set in the first or a second member's header
	 * (zlib: "unknown header flags set"; ISA-L reads them) */
	unsigned char *two = malloc(n + n2);
	memcpy(two, gz, n);
	memcpy(two + n, second, n2);
	for (int k = 0; k < 2; k++) {
		two[k ? n + 3 : 3] |= 0x20;
		struct loaded fast, zlib;
		load_bytes(&fast, two, n + n2, "t.json.gz", (struct ns_ingest_opts){ .gzip_zlib = false });
		load_bytes(&zlib, two, n + n2, "t.json.gz", (struct ns_ingest_opts){ .gzip_zlib = true });
		cr_assert_neq(zlib.rc, 0);
		same_load(&fast, &zlib, k ? "flags of the second member" : "flags of the first member");
		ns_trace_release(&fast.t);
		ns_trace_release(&zlib.t);
		two[k ? n + 3 : 3] &= (unsigned char)~0x20;
	}
	free(two);
	free(second);
	uint64_t seed = 42;
	for (int trial = 0; trial < 1500; trial++) {
		bad = realloc(bad, n);
		memcpy(bad, gz, n);
		size_t cut = n;
		for (int k = 0; k < 1 + trial % 3; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* (a third near the end: bytes decoded after the JSON text) */
			size_t at = trial % 3 == 2 ? n - 8 - 1 - (seed >> 33) % 24 : (seed >> 33) % n;
			bad[at] ^= (unsigned char)(1u << ((seed >> 20) % 8));
		}
		if (trial % 4 == 3)
			cut = (size_t)(seed >> 40) % n; /* cut as well */
		struct loaded fast, zlib;
		load_bytes(&fast, bad, cut, "t.json.gz", (struct ns_ingest_opts){ .gzip_zlib = false });
		load_bytes(&zlib, bad, cut, "t.json.gz", (struct ns_ingest_opts){ .gzip_zlib = true });
		char what[64];
		snprintf(what, sizeof(what), "trial %d", trial);
		same_load(&fast, &zlib, what);
		ns_trace_release(&fast.t);
		ns_trace_release(&zlib.t);
	}
	free(bad);
	free(gz);
	free(text);
}

Test(compressed, corrupt_gzip_is_an_input_error)
{
	unsigned char *gz;
	size_t n = gzip_bytes(ERA_C, strlen(ERA_C), &gz);
	for (size_t i = 20; i < 60 && i < n; i++)
		gz[i] ^= 0x5a;
	const char *path = write_bytes("bad.json.gz", gz, n);
	struct loaded l;
	load(&l, path, false);
	cr_assert_eq(l.rc, NS_ERR_INPUT, "rc %d: %s", l.rc, l.err.msg);
	char prefix[600];
	snprintf(prefix, sizeof(prefix), "%s: corrupt gzip stream near byte ", path);
	cr_assert(strncmp(l.err.msg, prefix, strlen(prefix)) == 0, "%s", l.err.msg);
	ns_trace_release(&l.t);
	free(gz);
}

Test(compressed, bad_gzip_checksum_mid_value_is_an_error_not_a_truncation)
{
	/* A gzip whose CRC trailer is wrong: zlib reports "incorrect data check"
	 * when the last block is inflated, which happens while the scanner is
	 * inside the last event. That is a corrupt file (NS_ERR_INPUT), not a
	 * short one: it must not load with a "truncated" warning. */
	const int n = 100000; /* ~9 MB: the end arrives in a refill inside an event */
	char *text = malloc((size_t)n * 120 + 256), *p = text;
	p += sprintf(p, "{\"traceEvents\": [\n");
	for (int i = 0; i < n; i++)
		p += sprintf(p, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1}%s\n",
			     i, i, i + 1 < n ? "," : "");
	p += sprintf(p, "]}\n");
	unsigned char *gz;
	size_t len = gzip_bytes(text, (size_t)(p - text), &gz);
	gz[len - 8] ^= 0xff; /* CRC32 */
	const char *path = write_bytes("badcrc.json.gz", gz, len);
	struct loaded l;
	load(&l, path, false);
	cr_assert_eq(l.rc, NS_ERR_INPUT, "rc %d, warning '%s'", l.rc, l.warn.msg);
	cr_assert(strstr(l.err.msg, "corrupt gzip stream") != NULL, "%s", l.err.msg);
	ns_trace_release(&l.t);
	free(gz);
	free(text);
}

static const char *write_blank_gz(const char *name, size_t blanks, size_t *gz_len)
{
	/* valid JSON that is almost all whitespace: compresses about 1000:1 */
	char *text = malloc(blanks + 64);
	size_t n = (size_t)sprintf(text, "{\"traceEvents\": [");
	memset(text + n, ' ', blanks);
	n += blanks;
	n += (size_t)sprintf(text + n, "]}");
	unsigned char *gz;
	*gz_len = gzip_bytes(text, n, &gz);
	const char *path = write_bytes(name, gz, *gz_len);
	free(gz);
	free(text);
	return path;
}

Test(compressed, decompression_ratio_limit)
{
	size_t gz_len;
	const char *path = write_blank_gz("bomb.json.gz", 8u << 20, &gz_len);
	struct ns_ingest_opts o = { .max_ratio = 50 };
	struct ns_trace t;
	struct ns_error warn = { 0 }, err = { 0 };
	ns_trace_init(&t);
	cr_assert_eq(ns_ingest_file(path, &t, &o, &warn, &err), NS_ERR_NOMEM, "%s", err.msg);
	char prefix[600];
	snprintf(prefix, sizeof(prefix), "%s: compression ratio above 50:1 at compressed byte ", path);
	cr_assert(strncmp(err.msg, prefix, strlen(prefix)) == 0, "%s", err.msg);
	cr_assert(strstr(err.msg, "(a decompression bomb?)") != NULL, "%s", err.msg);
	cr_assert(strstr(err.hint, "NEURON_STATS_MAX_RATIO") != NULL, "hint: %s", err.hint);
	ns_trace_release(&t);
}

Test(compressed, decompressed_size_limit)
{
	size_t gz_len;
	const char *path = write_blank_gz("big.json.gz", 3u << 20, &gz_len);
	struct ns_ingest_opts o = { .max_decompressed = 1u << 20 };
	struct ns_trace t;
	struct ns_error warn = { 0 }, err = { 0 };
	ns_trace_init(&t);
	cr_assert_eq(ns_ingest_file(path, &t, &o, &warn, &err), NS_ERR_NOMEM, "%s", err.msg);
	char want[600];
	snprintf(want, sizeof(want), "%s: decompressed size exceeds the limit of 1048576 bytes", path);
	cr_assert_str_eq(err.msg, want);
	ns_trace_release(&t);
}

Test(kineto, legacy_array_form_and_legacy_categories)
{
	/* PyTorch 1.8 era: a bare array, Operator/Runtime/Kernel/Memcpy/Memset,
	 * lower-case "external id", "async" flows, integer µs */
	const char *text =
		"[\n"
		"{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"aten::conv2d\", \"pid\": 100, \"tid\": \"100\", \"ts\": 1611000000000010, \"dur\": 50,\n"
		" \"args\": {\"Input dims\": [[1, 3, 224, 224], [64, 3, 7, 7]], \"external id\": 5}},\n"
		"{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": \"100\", \"ts\": 1611000000000020, \"dur\": 5,\n"
		" \"args\": {\"correlation\": 77, \"external id\": 77}},\n"
		"{\"ph\": \"s\", \"id\": 77, \"pid\": 100, \"tid\": 100, \"ts\": 1611000000000020, \"cat\": \"async\", \"name\": \"launch\"},\n"
		"{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"implicit_convolve_sgemm\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 1611000000000030, \"dur\": 9,\n"
		" \"args\": {\"correlation\": 77, \"external id\": 77, \"device\": 0, \"stream\": 7}},\n"
		"{\"ph\": \"f\", \"id\": 77, \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 1611000000000030, \"cat\": \"async\", \"name\": \"launch\", \"bp\": \"e\"},\n"
		"{\"ph\": \"X\", \"cat\": \"Memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 1611000000000040, \"dur\": 3},\n"
		"{\"ph\": \"X\", \"cat\": \"Memset\", \"name\": \"Memset (Device)\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 1611000000000045, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"gpu_user_Annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 1611000000000029, \"dur\": 12}\n"
		"]\n";
	struct loaded l;
	load_ok(&l, write_text("legacy.json", text));
	const struct ns_trace *t = &l.t;
	cr_assert(t->legacy_array);
	cr_assert(!t->ts_has_fraction);
	cr_assert(!t->has_base_time);
	cr_assert_eq(t->n_trace_events, 8);
	cr_assert_eq(t->n_events, 6); /* and 2 flow ends, below */
	const struct ns_event *op = find_event(t, "aten::conv2d", 0);
	cr_assert_eq(op->cat, NS_CAT_CPU_OP);
	cr_assert_eq(op->ts_ns, INT64_C(1611000000000010000));
	cr_assert_eq(op->dur_ns, 50000);
	cr_assert_eq(op->external_id, 5);
	cr_assert_str_eq(S(t, op->input_dims), "[[1,3,224,224],[64,3,7,7]]");
	/* "tid": "100" and "tid": 100 are the same track */
	cr_assert_eq(t->threads[op->thread].tid, 100);
	cr_assert_eq(find_event(t, "cudaLaunchKernel", 0)->cat, NS_CAT_CUDA_RUNTIME);
	cr_assert_eq(find_event(t, "implicit_convolve_sgemm", 0)->cat, NS_CAT_KERNEL);
	cr_assert_eq(find_event(t, "Memcpy HtoD", 0)->cat, NS_CAT_GPU_MEMCPY);
	cr_assert_eq(find_event(t, "Memset (Device)", 0)->cat, NS_CAT_GPU_MEMSET);
	cr_assert_eq(find_event(t, "ProfilerStep#3", 0)->cat, NS_CAT_GPU_USER_ANNOTATION);
	cr_assert_eq(t->n_flows, 2, "the legacy \"async\" category is ac2g");
	const struct ns_flow *fs = &t->flows[0], *ff = &t->flows[1];
	cr_assert_eq(fs->kind, NS_KIND_FLOW_S);
	cr_assert_eq(ff->kind, NS_KIND_FLOW_F);
	cr_assert_eq(ff->id, 77);
	const struct ns_thread *kth = &t->threads[find_event(t, "implicit_convolve_sgemm", 0)->thread];
	cr_assert_eq(kth->tid, NS_NONE);
	cr_assert_str_eq(S(t, kth->tid_text), "stream 7");
	ns_trace_release(&l.t);
}

/* (an empty table is never a success: docs/cli.md "Exit status") */
Test(kineto, empty_events_array_is_nothing_to_report)
{
	struct loaded l;
	load(&l, write_text("e.json", "{\"schemaVersion\": 1, \"traceEvents\": []}"), false);
	cr_assert_eq(l.rc, NS_ERR_UNSUPPORTED);
	cr_assert(strstr(l.err.msg, "e.json: the trace has no events: nothing to report"), "%s", l.err.msg);
	ns_trace_release(&l.t);
	load(&l, write_text("e2.json", "  [ ]  "), true);
	cr_assert_eq(l.rc, NS_ERR_UNSUPPORTED);
	cr_assert(strstr(l.err.msg, "e2.json: the trace has no events: nothing to report"), "%s", l.err.msg);
	ns_trace_release(&l.t);
}

Test(kineto, memory_and_oom_instants)
{
	const char *text =
		"{\"traceEvents\": [\n"
		"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5,\n"
		" \"args\": {\"Bytes\": 512, \"Device Type\": 0, \"Device Id\": -1, \"Addr\": 1}},\n"
		"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[OutOfMemory]\", \"pid\": 1, \"tid\": 1, \"ts\": 6,\n"
		" \"args\": {\"Bytes\": 1073741824, \"Device Type\": 1, \"Device Id\": 0}},\n"
		"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"something else\", \"pid\": 1, \"tid\": 1, \"ts\": 7}\n"
		"]}";
	struct loaded l;
	load_ok(&l, write_text("m.json", text));
	cr_assert(l.t.profile_memory, "a [memory] event turns profile_memory on");
	cr_assert_eq(l.t.n_events, 2);
	cr_assert_eq(l.t.n_trace_events, 3);
	cr_assert_eq(l.t.events[0].kind, NS_KIND_MEMORY);
	cr_assert_eq(l.t.events[0].mem.bytes, 512);
	cr_assert_eq(l.t.events[0].mem.device_type, 0);
	cr_assert_eq(l.t.events[1].kind, NS_KIND_OOM);
	cr_assert_eq(l.t.events[1].mem.bytes, 1073741824);
	cr_assert_eq(l.t.events[1].mem.device_type, 1);
	ns_trace_release(&l.t);
}

Test(kineto, profile_memory_key_without_events)
{
	struct loaded l;
	load_ok(&l, write_text("pm.json", "{\"profile_memory\": 1, \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}"));
	cr_assert(l.t.profile_memory);
	ns_trace_release(&l.t);
	load_ok(&l, write_text("pm0.json", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}"));
	cr_assert(!l.t.profile_memory);
	ns_trace_release(&l.t);
}

Test(kineto, flows_with_string_ids_are_not_links)
{
	const char *text =
		"{\"traceEvents\": [\n"
		"{\"ph\": \"s\", \"id\": \"0x1f\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
		"{\"ph\": \"s\", \"id\": 9, \"pid\": 1, \"tid\": 1, \"ts\": 5, \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\"},\n"
		"{\"ph\": \"f\", \"id\": 31, \"pid\": 0, \"tid\": 7, \"ts\": 6, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}\n"
		"]}";
	struct loaded l;
	load_ok(&l, write_text("fl.json", text));
	cr_assert_eq(l.t.n_trace_events, 3);
	cr_assert_eq(l.t.n_events, 0);
	cr_assert_eq(l.t.n_flows, 1, "only the ac2g flow with an integer id");
	cr_assert_eq(l.t.flows[0].kind, NS_KIND_FLOW_F);
	cr_assert_eq(l.t.flows[0].id, 31);
	ns_trace_release(&l.t);
}

Test(kineto, unfinished_and_negative_duration)
{
	const char *text =
		"{\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 100, \"args\": {\"finished\": false}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": -3, \"args\": {\"finished\": true}}\n"
		"]}";
	struct loaded l;
	load_ok(&l, write_text("u.json", text));
	cr_assert_eq(l.t.n_events, 2);
	cr_assert(l.t.events[0].flags & NS_EV_UNFINISHED);
	cr_assert(!(l.t.events[1].flags & NS_EV_UNFINISHED));
	cr_assert_eq(l.t.events[1].dur_ns, 0, "negative durations are written as 0");
	ns_trace_release(&l.t);
}

/* ts, dur and the ids are read as they are scanned when plain (at most 19
 * digits, 3 after the point, no exponent) and parsed from the text
 * otherwise: both give the exact decimal value (ns from µs). */
Test(kineto, numbers_read_as_walked_or_parsed_give_the_exact_value)
{
	static const struct {
		const char *ts, *dur, *ext;
		int64_t ts_ns, dur_ns, ext_id;
	} cases[] = {
		{ "0", "0.5", "0", 0, 500, 0 },
		{ "1.2", "12.34", "12.0", 1200, 12340, 12 },
		{ "1234567890123456.789", "1e3", "9223372036854775807", INT64_C(1234567890123456789), 1000000,
		  INT64_MAX },
		{ "1.0005", "1.0015", "1E2", 1000, 1002, 100 }, /* 1000.5 and 1001.5 ns: half to even */
		{ "0.0001", "2.5e-3", "3000000000000000000", 0, 2, INT64_C(3000000000000000000) }, /* 2.5 ns: 2 */
	};
	char text[2048];
	size_t len = (size_t)snprintf(text, sizeof(text), "{\"traceEvents\": [\n");
	for (size_t k = 0; k < NS_ARRAY_SIZE(cases); k++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%zu\", \"pid\": 1, \"tid\": 1, "
					"\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %s}}%s\n",
					k, cases[k].ts, cases[k].dur, cases[k].ext, k + 1 < NS_ARRAY_SIZE(cases) ? "," : "");
	snprintf(text + len, sizeof(text) - len, "]}");
	struct loaded l;
	load_ok(&l, write_text("numbers.json", text));
	for (size_t k = 0; k < NS_ARRAY_SIZE(cases); k++) {
		char name[16];
		snprintf(name, sizeof(name), "op%zu", k);
		const struct ns_event *ev = find_event(&l.t, name, 0);
		cr_expect_eq(ev->ts_ns, cases[k].ts_ns, "ts %s", cases[k].ts);
		cr_expect_eq(ev->dur_ns, cases[k].dur_ns, "dur %s", cases[k].dur);
		cr_expect_eq(ev->external_id, cases[k].ext_id, "External id %s", cases[k].ext);
	}
	ns_trace_release(&l.t);
}

Test(kineto, escaped_names_are_decoded)
{
	const char *text =
		"{\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 1}\n"
		"]}";
	struct loaded l;
	load_ok(&l, write_text("esc.json", text));
	cr_assert_str_eq(S(&l.t, l.t.events[0].name), "a\"b\\c\xc3\xa9\xf0\x9f\x98\x80");
	ns_trace_release(&l.t);
}

Test(kineto, keys_in_any_order_and_after_trace_events)
{
	/* before March 2025 baseTimeNanoseconds and distributedInfo came after traceEvents */
	const char *text =
		"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"dur\": 1, \"ts\": 5}],\n"
		" \"distributedInfo\": {\"rank\": 5, \"world_size\": 300},\n"
		" \"baseTimeNanoseconds\": 1700000000000000000}";
	struct loaded l;
	load_ok(&l, write_text("order.json", text));
	cr_assert(l.t.has_base_time);
	cr_assert_eq(l.t.base_time_ns, INT64_C(1700000000000000000));
	cr_assert_eq(l.t.rank, 5);
	cr_assert_eq(l.t.world_size, 300);
	cr_assert_eq(l.t.events[0].ts_ns, 5000);
	cr_assert_eq(l.t.events[0].dur_ns, 1000);
	ns_trace_release(&l.t);
}

Test(kineto, no_rank_without_distributed_info)
{
	struct loaded l;
	load_ok(&l, write_text("nr.json", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}"));
	cr_assert_eq(l.t.rank, NS_NONE);
	cr_assert_eq(l.t.world_size, NS_NONE);
	cr_assert(!l.t.has_base_time);
	cr_assert_eq(l.t.base_time_ns, NS_NONE);
	ns_trace_release(&l.t);
}

/* ---- the sink sees every element, kept or not ---- */

struct sink_log {
	int calls, kept;
	uint64_t offsets[32], lines[32];
	bool kept_flag[32];
};

static int sink(void *ctx, const struct ns_trace *t, const struct ns_row_event *raw, struct ns_error *err)
{
	(void)t;
	(void)err;
	struct sink_log *s = ctx;
	if (s->calls < 32) {
		s->offsets[s->calls] = raw->byte_offset;
		s->lines[s->calls] = raw->line;
		s->kept_flag[s->calls] = raw->kept;
	}
	s->calls++;
	s->kept += raw->kept;
	return 0;
}

Test(kineto, sink_sees_every_element_with_its_offset_and_line)
{
	const char *path = write_text("sink.json", ERA_C);
	struct sink_log log = { 0 };
	struct ns_ingest_opts o = { .sink = sink, .sink_ctx = &log };
	struct ns_trace t;
	struct ns_error warn = { 0 }, err = { 0 };
	ns_trace_init(&t);
	cr_assert_eq(ns_ingest_file(path, &t, &o, &warn, &err), 0, "%s", err.msg);
	cr_assert_eq(log.calls, ERA_C_ELEMENTS);
	cr_assert_eq(log.kept, 8);
	/* first element: the ProfilerStep#1 annotation on line 8 */
	const char *first = strstr(ERA_C, "{\"ph\": \"X\", \"cat\": \"user_annotation\"");
	cr_assert_eq(log.offsets[0], (uint64_t)(first - ERA_C));
	cr_assert_eq(log.lines[0], 8);
	const char *second = strstr(ERA_C, "{\"ph\": \"X\", \"cat\": \"cpu_op\"");
	cr_assert_eq(log.offsets[1], (uint64_t)(second - ERA_C));
	cr_assert_eq(log.lines[1], 10);
	cr_assert(!log.kept_flag[7], "thread_name metadata is not kept");
	ns_trace_release(&t);
}

static int failing_sink(void *ctx, const struct ns_trace *t, const struct ns_row_event *raw, struct ns_error *err)
{
	(void)ctx;
	(void)t;
	(void)raw;
	return ns_error_set(err, NS_ERR_IO, "sink says no");
}

Test(kineto, sink_error_stops_ingest)
{
	const char *path = write_text("sink2.json", ERA_C);
	struct ns_ingest_opts o = { .sink = failing_sink };
	struct ns_trace t;
	struct ns_error err = { 0 };
	ns_trace_init(&t);
	cr_assert_eq(ns_ingest_file(path, &t, &o, NULL, &err), NS_ERR_IO);
	cr_assert_str_eq(err.msg, "sink says no");
	ns_trace_release(&t);
}

/* The rows a sink gets: metadata decoded, flows paired by (cat, id). */
struct row_log {
	char text[4][32];
	int64_t sort_index[4];
	uint8_t kind[4];
	int n_meta;
	char flows[8][48];
	int n_flows;
};

static int meta_sink(void *ctx, const struct ns_trace *t, const struct ns_row_event *row, struct ns_error *err)
{
	struct row_log *log = ctx;
	(void)t;
	(void)err;
	if (row->meta.kind == NS_ROW_META_NONE || log->n_meta == 4)
		return 0;
	snprintf(log->text[log->n_meta], sizeof(log->text[0]), "%.*s", (int)row->meta.len,
		 row->meta.has_text ? row->meta.text : "");
	log->sort_index[log->n_meta] = row->meta.has_sort_index ? row->meta.sort_index : -1;
	log->kind[log->n_meta++] = row->meta.kind;
	return 0;
}

static int flow_sink(void *ctx, const struct ns_trace *t, const struct ns_row_flow *row, struct ns_error *err)
{
	struct row_log *log = ctx;
	(void)err;
	if (log->n_flows == 8)
		return 0;
	char id[16];
	if (row->id.is_int)
		snprintf(id, sizeof(id), "%lld", (long long)row->id.num);
	else
		snprintf(id, sizeof(id), "'%.*s'", (int)row->id.len, row->id.text);
	snprintf(log->flows[log->n_flows++], sizeof(log->flows[0]), "%s %s %d-%d", ns_strtab_get(&t->strings, row->cat),
		 id, row->start.present ? (int)row->start.event : -1, row->end.present ? (int)row->end.event : -1);
	return 0;
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(a, b);
}

Test(kineto, rows_decode_metadata_and_pair_flows)
{
	const char *path = write_text("rows.json",
		"{\"traceEvents\": [\n"
		"{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"py\\u0074hon\", \"name\": \"x\"}},\n"
		"{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 1, \"tid\": 2, \"args\": {\"sort_index\": 7.9}},\n"
		"{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 1, \"tid\": 0, \"args\": {\"labels\": 5}},\n"
		"{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 7, \"pid\": 1, \"tid\": 2, \"ts\": 1},\n"
		"{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": \"7\", \"pid\": 1, \"tid\": 2, \"ts\": 2},\n"
		"{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 7, \"pid\": 0, \"tid\": 7, \"ts\": 3},\n"
		"{\"ph\": \"f\", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"id\": \"x\", \"pid\": 1, \"tid\": 2, \"ts\": 4},\n"
		"{\"ph\": \"s\", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"id\": \"x\", \"pid\": 1, \"tid\": 2, \"ts\": 5},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 2, \"ts\": 6, \"dur\": 1}\n"
		"]}\n");
	struct row_log log = { 0 };
	struct ns_ingest_opts o = { .sink = meta_sink, .flow_sink = flow_sink, .sink_ctx = &log };
	struct ns_trace t;
	struct ns_error err = { 0 };
	ns_trace_init(&t);
	cr_assert_eq(ns_ingest_file(path, &t, &o, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(log.n_meta, 3);
	/* the first of a repeated key, escapes decoded */
	cr_assert_eq(log.kind[0], NS_ROW_META_PROCESS_NAME);
	cr_assert_str_eq(log.text[0], "python");
	cr_assert_eq(log.kind[1], NS_ROW_META_THREAD_SORT_INDEX);
	cr_assert_eq(log.sort_index[1], 7);
	cr_assert_eq(log.kind[2], NS_ROW_META_PROCESS_LABELS);
	cr_assert_str_eq(log.text[2], "", "a labels value that is not a string is no text");
	/* 7 and "7" are one id: the second start leaves the first open for
	 * good; an end with nothing open stands alone */
	qsort(log.flows, (size_t)log.n_flows, sizeof(log.flows[0]), cmp_text);
	cr_assert_eq(log.n_flows, 4);
	cr_assert_str_eq(log.flows[0], "ac2g 7 3--1");
	cr_assert_str_eq(log.flows[1], "ac2g 7 4-5");
	cr_assert_str_eq(log.flows[2], "fwdbwd 'x' -1-6");
	cr_assert_str_eq(log.flows[3], "fwdbwd 'x' 7--1");
	ns_trace_release(&t);
}

/* ---- streaming across buffer refills ---- */

Test(scan, large_file_crosses_refills_with_exact_line_numbers)
{
	/* ~6 MB: several 1 MiB reads and a buffer that must slide; the error is
	 * on the last line, so its line:col checks the scanner's line count */
	const int n = 60000;
	size_t cap = (size_t)n * 128 + 1024;
	char *text = malloc(cap), *p = text;
	p += sprintf(p, "{\"traceEvents\": [\n");
	for (int i = 0; i < n; i++)
		p += sprintf(p, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": %d.125, \"dur\": 0.5},\n",
			     i);
	char *bad = p;
	p += sprintf(p, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": 1.5, \"dur\": nope}\n]}\n");
	const char *path = write_bytes("big.json", text, (size_t)(p - text));
	struct loaded l;
	load(&l, path, false);
	cr_assert_eq(l.rc, NS_ERR_INPUT);
	char loc[600], want[1200];
	/* (the first byte that no JSON text can have there: "no" is not "null") */
	snprintf(loc, sizeof(loc), "%s:%d:%d", path, n + 2, (int)(strstr(bad, "nope") - bad) + 2);
	snprintf(want, sizeof(want), "%s: invalid JSON at byte %zu: invalid literal (true, false, null, NaN, "
		 "Infinity): 'o' cannot continue it", loc, (size_t)(strstr(bad, "nope") - text) + 1);
	cr_assert_str_eq(l.err.msg, want);
	ns_trace_release(&l.t);

	/* the same file without the bad event loads every event exactly */
	sprintf(bad, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": 1.5, \"dur\": 1.0}\n]}\n");
	path = write_bytes("big2.json", text, strlen(text));
	load_ok(&l, path);
	cr_assert_eq(l.t.n_events, (size_t)n + 1);
	cr_assert_eq(l.t.events[n - 1].ts_ns, (int64_t)(n - 1) * 1000 + 125);
	cr_assert_eq(l.t.events[n - 1].dur_ns, 500);
	ns_trace_release(&l.t);
	free(text);
}

Test(scan, long_runs_of_newlines_are_counted_exactly)
{
	/* Lines are counted in blocks (json/scan.c newlines_in: byte counters
	 * that must be summed before they wrap) when a message needs one and
	 * when the window drops what it read; a run of newlines fills every
	 * counter. The bad value is on the line after the last of them. */
	const size_t runs[] = { 1, 63, 64, 4031, 4032, 16128, 16129, 3000001 };
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		const char *head = "{\"traceEvents\": [", *bad = "{\"ph\": x}]}";
		size_t n = runs[r], len = strlen(head) + n + strlen(bad);
		char *text = malloc(len + 1);
		cr_assert(text);
		memcpy(text, head, strlen(head));
		memset(text + strlen(head), '\n', n);
		strcpy(text + strlen(head) + n, bad);
		struct loaded l;
		load(&l, write_bytes("newlines.json", text, len), false);
		char want[64];
		snprintf(want, sizeof(want), "newlines.json:%zu:8: ", n + 1);
		cr_expect_eq(l.rc, NS_ERR_INPUT);
		cr_expect(strstr(l.err.msg, want), "%zu newlines: %s", n, l.err.msg);
		ns_trace_release(&l.t);
		free(text);
	}
}

Test(scan, one_event_larger_than_the_initial_window)
{
	/* a 5 MB args string forces the window to grow past its 4 MiB start */
	size_t big = 5u << 20;
	char *text = malloc(big + 512), *p = text;
	p += sprintf(p, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"big\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"Call stack\": \"");
	memset(p, 'x', big);
	p += big;
	p += sprintf(p, "\"}}, {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"after\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"dur\": 1}]}");
	struct loaded l;
	load_ok(&l, write_bytes("bigevent.json", text, (size_t)(p - text)));
	cr_assert_eq(l.t.n_events, 2);
	cr_assert_eq(ns_strtab_len(&l.t.strings, l.t.events[0].stack), big);
	cr_assert_str_eq(S(&l.t, l.t.events[1].name), "after");
	ns_trace_release(&l.t);
	free(text);
}

Test(scan, json_primitives)
{
	char out[64];
	const char *b = "a\\nb\\t\\u0041\\/\\\"";
	size_t n = ns_json_unescape(b, strlen(b), out);
	cr_assert_eq(n, 7);
	cr_assert(memcmp(out, "a\nb\tA/\"", 7) == 0);
	b = "\\ud800x"; /* lone high surrogate */
	n = ns_json_unescape(b, strlen(b), out);
	cr_assert_eq(n, 4);
	cr_assert(memcmp(out, "\xef\xbf\xbdx", 4) == 0);
	b = "\\uZZZZ";
	n = ns_json_unescape(b, strlen(b), out);
	cr_assert_eq(out[0], '?');

	const char *v = "{\"a\": [1, 2.5e3, -0, true, null, \"x\\\"y\"], \"b\": {}} tail";
	cr_assert_eq(ns_json_skip_value(v, strlen(v), 0, 1), strlen(v) - 5);
	cr_assert_eq(ns_json_skip_value("[1, 2", 5, 0, 1), 0);
	cr_assert_eq(ns_json_skip_value("[1 2]", 5, 0, 1), 0);
	cr_assert_eq(ns_json_skip_value("{\"a\" 1}", 7, 0, 1), 0);
	cr_assert_eq(ns_json_skip_value("tru", 3, 0, 1), 0);
	bool esc;
	cr_assert_eq(ns_json_string_end("\"ab\\\"c\"x", 8, 0, &esc), 7);
	cr_assert(esc);
	cr_assert_eq(ns_json_string_end("\"abc", 4, 0, &esc), 0);
}

/* The string scan's reference: one byte at a time, RFC 8259's rules (no
 * raw control character; the escapes \" \\ \/ \b \f \n \r \t \uXXXX). */
static size_t string_end_bytewise(const char *p, size_t n, bool *esc)
{
	*esc = false;
	for (size_t i = 1; i < n; i++) {
		if (p[i] == '"')
			return i + 1;
		if ((unsigned char)p[i] < 0x20)
			return 0;
		if (p[i] == '\\') {
			*esc = true;
			if (++i >= n || p[i] == 0 || !strchr("\"\\/bfnrtu", p[i]))
				return 0;
			for (int k = 0, hex = p[i] == 'u' ? 4 : 0; k < hex; k++)
				if (++i >= n || !isxdigit((unsigned char)p[i]))
					return 0;
		}
	}
	return 0;
}

/* ns_json_string_end reads 16 bytes a step where it can: the same end and
 * escape flag as a byte-at-a-time scan, with the quote, an escape (also an
 * escaped quote or backslash) and the end of the input at every offset
 * around the steps; the input sits in a buffer of exactly n bytes, so a
 * read past it fails under ASan. */
Test(scan, string_end_is_the_same_at_every_offset)
{
	static const char *const fills[] = { "", "\\\"", "\\\\", "\\n", "\\", "\\u00e9", "\\u00g9", "\\q", "\t" };
	for (size_t len = 0; len <= 40; len++) {
		for (size_t f = 0; f < sizeof(fills) / sizeof(fills[0]); f++) {
			for (size_t at = 0; at <= len; at++) {
				char text[64];
				size_t n = 0;
				text[n++] = '"';
				for (size_t k = 0; k < len; k++)
					text[n++] = 'a' + (char)(k % 26);
				size_t fl = strlen(fills[f]);
				memmove(text + 1 + at + fl, text + 1 + at, len - at);
				memcpy(text + 1 + at, fills[f], fl);
				n += fl;
				text[n++] = '"';
				for (size_t cut = 1; cut <= n; cut++) {
					char *buf = malloc(cut);
					cr_assert_not_null(buf);
					memcpy(buf, text, cut);
					bool esc, want_esc;
					size_t want = string_end_bytewise(buf, cut, &want_esc);
					size_t got = ns_json_string_end(buf, cut, 0, &esc);
					cr_assert_eq(got, want, "len %zu, fill %zu at %zu, %zu bytes: %zu, not %zu", len, f, at,
						     cut, got, want);
					if (want)
						cr_assert_eq(esc, want_esc, "len %zu, fill %zu at %zu: escape flag", len, f, at);
					free(buf);
				}
			}
		}
	}
}

/* The extent of each value in text, read in pieces of `piece` bytes. */
static void value_extents(const char *text, size_t piece, size_t *ends, size_t n_ends)
{
	struct ns_source *src;
	struct ns_scan sc;
	struct ns_error err = { 0 };
	cr_assert_eq(ns_source_open_mem(text, strlen(text), "v.json", 1u << 20, UINT32_MAX, &src, &err), 0, "%s", err.msg);
	ns_source_set_max_read(src, piece);
	cr_assert_eq(ns_scan_init(&sc, "v.json", src, &err), 0, "%s", err.msg);
	for (size_t k = 0; k < n_ends; k++) {
		size_t start, end;
		cr_assert_eq(ns_scan_value(&sc, &start, &end, &err), 0, "value %zu: %s", k, err.msg);
		ends[k] = sc.base + end;
		ns_scan_advance(&sc, end - sc.pos);
	}
	ns_scan_release(&sc);
	ns_source_close(src);
}

/* A value cut by the read is scanned on from where the scan stopped, not
 * again from its start (which made a long value read in small pieces
 * quadratic): its end is the same whatever the pieces, with escapes and
 * brackets inside strings at every cut. */
Test(scan, a_value_cut_by_reads_ends_where_a_whole_read_says)
{
	const char *text = "{\"a\": \"x\\\"}]y\", \"b\": [1, {\"c\": \"]\\\\\"}]} \"s\\\"t\\\\\" "
			   "[[\"[\", {}], \"\\\"\"] 12.5e3 ";
	size_t whole[4], cut[4];
	value_extents(text, 0, whole, 4);
	cr_assert_eq(whole[0], (size_t)(strstr(text, "]} ") - text) + 2);
	cr_assert_eq(whole[3], strlen(text) - 1);
	for (size_t piece = 1; piece <= 7; piece++) {
		value_extents(text, piece, cut, 4);
		for (int k = 0; k < 4; k++)
			cr_assert_eq(cut[k], whole[k], "piece %zu, value %d: %zu against %zu", piece, k, cut[k], whole[k]);
	}
}

Test(scan, deep_nesting_is_refused)
{
	size_t depth = NS_JSON_MAX_DEPTH + 10;
	char *text = malloc(2 * depth + 256), *p = text;
	p += sprintf(p, "{\"traceEvents\": [{\"ph\": \"X\", \"args\": {\"x\": ");
	for (size_t i = 0; i < depth; i++)
		*p++ = '[';
	for (size_t i = 0; i < depth; i++)
		*p++ = ']';
	p += sprintf(p, "}}]}");
	struct loaded l;
	load(&l, write_bytes("deep.json", text, (size_t)(p - text)), false);
	cr_assert_eq(l.rc, NS_ERR_INPUT);
	cr_assert(strstr(l.err.msg, "JSON nested deeper than 256 levels") != NULL, "%s", l.err.msg);
	ns_trace_release(&l.t);
	free(text);
}

/* ---- damaged input: exact messages ---- */

static void expect_error(const char *name, const char *text, const char *needle, const char *what, int status)
{
	const char *path = write_text(name, text);
	struct loaded l;
	load(&l, path, false);
	cr_assert_eq(l.rc, status, "%s: rc %d (%s)", name, l.rc, l.err.msg);
	char loc[600], want[1200];
	if (needle) {
		where(loc, sizeof(loc), path, text, needle);
		snprintf(want, sizeof(want), "%s: %s", loc, what);
	} else {
		snprintf(want, sizeof(want), "%s: %s", path, what);
	}
	cr_assert_str_eq(l.err.msg, want);
	ns_trace_release(&l.t);
}

/* As expect_error, for the scanner's message on invalid JSON: the first
 * byte no JSON text can have there is `needle`'s first byte. */
static void expect_invalid_json(const char *name, const char *text, const char *needle, const char *what)
{
	char msg[600];
	const char *hit = strstr(text, needle);
	cr_assert_not_null(hit, "test bug: '%s' not in the text", needle);
	snprintf(msg, sizeof(msg), "invalid JSON at byte %zu: %s", (size_t)(hit - text), what);
	expect_error(name, text, needle, msg, NS_ERR_INPUT);
}

static const char HEAD[] = "{\"traceEvents\": [\n"
			   "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2},\n";

static char *with_head(const char *tail)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf), "%s%s", HEAD, tail);
	return buf;
}

Test(errors, empty_file)
{
	expect_error("empty.json", "", NULL, "empty file", NS_ERR_INPUT);
	expect_error("blank.json", " \n\t\n", NULL, "empty file", NS_ERR_INPUT);
}

Test(errors, empty_gzip_is_an_empty_file)
{
	unsigned char *gz;
	size_t n = gzip_bytes("", 0, &gz);
	const char *path = write_bytes("empty.json.gz", gz, n);
	struct loaded l;
	load(&l, path, false);
	char want[600];
	snprintf(want, sizeof(want), "%s: empty file", path);
	cr_assert_eq(l.rc, NS_ERR_INPUT);
	cr_assert_str_eq(l.err.msg, want);
	ns_trace_release(&l.t);
	free(gz);
}

Test(errors, not_json)
{
	expect_error("html.json", "\n  <html>", "<html>", "not a JSON trace (expected '{' or '[')", NS_ERR_INPUT);
}

Test(errors, missing_comma_between_keys)
{
	const char *t = with_head("{\"ph\": \"X\", \"cat\": \"cpu_op\" \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}\n]}");
	expect_invalid_json("comma.json", t, "\"name\": \"b\"", "expected ',' or '}' in an object, not '\"'");
}

Test(errors, missing_comma_between_events)
{
	const char *t = with_head("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}\n"
				  "{\"ph\": \"X\"}\n]}");
	expect_error("comma2.json", t, "{\"ph\": \"X\"}", "expected ',' or ']' after an event", NS_ERR_INPUT);
}

Test(errors, non_object_event)
{
	expect_error("nonobj.json", with_head("42\n]}"), "42", "expected an event object in \"traceEvents\"",
		     NS_ERR_INPUT);
}

Test(errors, trace_events_not_an_array)
{
	const char *t = "{\"schemaVersion\": 1,\n \"traceEvents\": {\"a\": 1}}";
	expect_error("notarr.json", t, "{\"a\"", "expected an array for \"traceEvents\"", NS_ERR_INPUT);
}

Test(errors, wrong_type_ts_string)
{
	/* the location is the value's first byte: its opening quote */
	const char *t = with_head("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": \"abc\", \"dur\": 2}\n]}");
	expect_error("ts.json", t, "\"abc\"", "expected a number of microseconds for \"ts\"", NS_ERR_INPUT);
}

Test(errors, wrong_type_ts_literal)
{
	const char *t = with_head("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": true, \"dur\": 2}\n]}");
	expect_error("ts2.json", t, "true", "expected a number of microseconds for \"ts\"", NS_ERR_INPUT);
}

/* An epoch time in ns: base + ts, and the difference of two bases
 * (merges, device-profile alignment), must fit in 64 bits. */
Test(errors, base_time_out_of_range)
{
	const char *what = "\"baseTimeNanoseconds\" is out of range (0 to 2^62 ns, about the year 2116)";
	expect_error("base1.json", "{\"traceEvents\": [],\n \"baseTimeNanoseconds\": 4611686018427387904}",
		     "4611686018427387904}", what, NS_ERR_INPUT);
	expect_error("base2.json", "{\"baseTimeNanoseconds\": -1, \"traceEvents\": []}", "-1,", what, NS_ERR_INPUT);
	struct loaded l;
	load(&l, write_text("base3.json", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}], \"baseTimeNanoseconds\": 4611686018427387903}"),
	     false);
	cr_assert_eq(l.rc, 0, "%s", l.err.msg);
	cr_assert_eq(l.t.base_time_ns, INT64_C(4611686018427387903));
	ns_trace_release(&l.t);
}

Test(errors, wrong_type_dur)
{
	const char *t = with_head("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"dur\": [2]}\n]}");
	expect_error("dur.json", t, "[2]", "expected a number of microseconds for \"dur\"", NS_ERR_INPUT);
}

Test(errors, wrong_type_ph_name_cat_args)
{
	expect_error("ph.json", with_head("{\"ph\": 1, \"name\": \"b\"}\n]}"), "1, \"name\"",
		     "expected a string for \"ph\"", NS_ERR_INPUT);
	expect_error("name.json", with_head("{\"ph\": \"X\", \"name\": 5}\n]}"), "5}",
		     "expected a string for \"name\"", NS_ERR_INPUT);
	expect_error("cat.json", with_head("{\"ph\": \"X\", \"cat\": null, \"name\": \"b\"}\n]}"), "null",
		     "expected a string for \"cat\"", NS_ERR_INPUT);
	expect_error("args.json", with_head("{\"ph\": \"X\", \"name\": \"b\", \"args\": [1]}\n]}"), "[1]",
		     "expected an object for \"args\"", NS_ERR_INPUT);
}

Test(errors, wrong_type_id_args)
{
	const char *t = with_head("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 3, \"dur\": 2,\n"
				  " \"args\": {\"correlation\": 1.5}}\n]}");
	expect_error("corr.json", t, "1.5", "expected an integer for \"correlation\"", NS_ERR_INPUT);
	t = with_head("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 3, \"dur\": 2,\n"
		      " \"args\": {\"External id\": \"abc\"}}\n]}");
	expect_error("ext.json", t, "\"abc\"", "expected an integer for \"External id\"", NS_ERR_INPUT);
}

Test(errors, x_event_without_ts)
{
	const char *t = with_head("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"dur\": 2}\n]}");
	expect_error("nots.json", t, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\"", "event without \"ts\"",
		     NS_ERR_INPUT);
}

Test(errors, invalid_top_level_value)
{
	/* "1x" is not a JSON value, even outside traceEvents */
	const char *t = "{\"schemaVersion\": 1x,\n \"traceEvents\": []}";
	expect_invalid_json("top.json", t, "x,", "expected a delimiter after the value, not 'x'");
}

Test(errors, no_trace_events_is_unsupported)
{
	const char *path = write_text("nokey.json", "{\"schemaVersion\": 1, \"nodes\": [], \"pid\": 3}");
	struct loaded l;
	load(&l, path, false);
	cr_assert_eq(l.rc, NS_ERR_UNSUPPORTED);
	char want[600];
	snprintf(want, sizeof(want), "%s: no \"traceEvents\" array: not a Kineto/Chrome trace", path);
	cr_assert_str_eq(l.err.msg, want);
	cr_assert(strstr(l.err.hint, "PyTorch Execution Trace") != NULL, "hint: %s", l.err.hint);
	ns_trace_release(&l.t);

	path = write_text("nokey2.json", "{\"schemaVersion\": 1}");
	load(&l, path, false);
	cr_assert_eq(l.rc, NS_ERR_UNSUPPORTED);
	cr_assert_str_empty(l.err.hint);
	ns_trace_release(&l.t);
}

Test(errors, missing_file_and_directory)
{
	const char *path = path_for("does-not-exist.json");
	struct loaded l;
	load(&l, path, false);
	cr_assert_eq(l.rc, NS_ERR_IO);
	char want[600];
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
	cr_assert_str_eq(l.err.msg, want);
	ns_trace_release(&l.t);

	load(&l, tmpdir, false);
	cr_assert_eq(l.rc, NS_ERR_IO);
	snprintf(want, sizeof(want), "%s: is a directory", tmpdir);
	cr_assert_str_eq(l.err.msg, want);
	ns_trace_release(&l.t);
}

/* ---- truncation ---- */

static const char TRUNC[] =
	"{\"schemaVersion\": 1, \"traceEvents\": [\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1.000, \"dur\": 2.000},\n"
	"{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"main\"}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 4.000, \"dur\": 1.000},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 6.0";

Test(errors, truncated_file_is_a_warning_with_offset_and_salvage)
{
	const char *path = write_text("cut.json", TRUNC);
	struct loaded l;
	load(&l, path, false);
	cr_assert_eq(l.rc, 0, "%s", l.err.msg);
	long off = (long)(strstr(TRUNC, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\"") - TRUNC);
	cr_assert_eq(l.t.truncated_at, off);
	cr_assert_eq(l.t.n_events, 2);
	cr_assert_eq(l.t.n_trace_events, 3);
	cr_assert_str_eq(S(&l.t, l.t.events[1].name), "b");
	char want[700];
	snprintf(want, sizeof(want),
		 "%s: truncated at byte %ld (the file ends early); using the 3 complete events before it", path, off);
	cr_assert_str_eq(l.warn.msg, want);
	cr_assert_eq(l.warn.status, NS_OK);
	ns_trace_release(&l.t);
}

Test(errors, truncated_file_strict_is_an_error)
{
	const char *path = write_text("cut.json", TRUNC);
	struct loaded l;
	load(&l, path, true);
	cr_assert_eq(l.rc, NS_ERR_INPUT);
	long off = (long)(strstr(TRUNC, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\"") - TRUNC);
	char want[700];
	snprintf(want, sizeof(want), "%s: truncated at byte %ld (the file ends early); 3 complete events read", path,
		 off);
	cr_assert_str_eq(l.err.msg, want);
	ns_trace_release(&l.t);
}

Test(errors, truncated_after_a_comma_and_after_the_array)
{
	/* cut right after "},\n": nothing of the next event */
	size_t cut = (size_t)(strstr(TRUNC, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\"") - TRUNC);
	const char *path = write_bytes("cut2.json", TRUNC, cut);
	struct loaded l;
	load(&l, path, false);
	cr_assert_eq(l.rc, 0);
	cr_assert_eq(l.t.truncated_at, (int64_t)cut);
	cr_assert_eq(l.t.n_events, 2);
	ns_trace_release(&l.t);

	/* everything but the closing brace: all events are there */
	const char *whole = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}]";
	path = write_text("cut3.json", whole);
	load(&l, path, false);
	cr_assert_eq(l.rc, 0);
	cr_assert_eq(l.t.n_events, 1);
	cr_assert_eq(l.t.truncated_at, (int64_t)strlen(whole));
	cr_assert(strstr(l.warn.msg, "truncated at byte") != NULL);
	ns_trace_release(&l.t);
}

Test(errors, truncated_before_trace_events)
{
	const char *text = "{\"schemaVersion\": 1, \"deviceProp";
	const char *path = write_text("cut4.json", text);
	struct loaded l;
	load(&l, path, false);
	cr_assert_eq(l.rc, NS_ERR_INPUT);
	char want[600];
	snprintf(want, sizeof(want), "%s: file ends at byte %zu before \"traceEvents\"", path,
		 (size_t)(strstr(text, "\"deviceProp") - text));
	cr_assert_str_eq(l.err.msg, want);
	ns_trace_release(&l.t);
}

/* An event is parsed where it lies in the buffer; one the buffer ends
 * inside is parsed again once framed. Read a few bytes at a time, where
 * nearly every event is cut so, a trace gives the same strings, in the same
 * order, and the same events as read whole. */
static void load_mem(struct loaded *l, const char *text, size_t len, uint32_t read_chunk)
{
	load_bytes(l, text, len, "mem.json", (struct ns_ingest_opts){ .read_chunk = read_chunk });
}

/* text read `piece` bytes at a time, for each piece of pieces[0..n),
 * gives the strings and events of text read whole. */
static void expect_same_when_cut(const char *text, size_t len, const uint32_t *pieces, size_t n)
{
	struct loaded whole, cut;
	load_mem(&whole, text, len, 0);
	cr_assert_eq(whole.rc, 0, "%s", whole.err.msg);
	for (size_t k = 0; k < n; k++) {
		uint32_t piece = pieces[k];
		load_mem(&cut, text, len, piece);
		cr_assert_eq(cut.rc, 0, "%u-byte reads: %s", piece, cut.err.msg);
		cr_assert_eq(cut.t.strings.count, whole.t.strings.count, "%u-byte reads", piece);
		for (ns_str id = 0; id < whole.t.strings.count; id++)
			cr_assert_str_eq(S(&cut.t, id), S(&whole.t, id), "%u-byte reads: string %u", piece, id);
		cr_assert_eq(cut.t.n_events, whole.t.n_events);
		for (size_t i = 0; i < whole.t.n_events; i++)
			cr_assert(memcmp(&cut.t.events[i], &whole.t.events[i], sizeof(struct ns_event)) == 0,
				  "%u-byte reads: event %zu", piece, i);
		ns_trace_release(&cut.t);
	}
	ns_trace_release(&whole.t);
}

Test(kineto, an_event_cut_by_the_buffer_gives_the_same_strings_and_events)
{
	static const uint32_t pieces[] = { 1, 2, 4, 8, 16, 32, 64 };
	expect_same_when_cut(ERA_C, strlen(ERA_C), pieces, NS_ARRAY_SIZE(pieces));
}

/* The same with each event's shapes and types first (args before the
 * other keys): an attempt cut after them interns them and takes them back,
 * and the strings read again must be interned again, not looked up in what
 * intern_compact remembers of the attempt. */
Test(kineto, shapes_read_by_a_cut_attempt_are_interned_again)
{
	char text[8192];
	uint32_t pieces[25];
	size_t len = (size_t)snprintf(text, sizeof(text), "{\"traceEvents\": [\n");
	for (int i = 0; i < 24; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"{\"args\": {\"Input Dims\": [[%d, 3]], \"Input type\": [\"t%d\"]}, \"ph\": \"X\", "
					"\"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1}%s\n",
					i, i, i, 10 * i, i < 23 ? "," : "");
	len += (size_t)snprintf(text + len, sizeof(text) - len, "]}\n");
	for (size_t k = 0; k < NS_ARRAY_SIZE(pieces); k++)
		pieces[k] = (uint32_t)(1 + 4 * k); /* 1 to 97 */
	expect_same_when_cut(text, len, pieces, NS_ARRAY_SIZE(pieces));
}

/* Arrays of args are remembered by their first bytes (and the array
 * before them), and the same text again ends where it ended: arrays that
 * start alike but differ, longer or shorter, keep their own text, read
 * whole and read in pieces that cut them. */
static const char *const alike_dims[] = {
	"[[8, 512, 1024], [3072, 1024], [3072, 1024]]",
	"[[8, 512, 1024], [3072, 1024], [3072, 1024], [3072]]",
	"[[8, 512, 1024], [3072, 1024], [3072, 1024]]",
	"[[8, 512, 1024], [3072, 1024], [3072, 1024], [3072], []]",
	"[[8, 512, 1024], [3072, 1024], [3072, 1024], [3072]]",
	"[[8, 512, 1024]]",
	"[[8, 512, 1024], [3072, 1024], [3072, 1024]]",
};
static const char *const alike_dims_compact[] = {
	"[[8,512,1024],[3072,1024],[3072,1024]]",
	"[[8,512,1024],[3072,1024],[3072,1024],[3072]]",
	"[[8,512,1024],[3072,1024],[3072,1024]]",
	"[[8,512,1024],[3072,1024],[3072,1024],[3072],[]]",
	"[[8,512,1024],[3072,1024],[3072,1024],[3072]]",
	"[[8,512,1024]]",
	"[[8,512,1024],[3072,1024],[3072,1024]]",
};

Test(kineto, arrays_that_start_alike_keep_their_own_text)
{
	char text[8192];
	uint32_t pieces[16];
	size_t len = (size_t)snprintf(text, sizeof(text), "{\"traceEvents\": [\n");
	for (size_t round = 0; round < 2; round++)
		for (size_t k = 0; k < NS_ARRAY_SIZE(alike_dims); k++)
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%zu\", \"pid\": 1, \"tid\": 1, "
						"\"ts\": %zu, \"dur\": 1, \"args\": {\"Input type\": [\"c10::BFloat16\"], "
						"\"Input Dims\": %s, \"Ev Idx\": %zu}}%s\n",
						k, 10 * (round * NS_ARRAY_SIZE(alike_dims) + k), alike_dims[k], k,
						round == 0 || k + 1 < NS_ARRAY_SIZE(alike_dims) ? "," : "");
	len += (size_t)snprintf(text + len, sizeof(text) - len, "]}\n");
	struct loaded l;
	load_mem(&l, text, len, 0);
	cr_assert_eq(l.rc, 0, "%s", l.err.msg);
	cr_assert_eq(l.t.n_events, 2 * NS_ARRAY_SIZE(alike_dims));
	for (size_t i = 0; i < l.t.n_events; i++)
		cr_expect_str_eq(S(&l.t, l.t.events[i].input_dims), alike_dims_compact[i % NS_ARRAY_SIZE(alike_dims)],
				 "event %zu", i);
	ns_trace_release(&l.t);
	for (size_t k = 0; k < NS_ARRAY_SIZE(pieces); k++)
		pieces[k] = (uint32_t)(1 + 5 * k); /* 1 to 76: cut inside the arrays */
	expect_same_when_cut(text, len, pieces, NS_ARRAY_SIZE(pieces));
}

/* A file cut off inside an event and padded with NULs (as a crash can
 * leave it) is salvaged up to that event; the cut event's first parse,
 * which reads its Input Dims before failing at the NULs, leaves no string
 * behind. */
Test(kineto, a_cut_event_leaves_no_strings_behind)
{
	static const char head[] =
		"{\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 5},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cut\", \"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 5,"
		" \"args\": {\"Input Dims\": [[77, 77]], \"Call stack\": \"cut.py(7)\", \"External id\": ";
	enum { PAD = 200000 };
	char *text = calloc(1, sizeof(head) + PAD);
	cr_assert_not_null(text);
	memcpy(text, head, sizeof(head) - 1);
	struct loaded l;
	load_mem(&l, text, sizeof(head) - 1 + PAD, 0);
	cr_assert_eq(l.rc, 0, "%s", l.err.msg);
	cr_assert_eq(l.t.n_events, 1);
	cr_assert_eq(l.t.truncated_at, (int64_t)(strstr(head, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cut\"") - head));
	cr_assert_eq(ns_strtab_find(&l.t.strings, "[[77,77]]", 9), UINT32_MAX);
	cr_assert_eq(ns_strtab_find(&l.t.strings, "cut.py(7)", 9), UINT32_MAX);
	cr_assert_neq(ns_strtab_find(&l.t.strings, "aten::mm", 8), UINT32_MAX);
	ns_trace_release(&l.t);
	free(text);
}

/* ---- damage in the middle is not a cut (issue 16) ---- */

/* A complete trace whose middle event carries `damaged` (the text of one
 * event, as written in the file). */
static char *damaged_trace(const char *damaged)
{
	static char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{\"traceEvents\": [\n"
		 "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2},\n"
		 "%s,\n"
		 "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 1},\n"
		 "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"d\", \"pid\": 1, \"tid\": 1, \"ts\": 7, \"dur\": 1}\n"
		 "]}\n",
		 damaged);
	return buf;
}

/* A missing closing quote turns the rest of the file inside out (strings
 * become structure and structure strings), so a scanner that only counts
 * brackets runs to the end of the file and calls it a cut: the first byte
 * that cannot be JSON is the error, wherever it is. */
Test(errors, a_missing_quote_mid_file_is_an_error_at_its_first_invalid_byte)
{
	const char *t = damaged_trace("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b, \"pid\": 1, \"tid\": 1, "
				      "\"ts\": 3, \"dur\": 1}");
	/* "b, " closes at the quote before pid: `pid` is then a bare word */
	expect_invalid_json("quote.json", t, "pid\": 1, \"tid\": 1, \"ts\": 3",
			    "expected ',' or '}' in an object, not 'p'");
	/* the same quote lost in a name's opening: the raw newline ends it */
	t = damaged_trace("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": b\", \"pid\": 1, \"tid\": 1, \"ts\": 3, "
			  "\"dur\": 1}");
	expect_invalid_json("quote2.json", t, "b\", \"pid\": 1, \"tid\": 1, \"ts\": 3",
			    "expected a JSON value, not 'b'");
}

Test(errors, a_quote_turned_into_nul_mid_file_is_an_error)
{
	char ev[] = "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"bQ, \"pid\": 1, \"tid\": 1, \"ts\": 3, \"dur\": 1}";
	const char *t = damaged_trace(ev);
	size_t len = strlen(t);
	char *text = malloc(len);
	memcpy(text, t, len);
	char *q = strstr(text, "bQ") + 1;
	*q = '\0';
	const char *path = write_bytes("nul.json", text, len);
	struct loaded l;
	load(&l, path, false);
	char loc[600], want[1200];
	where(loc, sizeof(loc), path, t, "Q, \"pid\"");
	snprintf(want, sizeof(want), "%s: invalid JSON at byte %zu: raw control character 0x00 inside a string", loc,
		 (size_t)(q - text));
	cr_assert_eq(l.rc, NS_ERR_INPUT, "%d: %s", l.rc, l.err.msg);
	cr_assert_str_eq(l.err.msg, want);
	ns_trace_release(&l.t);
	free(text);
}

Test(errors, raw_control_characters_and_bad_escapes_in_strings_are_errors)
{
	expect_invalid_json("nl.json", damaged_trace("{\"ph\": \"X\", \"name\": \"b\nc\", \"ts\": 3}"), "\nc\"",
			    "raw control character 0x0a inside a string");
	expect_invalid_json("tab.json", damaged_trace("{\"ph\": \"X\", \"name\": \"b\tc\", \"ts\": 3}"), "\tc\"",
			    "raw control character 0x09 inside a string");
	expect_invalid_json("esc.json", damaged_trace("{\"ph\": \"X\", \"name\": \"b\\qc\", \"ts\": 3}"), "qc\"",
			    "invalid escape: 'q' after a backslash");
	expect_invalid_json("hex.json", damaged_trace("{\"ph\": \"X\", \"name\": \"b\\u00zz\", \"ts\": 3}"), "zz\"",
			    "invalid \\u escape: 'z' is not a hex digit");
	expect_invalid_json("num.json", damaged_trace("{\"ph\": \"X\", \"name\": \"b\", \"ts\": 3.}"), "},\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\"",
			    "invalid number: '}' cannot continue it");
	expect_invalid_json("brace.json", damaged_trace("{\"ph\": \"X\", \"name\": \"b\", \"ts\": 3]"), "]",
			    "expected ',' or '}' in an object, not ']'");
}

/* Damage before the end, then a cut: still damage (the salvage is for a
 * text that is valid JSON up to its last byte). */
Test(errors, damage_then_a_cut_is_an_error_not_a_truncation)
{
	const char *t = damaged_trace("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b, \"pid\": 1, \"tid\": 1, "
				      "\"ts\": 3, \"dur\": 1}");
	char cut[4096];
	size_t n = (size_t)(strstr(t, "\"name\": \"c\"") - t);
	memcpy(cut, t, n);
	cut[n] = '\0';
	expect_invalid_json("damagecut.json", cut, "pid\": 1, \"tid\": 1, \"ts\": 3",
			    "expected ',' or '}' in an object, not 'p'");
}

/* A cut inside an event, then NUL bytes to the end (a crash on some file
 * systems): a cut at that event. */
Test(errors, a_cut_event_padded_with_nuls_is_a_truncation_at_the_event)
{
	const char *t = damaged_trace("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"ts\": 3, \"dur\": 1}");
	size_t event = (size_t)(strstr(t, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\"") - t);
	size_t n = event + 30, len = n + 5000;
	char *text = calloc(1, len);
	memcpy(text, t, n);
	struct loaded l;
	load(&l, write_bytes("nultail.json", text, len), false);
	cr_assert_eq(l.rc, 0, "%s", l.err.msg);
	cr_assert_eq(l.t.truncated_at, (int64_t)event);
	cr_assert_eq(l.t.n_trace_events, 1);
	ns_trace_release(&l.t);
	/* NULs that more text follows are damage */
	memcpy(text + len - 3, "}]}", 3);
	load(&l, write_bytes("nulmid.json", text, len), false);
	cr_assert_eq(l.rc, NS_ERR_INPUT, "%s", l.err.msg);
	cr_assert(strstr(l.err.msg, "raw control character 0x00 inside a string") != NULL, "%s", l.err.msg);
	ns_trace_release(&l.t);
	free(text);
}

/* One JSON value may be max_value bytes long, not one more, and the window
 * never grows past max_value + 2 reads (the limit used to be checked on
 * the doubled buffer: a 1 GiB limit let values up to 2 GiB through). */
Test(scan, a_value_over_the_limit_is_refused_and_the_window_stays_bounded)
{
	for (size_t extra = 0; extra <= 1; extra++) {
		size_t limit = 5u << 20, len = limit + extra; /* (the window starts at 4 MiB) */
		char *text = malloc(len + 1);
		text[0] = '"';
		memset(text + 1, 'v', len - 2);
		text[len - 1] = '"';
		text[len] = ' ';
		struct ns_source *src;
		struct ns_scan sc;
		struct ns_error err = { 0 };
		cr_assert_eq(ns_source_open_mem(text, len + 1, "v.json", 1u << 30, UINT32_MAX, &src, &err), 0);
		ns_source_set_max_read(src, 65536);
		cr_assert_eq(ns_scan_init(&sc, "v.json", src, &err), 0);
		sc.max_value = limit;
		size_t start, end;
		int rc = ns_scan_value(&sc, &start, &end, &err);
		if (extra) {
			cr_assert_eq(rc, NS_ERR_NOMEM);
			cr_assert_str_eq(err.msg, "v.json:1:1: a single JSON value exceeds 5242880 bytes");
		} else {
			cr_assert_eq(rc, 0, "%s", err.msg);
			cr_assert_eq(end - start, len);
		}
		cr_assert_leq(sc.cap, limit + 2 * sc.chunk, "window of %zu bytes", sc.cap);
		ns_scan_release(&sc);
		ns_source_close(src);
		free(text);
	}
}

/* The legacy autograd profiler's export (PyTorch without Kineto), written
 * as EventList.export_chrome_trace writes it: ops without "cat" on the pid
 * "CPU functions" are cpu_ops; a "cpu_to_cuda" flow start is a launch whose
 * device time the format does not carry. */
Test(kineto, legacy_autograd_ops_are_cpu_ops)
{
	static const char text[] =
		"[{\"name\": \"aten::linear\", \"ph\": \"X\", \"ts\": 10, \"dur\": 50, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, "
		"{\"name\": \"aten::addmm\", \"ph\": \"X\", \"ts\": 20, \"dur\": 30, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, "
		"{\"name\": \"aten::addmm\", \"ph\": \"s\", \"ts\": 20, \"tid\": 1, \"pid\": \"CPU functions\", \"id\": 0, \"cat\": \"cpu_to_cuda\", \"args\": {}}, "
		"{\"name\": \"x\", \"ph\": \"X\", \"ts\": 30, \"dur\": 1, \"tid\": 1, \"pid\": \"CUDA functions\", \"args\": {}}]";
	struct loaded l;
	load_mem(&l, text, strlen(text), 0);
	cr_assert_eq(l.rc, 0, "%s", l.err.msg);
	cr_assert(l.t.legacy_autograd && l.t.legacy_array);
	cr_assert_eq(l.t.n_events, 2); /* not the cat-less event of another pid */
	for (size_t i = 0; i < 2; i++) {
		cr_assert_eq(l.t.events[i].cat, NS_CAT_CPU_OP);
		cr_assert_eq(l.t.events[i].kind, NS_KIND_SLICE);
	}
	cr_assert_eq(l.t.events[1].ts_ns, 20000);
	cr_assert_eq(l.t.events[1].dur_ns, 30000);
	cr_assert_eq(l.t.n_untimed_launches, 1);
	cr_assert_eq(l.t.n_flows, 0);
	ns_trace_release(&l.t);
}

/* cuda_profiler_range events are counters: kept as NS_KIND_COUNTER, their
 * args summed per name; exact while every value is an integer and the sum
 * fits in 64 bits, a double after. */
Test(kineto, counter_ranges_are_summed_not_timed)
{
	static const char text[] =
		"{\"traceEvents\": ["
		"{\"ph\": \"X\", \"cat\": \"cuda_profiler_range\", \"name\": \"k1\", \"pid\": 0, \"tid\": 0, \"ts\": 1, \"dur\": 100, "
		"\"args\": {\"big\": 9007199254740993, \"frac\": 1.5, \"wrap\": 9223372036854775807, \"s\": \"x\"}},"
		"{\"ph\": \"X\", \"cat\": \"cuda_profiler_range\", \"name\": \"k2\", \"pid\": 0, \"tid\": 0, \"ts\": 101, \"dur\": 100, "
		"\"args\": {\"big\": 1, \"frac\": 2, \"wrap\": 1}}"
		"]}";
	struct loaded l;
	load_mem(&l, text, strlen(text), 0);
	cr_assert_eq(l.rc, 0, "%s", l.err.msg);
	cr_assert_eq(l.t.n_events, 2);
	cr_assert_eq(l.t.events[0].kind, NS_KIND_COUNTER);
	cr_assert(l.t.has_cat[NS_CAT_CUDA_PROFILER_RANGE]);
	cr_assert_eq(l.t.n_counters, 3); /* a string value is not a counter */
	cr_assert_str_eq(S(&l.t, l.t.counters[0].name), "big");
	cr_assert(l.t.counters[0].exact);
	cr_assert_eq(l.t.counters[0].sum, INT64_C(9007199254740994)); /* beyond a double's 2^53 */
	cr_assert_str_eq(S(&l.t, l.t.counters[1].name), "frac");
	cr_assert(!l.t.counters[1].exact);
	cr_assert_float_eq(l.t.counters[1].sum_approx, 3.5, 0);
	cr_assert_str_eq(S(&l.t, l.t.counters[2].name), "wrap");
	cr_assert(!l.t.counters[2].exact); /* INT64_MAX + 1 does not fit */
	ns_trace_release(&l.t);
}

/* Nothing to report is never an empty success. */
Test(errors, a_trace_without_events_to_report_is_unsupported)
{
	static const char *const texts[] = {
		"{\"traceEvents\": [{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": {}},"
		" {\"ph\": \"X\", \"cat\": \"critical_path\", \"name\": \"x\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}]}",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct loaded l;
		load_mem(&l, texts[i], strlen(texts[i]), 0);
		cr_assert_eq(l.rc, NS_ERR_UNSUPPORTED, "%s", texts[i]);
		cr_assert(strstr(l.err.msg, "nothing to report"), "%s", l.err.msg);
		ns_trace_release(&l.t);
	}
	struct loaded l; /* cut before the first event: damaged, exit 1 */
	load_mem(&l, "{\"traceEvents\": [{\"ph\": \"X\"", 27, 0);
	cr_assert_eq(l.rc, NS_ERR_INPUT);
	cr_assert_str_eq(l.err.msg, "mem.json: truncated at byte 17 before its first complete event: nothing to report");
	ns_trace_release(&l.t);
}
