/* The regression diff of two runs (docs/diff.md): rows of both runs matched
 * by their key_averages key, per-row change of Self CPU and Self device,
 * and a verdict that separates real changes from step-to-step noise.
 * Library code: computes a struct ns_diff and writes it to a FILE*. */
#ifndef NS_DIFF_H
#define NS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "aggregate/aggregate.h"
#include "aggregate/steps.h"
#include "common/error.h"
#include "common/strtab.h"
#include "report/report.h"

enum ns_diff_side_id { NS_DIFF_BASE = 0, NS_DIFF_NEW = 1 };

enum ns_diff_metric_id { NS_DIFF_SELF_CPU = 0, NS_DIFF_SELF_DEVICE = 1, NS_DIFF_N_METRICS = 2 };

enum ns_verdict {
	NS_VERDICT_UNCHANGED = 0,
	NS_VERDICT_REGRESSED,
	NS_VERDICT_IMPROVED,
	NS_VERDICT_NEW,     /* the key is only in the new run */
	NS_VERDICT_REMOVED, /* the key is only in the base run */
	NS_VERDICT_NONE,    /* a metric that is zero in both runs */
	NS_VERDICT__COUNT
};

const char *ns_verdict_name(enum ns_verdict v); /* "regressed", ..., "-" for NONE */

/* How changes are judged, for the whole diff (docs/diff.md "The rule"). */
enum ns_diff_mode {
	NS_DIFF_MODE_STEPS = 0,  /* per-step medians + threshold + Mann-Whitney U */
	NS_DIFF_MODE_THRESHOLD,  /* totals + threshold only (too few steps) */
};

/* What each row and metric is compared on (--test; docs/diff.md "What is
 * compared"). PER_STEP is the default rule; the others are opt-in and add
 * a "decided by" column to every form. */
enum ns_diff_test {
	NS_DIFF_TEST_PER_STEP = 0, /* per-step sums (else totals) */
	NS_DIFF_TEST_PER_STEP_CALL, /* per step: the row's time divided by its calls in that step */
	NS_DIFF_TEST_PER_CALL,     /* each call's self time (at most NS_DIFF_CALL_SAMPLES per row and run) */
	NS_DIFF_TEST_AUTO,         /* per-call, else per-step-call, else per-step, else totals */
	NS_DIFF_TEST__COUNT
};
extern const char *const ns_diff_test_names[NS_DIFF_TEST__COUNT + 1]; /* "per-step", ..., NULL */

/* The comparison that decided a metric's verdict. */
enum ns_diff_basis {
	NS_BASIS_NONE = 0,      /* not judged (zero in both runs, or unmatched) */
	NS_BASIS_TOTAL,         /* totals, threshold only */
	NS_BASIS_PER_STEP,
	NS_BASIS_PER_STEP_CALL,
	NS_BASIS_PER_CALL,
	NS_BASIS__COUNT
};
const char *ns_diff_basis_name(enum ns_diff_basis b); /* "-", "total", "per-step", "per-step-call", "per-call" */

/* Per-call values kept per row and run: a deterministic reservoir sample
 * (Algorithm R, seeded per row) beyond this many calls. */
#define NS_DIFF_CALL_SAMPLES 4096

/* One input of the diff: the traces of one run (one per rank), each
 * aggregated and split into steps. Ranks are summed, and steps with the same
 * ProfilerStep number are one step. */
struct ns_diff_input {
	const char *label;             /* what the user named: a trace, a directory, a database */
	const struct ns_agg *aggs;
	const struct ns_steps *steps;  /* one per agg */
	size_t n;
	const char *device_label;      /* NULL: from the backend */
};

struct ns_diff_opts {
	double threshold_pct; /* a change must be larger than this (percent of base) */
	double alpha;         /* and the test's two-sided p-value below this */
	unsigned group_by;    /* enum ns_group_by bits, as given to ns_aggregate (for the header and the key) */
	int stack_n;
	struct ns_name_filter filter; /* --include/--exclude: the rows compared; the totals are theirs */
	bool hide_annotations;        /* --hide-annotations: user-annotation rows are not compared (as filter) */
	enum ns_diff_test test;       /* --test (0: per-step, the default rule) */
};

/* Per-step statistics of one metric on one side (ns). */
struct ns_step_stats {
	double median, mad; /* MAD: median absolute deviation from the median */
};

struct ns_diff_metric {
	int64_t base_ns, new_ns;     /* totals over every trace of the run (exact) */
	/* median and MAD of the values compared (per-step sums, per-step time
	 * per call, or per-call times; ns), when tested */
	struct ns_step_stats base_step, new_step;
	bool by_steps;               /* tested on a sample of values (else on totals, threshold only) */
	enum ns_diff_basis by;       /* which values decided */
	size_t base_n, new_n;        /* how many values were compared */
	double change_pct;           /* the judged change; +inf from 0; NAN when both are 0 */
	double p;                    /* two-sided Mann-Whitney U p-value; NAN when not tested */
	bool p_exact;
	enum ns_verdict verdict;
};

struct ns_diff_row {
	ns_str name, overload, shapes, stack; /* in ns_diff.strings */
	ns_str neff;              /* --by-neff: the NEFF key (aggregate/neuron.h), else 0 */
	bool on_device;           /* a device row (kernel, memcpy, GPU annotation) */
	bool is_user_annotation;
	bool in_base, in_new;
	bool counts_for_device_total;
	int64_t base_calls, new_calls;
	struct ns_diff_metric m[NS_DIFF_N_METRICS];
	enum ns_verdict verdict;
};

struct ns_diff_side {
	const char *label;
	size_t n_traces;
	size_t n_steps;
	int64_t *step_numbers;    /* ascending */
	char device[64];          /* "NEURON", "CUDA", ... or "" */
	bool has_device_time;
};

struct ns_diff {
	struct ns_strtab strings;
	struct ns_diff_row *rows;
	size_t n_rows;
	struct ns_diff_side side[2];
	struct ns_diff_opts opts;
	enum ns_diff_mode mode;
	char mode_note[256];      /* why threshold-only, or "" */
	char warning[512];        /* caveats about the comparison itself, or "" */
	char device[64];          /* the device column label: the runs' label if they agree, else "device" */
	bool has_device_time;     /* either run has device time */
	struct ns_diff_metric total[NS_DIFF_N_METRICS]; /* all rows (device: rows counted in the footer) */
	size_t n_verdict[NS_VERDICT__COUNT];
	size_t *order;            /* display order */
};

/* ---- sorting ---- */
struct ns_diff_sort_key {
	const char *name;
	const char *aliases; /* space-separated */
	const char *help;
	/* the row's sort value, larger first (NULL: by name, A to Z) */
	double (*value)(const struct ns_diff *d, const struct ns_diff_row *r);
};
extern const struct ns_diff_sort_key ns_diff_sort_keys[];
extern const size_t ns_n_diff_sort_keys;
const struct ns_diff_sort_key *ns_diff_sort_key_find(const char *arg);
/* Every diff --sort key and alias, one per line (shell completion). */
void ns_diff_write_sort_words(FILE *out);

/* Matches the runs' rows, computes the statistics and verdicts, and orders
 * the rows by `sort` (NULL: largest absolute change of Self device first,
 * Self CPU when neither run has device time). */
int ns_diff_compute(const struct ns_diff_input *base, const struct ns_diff_input *new_run,
		    const struct ns_diff_opts *o, const struct ns_diff_sort_key *sort, struct ns_diff *out,
		    struct ns_error *err);
void ns_diff_release(struct ns_diff *d);

struct ns_diff_write_opts {
	long row_limit;     /* table/csv/json: rows printed (-1: all) */
	long top_n;         /* markdown: rows per section */
	bool changed_only;  /* leave out unchanged rows */
	const char *gate;   /* the --fail-on spelling, shown in the output (NULL: no gate) */
	bool gate_tripped;  /* and whether it failed */
};
/* Rows whose verdict is in the mask (bits 1 << enum ns_verdict). */
size_t ns_diff_count(const struct ns_diff *d, unsigned verdict_mask);
int ns_diff_write(FILE *out, const struct ns_diff *d, enum ns_format fmt, const struct ns_diff_write_opts *o,
		  struct ns_error *err);

/* --ranks match: one rank pair's outcome (its diff's verdict counts and
 * totals), for the table of the pairs. */
struct ns_diff_rank_outcome {
	int64_t rank;
	size_t n_verdict[NS_VERDICT__COUNT];
	struct ns_diff_metric total[NS_DIFF_N_METRICS];
};
/* One row per pair: verdict counts, Self CPU and Self device totals and
 * their change (JSON: the array alone, no newline). */
int ns_diff_write_rank_outcomes(FILE *out, const struct ns_diff_rank_outcome *v, size_t n, enum ns_format fmt,
				struct ns_error *err);

/* ---- statistics (exposed for the unit tests) ---- */
/* Median and MAD of v[0..n) (n > 0); scratch holds n doubles. */
struct ns_step_stats ns_step_stats_of(const int64_t *v, size_t n, double *scratch);
/* Two-sided Mann-Whitney U test of a[0..na) against b[0..nb): the p-value
 * (1 when either sample is empty). Exact (the permutation distribution of
 * the rank sum, ties kept as mid-ranks) when na + nb <= NS_MWU_EXACT_MAX,
 * else the normal approximation with tie and continuity corrections.
 * *u gets U of sample a (may be NULL); *exact whether the p-value is exact. */
#define NS_MWU_EXACT_MAX 40
double ns_mwu_p(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *u, bool *exact);
/* The smallest two-sided p-value the test can give for samples of na and
 * nb distinct values: 2 / C(na + nb, na). */
double ns_mwu_min_p(size_t na, size_t nb);

#endif
