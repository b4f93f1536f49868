#include "common/strtab.h"

#include "common/vec.h"

#include <stdlib.h>
#include <string.h>

/* Eight bytes a step (the strings are kernel names, shapes and call
 * stacks, tens to hundreds of bytes: a byte-at-a-time hash was 8% of a
 * report), then MurmurHash3's finalizer, so that the low bits the slots
 * use depend on every byte. In memory only: never stored. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;
	size_t i = 0;
	for (; i + sizeof(w) <= len; i += sizeof(w)) {
		memcpy(&w, s + i, sizeof(w));
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0; /* the last 0-7 bytes (a memcpy of a variable length is a call here) */
	for (size_t k = 0; i + k < len; k++)
		w |= (uint64_t)(unsigned char)s[i + k] << (8 * k);
	h ^= w;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static int grow_slots(struct ns_strtab *t)
{
	uint32_t cap = t->slots_cap ? t->slots_cap * 2 : 1024;
	uint32_t *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (uint32_t id = 0; id < t->count; id++) {
		uint64_t h = hash_bytes(ns_strtab_get(t, id), ns_strtab_len(t, id));
		uint32_t i = (uint32_t)h & (cap - 1);
		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->slots_cap = cap;
	return 0;
}

void ns_strtab_init(struct ns_strtab *t)
{
	memset(t, 0, sizeof(*t));
	ns_strtab_intern(t, "", 0); /* (on failure, the next intern stores it first) */
}

void ns_strtab_release(struct ns_strtab *t)
{
	free(t->bytes);
	free(t->offs);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

ns_str ns_strtab_find(const struct ns_strtab *t, const char *s, size_t len)
{
	if (!t->slots_cap)
		return UINT32_MAX;
	uint32_t i = (uint32_t)hash_bytes(s, len) & (t->slots_cap - 1);
	for (; t->slots[i]; i = (i + 1) & (t->slots_cap - 1)) {
		ns_str id = t->slots[i] - 1;
		/* (s may be NULL when len is 0, and memcmp must not be given NULL) */
		if (ns_strtab_len(t, id) == len && (len == 0 || memcmp(ns_strtab_get(t, id), s, len) == 0))
			return id;
	}
	return UINT32_MAX;
}

ns_str ns_strtab_intern(struct ns_strtab *t, const char *s, size_t len)
{
	/* id 0 is the empty string, also when ns_strtab_init could not store
	 * it (out of memory): else the first string would take id 0, which
	 * every reader takes for "absent" */
	if (t->count == 0 && len && ns_strtab_intern(t, "", 0) != 0)
		return UINT32_MAX;
	ns_str found = ns_strtab_find(t, s, len);
	if (found != UINT32_MAX)
		return found;
	if (len >= (1ULL << 23) || t->count == UINT32_MAX - 1)
		return UINT32_MAX;
	if ((uint64_t)(t->count + 1) * 2 > t->slots_cap && grow_slots(t) < 0)
		return UINT32_MAX;
	if (NS_GROW_MIN(t->offs, t->offs_cap, (size_t)t->count + 1, 1024) < 0 ||
	    NS_GROW_MIN(t->bytes, t->bytes_cap, t->bytes_len + len + 1, 65536) < 0)
		return UINT32_MAX;
	if (t->bytes_len >= (1ULL << 40))
		return UINT32_MAX;
	if (len)
		memcpy(t->bytes + t->bytes_len, s, len);
	t->bytes[t->bytes_len + len] = '\0';
	ns_str id = t->count++;
	t->offs[id] = (uint64_t)t->bytes_len | ((uint64_t)len << 40);
	t->bytes_len += len + 1;
	uint32_t i = (uint32_t)hash_bytes(s, len) & (t->slots_cap - 1);
	while (t->slots[i])
		i = (i + 1) & (t->slots_cap - 1);
	t->slots[i] = id + 1;
	return id;
}

/* Newest first. With linear probing, removing the newest string cannot
 * break another's probe chain: ids sit in the slots in the order they were
 * placed (grow_slots places them in id order too), and every older string's
 * chain was complete before the newer one took a free slot. */
void ns_strtab_truncate(struct ns_strtab *t, uint32_t count)
{
	while (t->count > count && t->count > 1) { /* (the empty string, id 0, stays) */
		ns_str id = t->count - 1;
		uint32_t i = (uint32_t)hash_bytes(ns_strtab_get(t, id), ns_strtab_len(t, id)) & (t->slots_cap - 1);
		while (t->slots[i] != id + 1)
			i = (i + 1) & (t->slots_cap - 1);
		t->slots[i] = 0;
		t->bytes_len = t->offs[id] & 0xffffffffffULL;
		t->count = id;
	}
}
