/* --by-neff keys and --engines rows (docs/neuron.md "NEFF hash", "Engines"). */
#include "ntff/rows.h"

#include <stdlib.h>
#include <string.h>

#define MIXED "mixed"

ns_str *ns_ntff_neff_keys(struct ns_trace *t, const struct ns_agg *a)
{
	ns_str *keys = calloc(a->n_fevents + 1, sizeof(*keys));
	ns_str mixed = ns_strtab_intern(&t->strings, MIXED, strlen(MIXED));
	if (!keys || mixed == UINT32_MAX) {
		free(keys);
		return NULL;
	}
	for (size_t f = 0; f < a->n_fevents; f++) {
		const struct ns_fevent *fe = &a->fevents[f];
		if (fe->device_type != NS_DEV_CPU && fe->event >= 0)
			keys[f] = t->events[fe->event].neff;
	}
	for (size_t f = 0; f < a->n_fevents; f++) {
		const struct ns_fevent *fe = &a->fevents[f];
		int64_t op = ns_fevent_owner(a, ns_fevent_launcher(fe));
		if (op < 0 || !keys[f] || a->fevents[op].device_type != NS_DEV_CPU)
			continue;
		keys[op] = !keys[op] || keys[op] == keys[f] ? keys[f] : mixed;
	}
	return keys;
}

void ns_ntff_group_by_neff(struct ns_agg_opts *ao)
{
	ao->group_by |= NS_GROUP_NEFF;
	ao->extra_keys = ns_ntff_neff_keys;
}

int ns_ntff_engine_rows(const struct ns_agg *a, const struct ns_engine_timeline *tl, struct ns_engine_rows *out,
			struct ns_error *err)
{
	const struct ns_trace *t = a->trace;
	out->n = a->n_avgs;
	out->ns = calloc(a->n_avgs + 1, sizeof(*out->ns));
	if (!out->ns)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (size_t f = 0; f < a->n_fevents; f++) {
		const struct ns_fevent *fe = &a->fevents[f];
		if (fe->device_type == NS_DEV_CPU || fe->event < 0)
			continue;
		int64_t core = ns_event_core(t, &t->events[fe->event]), op = ns_fevent_owner(a, ns_fevent_launcher(fe));
		for (int e = 0; e < NS_ENG__COUNT; e++) {
			int64_t busy = ns_engine_busy_in(tl, core, (enum ns_engine)e, ns_fevent_start(a, fe), ns_fevent_end(a, fe));
			if (fe->avg >= 0)
				out->ns[fe->avg][e] += busy;
			if (op >= 0 && a->fevents[op].avg >= 0)
				out->ns[a->fevents[op].avg][e] += busy;
		}
	}
	return 0;
}

void ns_engine_rows_release(struct ns_engine_rows *r)
{
	free(r->ns);
	memset(r, 0, sizeof(*r));
}
