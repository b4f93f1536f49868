/* kernels --by-engine / --by-opcode (docs/neuron.md "Engine statistics"):
 * statistics of the device profiles' instruction durations per NeuronCore
 * engine (and opcode), as the kernel summary's rows (aggregate/kernels.h):
 * count, total, mean, median, min, max, sample standard deviation. */
#ifndef NS_NTFF_ENGSTATS_H
#define NS_NTFF_ENGSTATS_H

#include "aggregate/kernels.h"
#include "ntff/ntff.h"

struct ns_engine_stat {
	const char *engine;      /* ns_engine_name: "PE", ..., "DMA", "other" (an unknown label) */
	const char *neff_text;   /* by NEFF: the profile's NEFF hash ("" if unknown); else "" */
	const char *opcode_text; /* by opcode: the opcode ("" for none: dma rows, rows without one); else "" */
	uint8_t engine_id;       /* enum ns_engine */
	struct ns_kstat k;       /* the times (name_text, neff_text and the bytes fields unused) */
	int64_t whole_ns;        /* the denominator of its share: every row's time (engine rows), or
				    its engine's (and NEFF's) time (opcode rows) */
};

struct ns_engine_stats {
	struct ns_engine_stat *v; /* by engine (enum order), NEFF, then total descending, then opcode */
	size_t n;
	int64_t total_ns;         /* of every row */
	bool by_neff, by_opcode;
};

/* Over the instruction and dma rows (ns_devprof.instr) of the profiles
 * p[0..n) of one trace: one row per engine, or per (engine, opcode) with
 * by_opcode; with by_neff per NEFF hash of the profile too. The strings
 * point into p (its NEFF and profile), which must outlive out. */
int ns_engine_stats_compute(const struct ns_detail_neff *p, size_t n, bool by_neff, bool by_opcode,
			    struct ns_engine_stats *out, struct ns_error *err);
void ns_engine_stats_release(struct ns_engine_stats *s);

#endif
