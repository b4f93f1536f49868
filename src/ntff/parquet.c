/* The Parquet subset of parquet.h, from the format's public specification
 * (apache/parquet-format: README, Encodings.md, parquet.thrift; the Thrift
 * compact protocol; Google's snappy format_description.txt). */
#include "ntff/parquet.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/vec.h"

/* Thrift compact-protocol types. */
enum { CT_STOP = 0, CT_TRUE = 1, CT_FALSE = 2, CT_BYTE = 3, CT_I16 = 4, CT_I32 = 5, CT_I64 = 6, CT_DOUBLE = 7,
       CT_BINARY = 8, CT_LIST = 9, CT_SET = 10, CT_MAP = 11, CT_STRUCT = 12 };

enum { CODEC_UNCOMPRESSED = 0, CODEC_SNAPPY = 1, CODEC_ZSTD = 6 };
enum { ENC_PLAIN = 0, ENC_PLAIN_DICTIONARY = 2, ENC_RLE = 3, ENC_DELTA_BINARY_PACKED = 5, ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
       ENC_DELTA_BYTE_ARRAY = 7, ENC_RLE_DICTIONARY = 8 };
enum { PAGE_DATA = 0, PAGE_INDEX = 1, PAGE_DICTIONARY = 2, PAGE_DATA_V2 = 3 };
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1, REP_REPEATED = 2 };
enum { CONV_LIST = 3, CONV_DECIMAL = 5 };

static const char *const codec_names[] = { "UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW" };
static const char *const encoding_names[] = {
	"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED", "DELTA_BINARY_PACKED",
	"DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "RLE_DICTIONARY", "BYTE_STREAM_SPLIT",
};
static const char *const type_names[] = { "BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
					  "FIXED_LEN_BYTE_ARRAY" };

#define NAME_OF(tab, v) ((v) >= 0 && (size_t)(v) < NS_ARRAY_SIZE(tab) ? tab[v] : "unknown")

/* ---- varints, zigzag ---- */

bool ns_pq_varint(const unsigned char *p, size_t n, size_t *i, uint64_t *out)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 70; shift += 7) {
		if (*i >= n)
			return false;
		unsigned char b = p[(*i)++];
		if (shift == 63 && (b & 0x7e))
			return false; /* beyond 64 bits */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

int64_t ns_pq_zigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* ---- Thrift compact protocol ---- */

struct tr {
	const unsigned char *p;
	size_t n, i;
	uint64_t base;     /* file offset of p[0] */
	int depth;
	const char *what;  /* the first damage met */
	uint64_t at;
	bool unsupported;  /* what is a feature outside the subset, not damage */
};

static int tr_fail(struct tr *t, const char *what)
{
	if (!t->what) {
		t->what = what;
		t->at = t->base + t->i;
	}
	return -1;
}

static int tr_varint(struct tr *t, uint64_t *v)
{
	return ns_pq_varint(t->p, t->n, &t->i, v) ? 0 : tr_fail(t, "bad or cut varint");
}

static int tr_int(struct tr *t, int type, int64_t *out)
{
	uint64_t v;
	if (type == CT_TRUE || type == CT_FALSE) {
		*out = type == CT_TRUE;
		return 0;
	}
	if (type == CT_BYTE) {
		if (t->i >= t->n)
			return tr_fail(t, "cut byte");
		*out = (int8_t)t->p[t->i++];
		return 0;
	}
	if (type != CT_I16 && type != CT_I32 && type != CT_I64)
		return tr_fail(t, "field of the wrong type");
	if (tr_varint(t, &v))
		return -1;
	*out = ns_pq_zigzag(v);
	if (type == CT_I32 && (*out < INT32_MIN || *out > INT32_MAX))
		return tr_fail(t, "i32 out of range");
	return 0;
}

static int tr_binary(struct tr *t, const unsigned char **s, size_t *len)
{
	uint64_t n;
	if (tr_varint(t, &n))
		return -1;
	if (n > t->n - t->i)
		return tr_fail(t, "string longer than the footer");
	*s = t->p + t->i;
	*len = (size_t)n;
	t->i += (size_t)n;
	return 0;
}

static int tr_list_header(struct tr *t, int *elem, size_t *count)
{
	uint64_t n;
	if (t->i >= t->n)
		return tr_fail(t, "cut list header");
	unsigned char b = t->p[t->i++];
	*elem = b & 0x0f;
	n = b >> 4;
	if (n == 15 && tr_varint(t, &n))
		return -1;
	if (n > t->n - t->i) /* every element takes at least one byte */
		return tr_fail(t, "list longer than the footer");
	*count = (size_t)n;
	return 0;
}

static int tr_skip(struct tr *t, int type);

/* Calls fn(t, ctx, id, type) for each field of a struct; fn skips what it
 * does not read. */
typedef int (*tr_field_fn)(struct tr *t, void *ctx, int id, int type);

static int tr_struct(struct tr *t, tr_field_fn fn, void *ctx)
{
	int64_t last = 0;
	if (++t->depth > NS_PQ_MAX_DEPTH)
		return tr_fail(t, "structs nested too deep");
	for (;;) {
		if (t->i >= t->n)
			return tr_fail(t, "cut struct");
		unsigned char b = t->p[t->i++];
		if (b == CT_STOP)
			break;
		int type = b & 0x0f, delta = b >> 4;
		int64_t id;
		if (delta) {
			id = last + delta;
		} else if (tr_int(t, CT_I16, &id)) {
			return -1;
		}
		if (type > CT_STRUCT || (type == CT_STOP))
			return tr_fail(t, "unknown field type");
		last = id;
		if ((fn ? fn(t, ctx, (int)id, type) : tr_skip(t, type)))
			return -1;
	}
	t->depth--;
	return 0;
}

static int tr_skip(struct tr *t, int type)
{
	int64_t v;
	const unsigned char *s;
	size_t n, count;
	int elem;
	switch (type) {
	case CT_TRUE: case CT_FALSE: return 0;
	case CT_BYTE: case CT_I16: case CT_I32: case CT_I64: return tr_int(t, type, &v);
	case CT_DOUBLE:
		if (t->n - t->i < 8)
			return tr_fail(t, "cut double");
		t->i += 8;
		return 0;
	case CT_BINARY: return tr_binary(t, &s, &n);
	case CT_LIST: case CT_SET:
		if (tr_list_header(t, &elem, &count))
			return -1;
		if (++t->depth > NS_PQ_MAX_DEPTH)
			return tr_fail(t, "lists nested too deep");
		for (size_t k = 0; k < count; k++)
			if (elem == CT_TRUE || elem == CT_FALSE ? tr_skip(t, CT_BYTE) : tr_skip(t, elem))
				return -1;
		t->depth--;
		return 0;
	case CT_MAP: {
		uint64_t m;
		if (tr_varint(t, &m))
			return -1;
		if (m == 0)
			return 0;
		if (m > t->n - t->i || t->i >= t->n)
			return tr_fail(t, "map longer than the footer");
		unsigned char kv = t->p[t->i++];
		if (++t->depth > NS_PQ_MAX_DEPTH)
			return tr_fail(t, "maps nested too deep");
		for (uint64_t k = 0; k < m; k++)
			if (tr_skip(t, kv >> 4) || tr_skip(t, kv & 0x0f))
				return -1;
		t->depth--;
		return 0;
	}
	case CT_STRUCT: return tr_struct(t, NULL, NULL);
	default: return tr_fail(t, "unknown field type");
	}
}

/* A list of structs: fn is called per element with its index. */
typedef int (*tr_elem_fn)(struct tr *t, void *ctx, size_t k);

static int tr_struct_list(struct tr *t, int type, size_t *count, int (*begin)(void *ctx, size_t n), tr_elem_fn fn,
			  void *ctx)
{
	int elem;
	if (type != CT_LIST)
		return tr_skip(t, type);
	if (tr_list_header(t, &elem, count))
		return -1;
	if (elem != CT_STRUCT)
		return tr_fail(t, "list of the wrong element type");
	int b = begin(ctx, *count);
	if (b == -3)
		return tr_fail(t, "more schema elements or row groups than supported");
	if (b)
		return -2;
	for (size_t k = 0; k < *count; k++)
		if (fn(t, ctx, k))
			return -1;
	return 0;
}

/* ---- the footer ---- */

struct schema_elem {
	int type;            /* -1: a group */
	int repetition;
	int num_children;
	int converted;       /* -1: none */
	int logical;         /* field id of the LogicalType union, 0: none */
	const unsigned char *name;
	size_t name_len;
};

struct meta {
	struct ns_pq_file *f;
	struct schema_elem *schema;
	size_t n_schema;
	size_t cur;          /* element being read */
	bool oom;
};

static int logical_field(struct tr *t, void *ctx, int id, int type)
{
	*(int *)ctx = id;
	return tr_skip(t, type);
}

static int schema_field(struct tr *t, void *ctx, int id, int type)
{
	struct meta *m = ctx;
	struct schema_elem *e = &m->schema[m->cur];
	int64_t v;
	switch (id) {
	case 1: if (tr_int(t, type, &v)) return -1; e->type = (int)v; return 0;
	case 3: if (tr_int(t, type, &v)) return -1; e->repetition = (int)v; return 0;
	case 4: return type == CT_BINARY ? tr_binary(t, &e->name, &e->name_len) : tr_fail(t, "schema name is not a string");
	case 5:
		if (tr_int(t, type, &v))
			return -1;
		if (v < 0 || v > INT32_MAX)
			return tr_fail(t, "negative num_children");
		e->num_children = (int)v;
		return 0;
	case 6: if (tr_int(t, type, &v)) return -1; e->converted = (int)v; return 0;
	case 10: return type == CT_STRUCT ? tr_struct(t, logical_field, &e->logical) : tr_skip(t, type);
	default: return tr_skip(t, type);
	}
}

static int schema_begin(void *ctx, size_t n)
{
	struct meta *m = ctx;
	if (n > NS_PQ_MAX_COLUMNS)
		return -3;
	m->schema = calloc(n + 1, sizeof(*m->schema));
	m->n_schema = n;
	m->oom = !m->schema;
	return m->oom ? -1 : 0;
}

static int schema_elem(struct tr *t, void *ctx, size_t k)
{
	struct meta *m = ctx;
	m->cur = k;
	m->schema[k].type = m->schema[k].converted = -1;
	m->schema[k].repetition = REP_REQUIRED;
	return tr_struct(t, schema_field, m);
}

/* Column chunks of the row group being read. */
struct cc_ctx {
	struct meta *m;
	struct ns_pq_group *g;
	size_t k;
	int64_t dict_off, data_off, total;
};

static int colmeta_field(struct tr *t, void *ctx, int id, int type)
{
	struct cc_ctx *c = ctx;
	struct ns_pq_chunk *ch = &c->g->chunks[c->k];
	int64_t v;
	switch (id) {
	case 1: if (tr_int(t, type, &v)) return -1; ch->type = (int)v; return 0;
	case 4: if (tr_int(t, type, &v)) return -1; ch->codec = (int)v; return 0;
	case 5: return tr_int(t, type, &ch->n_values);
	case 7: return tr_int(t, type, &c->total);
	case 9: return tr_int(t, type, &c->data_off);
	case 11: return tr_int(t, type, &c->dict_off);
	default: return tr_skip(t, type);
	}
}

static int chunk_field(struct tr *t, void *ctx, int id, int type)
{
	struct cc_ctx *c = ctx;
	if (id == 1) {
		t->unsupported = true;
		return tr_fail(t, "column data in another file (file_path)");
	}
	if (id == 8 || id == 9) {
		t->unsupported = true;
		return tr_fail(t, "an encrypted column");
	}
	if (id == 3)
		return type == CT_STRUCT ? tr_struct(t, colmeta_field, c) : tr_fail(t, "meta_data is not a struct");
	return tr_skip(t, type);
}

static int chunks_begin(void *ctx, size_t n)
{
	struct cc_ctx *c = ctx;
	if (n != c->m->f->n_leaves)
		return 0; /* checked by the caller */
	c->g->chunks = calloc(n + 1, sizeof(*c->g->chunks));
	return c->g->chunks ? 0 : (c->m->oom = true, -1);
}

static int chunk_elem(struct tr *t, void *ctx, size_t k)
{
	struct cc_ctx *c = ctx;
	uint64_t size = c->m->f->size;
	if (!c->g->chunks)
		return tr_fail(t, "row group with a column count unlike the schema's");
	c->k = k;
	c->dict_off = c->data_off = c->total = -1;
	c->g->chunks[k].type = -1;
	c->g->chunks[k].n_values = -1;
	if (tr_struct(t, chunk_field, c))
		return -1;
	struct ns_pq_chunk *ch = &c->g->chunks[k];
	int64_t start = c->dict_off > 0 && c->dict_off < c->data_off ? c->dict_off : c->data_off;
	if (c->data_off < 0 || c->total < 0 || ch->n_values < 0 || ch->type < 0)
		return tr_fail(t, "column chunk without its offsets, sizes or type");
	if (start < 4 || (uint64_t)start > size || (uint64_t)c->total > size - (uint64_t)start)
		return tr_fail(t, "column chunk beyond the end of the file");
	ch->start = (uint64_t)start;
	ch->len = (uint64_t)c->total;
	return 0;
}

static int group_field(struct tr *t, void *ctx, int id, int type)
{
	struct cc_ctx *c = ctx;
	size_t n;
	if (id == 1) {
		if (c->g->chunks)
			return tr_fail(t, "a row group with a second list of column chunks");
		int rc = tr_struct_list(t, type, &n, chunks_begin, chunk_elem, c);
		if (rc == 0 && !c->g->chunks)
			return tr_fail(t, "row group with a column count unlike the schema's");
		return rc == -2 ? -1 : rc;
	}
	if (id == 3)
		return tr_int(t, type, &c->g->n_rows);
	return tr_skip(t, type);
}

static int groups_begin(void *ctx, size_t n)
{
	struct meta *m = ctx;
	if (n > NS_PQ_MAX_GROUPS)
		return -3;
	m->f->groups = calloc(n + 1, sizeof(*m->f->groups));
	m->f->n_groups = n;
	m->oom = !m->f->groups;
	return m->oom ? -1 : 0;
}

static int group_elem(struct tr *t, void *ctx, size_t k)
{
	struct meta *m = ctx;
	struct cc_ctx c = { m, &m->f->groups[k], 0, 0, 0, 0 };
	c.g->n_rows = -1;
	if (tr_struct(t, group_field, &c))
		return -1;
	if (!c.g->chunks)
		return tr_fail(t, "row group without column chunks");
	if (c.g->n_rows < 0)
		return tr_fail(t, "row group without num_rows");
	return 0;
}

/* The schema's leaves, in order, become the columns (see parquet.h). */
static int build_columns(struct meta *m, struct tr *t);

static int file_field(struct tr *t, void *ctx, int id, int type)
{
	struct meta *m = ctx;
	size_t n;
	int rc;
	switch (id) {
	case 2:
		if (m->schema)
			return tr_fail(t, "a second schema");
		if ((rc = tr_struct_list(t, type, &n, schema_begin, schema_elem, m)) || m->n_schema == 0)
			return rc == 0 ? tr_fail(t, "empty schema") : -1;
		return build_columns(m, t);
	case 3: return tr_int(t, type, &m->f->n_rows);
	case 4:
		if (!m->schema)
			return tr_fail(t, "row groups before the schema");
		if (m->f->groups)
			return tr_fail(t, "a second list of row groups");
		return tr_struct_list(t, type, &n, groups_begin, group_elem, m) ? -1 : 0;
	case 8:
		t->unsupported = true;
		return tr_fail(t, "an encrypted file (encryption_algorithm)");
	default: return tr_skip(t, type);
	}
}

static bool is_list_group(const struct schema_elem *e)
{
	return e->converted == CONV_LIST || e->logical == 3;
}

static int def_of(int repetition)
{
	return repetition == REP_REQUIRED ? 0 : 1;
}

/* Counts the leaves below schema element *i (advancing *i past them). */
static int skip_subtree(struct meta *m, struct tr *t, size_t *i, size_t *leaves, int depth)
{
	const struct schema_elem *e;
	if (depth > NS_PQ_MAX_DEPTH || *i >= m->n_schema)
		return tr_fail(t, "schema tree deeper than supported or cut");
	e = &m->schema[(*i)++];
	if (e->num_children == 0) {
		(*leaves)++;
		return 0;
	}
	for (int c = 0; c < e->num_children; c++)
		if (skip_subtree(m, t, i, leaves, depth + 1))
			return -1;
	return 0;
}

static int build_columns(struct meta *m, struct tr *t)
{
	struct ns_pq_file *f = m->f;
	const struct schema_elem *root = &m->schema[0];
	size_t i = 1;
	if (root->num_children <= 0 || (size_t)root->num_children > m->n_schema)
		return tr_fail(t, "schema root without children");
	if (!(f->cols = calloc((size_t)root->num_children, sizeof(*f->cols)))) {
		m->oom = true;
		return -1;
	}
	for (int c = 0; c < root->num_children; c++) {
		struct ns_pq_column *col = &f->cols[f->n_cols];
		size_t first = i, leaves = 0;
		if (i >= m->n_schema)
			return tr_fail(t, "schema shorter than its num_children say");
		const struct schema_elem *e = &m->schema[i];
		if (skip_subtree(m, t, &i, &leaves, 1))
			return -1;
		if (!e->name)
			return tr_fail(t, "schema element without a name");
		if (!(col->name = strndup((const char *)e->name, e->name_len))) {
			m->oom = true;
			return -1;
		}
		f->n_cols++;
		col->leaf = f->n_leaves;
		col->type = -1;
		f->n_leaves += leaves;
		if (e->num_children == 0) { /* a value, or a repeated value (a list) */
			col->type = e->type;
			col->is_list = e->repetition == REP_REPEATED;
			col->max_def = e->repetition == REP_REQUIRED ? 0 : 1;
			col->max_rep = col->is_list;
			col->list_def = 0;
			if (e->converted == CONV_DECIMAL || e->logical == 5)
				col->unsupported = "DECIMAL values";
			continue;
		}
		/* LIST: <opt|req> group (LIST) { repeated <leaf> } or
		 * { repeated group { <opt|req> <leaf> } } */
		const struct schema_elem *rep = i - first >= 2 ? &m->schema[first + 1] : NULL;
		const struct schema_elem *leaf = NULL;
		int d = def_of(e->repetition);
		if (leaves == 1 && rep && e->num_children == 1 && rep->repetition == REP_REPEATED && is_list_group(e) &&
		    e->repetition != REP_REPEATED) {
			if (rep->num_children == 0)
				leaf = rep;
			else if (rep->num_children == 1 && i - first == 3 && m->schema[first + 2].num_children == 0 &&
				 m->schema[first + 2].repetition != REP_REPEATED)
				leaf = &m->schema[first + 2];
		}
		if (!leaf) {
			col->unsupported = "nested values (a struct, a map or a nested list)";
			continue;
		}
		col->is_list = true;
		col->type = leaf->type;
		col->list_def = d;
		col->max_rep = 1;
		col->max_def = d + 1 + (leaf != rep ? def_of(leaf->repetition) : 0);
		if (leaf->converted == CONV_DECIMAL || leaf->logical == 5)
			col->unsupported = "DECIMAL values";
	}
	if (f->n_cols == 0)
		return tr_fail(t, "schema without columns");
	for (size_t k = 0; k < f->n_cols; k++)
		if (!f->cols[k].unsupported && (f->cols[k].type < 0 || f->cols[k].type == NS_PQ_INT96 ||
						f->cols[k].type == NS_PQ_FIXED_LEN_BYTE_ARRAY || f->cols[k].type > NS_PQ_FIXED_LEN_BYTE_ARRAY))
			f->cols[k].unsupported = f->cols[k].type == NS_PQ_INT96 ? "INT96 values"
						 : f->cols[k].type == NS_PQ_FIXED_LEN_BYTE_ARRAY ? "FIXED_LEN_BYTE_ARRAY values"
						 : "values of an unknown physical type";
	return 0;
}

/* ---- opening ---- */

static int read_at(const struct ns_pq_file *f, uint64_t off, void *buf, size_t n, struct ns_error *err)
{
	if (off > f->size || n > f->size - off)
		return ns_error_set(err, NS_ERR_INPUT, "%s: byte %llu: read beyond the end of the file", f->path,
				    (unsigned long long)off);
	if (f->fd < 0) {
		memcpy(buf, f->mem + off, n);
		return 0;
	}
	for (size_t got = 0; got < n;) {
		ssize_t r = pread(f->fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r <= 0)
			return ns_error_set(err, NS_ERR_IO, "%s: cannot read: %s", f->path,
					    r < 0 ? strerror(errno) : "file shrank while reading");
		got += (size_t)r;
	}
	return 0;
}

static int open_common(struct ns_pq_file *f, struct ns_error *err)
{
	unsigned char tail[8], head[4];
	unsigned char *footer = NULL;
	struct meta m = { f, NULL, 0, 0, false };
	int rc;
	if (f->size < 12)
		return ns_error_set(err, NS_ERR_INPUT, "%s: %llu bytes is too short for a Parquet file", f->path,
				    (unsigned long long)f->size);
	if ((rc = read_at(f, 0, head, 4, err)) || (rc = read_at(f, f->size - 8, tail, 8, err)))
		return rc;
	if (memcmp(tail + 4, "PARE", 4) == 0)
		return ns_error_set(err, NS_ERR_UNSUPPORTED, "%s: an encrypted Parquet file (footer magic PARE) is not supported",
				    f->path);
	if (memcmp(head, "PAR1", 4) != 0 || memcmp(tail + 4, "PAR1", 4) != 0)
		return ns_error_set(err, NS_ERR_INPUT, "%s: byte %llu: not a Parquet file (no PAR1 magic at %s)", f->path,
				    memcmp(head, "PAR1", 4) != 0 ? 0ULL : (unsigned long long)(f->size - 4),
				    memcmp(head, "PAR1", 4) != 0 ? "its start" : "its end");
	uint64_t len = (uint64_t)tail[0] | (uint64_t)tail[1] << 8 | (uint64_t)tail[2] << 16 | (uint64_t)tail[3] << 24;
	if (len > f->size - 12)
		return ns_error_set(err, NS_ERR_INPUT, "%s: byte %llu: footer length %llu is beyond the file", f->path,
				    (unsigned long long)(f->size - 8), (unsigned long long)len);
	if (len > NS_PQ_MAX_FOOTER)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: footer of %llu bytes is over the limit of %u", f->path,
				    (unsigned long long)len, NS_PQ_MAX_FOOTER);
	if (!(footer = malloc(len + 1)))
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", f->path);
	uint64_t start = f->size - 8 - len;
	if ((rc = read_at(f, start, footer, (size_t)len, err)))
		goto out;
	struct tr t = { footer, (size_t)len, 0, start, 0, NULL, 0, false };
	f->n_rows = -1;
	if (tr_struct(&t, file_field, &m) || m.oom) {
		if (m.oom && !t.what)
			rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", f->path);
		else
			rc = ns_error_set(err, t.unsupported ? NS_ERR_UNSUPPORTED : NS_ERR_INPUT,
					  t.unsupported ? "%s: byte %llu: %s is not supported" : "%s: byte %llu: corrupt Parquet footer: %s",
					  f->path, (unsigned long long)t.at, t.what);
		goto out;
	}
	if (!f->cols) {
		rc = ns_error_set(err, NS_ERR_INPUT, "%s: byte %llu: corrupt Parquet footer: no schema", f->path,
				  (unsigned long long)start);
		goto out;
	}
	for (size_t g = 0; g < f->n_groups; g++)
		for (size_t k = 0; k < f->n_cols; k++) {
			const struct ns_pq_column *c = &f->cols[k];
			if (!c->unsupported && f->groups[g].chunks[c->leaf].type != c->type) {
				rc = ns_error_set(err, NS_ERR_INPUT, "%s: byte %llu: corrupt Parquet footer: column '%s' is %s in the schema but %s in row group %zu",
						  f->path, (unsigned long long)start, c->name, NAME_OF(type_names, c->type),
						  NAME_OF(type_names, f->groups[g].chunks[c->leaf].type), g);
				goto out;
			}
		}
out:
	free(m.schema);
	free(footer);
	return rc;
}

static int open_file(const char *path, const void *mem, size_t n, struct ns_pq_file **out, struct ns_error *err)
{
	struct ns_pq_file *f = calloc(1, sizeof(*f));
	struct stat st;
	int rc = 0;
	*out = NULL;
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	f->fd = -1;
	if (mem) {
		f->mem = mem;
		f->size = n;
	} else if ((f->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(f->fd, &st) != 0) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
		goto out;
	} else {
		f->size = (uint64_t)st.st_size;
	}
	rc = open_common(f, err);
out:
	if (rc)
		ns_pq_close(f);
	else
		*out = f;
	return rc;
}

int ns_pq_open(const char *path, struct ns_pq_file **out, struct ns_error *err)
{
	return open_file(path, NULL, 0, out, err);
}

int ns_pq_open_mem(const char *path, const void *mem, size_t n, struct ns_pq_file **out, struct ns_error *err)
{
	static const unsigned char empty[1];
	return open_file(path, mem ? mem : empty, n, out, err);
}

void ns_pq_close(struct ns_pq_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	for (size_t k = 0; k < f->n_cols; k++)
		free(f->cols[k].name);
	free(f->cols);
	for (size_t g = 0; g < f->n_groups; g++)
		free(f->groups[g].chunks);
	free(f->groups);
	free(f->path);
	free(f);
}

/* ---- snappy (format_description.txt: a varint length, then literals and copies) ---- */

int ns_pq_snappy(const unsigned char *in, size_t n, unsigned char *out, size_t out_n, size_t *bad)
{
	size_t i = 0, o = 0;
	uint64_t len;
	if (!ns_pq_varint(in, n, &i, &len) || len != out_n) {
		*bad = 0;
		return -1;
	}
	while (i < n) {
		size_t at = i;
		unsigned char tag = in[i++];
		size_t l, off = 0;
		if ((tag & 3) == 0) { /* literal */
			l = (size_t)(tag >> 2) + 1;
			if (l > 60) {
				size_t extra = l - 60;
				if (n - i < extra) {
					*bad = at;
					return -1;
				}
				l = 0;
				for (size_t b = 0; b < extra; b++)
					l |= (size_t)in[i + b] << (8 * b);
				l += 1;
				i += extra;
			}
			if (l > n - i || l > out_n - o) {
				*bad = at;
				return -1;
			}
			memcpy(out + o, in + i, l);
			i += l;
			o += l;
			continue;
		}
		if ((tag & 3) == 1) {
			if (n - i < 1) {
				*bad = at;
				return -1;
			}
			l = 4 + ((tag >> 2) & 7);
			off = (size_t)(tag >> 5) << 8 | in[i];
			i += 1;
		} else {
			size_t w = (tag & 3) == 2 ? 2 : 4;
			if (n - i < w) {
				*bad = at;
				return -1;
			}
			l = (size_t)(tag >> 2) + 1;
			for (size_t b = 0; b < w; b++)
				off |= (size_t)in[i + b] << (8 * b);
			i += w;
		}
		if (off == 0 || off > o || l > out_n - o) {
			*bad = at;
			return -1;
		}
		for (size_t b = 0; b < l; b++) /* copies may overlap their own output */
			out[o + b] = out[o - off + b];
		o += l;
	}
	if (o != out_n) {
		*bad = n;
		return -1;
	}
	return 0;
}

/* ---- the RLE / bit-packed hybrid (Encodings.md) ---- */

int ns_pq_rle(const unsigned char *p, size_t n, int bit_width, uint32_t *out, size_t count, size_t *bad)
{
	size_t i = 0, got = 0;
	size_t vbytes = ((size_t)bit_width + 7) / 8;
	if (bit_width < 0 || bit_width > 32) {
		*bad = 0;
		return -1;
	}
	while (got < count) {
		uint64_t h;
		size_t at = i;
		if (!ns_pq_varint(p, n, &i, &h)) {
			*bad = at;
			return -1;
		}
		if (h & 1) { /* bit-packed: (h >> 1) groups of 8 values */
			uint64_t groups = h >> 1;
			if (groups == 0 || groups > n || groups * (uint64_t)bit_width > n - i) {
				*bad = at;
				return -1;
			}
			size_t bytes = (size_t)groups * (size_t)bit_width;
			size_t vals = (size_t)groups * 8;
			for (size_t v = 0; v < vals && got < count; v++) {
				uint64_t bit = (uint64_t)v * (uint64_t)bit_width, acc = 0;
				size_t b0 = (size_t)(bit / 8);
				for (size_t b = 0; b < 5 && b0 + b < bytes; b++)
					acc |= (uint64_t)p[i + b0 + b] << (8 * b);
				out[got++] = (uint32_t)((acc >> (bit % 8)) & ((1ULL << bit_width) - 1));
			}
			i += bytes;
		} else { /* a run of one value */
			uint64_t run = h >> 1, v = 0;
			if (vbytes > n - i) {
				*bad = at;
				return -1;
			}
			for (size_t b = 0; b < vbytes; b++)
				v |= (uint64_t)p[i + b] << (8 * b);
			i += vbytes;
			if (bit_width < 32 && v >> bit_width) {
				*bad = at;
				return -1;
			}
			for (uint64_t r = 0; r < run && got < count; r++)
				out[got++] = (uint32_t)v;
		}
	}
	return 0;
}

static int bit_width_of(int max)
{
	int w = 0;
	while (max >> w)
		w++;
	return w;
}

/* ---- column chunks ---- */

struct page_hdr {
	int type;
	int64_t usize, csize;
	int64_t n_values, encoding, def_enc, rep_enc;
	int64_t def_len, rep_len;
	bool compressed;
};

static int v1_field(struct tr *t, void *ctx, int id, int type)
{
	struct page_hdr *h = ctx;
	switch (id) {
	case 1: return tr_int(t, type, &h->n_values);
	case 2: return tr_int(t, type, &h->encoding);
	case 3: return tr_int(t, type, &h->def_enc);
	case 4: return tr_int(t, type, &h->rep_enc);
	default: return tr_skip(t, type);
	}
}

static int v2_field(struct tr *t, void *ctx, int id, int type)
{
	struct page_hdr *h = ctx;
	int64_t v;
	switch (id) {
	case 1: return tr_int(t, type, &h->n_values);
	case 4: return tr_int(t, type, &h->encoding);
	case 5: return tr_int(t, type, &h->def_len);
	case 6: return tr_int(t, type, &h->rep_len);
	case 7:
		if (tr_int(t, type, &v))
			return -1;
		h->compressed = v != 0;
		return 0;
	default: return tr_skip(t, type);
	}
}

static int page_field(struct tr *t, void *ctx, int id, int type)
{
	struct page_hdr *h = ctx;
	int64_t v;
	switch (id) {
	case 1: if (tr_int(t, type, &v)) return -1; h->type = (int)v; return 0;
	case 2: return tr_int(t, type, &h->usize);
	case 3: return tr_int(t, type, &h->csize);
	case 5: case 7: return type == CT_STRUCT ? tr_struct(t, v1_field, h) : tr_skip(t, type);
	case 8: return type == CT_STRUCT ? tr_struct(t, v2_field, h) : tr_skip(t, type);
	default: return tr_skip(t, type);
	}
}

/* Values as decoded (a dictionary, or the cells' own). */
struct vals {
	int64_t *i64;
	double *f64;
	const unsigned char **s;
	uint32_t *s_len;
	size_t n, cap;
};

static int vals_grow(struct vals *v, int type, size_t more)
{
	if (more > NS_PQ_MAX_VALUES || v->n + more > NS_PQ_MAX_VALUES)
		return -2;
	if (v->n + more <= v->cap)
		return 0;
	size_t cap = v->cap ? v->cap : 64;
	while (cap < v->n + more)
		cap *= 2;
	if (type == NS_PQ_BYTE_ARRAY) {
		const unsigned char **s = realloc(v->s, cap * sizeof(*s));
		if (!s)
			return -1;
		v->s = s;
		uint32_t *l = realloc(v->s_len, cap * sizeof(*l));
		if (!l)
			return -1;
		v->s_len = l;
	} else if (type == NS_PQ_FLOAT || type == NS_PQ_DOUBLE) {
		double *d = realloc(v->f64, cap * sizeof(*d));
		if (!d)
			return -1;
		v->f64 = d;
	} else {
		int64_t *d = realloc(v->i64, cap * sizeof(*d));
		if (!d)
			return -1;
		v->i64 = d;
	}
	v->cap = cap;
	return 0;
}

static void vals_release(struct vals *v)
{
	free(v->i64);
	free(v->f64);
	free(v->s);
	free(v->s_len);
	memset(v, 0, sizeof(*v));
}

static uint64_t le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;
	for (size_t b = 0; b < n; b++)
		v |= (uint64_t)p[b] << (8 * b);
	return v;
}

/* PLAIN values: count of them from p[0..n). Returns bytes used, or -1 (*bad). */
static int64_t plain(const unsigned char *p, size_t n, int type, size_t count, struct vals *v, size_t *bad)
{
	size_t i = 0;
	if (type == NS_PQ_BOOLEAN) {
		if ((count + 7) / 8 > n) {
			*bad = n;
			return -1;
		}
		for (size_t k = 0; k < count; k++)
			v->i64[v->n++] = (p[k / 8] >> (k % 8)) & 1;
		return (int64_t)((count + 7) / 8);
	}
	for (size_t k = 0; k < count; k++) {
		switch (type) {
		case NS_PQ_INT32:
			if (n - i < 4)
				goto cut;
			v->i64[v->n++] = (int32_t)(uint32_t)le(p + i, 4);
			i += 4;
			break;
		case NS_PQ_INT64:
			if (n - i < 8)
				goto cut;
			v->i64[v->n++] = (int64_t)le(p + i, 8);
			i += 8;
			break;
		case NS_PQ_FLOAT: {
			float x;
			uint32_t u;
			if (n - i < 4)
				goto cut;
			u = (uint32_t)le(p + i, 4);
			memcpy(&x, &u, 4);
			v->f64[v->n++] = x;
			i += 4;
			break;
		}
		case NS_PQ_DOUBLE: {
			double x;
			uint64_t u;
			if (n - i < 8)
				goto cut;
			u = le(p + i, 8);
			memcpy(&x, &u, 8);
			v->f64[v->n++] = x;
			i += 8;
			break;
		}
		default: { /* BYTE_ARRAY */
			if (n - i < 4)
				goto cut;
			uint64_t l = le(p + i, 4);
			if (l > n - i - 4) {
				*bad = i;
				return -1;
			}
			v->s[v->n] = p + i + 4;
			v->s_len[v->n++] = (uint32_t)l;
			i += 4 + (size_t)l;
		}
		}
	}
	return (int64_t)i;
cut:
	*bad = i;
	return -1;
}

/* width bits (<= 64) at bit offset bit of p, least significant first. */
static uint64_t get_bits(const unsigned char *p, uint64_t bit, int width)
{
	uint64_t v = 0;
	for (int k = 0; k < width; k++, bit++)
		v |= (uint64_t)((p[bit / 8] >> (bit % 8)) & 1) << k;
	return v;
}

int ns_pq_delta(const unsigned char *p, size_t n, bool is32, int64_t *out, size_t count, size_t *used, size_t *bad)
{
	size_t i = 0, got = 0;
	uint64_t block, minis, total, first, zz;
	*bad = 0;
	if (!ns_pq_varint(p, n, &i, &block) || !ns_pq_varint(p, n, &i, &minis) || !ns_pq_varint(p, n, &i, &total) ||
	    !ns_pq_varint(p, n, &i, &first) || minis == 0 || block == 0 || block % 128 || block > (1u << 20) ||
	    minis > block || (block / minis) % 32 || total < count)
		return -1;
	uint64_t per_mini = block / minis, last = (uint64_t)ns_pq_zigzag(first);
	*used = i;
	if (count == 0)
		return 0;
	out[got++] = is32 ? (int32_t)(uint32_t)last : (int64_t)last;
	while (got < count) {
		size_t at = i;
		if (!ns_pq_varint(p, n, &i, &zz) || minis > n - i) {
			*bad = at;
			return -1;
		}
		uint64_t min_delta = (uint64_t)ns_pq_zigzag(zz);
		const unsigned char *widths = p + i;
		i += (size_t)minis;
		for (uint64_t m = 0; m < minis && got < count; m++) {
			int w = widths[m];
			if (w > 64 || per_mini * (uint64_t)w / 8 > n - i) {
				*bad = i;
				return -1;
			}
			for (uint64_t k = 0; k < per_mini && got < count; k++) {
				last += min_delta + get_bits(p + i, k * (uint64_t)w, w); /* wraps, as the format says */
				out[got++] = is32 ? (int32_t)(uint32_t)last : (int64_t)last;
			}
			i += (size_t)(per_mini * (uint64_t)w / 8);
		}
	}
	*used = i;
	return 0;
}

struct reader {
	struct ns_pq_file *f;
	const struct ns_pq_column *col;
	const struct ns_pq_chunk *ch;
	struct ns_pq_cells *out;
	struct vals dict, own;
	bool has_dict;
	uint8_t *rep;            /* per slot, while reading */
	size_t cap_slots;
	struct ns_error *err;
};

static int keep_buf(struct reader *r, unsigned char *buf)
{
	unsigned char **b = realloc(r->out->bufs, (r->out->n_bufs + 1) * sizeof(*b));
	if (!b) {
		free(buf);
		return -1;
	}
	b[r->out->n_bufs++] = buf;
	r->out->bufs = b;
	return 0;
}

static int fail(struct reader *r, enum ns_status st, uint64_t at, const char *fmt, ...) NS_PRINTF(4, 5);
static int fail(struct reader *r, enum ns_status st, uint64_t at, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ns_error_set(r->err, st, "%s: byte %llu: column '%s': %s", r->f->path, (unsigned long long)at,
			    r->col->name, what);
}

/* The page's bytes decompressed (a new buffer the caller owns). */
static int inflate_page(struct reader *r, const unsigned char *in, size_t n, size_t usize, uint64_t at,
			unsigned char **out)
{
	size_t bad = 0;
	*out = NULL;
	if (usize > NS_PQ_MAX_PAGE || usize > (uint64_t)n * NS_PQ_MAX_RATIO + (1u << 20))
		return ns_error_set(r->err, NS_ERR_NOMEM,
				    "%s: byte %llu: column '%s': a page of %zu bytes decompressed (from %zu) is over the limit "
				    "(%u bytes, %u:1)", r->f->path, (unsigned long long)at, r->col->name, usize, n,
				    NS_PQ_MAX_PAGE, NS_PQ_MAX_RATIO);
	unsigned char *buf = malloc(usize + 1);
	if (!buf)
		return ns_error_set(r->err, NS_ERR_NOMEM, "%s: out of memory", r->f->path);
	switch (r->ch->codec) {
	case CODEC_UNCOMPRESSED:
		if (n != usize) {
			free(buf);
			return fail(r, NS_ERR_INPUT, at, "an uncompressed page whose sizes differ");
		}
		memcpy(buf, in, n);
		break;
	case CODEC_SNAPPY:
		if (ns_pq_snappy(in, n, buf, usize, &bad)) {
			free(buf);
			return fail(r, NS_ERR_INPUT, at + bad, "corrupt snappy data");
		}
		break;
	case CODEC_ZSTD: {
		size_t got = ZSTD_decompress(buf, usize, in, n);
		if (ZSTD_isError(got) || got != usize) {
			free(buf);
			return fail(r, NS_ERR_INPUT, at, "corrupt zstd data (%s)",
				    ZSTD_isError(got) ? ZSTD_getErrorName(got) : "not the page size");
		}
		break;
	}
	default:
		free(buf);
		return fail(r, NS_ERR_UNSUPPORTED, at, "compression codec %s is not supported (only UNCOMPRESSED, SNAPPY and ZSTD)",
			    NAME_OF(codec_names, r->ch->codec));
	}
	*out = buf;
	return 0;
}

/* Levels of one page into out[0..count). v1 pages carry a 4-byte length. */
static int levels(struct reader *r, const unsigned char *p, size_t n, size_t *used, bool prefixed, int max,
		  uint8_t *out, size_t count, uint64_t at)
{
	size_t len = n, bad = 0, off = 0;
	int rc = 0;
	if (prefixed) {
		if (n < 4)
			return fail(r, NS_ERR_INPUT, at, "levels cut");
		len = (size_t)le(p, 4);
		off = 4;
		if (len > n - 4)
			return fail(r, NS_ERR_INPUT, at, "levels longer than the page");
	}
	uint32_t *tmp = malloc((count + 1) * sizeof(*tmp));
	if (!tmp)
		return ns_error_set(r->err, NS_ERR_NOMEM, "%s: out of memory", r->f->path);
	if (ns_pq_rle(p + off, len, bit_width_of(max), tmp, count, &bad)) {
		rc = fail(r, NS_ERR_INPUT, at + off + bad, "corrupt levels");
		goto out;
	}
	for (size_t k = 0; k < count; k++) {
		if (tmp[k] > (uint32_t)max) {
			rc = fail(r, NS_ERR_INPUT, at, "a level above the column's maximum");
			goto out;
		}
		out[k] = (uint8_t)tmp[k];
	}
	*used = off + len;
out:
	free(tmp);
	return rc;
}

static int grow_slots(struct reader *r, size_t more)
{
	struct ns_pq_cells *c = r->out;
	if (more > NS_PQ_MAX_VALUES || c->n_slots + more > NS_PQ_MAX_VALUES)
		return ns_error_set(r->err, NS_ERR_UNSUPPORTED,
				    "%s: column '%s': a row group of more than %u values is not supported", r->f->path,
				    r->col->name, NS_PQ_MAX_VALUES);
	if (c->n_slots + more <= r->cap_slots)
		return 0;
	size_t cap = r->cap_slots ? r->cap_slots : 256;
	while (cap < c->n_slots + more)
		cap *= 2;
	uint8_t *d = realloc(c->def, cap), *p = realloc(r->rep, cap);
	if (d)
		c->def = d;
	if (p)
		r->rep = p;
	uint32_t *v = realloc(c->val, cap * sizeof(*v));
	if (v)
		c->val = v;
	if (!d || !p || !v)
		return ns_error_set(r->err, NS_ERR_NOMEM, "%s: out of memory", r->f->path);
	r->cap_slots = cap;
	return 0;
}

/* DELTA_LENGTH_BYTE_ARRAY (lengths, then the bytes) and DELTA_BYTE_ARRAY
 * (prefix lengths shared with the value before, then the suffixes as
 * DELTA_LENGTH_BYTE_ARRAY): the values are rebuilt in a buffer of their own. */
static int delta_strings(struct reader *r, const unsigned char *p, size_t n, bool prefixed, size_t count, uint64_t at)
{
	struct vals *v = &r->own;
	int64_t *pre = NULL, *len = NULL;
	unsigned char *buf = NULL;
	size_t used = 0, bad = 0, i = 0, total = 0;
	int rc = 0;
	if (!(pre = calloc(count + 1, sizeof(*pre))) || !(len = calloc(count + 1, sizeof(*len)))) {
		rc = ns_error_set(r->err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (prefixed) {
		if (ns_pq_delta(p, n, true, pre, count, &used, &bad)) {
			rc = fail(r, NS_ERR_INPUT, at + bad, "corrupt DELTA_BYTE_ARRAY prefix lengths");
			goto out;
		}
		i = used;
	}
	if (ns_pq_delta(p + i, n - i, true, len, count, &used, &bad)) {
		rc = fail(r, NS_ERR_INPUT, at + i + bad, "corrupt string lengths");
		goto out;
	}
	i += used;
	for (size_t k = 0, end = i; k < count; k++) { /* end: where value k's bytes end in the page */
		int64_t prev = k ? pre[k - 1] + len[k - 1] : 0; /* the length of value k-1 */
		if (len[k] < 0 || pre[k] < 0 || pre[k] > prev || (uint64_t)len[k] > n - end ||
		    (uint64_t)(pre[k] + len[k]) > NS_PQ_MAX_PAGE || total > NS_PQ_MAX_PAGE) {
			rc = fail(r, NS_ERR_INPUT, at + end, "delta-encoded string beyond its page or its predecessor");
			goto out;
		}
		end += (size_t)len[k];
		total += (size_t)(pre[k] + len[k]);
	}
	if (!(buf = malloc(total + 1)) || vals_grow(v, NS_PQ_BYTE_ARRAY, count)) {
		rc = ns_error_set(r->err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (size_t k = 0, o = 0; k < count; k++) {
		unsigned char *dst = buf + o;
		if (pre[k])
			memcpy(dst, v->s[v->n - 1], (size_t)pre[k]);
		memcpy(dst + pre[k], p + i, (size_t)len[k]);
		i += (size_t)len[k];
		v->s[v->n] = dst;
		v->s_len[v->n++] = (uint32_t)(pre[k] + len[k]);
		o += (size_t)(pre[k] + len[k]);
	}
	rc = keep_buf(r, buf) ? ns_error_set(r->err, NS_ERR_NOMEM, "out of memory") : 0;
	buf = NULL;
out:
	free(buf);
	free(pre);
	free(len);
	return rc;
}

/* The values of a data page: count of them, encoded as enc. */
static int page_values(struct reader *r, const unsigned char *p, size_t n, int64_t enc, size_t count, uint64_t at)
{
	struct vals *v = &r->own;
	size_t bad = 0;
	int type = r->col->type;
	size_t width = type == NS_PQ_INT32 || type == NS_PQ_FLOAT || type == NS_PQ_BYTE_ARRAY ? 4 : 8;
	if (count == 0) /* every slot null: no value to decode (and no value array yet) */
		return 0;
	if (enc == ENC_PLAIN && type != NS_PQ_BOOLEAN && count > n / width) /* before allocating for them */
		return fail(r, NS_ERR_INPUT, at, "PLAIN values cut or corrupt");
	int g = vals_grow(v, type, count);
	if (g)
		return g == -2 ? grow_slots(r, NS_PQ_MAX_VALUES + 1) : ns_error_set(r->err, NS_ERR_NOMEM, "out of memory");
	if (enc == ENC_PLAIN) {
		if (plain(p, n, type, count, v, &bad) < 0)
			return fail(r, NS_ERR_INPUT, at + bad, "PLAIN values cut or corrupt");
		return 0;
	}
	if (enc == ENC_RLE && type == NS_PQ_BOOLEAN) {
		uint32_t *tmp;
		size_t len;
		if (n < 4 || (len = (size_t)le(p, 4)) > n - 4)
			return fail(r, NS_ERR_INPUT, at, "RLE booleans cut");
		if (!(tmp = malloc((count + 1) * sizeof(*tmp))))
			return ns_error_set(r->err, NS_ERR_NOMEM, "out of memory");
		int rc = ns_pq_rle(p + 4, len, 1, tmp, count, &bad);
		for (size_t k = 0; rc == 0 && k < count; k++)
			v->i64[v->n++] = tmp[k];
		free(tmp);
		return rc ? fail(r, NS_ERR_INPUT, at + 4 + bad, "corrupt RLE booleans") : 0;
	}
	if (enc == ENC_DELTA_BINARY_PACKED && (type == NS_PQ_INT32 || type == NS_PQ_INT64)) {
		size_t used;
		if (ns_pq_delta(p, n, type == NS_PQ_INT32, v->i64 + v->n, count, &used, &bad))
			return fail(r, NS_ERR_INPUT, at + bad, "corrupt DELTA_BINARY_PACKED values");
		v->n += count;
		return 0;
	}
	if ((enc == ENC_DELTA_LENGTH_BYTE_ARRAY || enc == ENC_DELTA_BYTE_ARRAY) && type == NS_PQ_BYTE_ARRAY)
		return delta_strings(r, p, n, enc == ENC_DELTA_BYTE_ARRAY, count, at);
	if (enc == ENC_PLAIN_DICTIONARY || enc == ENC_RLE_DICTIONARY) {
		uint32_t *idx;
		if (!r->has_dict)
			return fail(r, NS_ERR_INPUT, at, "dictionary-encoded values without a dictionary page");
		if (count && n < 1)
			return fail(r, NS_ERR_INPUT, at, "dictionary indices cut");
		if (!(idx = malloc((count + 1) * sizeof(*idx))))
			return ns_error_set(r->err, NS_ERR_NOMEM, "out of memory");
		int rc = count ? ns_pq_rle(p + 1, n - 1, p[0], idx, count, &bad) : 0;
		for (size_t k = 0; rc == 0 && k < count; k++) {
			if (idx[k] >= r->dict.n) {
				free(idx);
				return fail(r, NS_ERR_INPUT, at, "dictionary index beyond the dictionary");
			}
			if (type == NS_PQ_BYTE_ARRAY) {
				v->s[v->n] = r->dict.s[idx[k]];
				v->s_len[v->n] = r->dict.s_len[idx[k]];
			} else if (type == NS_PQ_FLOAT || type == NS_PQ_DOUBLE) {
				v->f64[v->n] = r->dict.f64[idx[k]];
			} else {
				v->i64[v->n] = r->dict.i64[idx[k]];
			}
			v->n++;
		}
		free(idx);
		return rc ? fail(r, NS_ERR_INPUT, at + 1 + bad, "corrupt dictionary indices") : 0;
	}
	return fail(r, NS_ERR_UNSUPPORTED, at, "value encoding %s is not supported (only PLAIN, dictionary, RLE booleans and the DELTA encodings of integers and strings)",
		    NAME_OF(encoding_names, enc));
}

/* A dictionary page: its values become r->dict. */
static int read_dict_page(struct reader *r, const struct page_hdr *h, const unsigned char *body, size_t csize,
			  uint64_t at)
{
	unsigned char *page = NULL;
	size_t bad = 0;
	int rc;
	if (r->has_dict)
		return fail(r, NS_ERR_INPUT, at, "a second dictionary page");
	if (h->encoding != ENC_PLAIN && h->encoding != ENC_PLAIN_DICTIONARY)
		return fail(r, NS_ERR_UNSUPPORTED, at, "dictionary encoding %s is not supported",
			    NAME_OF(encoding_names, h->encoding));
	if (h->n_values < 0 || (uint64_t)h->n_values > (uint64_t)h->usize * 8 + 8)
		return fail(r, NS_ERR_INPUT, at, "dictionary size beyond its page");
	if ((rc = inflate_page(r, body, csize, (size_t)h->usize, at, &page)))
		return rc;
	int g = vals_grow(&r->dict, r->col->type, (size_t)h->n_values);
	if (g) {
		free(page);
		return g == -2 ? grow_slots(r, NS_PQ_MAX_VALUES + 1) : ns_error_set(r->err, NS_ERR_NOMEM, "out of memory");
	}
	if (plain(page, (size_t)h->usize, r->col->type, (size_t)h->n_values, &r->dict, &bad) < 0) {
		free(page);
		return fail(r, NS_ERR_INPUT, at + bad, "dictionary values cut or corrupt");
	}
	r->has_dict = true;
	return keep_buf(r, page) ? ns_error_set(r->err, NS_ERR_NOMEM, "out of memory") : 0;
}

/* A data page's repetition and definition levels, into the slots from
 * base, and where its values start (*vp, *vn bytes). *page is set to the
 * inflated page when there is one (the caller frees it, also on error). */
static int data_page_levels(struct reader *r, const struct page_hdr *h, const unsigned char *body, size_t csize,
			    uint64_t at, size_t base, size_t count, unsigned char **page, const unsigned char **vp,
			    size_t *vn)
{
	size_t used = 0;
	int rc;
	if (h->type == PAGE_DATA) {
		/* v1: the levels are inside the compressed page, before the values */
		if ((r->col->max_rep && h->rep_enc != ENC_RLE) || (r->col->max_def && h->def_enc != ENC_RLE))
			return fail(r, NS_ERR_UNSUPPORTED, at, "level encoding %s is not supported (only RLE)",
				    NAME_OF(encoding_names, r->col->max_rep && h->rep_enc != ENC_RLE ? h->rep_enc : h->def_enc));
		if ((rc = inflate_page(r, body, csize, (size_t)h->usize, at, page)))
			return rc;
		*vp = *page;
		*vn = (size_t)h->usize;
		if (r->col->max_rep) {
			if ((rc = levels(r, *vp, *vn, &used, true, r->col->max_rep, r->rep + base, count, at)))
				return rc;
			*vp += used;
			*vn -= used;
		}
		if (r->col->max_def) {
			if ((rc = levels(r, *vp, *vn, &used, true, r->col->max_def, r->out->def + base, count, at)))
				return rc;
			*vp += used;
			*vn -= used;
		}
		return 0;
	}
	/* v2: the levels are uncompressed, before the (maybe compressed) values */
	if (h->rep_len < 0 || h->def_len < 0 || (uint64_t)h->rep_len + (uint64_t)h->def_len > csize ||
	    (uint64_t)h->rep_len + (uint64_t)h->def_len > (uint64_t)h->usize)
		return fail(r, NS_ERR_INPUT, at, "level lengths beyond the page");
	size_t lv = (size_t)(h->rep_len + h->def_len);
	if (r->col->max_rep &&
	    (rc = levels(r, body, (size_t)h->rep_len, &used, false, r->col->max_rep, r->rep + base, count, at)))
		return rc;
	if (r->col->max_def && (rc = levels(r, body + h->rep_len, (size_t)h->def_len, &used, false, r->col->max_def,
					    r->out->def + base, count, at + (uint64_t)h->rep_len)))
		return rc;
	if (h->compressed) {
		if ((rc = inflate_page(r, body + lv, csize - lv, (size_t)h->usize - lv, at + lv, page)))
			return rc;
		*vp = *page;
	} else {
		if (csize != (size_t)h->usize)
			return fail(r, NS_ERR_INPUT, at, "an uncompressed page whose sizes differ");
		*vp = body + lv;
	}
	*vn = (size_t)h->usize - lv;
	return 0;
}

static int read_page(struct reader *r, const unsigned char *chunk, size_t len, size_t *pos)
{
	struct page_hdr h = { -1, -1, -1, -1, -1, ENC_RLE, ENC_RLE, 0, 0, true };
	uint64_t at = r->ch->start + *pos;
	struct tr t = { chunk + *pos, len - *pos, 0, at, 0, NULL, 0, false };
	unsigned char *page = NULL;
	int rc = 0;
	if (tr_struct(&t, page_field, &h))
		return ns_error_set(r->err, NS_ERR_INPUT, "%s: byte %llu: column '%s': corrupt page header: %s", r->f->path,
				    (unsigned long long)t.at, r->col->name, t.what);
	*pos += t.i;
	at += t.i;
	if (h.type < 0 || h.usize < 0 || h.csize < 0 || (uint64_t)h.csize > len - *pos)
		return fail(r, NS_ERR_INPUT, at, "page header without its type or sizes, or a page beyond its column chunk");
	const unsigned char *body = chunk + *pos;
	size_t csize = (size_t)h.csize;
	*pos += csize;
	if (h.type == PAGE_INDEX)
		return 0;
	if (h.type == PAGE_DICTIONARY)
		return read_dict_page(r, &h, body, csize, at);
	if (h.type != PAGE_DATA && h.type != PAGE_DATA_V2)
		return fail(r, NS_ERR_UNSUPPORTED, at, "page type %s is not supported", h.type == 1 ? "INDEX" : "unknown");
	if (h.n_values < 0)
		return fail(r, NS_ERR_INPUT, at, "data page without num_values");
	size_t count = (size_t)h.n_values, base = r->out->n_slots;
	if ((rc = grow_slots(r, count)))
		return rc;
	if (count == 0) /* nothing to read (and the level arrays may not exist yet) */
		return 0;
	const unsigned char *vp = NULL;
	size_t vn = 0;
	if ((rc = data_page_levels(r, &h, body, csize, at, base, count, &page, &vp, &vn)))
		goto out;
	if (!r->col->max_rep)
		memset(r->rep + base, 0, count);
	if (!r->col->max_def)
		memset(r->out->def + base, 0, count);
	size_t present = 0;
	for (size_t k = 0; k < count; k++)
		if (r->out->def[base + k] == r->col->max_def)
			r->out->val[base + k] = (uint32_t)(r->own.n + present++);
	r->out->n_slots += count;
	if ((rc = page_values(r, vp, vn, h.encoding, present, at)))
		goto out;
	if (page && r->col->type == NS_PQ_BYTE_ARRAY) {
		rc = keep_buf(r, page) ? ns_error_set(r->err, NS_ERR_NOMEM, "out of memory") : 0;
		page = NULL;
	}
out:
	free(page);
	return rc;
}

int ns_pq_read(struct ns_pq_file *f, size_t g, size_t col, struct ns_pq_cells *out, struct ns_error *err)
{
	struct reader r = { .f = f, .err = err, .out = out };
	unsigned char *chunk = NULL;
	size_t pos = 0;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	if (g >= f->n_groups || col >= f->n_cols)
		return ns_error_set(err, NS_ERR_INPUT, "%s: no row group %zu / column %zu", f->path, g, col);
	r.col = &f->cols[col];
	r.ch = &f->groups[g].chunks[r.col->leaf];
	if (r.col->unsupported)
		return ns_error_set(err, NS_ERR_UNSUPPORTED, "%s: column '%s' holds %s; not supported (docs/neuron.md \"Parquet\")", f->path, r.col->name,
				    r.col->unsupported);
	if (r.ch->codec != CODEC_UNCOMPRESSED && r.ch->codec != CODEC_SNAPPY && r.ch->codec != CODEC_ZSTD)
		return fail(&r, NS_ERR_UNSUPPORTED, r.ch->start,
			    "compression codec %s is not supported (only UNCOMPRESSED, SNAPPY and ZSTD)",
			    NAME_OF(codec_names, r.ch->codec));
	if (f->groups[g].n_rows > (int64_t)NS_PQ_MAX_VALUES)
		return grow_slots(&r, NS_PQ_MAX_VALUES + 1);
	if (!(chunk = malloc(r.ch->len + 1))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", f->path);
		goto out;
	}
	if ((rc = read_at(f, r.ch->start, chunk, (size_t)r.ch->len, err)))
		goto out;
	while (pos < r.ch->len && (int64_t)out->n_slots < r.ch->n_values && !rc)
		rc = read_page(&r, chunk, (size_t)r.ch->len, &pos);
	if (rc)
		goto out;
	if ((int64_t)out->n_slots != r.ch->n_values) {
		rc = fail(&r, NS_ERR_INPUT, r.ch->start, "the pages hold fewer values than the column chunk says");
		goto out;
	}
	/* rows: a repetition level of 0 starts one */
	size_t rows = 0;
	for (size_t k = 0; k < out->n_slots; k++)
		rows += r.rep[k] == 0;
	if ((int64_t)rows != f->groups[g].n_rows || (out->n_slots && r.rep[0] != 0)) {
		rc = fail(&r, NS_ERR_INPUT, r.ch->start, "its rows do not match the row group's num_rows");
		goto out;
	}
	if (!(out->row_first = malloc((rows + 1) * sizeof(*out->row_first)))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", f->path);
		goto out;
	}
	out->n_rows = 0;
	for (size_t k = 0; k < out->n_slots; k++)
		if (r.rep[k] == 0)
			out->row_first[out->n_rows++] = k;
	out->row_first[rows] = out->n_slots;
	out->i64 = r.own.i64;
	out->f64 = r.own.f64;
	out->s = r.own.s;
	out->s_len = r.own.s_len;
	out->n_vals = r.own.n;
	memset(&r.own, 0, sizeof(r.own));
	if (r.col->type == NS_PQ_BYTE_ARRAY) { /* values may point into the chunk (uncompressed v2 pages) */
		if (keep_buf(&r, chunk))
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		chunk = NULL;
	}
out:
	free(chunk);
	free(r.rep);
	vals_release(&r.dict);
	vals_release(&r.own);
	if (rc)
		ns_pq_cells_release(out);
	return rc;
}

void ns_pq_cells_release(struct ns_pq_cells *c)
{
	free(c->row_first);
	free(c->def);
	free(c->val);
	free(c->i64);
	free(c->f64);
	free(c->s);
	free(c->s_len);
	for (size_t b = 0; b < c->n_bufs; b++)
		free(c->bufs[b]);
	free(c->bufs);
	memset(c, 0, sizeof(*c));
}

/* ---- JSON text of a cell ---- */

int ns_pq_text_add(struct ns_pq_text *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
	return 0;
}

void ns_pq_text_release(struct ns_pq_text *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

int ns_pq_text_string(struct ns_pq_text *b, const unsigned char *s, size_t len)
{
	char esc[8];
	size_t from = 0;
	if (ns_pq_text_add(b, "\"", 1))
		return -1;
	for (size_t k = 0; k < len; k++) {
		unsigned char ch = s[k];
		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		int n = snprintf(esc, sizeof(esc), ch == '"' ? "\\\"" : ch == '\\' ? "\\\\" : "\\u%04x", ch);
		if (ns_pq_text_add(b, (const char *)s + from, k - from) || ns_pq_text_add(b, esc, (size_t)n))
			return -1;
		from = k + 1;
	}
	return ns_pq_text_add(b, (const char *)s + from, len - from) || ns_pq_text_add(b, "\"", 1) ? -1 : 0;
}

static int add_value(const struct ns_pq_column *col, const struct ns_pq_cells *c, uint32_t v, struct ns_pq_text *b)
{
	char num[40];
	int n;
	switch (col->type) {
	case NS_PQ_BOOLEAN: return c->i64[v] ? ns_pq_text_add(b, "true", 4) : ns_pq_text_add(b, "false", 5);
	case NS_PQ_INT32:
	case NS_PQ_INT64:
		n = snprintf(num, sizeof(num), "%lld", (long long)c->i64[v]);
		return ns_pq_text_add(b, num, (size_t)n);
	case NS_PQ_FLOAT:
	case NS_PQ_DOUBLE: {
		double d = c->f64[v];
		if (!isfinite(d))
			return ns_pq_text_add(b, "null", 4);
		for (int prec = 15; prec <= 17; prec++) { /* the shortest text that reads back the same */
			n = snprintf(num, sizeof(num), "%.*g", prec, d);
			if (strtod(num, NULL) == d)
				break;
		}
		return ns_pq_text_add(b, num, (size_t)n);
	}
	default: return ns_pq_text_string(b, c->s[v], c->s_len[v]);
	}
}

bool ns_pq_cell_null(const struct ns_pq_file *f, size_t col, const struct ns_pq_cells *c, size_t r)
{
	const struct ns_pq_column *cl = &f->cols[col];
	uint8_t def = c->def[c->row_first[r]];
	return cl->is_list ? def < cl->list_def : def < cl->max_def;
}

int ns_pq_cell_json(const struct ns_pq_file *f, size_t col, const struct ns_pq_cells *c, size_t r,
		    struct ns_pq_text *b)
{
	const struct ns_pq_column *cl = &f->cols[col];
	size_t first = c->row_first[r], end = c->row_first[r + 1];
	if (!cl->is_list)
		return c->def[first] == cl->max_def ? add_value(cl, c, c->val[first], b) : ns_pq_text_add(b, "null", 4);
	if (c->def[first] < cl->list_def)
		return ns_pq_text_add(b, "null", 4);
	if (ns_pq_text_add(b, "[", 1))
		return -1;
	if (c->def[first] > cl->list_def) /* else: an empty list */
		for (size_t k = first; k < end; k++) {
			if ((k > first && ns_pq_text_add(b, ",", 1)) ||
			    (c->def[k] == cl->max_def ? add_value(cl, c, c->val[k], b) : ns_pq_text_add(b, "null", 4)))
				return -1;
		}
	return ns_pq_text_add(b, "]", 1);
}
