/* The result cache's entries (docs/cli.md "Cache", docs/schema.md "Result
 * cache"): what a command printed for one key, replayed on a later run with
 * the same key instead of parsing again. One file per key, named by a hash
 * of it, holding the key itself (so a hash collision is a miss, never
 * another command's output), the exit code, the output as records in the
 * order written, and a checksum: a damaged, cut or foreign file is a miss. */
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "NSRESULT"
#define FORMAT 1u
#define HEADER 28 /* magic 8, format 4, key length 4, exit code 4, log length 8 */
#define MAX_ENTRY (256u << 20)

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

char *ns_result_path(const char *cache_dir, const char *key, size_t key_len)
{
	/* two FNV-1a streams with different seeds, as the database cache */
	uint64_t h0 = fnv1a(14695981039346656037ULL, key, key_len), h1 = fnv1a(0x6a09e667f3bcc908ULL, key, key_len);
	char *path;
	if (asprintf(&path, "%s/%016llx%016llx.res", cache_dir, (unsigned long long)h0, (unsigned long long)h1) < 0)
		return NULL;
	return path;
}

void ns_result_record_head(unsigned char *rec, enum ns_result_stream stream, uint32_t n)
{
	rec[0] = (unsigned char)stream;
	put32(rec + 1, n);
}

uint32_t ns_result_record_len(const unsigned char *rec)
{
	return get32(rec + 1);
}

bool ns_result_log_valid(const unsigned char *log, size_t len)
{
	size_t at = 0;
	while (at < len) {
		if (len - at < NS_RESULT_RECORD_HEAD || log[at] < NS_RESULT_STDOUT || log[at] > NS_RESULT_FILE ||
		    ns_result_record_len(log + at) > len - at - NS_RESULT_RECORD_HEAD)
			return false;
		at += NS_RESULT_RECORD_HEAD + ns_result_record_len(log + at);
	}
	return true;
}

/* The whole file at path, if a regular file of at most MAX_ENTRY bytes. */
static unsigned char *read_all(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf = NULL;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < HEADER + 8 || st.st_size > MAX_ENTRY ||
	    !(buf = malloc((size_t)st.st_size)))
		goto out;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got != (size_t)st.st_size) {
		free(buf);
		buf = NULL;
	}
	*len = got;
out:
	close(fd);
	return buf;
}

int ns_result_read(const char *path, const char *key, size_t key_len, struct ns_result *r)
{
	size_t len = 0;
	unsigned char *buf = read_all(path, &len);
	memset(r, 0, sizeof(*r));
	if (!buf)
		return -1;
	uint64_t log_len = get64(buf + 20);
	bool ok = memcmp(buf, MAGIC, 8) == 0 && get32(buf + 8) == FORMAT && get32(buf + 12) == key_len &&
		  log_len <= len && len == HEADER + key_len + log_len + 8 &&
		  get64(buf + len - 8) == fnv1a(14695981039346656037ULL, buf, len - 8) &&
		  memcmp(buf + HEADER, key, key_len) == 0 && ns_result_log_valid(buf + HEADER + key_len, log_len);
	if (!ok) {
		free(buf);
		return -1;
	}
	r->code = (int)get32(buf + 16);
	r->buf = buf;
	r->log = buf + HEADER + key_len;
	r->len = (size_t)log_len;
	return 0;
}

void ns_result_release(struct ns_result *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

/* Writes all of data to fd. */
static int write_all(int fd, const void *data, size_t len)
{
	const unsigned char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int ns_result_write(const char *path, const char *key, size_t key_len, int code, const unsigned char *log,
		    size_t len, struct ns_error *err)
{
	unsigned char head[HEADER], sum[8];
	struct stat st;
	char *tmp = NULL;
	int fd, rc = 0;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return ns_error_set(err, NS_ERR_IO, "%s: is %s; not replaced", path,
				    S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
	memcpy(head, MAGIC, 8);
	put32(head + 8, FORMAT);
	put32(head + 12, (uint32_t)key_len);
	put32(head + 16, (uint32_t)code);
	put64(head + 20, len);
	uint64_t h = fnv1a(14695981039346656037ULL, head, sizeof(head));
	h = fnv1a(fnv1a(h, key, key_len), log, len);
	put64(sum, h);
	if ((fd = ns_store_create_temp(path, O_WRONLY, &tmp)) < 0)
		return ns_error_set(err, errno == ENOMEM ? NS_ERR_NOMEM : NS_ERR_IO, "%s: cannot create the entry: %s",
				    path, strerror(errno));
	if (write_all(fd, head, sizeof(head)) || write_all(fd, key, key_len) || write_all(fd, log, len) ||
	    write_all(fd, sum, sizeof(sum)))
		rc = ns_error_set(err, NS_ERR_IO, "%s: %s", tmp, strerror(errno));
	/* (rename is atomic: a reader sees the old entry or the new, whole;
	 * and it comes before the close, which drops the lock that keeps
	 * other writers' cleanup off the temp file) */
	if (!rc && rename(tmp, path) != 0)
		rc = ns_error_set(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
	if (rc)
		unlink(tmp);
	if (close(fd) != 0 && !rc)
		rc = ns_error_set(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
	free(tmp);
	return rc;
}
