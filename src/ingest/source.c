#include "ingest/source.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#ifdef NS_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define IN_CHUNK (1u << 20)

enum ns_compression { NS_COMP_NONE = 0, NS_COMP_GZIP, NS_COMP_ZSTD };

/* A file's gzip or zstd stream is decompressed ahead of the parser, on a
 * thread of its own, into AHEAD_SLOTS chunks that ns_source_read hands
 * out in order; then the decoder's error, if any, as ns_source_read would
 * have returned it. */
#define AHEAD_SLOTS 4
#define AHEAD_CHUNK (1u << 20)

struct ahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	char *data[AHEAD_SLOTS];
	size_t len[AHEAD_SLOTS];
	uint64_t consumed[AHEAD_SLOTS]; /* ns_source_consumed once the slot was filled */
	unsigned head, count;           /* the slot read next; the slots filled */
	size_t head_pos;                /* bytes of the head slot handed out */
	bool done;                      /* the decoder is at the end of the stream, or failed */
	bool stop;                      /* ns_source_close: the decoder quits */
	bool failed, truncated;         /* (with done) */
	struct ns_error err;            /* (failed) */
};

struct ns_source {
	const char *path;
	FILE *file;
	int pread_fd;      /* ns_source_open_at over a file: reads with pread here (the file is NULL) */
	uint64_t pread_at; /* (its next offset) */
	const unsigned char *mem; /* ns_source_open_mem: the bytes (file is NULL) */
	size_t mem_len, mem_pos;
	uint64_t size, consumed, produced;
	uint64_t max_out;
	uint32_t max_ratio;
	enum ns_compression comp;
	bool in_eof, stream_end;
	bool stdin_copy; /* "-": fd 0's copy, whose offset need not be 0 (never seekable) */
	bool truncated; /* the compressed stream ended early: reported as a short file */
	size_t max_read;  /* ns_source_set_max_read (tests): 0 = no cap */
	size_t zstd_pending; /* non-zero while a zstd frame is incomplete */
	unsigned char *in;    /* a buffer of in_cap bytes, or (memory) a view of mem */
	size_t in_len, in_pos, in_cap;
	z_stream z;
	struct inflate_state *isal; /* gzip decoded by ISA-L instead (ns_source_fast_gzip) */
	ZSTD_DStream *zd;
	struct ahead *ahead;     /* the decoder's thread, once started; fields above are then its own */
	bool ahead_tried;
	uint64_t ahead_consumed; /* what ns_source_consumed says meanwhile */
	bool ahead_truncated;
	bool ended;              /* a read returned 0 (ns_source_ended; the reader's, as the two above) */
};

/* Compressed bytes read so far (on the decoder's thread too). */
static uint64_t consumed_here(const struct ns_source *s)
{
	return s->consumed - (s->in_len - s->in_pos);
}

/* Reads up to cap bytes of a file (not one in memory) into dst: *got
 * short of cap only at its end. */
static int read_file(struct ns_source *s, unsigned char *dst, size_t cap, size_t *got, struct ns_error *err)
{
	size_t n = 0;
	if (!s->file) {
		while (n < cap) {
			ssize_t r = pread(s->pread_fd, dst + n, cap - n, (off_t)(s->pread_at + n));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return ns_error_set(err, NS_ERR_IO, "%s: read error: %s", s->path, strerror(errno));
			if (r == 0)
				break;
			n += (size_t)r;
		}
		s->pread_at += n;
	} else {
		n = fread(dst, 1, cap, s->file);
		if (n < cap && ferror(s->file))
			return ns_error_set(err, NS_ERR_IO, "%s: read error: %s", s->path, strerror(errno));
	}
	if (n < cap)
		s->in_eof = true;
	s->consumed += n;
	*got = n;
	return 0;
}

static int fill_input(struct ns_source *s, struct ns_error *err)
{
	if (s->in_pos < s->in_len || s->in_eof)
		return 0;
	size_t got;
	if (s->mem) {
		got = s->mem_len - s->mem_pos < s->in_cap ? s->mem_len - s->mem_pos : s->in_cap;
		s->in = (unsigned char *)s->mem + s->mem_pos; /* never written through */
		s->mem_pos += got;
		if (got < s->in_cap)
			s->in_eof = true;
		s->consumed += got;
	} else if (read_file(s, s->in, s->in_cap, &got, err)) {
		return -1;
	}
	s->in_len = got;
	s->in_pos = 0;
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
	s->pread_fd = -1;
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
		s->stdin_copy = true;
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
				     s->path, (unsigned long long)consumed_here(s));
			return -1;
		}
	}
	if (s->isal) {
#ifdef NS_HAVE_ISAL
		isal_inflate_reset(s->isal);
		s->isal->crc_flag = ISAL_GZIP;
#endif
	} else if (inflateReset(&s->z) != Z_OK) {
		ns_error_set(err, NS_ERR_NOMEM, "%s: cannot restart the gzip decoder", s->path);
		return -1;
	}
	return 0;
}

#ifdef NS_HAVE_ISAL
/* Whether ISA-L may read the gzip member header at in[in_pos]: zlib
 * refuses one with reserved flag bits set, which ISA-L reads, so such a
 * member is left to zlib (and one whose flags byte is not in this chunk
 * too). */
static bool isal_takes_header(const struct ns_source *s)
{
	return s->in_len - s->in_pos >= 4 && (s->in[s->in_pos + 3] & 0xe0) == 0;
}

/* read_gzip by ISA-L. What does not end the stream cleanly (a decoding
 * error, the input ending inside a member) is an error here, never a cut:
 * ISA-L does not stop where zlib does, so the caller reads the file again
 * with zlib for zlib's account of it (ns_source_fast_gzip). */
static ssize_t read_gzip_isal(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	struct inflate_state *st = s->isal;
	uint32_t want = (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n);
	st->next_out = (uint8_t *)buf;
	st->avail_out = want;
	while (st->avail_out == want && !s->stream_end) {
		if (fill_input(s, err))
			return -1;
		bool no_input = s->in_pos == s->in_len;
		st->next_in = s->in + s->in_pos;
		st->avail_in = (uint32_t)(s->in_len - s->in_pos);
		int r = isal_inflate(st);
		s->in_pos = s->in_len - st->avail_in;
		if (r == ISAL_DECOMP_OK && st->block_state == ISAL_BLOCK_FINISH) {
			if (after_gzip_member(s, err))
				return -1;
			if (s->stream_end || isal_takes_header(s))
				continue;
			r = ISAL_INVALID_WRAPPER;
		}
		if (r != ISAL_DECOMP_OK || (no_input && st->avail_out == want)) {
			ns_error_set(err, NS_ERR_INPUT, "%s: corrupt or truncated gzip stream near byte %llu (ISA-L)",
				     s->path, (unsigned long long)consumed_here(s));
			return -1;
		}
	}
	return (ssize_t)(want - st->avail_out);
}
#endif

static ssize_t read_gzip(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
#ifdef NS_HAVE_ISAL
	if (s->isal)
		return read_gzip_isal(s, buf, n, err);
#endif
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
				     (unsigned long long)consumed_here(s),
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

/* The next bytes of a compressed stream, decoded here and now. */
static ssize_t decode(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	ssize_t got = s->comp == NS_COMP_GZIP ? read_gzip(s, buf, n, err) : read_zstd(s, buf, n, err);
	if (got > 0) {
		s->produced += (uint64_t)got;
		if (check_limits(s, err))
			return -1;
	}
	return got;
}

/* The decoder's thread: fills the free slots until the stream ends, it
 * fails, or the source is closed. */
static void *ahead_main(void *arg)
{
	struct ns_source *s = arg;
	struct ahead *a = s->ahead;
	for (;;) {
		pthread_mutex_lock(&a->lock);
		while (a->count == AHEAD_SLOTS && !a->stop)
			pthread_cond_wait(&a->changed, &a->lock);
		unsigned slot = (a->head + a->count) % AHEAD_SLOTS;
		bool stop = a->stop;
		pthread_mutex_unlock(&a->lock);
		if (stop)
			return NULL;
		struct ns_error err = { 0 };
		size_t len = 0;
		ssize_t got;
		while ((got = decode(s, a->data[slot] + len, AHEAD_CHUNK - len, &err)) > 0 && (len += (size_t)got) < AHEAD_CHUNK)
			;
		pthread_mutex_lock(&a->lock);
		a->len[slot] = len;
		a->consumed[slot] = consumed_here(s);
		a->count += len > 0;
		if (got <= 0) {
			a->done = true;
			a->failed = got < 0;
			a->truncated = s->truncated;
			if (a->failed)
				a->err = err;
		}
		pthread_cond_broadcast(&a->changed);
		pthread_mutex_unlock(&a->lock);
		if (got <= 0)
			return NULL;
	}
}

static void ahead_free(struct ahead *a)
{
	for (unsigned k = 0; k < AHEAD_SLOTS; k++)
		free(a->data[k]);
	free(a);
}

/* Starts the decoder's thread; false (the stream is then decoded on each
 * read, as before) when it cannot be started. */
static bool ahead_start(struct ns_source *s)
{
	struct ahead *a = calloc(1, sizeof(*a));
	if (!a)
		return false;
	for (unsigned k = 0; k < AHEAD_SLOTS; k++)
		if (!(a->data[k] = malloc(AHEAD_CHUNK)))
			goto fail;
	if (pthread_mutex_init(&a->lock, NULL))
		goto fail;
	if (pthread_cond_init(&a->changed, NULL)) {
		pthread_mutex_destroy(&a->lock);
		goto fail;
	}
	s->ahead_consumed = consumed_here(s);
	s->ahead = a;
	if (pthread_create(&a->thread, NULL, ahead_main, s) == 0)
		return true;
	s->ahead = NULL;
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
fail:
	ahead_free(a);
	return false;
}

static ssize_t read_ahead(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	struct ahead *a = s->ahead;
	pthread_mutex_lock(&a->lock);
	while (a->count == 0 && !a->done)
		pthread_cond_wait(&a->changed, &a->lock);
	if (a->count == 0) {
		s->ahead_truncated = a->truncated;
		if (a->failed)
			*err = a->err;
		pthread_mutex_unlock(&a->lock);
		return a->failed ? -1 : 0;
	}
	unsigned head = a->head;
	size_t got = a->len[head] - a->head_pos, from = a->head_pos;
	pthread_mutex_unlock(&a->lock);
	if (got > n)
		got = n;
	memcpy(buf, a->data[head] + from, got); /* (the decoder leaves a filled slot alone) */
	pthread_mutex_lock(&a->lock);
	s->ahead_consumed = a->consumed[head];
	if ((a->head_pos += got) == a->len[head]) {
		a->head = (head + 1) % AHEAD_SLOTS;
		a->head_pos = 0;
		a->count--;
		pthread_cond_broadcast(&a->changed);
	}
	pthread_mutex_unlock(&a->lock);
	return (ssize_t)got;
}

static void ahead_stop(struct ahead *a)
{
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
	ahead_free(a);
}

static ssize_t read_some(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	ssize_t got;
	/* (a file's stream only: bytes in memory, and reads capped for tests
	 * and fuzzers, are decoded on each read) */
	if (s->comp != NS_COMP_NONE && s->file && !s->max_read && !s->ahead_tried) {
		s->ahead_tried = true;
		ahead_start(s);
	}
	if (s->ahead)
		return read_ahead(s, buf, n, err);
	if (s->comp != NS_COMP_NONE)
		return decode(s, buf, n, err);
	if (!s->mem && s->in_pos == s->in_len && !s->in_eof) {
		/* (a plain file straight into the caller's buffer: no copy; a
		 * chunk at a time, as the progress counts what was read) */
		size_t n_read;
		if (read_file(s, (unsigned char *)buf, n < s->in_cap ? n : s->in_cap, &n_read, err))
			return -1;
		s->produced += n_read;
		return (ssize_t)n_read;
	}
	if (fill_input(s, err))
		return -1;
	got = (ssize_t)(s->in_len - s->in_pos);
	if ((size_t)got > n)
		got = (ssize_t)n;
	memcpy(buf, s->in + s->in_pos, (size_t)got);
	s->in_pos += (size_t)got;
	s->produced += (uint64_t)got;
	return got;
}

ssize_t ns_source_read(struct ns_source *s, char *buf, size_t n, struct ns_error *err)
{
	if (s->max_read && n > s->max_read)
		n = s->max_read;
	if (n == 0)
		return 0;
	ssize_t got = read_some(s, buf, n, err);
	s->ended |= got == 0;
	return got;
}

bool ns_source_ended(const struct ns_source *s)
{
	return s->ended;
}

bool ns_source_fast_gzip(struct ns_source *s)
{
#ifdef NS_HAVE_ISAL
	if (s->comp != NS_COMP_GZIP || s->isal || s->produced || s->ahead_tried || !isal_takes_header(s) ||
	    !(s->isal = malloc(sizeof(*s->isal))))
		return false;
	isal_inflate_init(s->isal);
	s->isal->crc_flag = ISAL_GZIP;
	return true;
#else
	(void)s;
	return false;
#endif
}

bool ns_source_seekable(const struct ns_source *s)
{
	return s->comp == NS_COMP_NONE && !s->max_read && s->size != NS_SOURCE_SIZE_UNKNOWN && !s->stdin_copy;
}

int ns_source_seek(struct ns_source *s, uint64_t offset, struct ns_error *err)
{
	if (!ns_source_seekable(s) || offset > s->size)
		return ns_error_set(err, NS_ERR_IO, "%s: cannot seek to byte %llu", s->path,
				    (unsigned long long)offset);
	if (s->file && fseeko(s->file, (off_t)offset, SEEK_SET) != 0)
		return ns_error_set(err, NS_ERR_IO, "%s: cannot seek: %s", s->path, strerror(errno));
	s->mem_pos = (size_t)offset;
	s->pread_at = offset;
	s->in_len = s->in_pos = 0;
	s->in_eof = false;
	s->consumed = s->produced = offset;
	return 0;
}

int ns_source_open_at(const struct ns_source *s, uint64_t offset, struct ns_source **out, struct ns_error *err)
{
	struct ns_source *r = NULL;
	int rc = NS_OK;
	if (!ns_source_seekable(s) || !(r = new_source(s->path, s->max_out, s->max_ratio))) {
		rc = r ? NS_ERR_IO : ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", s->path);
		goto out;
	}
	r->size = s->size;
	if (s->mem) {
		r->mem = s->mem;
		r->mem_len = s->mem_len;
	} else {
		r->pread_fd = fileno(s->file);
	}
	r->in_cap = s->in_cap;
	if (!r->mem && !(r->in = malloc(r->in_cap))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", s->path);
		goto out;
	}
	rc = ns_source_seek(r, offset, err);
out:
	if (rc) {
		ns_source_close(r);
		r = NULL;
	}
	*out = r;
	return rc;
}

uint64_t ns_source_consumed(const struct ns_source *s)
{
	return s->ahead ? s->ahead_consumed : consumed_here(s);
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
	return s->ahead ? s->ahead_truncated : s->truncated;
}

void ns_source_close(struct ns_source *s)
{
	if (!s)
		return;
	if (s->ahead)
		ahead_stop(s->ahead);
	if (s->comp == NS_COMP_GZIP)
		inflateEnd(&s->z);
	free(s->isal);
	if (s->zd)
		ZSTD_freeDStream(s->zd);
	if (s->file)
		fclose(s->file);
	if (!s->mem)
		free(s->in);
	free(s);
}
