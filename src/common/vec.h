/* Arrays: their length, and growing one by doubling.
 *
 *   struct ns_span *v = NULL; size_t n = 0, cap = 0;
 *   if (NS_GROW(v, cap, n + 1) < 0)
 *           goto out;            (out of memory: v and cap are unchanged)
 *   v[n++] = span;
 *
 * NS_GROW(ptr, cap, need) makes room for at least `need` elements of
 * *ptr: when need <= cap it does nothing (the test is inline, so a push
 * costs one comparison); else cap doubles (from NS_GROW_FIRST when it is
 * 0) until it holds `need`, and ptr is reallocated to that. It is an
 * expression: 0, or -1 when the new size would overflow size_t or realloc
 * fails, and then ptr and cap are left as they were. `cap` must be a
 * size_t lvalue (one of another type does not compile); each argument
 * is evaluated once. New elements are not initialised. NS_GROW_MIN is the
 * same with the first capacity given (a table known to grow large starts
 * large). */
#ifndef NS_VEC_H
#define NS_VEC_H

#include <stddef.h>

/* The number of elements of an array (not a pointer). */
#define NS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The first capacity NS_GROW gives an empty array. */
#define NS_GROW_FIRST 16

#define NS_GROW_MIN(ptr, cap, need, first) \
	ns_vec_reserve(&(ptr), &(cap), sizeof(*(ptr)), (need), (first))
#define NS_GROW(ptr, cap, need) NS_GROW_MIN(ptr, cap, need, NS_GROW_FIRST)

/* The slow path of NS_GROW: pptr is the address of the array pointer (any
 * object pointer type: it is read and written with memcpy, so no pointer
 * is accessed through a type it does not have). 0, or -1 with nothing
 * changed. */
int ns_vec_grow(void *pptr, size_t *cap, size_t elem, size_t need, size_t first);

/* NS_GROW's test, inlined at each use so that a push that fits costs one
 * comparison. */
static inline int ns_vec_reserve(void *pptr, size_t *cap, size_t elem, size_t need, size_t first)
{
	return need <= *cap ? 0 : ns_vec_grow(pptr, cap, elem, need, first);
}

#endif
