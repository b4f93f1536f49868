#include "ingest/source.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define IN_CHUNK (1u << 20)

enum ns_compression { NS_COMP_NONE = 0, NS_COMP_GZIP, NS_COMP_ZSTD };

struct ns_source {
	const char *path;
	FILE *file;
	const unsigned char *mem; /* ns_source_open_mem: the bytes (file is NULL) */
	size_t mem_len, mem_pos;
	uint64_t size, consumed, produced;
	uint64_t max_out;
	uint32_t max_ratio;
	enum ns_compression comp;
	bool in_eof, stream_end;
	bool truncated; /* the compressed stream ended early: reported as a short file */
	size_t max_read;  /* ns_source_set_max_read (tests): 0 = no cap */
	size_t zstd_pending; /* non-zero while a zstd frame is incomplete */
	unsigned char *in;    /* a buffer of in_cap bytes, or (memory) a view of mem */
	size_t in_len, in_pos, in_cap;
	z_stream z;
	ZSTD_DStream *zd;
};

static int fill_input(struct ns_source *s, struct ns_error *err)
{
	if (s->in_pos < s->in_len || s->in_eof)
		return 0;
	size_t got;
	if (s->mem) {
		got = s->mem_len - s->mem_pos < s->in_cap ? s->mem_len - s->mem_pos : s->in_cap;
		s->in = (unsigned char *)s->mem + s->mem_pos; /* never written through */
		s->mem_pos += got;
	} else {
		got = fread(s->in, 1, s->in_cap, s->file);
	}
	if (got < s->in_cap) {
		if (s->file && ferror(s->file))
			return ns_error_set(err, NS_ERR_IO, "%s: read error: %s", s->path, strerror(errno));
		s->in_eof = true;
	}
	s->in_len = got;
	s->in_pos = 0;
	s->consumed += got;
	return 0;
}

/* Allocates the input buffer, reads the first chunk and picks the decoder
 * by magic number. On failure the caller closes s. */
static int start(struct ns_source *s, struct ns_error *err)
{
	const char *path = s->path;
	int rc;
	/* a small file gets a small buffer (many small files; fuzzing) */
	s->in_cap = IN_CHUNK;
	while (s->in_cap > 4096 && s->in_cap / 2 > s->size)
		s->in_cap /= 2;
	if (!s->mem && !(s->in = malloc(s->in_cap)))
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
	rc = fill_input(s, err);
	if (rc)
		return rc;
	if (s->in_len >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b) {
		s->comp = NS_COMP_GZIP;
		if (inflateInit2(&s->z, 15 + 32) != Z_OK)
			return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory (starting the gzip decoder)", path);
	} else if (s->in_len >= 4 && s->in[0] == 0x28 && s->in[1] == 0xb5 && s->in[2] == 0x2f &&
		   s->in[3] == 0xfd) {
		s->comp = NS_COMP_ZSTD;
		s->zd = ZSTD_createDStream();
		if (!s->zd)
			return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory (starting the zstd decoder)", path);
	}
	return 0;
}

static struct ns_source *new_source(const char *path, uint64_t max_out, uint32_t max_ratio)
{
	struct ns_source *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->path = path;
	s->max_out = max_out ? max_out : (64ULL << 30);
	s->max_ratio = max_ratio ? max_ratio : 1000;
	return s;
}

int ns_source_open(const char *path, uint64_t max_out, uint32_t max_ratio, struct ns_source **out,
		   struct ns_error *err)
{
	int rc = NS_OK;
	struct ns_source *s = new_source(path, max_out, max_ratio);
	struct stat st;
	if (!s)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
	if (strcmp(path, "-") == 0) { /* standard input (a copy of fd 0, so that closing leaves it open) */
		int fd = dup(0);
		if (fd < 0 || !(s->file = fdopen(fd, "rb"))) {
			rc = ns_error_sys(err, NS_ERR_IO, errno, path, "cannot read standard input");
			if (fd >= 0)
				close(fd);
			goto out;
		}
	} else if (!(s->file = fopen(path, "rb"))) {
		rc = ns_error_sys(err, NS_ERR_IO, errno, path, "cannot open");
		goto out;
	}
	if (fstat(fileno(s->file), &st) != 0) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: is a directory", path);
		goto out;
	}
	/* A pipe, FIFO or device has no size: it is read as a stream, in
	 * whole chunks (fread waits for each to fill). */
	s->size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : NS_SOURCE_SIZE_UNKNOWN;
	rc = start(s, err);
out:
	if (rc) {
		ns_source_close(s);
		s = NULL;
	}
	*out = s;
	return rc;
}

int ns_source_open_mem(const void *bytes, size_t len, const char *name, uint64_t max_out,
		       uint32_t max_ratio, struct ns_source **out, struct ns_error *err)
{
	static const unsigned char empty[1];
	struct ns_source *s = new_source(name, max_out, max_ratio);
	int rc;
	if (!s)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", name);
	s->mem = len ? bytes : empty;
	s->mem_len = len;
	s->size = len;
	rc = start(s, err);
	if (rc) {
		ns_source_close(s);
		s = NULL;
	}
	*out = s;
	return rc;
}

static int check_limits(struct ns_source *s, struct ns_error *err)
{
	int rc = 0;
	if (s->produced > s->max_out)
		rc = ns_error_set(err, NS_ERR_NOMEM,
				  "%s: decompressed size exceeds the limit of %llu bytes", s->path,
				  (unsigned long long)s->max_out);
	/* The ratio test starts after 1 MiB so tiny files of repetitive JSON pass. */
	else if (s->produced > (1u << 20) && s->consumed && s->produced / s->consumed > s->max_ratio)
		rc = ns_error_set(err, NS_ERR_NOMEM,
				  "%s: compression ratio above %u:1 at compressed byte %llu (a decompression bomb?)",
				  s->path, s->max_ratio, (unsigned long long)s->consumed);
	if (rc)
		ns_error_hint(err, "if the file is trusted, raise the limits with NEURON_STATS_MAX_DECOMPRESSED=BYTES "
				   "and NEURON_STATS_MAX_RATIO=N");
	return rc;
}

/* After a gzip member ends: nothing, NUL padding (as Python's gzip module
 * accepts) or another member may follow; anything else is an error. */
static int after_gzip_member(struct ns_source *s, struct ns_error *err)
{
	for (;;) {
		if (fill_input(s, err))
			return -1;
		if (s->in_pos == s->in_len) {
			s->stream_end = true;
			return 0;
		}
		if (s->in[s->in_pos] != 0)
			break;
		while (s->in_pos < s->in_len && s->in[s->in_pos] == 0)
			s->in_pos++;
		if (s->in_pos < s->in_len) {
			ns_error_set(err, NS_ERR_INPUT, "%s: corrupt gzip stream: data after the NUL padding at byte %llu",
				     s->path, (unsigned long long)ns_source_consumed(s));
			return -1;
		}
	}
	if (inflateReset(&s->z) != Z_OK) {
		ns_error_set(err, NS_ERR_NOMEM, "%s: cannot restart the gzip decoder", s->path);
		return -1;
	}
	return 0;
}

static ssize_t read_gzip(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	uInt want = (uInt)(n > UINT32_MAX ? UINT32_MAX : n);
	s->z.next_out = (unsigned char *)buf;
	s->z.avail_out = want;
	while (s->z.avail_out == want && !s->stream_end) {
		if (fill_input(s, err))
			return -1;
		/* With no input left the decoder may still hold output (a match cut
		 * by the end of the previous output buffer): it runs once more. */
		bool no_input = s->in_pos == s->in_len;
		s->z.next_in = s->in + s->in_pos;
		s->z.avail_in = (uInt)(s->in_len - s->in_pos);
		int zr = inflate(&s->z, Z_NO_FLUSH);
		s->in_pos = s->in_len - s->z.avail_in;
		if (zr == Z_STREAM_END) {
			/* Concatenated gzip members continue the stream. */
			if (after_gzip_member(s, err))
				return -1;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			ns_error_set(err, NS_ERR_INPUT, "%s: corrupt gzip stream near byte %llu: %s", s->path,
				     (unsigned long long)ns_source_consumed(s),
				     s->z.msg ? s->z.msg : "inflate error");
			return -1;
		} else if (no_input && s->z.avail_out == want) {
			s->truncated = true; /* the input ended inside a member */
			s->stream_end = true;
		}
	}
	return (ssize_t)(want - s->z.avail_out);
}

static ssize_t read_zstd(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	ZSTD_outBuffer ob = { buf, n, 0 };
	while (ob.pos == 0 && !s->stream_end) {
		if (fill_input(s, err))
			return -1;
		/* as for gzip: one more call with no input flushes what it holds */
		bool no_input = s->in_pos == s->in_len;
		size_t prev = s->zstd_pending; /* 0: the last frame was complete */
		ZSTD_inBuffer ib = { s->in, s->in_len, s->in_pos };
		size_t r = ZSTD_decompressStream(s->zd, &ob, &ib);
		s->in_pos = ib.pos;
		if (ZSTD_isError(r)) {
			/* zstd does not say how far it got: name the bytes read so far */
			ns_error_set(err, NS_ERR_INPUT, "%s: corrupt zstd stream within the first %llu bytes: %s",
				     s->path, (unsigned long long)s->consumed, ZSTD_getErrorName(r));
			return -1;
		}
		if (no_input && ob.pos == 0) {
			/* (r is now the next frame's header size, so prev decides) */
			s->truncated = prev != 0; /* the input ended inside a frame */
			s->stream_end = true;
		} else {
			s->zstd_pending = r;
		}
	}
	return (ssize_t)ob.pos;
}

ssize_t ns_source_read(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	ssize_t got;
	if (s->max_read && n > s->max_read)
		n = s->max_read;
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

void ns_source_set_max_read(struct ns_source *s, size_t n)
{
	s->max_read = n;
}

uint64_t ns_source_size(const struct ns_source *s)
{
	return s->size;
}

bool ns_source_truncated(const struct ns_source *s)
{
	return s->truncated;
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
	if (!s->mem)
		free(s->in);
	free(s);
}
