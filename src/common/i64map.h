/* An int64 -> int64 hash map (open addressing, linear probing) for id
 * lookups: External id -> op, correlation -> runtime call, ... */
#ifndef NS_I64MAP_H
#define NS_I64MAP_H

#include <stddef.h>
#include <stdint.h>

struct ns_i64map {
	int64_t *keys, *vals;
	unsigned char *used;
	size_t cap, n;
};

void ns_i64map_init(struct ns_i64map *m);
void ns_i64map_release(struct ns_i64map *m);
/* Inserts key -> val unless key is present (first writer wins). -1 on OOM. */
int ns_i64map_put_first(struct ns_i64map *m, int64_t key, int64_t val);
/* Inserts or replaces. -1 on OOM. */
int ns_i64map_set(struct ns_i64map *m, int64_t key, int64_t val);
/* Returns the value, or `missing`. */
int64_t ns_i64map_get(const struct ns_i64map *m, int64_t key, int64_t missing);

#endif
