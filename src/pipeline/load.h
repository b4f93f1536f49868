/* Turning a command-line input (trace file, directory of traces, or a
 * database) into loaded traces, through the cache when allowed. */
#ifndef NS_LOAD_H
#define NS_LOAD_H

#include <stdbool.h>

#include "aggregate/aggregate.h"
#include "common/error.h"
#include "common/trace.h"

struct ns_load_opts {
	const char *db_out;  /* write a database here while parsing (NULL: none) */
	bool check_output;   /* db_out is the user's -o: ns_store_check_output first */
	bool force;          /* with check_output: replace a file that is not a database */
	bool use_cache;      /* read a valid cache; write one on a miss */
	bool strict;
	bool db_only;        /* only the database is wanted: each trace is released once stored */
	const char *device_time_unit; /* Neuron device-profile exports: ns, us, ms, s (NULL: detect) */
};

struct ns_run {
	struct ns_trace *traces;
	size_t n;
	bool from_db;
};

int ns_run_load(const char *input, const struct ns_load_opts *o, struct ns_run *run, struct ns_error *err);
void ns_run_release(struct ns_run *run);

#endif
