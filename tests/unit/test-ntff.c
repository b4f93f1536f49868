/* Unit tests of the Neuron side (docs/neuron.md): names and pairing of
 * capture files, hash normalization, the export readers (units, fractions,
 * damage), correlation of system-profile intervals into kernel events and
 * their attribution by aggregate.c, engine timelines and --by-neff keys. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aggregate/aggregate.h"
#include "neff/neff.h"
#include "ntff/capture.h"
#include "ntff/engstats.h"
#include "ntff/ntff.h"
#include "ntff/ntff-internal.h"
#include "ntff/rows.h"

static char tmpdir[256];

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ns-test-ntff-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

/* Writes text to tmpdir/name and returns the path (static buffer per call site). */
static const char *put(const char *name, const char *text)
{
	static char paths[8][512];
	static int next;
	char *path = paths[next++ % 8];
	snprintf(path, 512, "%s/%s", tmpdir, name);
	for (char *slash = path + strlen(tmpdir) + 1; (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
	}
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

TestSuite(ntff, .init = setup, .fini = teardown);

Test(ntff, time_units_and_engine_labels)
{
	cr_assert_eq(ns_time_unit_parse("us"), NS_TU_US);
	cr_assert_eq(ns_time_unit_parse("sec"), NS_TU_AUTO);
	cr_assert_eq(ns_time_unit_parse(NULL), NS_TU_AUTO);
	cr_assert_str_eq(ns_time_unit_name(NS_TU_MS), "ms");
	static const struct {
		const char *label;
		enum ns_engine e;
	} cases[] = {
		{ "tensor", NS_ENG_PE },      { "TensorMatrix", NS_ENG_PE }, { "pe", NS_ENG_PE },
		{ "Activation", NS_ENG_ACT }, { "scalar", NS_ENG_ACT },     { "vector", NS_ENG_DVE },
		{ "DVE", NS_ENG_DVE },        { "gpsimd", NS_ENG_POOL },     { "Pool", NS_ENG_POOL },
		{ "sync", NS_ENG_SP },        { "sp", NS_ENG_SP },           { "dma", NS_ENG_DMA },
		{ "qSyncIO0", NS_ENG_DMA },   { "penguin", NS_ENG__COUNT },  { "q", NS_ENG__COUNT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(ns_engine_from_label(cases[i].label, strlen(cases[i].label)), cases[i].e, "%s",
			     cases[i].label);
}

Test(ntff, neff_hash_normalize)
{
	char out[65];
	cr_assert_eq(ns_neff_hash_normalize("0x00000000000000ff", 18, out, sizeof(out)), 3);
	cr_assert_str_eq(out, "255");
	ns_neff_hash_normalize("0xe2e7829a38afdd66", 18, out, sizeof(out));
	cr_assert_str_eq(out, "16350180571079499110");
	ns_neff_hash_normalize(" 395760075800974 ", 17, out, sizeof(out));
	cr_assert_str_eq(out, "395760075800974");
	const char *path = "/cache/neff_395760075800974_vnc_2.neff";
	ns_neff_hash_normalize(path, strlen(path), out, sizeof(out));
	cr_assert_str_eq(out, "395760075800974");
	ns_neff_hash_normalize("graph_ab12.neff", 15, out, sizeof(out));
	cr_assert_str_eq(out, "ab12");
	ns_neff_hash_normalize("0xnothex", 8, out, sizeof(out));
	cr_assert_str_eq(out, "0xnothex");
	cr_assert_eq(ns_neff_hash_normalize("  ", 2, out, sizeof(out)), 0);
}

Test(ntff, classify_names)
{
	struct ns_cap_file f;
	cr_assert_eq(ns_capture_classify(put("profile_nc_3_session_7.ntff", "x"), &f, NULL), 1);
	cr_assert_eq(f.kind, NS_CAP_NTFF);
	cr_assert_eq(f.naming, NS_NTFF_SESSION);
	cr_assert_eq(f.nc, 3);
	cr_assert_eq(f.session, 7);
	cr_assert_str_eq(f.stem, "profile_nc_3_session_7");
	cr_assert_eq(ns_capture_classify(put("14382885777943380728_instid_0_vnc_10.ntff", "x"), &f, NULL), 1);
	cr_assert_eq(f.naming, NS_NTFF_MODEL);
	cr_assert_str_eq(f.hash, "14382885777943380728"); /* above INT64_MAX: kept as text */
	cr_assert_eq(f.nc, 10);
	cr_assert_eq(ns_capture_classify(put("profile_rank_4.ntff", "x"), &f, NULL), 1);
	cr_assert_eq(f.naming, NS_NTFF_CLI);
	cr_assert_eq(f.cli_rank, 4);
	cr_assert_eq(ns_capture_classify(put("model_1_pid_9_vnc_2_inst_0_20260101_000000.ntff", "x"), &f, NULL), 1);
	cr_assert_eq(f.naming, NS_NTFF_CONTINUOUS);
	cr_assert_eq(f.nc, 2);
	cr_assert_eq(ns_capture_classify(put("neff_42_vnc_1.neff", "x"), &f, NULL), 1);
	cr_assert_eq(f.kind, NS_CAP_NEFF);
	cr_assert_str_eq(f.hash, "42");
	cr_assert_eq(f.nc, 1);
	cr_assert_eq(ns_capture_classify(put("trace_info.pb", "x"), &f, NULL), 1);
	cr_assert_eq(f.naming, NS_PB_TRACE_INFO);
	/* JSON by content */
	cr_assert_eq(ns_capture_classify(put("a.json", "{\"system_profile_metadata\": []}"), &f, NULL), 1);
	cr_assert_eq(f.kind, NS_CAP_SYSTEM_JSON);
	cr_assert_eq(ns_capture_classify(put("b.json", "{\"events\": [], \"data_version\": 2}"), &f, NULL), 1);
	cr_assert_eq(f.kind, NS_CAP_SYSTEM_JSON);
	cr_assert_eq(ns_capture_classify(put("c__neff_77.json", "{\"summary\": [{}], \"instruction\": []}"), &f, NULL), 1);
	cr_assert_eq(f.kind, NS_CAP_DEVICE_JSON);
	cr_assert_str_eq(f.stem, "c");
	cr_assert_str_eq(f.hash, "77");
	cr_assert_eq(ns_capture_classify(put("x_nc_2_session_5.json", "{\"n_0123456789abcdef\": {\"total_time\": 1}}"), &f, NULL), 1);
	cr_assert_eq(f.kind, NS_CAP_SUMMARY_JSON);
	cr_assert_eq(f.nc, 2);
	cr_assert_eq(f.session, 5);
	cr_assert_eq(ns_capture_classify(put("t.json", "{\"schemaVersion\": 1, \"traceEvents\": []}"), &f, NULL), 1);
	cr_assert_eq(f.kind, NS_CAP_TRACE);
	cr_assert_eq(ns_capture_classify(put("truth.json", "{\"capture\": 1}"), &f, NULL), 0);
	cr_assert_eq(ns_capture_classify(put("notes.txt", "x"), &f, NULL), 0);
}

/* One system export above two process folders: each gets it, split; a
 * process's own export wins over it. */
static bool unit_split(const struct ns_cap_unit *u)
{
	return u->system_json >= 0 && u->files[u->system_json].split;
}

Test(ntff, system_export_above_processes_is_split)
{
	struct ns_capture *c = NULL;
	struct ns_error err = { 0 };
	char root[512], one[512];
	put("out/i-1_pid_10/1776672348756756905/trace.json", "{\"traceEvents\": []}");
	put("out/i-1_pid_11/1776672348756756906/trace.json", "{\"traceEvents\": []}");
	put("out/system_profile.json", "{\"system_profile_metadata\": [], \"trace_event\": []}");
	snprintf(root, sizeof(root), "%s/out", tmpdir);
	cr_assert_eq(ns_capture_scan(root, NULL, &c, &err), 0, "%s", err.msg);
	cr_assert_eq(c->n_units, 2);
	cr_assert(unit_split(&c->units[0]) && unit_split(&c->units[1]));
	ns_capture_free(c);
	/* a report's shallow scan of one process folder finds it too */
	struct ns_capture_opts co = { NULL, true };
	snprintf(one, sizeof(one), "%s/out/i-1_pid_11/1776672348756756906", tmpdir);
	cr_assert_eq(ns_capture_scan(one, &co, &c, &err), 0, "%s", err.msg);
	const struct ns_cap_unit *u;
	cr_assert_eq(ns_capture_find(c, one, &u, NULL), 0);
	cr_assert_not_null(u);
	cr_assert_eq(u->pid, 11);
	cr_assert(unit_split(u));
	ns_capture_free(c);
	/* its own export wins */
	put("out/i-1_pid_11/1776672348756756906/system_profile.json", "{\"trace_event\": []}");
	cr_assert_eq(ns_capture_scan(one, &co, &c, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_capture_find(c, one, &u, NULL), 0);
	cr_assert_not_null(u);
	cr_assert(u->system_json >= 0 && !unit_split(u));
	ns_capture_free(c);
}

static size_t count_kind(const struct ns_cap_unit *u, enum ns_cap_kind k)
{
	size_t n = 0;
	for (size_t i = 0; i < u->n_files; i++)
		n += u->files[i].kind == k;
	return n;
}

/* Exports named <instance>_pid_<pid>_... in an exports-only folder beside
 * the process folders (view -d with --output-file json/...) join their
 * process; a folder with other capture files is a unit of its own. */
Test(ntff, named_exports_beside_the_process_folders)
{
	struct ns_capture *c = NULL;
	struct ns_error err = { 0 };
	char one[512], root[512];
	put("cap/i-1_pid_10/1776672348756756905/trace.json", "{\"traceEvents\": []}");
	put("cap/i-1_pid_10/1776672348756756905/profile_nc_0_session_1.ntff", "t");
	put("cap/i-1_pid_11/1776672348756756906/trace.json", "{\"traceEvents\": []}");
	put("cap/json/i-1_pid_10_nc_0_session_1.json", "{\"instruction\": []}");
	put("cap/json/i-1_pid_11_nc_0_session_1.json", "{\"instruction\": []}");
	put("cap/other/trace.json", "{\"traceEvents\": []}");
	put("cap/other/i-1_pid_10_nc_1_session_1.json", "{\"instruction\": []}");
	struct ns_capture_opts co = { NULL, true };
	snprintf(one, sizeof(one), "%s/cap/i-1_pid_10/1776672348756756905", tmpdir);
	cr_assert_eq(ns_capture_scan(one, &co, &c, &err), 0, "%s", err.msg);
	const struct ns_cap_unit *u;
	cr_assert_eq(ns_capture_find(c, one, &u, NULL), 0);
	cr_assert_not_null(u);
	cr_assert_eq(count_kind(u, NS_CAP_DEVICE_JSON), 1);
	for (size_t i = 0; i < u->n_files; i++)
		if (u->files[i].kind == NS_CAP_DEVICE_JSON)
			cr_assert_str_eq(u->files[i].name, "i-1_pid_10_nc_0_session_1.json");
	ns_capture_free(c);
	snprintf(root, sizeof(root), "%s/cap", tmpdir);
	cr_assert_eq(ns_capture_scan(root, NULL, &c, &err), 0, "%s", err.msg);
	cr_assert_eq(c->n_units, 3); /* the two processes and other/; json/ is handed over */
	for (size_t i = 0; i < c->n_units; i++)
		cr_assert_eq(count_kind(&c->units[i], NS_CAP_DEVICE_JSON), 1, "%s", c->units[i].dir);
	ns_capture_free(c);
}

Test(ntff, pairing_and_gaps)
{
	struct ns_capture *c = NULL;
	struct ns_error err = { 0 };
	put("run/i-0abc_pid_7/1776672348756756905/neff_5_vnc_0.neff", "n");
	put("run/i-0abc_pid_7/1776672348756756905/neff_6_vnc_0.neff", "n");
	put("run/i-0abc_pid_7/1776672348756756905/profile_nc_0_session_1.ntff", "t");
	put("run/i-0abc_pid_7/1776672348756756905/profile_nc_1_session_1.ntff", "t");
	put("run/i-0abc_pid_7/1776672348756756905/ntrace.pb", "p");
	put("run/i-0abc_pid_7/1776672348756756905/profile_nc_0_session_1__neff_5.json", "{\"instruction\": []}");
	char root[512];
	snprintf(root, sizeof(root), "%s/run", tmpdir);
	cr_assert_eq(ns_capture_scan(root, NULL, &c, &err), 0, "%s", err.msg);
	cr_assert_eq(c->n_units, 1);
	const struct ns_cap_unit *u = &c->units[0];
	cr_assert_str_eq(u->instance, "i-0abc");
	cr_assert_eq(u->pid, 7);
	cr_assert_str_eq(u->session, "1776672348756756905");
	cr_assert_eq(u->n_pairs, 2); /* both NEFFs of core 0 with the core-0 session NTFF */
	cr_assert_eq(u->pairs[0].device_json >= 0, true);
	cr_assert_eq(u->pairs[1].device_json, -1);
	int kinds[16] = { 0 };
	for (size_t g = 0; g < u->n_gaps; g++)
		kinds[u->gaps[g].kind]++;
	cr_assert_eq(kinds[NS_GAP_NO_TRACE], 1);
	cr_assert_eq(kinds[NS_GAP_NTFF_NO_NEFF], 1); /* profile_nc_1 */
	cr_assert_eq(kinds[NS_GAP_PAIR_NO_DEVICE], 1);
	cr_assert_eq(kinds[NS_GAP_PAIR_NO_SUMMARY], 2);
	cr_assert_eq(kinds[NS_GAP_PB_NO_EXPORT], 1);
	cr_assert_eq(kinds[NS_GAP_NO_TRACE_INFO], 1);

	struct ns_ntff_cmd *cmds = NULL;
	size_t n = 0;
	cr_assert_eq(ns_ntff_commands(u, "neuron-explorer", "/out", NS_CONV_SYSTEM | NS_CONV_DEVICE, &cmds, &n, &err), 0);
	cr_assert_eq(n, 4); /* system, the missing device JSON, two summaries */
	char *line = ns_ntff_cmd_text(&cmds[0]);
	cr_assert(strstr(line, "neuron-explorer view -d ") == line);
	cr_assert(strstr(line, "--output-format json --ignore-device-profile --output-file /out/system_profile.json"));
	free(line);
	line = ns_ntff_cmd_text(&cmds[n - 1]);
	cr_assert(strstr(line, "--output-format summary-json > /out/profile_nc_0_session_1__neff_6.summary.json"), "%s", line);
	free(line);
	ns_ntff_cmds_free(cmds, n);
	ns_capture_free(c);
}

Test(ntff, device_profile_units_and_origin)
{
	struct ns_devprof *dp = NULL;
	struct ns_error err = { 0 };
	/* spans 2000 file units for a total_time of 2 ms: microseconds */
	const char *p = put("d.json", "{\"summary\": [{\"total_time\": 0.002}],"
				      " \"metadata\": [{\"first_hw_timestamp\": 1000000000000}],"
				      " \"active_time\": [{\"engine\": \"tensor\", \"start_ts\": 0, \"end_ts\": 1500},"
				      "                  {\"engine\": \"tensor\", \"start_ts\": 1000, \"end_ts\": 2000}],"
				      " \"dma\": [{\"timestamp\": 100, \"duration\": 50}], \"new_thing\": 1}");
	cr_assert_eq(ns_devprof_read(p, NS_TU_AUTO, &dp, &err), 0, "%s", err.msg);
	cr_assert_eq(dp->unit, NS_TU_US);
	cr_assert_eq(dp->origin_ns, 1000000000000);
	cr_assert_eq(dp->n_busy[NS_ENG_PE], 1); /* merged */
	cr_assert_eq(dp->busy[NS_ENG_PE][0].start, 1000000000000);
	cr_assert_eq(dp->busy[NS_ENG_PE][0].end, 1000002000000);
	cr_assert_eq(dp->busy_src[NS_ENG_PE], NS_ESRC_ACTIVE_TIME);
	cr_assert_eq(dp->busy_src[NS_ENG_DMA], NS_ESRC_DMA);
	cr_assert_eq(dp->n_unknown_keys, 1);
	cr_assert_str_eq(dp->unknown_keys[0], "new_thing");
	ns_devprof_free(dp);
	/* --device-time-unit wins over detection */
	cr_assert_eq(ns_devprof_read(p, NS_TU_NS, &dp, &err), 0);
	cr_assert_eq(dp->unit, NS_TU_NS);
	cr_assert_eq(dp->busy[NS_ENG_PE][0].end - dp->busy[NS_ENG_PE][0].start, 2000);
	ns_devprof_free(dp);
}

Test(ntff, device_profile_damage)
{
	struct ns_devprof *dp = NULL;
	struct ns_error err = { 0 };
	const char *p = put("bad.json", "{\"instruction\": [{\"duration\": 1}, 5, {\"timestamp\": \"7\", \"duration\": \"3\", "
					 "\"label\": \"Vector\"}], \"summary\": 3}");
	cr_assert_eq(ns_devprof_read(p, NS_TU_AUTO, &dp, &err), 0, "%s", err.msg);
	cr_assert_eq(dp->notes.total, 3); /* no timestamp, not an object, summary not an array */
	cr_assert_eq(dp->n_busy[NS_ENG_DVE], 1); /* numbers in strings are coerced */
	cr_assert(strstr(dp->notes.v[0], "bad.json: byte 17: instruction: no timestamp"), "%s", dp->notes.v[0]);
	ns_devprof_free(dp);
	p = put("cut.json", "{\"instruction\": [{\"timestamp\": 1, \"duration\": 2}, {\"timest");
	cr_assert_eq(ns_devprof_read(p, NS_TU_AUTO, &dp, &err), 0);
	cr_assert_eq(dp->truncated_at, 50); /* where the cut element starts */
	cr_assert_eq(dp->count[NS_DP_INSTRUCTION], 1);
	ns_devprof_free(dp);
	p = put("syntax.json", "{\"instruction\": [1 2]}");
	cr_assert_eq(ns_devprof_read(p, NS_TU_AUTO, &dp, &err), NS_ERR_INPUT);
	cr_assert(strstr(err.msg, "syntax.json: byte 19: expected ',' or ']' in an array"), "%s", err.msg);
	p = put("list.json", "[1]");
	cr_assert_eq(ns_devprof_read(p, NS_TU_AUTO, &dp, &err), 0); /* an array at the top: nothing to read */
	ns_devprof_free(dp);
}

/* --device-detail: instruction durations added per hlo_name / layer /
 * opcode, converted once to ns, most time first (ties by name), an
 * instruction without the field in the "" group; rows add up to the NEFF's
 * instruction time. */
Test(ntff, device_detail_grouping)
{
	struct ns_devprof *dp = NULL;
	struct ns_error err = { 0 };
	/* microseconds (span 4 of total_time 4 us); one element without a timestamp is not counted */
	const char *p = put("g.json", "{\"summary\": [{\"total_time\": 0.000004}], \"instruction\": ["
				      "{\"timestamp\": 0, \"duration\": 1.5, \"label\": \"TensorMatrix\", \"opcode\": \"MATMUL\","
				      " \"hlo_name\": \"dot.1\", \"layer\": \"aten.mm\"},"
				      "{\"timestamp\": 1, \"end\": 2.25, \"label\": \"Vector\", \"opcode\": \"TENSOR_TENSOR\","
				      " \"hlo_name\": \"add.2\", \"layer\": \"aten.mm\"},"
				      "{\"timestamp\": 2, \"duration\": 1.5, \"label\": \"TensorMatrix\", \"opcode\": \"MATMUL\","
				      " \"hlo_name\": \"dot.1\", \"layer\": 7},"
				      "{\"timestamp\": 3, \"duration\": 1, \"label\": \"Sync\", \"opcode\": \"NOP\"},"
				      "{\"duration\": 100, \"opcode\": \"MATMUL\", \"hlo_name\": \"dot.1\"}]}");
	cr_assert_eq(ns_devprof_read(p, NS_TU_AUTO, &dp, &err), 0, "%s", err.msg);
	cr_assert_eq(dp->unit, NS_TU_US);
	cr_assert_eq(dp->n_instructions, 4);
	cr_assert_eq(dp->instruction_ns, 5250); /* 1.5 + 1.25 + 1.5 + 1 us */
	const struct ns_detail_row *h = dp->detail[NS_DETAIL_HLO];
	cr_assert_eq(dp->n_detail[NS_DETAIL_HLO], 3);
	cr_assert_str_eq(ns_strtab_get(&dp->detail_names, h[0].name), "dot.1");
	cr_assert_eq(h[0].count, 2);
	cr_assert_eq(h[0].total_ns, 3000);
	cr_assert_str_eq(ns_strtab_get(&dp->detail_names, h[1].name), "add.2");
	cr_assert_eq(h[1].total_ns, 1250);
	cr_assert_str_eq(ns_strtab_get(&dp->detail_names, h[2].name), ""); /* the NOP: no hlo_name */
	cr_assert_eq(h[2].total_ns, 1000);
	const struct ns_detail_row *l = dp->detail[NS_DETAIL_LAYER];
	cr_assert_eq(dp->n_detail[NS_DETAIL_LAYER], 3);
	cr_assert_str_eq(ns_strtab_get(&dp->detail_names, l[0].name), "aten.mm");
	cr_assert_eq(l[0].count, 2);
	cr_assert_eq(l[0].total_ns, 2750);
	/* 1500 ("7", a number written as the name) and 1000 ("") */
	cr_assert_str_eq(ns_strtab_get(&dp->detail_names, l[1].name), "7");
	cr_assert_eq(l[1].total_ns, 1500);
	const struct ns_detail_row *o = dp->detail[NS_DETAIL_OPCODE];
	int64_t sum = 0;
	for (size_t i = 0; i < dp->n_detail[NS_DETAIL_OPCODE]; i++)
		sum += o[i].total_ns;
	cr_assert_eq(sum, dp->instruction_ns);
	/* ties: by name */
	cr_assert_eq(dp->n_detail[NS_DETAIL_OPCODE], 3);
	cr_assert_str_eq(ns_strtab_get(&dp->detail_names, o[0].name), "MATMUL");
	cr_assert_str_eq(ns_strtab_get(&dp->detail_names, o[1].name), "TENSOR_TENSOR");
	cr_assert_str_eq(ns_strtab_get(&dp->detail_names, o[2].name), "NOP");
	cr_assert_eq(ns_detail_parse("layer"), NS_DETAIL_LAYER);
	cr_assert_eq(ns_detail_parse("hlo_name"), NS_DETAIL__COUNT);
	ns_devprof_free(dp);
}

/* kernels --by-engine: each instruction and dma row's duration (rounded
 * to the ns in the profile's unit), engine and opcode, and the statistics
 * per engine, per engine and opcode, and per NEFF (worked by hand). */
Test(ntff, engine_statistics)
{
	struct ns_devprof *a = NULL, *b = NULL;
	struct ns_error err = { 0 };
	/* microseconds: the span 0..10 matches total_time 10 us */
	const char *pa = put("a.json", "{\"summary\": [{\"total_time\": 0.00001}], \"instruction\": ["
				       "{\"timestamp\": 0, \"duration\": 1.5, \"engine\": \"tensor\", \"opcode\": \"MATMUL\"},"
				       "{\"start_ts\": 2, \"end_ts\": 4.25, \"engine\": \"tensor\", \"opcode\": \"MATMUL\"},"
				       "{\"timestamp\": 5, \"duration\": 0.5, \"engine\": \"tensor\", \"opcode\": \"DRAIN\"},"
				       "{\"timestamp\": 6, \"duration\": 1, \"label\": \"Activation\", \"opcode\": \"ACTIVATE\"},"
				       "{\"timestamp\": 7, \"duration\": 3, \"engine\": \"gpsimd\"},"
				       "{\"timestamp\": 8, \"duration\": 2, \"label\": \"x\", \"opcode\": \"NOP\"},"
				       "{\"timestamp\": 9, \"duration\": -1, \"engine\": \"tensor\"}],"
				       "\"dma\": [{\"timestamp\": 0, \"duration\": 10}],"
				       "\"active_time\": [{\"engine\": \"tensor\", \"start_ts\": 0, \"end_ts\": 5}]}");
	const char *pb = put("b.json", "{\"summary\": [{\"total_time\": 0.000004}], \"instruction\": ["
				       "{\"timestamp\": 0, \"duration\": 4, \"engine\": \"tensor\", \"opcode\": \"MATMUL\"}]}");
	cr_assert_eq(ns_devprof_read(pa, NS_TU_AUTO, &a, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_devprof_read(pb, NS_TU_AUTO, &b, &err), 0, "%s", err.msg);
	cr_assert_eq(a->unit, NS_TU_US);
	/* the row ending before it starts is left out, active_time is no instruction */
	static const int64_t dur[] = { 1500, 2250, 500, 1000, 3000, 2000, 10000 };
	static const uint8_t eng[] = { NS_ENG_PE, NS_ENG_PE, NS_ENG_PE, NS_ENG_ACT, NS_ENG_POOL, NS_ENG__COUNT, NS_ENG_DMA };
	static const char *const op[] = { "MATMUL", "MATMUL", "DRAIN", "ACTIVATE", "", "NOP", "" };
	cr_assert_eq(a->n_instr, 7);
	for (size_t i = 0; i < 7; i++) {
		cr_assert_eq(a->instr[i].dur_ns, dur[i], "row %zu", i);
		cr_assert_eq(a->instr[i].engine, eng[i], "row %zu", i);
		cr_assert_str_eq(ns_strtab_get(&a->detail_names, a->instr[i].opcode), op[i]);
	}
	struct ns_detail_neff p[2] = { { .dp = a, .neff = "a", .nc = 0 }, { .dp = b, .neff = "b", .nc = 0 } };
	struct ns_engine_stats s;
	cr_assert_eq(ns_engine_stats_compute(p, 1, false, false, &s, &err), 0);
	cr_assert_eq(s.n, 5);
	static const char *const names[] = { "PE", "ACT", "POOL", "DMA", "other" };
	static const int64_t totals[] = { 4250, 1000, 3000, 10000, 2000 };
	for (size_t i = 0; i < 5; i++) {
		cr_assert_str_eq(s.v[i].engine, names[i]);
		cr_assert_eq(s.v[i].k.total_ns, totals[i]);
		cr_assert_eq(s.v[i].whole_ns, 20250); /* every engine's time */
	}
	/* PE: 500, 1500, 2250 */
	cr_assert_eq(s.v[0].k.count, 3);
	cr_assert_eq(s.v[0].k.min_ns, 500);
	cr_assert_eq(s.v[0].k.max_ns, 2250);
	cr_assert_float_eq(s.v[0].k.mean_ns, 4250.0 / 3.0, 1e-9);
	cr_assert_float_eq(s.v[0].k.median_ns, 1500.0, 0.0);
	/* sum of squares 7562500 - 4250^2 / 3 = 1541666.67; / 2; sqrt */
	cr_assert_float_eq(s.v[0].k.stddev_ns, 877.97115, 1e-4);
	cr_assert_float_eq(s.v[1].k.stddev_ns, 0.0, 0.0); /* one instruction */
	ns_engine_stats_release(&s);
	/* both profiles, per opcode: PE MATMUL 1500, 2250, 4000; shares of PE's 8250 */
	cr_assert_eq(ns_engine_stats_compute(p, 2, false, true, &s, &err), 0);
	cr_assert_eq(s.n, 6);
	cr_assert_str_eq(s.v[0].opcode_text, "MATMUL");
	cr_assert_eq(s.v[0].k.total_ns, 7750);
	cr_assert_float_eq(s.v[0].k.median_ns, 2250.0, 0.0);
	cr_assert_eq(s.v[0].whole_ns, 8250);
	cr_assert_str_eq(s.v[1].opcode_text, "DRAIN");
	cr_assert_eq(s.v[1].whole_ns, 8250);
	cr_assert_str_eq(s.v[3].engine, "POOL");
	cr_assert_str_eq(s.v[3].opcode_text, "");
	cr_assert_eq(s.v[3].whole_ns, 3000);
	ns_engine_stats_release(&s);
	/* per NEFF too: PE of a (MATMUL 3750, DRAIN 500), then PE of b */
	cr_assert_eq(ns_engine_stats_compute(p, 2, true, true, &s, &err), 0);
	cr_assert_eq(s.n, 7);
	cr_assert_str_eq(s.v[0].neff_text, "a");
	cr_assert_eq(s.v[0].k.total_ns, 3750);
	cr_assert_eq(s.v[0].whole_ns, 4250);
	cr_assert_str_eq(s.v[1].opcode_text, "DRAIN");
	cr_assert_str_eq(s.v[2].neff_text, "b");
	cr_assert_eq(s.v[2].k.total_ns, 4000);
	cr_assert_eq(s.v[2].whole_ns, 4000);
	ns_engine_stats_release(&s);
	ns_devprof_free(a);
	ns_devprof_free(b);
}

/* The NEFF summary: summary[0] first (its *_percent as fractions when all
 * are <= 1), then the summary-json node; throttling from throttle_summary
 * ("all" rows), else the longest throttle_active_nc<N>_time_ns. */
Test(ntff, neff_summary_metrics)
{
	struct ns_devprof *dp = NULL;
	struct ns_summary *s = NULL;
	struct ns_error err = { 0 };
	struct ns_neff_metrics m;
	const char *p = put("m.json", "{\"summary\": [{\"total_time\": 0.0025, \"mfu_estimated_percent\": 0.125,"
				      " \"hbm_read_bytes\": 4096, \"spill_save_bytes\": 0}]}");
	const char *q = put("m.summary.json", "{\"n_00112233445566778899\": {\"mbu_estimated_percent\": 0.5,"
				       " \"hbm_read_bytes\": 1, \"hbm_write_bytes\": 2048, \"throttle_active_nc4_time_ns\": 42,"
				       " \"throttle_active_nc5_time_ns\": 40, \"throttle_gpio_1_active_time_nc4_percent\": 0.01}}");
	cr_assert_eq(ns_devprof_read(p, NS_TU_AUTO, &dp, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_summary_read(q, &s, &err), 0, "%s", err.msg);
	ns_devprof_metrics(dp, s, &s->nodes[0], &m);
	cr_assert(m.has[NS_MET_TOTAL_TIME]);
	cr_assert_float_eq(m.v[NS_MET_TOTAL_TIME], 2500000.0, 1e-9);
	cr_assert_float_eq(m.v[NS_MET_MFU], 12.5, 1e-9);
	cr_assert_float_eq(m.v[NS_MET_MBU], 50.0, 1e-9);         /* from summary-json */
	cr_assert_float_eq(m.v[NS_MET_HBM_READ], 4096.0, 1e-9);  /* summary[0] wins */
	cr_assert_float_eq(m.v[NS_MET_HBM_WRITE], 2048.0, 1e-9);
	cr_assert(m.has[NS_MET_SPILL_SAVE]);
	cr_assert_not(m.has[NS_MET_SPILL_RELOAD]);
	cr_assert_float_eq(m.v[NS_MET_THROTTLE], 42.0, 1e-9);
	ns_devprof_metrics(dp, NULL, NULL, &m);
	cr_assert_not(m.has[NS_MET_THROTTLE]);
	cr_assert_not(m.has[NS_MET_MBU]);
	ns_devprof_free(dp);
	p = put("t.json", "{\"throttle_summary\": [{\"nc_idx\": 0, \"throttle_type\": \"activity_0\","
			  " \"throttle_active_time_ns\": 900}, {\"nc_idx\": 0, \"throttle_type\": \"all\","
			  " \"throttle_active_time_ns\": 700}, {\"nc_idx\": 1, \"throttle_type\": \"all\","
			  " \"throttle_active_time_ns\": 650}]}");
	cr_assert_eq(ns_devprof_read(p, NS_TU_AUTO, &dp, &err), 0, "%s", err.msg);
	ns_devprof_metrics(dp, s, &s->nodes[0], &m);
	cr_assert_float_eq(m.v[NS_MET_THROTTLE], 700.0, 1e-9); /* the table wins over summary-json */
	ns_devprof_free(dp);
	ns_summary_free(s);
}

Test(ntff, summary_fraction_and_percent)
{
	struct ns_summary *s = NULL;
	struct ns_error err = { 0 };
	int64_t ns;
	double pct;
	const char *p = put("s.json", "{\"n_00112233445566778899\": {\"total_time\": 0.5, \"dma_active_time_percent\": 0.25,"
				      " \"x_percent\": 1.0, \"throttle_active_nc4_time_ns\": 42}}");
	cr_assert_eq(ns_summary_read(p, &s, &err), 0, "%s", err.msg);
	cr_assert(s->percent_is_fraction);
	cr_assert(ns_summary_time_ns(&s->nodes[0], "total_time", &ns));
	cr_assert_eq(ns, 500000000);
	cr_assert(ns_summary_time_ns(&s->nodes[0], "throttle_active_nc4_time_ns", &ns));
	cr_assert_eq(ns, 42);
	cr_assert(ns_summary_percent(s, &s->nodes[0], "dma_active_time_percent", &pct));
	cr_assert_float_eq(pct, 25.0, 1e-9);
	ns_summary_free(s);
	p = put("p.json", "{\"n_aabbccddeeff00112233\": {\"tensor_engine_active_time_percent\": 40.5}}");
	cr_assert_eq(ns_summary_read(p, &s, &err), 0);
	cr_assert_not(s->percent_is_fraction);
	cr_assert(ns_summary_percent(s, &s->nodes[0], "tensor_engine_active_time_percent", &pct));
	cr_assert_float_eq(pct, 40.5, 1e-9);
	ns_summary_free(s);
}

Test(ntff, system_profile_units_and_kept_events)
{
	struct ns_sysprof *sp = NULL;
	struct ns_error err = { 0 };
	/* microsecond epoch timestamps (1.7e15): detected from the magnitude */
	const char *p = put("sys.json", "{\"trace_event\": [{\"name\": \"nc_exec_running\", \"timestamp\": 1767225600000000.5,"
					" \"duration\": 2, \"nc_idx\": \"1\", \"flow_id\": [\"12\", \"13\"]},"
					" {\"name\": \"nrt_tensor_free\", \"timestamp\": 1767225600000001},"
					" {\"name\": \"aten::add\", \"type\": 99999, \"timestamp\": 1767225600000000, \"duration\": 5,"
					"  \"args\": {\"External id\": 9}}], \"later\": {}}");
	cr_assert_eq(ns_sysprof_read(p, &sp, &err), 0, "%s", err.msg);
	cr_assert_eq(sp->unit, NS_TU_US);
	cr_assert_eq(sp->n_events, 3);
	cr_assert_eq(sp->n_ev, 2); /* the tensor free is not kept */
	cr_assert_eq(sp->ev[0].ts, 1767225600000000500);
	cr_assert_eq(sp->ev[0].dur, 2000);
	cr_assert_eq(sp->ev[0].nc, 1);
	cr_assert_eq(sp->ev[0].n_flows, 2);
	cr_assert_eq(sp->flows[sp->ev[0].flows_off + 1], 13);
	cr_assert_eq(sp->ev[1].source, NS_SYS_FRAMEWORK);
	cr_assert_eq(sp->ev[1].external_id, 9);
	cr_assert_eq(sp->n_unknown_keys, 1);
	ns_sysprof_free(sp);
}

/* An export of several processes keeps one process's events; its Explorer
 * warnings are kept as (category, message) too. */
Test(ntff, system_profile_keeps_one_process)
{
	struct ns_sysprof *sp = NULL;
	struct ns_error err = { 0 };
	const char *p = put("sys.json",
			    "{\"trace_event\": ["
			    "{\"name\": \"nc_exec_running\", \"timestamp\": 1767225600000000000, \"duration\": 2,"
			    " \"instance_id\": \"i-1\", \"process_id\": \"52000\", \"nc_idx\": 0},"
			    "{\"name\": \"nc_exec_running\", \"timestamp\": 1767225600000000001, \"duration\": 2,"
			    " \"instance_id\": \"i-1\", \"process_id\": 52001, \"nc_idx\": 0},"
			    "{\"name\": \"nc_exec_running\", \"timestamp\": 1767225600000000002, \"duration\": 2,"
			    " \"instance_id\": \"i-2\", \"process_id\": 52000, \"nc_idx\": 0},"
			    "{\"name\": \"nc_exec_running\", \"timestamp\": 1767225600000000003, \"duration\": 2, \"nc_idx\": 0}],"
			    " \"warnings\": [{\"message\": \"12 events dropped\", \"category\": \"Dropped Events\"}, \"plain\"]}");
	cr_assert_eq(ns_sysprof_read(p, &sp, &err), 0, "%s", err.msg);
	cr_assert_eq(sp->n_ev, 4);
	cr_assert_eq(sp->xwarn.n, 2);
	cr_assert_str_eq(sp->xwarn.v[0].category, "Dropped Events");
	cr_assert_str_eq(sp->xwarn.v[0].message, "12 events dropped");
	cr_assert_str_eq(sp->xwarn.v[1].category, "");
	cr_assert_str_eq(sp->xwarn.v[1].message, "plain");
	ns_sysprof_keep_process(sp, "i-1", 52000);
	cr_assert_eq(sp->n_ev, 1);
	cr_assert_eq(sp->ev[0].ts, 1767225600000000000);
	cr_assert_eq(sp->n_other_process, 2);
	cr_assert_eq(sp->n_no_process, 1);
	ns_sysprof_free(sp);
}

/* A two-op trace (era C) with runtime calls but no device events. */
static void make_trace(struct ns_trace *t)
{
	ns_trace_init(t);
	t->has_base_time = true;
	t->base_time_ns = 1767225600000000000;
	t->ts_has_fraction = true;
	ns_str pid = ns_strtab_intern(&t->strings, "1", 1), tid = ns_strtab_intern(&t->strings, "1", 1);
	uint32_t th = (uint32_t)ns_trace_thread(t, pid, 1, tid, 1);
	const struct {
		const char *name;
		enum ns_cat cat;
		int64_t ts, dur, ext, corr;
	} evs[] = {
		{ "aten::mul", NS_CAT_CPU_OP, 1000, 10000, 1, NS_NONE },
		{ "nrta_execute_schedule", NS_CAT_PRIVATEUSE1_RUNTIME, 2000, 3000, 1, 501 },
		{ "aten::add", NS_CAT_CPU_OP, 20000, 10000, 2, NS_NONE },
		{ "nrta_execute_schedule", NS_CAT_PRIVATEUSE1_RUNTIME, 21000, 3000, 2, 502 },
	};
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct ns_event ev = { .ts_ns = evs[i].ts, .dur_ns = evs[i].dur, .external_id = evs[i].ext,
				       .correlation = evs[i].corr, .idx = (uint32_t)i, .thread = th,
				       .cat = (uint8_t)evs[i].cat };
		ev.name = ns_strtab_intern(&t->strings, evs[i].name, strlen(evs[i].name));
		cr_assert_eq(ns_trace_push(t, &ev), 0);
		t->has_cat[evs[i].cat] = true;
	}
	t->n_trace_events = 4;
}

static const struct ns_avg *row(const struct ns_agg *a, const char *name, const char *neff)
{
	for (size_t r = 0; r < a->n_avgs; r++)
		if (strcmp(ns_strtab_get(&a->trace->strings, a->avgs[r].key), name) == 0 &&
		    (!neff || strcmp(ns_strtab_get(&a->trace->strings, a->avgs[r].neff), neff) == 0))
			return &a->avgs[r];
	return NULL;
}

Test(ntff, correlation_attributes_device_intervals)
{
	struct ns_trace t;
	struct ns_sysprof *sp = NULL;
	struct ns_attach_stats st;
	struct ns_agg agg;
	struct ns_error err = { 0 };
	make_trace(&t);
	/* op 1: start/stop halves linked by exec_id to a runtime event, by flow
	 * to a framework event with the External id; the stop is seen 5 us
	 * late by the host, the device clock says 4000 ns.
	 * op 2: a complete event whose flow reaches a framework event without
	 * ids, matched to trace.json's runtime call by name and time. */
	const char *p = put("sys.json",
		"{\"trace_event\": ["
		"{\"name\": \"aten::mul\", \"type\": 99999, \"timestamp\": 1767225600000001000, \"duration\": 10000,"
		" \"flow_id\": [\"1\"], \"args\": {\"External id\": 1}},"
		"{\"name\": \"nrta_execute_schedule\", \"timestamp\": 1767225600000002100, \"exec_id\": 7, \"flow_id\": [\"1\"]},"
		"{\"name\": \"nc_exec_running\", \"phase\": \"start\", \"tracking_id\": 3, \"exec_id\": 7, \"nc_idx\": 0,"
		" \"timestamp\": 1767225600000006000, \"neff_hash\": \"0x10\", \"model_name\": \"g::mul\","
		" \"data\": {\"sync_info\": {\"nc_timestamp_ns\": 500, \"cpu_timestamp_ns\": 1767225600000006000}}},"
		"{\"name\": \"nc_exec_running\", \"phase\": \"stop\", \"tracking_id\": 3, \"exec_id\": 7,"
		" \"timestamp\": 1767225600000015000, \"data\": {\"sync_info\": {\"nc_timestamp_ns\": 4500}}},"
		"{\"name\": \"nrta_execute_schedule\", \"type\": 99999, \"timestamp\": 1767225600000021000, \"flow_id\": [\"2\"]},"
		"{\"name\": \"nc_exec_running\", \"timestamp\": 1767225600000025000, \"duration\": 2500, \"nc_idx\": 1,"
		" \"flow_id\": [\"2\"], \"neff_hash\": \"17\"},"
		"{\"name\": \"nc_exec_running\", \"phase\": \"stop\", \"tracking_id\": 99, \"timestamp\": 1767225600000030000}"
		"]}");
	cr_assert_eq(ns_sysprof_read(p, &sp, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_sysprof_attach(sp, &t, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(st.intervals, 2);
	cr_assert_eq(st.by_ids, 1);
	cr_assert_eq(st.by_time, 1);
	cr_assert_eq(st.unlinked, 0);
	cr_assert_eq(st.unpaired, 1);
	cr_assert_eq(t.n_events, 6);
	cr_assert_eq(t.events[4].cat, NS_CAT_KERNEL);
	cr_assert_eq(t.events[4].ts_ns, 6000);
	cr_assert_eq(t.events[4].dur_ns, 4000);
	cr_assert_eq(t.events[4].idx, 4);
	cr_assert_str_eq(ns_strtab_get(&t.strings, t.events[4].name), "g::mul");
	cr_assert_str_eq(ns_strtab_get(&t.strings, t.events[4].neff), "16");
	cr_assert_eq(t.events[5].correlation, 502);
	cr_assert_str_eq(ns_strtab_get(&t.strings, t.events[5].name), "neff_17");
	cr_assert_eq(ns_event_core(&t, &t.events[5]), 1);

	struct ns_agg_opts ao = { .backend_override = -1 };
	ns_ntff_group_by_neff(&ao);
	cr_assert_eq(ns_aggregate(&t, &ao, &agg, &err), 0, "%s", err.msg);
	cr_assert_eq(agg.backend, NS_BACKEND_PRIVATEUSE1);
	const struct ns_avg *mul = row(&agg, "aten::mul", "16"), *add = row(&agg, "aten::add", "17");
	cr_assert_not_null(mul);
	cr_assert_not_null(add);
	cr_assert_eq(mul->self_device_ns, 4000);
	cr_assert_eq(add->self_device_ns, 2500);
	cr_assert_not_null(row(&agg, "nrta_execute_schedule", "")); /* no device work of its own */

	/* engines: a profile of core 0 anchored at its first device event */
	struct ns_devprof *dp = NULL;
	p = put("dev.json", "{\"summary\": [{\"total_time\": 0.000004}], \"active_time\": ["
			    "{\"engine\": \"tensor\", \"start_ts\": 0, \"end_ts\": 1000},"
			    "{\"engine\": \"vector\", \"start_ts\": 3000, \"end_ts\": 9000}]}");
	cr_assert_eq(ns_devprof_read(p, NS_TU_AUTO, &dp, &err), 0);
	struct ns_devprof_ref ref = { dp, 0, "16" };
	struct ns_engine_timeline tl;
	struct ns_engine_rows rows;
	cr_assert_eq(ns_engine_timeline_build(&ref, 1, NULL, &t, &tl, &err), 0);
	cr_assert_eq(tl.align[0], NS_ALIGN_ANCHOR);
	cr_assert_eq(ns_ntff_engine_rows(&agg, &tl, &rows, &err), 0);
	size_t r = (size_t)(mul - agg.avgs);
	cr_assert_eq(rows.ns[r][NS_ENG_PE], 1000);
	cr_assert_eq(rows.ns[r][NS_ENG_DVE], 1000); /* clipped to the op's 4000 ns interval */
	cr_assert_eq(rows.ns[add - agg.avgs][NS_ENG_PE], 0); /* core 1: no profile */
	ns_engine_rows_release(&rows);
	ns_engine_timeline_release(&tl);
	ns_devprof_free(dp);
	ns_agg_release(&agg);
	ns_sysprof_free(sp);
	ns_trace_release(&t);
}

/* LNC2 (docs/neuron.md "LNC2"): the hardware lane of logical core 0 shows
 * each execution once per physical core (pcore_idx 0 and 1, own tracking
 * ids). Durations by hand: pcore 0 runs [6000, 10000), pcore 1
 * [6300, 10200): one execution of 4200 ns. */
Test(ntff, lnc2_copies_count_once)
{
	static const char *const text =
		"{\"trace_event\": ["
		"{\"name\": \"aten::mul\", \"type\": 99999, \"timestamp\": 1767225600000001000, \"duration\": 10000,"
		" \"flow_id\": [\"1\"], \"args\": {\"External id\": 1}},"
		"{\"name\": \"nc_exec_running\", \"trace_event_source\": \"neuron_hw\", \"nc_idx\": 0, \"pcore_idx\": 0,"
		" \"timestamp\": 1767225600000006000, \"duration\": 4000, \"flow_id\": [\"1\"]},"
		"{\"name\": \"nc_exec_running\", \"trace_event_source\": \"neuron_hw\", \"nc_idx\": 0, \"pcore_idx\": 1,"
		" \"timestamp\": 1767225600000006300, \"duration\": 3900, \"flow_id\": [\"1\"]},"
		"{\"name\": \"nc_exec_running\", \"trace_event_source\": \"neuron_hw\", \"nc_idx\": 0, \"pcore_idx\": 0,"
		" \"timestamp\": 1767225600000020000, \"duration\": 1000},"
		"{\"name\": \"nc_exec_running\", \"trace_event_source\": \"neuron_hw\", \"nc_idx\": 0, \"pcore_idx\": 1,"
		" \"timestamp\": 1767225600000020000, \"duration\": 1000}"
		"]}";
	/* by pcore_idx; then the same without pcore_idx, by the NEFF's lnc_size;
	 * then LNC1 (no size, no pcore): nothing folds */
	for (int pass = 0; pass < 3; pass++) {
		struct ns_trace t;
		struct ns_sysprof *sp = NULL;
		struct ns_attach_stats st;
		struct ns_error err = { 0 };
		char *json = strdup(text), *at;
		cr_assert_not_null(json);
		while (pass && (at = strstr(json, "\"pcore_idx\": ")) != NULL)
			memcpy(at, "\"pcore_id_\"", 11); /* an unknown key: ignored */
		make_trace(&t);
		const char *p = put("lnc2.json", json);
		cr_assert_eq(ns_sysprof_read(p, &sp, &err), 0, "%s", err.msg);
		sp->lnc_size = pass == 1 ? 2 : 0;
		cr_assert_eq(ns_sysprof_attach(sp, &t, &st, &err), 0, "%s", err.msg);
		cr_assert_eq(st.hw_intervals, 4);
		cr_assert_eq(st.lnc_size, pass == 2 ? 1u : 2u, "pass %d", pass);
		cr_assert_eq(st.intervals, pass == 2 ? 4u : 2u, "pass %d", pass);
		if (pass < 2) {
			cr_assert_eq(st.folded, 2);
			cr_assert_eq(t.events[4].ts_ns, 6000);
			cr_assert_eq(t.events[4].dur_ns, 4200);
			cr_assert_eq(t.events[4].external_id, 1);
			cr_assert_eq(t.events[5].dur_ns, 1000);
		}
		ns_sysprof_free(sp);
		ns_trace_release(&t);
		free(json);
	}
}

/* No flow ids, and the system profile's host clock 3.5 us ahead of
 * trace.json's: the runtime launchers (by exec_id) are 3500 ns after the
 * trace's nrta_execute_schedule calls at 2000 and 21000 ns, beyond the 1 us
 * match. Measured by hand: the offset is -3500 ns, both launchers agree. */
Test(ntff, clock_skew_without_flow_ids_is_removed)
{
	struct ns_trace t;
	struct ns_sysprof *sp = NULL;
	struct ns_attach_stats st;
	struct ns_error err = { 0 };
	make_trace(&t);
	const char *p = put("skew.json",
		"{\"trace_event\": ["
		"{\"name\": \"nrta_execute_schedule\", \"timestamp\": 1767225600000005500, \"exec_id\": 1, \"nc_idx\": 0},"
		"{\"name\": \"nc_exec_running\", \"timestamp\": 1767225600000009500, \"duration\": 4000, \"exec_id\": 1,"
		" \"nc_idx\": 0},"
		"{\"name\": \"nrta_execute_schedule\", \"timestamp\": 1767225600000024500, \"exec_id\": 2, \"nc_idx\": 0},"
		"{\"name\": \"nc_exec_running\", \"timestamp\": 1767225600000028500, \"duration\": 2500, \"exec_id\": 2,"
		" \"nc_idx\": 0}]}");
	cr_assert_eq(ns_sysprof_read(p, &sp, &err), 0, "%s", err.msg);
	cr_assert_eq(ns_sysprof_attach(sp, &t, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(st.skew_ns, -3500);
	cr_assert_eq(st.skew_votes, 2);
	cr_assert_eq(st.by_time, 2);
	cr_assert_eq(st.unlinked, 0);
	cr_assert_eq(t.events[4].correlation, 501);
	cr_assert_eq(t.events[5].correlation, 502);
	ns_sysprof_free(sp);
	ns_trace_release(&t);
}

Test(ntff, neff_keys_mixed)
{
	struct ns_trace t;
	struct ns_agg agg;
	struct ns_error err = { 0 };
	make_trace(&t);
	/* two kernels of different NEFFs launched by the same op */
	ns_str pid = ns_strtab_intern(&t.strings, "0", 1), tid = ns_strtab_intern(&t.strings, "s", 1);
	uint32_t th = (uint32_t)ns_trace_thread(&t, pid, 0, tid, NS_NONE);
	for (int k = 0; k < 2; k++) {
		struct ns_event ev = { .ts_ns = 5000 + k * 1000, .dur_ns = 500, .external_id = 1, .correlation = 501,
				       .idx = (uint32_t)(4 + k), .thread = th, .cat = NS_CAT_KERNEL };
		ev.name = ns_strtab_intern(&t.strings, "k", 1);
		ev.neff = ns_strtab_intern(&t.strings, k ? "2" : "1", 1);
		cr_assert_eq(ns_trace_push(&t, &ev), 0);
	}
	t.has_cat[NS_CAT_KERNEL] = true;
	struct ns_agg_opts ao = { .backend_override = -1 };
	ns_ntff_group_by_neff(&ao);
	cr_assert_eq(ns_aggregate(&t, &ao, &agg, &err), 0);
	cr_assert_not_null(row(&agg, "aten::mul", "mixed"));
	cr_assert_not_null(row(&agg, "k", "1"));
	cr_assert_not_null(row(&agg, "k", "2"));
	cr_assert_not_null(row(&agg, "aten::add", ""));
	ns_agg_release(&agg);
	ns_trace_release(&t);
}

/* Times in an export are numbers of any size: what does not fit int64 ns
 * is no time (NS_NONE), never an overflow (a fuzz finding: a timestamp of
 * 1.7e10 s read as ns). */
Test(units, to_ns_is_exact_in_range_and_none_beyond)
{
	cr_expect_eq(to_ns(1.5L, NS_TU_US), 1500);
	cr_expect_eq(to_ns(-2.0L, NS_TU_S), -2000000000);
	cr_expect_eq(to_ns(9.2e18L, NS_TU_NS), INT64_C(9200000000000000000));
	cr_expect_eq(to_ns(17660721565.2L, NS_TU_S), NS_NONE);
	cr_expect_eq(to_ns(-9.3e18L, NS_TU_NS), NS_NONE);
	cr_expect_eq(to_ns(INFINITY, NS_TU_NS), NS_NONE);
	cr_expect_eq(to_ns(NAN, NS_TU_MS), NS_NONE);
	cr_expect_eq(ns_add_or_none(INT64_MAX - 1, 1), INT64_MAX);
	cr_expect_eq(ns_add_or_none(INT64_MAX, 1), NS_NONE);
	cr_expect_eq(ns_add_or_none(NS_NONE, 0), NS_NONE);
	cr_expect_eq(ns_add_or_none(0, -INT64_MAX), -INT64_MAX);
}
