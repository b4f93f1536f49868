/* The cache of ingested traces: one database per set of input files, named
 * by a hash of their absolute paths, sizes and mtimes, and trusted only
 * while every recorded size and mtime still matches (docs/schema.md). */
#include "common/sort.h"
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store-internal.h"

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* Creates dir and its missing parents (mode 0700); failures are left for
 * the database create to report with a precise message. */
static void make_dirs(char *dir)
{
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(dir, 0700);
		*p = '/';
	}
	mkdir(dir, 0700);
}

/* The length of the run of lower-case hex digits name starts with, up to 32. */
static size_t hex_prefix(const char *name)
{
	size_t i = 0;
	while (i < 32 && ((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
		i++;
	return i;
}

/* A cache database or result cache entry: 32 hex digits and ".db" or ".res". */
static bool is_cache_name(const char *name)
{
	return hex_prefix(name) == 32 && (strcmp(name + 32, ".db") == 0 || strcmp(name + 32, ".res") == 0);
}

/* The temporary file of either: "<cache name>.tmp-...". */
static bool is_cache_temp_name(const char *name, void *ctx)
{
	(void)ctx;
	return hex_prefix(name) == 32 &&
	       (strncmp(name + 32, ".db.tmp-", 8) == 0 || strncmp(name + 32, ".res.tmp-", 9) == 0);
}

char *ns_cache_path(const char *cache_dir, const struct ns_source_id *srcs, size_t n)
{
	char *dir, *path = NULL;
	for (size_t i = 0; i < n; i++)
		if (srcs[i].stream) /* no identity to key on */
			return NULL;
	if (!cache_dir || !(dir = strdup(cache_dir)))
		return NULL;
	make_dirs(dir);
	/* Interrupted runs leave temporary databases, with the disk reserved
	 * for a whole one, under names no later run writes again. */
	ns_store_remove_stale_temps(dir, is_cache_temp_name, NULL);
	/* Two FNV-1a streams with different seeds make a 128-bit key; a
	 * collision would only cost a re-ingest, as ns_cache_valid checks the
	 * sources themselves. */
	uint64_t h[2] = { 14695981039346656037ULL, 0x6a09e667f3bcc908ULL };
	int32_t version = NS_SCHEMA_VERSION;
	for (int k = 0; k < 2; k++) {
		h[k] = fnv1a(h[k], &version, sizeof(version));
		for (size_t i = 0; i < n; i++) {
			const char *abspath = srcs[i].abspath ? srcs[i].abspath : srcs[i].path;
			h[k] = fnv1a(h[k], abspath, strlen(abspath) + 1);
			h[k] = fnv1a(h[k], &srcs[i].size, sizeof(srcs[i].size));
			h[k] = fnv1a(h[k], &srcs[i].mtime_ns, sizeof(srcs[i].mtime_ns));
		}
	}
	if (asprintf(&path, "%s/%016llx%016llx.db", dir, (unsigned long long)h[0], (unsigned long long)h[1]) < 0)
		path = NULL;
	free(dir);
	return path;
}

bool ns_cache_valid(const char *db_path, const struct ns_source_id *srcs, size_t n)
{
	uint32_t application_id, user_version;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	bool valid = false;
	size_t i = 0;
	int rc;
	if (!ns_store_read_header(db_path, &application_id, &user_version) ||
	    application_id != NS_APPLICATION_ID || user_version != NS_SCHEMA_VERSION ||
	    ns_store_open_readonly(db_path, &db, NULL))
		goto out;
	/* A database written by another build may hold different derived
	 * results (event_stats, key_averages_rows). */
	if (sqlite3_prepare_v2(db, "SELECT value = ?1 FROM store_info WHERE key = 'writer'", -1, &st, NULL) ||
	    sqlite3_bind_text(st, 1, NS_STORE_WRITER, -1, SQLITE_STATIC) || sqlite3_step(st) != SQLITE_ROW ||
	    !sqlite3_column_int(st, 0))
		goto out;
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT abspath, size, mtime_ns FROM traces ORDER BY id", -1, &st, NULL))
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *abspath = (const char *)sqlite3_column_text(st, 0);
		const char *want = i < n ? (srcs[i].abspath ? srcs[i].abspath : srcs[i].path) : NULL;
		if (!want || !abspath || strcmp(abspath, want) != 0 || sqlite3_column_int64(st, 1) != srcs[i].size ||
		    sqlite3_column_int64(st, 2) != srcs[i].mtime_ns)
			goto out;
		i++;
	}
	valid = rc == SQLITE_DONE && i == n;
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return valid;
}

void ns_cache_touch(const char *db_path)
{
	utimensat(AT_FDCWD, db_path, NULL, 0); /* best effort: pruning order only */
}

struct cache_entry {
	char *path;
	uint64_t size;
	int64_t mtime_ns;
};

static int by_age(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;
	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

size_t ns_cache_prune(const char *keep, uint64_t max_bytes)
{
	const char *slash = strrchr(keep, '/');
	char *dir = slash ? strndup(keep, (size_t)(slash - keep)) : strdup(".");
	struct cache_entry *v = NULL;
	size_t n = 0, cap = 0, deleted = 0;
	uint64_t total = 0;
	DIR *d = dir ? opendir(dir) : NULL;
	if (!d)
		goto out;
	for (struct dirent *de; (de = readdir(d)) != NULL;) {
		struct stat st;
		char *path;
		if (!is_cache_name(de->d_name) || asprintf(&path, "%s/%s", dir, de->d_name) < 0)
			continue;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		total += (uint64_t)st.st_size;
		if (strcmp(path, keep) == 0) { /* counts toward the total, never deleted */
			free(path);
			continue;
		}
		if (n == cap) {
			size_t new_cap = cap ? 2 * cap : 16;
			struct cache_entry *grown = realloc(v, new_cap * sizeof(*grown));
			if (!grown) {
				free(path);
				break;
			}
			v = grown;
			cap = new_cap;
		}
		v[n++] = (struct cache_entry){ path, (uint64_t)st.st_size,
					       (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec };
	}
	closedir(d);
	ns_sort(v, n, sizeof(*v), by_age);
	for (size_t i = 0; i < n && total > max_bytes; i++) {
		if (unlink(v[i].path) == 0) {
			total -= v[i].size;
			deleted++;
		}
	}
out:
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
	free(dir);
	return deleted;
}

int ns_source_ids(char *const *paths, size_t n, struct ns_source_id **out, struct ns_error *err)
{
	struct ns_source_id *ids = calloc(n ? n : 1, sizeof(*ids));
	int rc = 0;
	*out = NULL;
	if (!ids)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		bool is_stdin = strcmp(paths[i], "-") == 0;
		ids[i].path = paths[i];
		if ((is_stdin ? fstat(0, &st) : stat(paths[i], &st)) < 0) {
			rc = ns_error_sys(err, NS_ERR_IO, errno, paths[i], NULL);
			goto out;
		}
		ids[i].dev = (uint64_t)st.st_dev;
		ids[i].ino = (uint64_t)st.st_ino;
		if (is_stdin || !S_ISREG(st.st_mode)) {
			/* (realpath of /dev/fd/N names "pipe:[...]", which is no file) */
			ids[i].stream = true;
			if (!(ids[i].abspath = strdup(paths[i]))) {
				rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
				goto out;
			}
			continue;
		}
		if (!(ids[i].abspath = realpath(paths[i], NULL))) {
			rc = ns_error_sys(err, NS_ERR_IO, errno, paths[i], NULL);
			goto out;
		}
		ids[i].size = (int64_t)st.st_size;
		ids[i].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	}
	*out = ids;
	ids = NULL;
out:
	ns_source_ids_free(ids, n);
	return rc;
}

void ns_source_ids_free(struct ns_source_id *ids, size_t n)
{
	if (!ids)
		return;
	for (size_t i = 0; i < n; i++)
		free((char *)ids[i].abspath);
	free(ids);
}
