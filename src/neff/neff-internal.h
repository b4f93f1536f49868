/* Shared between the files of src/neff/; not part of the module's API. */
#ifndef NS_NEFF_INTERNAL_H
#define NS_NEFF_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "neff/neff.h"

/* The bytes of one NEFF, from an open file or from memory. */
struct neff_source {
	const char *path;     /* for messages */
	FILE *file;           /* NULL when reading from mem */
	const uint8_t *mem;
	uint64_t size;        /* file size, known before anything is read */
	uint64_t pos;         /* next byte to read */
};

/* Reads exactly n bytes at src->pos. A short read means the file shrank
 * under us (NS_ERR_IO); callers never ask past src->size. */
int neff_source_read(struct neff_source *src, void *buf, size_t n, struct ns_error *err);

/* Appends one line to neff->notes. Returns NS_OK or NS_ERR_NOMEM. */
int neff_note(struct ns_neff *neff, const char *fmt, ...) NS_PRINTF(2, 3);

/* Reads the payload that starts at src->pos (gzip'd or raw tar, data_size
 * bytes) into neff->members and the payload size fields. */
int neff_read_archive(struct neff_source *src, struct ns_neff *neff, struct ns_error *err);

/* Interprets the JSON members: kelf -> def.json -> engines, info.json,
 * hlo_stats.json, tensor_map.json, neff.json. */
int neff_read_json_members(struct ns_neff *neff, struct ns_error *err);

#endif
