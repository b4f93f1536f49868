/* Finding the trace files below a directory. */
#include "common/sort.h"
#include "ingest/ingest.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ingest/source.h"

#define SNIFF_BYTES 65536
#define MAX_DEPTH 16

struct path_list {
	char **paths;
	size_t n, cap;
	struct ns_dirset seen;
};

bool ns_dirset_seen(struct ns_dirset *set, const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return true;
	for (size_t i = 0; i < set->n; i++)
		if (set->ids[2 * i] == (uint64_t)st.st_dev && set->ids[2 * i + 1] == (uint64_t)st.st_ino)
			return true;
	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 16;
		uint64_t *ids = realloc(set->ids, cap * 2 * sizeof(*ids));
		if (!ids)
			return false;
		set->ids = ids;
		set->cap = cap;
	}
	set->ids[2 * set->n] = (uint64_t)st.st_dev;
	set->ids[2 * set->n + 1] = (uint64_t)st.st_ino;
	set->n++;
	return false;
}

void ns_dirset_release(struct ns_dirset *set)
{
	free(set->ids);
	memset(set, 0, sizeof(*set));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool name_is_candidate(const char *name)
{
	return ends_with(name, ".json") || ends_with(name, ".json.gz") || ends_with(name, ".json.zst");
}

/* 1 if the first bytes (decompressed) look like a Kineto trace, 0 if not
 * (or they cannot be read), -1 when out of memory (not "no trace"). */
static int looks_like_kineto(const char *path)
{
	struct ns_source *src = NULL;
	struct ns_error err = { 0 };
	char *buf = malloc(SNIFF_BYTES + 1);
	size_t len = 0;
	int yes = 0;
	if (!buf || ns_source_open(path, 0, 0, &src, &err)) {
		yes = !buf || err.status == NS_ERR_NOMEM ? -1 : 0;
		goto out;
	}
	while (len < SNIFF_BYTES) {
		ssize_t got = ns_source_read(src, buf + len, SNIFF_BYTES - len, &err);
		if (got < 0 && err.status == NS_ERR_NOMEM) {
			yes = -1;
			goto out;
		}
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	buf[len] = '\0';
	yes = memmem(buf, len, "\"traceEvents\"", 13) || memmem(buf, len, "\"schemaVersion\"", 15) ||
	      memmem(buf, len, "\"ph\"", 4);
out:
	ns_source_close(src);
	free(buf);
	return yes;
}

static int add_path(struct path_list *l, const char *path)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **p = realloc(l->paths, cap * sizeof(*p));
		if (!p)
			return -1;
		l->paths = p;
		l->cap = cap;
	}
	l->paths[l->n] = strdup(path);
	return l->paths[l->n] ? (int)(l->n++, 0) : -1;
}

static int walk_files(const char *dir, int depth, int max_depth, struct ns_dirset *seen, ns_file_visit visit,
		      void *ctx, struct ns_error *err)
{
	int rc = 0;
	DIR *d;
	struct dirent *de;
	if (ns_dirset_seen(seen, dir))
		return 0; /* a symbolic link back into the tree */
	d = opendir(dir);
	if (!d)
		return ns_error_sys(err, NS_ERR_IO, errno, dir, "cannot open directory");
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		char *child;
		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&child, "%s/%s", dir, de->d_name) < 0) {
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			break;
		}
		if (stat(child, &st) == 0) {
			if (S_ISDIR(st.st_mode) && depth < max_depth)
				rc = walk_files(child, depth + 1, max_depth, seen, visit, ctx, err);
			else if (S_ISREG(st.st_mode))
				rc = visit(ctx, child, de->d_name, &st, err);
		}
		free(child);
		if (rc)
			break;
	}
	closedir(d);
	return rc;
}

int ns_walk_files(const char *dir, int max_depth, struct ns_dirset *seen, ns_file_visit visit, void *ctx,
		  struct ns_error *err)
{
	return walk_files(dir, 0, max_depth, seen, visit, ctx, err);
}

static int visit_trace(void *ctx, const char *path, const char *name, const struct stat *st, struct ns_error *err)
{
	(void)st;
	int trace = name_is_candidate(name) ? looks_like_kineto(path) : 0;
	if (trace < 0 || (trace && add_path(ctx, path)))
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
	return 0;
}

static int cmp_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ns_find_traces(const char *path, char ***out_paths, size_t *out_n, struct ns_error *err)
{
	struct path_list l = { 0 };
	struct stat st;
	int rc = 0;
	*out_paths = NULL;
	*out_n = 0;
	bool is_stdin = strcmp(path, "-") == 0;
	if (!is_stdin && stat(path, &st) != 0)
		return ns_error_sys(err, NS_ERR_IO, errno, path, NULL);
	if (is_stdin || !S_ISDIR(st.st_mode)) {
		if (add_path(&l, path))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	} else {
		size_t len = strlen(path);
		char *dir = strdup(path);
		if (!dir)
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		while (len > 1 && dir[len - 1] == '/')
			dir[--len] = '\0';
		rc = ns_walk_files(dir, MAX_DEPTH, &l.seen, visit_trace, &l, err);
		ns_dirset_release(&l.seen);
		free(dir);
		if (!rc && l.n == 0)
			rc = ns_error_set(err, NS_ERR_INPUT,
					  "%s: no trace found (looked for trace.json, *.pt.trace.json[.gz|.zst], "
					  "*.json.gz and other Kineto JSON files)",
					  path);
	}
	if (rc) {
		for (size_t i = 0; i < l.n; i++)
			free(l.paths[i]);
		free(l.paths);
		return rc;
	}
	ns_sort(l.paths, l.n, sizeof(*l.paths), cmp_paths);
	*out_paths = l.paths;
	*out_n = l.n;
	return 0;
}
