#include "ingest/source.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#define IN_CHUNK (1u << 20)

struct ns_source {
	const char *path;
	FILE *file;
	uint64_t size, consumed, produced;
	uint64_t max_out;
	uint32_t max_ratio;
	enum ns_compression comp;
	bool in_eof, stream_end;
	bool truncated; /* the compressed stream ended early: reported as a short file */
	size_t zstd_pending; /* non-zero while a zstd frame is incomplete */
	unsigned char *in;
	size_t in_len, in_pos;
	z_stream z;
	ZSTD_DStream *zd;
};

static int fill_input(struct ns_source *s, struct ns_error *err)
{
	if (s->in_pos < s->in_len || s->in_eof)
		return 0;
	size_t got = fread(s->in, 1, IN_CHUNK, s->file);
	if (got < IN_CHUNK) {
		if (ferror(s->file))
			return ns_error_set(err, NS_ERR_IO, "%s: read error: %s", s->path, strerror(errno));
		s->in_eof = true;
	}
	s->in_len = got;
	s->in_pos = 0;
	s->consumed += got;
	return 0;
}

int ns_source_open(const char *path, uint64_t max_out, uint32_t max_ratio, struct ns_source **out,
		   struct ns_error *err)
{
	int rc = NS_OK;
	struct ns_source *s = calloc(1, sizeof(*s));
	struct stat st;
	if (!s)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
	s->path = path;
	s->max_out = max_out ? max_out : (64ULL << 30);
	s->max_ratio = max_ratio ? max_ratio : 1000;
	s->file = fopen(path, "rb");
	if (!s->file) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
		goto out;
	}
	if (fstat(fileno(s->file), &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: is a directory", path);
		goto out;
	}
	s->size = (uint64_t)st.st_size;
	s->in = malloc(IN_CHUNK);
	if (!s->in) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
		goto out;
	}
	rc = fill_input(s, err);
	if (rc)
		goto out;
	if (s->in_len >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b) {
		s->comp = NS_COMP_GZIP;
		if (inflateInit2(&s->z, 15 + 32) != Z_OK) {
			rc = ns_error_set(err, NS_ERR_NOMEM, "%s: cannot start gzip decoder", path);
			goto out;
		}
	} else if (s->in_len >= 4 && s->in[0] == 0x28 && s->in[1] == 0xb5 && s->in[2] == 0x2f &&
		   s->in[3] == 0xfd) {
		s->comp = NS_COMP_ZSTD;
		s->zd = ZSTD_createDStream();
		if (!s->zd) {
			rc = ns_error_set(err, NS_ERR_NOMEM, "%s: cannot start zstd decoder", path);
			goto out;
		}
	}
out:
	if (rc) {
		ns_source_close(s);
		s = NULL;
	}
	*out = s;
	return rc;
}

static int check_limits(struct ns_source *s, struct ns_error *err)
{
	if (s->produced > s->max_out)
		return ns_error_set(err, NS_ERR_NOMEM,
				    "%s: decompressed size exceeds the limit of %llu bytes", s->path,
				    (unsigned long long)s->max_out);
	/* The ratio test starts after 1 MiB so tiny files of repetitive JSON pass. */
	if (s->produced > (1u << 20) && s->consumed &&
	    s->produced / s->consumed > s->max_ratio)
		return ns_error_set(err, NS_ERR_NOMEM,
				    "%s: compression ratio above %u:1 at compressed byte %llu (a decompression bomb?)",
				    s->path, s->max_ratio, (unsigned long long)s->consumed);
	return 0;
}

static ssize_t read_gzip(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	s->z.next_out = (unsigned char *)buf;
	s->z.avail_out = (uInt)(n > UINT32_MAX ? UINT32_MAX : n);
	while (s->z.avail_out == (uInt)n && !s->stream_end) {
		if (fill_input(s, err))
			return -1;
		if (s->in_pos == s->in_len) {
			s->truncated = true;
			s->stream_end = true;
			break;
		}
		s->z.next_in = s->in + s->in_pos;
		s->z.avail_in = (uInt)(s->in_len - s->in_pos);
		int zr = inflate(&s->z, Z_NO_FLUSH);
		s->in_pos = s->in_len - s->z.avail_in;
		if (zr == Z_STREAM_END) {
			/* Concatenated gzip members continue the stream. */
			if (fill_input(s, err))
				return -1;
			if (s->in_pos < s->in_len) {
				inflateReset(&s->z);
				continue;
			}
			s->stream_end = true;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			ns_error_set(err, NS_ERR_INPUT, "%s: corrupt gzip stream near byte %llu: %s", s->path,
				     (unsigned long long)(s->consumed - (s->in_len - s->in_pos)),
				     s->z.msg ? s->z.msg : "inflate error");
			return -1;
		}
	}
	return (ssize_t)(n - s->z.avail_out);
}

static ssize_t read_zstd(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	ZSTD_outBuffer ob = { buf, n, 0 };
	while (ob.pos == 0) {
		if (fill_input(s, err))
			return -1;
		if (s->in_pos == s->in_len) {
			s->truncated = s->zstd_pending != 0;
			break;
		}
		ZSTD_inBuffer ib = { s->in, s->in_len, s->in_pos };
		size_t r = ZSTD_decompressStream(s->zd, &ob, &ib);
		s->in_pos = ib.pos;
		if (ZSTD_isError(r)) {
			ns_error_set(err, NS_ERR_INPUT, "%s: corrupt zstd stream near byte %llu: %s", s->path,
				     (unsigned long long)(s->consumed - (s->in_len - s->in_pos)),
				     ZSTD_getErrorName(r));
			return -1;
		}
		s->zstd_pending = r;
	}
	return (ssize_t)ob.pos;
}

ssize_t ns_source_read(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	ssize_t got;
	if (n == 0)
		return 0;
	switch (s->comp) {
	case NS_COMP_GZIP:
		got = read_gzip(s, buf, n, err);
		break;
	case NS_COMP_ZSTD:
		got = read_zstd(s, buf, n, err);
		break;
	default:
		if (fill_input(s, err))
			return -1;
		got = (ssize_t)(s->in_len - s->in_pos);
		if ((size_t)got > n)
			got = (ssize_t)n;
		memcpy(buf, s->in + s->in_pos, (size_t)got);
		s->in_pos += (size_t)got;
		break;
	}
	if (got > 0) {
		s->produced += (uint64_t)got;
		if (s->comp != NS_COMP_NONE && check_limits(s, err))
			return -1;
	}
	return got;
}

uint64_t ns_source_consumed(const struct ns_source *s)
{
	return s->consumed - (s->in_len - s->in_pos);
}

uint64_t ns_source_size(const struct ns_source *s)
{
	return s->size;
}

bool ns_source_truncated(const struct ns_source *s)
{
	return s->truncated;
}

enum ns_compression ns_source_compression(const struct ns_source *s)
{
	return s->comp;
}

void ns_source_close(struct ns_source *s)
{
	if (!s)
		return;
	if (s->comp == NS_COMP_GZIP)
		inflateEnd(&s->z);
	if (s->zd)
		ZSTD_freeDStream(s->zd);
	if (s->file)
		fclose(s->file);
	free(s->in);
	free(s);
}
