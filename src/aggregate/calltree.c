/* The call tree merged by path (calltree.h). */
#include <stdlib.h>
#include <string.h>

#include "aggregate/calltree.h"
#include "common/sort.h"
#include "common/vec.h"

/* The child of parent named name, of a kind, made on first use; children
 * maps (parent, kind, name) to its index. -1 on OOM. */
static int32_t child_of(struct ns_calltree *ct, struct ns_i64map *children, int32_t parent, enum ns_cnode_kind kind,
			ns_str name)
{
	int64_t key = (int64_t)parent << 34 | (int64_t)kind << 32 | name;
	int64_t found = ns_i64map_get(children, key, -1);
	if (found >= 0)
		return (int32_t)found;
	if (ct->n >= INT32_MAX || NS_GROW(ct->nodes, ct->cap, ct->n + 1) < 0 ||
	    ns_i64map_put_first(children, key, (int64_t)ct->n) < 0)
		return -1;
	struct ns_cnode *p = &ct->nodes[parent];
	/* (linked in front: ns_calltree_sort sets the order) */
	ct->nodes[ct->n] = (struct ns_cnode){ .name = name, .parent = parent, .first_child = -1,
					      .next_sibling = p->first_child, .depth = p->depth + 1, .kind = kind };
	p->first_child = (int32_t)ct->n;
	return (int32_t)ct->n++;
}

/* With Python frames, each thread's python_function calls and CPU ops are
 * nested together, by PyTorch's rule (build_tree: an event is inside the
 * one on top of the stack unless it starts at or after its end or ends
 * after it), and self times are counted in that tree. */
struct mixed {
	const struct ns_agg *a;
	int32_t *entries;  /* Python calls (event index) and CPU ops (-1 - fevent index), sorted */
	size_t n;
	int64_t *self_ns;  /* per entry: its span minus its children's */
};

static void span_of(const struct mixed *m, int32_t e, uint32_t *thread, int64_t *start, int64_t *end)
{
	if (e < 0) {
		const struct ns_fevent *fe = &m->a->fevents[-1 - e];
		*thread = fe->thread;
		*start = ns_fevent_start(m->a, fe);
		*end = ns_fevent_end(m->a, fe);
	} else {
		const struct ns_event *ev = &m->a->trace->events[e];
		*thread = ev->thread;
		*start = ev->ts_ns;
		*end = ev->ts_ns + ev->dur_ns;
	}
}

/* By thread, start, longest first; a Python call before an op of the same
 * span (the call made it); then by position. */
static int cmp_span(const void *x, const void *y, void *ctx)
{
	int32_t e = *(const int32_t *)x, f = *(const int32_t *)y;
	uint32_t te, tf;
	int64_t se, ee, sf, ef;
	span_of(ctx, e, &te, &se, &ee);
	span_of(ctx, f, &tf, &sf, &ef);
	if (te != tf)
		return te < tf ? -1 : 1;
	if (se != sf)
		return se < sf ? -1 : 1;
	if (ee != ef)
		return ee > ef ? -1 : 1;
	if ((e < 0) != (f < 0))
		return e < 0 ? 1 : -1;
	return e < f ? -1 : e > f;
}

static bool in_mixed(const struct ns_fevent *fe)
{
	return fe->device_type == NS_DEV_CPU && !fe->removed && !fe->is_async;
}

static int mixed_init(struct mixed *m, const struct ns_agg *a)
{
	const struct ns_trace *t = a->trace;
	memset(m, 0, sizeof(*m));
	m->a = a;
	if (t->n_events > INT32_MAX || a->n_fevents > INT32_MAX)
		return -1;
	m->entries = malloc((t->n_events + a->n_fevents + 1) * sizeof(*m->entries));
	if (!m->entries)
		return -1;
	for (size_t i = 0; i < t->n_events; i++)
		if (t->events[i].kind == NS_KIND_PYTHON)
			m->entries[m->n++] = (int32_t)i;
	for (size_t f = 0; f < a->n_fevents; f++)
		if (in_mixed(&a->fevents[f]))
			m->entries[m->n++] = -1 - (int32_t)f;
	ns_sort_r(m->entries, m->n, sizeof(*m->entries), cmp_span, m);
	return (m->self_ns = malloc((m->n + 1) * sizeof(*m->self_ns))) ? 0 : -1;
}

/* Adds entry i under the node at the top of stack (depth entries), after
 * popping what it is not inside; pushes it. Its node, or -1 on OOM. */
static int32_t mixed_add(struct mixed *m, size_t i, struct ns_calltree *ct, struct ns_i64map *children,
			 int32_t *stack, size_t *depth, int32_t *pos_node, uint32_t *thread)
{
	int32_t e = m->entries[i];
	uint32_t t, top_t;
	int64_t start, end, top_start, top_end;
	span_of(m, e, &t, &start, &end);
	if (t != *thread)
		*depth = 0;
	*thread = t;
	for (; *depth > 0; --*depth) {
		span_of(m, m->entries[stack[*depth - 1]], &top_t, &top_start, &top_end);
		if (start < top_end && end <= top_end)
			break;
	}
	int32_t parent = *depth ? stack[*depth - 1] : -1;
	m->self_ns[i] = end - start;
	if (parent >= 0)
		m->self_ns[parent] -= end - start;
	ns_str name = e < 0 ? m->a->fevents[-1 - e].name : m->a->trace->events[e].name;
	int32_t node = child_of(ct, children, parent >= 0 ? pos_node[parent] : 0,
				e < 0 ? NS_CNODE_OP : NS_CNODE_PYTHON, name);
	pos_node[i] = node;
	stack[(*depth)++] = (int32_t)i;
	return node;
}

/* The CPU ops' and Python calls' nodes (nodes[f] for each op). */
static int build_mixed(const struct ns_agg *a, struct ns_calltree *ct, struct ns_i64map *children, int32_t *nodes)
{
	struct mixed m;
	int32_t *stack = NULL, *pos_node = NULL;
	size_t depth = 0;
	uint32_t thread = UINT32_MAX;
	int rc = -1;
	if (mixed_init(&m, a) || !(stack = malloc((m.n + 1) * sizeof(*stack))) ||
	    !(pos_node = malloc((m.n + 1) * sizeof(*pos_node))))
		goto out;
	for (size_t i = 0; i < m.n; i++)
		if (mixed_add(&m, i, ct, children, stack, &depth, pos_node, &thread) < 0)
			goto out;
	for (size_t i = 0; i < m.n; i++) {
		int32_t e = m.entries[i];
		struct ns_cnode *c = &ct->nodes[pos_node[i]];
		c->calls++;
		c->cpu_ns += e < 0 ? ns_fevent_cpu_ns(a, &a->fevents[-1 - e]) : a->trace->events[e].dur_ns;
		c->self_cpu_ns += m.self_ns[i];
		if (e < 0) {
			nodes[-1 - e] = pos_node[i];
			c->device_ns += a->fevents[-1 - e].device_ns;
			c->self_device_ns += ns_fevent_self(a, (size_t)(-1 - e)).self_device_ns;
		}
	}
	rc = 0;
out:
	free(m.entries);
	free(m.self_ns);
	free(stack);
	free(pos_node);
	return rc;
}

/* The node of fevent f, given the nodes of the fevents before it (a
 * parent sorts before its children). -2: not in the tree; -1: OOM. */
static int32_t node_of(const struct ns_agg *a, struct ns_calltree *ct, struct ns_i64map *children,
		       const int32_t *nodes, size_t f)
{
	const struct ns_fevent *fe = &a->fevents[f];
	if (fe->removed || fe->is_async)
		return -2;
	if (fe->device_type == NS_DEV_CPU) {
		int32_t parent = ns_fevent_parent(fe);
		return child_of(ct, children, parent >= 0 ? nodes[parent] : 0, NS_CNODE_OP, fe->name);
	}
	int64_t owner = ns_fevent_owner(a, ns_fevent_launcher(fe));
	return child_of(ct, children, owner >= 0 && nodes[owner] >= 0 ? nodes[owner] : 0, NS_CNODE_DEVICE, fe->name);
}

/* A Python call's device time: its children's (children after parents). */
static void sum_python(struct ns_calltree *ct)
{
	for (size_t i = ct->n; i-- > 1;) {
		struct ns_cnode *c = &ct->nodes[i];
		if (c->parent > 0 && ct->nodes[c->parent].kind == NS_CNODE_PYTHON)
			ct->nodes[c->parent].device_ns += c->device_ns;
	}
}

int ns_calltree_build(const struct ns_agg *a, bool python, struct ns_calltree *out, struct ns_error *err)
{
	struct ns_i64map children;
	int32_t *nodes = malloc((a->n_fevents ? a->n_fevents : 1) * sizeof(*nodes));
	int rc = 0;
	memset(out, 0, sizeof(*out));
	ns_i64map_init(&children);
	if (!nodes || NS_GROW(out->nodes, out->cap, 1) < 0)
		goto oom;
	out->nodes[0] = (struct ns_cnode){ .parent = -1, .first_child = -1, .next_sibling = -1 };
	out->n = 1;
	if (python && build_mixed(a, out, &children, nodes))
		goto oom;
	for (size_t f = 0; f < a->n_fevents; f++) {
		const struct ns_fevent *fe = &a->fevents[f];
		if (python && in_mixed(fe))
			continue; /* (made by build_mixed) */
		int32_t node = nodes[f] = node_of(a, out, &children, nodes, f);
		if (node == -1)
			goto oom;
		if (node < 0)
			continue;
		struct ns_fself self = ns_fevent_self(a, f);
		struct ns_cnode *c = &out->nodes[node];
		c->calls++;
		c->cpu_ns += ns_fevent_cpu_ns(a, fe);
		c->self_cpu_ns += self.self_cpu_ns;
		c->device_ns += fe->device_ns;
		c->self_device_ns += self.self_device_ns;
	}
	if (python)
		sum_python(out);
	goto out;
oom:
	rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	ns_calltree_release(out);
out:
	ns_i64map_release(&children);
	free(nodes);
	return rc;
}

struct order_ctx {
	const struct ns_calltree *ct;
	const struct ns_agg *a;
	enum ns_calltree_order order;
};

static int compare(const struct order_ctx *o, int32_t x, int32_t y)
{
	const struct ns_cnode *p = &o->ct->nodes[x], *q = &o->ct->nodes[y];
	int64_t px = 0, qx = 0;
	if (o->order == NS_CT_BY_CPU) {
		px = p->cpu_ns;
		qx = q->cpu_ns;
	} else if (o->order == NS_CT_BY_DEVICE) {
		px = p->device_ns;
		qx = q->device_ns;
	}
	if (px != qx)
		return px > qx ? -1 : 1;
	int c = strcmp(ns_strtab_get(&o->a->trace->strings, p->name), ns_strtab_get(&o->a->trace->strings, q->name));
	if (c)
		return c;
	return p->kind != q->kind ? (p->kind > q->kind ? 1 : -1) : 0; /* (same names: op, device leaf, Python call) */
}

/* A merge sort of one sibling list (stable, O(n log n), no allocation). */
static int32_t sort_list(const struct order_ctx *o, int32_t head, size_t len)
{
	if (len < 2)
		return head;
	int32_t mid = head;
	for (size_t i = 1; i < len / 2; i++)
		mid = o->ct->nodes[mid].next_sibling;
	int32_t right = o->ct->nodes[mid].next_sibling;
	o->ct->nodes[mid].next_sibling = -1;
	int32_t l = sort_list(o, head, len / 2), r = sort_list(o, right, len - len / 2);
	int32_t first = -1, *tail = &first;
	while (l >= 0 && r >= 0) {
		int32_t *take = compare(o, l, r) <= 0 ? &l : &r;
		*tail = *take;
		tail = &o->ct->nodes[*take].next_sibling;
		*take = *tail;
	}
	*tail = l >= 0 ? l : r;
	return first;
}

void ns_calltree_sort(struct ns_calltree *ct, const struct ns_agg *a, enum ns_calltree_order order)
{
	struct order_ctx o = { ct, a, order };
	for (size_t i = 0; i < ct->n; i++) {
		size_t len = 0;
		for (int32_t c = ct->nodes[i].first_child; c >= 0; c = ct->nodes[c].next_sibling)
			len++;
		ct->nodes[i].first_child = sort_list(&o, ct->nodes[i].first_child, len);
	}
}

void ns_calltree_release(struct ns_calltree *ct)
{
	free(ct->nodes);
	memset(ct, 0, sizeof(*ct));
}
