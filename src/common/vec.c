/* The slow path of NS_GROW (vec.h). */
#include "common/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int ns_vec_grow(void *pptr, size_t *cap, size_t elem, size_t need, size_t first)
{
	size_t new_cap = *cap ? *cap : first ? first : 1;
	while (new_cap < need) {
		if (new_cap > SIZE_MAX / 2)
			return -1;
		new_cap *= 2;
	}
	if (elem && new_cap > SIZE_MAX / elem)
		return -1;
	void *old, *p;
	memcpy(&old, pptr, sizeof(old));
	p = realloc(old, new_cap * elem);
	if (!p)
		return -1;
	memcpy(pptr, &p, sizeof(p));
	*cap = new_cap;
	return 0;
}
