/* Neuron additions to key_averages (docs/neuron.md), over aggregate/'s
 * interface: the NEFF key that --by-neff groups rows by (a caller-supplied
 * grouping key, ns_agg_opts.extra_keys), and per-row engine active time
 * (--engines). */
#ifndef NS_NTFF_ROWS_H
#define NS_NTFF_ROWS_H

#include "aggregate/aggregate.h"
#include "ntff/ntff.h"

/* The "--by-neff" key of every fevent of a (a->n_fevents entries): a device
 * event's own NEFF hash; for a CPU op, the hash of the device work it
 * launched itself (after PyTorch's same-name merge), "mixed" when that
 * work ran more than one NEFF, 0 when it launched none. NULL on OOM. */
ns_str *ns_ntff_neff_keys(struct ns_trace *t, const struct ns_agg *a);

/* --by-neff: rows split by ns_ntff_neff_keys (NS_GROUP_NEFF set, for the
 * report and the diff). */
void ns_ntff_group_by_neff(struct ns_agg_opts *ao);

/* Engine active time per key_averages row: each device event's busy time
 * per engine inside its own interval, counted for its row and for the row
 * of the op that launched it (self time only, as Self NEURON). */
struct ns_engine_rows {
	int64_t (*ns)[NS_ENG__COUNT]; /* per a->avgs row */
	size_t n;
};

int ns_ntff_engine_rows(const struct ns_agg *a, const struct ns_engine_timeline *tl, struct ns_engine_rows *out,
			struct ns_error *err);
void ns_engine_rows_release(struct ns_engine_rows *r);

#endif
