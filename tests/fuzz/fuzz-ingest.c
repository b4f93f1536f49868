/* Kineto trace ingest end to end: bytes (plain, gzip or zstd) -> ns_ingest_mem
 * -> ns_aggregate -> every report format, and ns_trace_merge.
 *
 * Properties checked besides "no crash, no sanitizer report":
 * - reading the input in small pieces (1..64 bytes per read, derived from the
 *   input) gives the same result, message, byte offsets and strings as
 *   reading it whole (the scanner's refill logic, and the event parser's
 *   second attempt when an event was cut at the end of the buffer);
 * - parsing it with traceEvents cut into parts that a second thread reads
 *   (ingest's split: the number of parts and where the first starts derived
 *   from the input) gives the same result, message and trace as one thread
 *   does;
 * - every interned string is valid UTF-8 (invalid bytes become U+FFFD);
 * - every report is valid UTF-8 and the JSON report parses as JSON;
 * - the event sink sees every traceEvents element once, in file order;
 * - merging two copies of the trace succeeds (or runs out of memory) with
 *   twice its events and flows. */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <string.h>

#include "aggregate/aggregate.h"
#include "fuzz.h"
#include "ingest/ingest.h"
#include "report/report.h"

struct sink_state {
	uint64_t count;
	uint64_t last_offset;
};

static int sink(void *ctx, const struct ns_trace *t, const struct ns_row_event *raw, struct ns_error *err)
{
	struct sink_state *st = ctx;
	(void)err;
	FUZZ_CHECK(st->count == 0 || raw->byte_offset > st->last_offset, "event offsets go back: %llu after %llu",
		   (unsigned long long)raw->byte_offset, (unsigned long long)st->last_offset);
	FUZZ_CHECK(raw->ev.idx == st->count, "idx %u, expected %llu", raw->ev.idx, (unsigned long long)st->count);
	FUZZ_CHECK(raw->ev.thread < t->n_threads, "thread %u of %zu", raw->ev.thread, t->n_threads);
	FUZZ_CHECK(raw->ev.dur_ns >= 0, "negative dur");
	st->last_offset = raw->byte_offset;
	st->count++;
	return 0;
}

struct result {
	int rc;
	struct ns_error warn, err;
	struct sink_state sink;
};

/* chunk: the most bytes a read gives (0: any); split_permille: no sink
 * (the split needs none), and a split from there (SPLIT_NONE: none; 0:
 * the sink, no split) into split_parts parts. */
#define SPLIT_NONE 1000
static void ingest(const uint8_t *data, size_t size, uint32_t chunk, uint32_t split_permille, uint32_t split_parts,
		   struct ns_trace *t, struct result *r)
{
	struct ns_ingest_opts o = {
		.max_decompressed = 64u << 20,
		.max_ratio = UINT32_MAX,
		.read_chunk = chunk,
		.sink = split_permille ? NULL : sink,
		.split_min = split_permille && split_permille != SPLIT_NONE ? 1 : 0,
		.split_permille = split_permille,
		.split_parts = split_parts,
	};
	memset(r, 0, sizeof(*r));
	o.sink_ctx = &r->sink;
	ns_trace_init(t);
	r->rc = ns_ingest_mem(data, size, "fuzz.json", t, &o, &r->warn, &r->err);
}

static void check_strings(const struct ns_trace *t)
{
	for (uint32_t id = 0; id < t->strings.count; id++) {
		const char *s = ns_strtab_get(&t->strings, id);
		size_t n = ns_strtab_len(&t->strings, id);
		FUZZ_CHECK(fuzz_utf8_valid(s, n), "string %u is not UTF-8", id);
		FUZZ_CHECK(strlen(s) == n, "string %u holds a NUL", id);
	}
}

static void report_all(struct ns_agg *agg, uint64_t h)
{
	struct ns_report_opts ro;
	ns_report_opts_init(&ro);
	ro.row_limit = -1;
	ro.top_level_only = h & 1;
	const struct ns_field *f = &ns_fields[(h >> 8) % ns_n_fields]; /* its sort keys (report/fields.c) */
	if ((h & 2) && f->sort[0].name)
		ro.sort = &f->sort[((h >> 16) & 1) && f->sort[1].name];
	static const char *const units[] = { NULL, "s", "ms", "us" };
	ro.time_unit = units[(h >> 4) & 3];
	for (int fmt = NS_FMT_TABLE; fmt <= NS_FMT_MARKDOWN; fmt++) {
		char *buf = NULL;
		size_t len = 0;
		struct ns_error err = { 0 };
		FILE *out = open_memstream(&buf, &len);
		FUZZ_CHECK(out != NULL, "open_memstream");
		int rc = ns_report_write(out, agg, &ro, (enum ns_format)fmt, &err);
		fclose(out);
		if (rc == 0) {
			FUZZ_CHECK(fuzz_utf8_valid(buf, len), "format %d output is not UTF-8", fmt);
			if (fmt == NS_FMT_JSON) {
				cJSON *doc = cJSON_ParseWithLength(buf, len);
				FUZZ_CHECK(doc != NULL, "the JSON report does not parse: %.200s", buf);
				cJSON_Delete(doc);
			}
		}
		free(buf);
	}
}

static void aggregate_and_report(struct ns_trace *t, uint64_t h)
{
	struct ns_agg_opts variants[2] = {
		{ .backend_override = -1 },
		{ .group_by = NS_GROUP_SHAPE | NS_GROUP_OVERLOAD, .split_overloads = true, .stack_n = 3,
		  .backend_override = -1 },
	};
	for (int v = 0; v < 2; v++) {
		struct ns_agg agg;
		struct ns_error err = { 0 };
		if (ns_aggregate(t, &variants[v], &agg, &err) == 0) {
			report_all(&agg, h >> (v * 16));
			ns_agg_release(&agg);
		}
	}
}

static bool same_event(const struct ns_event *a, const struct ns_event *b)
{
	/* (external_id and correlation share their bytes with a memory record's fields) */
	return a->ts_ns == b->ts_ns && a->dur_ns == b->dur_ns && a->external_id == b->external_id &&
	       a->correlation == b->correlation && a->idx == b->idx && a->name == b->name &&
	       a->input_dims == b->input_dims && a->thread == b->thread && a->stack == b->stack &&
	       a->neff == b->neff && a->cat == b->cat && a->kind == b->kind && a->flags == b->flags;
}

/* The same parse read another way (b, how): result, messages, trace. */
static void expect_same_parse(const char *how, const struct ns_trace *t, const struct result *r1,
			      const struct ns_trace *t2, const struct result *r2)
{
	/* Limits and corrupt compressed streams are noticed after a number of
	 * bytes that depends on the reads; everything else must not. */
	if (r1->rc == NS_ERR_NOMEM || r2->rc == NS_ERR_NOMEM || strstr(r1->err.msg, ": corrupt ") ||
	    strstr(r2->err.msg, ": corrupt "))
		return;
	FUZZ_CHECK(r1->rc == r2->rc, "rc %d whole, %d %s (%s | %s)", r1->rc, r2->rc, how, r1->err.msg, r2->err.msg);
	FUZZ_CHECK(strcmp(r1->err.msg, r2->err.msg) == 0, "'%s' whole, '%s' %s", r1->err.msg, r2->err.msg, how);
	FUZZ_CHECK(strcmp(r1->warn.msg, r2->warn.msg) == 0, "'%s' whole, '%s' %s", r1->warn.msg, r2->warn.msg, how);
	FUZZ_CHECK(t->n_events == t2->n_events && t->n_flows == t2->n_flows && t->n_trace_events == t2->n_trace_events &&
			   t->truncated_at == t2->truncated_at,
		   "events %zu/%llu cut %lld whole, %zu/%llu cut %lld %s", t->n_events,
		   (unsigned long long)t->n_trace_events, (long long)t->truncated_at, t2->n_events,
		   (unsigned long long)t2->n_trace_events, (long long)t2->truncated_at, how);
	/* (a parse tried again undoes what its first attempt interned) */
	FUZZ_CHECK(t->strings.count == t2->strings.count, "%u strings whole, %u %s", t->strings.count,
		   t2->strings.count, how);
	for (uint32_t id = 0; id < t->strings.count; id++)
		FUZZ_CHECK(strcmp(ns_strtab_get(&t->strings, id), ns_strtab_get(&t2->strings, id)) == 0,
			   "string %u differs %s", id, how);
	for (size_t i = 0; i < t->n_events; i++)
		FUZZ_CHECK(same_event(&t->events[i], &t2->events[i]), "event %zu differs %s", i, how);
	for (size_t i = 0; i < t->n_flows; i++)
		FUZZ_CHECK(memcmp(&t->flows[i], &t2->flows[i], offsetof(struct ns_flow, kind) + 1) == 0,
			   "flow end %zu differs %s", i, how);
	FUZZ_CHECK(t->n_threads == t2->n_threads, "%zu threads whole, %zu %s", t->n_threads, t2->n_threads, how);
	for (size_t i = 0; i < t->n_threads; i++)
		FUZZ_CHECK(t->threads[i].name == t2->threads[i].name && t->threads[i].pid_text == t2->threads[i].pid_text &&
				   t->threads[i].tid_text == t2->threads[i].tid_text,
			   "thread %zu differs %s", i, how);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fuzz_hash(data, size);
	struct ns_trace t, t2;
	struct result r1, r2;

	ingest(data, size, 0, 0, 0, &t, &r1);
	/* pieces of 1..64 bytes; larger for large inputs, since a value cut
	 * across reads is rescanned from its start after each one */
	ingest(data, size, (uint32_t)(1 + h % 64 + size / 256), 0, 0, &t2, &r2);
	expect_same_parse("in pieces", &t, &r1, &t2, &r2);
	ns_trace_release(&t2);
	/* (without the sink: metadata rows are decoded only for one) */
	struct ns_trace t3;
	struct result r3;
	ingest(data, size, 0, SPLIT_NONE, 0, &t3, &r3);
	ingest(data, size, 0, (uint32_t)(1 + (h >> 20) % 999), (uint32_t)(2 + (h >> 40) % 63), &t2, &r2);
	expect_same_parse("split", &t3, &r3, &t2, &r2);
	ns_trace_release(&t2);
	ns_trace_release(&t3);

	if (r1.rc == 0) {
		FUZZ_CHECK(r1.sink.count == t.n_trace_events, "sink saw %llu of %llu events",
			   (unsigned long long)r1.sink.count, (unsigned long long)t.n_trace_events);
		FUZZ_CHECK(t.n_events + t.n_flows <= t.n_trace_events, "kept more than read");
		FUZZ_CHECK(t.truncated_at < 0 || r1.warn.msg[0] != 0, "truncation without warning");
		check_strings(&t);
		aggregate_and_report(&t, h);
		if (t.n_events < 4096) {
			struct ns_trace two[2] = { t, t }, merged;
			struct ns_error err = { 0 };
			int rc = ns_trace_merge(two, 2, &merged, &err);
			/* (two copies share a base time: only memory can fail) */
			FUZZ_CHECK(rc == 0 || rc == NS_ERR_NOMEM, "merge: %s", err.msg);
			if (rc == 0) {
				FUZZ_CHECK(merged.n_events == 2 * t.n_events && merged.n_flows == 2 * t.n_flows,
					   "merged %zu events, %zu flows of 2 x %zu, %zu", merged.n_events,
					   merged.n_flows, t.n_events, t.n_flows);
				aggregate_and_report(&merged, h >> 3);
			}
			ns_trace_release(&merged);
		}
	}
	ns_trace_release(&t);
	return 0;
}
