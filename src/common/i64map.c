#include "common/i64map.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY INT64_MIN /* marks a free slot; that key itself is kept aside */

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
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* The slot holding key, or the free slot where it would go. */
static struct ns_i64map_slot *find(const struct ns_i64map *m, int64_t key)
{
	size_t i = slot_of(key, m->cap);
	while (m->slots[i].key != EMPTY && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static int rehash(struct ns_i64map *m, size_t cap)
{
	struct ns_i64map_slot *old = m->slots;
	size_t old_cap = m->cap;
	struct ns_i64map_slot *slots = malloc(cap * sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < cap; i++)
		slots[i].key = EMPTY;
	m->slots = slots;
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key != EMPTY)
			*find(m, old[i].key) = old[i];
	free(old);
	return 0;
}

static int put(struct ns_i64map *m, int64_t key, int64_t val, bool replace)
{
	if (key == EMPTY) {
		if (!m->has_empty_key || replace)
			m->empty_key_val = val;
		m->has_empty_key = true;
		return 0;
	}
	if (4 * (m->n + 1) > 3 * m->cap && rehash(m, m->cap ? m->cap * 2 : 1024) < 0)
		return -1;
	struct ns_i64map_slot *s = find(m, key);
	if (s->key == EMPTY) {
		*s = (struct ns_i64map_slot){ key, val };
		m->n++;
	} else if (replace) {
		s->val = val;
	}
	return 0;
}

int ns_i64map_put_first(struct ns_i64map *m, int64_t key, int64_t val)
{
	return put(m, key, val, false);
}

int ns_i64map_set(struct ns_i64map *m, int64_t key, int64_t val)
{
	return put(m, key, val, true);
}

bool ns_i64map_next(const struct ns_i64map *m, size_t *pos, int64_t *key, int64_t *val)
{
	for (; *pos < m->cap; ++*pos) {
		if (m->slots[*pos].key != EMPTY) {
			*key = m->slots[*pos].key;
			*val = m->slots[(*pos)++].val;
			return true;
		}
	}
	if (*pos == m->cap && m->has_empty_key) { /* the key kept aside comes last */
		++*pos;
		*key = EMPTY;
		*val = m->empty_key_val;
		return true;
	}
	return false;
}

int64_t ns_i64map_get(const struct ns_i64map *m, int64_t key, int64_t missing)
{
	if (key == EMPTY)
		return m->has_empty_key ? m->empty_key_val : missing;
	if (!m->cap)
		return missing;
	const struct ns_i64map_slot *s = find(m, key);
	return s->key == EMPTY ? missing : s->val;
}

int ns_idindex_build(struct ns_idindex *x, size_t n, ns_id_of_fn id_of, const void *ctx)
{
	size_t count = 0;
	int64_t id;
	memset(x, 0, sizeof(*x));
	x->lo = INT64_MAX;
	x->hi = INT64_MIN;
	for (size_t i = 0; i < n; i++)
		if (id_of(ctx, i, &id)) {
			count++;
			x->lo = id < x->lo ? id : x->lo;
			x->hi = id > x->hi ? id : x->hi;
		}
	if (ns_ids_dense(x->lo, x->hi, count)) {
		size_t range = (size_t)((uint64_t)x->hi - (uint64_t)x->lo) + 1;
		if (!(x->dense = malloc(range * sizeof(*x->dense))))
			return -1;
		memset(x->dense, 0xff, range * sizeof(*x->dense)); /* (all -1) */
		for (size_t i = 0; i < n; i++) {
			int32_t *at = id_of(ctx, i, &id) ? &x->dense[(uint64_t)id - (uint64_t)x->lo] : NULL;
			if (at && *at < 0)
				*at = (int32_t)i;
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (id_of(ctx, i, &id) && ns_i64map_put_first(&x->hash, id, (int64_t)i) < 0)
			return -1;
	return 0;
}

int64_t ns_idindex_get(const struct ns_idindex *x, int64_t id, int64_t missing)
{
	if (!x->dense)
		return ns_i64map_get(&x->hash, id, missing);
	if (id < x->lo || id > x->hi)
		return missing;
	int32_t at = x->dense[(uint64_t)id - (uint64_t)x->lo];
	return at < 0 ? missing : at;
}

void ns_idindex_release(struct ns_idindex *x)
{
	free(x->dense);
	ns_i64map_release(&x->hash);
	memset(x, 0, sizeof(*x));
}
