/* A small Apache Parquet reader for the subset Neuron Explorer's profile
 * tables use (docs/neuron.md "Parquet"): the Thrift compact-protocol footer,
 * row groups read one column chunk at a time, data pages v1 and v2 and
 * dictionary pages; PLAIN, PLAIN_DICTIONARY / RLE_DICTIONARY, the
 * RLE/bit-packed hybrid (levels, dictionary indices, booleans), and
 * DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY; codecs
 * UNCOMPRESSED, SNAPPY (decoded here) and ZSTD (libzstd); physical types
 * BOOLEAN, INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY; top-level columns that
 * are a value or a list of values (LIST, or a repeated primitive).
 *
 * Anything else (another codec or encoding, INT96 or FIXED_LEN_BYTE_ARRAY,
 * structs, maps, nested lists, encrypted files, column data in other files)
 * is NS_ERR_UNSUPPORTED naming what it met; damage is NS_ERR_INPUT naming the
 * byte offset. Every length and offset is checked against the file before
 * use, and decoded sizes are bounded (NS_PQ_MAX_*). */
#ifndef NS_PARQUET_H
#define NS_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define NS_PQ_MAX_FOOTER (64u << 20)       /* FileMetaData bytes */
#define NS_PQ_MAX_PAGE (256u << 20)        /* one decompressed page */
#define NS_PQ_MAX_RATIO 1000               /* decompressed : compressed, per page (plus 1 MiB) */
#define NS_PQ_MAX_VALUES (16u << 20)       /* level entries of one column chunk */
#define NS_PQ_MAX_DEPTH 32                 /* Thrift struct nesting */
#define NS_PQ_MAX_COLUMNS 10000            /* schema elements */
#define NS_PQ_MAX_GROUPS (1u << 20)        /* row groups */

enum ns_pq_type {
	NS_PQ_BOOLEAN = 0, NS_PQ_INT32 = 1, NS_PQ_INT64 = 2, NS_PQ_INT96 = 3,
	NS_PQ_FLOAT = 4, NS_PQ_DOUBLE = 5, NS_PQ_BYTE_ARRAY = 6, NS_PQ_FIXED_LEN_BYTE_ARRAY = 7,
};

/* A top-level field of the schema, with its one leaf. */
struct ns_pq_column {
	char *name;
	int type;          /* enum ns_pq_type of the leaf; -1 for a group we cannot read */
	bool is_list;      /* a list of leaf values */
	int max_def, max_rep;
	int list_def;      /* is_list: the definition level at which the list is present (maybe empty) */
	const char *unsupported; /* why the column cannot be read, or NULL */
	size_t leaf;       /* index of its leaf among the column chunks */
};

struct ns_pq_chunk {
	uint64_t start, len;      /* byte range of its pages */
	int codec;
	int type;                 /* physical type the chunk says */
	int64_t n_values;
};

struct ns_pq_group {
	int64_t n_rows;
	struct ns_pq_chunk *chunks; /* one per leaf */
};

struct ns_pq_file {
	char *path;
	int fd;                     /* -1 when reading from memory */
	const unsigned char *mem;
	uint64_t size;
	struct ns_pq_column *cols;
	size_t n_cols;
	size_t n_leaves;
	struct ns_pq_group *groups;
	size_t n_groups;
	int64_t n_rows;
};

/* One column of one row group, decoded. Rows map to "slots" (one per level
 * entry: a value, a null or, for a list, one element or an empty list). */
struct ns_pq_cells {
	size_t n_rows;
	size_t *row_first;          /* n_rows + 1: the first slot of each row */
	uint8_t *def;               /* per slot */
	size_t n_slots;
	uint32_t *val;              /* per slot: index of its value (slots with def == max_def) */
	int64_t *i64;               /* BOOLEAN, INT32, INT64 values */
	double *f64;                /* FLOAT, DOUBLE values */
	const unsigned char **s;    /* BYTE_ARRAY values (into the page buffers) */
	uint32_t *s_len;
	size_t n_vals, cap_vals;
	unsigned char **bufs;       /* page buffers the values point into */
	size_t n_bufs;
};

/* Opens a file (path) or a buffer (mem/n, named path in messages; it must
 * outlive the handle) and reads its footer. */
int ns_pq_open(const char *path, struct ns_pq_file **out, struct ns_error *err);
int ns_pq_open_mem(const char *path, const void *mem, size_t n, struct ns_pq_file **out, struct ns_error *err);
void ns_pq_close(struct ns_pq_file *f);

/* Decodes column col of row group g into out (release it after). */
int ns_pq_read(struct ns_pq_file *f, size_t g, size_t col, struct ns_pq_cells *out, struct ns_error *err);
void ns_pq_cells_release(struct ns_pq_cells *c);

/* Appends the JSON text of row r of column col (a number, a string, true,
 * false, null or an array) to *buf. -1 on OOM. Doubles print with the
 * fewest digits that read back the same. */
struct ns_pq_text {
	char *p;
	size_t n, cap;
};
int ns_pq_cell_json(const struct ns_pq_file *f, size_t col, const struct ns_pq_cells *c, size_t r,
		    struct ns_pq_text *buf);
/* True if row r of column col is null (a null list, for a list). */
bool ns_pq_cell_null(const struct ns_pq_file *f, size_t col, const struct ns_pq_cells *c, size_t r);
int ns_pq_text_add(struct ns_pq_text *b, const char *s, size_t n);
/* s as a JSON string (quotes, backslashes and control bytes escaped). */
int ns_pq_text_string(struct ns_pq_text *b, const unsigned char *s, size_t len);
void ns_pq_text_release(struct ns_pq_text *b);

/* ---- pieces, for the unit tests ---- */

/* Unsigned LEB128 varint at p[*i]; false if cut or longer than 10 bytes. */
bool ns_pq_varint(const unsigned char *p, size_t n, size_t *i, uint64_t *out);
int64_t ns_pq_zigzag(uint64_t v);
/* Raw snappy block -> out (exactly out_n bytes). 0, or -1 with *bad the
 * input offset of the damage. */
int ns_pq_snappy(const unsigned char *in, size_t n, unsigned char *out, size_t out_n, size_t *bad);
/* The RLE/bit-packed hybrid: count values of bit_width bits into out. 0, or
 * -1 with *bad the offset of the damage. */
int ns_pq_rle(const unsigned char *p, size_t n, int bit_width, uint32_t *out, size_t count, size_t *bad);
/* DELTA_BINARY_PACKED: count integers (32-bit ones wrap as int32). */
int ns_pq_delta(const unsigned char *p, size_t n, bool is32, int64_t *out, size_t count, size_t *used, size_t *bad);

#endif
