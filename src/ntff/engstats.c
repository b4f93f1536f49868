/* Per-engine instruction statistics of device profiles (engstats.h). */
#include "ntff/engstats.h"

#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "common/vec.h"

/* One instruction under its group. */
struct keyed {
	int64_t dur;
	const char *neff, *opcode;
	uint8_t engine;
};

/* The group: engine, NEFF, opcode (texts: several profiles' strings). */
static int group_cmp(const struct keyed *x, const struct keyed *y)
{
	if (x->engine != y->engine)
		return x->engine < y->engine ? -1 : 1;
	int c = strcmp(x->neff, y->neff);
	return c ? c : strcmp(x->opcode, y->opcode);
}

static int by_group_dur(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = group_cmp(x, y);
	return c ? c : (x->dur > y->dur) - (x->dur < y->dur);
}

static int row_order(const void *a, const void *b)
{
	const struct ns_engine_stat *x = a, *y = b;
	if (x->engine_id != y->engine_id)
		return x->engine_id < y->engine_id ? -1 : 1;
	int c = strcmp(x->neff_text, y->neff_text);
	if (c)
		return c;
	if (x->k.total_ns != y->k.total_ns)
		return x->k.total_ns > y->k.total_ns ? -1 : 1;
	return strcmp(x->opcode_text, y->opcode_text);
}

/* Every instruction of the profiles with its group key. */
static struct keyed *keyed_instructions(const struct ns_detail_neff *p, size_t n, bool by_neff, bool by_opcode,
					size_t *count)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += p[i].dp->n_instr;
	struct keyed *d = malloc((total ? total : 1) * sizeof(*d));
	*count = 0;
	for (size_t i = 0; d && i < n; i++) {
		const struct ns_devprof *dp = p[i].dp;
		for (size_t k = 0; k < dp->n_instr; k++) {
			const struct ns_dp_instr *x = &dp->instr[k];
			d[(*count)++] = (struct keyed){ x->dur_ns, by_neff ? p[i].neff : "",
							by_opcode ? ns_strtab_get(&dp->detail_names, x->opcode) : "",
							x->engine < NS_ENG__COUNT ? x->engine : NS_ENG__COUNT };
		}
	}
	return d;
}

/* Shares: engine rows of every row's time; opcode rows of their engine's
 * (and NEFF's), rows v[0..n) sorted by group. */
static void set_wholes(struct ns_engine_stats *out)
{
	for (size_t lo = 0, hi; lo < out->n; lo = hi) {
		int64_t whole = 0;
		for (hi = lo; hi < out->n && out->v[hi].engine_id == out->v[lo].engine_id &&
			      strcmp(out->v[hi].neff_text, out->v[lo].neff_text) == 0;
		     hi++)
			whole += out->v[hi].k.total_ns;
		for (size_t i = lo; i < hi; i++)
			out->v[i].whole_ns = out->by_opcode ? whole : out->total_ns;
	}
}

int ns_engine_stats_compute(const struct ns_detail_neff *p, size_t n, bool by_neff, bool by_opcode,
			    struct ns_engine_stats *out, struct ns_error *err)
{
	size_t count, cap = 0;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	out->by_neff = by_neff;
	out->by_opcode = by_opcode;
	struct keyed *d = keyed_instructions(p, n, by_neff, by_opcode, &count);
	if (!d)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	ns_sort(d, count, sizeof(*d), by_group_dur);
	for (size_t lo = 0, hi; lo < count; lo = hi) {
		for (hi = lo + 1; hi < count && group_cmp(&d[hi], &d[lo]) == 0; hi++)
			;
		if (NS_GROW(out->v, cap, out->n + 1) < 0) {
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			ns_engine_stats_release(out);
			break;
		}
		struct ns_engine_stat *s = &out->v[out->n++];
		memset(s, 0, sizeof(*s));
		s->engine_id = d[lo].engine;
		s->engine = ns_engine_name((enum ns_engine)d[lo].engine);
		s->neff_text = d[lo].neff;
		s->opcode_text = d[lo].opcode;
		ns_kstat_times(&d[lo].dur, sizeof(*d), hi - lo, &s->k);
		out->total_ns += s->k.total_ns;
	}
	free(d);
	if (rc == 0) {
		set_wholes(out); /* (in group order: the shares' groups are consecutive) */
		ns_sort(out->v, out->n, sizeof(*out->v), row_order);
	}
	return rc;
}

void ns_engine_stats_release(struct ns_engine_stats *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
