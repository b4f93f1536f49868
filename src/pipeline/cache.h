/* The cache's policy (docs/cli.md "Cache"): the database cache of `sql`
 * on traces, and the result cache of the commands that print a result
 * from traces (report, diff, the analyses); store/cache.c and
 * store/result.c are the mechanism. */
#ifndef NS_PIPELINE_CACHE_H
#define NS_PIPELINE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "store/store.h"

/* The cache folder ($NEURON_STATS_CACHE_DIR, else
 * $XDG_CACHE_HOME/neuron-stats, else ~/.cache/neuron-stats), created if
 * missing; NULL without one. Caller frees. */
char *ns_pipeline_cache_folder(void);
/* The cache database for the traces ids in the cache folder, or NULL
 * where they are not cached: a stream has no identity to key on, Neuron
 * exports (neuron) are not part of the key, and there may be no cache
 * folder. *valid: the database can be used as is. Caller frees. */
char *ns_pipeline_cache_lookup(const struct ns_source_id *ids, size_t n, bool neuron, bool *valid);
/* After a hit on db: marks it as just used (the pruning order). */
void ns_pipeline_cache_used(const char *db);
/* After writing db: keeps the folder within $NEURON_STATS_CACHE_MAX bytes
 * (default NS_CACHE_MAX_DEFAULT), least recently used first, db kept;
 * *warn says when that variable is not a size. */
void ns_pipeline_cache_written(const char *db, struct ns_error *warn);

/* The result cache (docs/cli.md "Cache"): the key of a command's output,
 * NULL (not cached) where it cannot be told from the command line, the
 * program, the working directory, the NEURON_STATS_* environment and the
 * identity of each trace the inputs stand for: an input that is a stream,
 * a database or a capture with Neuron files, or an error to report.
 * *len: its length. Caller frees. */
char *ns_pipeline_result_key(const char *command, char *const *args, size_t n_args, char *const *inputs,
			     size_t n_inputs, size_t *len);
/* The entry of key in the cache folder (created if missing); NULL without
 * one. Caller frees. After writing it: ns_pipeline_cache_written. */
char *ns_pipeline_result_entry(const char *key, size_t len);

#endif
