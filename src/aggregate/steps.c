/* Per-step sums of the key_averages rows (steps.h states the attribution
 * rules). */
#include "aggregate/steps.h"

#include <stdlib.h>
#include <string.h>

#include "common/i64map.h"
#include "common/sort.h"

#define NO_STEP (-1)            /* column of an event in no step */
#define NOT_A_STEP INT64_MIN    /* number of an event that is no step annotation */
#define STEP_PREFIX "ProfilerStep#"

/* A CPU step annotation's interval and its column. */
struct step_span {
	int64_t start_ns, end_ns;
	int64_t column;
	int64_t max_end_ns; /* max end_ns of this span and every span before it */
};

/* The N of a `ProfilerStep#N` user annotation (CPU or device), in *number;
 * false for any other event. An N that does not parse gives *number = -1. */
static bool step_annotation(const struct ns_agg *agg, const struct ns_fevent *fe, int64_t *number)
{
	const struct ns_trace *t = agg->trace;
	const char *name, *digits;
	char *end;
	if (!fe->is_user_annotation || fe->removed || fe->event < 0)
		return false;
	name = ns_strtab_get(&t->strings, t->events[fe->event].name);
	if (strncmp(name, STEP_PREFIX, strlen(STEP_PREFIX)) != 0 || !name[strlen(STEP_PREFIX)])
		return false;
	digits = name + strlen(STEP_PREFIX);
	long long n = strtoll(digits, &end, 10);
	*number = *end == '\0' && digits[0] >= '0' && digits[0] <= '9' && n >= 0 ? (int64_t)n : -1;
	return true;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The column of the step whose interval holds t, or NO_STEP. spans are in
 * start order (fevents are sorted by start); they overlap only when several
 * threads carry steps, hence the walk back bounded by max_end_ns. */
static int64_t step_at(const struct step_span *spans, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* first span starting after t */
		size_t mid = (lo + hi) / 2;
		if (spans[mid].start_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k-- > 0 && spans[k].max_end_ns >= t;)
		if (spans[k].end_ns >= t)
			return spans[k].column;
	return NO_STEP;
}

/* Working state of one ns_steps_compute call, per fevent. */
struct step_work {
	const struct ns_agg *agg;
	int64_t *number_of_fe; /* step N, or NOT_A_STEP */
	int64_t *step_of_fe;   /* column, or NO_STEP */
	struct step_span *spans;
	size_t n_spans;
	struct ns_i64map column_of_number;
};

/* The CPU annotations' numbers, distinct and ascending, give the columns;
 * then the CPU annotations' spans. */
static int find_columns(struct step_work *w, struct ns_steps *out)
{
	const struct ns_agg *agg = w->agg;
	size_t n_numbers = 0;
	int64_t unparsed = 0;
	for (size_t f = 0; f < agg->n_fevents; f++) {
		int64_t n;
		w->number_of_fe[f] = NOT_A_STEP;
		if (!step_annotation(agg, &agg->fevents[f], &n))
			continue;
		if (n < 0)
			n = --unparsed; /* a column of its own */
		w->number_of_fe[f] = n;
		if (agg->fevents[f].device_type == NS_DEV_CPU)
			out->number[n_numbers++] = n;
	}
	out->n_steps = ns_step_numbers_unique(out->number, n_numbers);
	for (size_t s = 0; s < out->n_steps; s++)
		if (ns_i64map_set(&w->column_of_number, out->number[s], (int64_t)s))
			return -1;
	for (size_t f = 0; f < agg->n_fevents; f++) {
		const struct ns_fevent *fe = &agg->fevents[f];
		if (w->number_of_fe[f] == NOT_A_STEP || fe->device_type != NS_DEV_CPU)
			continue;
		struct step_span *sp = &w->spans[w->n_spans];
		sp->start_ns = ns_fevent_start(agg, fe);
		sp->end_ns = ns_fevent_end(agg, fe);
		sp->column = ns_i64map_get(&w->column_of_number, w->number_of_fe[f], NO_STEP);
		sp->max_end_ns = w->n_spans && w->spans[w->n_spans - 1].max_end_ns > sp->end_ns
					 ? w->spans[w->n_spans - 1].max_end_ns
					 : sp->end_ns;
		w->n_spans++;
	}
	return 0;
}

/* Each fevent's step by the rules of steps.h: CPU events first, in index
 * order (a parent always precedes its children), then device work. */
static void assign_steps(struct step_work *w)
{
	const struct ns_agg *agg = w->agg;
	for (size_t f = 0; f < agg->n_fevents; f++) {
		const struct ns_fevent *fe = &agg->fevents[f];
		int64_t *step = &w->step_of_fe[f];
		*step = NO_STEP;
		if (w->number_of_fe[f] != NOT_A_STEP) /* device ProfilerStep#N annotations too */
			*step = ns_i64map_get(&w->column_of_number, w->number_of_fe[f], NO_STEP);
		else if (fe->device_type != NS_DEV_CPU)
			continue;
		else if (ns_fevent_parent(fe) >= 0)
			*step = w->step_of_fe[ns_fevent_parent(fe)];
		if (*step == NO_STEP)
			*step = step_at(w->spans, w->n_spans, ns_fevent_start(agg, fe));
	}
	for (size_t f = 0; f < agg->n_fevents; f++) {
		const struct ns_fevent *fe = &agg->fevents[f];
		if (fe->device_type == NS_DEV_CPU || w->number_of_fe[f] != NOT_A_STEP)
			continue;
		w->step_of_fe[f] = ns_fevent_launcher(fe) >= 0 ? w->step_of_fe[ns_fevent_launcher(fe)] : NO_STEP;
		if (w->step_of_fe[f] == NO_STEP)
			w->step_of_fe[f] = step_at(w->spans, w->n_spans, ns_fevent_start(agg, fe));
	}
}

/* The row x step cells: calls, Self CPU and Self device. */
static int sum_cells(const struct step_work *w, struct ns_steps *out)
{
	const struct ns_agg *agg = w->agg;
	size_t n_cells = out->n_rows * out->n_steps;
	if (out->n_steps && n_cells / out->n_steps != out->n_rows)
		return -1;
	out->calls = calloc(n_cells + 1, sizeof(*out->calls));
	out->self_cpu_ns = calloc(n_cells + 1, sizeof(*out->self_cpu_ns));
	out->self_device_ns = calloc(n_cells + 1, sizeof(*out->self_device_ns));
	if (!out->calls || !out->self_cpu_ns || !out->self_device_ns)
		return -1;
	for (size_t f = 0; f < agg->n_fevents; f++) {
		const struct ns_fevent *fe = &agg->fevents[f];
		if (fe->avg < 0 || w->step_of_fe[f] == NO_STEP)
			continue;
		size_t cell = (size_t)fe->avg * out->n_steps + (size_t)w->step_of_fe[f];
		struct ns_fself self = ns_fevent_self(agg, f);
		out->calls[cell]++;
		out->self_cpu_ns[cell] += self.self_cpu_ns;
		out->self_device_ns[cell] += self.self_device_ns;
	}
	return 0;
}

int ns_steps_compute(const struct ns_agg *agg, struct ns_steps *out, struct ns_error *err)
{
	size_t n_fe = agg->n_fevents;
	struct step_work w = { .agg = agg };
	int rc = NS_ERR_NOMEM;

	memset(out, 0, sizeof(*out));
	ns_i64map_init(&w.column_of_number);
	out->n_rows = agg->n_avgs;
	out->number = malloc((n_fe + 1) * sizeof(*out->number));
	w.number_of_fe = malloc((n_fe + 1) * sizeof(*w.number_of_fe));
	w.step_of_fe = malloc((n_fe + 1) * sizeof(*w.step_of_fe));
	w.spans = malloc((n_fe + 1) * sizeof(*w.spans));
	if (!w.number_of_fe || !w.step_of_fe || !w.spans || !out->number || find_columns(&w, out))
		goto out;
	assign_steps(&w);
	if (sum_cells(&w, out))
		goto out;
	rc = NS_OK;
out:
	if (rc) {
		ns_error_set(err, rc, "%s: out of memory while splitting %zu rows into profiler steps",
			     agg->trace && agg->trace->path ? agg->trace->path : "trace", agg->n_avgs);
		ns_steps_release(out);
	}
	ns_i64map_release(&w.column_of_number);
	free(w.number_of_fe);
	free(w.step_of_fe);
	free(w.spans);
	return rc;
}

size_t ns_step_numbers_unique(int64_t *numbers, size_t n)
{
	size_t kept = 0;
	ns_sort(numbers, n, sizeof(*numbers), cmp_i64);
	for (size_t k = 0; k < n; k++)
		if (kept == 0 || numbers[kept - 1] != numbers[k])
			numbers[kept++] = numbers[k];
	return kept;
}

void ns_steps_release(struct ns_steps *s)
{
	free(s->number);
	free(s->calls);
	free(s->self_cpu_ns);
	free(s->self_device_ns);
	memset(s, 0, sizeof(*s));
}
