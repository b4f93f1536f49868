/* Turning a command-line input (trace file, directory of traces, or a
 * database) into loaded traces, through the cache when allowed. */
#ifndef NS_LOAD_H
#define NS_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "aggregate/aggregate.h"
#include "common/error.h"
#include "common/trace.h"

/* What a load tells its user, for cli/ to print: the pipeline prints none
 * of it itself. Any member may be NULL. */
struct ns_load_ui {
	void *ctx;
	/* a warning ("neuron-stats: warning: " + warn->msg) */
	void (*warn)(void *ctx, const struct ns_error *warn);
	/* a line for people ("neuron-stats: " + text): a conversion run, how
	 * Neuron device events were matched */
	void (*note)(void *ctx, const char *text);
	/* after trace t is parsed: what it learned that the table does not show */
	void (*parsed)(void *ctx, const struct ns_trace *t);
	/* a big run's progress: done of total (a percentage today) while what
	 * (a trace, or "DIR (2/5)" in a directory's run) loads; total 0: the
	 * line is to be erased (a file ended; warnings may follow) */
	void (*progress)(void *ctx, const char *path, uint64_t done, uint64_t total);
};

struct ns_load_opts {
	const char *db_out;  /* write a database here while parsing (NULL: none) */
	bool check_output;   /* db_out is the user's -o: ns_store_check_output first */
	bool force;          /* with check_output: replace a file that is not a database */
	unsigned jobs;       /* traces parsed at once (--jobs; 0 or 1: one after the other) */
	bool use_cache;      /* ns_run_query_db (sql): use the database cache; ns_run_load keeps none */
	bool strict;
	bool db_only;        /* only the database is wanted: each trace is released once stored */
	bool keep_python;    /* keep python_function calls in the traces (`stacks --python`; the cache has none) */
	bool db_temporary;   /* db_out is deleted after use: Neuron conversions are kept in the cache folder */
	const char *device_time_unit; /* Neuron device-profile exports: ns, us, ms, s (NULL: detect) */
	const struct ns_load_ui *ui;  /* told the warnings, notes and progress (NULL: nobody) */
};

struct ns_run {
	struct ns_trace *traces;
	size_t n;
	bool from_db;
};

int ns_run_load(const char *input, const struct ns_load_opts *o, struct ns_run *run, struct ns_error *err);
void ns_run_release(struct ns_run *run);

/* The database a query on input reads (sql): input itself when it is a
 * database (*db_path NULL); else with o->use_cache the cache database of its
 * traces, by ns_run_load's policy, ingested now unless the cached one is
 * valid; else (a stream, Neuron exports, no cache folder, a cache that
 * cannot be written) a private temporary database (*temporary), which the
 * caller deletes. Caller frees *db_path. */
int ns_run_query_db(const char *input, const struct ns_load_opts *o, char **db_path, bool *temporary,
		    struct ns_error *err);

#endif
