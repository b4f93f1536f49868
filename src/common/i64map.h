/* An int64 -> int64 hash map (open addressing, linear probing) for id
 * lookups: External id -> op, correlation -> runtime call, ... Large maps
 * are a report's biggest temporaries, so a slot is just a key and a value
 * (16 bytes; the one key that marks an empty slot is kept aside) and the
 * table is filled up to 3/4. */
#ifndef NS_I64MAP_H
#define NS_I64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ns_i64map_slot {
	int64_t key, val;
};

struct ns_i64map {
	struct ns_i64map_slot *slots;
	size_t cap, n;          /* n counts the slots in use (not the key kept aside) */
	bool has_empty_key;     /* the key equal to the empty marker, kept aside */
	int64_t empty_key_val;
};

void ns_i64map_init(struct ns_i64map *m);
void ns_i64map_release(struct ns_i64map *m);
/* Inserts key -> val unless key is present (first writer wins). -1 on OOM. */
int ns_i64map_put_first(struct ns_i64map *m, int64_t key, int64_t val);
/* Inserts or replaces. -1 on OOM. */
int ns_i64map_set(struct ns_i64map *m, int64_t key, int64_t val);
/* Returns the value, or `missing`. */
int64_t ns_i64map_get(const struct ns_i64map *m, int64_t key, int64_t missing);
/* Iterates over the entries in no particular order: start with *pos = 0;
 * false when done. */
bool ns_i64map_next(const struct ns_i64map *m, size_t *pos, int64_t *key, int64_t *val);

/* Whether count ids in [lo, hi] are dense enough to be indexed by an array
 * over their range: at most 4 times their number, plus 4096. */
static inline bool ns_ids_dense(int64_t lo, int64_t hi, size_t count)
{
	return count && (uint64_t)hi - (uint64_t)lo < 4 * (uint64_t)count + 4096;
}

/* An id -> index map built in one go, for ids that count up (Kineto's
 * External ids, correlations and flow ids: a process's counters): an
 * array over the ids' range when they are dense (ns_ids_dense), 4 bytes
 * an id and read in order, where the hash map's 16-byte slots, filled at
 * random, missed the cache on every put and get; the hash map otherwise. */
struct ns_idindex {
	int32_t *dense; /* index of id lo + k at [k], -1 if none; NULL: the hash map */
	int64_t lo, hi;
	struct ns_i64map hash;
};

/* Whether element i has an id, and which (*id). */
typedef bool (*ns_id_of_fn)(const void *ctx, size_t i, int64_t *id);

/* Maps the id of each of elements 0..n-1 (n < INT32_MAX) that has one to
 * its index; the first one wins on a repeated id. -1 on OOM. */
int ns_idindex_build(struct ns_idindex *x, size_t n, ns_id_of_fn id_of, const void *ctx);
/* The index of id, or `missing`. */
int64_t ns_idindex_get(const struct ns_idindex *x, int64_t id, int64_t missing);
void ns_idindex_release(struct ns_idindex *x);

#endif
