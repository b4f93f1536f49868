/* Neuron additions to key_averages (docs/neuron.md): the NEFF key that
 * --by-neff groups rows by, and per-row engine active time (--engines). */
#ifndef NS_AGG_NEURON_H
#define NS_AGG_NEURON_H

#include "aggregate/aggregate.h"
#include "ntff/ntff.h"

/* The "--by-neff" key of every fevent of a (a->n_fevents entries): a device
 * event's own NEFF hash; for a CPU op, the hash of the device work it
 * launched itself (after PyTorch's same-name merge), "mixed" when that
 * work ran more than one NEFF, 0 when it launched none. NULL on OOM. */
ns_str *ns_agg_neff_keys(struct ns_trace *t, const struct ns_agg *a);

/* Engine active time per key_averages row: each device event's busy time
 * per engine inside its own interval, counted for its row and for the row
 * of the op that launched it (self time only, as Self NEURON). */
struct ns_engine_rows {
	int64_t (*ns)[NS_ENG__COUNT]; /* per a->avgs row */
	size_t n;
};

int ns_agg_engines(const struct ns_agg *a, const struct ns_engine_timeline *tl, struct ns_engine_rows *out,
		   struct ns_error *err);
void ns_engine_rows_release(struct ns_engine_rows *r);

#endif
