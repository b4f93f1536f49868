/* Cross-rank op totals (ranks.h; docs/analyses.md "ranks"). */
#include "aggregate/ranks.h"

#include <stdlib.h>
#include <string.h>

#include "common/i64map.h"
#include "common/sort.h"
#include "common/vec.h"

#define KEY_SEP '\x1f' /* joins the key's fields into one interned string */

const char *const ns_rank_metric_names[NS_RANK_METRIC__COUNT + 1] = { "self_device", "self_cpu", "device_total",
								       "cpu_total", "calls", NULL };

bool ns_rank_metric_is_time(enum ns_rank_metric m)
{
	return m != NS_RANK_CALLS;
}

int64_t ns_rank_metric_value(enum ns_rank_metric m, const struct ns_avg *row)
{
	switch (m) {
	case NS_RANK_SELF_DEVICE: return row->self_device_ns;
	case NS_RANK_SELF_CPU: return row->self_cpu_ns;
	case NS_RANK_DEVICE_TOTAL: return row->device_ns;
	case NS_RANK_CPU_TOTAL: return row->cpu_ns;
	case NS_RANK_CALLS:
	case NS_RANK_METRIC__COUNT: break;
	}
	return row->count;
}

static int by_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

double ns_median_i64(int64_t *x, size_t n)
{
	ns_sort(x, n, sizeof(*x), by_i64);
	return n % 2 ? (double)x[n / 2] : ((double)x[n / 2 - 1] + (double)x[n / 2]) / 2.0;
}

/* While matching: the ops in first-seen order, their values, and the map
 * from the interned key to the op. */
struct work {
	struct ns_rank_ops *r;
	struct ns_i64map op_of_key;
	size_t cap_ops, cap_values;
};

static ns_str copy_str(struct ns_rank_ops *r, const struct ns_trace *t, ns_str s)
{
	return ns_strtab_intern(&r->strings, ns_strtab_get(&t->strings, s), ns_strtab_len(&t->strings, s));
}

/* A new op for row (its values 0), or -1 when out of memory. */
static int64_t new_op(struct work *w, const struct ns_trace *t, const struct ns_avg *row)
{
	struct ns_rank_ops *r = w->r;
	if (NS_GROW(r->ops, w->cap_ops, r->n_ops + 1) < 0 ||
	    NS_GROW(r->values, w->cap_values, (r->n_ops + 1) * r->n_ranks) < 0)
		return -1;
	struct ns_rank_op *op = &r->ops[r->n_ops];
	*op = (struct ns_rank_op){ .name = copy_str(r, t, row->key), .overload = copy_str(r, t, row->overload),
				   .shapes = copy_str(r, t, row->input_shapes), .stack = copy_str(r, t, row->stack),
				   .neff = copy_str(r, t, row->neff), .on_device = row->device_type != NS_DEV_CPU,
				   .is_user_annotation = row->is_user_annotation };
	if (op->name == UINT32_MAX || op->overload == UINT32_MAX || op->shapes == UINT32_MAX ||
	    op->stack == UINT32_MAX || op->neff == UINT32_MAX)
		return -1;
	memset(r->values + r->n_ops * r->n_ranks, 0, r->n_ranks * sizeof(*r->values));
	return (int64_t)r->n_ops++;
}

/* The op of row (created if new), or -1 when out of memory. The key is
 * the report's grouping key (the optional fields are 0 unless grouped by),
 * with the device type reduced to CPU vs device, as diff matches rows. */
static int64_t op_of(struct work *w, const struct ns_trace *t, const struct ns_avg *row)
{
	const ns_str fields[] = { row->key, row->overload, row->input_shapes, row->stack, row->neff };
	size_t len = 2;
	for (size_t i = 0; i < NS_ARRAY_SIZE(fields); i++)
		len += ns_strtab_len(&t->strings, fields[i]) + 1;
	char *key = malloc(len), *p = key;
	if (!key)
		return -1;
	for (size_t i = 0; i < NS_ARRAY_SIZE(fields); i++) {
		size_t l = ns_strtab_len(&t->strings, fields[i]);
		memcpy(p, ns_strtab_get(&t->strings, fields[i]), l);
		p += l;
		*p++ = KEY_SEP;
	}
	*p++ = row->device_type == NS_DEV_CPU ? 'C' : 'D';
	*p++ = row->is_user_annotation ? 'U' : '-';
	ns_str id = ns_strtab_intern(&w->r->strings, key, (size_t)(p - key));
	free(key);
	if (id == UINT32_MAX)
		return -1;
	int64_t op = ns_i64map_get(&w->op_of_key, id, -1);
	if (op < 0 && ((op = new_op(w, t, row)) < 0 || ns_i64map_set(&w->op_of_key, id, op)))
		return -1;
	return op;
}

/* Each op's total, minimum, median, maximum and slowest rank. */
static int op_stats(struct ns_rank_ops *r)
{
	int64_t *scratch = malloc((r->n_ranks ? r->n_ranks : 1) * sizeof(*scratch));
	if (!scratch)
		return -1;
	for (size_t i = 0; i < r->n_ops; i++) {
		struct ns_rank_op *op = &r->ops[i];
		const int64_t *v = r->values + i * r->n_ranks;
		for (size_t k = 0; k < r->n_ranks; k++) {
			op->total += v[k];
			op->slowest = v[k] > v[op->slowest] ? k : op->slowest;
			scratch[k] = v[k];
		}
		op->median = ns_median_i64(scratch, r->n_ranks);
		op->min = scratch[0];
		op->max = scratch[r->n_ranks - 1];
	}
	free(scratch);
	return 0;
}

/* An op's place in the display order: largest total first, then by name,
 * then first seen. */
struct order_item {
	int64_t total;
	const char *name;
	size_t op;
};

static int by_total_name(const void *a, const void *b)
{
	const struct order_item *p = a, *q = b;
	if (p->total != q->total)
		return p->total > q->total ? -1 : 1;
	int c = strcmp(p->name, q->name);
	return c ? c : (p->op > q->op) - (p->op < q->op);
}

/* Puts ops and values in display order. */
static int order_ops(struct ns_rank_ops *r)
{
	size_t n = r->n_ops ? r->n_ops : 1, n_ranks = r->n_ranks;
	struct order_item *order = malloc(n * sizeof(*order));
	struct ns_rank_op *ops = malloc(n * sizeof(*ops));
	int64_t *values = malloc(n * (n_ranks ? n_ranks : 1) * sizeof(*values));
	int rc = order && ops && values ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < r->n_ops; i++)
		order[i] = (struct order_item){ r->ops[i].total, ns_strtab_get(&r->strings, r->ops[i].name), i };
	if (rc == 0) {
		ns_sort(order, r->n_ops, sizeof(*order), by_total_name);
		for (size_t i = 0; i < r->n_ops; i++) {
			ops[i] = r->ops[order[i].op];
			memcpy(values + i * n_ranks, r->values + order[i].op * n_ranks, n_ranks * sizeof(*values));
		}
		free(r->ops);
		free(r->values);
		r->ops = ops;
		r->values = values;
		ops = NULL;
		values = NULL;
	}
	free(order);
	free(ops);
	free(values);
	return rc;
}

int ns_rank_ops_compute(const struct ns_agg *aggs, size_t n, enum ns_rank_metric metric, struct ns_rank_ops *out,
			struct ns_error *err)
{
	struct work w = { .r = out };
	memset(out, 0, sizeof(*out));
	ns_strtab_init(&out->strings);
	ns_i64map_init(&w.op_of_key);
	out->n_ranks = n;
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < n; k++)
		for (size_t i = 0; i < aggs[k].n_avgs; i++) {
			int64_t op = op_of(&w, aggs[k].trace, &aggs[k].avgs[i]);
			if (op < 0) {
				rc = -1;
				break;
			}
			out->values[(size_t)op * n + k] += ns_rank_metric_value(metric, &aggs[k].avgs[i]);
		}
	if (rc == 0 && n > 0)
		rc = op_stats(out);
	if (rc == 0)
		rc = order_ops(out);
	ns_i64map_release(&w.op_of_key);
	if (rc) {
		ns_rank_ops_release(out);
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	return 0;
}

void ns_rank_ops_release(struct ns_rank_ops *r)
{
	ns_strtab_release(&r->strings);
	free(r->ops);
	free(r->values);
	memset(r, 0, sizeof(*r));
}
