#include "common/i64map.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(int64_t key, size_t cap)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 17) & (cap - 1);
}

void ns_i64map_init(struct ns_i64map *m)
{
	memset(m, 0, sizeof(*m));
}

void ns_i64map_release(struct ns_i64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static int put(struct ns_i64map *m, int64_t key, int64_t val, int replace);

static int rehash(struct ns_i64map *m, size_t cap)
{
	struct ns_i64map n = { calloc(cap, sizeof(int64_t)), calloc(cap, sizeof(int64_t)),
			       calloc(cap, 1), cap, 0 };
	if (!n.keys || !n.vals || !n.used) {
		ns_i64map_release(&n);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			ns_i64map_put_first(&n, m->keys[i], m->vals[i]);
	ns_i64map_release(m);
	*m = n;
	return 0;
}

static int put(struct ns_i64map *m, int64_t key, int64_t val, int replace)
{
	if ((m->n + 1) * 2 > m->cap && rehash(m, m->cap ? m->cap * 2 : 1024) < 0)
		return -1;
	size_t i = slot_of(key, m->cap);
	while (m->used[i]) {
		if (m->keys[i] == key) {
			if (replace)
				m->vals[i] = val;
			return 0;
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

int ns_i64map_put_first(struct ns_i64map *m, int64_t key, int64_t val)
{
	return put(m, key, val, 0);
}

int ns_i64map_set(struct ns_i64map *m, int64_t key, int64_t val)
{
	return put(m, key, val, 1);
}

int64_t ns_i64map_get(const struct ns_i64map *m, int64_t key, int64_t missing)
{
	if (!m->cap)
		return missing;
	for (size_t i = slot_of(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return missing;
}
