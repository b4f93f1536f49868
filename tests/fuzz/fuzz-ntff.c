/* Neuron profile exports (src/ntff): the legacy device-profile JSON, the
 * summary-json, the system-profile JSON (then attached to a trace and
 * aggregated, as `report` does) and raw .ntff/.pb identification. Their
 * readers take paths, so the input is written to a private temp file. The
 * first byte picks the reader; the rest is the file. */
#include <string.h>

#include "aggregate/aggregate.h"
#include "fuzz.h"
#include "ntff/ntff.h"

static void devprof(const char *path)
{
	struct ns_devprof *dp = NULL;
	struct ns_error err = { 0 };
	if (ns_devprof_read(path, NS_TU_AUTO, &dp, &err)) {
		FUZZ_CHECK(err.msg[0] != '\0', "an error without a message");
		return;
	}
	for (int e = 0; e < NS_ENG__COUNT; e++)
		for (size_t i = 0; i < dp->n_busy[e]; i++) {
			FUZZ_CHECK(dp->busy[e][i].start <= dp->busy[e][i].end, "an interval ends before it starts");
			if (i)
				FUZZ_CHECK(dp->busy[e][i - 1].end <= dp->busy[e][i].start, "merged intervals overlap");
		}
	/* --device-detail: every counted instruction is in one group of each
	 * key, and the groups come most time first */
	for (int k = 0; k < NS_DETAIL__COUNT; k++) {
		uint64_t n = 0;
		for (size_t r = 0; r < dp->n_detail[k]; r++) {
			n += dp->detail[k][r].count;
			FUZZ_CHECK(dp->detail[k][r].name < dp->detail_names.count, "a group name out of the table");
			if (r)
				FUZZ_CHECK(dp->detail[k][r - 1].total_ns >= dp->detail[k][r].total_ns, "groups out of order");
		}
		FUZZ_CHECK(n == dp->n_instructions, "the groups do not add up to the instructions");
	}
	struct ns_neff_metrics m;
	ns_devprof_metrics(dp, NULL, NULL, &m);
	struct ns_trace t;
	struct ns_engine_timeline tl;
	struct ns_devprof_ref ref = { dp, 0, dp->neff_hash };
	ns_trace_init(&t);
	if (ns_engine_timeline_build(&ref, 1, NULL, &t, &tl, &err) == 0) {
		(void)ns_engine_busy_in(&tl, 0, NS_ENG_PE, INT64_MIN / 4, INT64_MAX / 4);
		ns_engine_timeline_release(&tl);
	}
	ns_trace_release(&t);
	ns_devprof_free(dp);
}

static void summary(const char *path)
{
	struct ns_summary *s = NULL;
	struct ns_error err = { 0 };
	if (ns_summary_read(path, &s, &err)) {
		FUZZ_CHECK(err.msg[0] != '\0', "an error without a message");
		return;
	}
	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct ns_summary_node *n = &s->nodes[i];
		for (size_t k = 0; k < n->n_kv; k++) {
			int64_t ns;
			double pct;
			(void)ns_summary_time_ns(n, n->kv[k].key, &ns);
			(void)ns_summary_percent(s, n, n->kv[k].key, &pct);
		}
	}
	ns_summary_free(s);
}

static void sysprof(const char *path)
{
	struct ns_sysprof *sp = NULL;
	struct ns_error err = { 0 };
	if (ns_sysprof_read(path, &sp, &err)) {
		FUZZ_CHECK(err.msg[0] != '\0', "an error without a message");
		return;
	}
	struct ns_trace t;
	struct ns_attach_stats st = { 0 };
	FUZZ_CHECK(sp->xwarn.n <= sp->xwarn.total && sp->xwarn.total == sp->explorer_warnings.total,
		   "Explorer warnings kept and counted apart");
	if (sp->n_ev && (sp->ev[0].pid & 1)) { /* an export of several processes: the first one's events */
		size_t before = sp->n_ev;
		ns_sysprof_keep_process(sp, ns_strtab_get(&sp->strings, sp->ev[0].instance), sp->ev[0].pid);
		FUZZ_CHECK(sp->n_ev >= 1 && sp->n_ev + sp->n_other_process + sp->n_no_process == before,
			   "keeping one process lost events");
	}
	ns_trace_init(&t);
	if (ns_sysprof_attach(sp, &t, &st, &err) == 0) {
		struct ns_agg agg;
		struct ns_agg_opts ao = { .backend_override = -1 };
		if (ns_aggregate(&t, &ao, &agg, &err) == 0)
			ns_agg_release(&agg);
	}
	ns_trace_release(&t);
	ns_sysprof_free(sp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t which = data[0];
	const char *path;
	switch (which % 5) {
	case 0:
		devprof(fuzz_write_file("device.json", data + 1, size - 1));
		break;
	case 1:
		summary(fuzz_write_file("summary.json", data + 1, size - 1));
		break;
	case 2:
	case 3:
		sysprof(fuzz_write_file("system.json", data + 1, size - 1));
		break;
	default: {
		struct ns_raw_info info;
		struct ns_error err = { 0 };
		path = fuzz_write_file(which & 8 ? "profile_nc_0_session_1.ntff" : "ntrace.pb", data + 1, size - 1);
		if (ns_ntff_identify(path, &info, &err) == 0)
			FUZZ_CHECK(info.head_len <= sizeof(info.head) && info.size == size - 1, "bad raw info");
		break;
	}
	}
	return 0;
}
