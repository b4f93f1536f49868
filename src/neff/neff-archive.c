/* NEFF payload: a gzip'd (or raw) tar, read as a stream. Only *.json members
 * are kept in memory (they are small and the rest of the reader needs
 * them); every other member is listed with its size and offset and skipped,
 * so memory use does not grow with the model's weights. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/vec.h"
#include "neff/neff-format.h"
#include "neff/neff-internal.h"

#define INPUT_CHUNK (64u << 10)

/* The tar byte stream, inflated on demand from the payload. */
struct payload {
	struct neff_source *src;
	const char *path;
	bool gzip;
	uint64_t start;        /* file offset of the payload */
	uint64_t size;         /* data_size */
	uint64_t consumed;     /* payload bytes taken from src */
	uint64_t produced;     /* tar bytes handed out */
	uint64_t produced_cap; /* most tar bytes we agree to produce */
	z_stream zs;
	bool zs_live, stream_end;
	uint8_t *in;           /* INPUT_CHUNK bytes of compressed input */
	uint8_t *scratch;      /* INPUT_CHUNK bytes for skipped content */
};

/* File offset of the next compressed byte zlib has not consumed. */
static uint64_t gzip_file_offset(const struct payload *p)
{
	return p->start + p->consumed - p->zs.avail_in;
}

static int inflate_into(struct payload *p, uint8_t *buf, size_t want, size_t *ret_got,
			struct ns_error *err)
{
	p->zs.next_out = buf;
	p->zs.avail_out = (uInt)want;
	while (p->zs.avail_out > 0 && !p->stream_end) {
		if (p->zs.avail_in == 0) {
			uint64_t left = p->size - p->consumed;
			if (left == 0)
				return ns_error_set(err, NS_ERR_INPUT,
						    "%s: byte %llu: truncated gzip payload: data_size "
						    "ends before the end of the gzip stream",
						    p->path, (unsigned long long)(p->start + p->size));
			size_t n = left < INPUT_CHUNK ? (size_t)left : INPUT_CHUNK;
			int rc = neff_source_read(p->src, p->in, n, err);
			if (rc)
				return rc;
			p->consumed += n;
			p->zs.next_in = p->in;
			p->zs.avail_in = (uInt)n;
		}
		int zrc = inflate(&p->zs, Z_NO_FLUSH);
		if (zrc == Z_STREAM_END)
			p->stream_end = true;
		else if (zrc == Z_MEM_ERROR)
			return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory in zlib", p->path);
		else if (zrc != Z_OK)
			return ns_error_set(err, NS_ERR_INPUT, "%s: byte %llu: corrupt gzip payload: %s",
					    p->path, (unsigned long long)gzip_file_offset(p),
					    p->zs.msg ? p->zs.msg : "inflate failed");
	}
	*ret_got = want - p->zs.avail_out;
	return NS_OK;
}

/* Reads up to want (<= INPUT_CHUNK) tar bytes; fewer only where the tar
 * stream ends. */
static int payload_read(struct payload *p, uint8_t *buf, size_t want, size_t *ret_got,
			struct ns_error *err)
{
	size_t got = 0;
	int rc = NS_OK;

	if (p->gzip) {
		rc = inflate_into(p, buf, want, &got, err);
	} else {
		uint64_t left = p->size - p->consumed;
		got = want < left ? want : (size_t)left;
		rc = neff_source_read(p->src, buf, got, err);
		p->consumed += got;
	}
	if (rc)
		return rc;
	p->produced += got;
	if (p->produced > p->produced_cap)
		return ns_error_set(err, NS_ERR_NOMEM,
				    "%s: gzip payload inflates to more than %llu bytes "
				    "(limit: %u x data_size, at most %llu)",
				    p->path, (unsigned long long)p->produced_cap, NEFF_MAX_INFLATE_RATIO,
				    (unsigned long long)NEFF_MAX_TAR_BYTES);
	*ret_got = got;
	return NS_OK;
}

/* Reads n tar bytes into buf (or discards them when buf is NULL); *ret_got
 * < n means the tar stream ended first. */
static int payload_take(struct payload *p, uint8_t *buf, uint64_t n, uint64_t *ret_got,
			struct ns_error *err)
{
	uint64_t total = 0;
	while (total < n) {
		uint64_t left = n - total;
		size_t want = left < INPUT_CHUNK ? (size_t)left : INPUT_CHUNK;
		size_t got = 0;
		int rc = payload_read(p, buf ? buf + total : p->scratch, want, &got, err);
		if (rc)
			return rc;
		total += got;
		if (got < want)
			break;
	}
	*ret_got = total;
	return NS_OK;
}

/* Inflates up to the gzip trailer, which checks the CRC and length. */
static int inflate_to_end(struct payload *p, struct ns_error *err)
{
	uint64_t got;
	while (!p->stream_end) {
		int rc = payload_take(p, NULL, INPUT_CHUNK, &got, err);
		if (rc)
			return rc;
	}
	return NS_OK;
}

/* After the tar: finish the gzip stream, then look at the padding up to
 * data_size, which is zeros in real files. */
static int payload_finish(struct payload *p, struct ns_neff *neff, struct ns_error *err)
{
	int rc;

	if (p->gzip) {
		rc = inflate_to_end(p, err);
		if (rc)
			return rc;
		neff->compressed_size = gzip_file_offset(p) - p->start;
	} else {
		neff->compressed_size = p->produced;
	}
	neff->tar_size = p->produced;
	neff->padding_size = p->size - neff->compressed_size;

	bool nonzero = false;
	for (uInt i = 0; p->gzip && i < p->zs.avail_in; i++)
		nonzero |= p->zs.next_in[i] != 0;
	while (p->consumed < p->size) {
		uint64_t left = p->size - p->consumed;
		size_t n = left < INPUT_CHUNK ? (size_t)left : INPUT_CHUNK;
		rc = neff_source_read(p->src, p->in, n, err);
		if (rc)
			return rc;
		p->consumed += n;
		for (size_t i = 0; i < n; i++)
			nonzero |= p->in[i] != 0;
	}
	if (nonzero && neff_note(neff, "the %llu bytes after the %s (byte %llu) are not all zero; "
				 "ignored", (unsigned long long)neff->padding_size,
				 p->gzip ? "gzip stream" : "tar archive",
				 (unsigned long long)(p->start + neff->compressed_size)))
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", p->path);
	return NS_OK;
}

static bool is_zero_block(const uint8_t *block)
{
	for (unsigned i = 0; i < TAR_BLOCK; i++)
		if (block[i])
			return false;
	return true;
}

/* A tar number: octal digits (leading spaces, ending at NUL or space) or
 * GNU base-256 (high bit of the first byte set). */
static bool parse_tar_number(const uint8_t *field, size_t len, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i = 0;

	if (field[0] & 0x80) {
		if (field[0] != 0x80)
			return false; /* negative, or more than 64 bits */
		for (i = 1; i < len; i++) {
			if (v >> 55)
				return false;
			v = v << 8 | field[i];
		}
		*ret = v;
		return true;
	}
	while (i < len && field[i] == ' ')
		i++;
	size_t first_digit = i;
	for (; i < len && field[i] >= '0' && field[i] <= '7'; i++) {
		if (v >> 60)
			return false;
		v = v << 3 | (uint64_t)(field[i] - '0');
	}
	if (i == first_digit)
		return false;
	for (; i < len; i++)
		if (field[i] != ' ' && field[i] != '\0')
			return false;
	*ret = v;
	return true;
}

static bool checksum_ok(const uint8_t *block)
{
	uint64_t stored;
	if (!parse_tar_number(block + TAR_OFF_CHKSUM, TAR_LEN_CHKSUM, &stored))
		return false;
	/* The checksum field counts as eight spaces; old tars summed signed chars. */
	long unsigned_sum = 0, signed_sum = 0;
	for (unsigned i = 0; i < TAR_BLOCK; i++) {
		bool in_field = i >= TAR_OFF_CHKSUM && i < TAR_OFF_CHKSUM + TAR_LEN_CHKSUM;
		uint8_t c = in_field ? ' ' : block[i];
		unsigned_sum += c;
		signed_sum += (signed char)c;
	}
	return (long)stored == unsigned_sum || (long)stored == signed_sum;
}

/* Walk state: where we are and what a pax / GNU header said about the next member. */
struct tar_walk {
	struct payload *p;
	struct ns_neff *neff;
	size_t members_cap;
	uint64_t json_bytes;   /* kept *.json bytes so far */
	char *next_name;       /* GNU 'L' or pax "path" for the next member */
	uint64_t next_size;    /* pax "size" for the next member */
	bool has_next_size;
};

/* Reads a member's content (size bytes at tar offset data_pos) into a new
 * NUL-terminated buffer, or skips it when ret_data is NULL. */
static int take_content(struct tar_walk *w, const char *name, uint64_t hdr_pos, uint64_t size,
			char **ret_data, struct ns_error *err)
{
	struct payload *p = w->p;
	char *data = NULL;
	uint64_t got;
	int rc;

	/* Checked before allocating: a raw tar cannot hold more than data_size,
	 * a gzip'd one may not inflate past produced_cap. */
	if (size > p->produced_cap - p->produced) {
		if (!p->gzip)
			return ns_error_set(err, NS_ERR_INPUT,
					    "%s: tar byte %llu: member '%s' declares %llu bytes, but "
					    "the archive ends at tar byte %llu",
					    p->path, (unsigned long long)hdr_pos, name,
					    (unsigned long long)size,
					    (unsigned long long)p->produced_cap);
		return ns_error_set(err, NS_ERR_INPUT,
				    "%s: tar byte %llu: member '%s' declares %llu bytes, more than the "
				    "payload may inflate to (%llu: %u x data_size, at most %llu)",
				    p->path, (unsigned long long)hdr_pos, name, (unsigned long long)size,
				    (unsigned long long)p->produced_cap, NEFF_MAX_INFLATE_RATIO,
				    (unsigned long long)NEFF_MAX_TAR_BYTES);
	}
	if (ret_data) {
		data = malloc((size_t)size + 1);
		if (!data)
			return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", p->path);
	}
	rc = payload_take(p, (uint8_t *)data, size, &got, err);
	if (rc)
		goto out;
	if (got < size) {
		rc = ns_error_set(err, NS_ERR_INPUT,
				  "%s: tar byte %llu: member '%s' declares %llu bytes, but the archive "
				  "ends at tar byte %llu",
				  p->path, (unsigned long long)hdr_pos, name, (unsigned long long)size,
				  (unsigned long long)p->produced);
		goto out;
	}
	/* Content is padded to whole blocks; an archive cut inside the padding
	 * is caught by the next header read. */
	uint64_t pad = (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK;
	rc = payload_take(p, NULL, pad, &got, err);
	if (rc)
		goto out;
	if (data) {
		data[size] = '\0';
		*ret_data = data;
		data = NULL;
	}
out:
	free(data);
	return rc;
}

/* pax extended header: records "<len> <key>=<value>\n"; only path and size
 * matter here. */
static int parse_pax(struct tar_walk *w, const char *rec, size_t len, uint64_t hdr_pos,
		     struct ns_error *err)
{
	const char *path = w->p->path;
	size_t pos = 0;

	while (pos < len) {
		size_t rec_len = 0, i = pos;
		while (i < len && rec[i] >= '0' && rec[i] <= '9' && rec_len < len)
			rec_len = rec_len * 10 + (size_t)(rec[i++] - '0');
		const char *eq = i < len && rec[i] == ' ' ? memchr(rec + i, '=', len - i) : NULL;
		if (rec_len == 0 || rec_len > len - pos || !eq || eq >= rec + pos + rec_len ||
		    rec[pos + rec_len - 1] != '\n')
			return ns_error_set(err, NS_ERR_INPUT,
					    "%s: tar byte %llu: malformed pax header record at offset %zu",
					    path, (unsigned long long)hdr_pos, pos);
		const char *key = rec + i + 1, *value = eq + 1;
		size_t key_len = (size_t)(eq - key);
		size_t value_len = (size_t)(rec + pos + rec_len - 1 - value);

		if (key_len == 4 && memcmp(key, "path", 4) == 0) {
			if (value_len == 0 || value_len > NEFF_MAX_NAME ||
			    memchr(value, '\0', value_len))
				return ns_error_set(err, NS_ERR_INPUT,
						    "%s: tar byte %llu: bad pax path (%zu bytes)", path,
						    (unsigned long long)hdr_pos, value_len);
			free(w->next_name);
			w->next_name = strndup(value, value_len);
			if (!w->next_name)
				return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
		} else if (key_len == 4 && memcmp(key, "size", 4) == 0) {
			uint64_t v = 0;
			size_t k = 0;
			for (; k < value_len && value[k] >= '0' && value[k] <= '9' && v < UINT64_MAX / 10;
			     k++)
				v = v * 10 + (uint64_t)(value[k] - '0');
			if (k == 0 || k != value_len)
				return ns_error_set(err, NS_ERR_INPUT,
						    "%s: tar byte %llu: bad pax size '%.*s'", path,
						    (unsigned long long)hdr_pos, (int)value_len, value);
			w->next_size = v;
			w->has_next_size = true;
		}
		pos += rec_len;
	}
	return NS_OK;
}

/* The member name from the header block: prefix "/" name (ustar), with a
 * leading "./" removed. */
static char *header_name(const uint8_t *block)
{
	char buf[TAR_LEN_PREFIX + 1 + TAR_LEN_NAME + 1];
	size_t name_len = strnlen((const char *)block + TAR_OFF_NAME, TAR_LEN_NAME);
	size_t prefix_len = 0;

	/* POSIX "ustar\0" only: old GNU headers ("ustar  ") keep other fields there. */
	if (memcmp(block + TAR_OFF_MAGIC, "ustar", 6) == 0)
		prefix_len = strnlen((const char *)block + TAR_OFF_PREFIX, TAR_LEN_PREFIX);
	size_t n = 0;
	if (prefix_len) {
		memcpy(buf, block + TAR_OFF_PREFIX, prefix_len);
		buf[prefix_len] = '/';
		n = prefix_len + 1;
	}
	memcpy(buf + n, block + TAR_OFF_NAME, name_len);
	buf[n + name_len] = '\0';
	return strdup(buf);
}

static bool is_json_name(const char *name)
{
	size_t len = strlen(name);
	return len >= 5 && strcmp(name + len - 5, ".json") == 0;
}

/* Adds the member `name` (owned from here on: freed on failure). */
static int add_member(struct tar_walk *w, char *name, uint64_t hdr_pos, uint64_t size,
		      struct ns_error *err)
{
	struct ns_neff *neff = w->neff;
	const char *path = w->p->path;
	int rc;

	if (neff->member_count == NEFF_MAX_MEMBERS) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: tar byte %llu: more than %u members (limit)", path,
				  (unsigned long long)hdr_pos, NEFF_MAX_MEMBERS);
		goto fail;
	}
	if (NS_GROW_MIN(neff->members, w->members_cap, neff->member_count + 1, 64) < 0) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
		goto fail;
	}
	struct ns_neff_member *m = &neff->members[neff->member_count++];
	*m = (struct ns_neff_member){ .name = name, .offset = hdr_pos + TAR_BLOCK, .size = size };

	bool keep = is_json_name(name) && size <= NEFF_MAX_JSON_MEMBER &&
		    size <= NEFF_MAX_JSON_TOTAL - w->json_bytes;
	if (keep)
		w->json_bytes += size;
	return take_content(w, name, hdr_pos, size, keep ? &m->data : NULL, err);
fail:
	free(name); /* (not a member: nothing else frees it) */
	return rc;
}

/* One header block at tar offset hdr_pos and what follows it. Sets *ret_end
 * at the end-of-archive block. */
static int walk_entry(struct tar_walk *w, const uint8_t *block, uint64_t hdr_pos, bool *ret_end,
		      struct ns_error *err)
{
	const char *path = w->p->path;
	char *name = NULL;
	char *content = NULL;
	uint64_t size;
	int rc = NS_OK;

	if (is_zero_block(block)) {
		*ret_end = true;
		return NS_OK;
	}
	if (!checksum_ok(block))
		return ns_error_set(err, NS_ERR_INPUT, "%s: tar byte %llu: bad tar header checksum",
				    path, (unsigned long long)hdr_pos);
	if (!parse_tar_number(block + TAR_OFF_SIZE, TAR_LEN_SIZE, &size))
		return ns_error_set(err, NS_ERR_INPUT, "%s: tar byte %llu: bad size field in tar header",
				    path, (unsigned long long)hdr_pos);

	char type = (char)block[TAR_OFF_TYPEFLAG];
	if (type == 'L' || type == 'x') {
		/* Header for the next entry: keep its content (bounded) and parse it. */
		uint64_t limit = type == 'L' ? NEFF_MAX_NAME : NEFF_MAX_PAX_HEADER;
		if (size > limit)
			return ns_error_set(err, NS_ERR_NOMEM,
					    "%s: tar byte %llu: %s header of %llu bytes (limit %llu)",
					    path, (unsigned long long)hdr_pos,
					    type == 'L' ? "GNU long-name" : "pax", (unsigned long long)size,
					    (unsigned long long)limit);
		rc = take_content(w, type == 'L' ? "././@LongLink" : "pax header", hdr_pos, size,
				  &content, err);
		if (rc)
			goto out;
		if (type == 'L') {
			free(w->next_name);
			w->next_name = strdup(content);
			if (!w->next_name)
				rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
		} else {
			rc = parse_pax(w, content, (size_t)size, hdr_pos, err);
		}
		goto out;
	}

	if (w->next_name) {
		name = w->next_name;
		w->next_name = NULL;
	} else if (!(name = header_name(block))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
		goto out;
	}
	if (w->has_next_size)
		size = w->next_size;
	w->has_next_size = false;
	size_t name_len = strlen(name);
	if (name_len >= 2 && name[0] == '.' && name[1] == '/') {
		memmove(name, name + 2, name_len - 1);
		name_len -= 2;
	}

	bool regular = type == '0' || type == '\0' || type == '7';
	bool directory = type == '5' || (regular && name_len > 0 && name[name_len - 1] == '/');
	if (regular && !directory && name_len > 0) {
		rc = add_member(w, name, hdr_pos, size, err);
		name = NULL; /* owned by the member list now */
		goto out;
	}
	/* Directories, global pax headers ('g'), links and the rest: skip. */
	if (!directory && type != 'g' &&
	    neff_note(w->neff, "tar entry '%s' of type '%c' at tar byte %llu skipped", name,
		      type >= ' ' && type <= '~' ? type : '?', (unsigned long long)hdr_pos)) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
		goto out;
	}
	rc = take_content(w, name, hdr_pos, size, NULL, err);
out:
	free(name);
	free(content);
	return rc;
}

static int walk_tar(struct payload *p, struct ns_neff *neff, struct ns_error *err)
{
	struct tar_walk w = { .p = p, .neff = neff };
	uint8_t block[TAR_BLOCK];
	bool end = false;
	int rc = NS_OK;

	while (!end) {
		uint64_t hdr_pos = p->produced, got;
		rc = payload_take(p, block, TAR_BLOCK, &got, err);
		if (rc)
			goto out;
		if (got == 0) {
			if (neff->member_count > 0 &&
			    neff_note(neff, "the tar archive has no end-of-archive block")) {
				rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", p->path);
				goto out;
			}
			break;
		}
		if (got < TAR_BLOCK) {
			rc = ns_error_set(err, NS_ERR_INPUT,
					  "%s: tar byte %llu: the archive ends inside a tar header "
					  "(%llu of 512 bytes)",
					  p->path, (unsigned long long)hdr_pos, (unsigned long long)got);
			goto out;
		}
		rc = walk_entry(&w, block, hdr_pos, &end, err);
		if (rc)
			goto out;
	}
	if (neff->member_count == 0)
		rc = ns_error_set(err, NS_ERR_INPUT, "%s: byte %llu: the tar archive has no members",
				  p->path, (unsigned long long)p->start);
out:
	free(w.next_name);
	return rc;
}

int neff_read_archive(struct neff_source *src, struct ns_neff *neff, struct ns_error *err)
{
	const struct ns_neff_header *h = &neff->header;
	struct payload p = {
		.src = src,
		.path = neff->path,
		.start = src->pos,
		.size = h->data_size,
	};
	uint8_t sniff[TAR_OFF_MAGIC + 5] = { 0 };
	int rc;

	/* Sniff the encoding instead of trusting pkg_version (sources disagree on pkg 1). */
	size_t sniff_len = h->data_size < sizeof(sniff) ? (size_t)h->data_size : sizeof(sniff);
	rc = neff_source_read(src, sniff, sniff_len, err);
	if (rc)
		return rc;
	src->pos = p.start;
	if (src->file && fseeko(src->file, (off_t)p.start, SEEK_SET) != 0)
		return ns_error_set(err, NS_ERR_IO, "%s: cannot seek to byte %llu", p.path,
				    (unsigned long long)p.start);
	if (sniff[0] == 0x1f && sniff[1] == 0x8b) {
		p.gzip = true;
		neff->payload = NS_NEFF_PAYLOAD_GZIP_TAR;
		uint64_t ratio_cap = h->data_size * NEFF_MAX_INFLATE_RATIO;
		p.produced_cap = ratio_cap < NEFF_MAX_TAR_BYTES ? ratio_cap : NEFF_MAX_TAR_BYTES;
	} else if (memcmp(sniff + TAR_OFF_MAGIC, "ustar", 5) == 0) {
		neff->payload = NS_NEFF_PAYLOAD_TAR;
		p.produced_cap = h->data_size;
	} else {
		return ns_error_set(err, NS_ERR_INPUT,
				    "%s: byte %llu: payload is neither gzip (1f 8b) nor a tar archive "
				    "('ustar' at byte %llu)",
				    p.path, (unsigned long long)p.start,
				    (unsigned long long)(p.start + TAR_OFF_MAGIC));
	}

	p.in = malloc(INPUT_CHUNK);
	p.scratch = malloc(INPUT_CHUNK);
	if (!p.in || !p.scratch) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", p.path);
		goto out;
	}
	if (p.gzip) {
		if (inflateInit2(&p.zs, 16 + MAX_WBITS) != Z_OK) { /* 16: gzip wrapper only */
			rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory (starting zlib)", p.path);
			goto out;
		}
		p.zs_live = true;
	}
	rc = walk_tar(&p, neff, err);
	if (rc == NS_ERR_INPUT && p.gzip) {
		/* A damaged deflate stream often still decodes, to garbage that
		 * the tar walk trips over; a failing gzip CRC is the real cause. */
		struct ns_error gzip_err = { 0 };
		if (inflate_to_end(&p, &gzip_err) == NS_ERR_INPUT && err)
			*err = gzip_err;
	}
	if (rc)
		goto out;
	rc = payload_finish(&p, neff, err);
out:
	if (p.zs_live)
		inflateEnd(&p.zs);
	free(p.in);
	free(p.scratch);
	return rc;
}
