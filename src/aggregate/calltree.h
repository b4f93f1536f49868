/* The call tree of one aggregated trace, merged by path as perf report's
 * callchains are: every FunctionEvent with the same chain of names from
 * its thread's root lands in one node. CPU ops are nodes; device events
 * (kernels, memcpy, memset) are leaves under the op that owns their time
 * (ns_fevent_owner), or under the root; with Python frames asked for, the
 * `python_function` calls that enclose a top-level op on its thread are
 * its ancestors. Feeds `neuron-stats stacks` (folded stacks and the tree
 * view, docs/report.md "Call stacks"). */
#ifndef NS_CALLTREE_H
#define NS_CALLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregate/aggregate.h"

enum ns_cnode_kind {
	NS_CNODE_OP,                /* a CPU FunctionEvent */
	NS_CNODE_DEVICE,            /* a device event's leaf (kernel, memcpy, memset) */
	NS_CNODE_PYTHON,            /* a python_function call */
};

struct ns_cnode {
	ns_str name;                /* in the trace's strings (0 for the root) */
	int32_t parent;             /* -1 for the root (node 0) */
	int32_t first_child, next_sibling; /* -1: none; order set by ns_calltree_sort */
	uint32_t depth;             /* 0 for the root */
	uint8_t kind;               /* enum ns_cnode_kind */
	int64_t calls;
	/* exact sums over the node's events: their spans and self times (ns);
	 * a Python frame's totals are its children's (the ops' time under it),
	 * its self times 0 */
	int64_t cpu_ns, self_cpu_ns, device_ns, self_device_ns;
};

struct ns_calltree {
	struct ns_cnode *nodes;     /* nodes[0] is the root; a parent before its children */
	size_t n, cap;
};

enum ns_calltree_order {
	NS_CT_BY_NAME,              /* children by name, byte order (folded stacks) */
	NS_CT_BY_CPU,               /* by total CPU time, largest first, then by name */
	NS_CT_BY_DEVICE,            /* by total device time, largest first, then by name */
};

int ns_calltree_build(const struct ns_agg *a, bool python, struct ns_calltree *out, struct ns_error *err);
/* Orders every node's children. */
void ns_calltree_sort(struct ns_calltree *ct, const struct ns_agg *a, enum ns_calltree_order order);
void ns_calltree_release(struct ns_calltree *ct);

#endif
