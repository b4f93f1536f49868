/* Ops the profiler stopped inside of (`"finished": false`), finished as
 * PyTorch's C++ build_tree finishes them (docs/report.md, rule 4). */
#ifndef NS_UNFINISHED_H
#define NS_UNFINISHED_H

#include "common/trace.h"

/* Gives each unfinished torch op (cpu_op, user_annotation) that started
 * inside a finished event of its thread the end of that event, and clears
 * its NS_EV_UNFINISHED flag; an unfinished op with no finished ancestor
 * keeps the flag (PyTorch never reports it). Returns -1 when out of
 * memory (the trace is unchanged then). */
int ns_finish_unfinished(struct ns_trace *t);

#endif
