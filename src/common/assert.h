/* Invariants: conditions that only a programming error can break (a caller
 * that skipped a step, a table out of step with its enum). Bad input is
 * never one: it is an ns_error with its exit code. A broken invariant
 * prints "neuron-stats: bug: FILE:LINE: FUNCTION: invariant failed: EXPR"
 * on stderr and aborts (SIGABRT, exit status 134 from a shell), the one
 * place library code prints or exits. Always checked (NDEBUG does not
 * remove it): each check is a comparison on a path that is not hot. */
#ifndef NS_ASSERT_H
#define NS_ASSERT_H

_Noreturn void ns_assert_fail(const char *expr, const char *file, int line, const char *func);

#define NS_ASSERT(expr) ((expr) ? (void)0 : ns_assert_fail(#expr, __FILE__, __LINE__, __func__))

#endif
