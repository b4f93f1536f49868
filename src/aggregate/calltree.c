/* The call tree merged by path (calltree.h). */
#include <stdlib.h>
#include <string.h>

#include "aggregate/calltree.h"
#include "common/vec.h"

/* The child of parent named name (a device leaf or an op), made on first
 * use; children maps (parent, device, name) to its index. -1 on OOM. */
static int32_t child_of(struct ns_calltree *ct, struct ns_i64map *children, int32_t parent, bool device,
			ns_str name)
{
	int64_t key = (int64_t)parent << 33 | (int64_t)device << 32 | name;
	int64_t found = ns_i64map_get(children, key, -1);
	if (found >= 0)
		return (int32_t)found;
	if (ct->n >= INT32_MAX || NS_GROW(ct->nodes, ct->cap, ct->n + 1) < 0 ||
	    ns_i64map_put_first(children, key, (int64_t)ct->n) < 0)
		return -1;
	struct ns_cnode *p = &ct->nodes[parent];
	/* (linked in front: ns_calltree_sort sets the order) */
	ct->nodes[ct->n] = (struct ns_cnode){ .name = name, .parent = parent, .first_child = -1,
					      .next_sibling = p->first_child, .depth = p->depth + 1, .device = device };
	p->first_child = (int32_t)ct->n;
	return (int32_t)ct->n++;
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
		return child_of(ct, children, parent >= 0 ? nodes[parent] : 0, false, fe->name);
	}
	int64_t owner = ns_fevent_owner(a, ns_fevent_launcher(fe));
	return child_of(ct, children, owner >= 0 && nodes[owner] >= 0 ? nodes[owner] : 0, true, fe->name);
}

int ns_calltree_build(const struct ns_agg *a, struct ns_calltree *out, struct ns_error *err)
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
	for (size_t f = 0; f < a->n_fevents; f++) {
		const struct ns_fevent *fe = &a->fevents[f];
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
	return p->device != q->device ? (p->device ? 1 : -1) : 0; /* (an op before a same-name device leaf) */
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
