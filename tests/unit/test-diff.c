/* The diff's statistics (median, MAD, Mann-Whitney U), the per-step split
 * (aggregate/steps.c) and row matching / verdicts (report/diff.c).
 * Reference p-values: scipy's documented example, and exact permutation
 * enumeration (every C(n, na) split, Python fractions) for the others. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "aggregate/steps.h"
#include "report/diff.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static double mwu(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *u, bool *exact)
{
	return ns_mwu_p(a, na, b, nb, u, exact);
}

Test(stats, median_and_mad_odd)
{
	const int64_t v[] = { 4, 100, 1, 3, 2 };
	double scratch[N_OF(v)];
	struct ns_step_stats st = ns_step_stats_of(v, N_OF(v), scratch);
	cr_expect_float_eq(st.median, 3.0, 1e-12);
	cr_expect_float_eq(st.mad, 1.0, 1e-12); /* |dev| = 1 97 2 0 1 -> 0 1 1 2 97 */
}

Test(stats, median_and_mad_even)
{
	const int64_t v[] = { 1, 2, 3, 4 };
	double scratch[N_OF(v)];
	struct ns_step_stats st = ns_step_stats_of(v, N_OF(v), scratch);
	cr_expect_float_eq(st.median, 2.5, 1e-12);
	cr_expect_float_eq(st.mad, 1.0, 1e-12); /* 1.5 0.5 0.5 1.5 */
}

Test(stats, median_single_value)
{
	const int64_t v[] = { 38064 };
	double scratch[1];
	struct ns_step_stats st = ns_step_stats_of(v, 1, scratch);
	cr_expect_float_eq(st.median, 38064.0, 1e-12);
	cr_expect_float_eq(st.mad, 0.0, 1e-12);
}

/* scipy.stats.mannwhitneyu docs: males vs females, U1 = 17, p = 0.1111 (exact) */
Test(mwu, scipy_documented_example)
{
	const int64_t males[] = { 19, 22, 16, 29, 24 }, females[] = { 20, 11, 17, 12 };
	double u;
	bool exact;
	double p = mwu(males, N_OF(males), females, N_OF(females), &u, &exact);
	cr_expect(exact);
	cr_expect_float_eq(u, 17.0, 1e-12);
	cr_expect_float_eq(p, 1.0 / 9.0, 1e-12);
}

Test(mwu, complete_separation)
{
	const int64_t a3[] = { 1, 2, 3 }, b3[] = { 4, 5, 6 };
	const int64_t a4[] = { 1, 2, 3, 4 }, b4[] = { 5, 6, 7, 8 };
	double u;
	cr_expect_float_eq(mwu(a3, 3, b3, 3, &u, NULL), 0.1, 1e-12); /* 2 / C(6, 3) */
	cr_expect_float_eq(u, 0.0, 1e-12);
	cr_expect_float_eq(mwu(a4, 4, b4, 4, NULL, NULL), 1.0 / 35.0, 1e-12); /* 2 / C(8, 4) */
	cr_expect_float_eq(mwu(b4, 4, a4, 4, &u, NULL), 1.0 / 35.0, 1e-12);  /* symmetric */
	cr_expect_float_eq(u, 16.0, 1e-12);
}

Test(mwu, interleaved)
{
	const int64_t a[] = { 1, 3, 5, 7, 9, 11 }, b[] = { 2, 4, 6, 8, 10, 12 };
	double u;
	cr_expect_float_eq(mwu(a, 6, b, 6, &u, NULL), 323.0 / 462.0, 1e-12);
	cr_expect_float_eq(u, 15.0, 1e-12);
}

/* Above NS_MWU_EXACT_MAX values in all (the per-call comparison's usual
 * case): the normal approximation with tie and continuity corrections.
 * References: scipy.stats.mannwhitneyu(a, b, method="asymptotic"). */
Test(mwu, normal_approximation_separated)
{
	int64_t a[25], b[25];
	double u;
	bool exact = true;
	for (int i = 0; i < 25; i++)
		a[i] = i + 1, b[i] = i + 26;
	/* U = 0, mean 312.5, var 25 * 25 * 51 / 12: z = 312 / sqrt(2656.25) */
	cr_expect_float_eq(mwu(a, 25, b, 25, &u, &exact), 1.4156562248495537e-09, 1e-18);
	cr_expect(!exact);
	cr_expect_float_eq(u, 0.0, 1e-12);
}

Test(mwu, normal_approximation_ties)
{
	const int64_t a[] = { 10, 10, 12, 12, 12, 15, 15, 20, 20, 20, 20, 25, 30, 30, 35, 40, 40, 40, 45, 50, 50 };
	const int64_t b[] = { 12, 15, 15, 20, 25, 25, 30, 30, 35, 35, 40, 45, 45, 45, 50, 50, 55, 60, 60, 60, 65, 70 };
	double u;
	bool exact = true;
	cr_expect_float_eq(mwu(a, N_OF(a), b, N_OF(b), &u, &exact), 0.007868441304831244, 1e-12);
	cr_expect(!exact);
	cr_expect_float_eq(u, 121.5, 1e-12);
}

Test(diff, basis_and_test_names)
{
	cr_expect_str_eq(ns_diff_basis_name(NS_BASIS_PER_CALL), "per-call");
	cr_expect_str_eq(ns_diff_basis_name(NS_BASIS_PER_STEP_CALL), "per-step-call");
	cr_expect_str_eq(ns_diff_basis_name(NS_BASIS_NONE), "-");
	cr_expect_str_eq(ns_diff_test_names[NS_DIFF_TEST_PER_STEP], "per-step"); /* the default */
	cr_expect_null(ns_diff_test_names[NS_DIFF_TEST__COUNT]);
}

/* ties: the exact conditional distribution over mid-ranks */
Test(mwu, ties_exact)
{
	const int64_t a[] = { 10, 10, 20, 30, 30 }, b[] = { 20, 30, 40, 40, 50, 50 };
	const int64_t z1[] = { 0, 0, 0, 7, 9 }, z2[] = { 0, 8, 10, 11, 12 };
	double u;
	bool exact;
	cr_expect_float_eq(mwu(a, 5, b, 6, &u, &exact), 1.0 / 21.0, 1e-12);
	cr_expect(exact);
	cr_expect_float_eq(u, 3.5, 1e-12);
	cr_expect_float_eq(mwu(z1, 5, z2, 5, &u, NULL), 13.0 / 126.0, 1e-12);
	cr_expect_float_eq(u, 4.5, 1e-12);
}

Test(mwu, all_equal_and_empty)
{
	const int64_t a[] = { 5, 5, 5 }, b[] = { 5, 5, 5 };
	cr_expect_float_eq(mwu(a, 3, b, 3, NULL, NULL), 1.0, 1e-12);
	cr_expect_float_eq(mwu(a, 3, b, 0, NULL, NULL), 1.0, 1e-12);
}

/* Beyond NS_MWU_EXACT_MAX values: the normal approximation with continuity
 * correction. a = 0, 2, .., 48 and b = 21, 23, .., 69 (no ties). */
Test(mwu, normal_approximation)
{
	int64_t a[25], b[25];
	double u;
	bool exact = true;
	for (int i = 0; i < 25; i++) {
		a[i] = 2 * i;
		b[i] = 2 * i + 21;
	}
	double p = mwu(a, 25, b, 25, &u, &exact);
	cr_expect(!exact);
	/* a wins where 2i > 2j + 21, i.e. i >= j + 11: sum_{j=0}^{13} (14 - j) = 105 pairs */
	cr_expect_float_eq(u, 105.0, 1e-12);
	double mean = 312.5, sd = sqrt(25.0 * 25.0 * 51.0 / 12.0);
	cr_expect_float_eq(p, erfc((fabs(u - mean) - 0.5) / sd / sqrt(2.0)), 1e-12);
	cr_expect(p > 5.8e-5 && p < 6.0e-5, "p = %g", p);
}

Test(mwu, smallest_possible_p)
{
	cr_expect_float_eq(ns_mwu_min_p(2, 2), 1.0 / 3.0, 1e-12);
	cr_expect_float_eq(ns_mwu_min_p(4, 4), 2.0 / 70.0, 1e-12);
	cr_expect_float_eq(ns_mwu_min_p(12, 12), 2.0 / 2704156.0, 1e-18);
	cr_expect_float_eq(ns_mwu_min_p(1, 1), 1.0, 1e-12);
	cr_expect(ns_mwu_min_p(3, 4) >= 0.05 && ns_mwu_min_p(3, 5) < 0.05);
}

/* ---- per-step split, on a hand-built aggregate ---- */

struct fake {
	struct ns_trace t;
	struct ns_agg agg;
};


/* A fevent (with its event) and no children: its self time is its span
 * (self device time: device_ns). link is the CPU parent, or a device
 * event's launcher. */
static struct ns_fevent fe(struct fake *f, const char *name, int64_t start, int64_t end, enum ns_devtype dev,
			   int32_t link, int64_t device_ns, int32_t avg)
{
	struct ns_fevent e = { 0 };
	struct ns_event ev = { .ts_ns = start, .dur_ns = end - start };
	ev.name = ns_strtab_intern(&f->t.strings, name, strlen(name));
	e.event = (int32_t)f->t.n_events;
	cr_assert(ns_trace_push(&f->t, &ev) == 0);
	e.device_type = (uint8_t)dev;
	e.link = link;
	e.first_child = e.next_sibling = -1;
	e.device_ns = dev == NS_DEV_CPU ? device_ns : end - start;
	e.avg = avg;
	return e;
}

Test(steps, attribution_rules)
{
	struct fake f;
	struct ns_steps st;
	struct ns_error err = { 0 };
	ns_trace_init(&f.t);
	memset(&f.agg, 0, sizeof(f.agg));
	struct ns_fevent fevents[] = {
		fe(&f, "ProfilerStep#3", 0, 100, NS_DEV_CPU, -1, 50, 0),           /* 0: step #3, self CPU 100 - 40 */
		fe(&f, "aten::mm", 10, 50, NS_DEV_CPU, 0, 50, 1),            /* 1: op in step #3 (ancestor) */
		fe(&f, "ProfilerStep#4", 100, 200, NS_DEV_CPU, -1, 0, 0),          /* 2: step #4, self CPU 100 - 40 */
		fe(&f, "aten::mm", 110, 150, NS_DEV_CPU, 2, 0, 1),           /* 3: op in step #4 */
		fe(&f, "aten::mm", 120, 170, NS_DEV_PRIVATEUSE1, 1, 0, 2),   /* 4: kernel launched in #3, runs in #4 */
		fe(&f, "aten::mm", 180, 190, NS_DEV_PRIVATEUSE1, -1, 0, 2),  /* 5: unlinked kernel: interval #4 */
		fe(&f, "aten::mm", 130, 140, NS_DEV_CPU, -1, 0, 1),          /* 6: other thread, no parent: interval #4 */
		fe(&f, "aten::mm", 250, 260, NS_DEV_CPU, -1, 0, 3),          /* 7: after every step: none */
		fe(&f, "aten::mm", 255, 258, NS_DEV_CPU, 7, 0, -1),          /* 8: removed (no row) */
	};
	fevents[0].is_user_annotation = fevents[2].is_user_annotation = true;
	fevents[0].first_child = 1;
	fevents[2].first_child = 3;
	fevents[8].removed = true;
	f.agg.use_device = true;
	f.agg.trace = &f.t;
	f.agg.fevents = fevents;
	f.agg.n_fevents = N_OF(fevents);
	f.agg.n_avgs = 4;
	cr_assert(ns_steps_compute(&f.agg, &st, &err) == 0, "%s", err.msg);
	cr_assert_eq(st.n_steps, 2);
	cr_expect_eq(st.number[0], 3);
	cr_expect_eq(st.number[1], 4);
	/* row 0: the steps themselves */
	cr_expect_eq(st.calls[0 * 2 + 0], 1);
	cr_expect_eq(st.self_cpu_ns[0 * 2 + 1], 60);
	/* row 1: the op, once in #3 and twice in #4 (one by interval) */
	cr_expect_eq(st.calls[1 * 2 + 0], 1);
	cr_expect_eq(st.calls[1 * 2 + 1], 2);
	cr_expect_eq(st.self_cpu_ns[0 * 2 + 0], 60);
	cr_expect_eq(st.self_cpu_ns[1 * 2 + 0], 40);
	cr_expect_eq(st.self_cpu_ns[1 * 2 + 1], 50);
	cr_expect_eq(st.self_device_ns[1 * 2 + 0], 50);
	/* row 2: kernels: the launching op's step wins over the interval */
	cr_expect_eq(st.self_device_ns[2 * 2 + 0], 50);
	cr_expect_eq(st.self_device_ns[2 * 2 + 1], 10);
	/* row 3: in no step */
	cr_expect_eq(st.calls[3 * 2 + 0] + st.calls[3 * 2 + 1], 0);
	ns_steps_release(&st);
	ns_trace_release(&f.t);
}

Test(steps, no_annotations)
{
	struct fake f;
	struct ns_steps st;
	struct ns_error err = { 0 };
	ns_trace_init(&f.t);
	memset(&f.agg, 0, sizeof(f.agg));
	struct ns_fevent fevents[] = { fe(&f, "aten::mm", 0, 10, NS_DEV_CPU, -1, 0, 0) };
	f.agg.trace = &f.t;
	f.agg.fevents = fevents;
	f.agg.n_fevents = 1;
	f.agg.n_avgs = 1;
	cr_assert(ns_steps_compute(&f.agg, &st, &err) == 0);
	cr_expect_eq(st.n_steps, 0);
	ns_steps_release(&st);
	ns_trace_release(&f.t);
}

/* ---- matching and verdicts (threshold only: no steps) ---- */

static void add_row(struct fake *f, const char *name, enum ns_devtype dev, int64_t calls, int64_t self_cpu,
		    int64_t self_dev)
{
	struct ns_avg *a = &f->agg.avgs[f->agg.n_avgs++];
	memset(a, 0, sizeof(*a));
	a->key = ns_strtab_intern(&f->t.strings, name, strlen(name));
	a->device_type = (uint8_t)dev;
	a->count = calls;
	a->self_cpu_ns = self_cpu;
	a->self_device_ns = self_dev;
}

static const struct ns_diff_row *find_row(const struct ns_diff *d, const char *name, bool on_device)
{
	for (size_t i = 0; i < d->n_rows; i++)
		if (strcmp(ns_strtab_get(&d->strings, d->rows[i].name), name) == 0 && d->rows[i].on_device == on_device)
			return &d->rows[i];
	return NULL;
}

Test(diff, threshold_only_verdicts)
{
	struct fake side[2];
	struct ns_avg avgs[2][8];
	struct ns_steps steps[2];
	struct ns_diff d;
	struct ns_error err = { 0 };
	for (int s = 0; s < 2; s++) {
		ns_trace_init(&side[s].t);
		memset(&side[s].agg, 0, sizeof(side[s].agg));
		memset(&steps[s], 0, sizeof(steps[s]));
		side[s].agg.trace = &side[s].t;
		side[s].agg.avgs = avgs[s];
		side[s].agg.backend = s == 0 ? NS_BACKEND_PRIVATEUSE1 : NS_BACKEND_CUDA;
	}
	add_row(&side[0], "aten::mm", NS_DEV_CPU, 10, 1000, 100000);
	add_row(&side[1], "aten::mm", NS_DEV_CPU, 10, 1000, 110000); /* +10%: regressed */
	add_row(&side[0], "aten::mm", NS_DEV_PRIVATEUSE1, 10, 0, 100000);
	add_row(&side[1], "aten::mm", NS_DEV_CUDA, 10, 0, 104000);   /* +4%: unchanged; CUDA matches NEURON */
	add_row(&side[0], "aten::gelu", NS_DEV_CPU, 10, 2000, 0);     /* removed */
	add_row(&side[1], "aten::silu", NS_DEV_CPU, 10, 2000, 0);     /* new */
	add_row(&side[0], "aten::view", NS_DEV_CPU, 10, 3000, 0);
	add_row(&side[1], "aten::view", NS_DEV_CPU, 10, 2800, 0);     /* -6.7%: improved */
	struct ns_diff_input in[2] = { { "base", &side[0].agg, &steps[0], 1, NULL },
				       { "new", &side[1].agg, &steps[1], 1, NULL } };
	struct ns_diff_opts o = { .threshold_pct = 5, .alpha = 0.05 };
	cr_assert(ns_diff_compute(&in[0], &in[1], &o, NULL, &d, &err) == 0, "%s", err.msg);
	cr_expect_eq(d.mode, NS_DIFF_MODE_THRESHOLD);
	cr_expect_str_eq(d.mode_note, "neither run has ProfilerStep#N annotations");
	cr_expect_eq(d.n_rows, 5);
	cr_expect_eq(find_row(&d, "aten::mm", false)->verdict, NS_VERDICT_REGRESSED);
	cr_expect_float_eq(find_row(&d, "aten::mm", false)->m[NS_DIFF_SELF_DEVICE].change_pct, 10.0, 1e-9);
	cr_expect_eq(find_row(&d, "aten::mm", false)->m[NS_DIFF_SELF_CPU].verdict, NS_VERDICT_UNCHANGED);
	cr_expect_eq(find_row(&d, "aten::mm", true)->verdict, NS_VERDICT_UNCHANGED);
	cr_expect_eq(find_row(&d, "aten::gelu", false)->verdict, NS_VERDICT_REMOVED);
	cr_expect_eq(find_row(&d, "aten::silu", false)->verdict, NS_VERDICT_NEW);
	cr_expect_eq(find_row(&d, "aten::view", false)->verdict, NS_VERDICT_IMPROVED);
	cr_expect_eq(ns_diff_count(&d, 1u << NS_VERDICT_REGRESSED), 1);
	/* default order: largest absolute change of Self device first */
	cr_expect_str_eq(ns_strtab_get(&d.strings, d.rows[d.order[0]].name), "aten::mm");
	cr_expect(!d.rows[d.order[0]].on_device);
	/* the device label: NEURON vs CUDA disagree */
	cr_expect_str_eq(d.device, "device");
	ns_diff_release(&d);
	for (int s = 0; s < 2; s++)
		ns_trace_release(&side[s].t);
}
