/* Neuron capture directories: the walk that finds the capture files below
 * a path (and, for a process folder, the exports written beside or above
 * it), then the capture's lifetime (docs/neuron.md "Capture directories").
 * What a file is: capture-classify.c; units: capture-group.c; pairs and
 * gaps: capture-pair.c. */
#include "ntff/capture-internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/vec.h"
#include "ingest/ingest.h" /* ns_dirset */

#define MAX_DEPTH 16

int cap_push_file(struct file_list *l, const struct ns_cap_file *f)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		struct ns_cap_file *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *f;
	return 0;
}

void cap_set_name(struct ns_cap_file *f)
{
	const char *slash = strrchr(f->path, '/');
	enum ns_cap_kind anchor;
	f->name = slash ? slash + 1 : f->path;
	if (slash && cap_parquet_anchor(f->name, &anchor)) { /* "<profile folder>/Metadata.parquet" */
		const char *p = slash;
		while (p > f->path && p[-1] != '/')
			p--;
		f->name = p;
	}
}

/* A table of a Parquet profile folder other than its metadata table: part
 * of the export its metadata table stands for, not a file of its own.
 * 1 when it is, 0 when not, -1 on OOM. */
static int parquet_table_of_profile(const char *path)
{
	static const char *const anchors[] = { "Metadata.parquet", "SystemProfileMetadata.parquet" };
	char *dir = ns_capture_folder(path);
	int found = dir ? 0 : -1;
	for (size_t i = 0; dir && i < NS_ARRAY_SIZE(anchors) && !found; i++) {
		char *meta;
		if (asprintf(&meta, "%s/%s", dir, anchors[i]) < 0) {
			found = -1;
			break;
		}
		found = access(meta, F_OK) == 0 ? 1 : errno == ENOMEM ? -1 : 0;
		free(meta);
	}
	free(dir);
	return found;
}

/* Adds the capture file at path (stat'ed as st) to l, if it is one. -1 on
 * OOM. */
int cap_add_if_capture(struct file_list *l, const char *path, const struct stat *st, bool converted)
{
	struct ns_cap_file f;
	int is = ns_capture_classify(path, &f, NULL);
	if (is <= 0)
		return is;
	if (f.kind == NS_CAP_PARQUET && (is = parquet_table_of_profile(path)) != 0)
		return is < 0 ? -1 : 0;
	if (converted && f.kind != NS_CAP_SYSTEM_JSON && f.kind != NS_CAP_DEVICE_JSON &&
	    f.kind != NS_CAP_SUMMARY_JSON)
		return 0;
	f.size = (uint64_t)st->st_size;
	f.converted = converted;
	if (!(f.path = strdup(path)))
		return -1;
	cap_set_name(&f);
	if (cap_push_file(l, &f)) {
		free(f.path);
		return -1;
	}
	return 0;
}

static int visit_capture_file(void *ctx, const char *path, const char *name, const struct stat *st,
			      struct ns_error *err)
{
	(void)name;
	return cap_add_if_capture(ctx, path, st, false) ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
}

/* A shallow scan: the folder's own files, and the Parquet profile folders
 * in it (their metadata tables). */
struct shallow_ctx {
	struct file_list *l;
	const char *root;
};

static int visit_shallow(void *ctx, const char *path, const char *name, const struct stat *st, struct ns_error *err)
{
	struct shallow_ctx *c = ctx;
	size_t n = strlen(c->root);
	enum ns_cap_kind kind;
	bool own = strncmp(path, c->root, n) == 0 && path[n] == '/' && !strchr(path + n + 1, '/');
	if (!own && !cap_parquet_anchor(name, &kind))
		return 0;
	return visit_capture_file(c->l, path, name, st, err);
}

int cap_cmp_files(const void *a, const void *b)
{
	const struct ns_cap_file *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->path, y->path);
}

char *ns_capture_folder(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
}

/* The number of process folders ("<instance>_pid_<pid>") in dir, up to 2;
 * -1 on OOM. */
static int process_dirs(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct ns_cap_unit probe;
	if (!d)
		return errno == ENOMEM ? -1 : 0;
	for (struct dirent *de; n < 2 && (de = readdir(d)) != NULL;)
		n += de->d_name[0] != '.' && cap_parse_process_dir(de->d_name, &probe);
	closedir(d);
	return n;
}

#define EXPORT_ANCESTORS 3

#define BESIDE_ENTRIES 4096 /* a folder with more is not an export folder */

/* An exports-only folder beside the process folders (a --output-file of
 * another folder): its exports that name their instance and pid join the
 * list; nothing when the folder holds a trace.json or a raw capture file (a
 * capture unit of its own). Only *_pid_*.json files are opened. -1 on OOM. */
static int add_sibling_exports(const char *dir, struct file_list *l)
{
	DIR *d = opendir(dir);
	struct file_list found = { 0 };
	bool other = false;
	int rc = !d && errno == ENOMEM ? -1 : 0, seen = 0;
	for (struct dirent *de; d && !other && !rc && (de = readdir(d)) != NULL;) {
		struct ns_cap_file f;
		struct stat st;
		char *child;
		bool json = cap_ends_with(de->d_name, ".json");
		if (de->d_name[0] == '.')
			continue;
		if (++seen > BESIDE_ENTRIES || strcmp(de->d_name, "trace.json") == 0) {
			other = true;
			break;
		}
		if (json && !strstr(de->d_name, "_pid_"))
			continue; /* no sniffing of every JSON beside */
		if (asprintf(&child, "%s/%s", dir, de->d_name) < 0) {
			rc = -1;
			break;
		}
		int is = stat(child, &st) == 0 && S_ISREG(st.st_mode) ? ns_capture_classify(child, &f, NULL) : 0;
		rc = is < 0 ? -1 : 0;
		if (is > 0) {
			other = !cap_is_export(f.kind) && (!json || f.kind == NS_CAP_TRACE);
			if (!other && json && cap_is_export(f.kind) && f.instance[0])
				rc = cap_add_if_capture(&found, child, &st, false);
		}
		free(child);
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < found.n; i++) {
		if (!rc && !other && cap_push_file(l, &found.v[i]) == 0)
			continue;
		rc = rc ? rc : other ? 0 : -1;
		free(found.v[i].path);
	}
	free(found.v);
	return rc;
}

/* The subfolders of dir that may hold exports of -d with another
 * --output-file: not dot folders, process or session folders, nor skip
 * (the way down to the process folder). -1 on OOM. */
static int add_beside_exports(const char *dir, const char *skip, struct file_list *l)
{
	DIR *d = opendir(dir);
	int rc = !d && errno == ENOMEM ? -1 : 0;
	for (struct dirent *de; d && !rc && (de = readdir(d)) != NULL;) {
		struct ns_cap_unit probe;
		struct stat st;
		char *child;
		size_t digits = strspn(de->d_name, "0123456789");
		if (de->d_name[0] == '.' || cap_parse_process_dir(de->d_name, &probe) ||
		    (digits >= 9 && !de->d_name[digits]))
			continue;
		if (asprintf(&child, "%s/%s", dir, de->d_name) < 0) {
			rc = -1;
			break;
		}
		if (strcmp(child, skip) != 0 && stat(child, &st) == 0 && S_ISDIR(st.st_mode))
			rc = add_sibling_exports(child, l);
		free(child);
	}
	if (d)
		closedir(d);
	return rc;
}

/* A shallow scan of a process folder also takes the exports that
 * neuron-explorer view -d wrote into the folders above it (up to
 * EXPORT_ANCESTORS levels): those naming an instance and pid, and a system
 * export above process folders (marked split above several). relocate()
 * hands them over. */
static int add_ancestor_exports(const char *dir, struct file_list *l)
{
	char *cur = strdup(dir), *below = NULL;
	int rc = cur ? 0 : -1;
	for (int level = 0; cur && level < EXPORT_ANCESTORS && !rc; level++) {
		char *parent = ns_capture_folder(cur);
		free(below);
		below = cur;
		cur = parent;
		if (!cur)
			rc = -1;
		if (!cur || strcmp(cur, ".") == 0)
			break;
		int procs = process_dirs(cur);
		if ((rc = procs < 0 ? -1 : 0) || (procs >= 1 && (rc = add_beside_exports(cur, below, l))))
			break;
		DIR *d = opendir(cur);
		if (!d && errno == ENOMEM)
			rc = -1;
		for (struct dirent *de; d && (de = readdir(d)) != NULL && !rc;) {
			struct ns_cap_file f;
			struct stat st;
			char *child;
			/* only names an export of -d can have: no sniffing of every JSON above */
			if (de->d_name[0] == '.' || !cap_ends_with(de->d_name, ".json") ||
			    (!strstr(de->d_name, "_pid_") && strcmp(de->d_name, "system_profile.json") != 0 &&
			     strcmp(de->d_name, "profile.json") != 0))
				continue;
			if (asprintf(&child, "%s/%s", cur, de->d_name) < 0) {
				rc = -1;
				break;
			}
			/* a system export above several process folders covers them all */
			size_t before = l->n;
			int is = stat(child, &st) == 0 && S_ISREG(st.st_mode) ? ns_capture_classify(child, &f, NULL) : 0;
			if (is < 0)
				rc = -1;
			else if (is > 0 && cap_is_export(f.kind) &&
				 (f.instance[0] || (f.kind == NS_CAP_SYSTEM_JSON && procs >= 1)))
				rc = cap_add_if_capture(l, child, &st, false);
			if (!rc && l->n > before && !f.instance[0] && f.kind == NS_CAP_SYSTEM_JSON && procs > 1)
				l->v[l->n - 1].split = true;
			free(child);
		}
		if (d)
			closedir(d);
	}
	free(below);
	free(cur);
	return rc;
}

int ns_capture_scan(const char *path, const struct ns_capture_opts *o, struct ns_capture **out,
		    struct ns_error *err)
{
	struct ns_dirset seen = { 0 };
	struct ns_capture *c = calloc(1, sizeof(*c));
	struct file_list l = { 0 };
	struct stat st;
	int rc = 0;
	*out = NULL;
	if (!c || !(c->root = strdup(path))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (size_t n = strlen(c->root); n > 1 && c->root[n - 1] == '/';)
		c->root[--n] = '\0';
	if (stat(path, &st) != 0) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
		goto out;
	}
	struct shallow_ctx sc = { &l, c->root };
	if (S_ISDIR(st.st_mode) && o && o->shallow)
		rc = ns_walk_files(c->root, 1, &seen, visit_shallow, &sc, err);
	else if (S_ISDIR(st.st_mode))
		rc = ns_walk_files(c->root, MAX_DEPTH, &seen, visit_capture_file, &l, err);
	if (!rc && S_ISDIR(st.st_mode) && o && o->shallow && add_ancestor_exports(c->root, &l))
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	else if (cap_add_if_capture(&l, c->root, &st, false))
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	if (!rc)
		rc = cap_group(c, &l, o, err);
out:
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].path);
	free(l.v);
	ns_dirset_release(&seen);
	if (rc) {
		ns_capture_free(c);
		c = NULL;
	}
	*out = c;
	return rc;
}

void ns_capture_free(struct ns_capture *c)
{
	if (!c)
		return;
	for (size_t u = 0; u < c->n_units; u++) {
		struct ns_cap_unit *un = &c->units[u];
		for (size_t k = 0; k < un->n_files; k++)
			free(un->files[k].path);
		free(un->files);
		free(un->pairs);
		free(un->gaps);
		free(un->dir);
		free(un->export_dir);
	}
	free(c->units);
	free(c->root);
	free(c);
}

int ns_capture_find(const struct ns_capture *c, const char *dir, const struct ns_cap_unit **found,
		    struct ns_error *err)
{
	char *want = realpath(dir, NULL);
	bool oom = !want && errno == ENOMEM;
	*found = NULL;
	for (size_t u = 0; c && want && u < c->n_units && !*found && !oom; u++) {
		char *real = realpath(c->units[u].dir, NULL);
		oom = !real && errno == ENOMEM;
		if (real && strcmp(real, want) == 0)
			*found = &c->units[u];
		free(real);
	}
	free(want);
	return oom ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
}
