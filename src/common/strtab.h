/* String interning: every distinct byte string gets a small id, so events
 * carry 4-byte names and grouping compares integers. Id 0 is the empty
 * string. Strings are stored NUL-terminated in an append-only arena. */
#ifndef NS_STRTAB_H
#define NS_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t ns_str;

struct ns_strtab {
	char *bytes;       /* arena: each string followed by '\0' */
	size_t bytes_len, bytes_cap;
	uint64_t *offs;    /* id -> offset into bytes (low 40 bits) | len << 40 */
	uint32_t count;
	size_t offs_cap;
	uint32_t *slots;   /* open-addressing hash: id + 1, 0 = empty */
	uint32_t slots_cap;
};

void ns_strtab_init(struct ns_strtab *t);
void ns_strtab_release(struct ns_strtab *t);
/* Returns the id, or UINT32_MAX when out of memory. */
ns_str ns_strtab_intern(struct ns_strtab *t, const char *s, size_t len);
/* Forgets the strings interned last, keeping ids below count (a parse
 * that is tried again undoes what its failed attempt interned). */
void ns_strtab_truncate(struct ns_strtab *t, uint32_t count);
/* Returns the id or UINT32_MAX if the string was never interned. */
ns_str ns_strtab_find(const struct ns_strtab *t, const char *s, size_t len);
static inline const char *ns_strtab_get(const struct ns_strtab *t, ns_str id)
{
	return t->bytes + (t->offs[id] & 0xffffffffffULL);
}
static inline size_t ns_strtab_len(const struct ns_strtab *t, ns_str id)
{
	return (size_t)(t->offs[id] >> 40);
}

#endif
