#include "pipeline/cache.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sort.h"
#include "ingest/ingest.h"
#include "ntff/capture.h"
#include "pipeline/env.h"

static int by_string(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The cache folder, from the environment; NULL without one. */
static char *cache_dir(void)
{
	const char *env;
	char *dir = NULL;
	int rc;
	if ((env = getenv("NEURON_STATS_CACHE_DIR")) && *env)
		rc = asprintf(&dir, "%s", env);
	else if ((env = getenv("XDG_CACHE_HOME")) && *env == '/') /* relative values are ignored (XDG spec) */
		rc = asprintf(&dir, "%s/neuron-stats", env);
	else if ((env = getenv("HOME")) && *env)
		rc = asprintf(&dir, "%s/.cache/neuron-stats", env);
	else
		return NULL;
	return rc < 0 ? NULL : dir;
}

char *ns_pipeline_cache_folder(void)
{
	char *dir = cache_dir();
	free(ns_cache_path(dir, NULL, 0)); /* (creates it, removes stale temporaries) */
	return dir;
}

char *ns_pipeline_cache_lookup(const struct ns_source_id *ids, size_t n, bool neuron, bool *valid)
{
	char *dir, *db;
	*valid = false;
	if (neuron || !(dir = cache_dir()))
		return NULL;
	db = ns_cache_path(dir, ids, n);
	free(dir);
	*valid = db && ns_cache_valid(db, ids, n);
	return db;
}

void ns_pipeline_cache_used(const char *db)
{
	ns_cache_touch(db);
}

void ns_pipeline_cache_written(const char *db, struct ns_error *warn)
{
	uint64_t max = ns_env_size("NEURON_STATS_CACHE_MAX", 1, UINT64_MAX, warn);
	ns_cache_prune(db, max ? max : NS_CACHE_MAX_DEFAULT);
}

/* ---- the result cache: the key ---- */

/* A growing text; oom set when an append failed. */
struct text {
	char *s;
	size_t len, cap;
	bool oom;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	for (int pass = 0; pass < 2 && !t->oom; pass++) {
		va_start(ap, fmt);
		int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = true;
		} else if (t->s && (size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		} else {
			size_t cap = (t->len + (size_t)n + 1) * 2;
			char *grown = realloc(t->s, cap);
			t->oom = !grown;
			if (grown) {
				t->s = grown;
				t->cap = cap;
			}
		}
	}
}

/* A file's identity: path, size, mtime (ns), inode and device. */
static bool add_file(struct text *t, const char *what, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return false;
	add(t, "%s %zu:%s %lld %lld.%09ld %llu %llu\n", what, strlen(path), path, (long long)st.st_size,
	    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (unsigned long long)st.st_ino,
	    (unsigned long long)st.st_dev);
	return true;
}

/* The program itself: another build may print otherwise. */
static bool add_program(struct text *t)
{
	char *exe = realpath("/proc/self/exe", NULL);
	bool ok = exe && add_file(t, "program", exe);
	free(exe);
	return ok;
}

/* Only a capture of framework traces: Neuron files (NEFFs, device traces,
 * exports, also those above a process folder) may be converted, looked up
 * in the conversion cache or read by options, outside the key. */
static bool traces_only(const char *input, bool is_dir)
{
	struct ns_capture *c = NULL;
	struct ns_capture_opts co = { .shallow = !is_dir };
	struct ns_error err = { 0 };
	char *dir = is_dir ? NULL : ns_capture_folder(input);
	bool only = (is_dir || dir) && ns_capture_scan(dir ? dir : input, &co, &c, &err) == 0;
	for (size_t u = 0; only && u < c->n_units; u++)
		for (size_t k = 0; k < c->units[u].n_files; k++)
			only &= c->units[u].files[k].kind == NS_CAP_TRACE;
	ns_capture_free(c);
	free(dir);
	return only;
}

/* The traces input stands for, each by its identity; false when input is
 * not cached (a stream, a database, a Neuron capture, an error to report). */
static bool add_input(struct text *t, const char *input)
{
	struct stat st;
	struct ns_error err = { 0 };
	struct ns_source_id *ids = NULL;
	char **paths = NULL;
	size_t n = 0;
	bool ok = strcmp(input, "-") != 0 && stat(input, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
		  !ns_store_is_db(input) && traces_only(input, S_ISDIR(st.st_mode)) &&
		  ns_find_traces(input, &paths, &n, &err) == 0 && ns_source_ids(paths, n, &ids, &err) == 0;
	add(t, "input %zu:%s %zu\n", strlen(input), input, n);
	for (size_t i = 0; ok && i < n; i++) {
		ok = !ids[i].stream;
		add(t, "trace %zu:%s %lld %lld %llu %llu\n", strlen(ids[i].abspath), ids[i].abspath,
		    (long long)ids[i].size, (long long)ids[i].mtime_ns, (unsigned long long)ids[i].ino,
		    (unsigned long long)ids[i].dev);
	}
	ns_source_ids_free(ids, n);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return ok;
}

/* Every NEURON_STATS_* variable (limits, the cache's own), sorted. */
static void add_environment(struct text *t)
{
	extern char **environ;
	size_t n = 0;
	for (char **e = environ; e && *e; e++)
		n += strncmp(*e, "NEURON_STATS_", 13) == 0;
	const char **v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		t->oom = true;
		return;
	}
	n = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "NEURON_STATS_", 13) == 0)
			v[n++] = *e;
	ns_sort(v, n, sizeof(*v), by_string);
	for (size_t i = 0; i < n; i++)
		add(t, "env %zu:%s\n", strlen(v[i]), v[i]);
	free(v);
}

char *ns_pipeline_result_key(const char *command, char *const *args, size_t n_args, char *const *inputs,
			     size_t n_inputs, size_t *len)
{
	struct text t = { 0 };
	char *cwd = getcwd(NULL, 0);
	bool ok = cwd && add_program(&t);
	add(&t, "neuron-stats result cache 1\ncommand %s\ncwd %zu:%s\n", command, cwd ? strlen(cwd) : 0,
	    cwd ? cwd : "");
	free(cwd);
	for (size_t i = 0; i < n_args; i++)
		add(&t, "arg %zu:%s\n", strlen(args[i]), args[i]);
	add_environment(&t);
	for (size_t i = 0; ok && i < n_inputs; i++)
		ok = add_input(&t, inputs[i]);
	if (!ok || t.oom) {
		free(t.s);
		return NULL;
	}
	*len = t.len;
	return t.s;
}

char *ns_pipeline_result_entry(const char *key, size_t len)
{
	char *dir = ns_pipeline_cache_folder(), *path = NULL;
	if (dir)
		path = ns_result_path(dir, key, len);
	free(dir);
	return path;
}
