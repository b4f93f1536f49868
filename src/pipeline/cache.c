#include "pipeline/cache.h"

#include <stdio.h>
#include <stdlib.h>

#include "pipeline/env.h"

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
	uint64_t max = ns_env_size("NEURON_STATS_CACHE_MAX", UINT64_MAX, warn);
	ns_cache_prune(db, max ? max : NS_CACHE_MAX_DEFAULT);
}
