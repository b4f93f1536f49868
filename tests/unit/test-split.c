/* One file on two cores (ingest/kineto.c "split"): a trace parsed with
 * its traceEvents cut into parts that a second thread reads must be the
 * very trace a single thread makes (every event, string id, thread, flow
 * end, FLOPs and device args, every flag), wherever the parts start and
 * however many they are; and the parts must really have been used. Run
 * over every Kineto trace of the corpus (gzip'd ones unpacked in memory:
 * the split needs plain bytes), in 2 parts from five starting points and
 * in 5 and 64 parts, and over hand-made traces for the cases where a part
 * has to be dropped. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ingest/ingest.h"

struct parse {
	struct ns_trace t;
	int rc;
	struct ns_error warn, err;
};

/* No split when parts is 0; else that many parts, the first from permille
 * (0: an even cut). */
static void parse(const char *bytes, size_t len, uint32_t permille, uint32_t parts, struct parse *p)
{
	struct ns_ingest_opts o = { .split_min = parts ? 1 : 0, .split_permille = permille, .split_parts = parts };
	memset(p, 0, sizeof(*p));
	ns_trace_init(&p->t);
	p->rc = ns_ingest_mem(bytes, len, "trace.json", &p->t, &o, &p->warn, &p->err);
}

#define SAME(what, a, b) cr_expect_eq((a), (b), "%s @%u: %s differs", name, permille, what)

/* The single thread's trace (a) and the split one (b) are the same.
 * (permille: for the messages, the first part's start and the number of
 * parts as 1000 * parts + permille) */
static void expect_same(const char *name, uint32_t permille, const struct parse *pa, const struct parse *pb)
{
	const struct ns_trace *a = &pa->t, *b = &pb->t;
	SAME("rc", pa->rc, pb->rc);
	cr_expect_str_eq(pa->err.msg, pb->err.msg, "%s @%u: error", name, permille);
	cr_expect_str_eq(pa->warn.msg, pb->warn.msg, "%s @%u: warning", name, permille);
	SAME("strings", a->strings.count, b->strings.count);
	for (uint32_t i = 0; i < a->strings.count && i < b->strings.count; i++)
		if (ns_strtab_len(&a->strings, i) != ns_strtab_len(&b->strings, i) ||
		    memcmp(ns_strtab_get(&a->strings, i), ns_strtab_get(&b->strings, i), ns_strtab_len(&a->strings, i))) {
			cr_expect_fail("%s @%u: string %u differs", name, permille, i);
			break;
		}
	SAME("events", a->n_events, b->n_events);
	for (size_t i = 0; i < a->n_events && i < b->n_events; i++) {
		const struct ns_event *x = &a->events[i], *y = &b->events[i];
		if (x->ts_ns != y->ts_ns || x->dur_ns != y->dur_ns || x->external_id != y->external_id ||
		    x->correlation != y->correlation || x->idx != y->idx || x->name != y->name ||
		    x->input_dims != y->input_dims || x->thread != y->thread || x->stack != y->stack ||
		    x->neff != y->neff || x->cat != y->cat || x->kind != y->kind || x->flags != y->flags) {
			cr_expect_fail("%s @%u: event %zu differs", name, permille, i);
			break;
		}
	}
	SAME("flows", a->n_flows, b->n_flows);
	for (size_t i = 0; i < a->n_flows && i < b->n_flows; i++)
		if (a->flows[i].id != b->flows[i].id || a->flows[i].ts_ns != b->flows[i].ts_ns ||
		    a->flows[i].thread != b->flows[i].thread || a->flows[i].kind != b->flows[i].kind) {
			cr_expect_fail("%s @%u: flow %zu differs", name, permille, i);
			break;
		}
	SAME("threads", a->n_threads, b->n_threads);
	for (size_t i = 0; i < a->n_threads && i < b->n_threads; i++) {
		const struct ns_thread *x = &a->threads[i], *y = &b->threads[i];
		if (x->pid_text != y->pid_text || x->tid_text != y->tid_text || x->pid != y->pid || x->tid != y->tid ||
		    x->name != y->name) {
			cr_expect_fail("%s @%u: thread %zu differs", name, permille, i);
			break;
		}
	}
	SAME("FLOPs", a->n_flops, b->n_flops);
	for (size_t i = 0; i < a->n_flops && i < b->n_flops; i++)
		if (a->flops[i].event != b->flops[i].event || a->flops[i].flops != b->flops[i].flops) {
			cr_expect_fail("%s @%u: FLOPs %zu differ", name, permille, i);
			break;
		}
	SAME("device args", a->n_dev_args, b->n_dev_args);
	for (size_t i = 0; i < a->n_dev_args && i < b->n_dev_args; i++)
		if (a->dev_args[i].event != b->dev_args[i].event || a->dev_args[i].stream != b->dev_args[i].stream ||
		    a->dev_args[i].bytes != b->dev_args[i].bytes) {
			cr_expect_fail("%s @%u: device args %zu differ", name, permille, i);
			break;
		}
	SAME("trace events", a->n_trace_events, b->n_trace_events);
	SAME("untimed launches", a->n_untimed_launches, b->n_untimed_launches);
	SAME("counters", a->n_counters, b->n_counters);
	SAME("metadata", a->n_meta, b->n_meta);
	SAME("truncation", a->truncated_at, b->truncated_at);
	SAME("fraction", a->ts_has_fraction, b->ts_has_fraction);
	SAME("memory", a->profile_memory, b->profile_memory);
	SAME("legacy", a->legacy_autograd, b->legacy_autograd);
	SAME("base time", a->base_time_ns, b->base_time_ns);
	SAME("categories", memcmp(a->has_cat, b->has_cat, sizeof(a->has_cat)), 0);
	cr_expect_eq(a->split_at, -1, "%s: the single thread split", name);
}

/* Parses bytes alone and split in each way; the number of splits used. */
static int check_all_points(const char *name, const char *bytes, size_t len)
{
	static const struct {
		uint32_t permille, parts;
	} ways[] = { { 50, 2 }, { 250, 2 }, { 500, 2 }, { 750, 2 }, { 950, 2 }, { 0, 5 }, { 0, 64 } };
	struct parse one, two;
	int used = 0;
	parse(bytes, len, 0, 0, &one);
	for (size_t k = 0; k < sizeof(ways) / sizeof(ways[0]); k++) {
		parse(bytes, len, ways[k].permille, ways[k].parts, &two);
		expect_same(name, 1000 * ways[k].parts + ways[k].permille, &one, &two);
		used += two.t.split_at >= 0;
		ns_trace_release(&two.t);
	}
	ns_trace_release(&one.t);
	return used;
}

/* The file's bytes, gunzipped when gzip'd; NULL when unreadable. */
static char *load(const char *path, size_t *len)
{
	gzFile f = gzopen(path, "rb");
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap);
	int got;
	if (!f || !buf) {
		if (f)
			gzclose(f);
		free(buf);
		return NULL;
	}
	while ((got = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)got;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
		cr_assert(buf);
	}
	gzclose(f);
	*len = n;
	return buf;
}

struct walk {
	int traces, splits;
};

static bool is_trace(const char *name)
{
	size_t n = strlen(name);
	return (n > 5 && strcmp(name + n - 5, ".json") == 0) || (n > 8 && strcmp(name + n - 8, ".json.gz") == 0);
}

static void walk(const char *dir, struct walk *w)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(path, w);
		} else if (is_trace(e->d_name)) {
			size_t len;
			char *bytes = load(path, &len);
			/* (a Kineto trace: JSON that names traceEvents early on) */
			if (bytes && len && memmem(bytes, len < 4096 ? len : 4096, "traceEvents", 11)) {
				w->traces++;
				w->splits += check_all_points(path, bytes, len);
			}
			free(bytes);
		}
	}
	closedir(d);
}

Test(split, every_corpus_trace_parses_the_same_split_anywhere, .timeout = 600)
{
	const char *root = getenv("NS_CORPUS");
	struct walk w = { 0 };
	cr_assert(root, "NS_CORPUS is not set (meson test sets it)");
	walk(root, &w);
	cr_log_info("%d traces, %d of %d split parses used a part", w.traces, w.splits, 7 * w.traces);
	cr_expect_geq(w.traces, 30, "only %d corpus traces found", w.traces);
	cr_expect_geq(w.splits, 4 * w.traces, "a part was used in only %d of %d parses", w.splits, 7 * w.traces);
}

#define EV(name, tid) "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" name "\", \"pid\": 1, \"tid\": " tid \
		      ", \"ts\": 10, \"dur\": 5}"

Test(split, the_part_is_appended_in_the_single_threads_order)
{
	/* new strings and a new thread only in the part; one string of the
	 * part seen before it */
	const char *text = "{\"traceEvents\": [" EV("a", "1") ", " EV("b", "1") ",\n " EV("c", "2") ", " EV("a", "3")
			   "], \"x\": 1}";
	/* (in 2 parts from 750 permille on no "},{" is left: the main parse
	 * reads all) */
	cr_expect_eq(check_all_points("order", text, strlen(text)), 5);
}

Test(split, a_boundary_inside_a_string_is_not_used)
{
	/* the only "},{" past the middle is inside a name */
	const char *text = "{\"traceEvents\": [" EV("a", "1") ", " EV("x},{y", "1") "]}";
	struct parse one, two;
	parse(text, strlen(text), 0, 0, &one);
	parse(text, strlen(text), 600, 2, &two);
	expect_same("string", 600, &one, &two);
	cr_expect_eq(two.t.split_at, -1);
	ns_trace_release(&one.t);
	ns_trace_release(&two.t);
}

Test(split, a_damaged_or_cut_part_is_read_again_by_the_main_parse)
{
	const char *bad = "{\"traceEvents\": [" EV("a", "1") ", " EV("b", "1") ", {\"ph\": x}]}";
	const char *cut = "{\"traceEvents\": [" EV("a", "1") ", " EV("b", "1") ", " EV("c", "1");
	/* the same message (check_all_points compares them); a part before the
	 * bad one may be used, but in 2 parts every part holds it */
	check_all_points("damaged", bad, strlen(bad));
	check_all_points("cut", cut, strlen(cut));
	for (uint32_t permille = 50; permille < 1000; permille += 100) {
		struct parse two;
		parse(bad, strlen(bad), permille, 2, &two);
		cr_expect_eq(two.t.split_at, -1, "damaged @%u: the part was used", permille);
		ns_trace_release(&two.t);
		parse(cut, strlen(cut), permille, 2, &two);
		cr_expect_eq(two.t.split_at, -1, "cut @%u: the part was used", permille);
		ns_trace_release(&two.t);
	}
}

Test(split, a_thread_renamed_to_nothing_in_the_part_is_read_by_the_main_parse)
{
#define NAME(n) "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"" n "\"}}"
	const char *text = "{\"traceEvents\": [" NAME("main") ", " EV("a", "1") ", " EV("b", "1") ", " NAME("") ", "
			   EV("c", "1") "]}";
	struct parse one, two;
	parse(text, strlen(text), 0, 0, &one);
	parse(text, strlen(text), 550, 2, &two);
	expect_same("renamed", 550, &one, &two);
	cr_expect_eq(one.t.threads[0].name, 0, "the last name wins");
	cr_expect_eq(two.t.split_at, -1);
	ns_trace_release(&one.t);
	ns_trace_release(&two.t);
}

Test(split, a_file_is_read_by_both_threads_through_one_descriptor)
{
	char path[] = "/tmp/ns-split-XXXXXX";
	const char *text = "{\"traceEvents\": [" EV("a", "1") ", " EV("b", "1") ",\n " EV("c", "2") ", " EV("a", "3")
			   "],\n \"x\": 1}";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct ns_ingest_opts split = { .split_min = 1 };
	struct parse one, two;
	memset(&two, 0, sizeof(two));
	parse(text, strlen(text), 0, 0, &one);
	ns_trace_init(&two.t);
	two.rc = ns_ingest_file(path, &two.t, &split, &two.warn, &two.err);
	unlink(path);
	expect_same("file", 500, &one, &two);
	cr_expect_geq(two.t.split_at, 0, "the part was not used");
	ns_trace_release(&one.t);
	ns_trace_release(&two.t);
}

/* n events, a line each, every third named so that it holds a "},{"; with
 * damaged, the one in the middle is not an event (its message names its
 * line, which the main parse counts across the parts it appends). */
static char *many_events(int n, bool damaged)
{
	size_t cap = (size_t)n * 128 + 64, len = 0;
	char *text = malloc(cap);
	cr_assert(text);
	len += (size_t)snprintf(text, cap, "{\"traceEvents\": [");
	for (int i = 0; i < n; i++) {
		const char *name = i % 3 == 2 ? "x}, {y" : "op";
		if (damaged && i == n / 2)
			len += (size_t)snprintf(text + len, cap - len, "%s{\"ph\": x}", i ? ",\n" : "");
		else
			len += (size_t)snprintf(text + len, cap - len,
						"%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s%d\", \"pid\": 1, "
						"\"tid\": %d, \"ts\": %d, \"dur\": 1}",
						i ? ",\n" : "", name, i, 1 + i % 4, 10 * i);
	}
	snprintf(text + len, cap - len, "]}");
	return text;
}

Test(split, parts_whose_boundary_is_inside_a_string_are_passed_over)
{
	/* any number of parts: a boundary guessed inside a name is never
	 * arrived at, so the part before it (or the main parse) reads on to
	 * the next one */
	char *text = many_events(60, false);
	struct parse one, two;
	int used = 0;
	parse(text, strlen(text), 0, 0, &one);
	for (uint32_t parts = 2; parts <= 64; parts++) {
		parse(text, strlen(text), 0, parts, &two);
		expect_same("strings", 1000 * parts, &one, &two);
		used += two.t.split_at >= 0;
		ns_trace_release(&two.t);
	}
	cr_expect_eq(one.t.n_events, 60);
	cr_expect_geq(used, 50, "parts used in only %d of 63 parses", used);
	ns_trace_release(&one.t);
	free(text);
}

Test(split, a_damaged_event_in_a_middle_part_is_named_as_one_thread_names_it)
{
	char *text = many_events(60, true);
	struct parse one, two;
	parse(text, strlen(text), 0, 0, &one);
	cr_expect_eq(one.rc, NS_ERR_INPUT);
	cr_expect(strstr(one.err.msg, "trace.json:31:8: "), "%s", one.err.msg);
	for (uint32_t parts = 2; parts <= 64; parts++) {
		parse(text, strlen(text), 0, parts, &two);
		expect_same("damaged", 1000 * parts, &one, &two);
		ns_trace_release(&two.t);
	}
	ns_trace_release(&one.t);
	free(text);
}
