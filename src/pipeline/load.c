#include "pipeline/load.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "pipeline/cache.h"
#include "pipeline/env.h"
#include "pipeline/neuron.h"
#include "store/store.h"

/* Tells the user interface of a warning (nothing without one). */
static void warn_user(const struct ns_load_opts *o, const struct ns_error *warn)
{
	if (warn->msg[0] && o->ui && o->ui->warn)
		o->ui->warn(o->ui->ctx, warn);
}

#define PROGRESS_MIN_BYTES (64u << 20) /* NEURON_STATS_PROGRESS_MIN's default */

/* A run's progress over all its inputs' bytes, passed to the user
 * interface as one percentage per change: a trace file alone, "DIR (2/5)"
 * for the traces of a directory. Every command that loads through
 * ns_run_load (report, diff, sql's cache, ingest) shows it alike. */
struct progress {
	const struct ns_load_ui *ui; /* NULL: none shown (a small run, nobody to tell) */
	const char *input;           /* the run's input, as given */
	char *const *paths;
	const struct ns_source_id *ids;
	size_t n, file;              /* the inputs; the one being parsed */
	uint64_t before, total;      /* bytes of the inputs parsed before it; of all */
	int shown;                   /* the percentage on the line now; -1: none */
};

/* Progress only for a run of at least $NEURON_STATS_PROGRESS_MIN bytes
 * (streams have no size: none). */
static void progress_init(struct progress *p, const char *input, char *const *paths, const struct ns_source_id *ids,
			  size_t n, const struct ns_load_opts *o)
{
	struct ns_error warn = { 0 };
	uint64_t min = ns_env_size("NEURON_STATS_PROGRESS_MIN", UINT64_MAX, &warn);
	warn_user(o, &warn);
	*p = (struct progress){ .input = input, .paths = paths, .ids = ids, .n = n, .shown = -1 };
	for (size_t i = 0; i < n; i++)
		p->total += (uint64_t)(ids[i].size > 0 ? ids[i].size : 0);
	if (o->ui && o->ui->progress && p->total && p->total >= (min ? min : PROGRESS_MIN_BYTES))
		p->ui = o->ui;
}

/* An ns_ingest_opts.progress: done of the current file's bytes. */
static void show_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;
	char label[4200];
	uint64_t size = (uint64_t)(p->ids[p->file].size > 0 ? p->ids[p->file].size : 0);
	(void)total;
	int pct = (int)((p->before + (done < size ? done : size)) * 100 / p->total);
	if (pct == p->shown)
		return;
	if (p->n == 1)
		snprintf(label, sizeof(label), "%s", p->paths[0]);
	else
		snprintf(label, sizeof(label), "%s (%zu/%zu)", p->input, p->file + 1, p->n);
	p->ui->progress(p->ui->ctx, label, (uint64_t)pct, 100);
	p->shown = pct;
}

/* After a file: the line is erased (warnings may follow), and the next
 * file's first step shows it again. */
static void progress_file_done(struct progress *p)
{
	if (p->ui && p->shown >= 0)
		p->ui->progress(p->ui->ctx, p->paths[p->file], 0, 0);
	p->shown = -1;
	p->before += (uint64_t)(p->ids[p->file].size > 0 ? p->ids[p->file].size : 0);
	p->file++;
}

static void free_paths(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* True if a trace loaded from the cache must be parsed again, because its
 * parse printed something the database does not keep: a truncation
 * warning (or --strict error), the notes given to ns_load_ui.parsed. */
static bool needs_parse(const struct ns_run *run)
{
	for (size_t i = 0; i < run->n; i++) {
		const struct ns_trace *t = &run->traces[i];
		if (t->truncated_at >= 0 || t->legacy_array || t->has_cat[NS_CAT_CUDA_PROFILER_RANGE])
			return true;
	}
	return false;
}

/* The database being written, if any. A cache is optional: when it cannot
 * be written (a full disk), it is dropped and the report goes on. */
struct sink {
	struct ns_store *store;
	bool optional;
	struct ns_error dropped; /* why an optional store was dropped */
};

/* Where a store call reports its failure. */
static struct ns_error *store_err(struct sink *sk, struct ns_error *err)
{
	return sk->optional ? &sk->dropped : err;
}

/* rc of a store call, or 0 after dropping an optional store that failed. */
static int store_result(struct sink *sk, int rc)
{
	if (rc && sk->optional) {
		ns_store_abort(sk->store);
		sk->store = NULL;
		return 0;
	}
	return rc;
}

/* An ns_event_sink (ctx = struct sink *). */
static int sink_event(void *ctx, const struct ns_trace *t, const struct ns_row_event *row, struct ns_error *err)
{
	struct sink *sk = ctx;
	if (!sk->store)
		return 0;
	return store_result(sk, ns_store_event(sk->store, t, row, store_err(sk, err)));
}

/* An ns_flow_sink (ctx = struct sink *). */
static int sink_flow(void *ctx, const struct ns_trace *t, const struct ns_row_flow *row, struct ns_error *err)
{
	struct sink *sk = ctx;
	if (!sk->store)
		return 0;
	return store_result(sk, ns_store_flow(sk->store, t, row, store_err(sk, err)));
}

/* The key_averages rows, made on a thread of their own while the calling
 * thread queues the per-event rows: the writer is the bottleneck then, so
 * that thread mostly waits. */
struct rows_job {
	struct ns_agg *agg;
	int rc;
	struct ns_error err;
};

static void *make_rows(void *arg)
{
	struct rows_job *job = arg;
	job->rc = ns_aggregate_rows(job->agg, &job->err);
	return NULL;
}

/* Aggregates t into sk's store. */
static int store_aggregate(struct sink *sk, struct ns_trace *t, struct ns_error *err)
{
	struct ns_agg agg;
	struct rows_job job = { .agg = &agg };
	pthread_t thread;
	int rc = ns_aggregate_fevents(t, NULL, &agg, err);
	if (rc)
		return rc;
	bool threaded = pthread_create(&thread, NULL, make_rows, &job) == 0;
	rc = store_result(sk, ns_store_event_stats(sk->store, t, &agg, store_err(sk, err)));
	if (threaded)
		pthread_join(thread, NULL);
	else
		make_rows(&job);
	if (!rc && job.rc) {
		*err = job.err;
		rc = job.rc;
	}
	if (!rc && sk->store) /* (unless writing the cache just failed) */
		rc = store_result(sk, ns_store_end_trace(sk->store, t, &agg, store_err(sk, err)));
	ns_agg_release(&agg);
	return rc;
}

/* Parses every path into run->traces, streaming each into sk's store if set. */
static int parse_all(char **paths, const struct ns_source_id *ids, size_t n, const struct ns_load_opts *o,
		     bool neuron, bool devprofs, struct sink *sk, struct progress *prog, struct ns_run *run,
		     struct ns_error *err)
{
	struct ns_error env_warn = { 0 };
	uint64_t max_out = ns_env_size("NEURON_STATS_MAX_DECOMPRESSED", UINT64_MAX, &env_warn);
	warn_user(o, &env_warn);
	memset(&env_warn, 0, sizeof(env_warn));
	uint32_t max_ratio = (uint32_t)ns_env_size("NEURON_STATS_MAX_RATIO", UINT32_MAX, &env_warn);
	warn_user(o, &env_warn);
	run->traces = calloc(n, sizeof(*run->traces));
	if (!run->traces)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct ns_trace *t = &run->traces[i];
		struct ns_error warn = { 0 };
		struct ns_ingest_opts io = { .strict = o->strict, .max_decompressed = max_out, .max_ratio = max_ratio,
					     .keep_python = o->keep_python };
		int64_t trace_id;
		int rc;
		ns_trace_init(t);
		run->n++;
		if (prog->ui) {
			io.progress = show_progress;
			io.progress_ctx = prog;
		}
		if (sk->store) {
			if ((rc = store_result(sk, ns_store_begin_trace(sk->store, &ids[i], &trace_id, store_err(sk, err)))))
				return rc;
			io.sink = sink_event;
			io.flow_sink = sink_flow;
			io.sink_ctx = sk;
		}
		rc = ns_ingest_file(paths[i], t, &io, &warn, err);
		progress_file_done(prog);
		if (rc)
			return rc;
		warn_user(o, &warn);
		if (o->ui && o->ui->parsed)
			o->ui->parsed(o->ui->ctx, t);
		/* Neuron device work from the system profile (docs/neuron.md) */
		if (neuron && (rc = ns_cli_neuron_attach(paths[i], t, o, io.sink, io.sink_ctx, err)))
			return rc;
		/* the device detail of its capture (docs/schema.md device_detail) */
		if (sk->store && o->db_out && devprofs &&
		    (rc = store_result(sk, ns_cli_neuron_store_detail(t, o, sk->store, store_err(sk, err)))))
			return rc;
		if (sk->store && (rc = store_result(sk, ns_store_end_events(sk->store, t, store_err(sk, err)))))
			return rc;
		if (sk->store && (rc = store_aggregate(sk, t, err)))
			return rc;
		/* (freeing it now overlaps the writer's last rows, and the next
		 * trace of a directory reuses the memory) */
		if (o->db_only && sk->store)
			ns_trace_release(t);
	}
	return 0;
}

/* The inputs' bytes: about a database's size, which is 0.8 of its JSON (a
 * compressed trace's size is a floor). */
static int64_t total_size(const struct ns_source_id *ids, size_t n)
{
	int64_t bytes = 0;
	for (size_t i = 0; i < n; i++)
		bytes += ids[i].size;
	return bytes;
}

/* After the parse: commits sk's database (when one is written); a cache
 * that could not be written is a warning, never an error. */
static int commit_store(struct sink *sk, const char *cache, const struct ns_load_opts *o, struct ns_error *err)
{
	int rc = 0;
	if (sk->store) {
		struct ns_store *store = sk->store;
		sk->store = NULL; /* (commit frees it, whatever happens) */
		rc = ns_store_commit(store, store_err(sk, err));
		if (sk->optional) {
			if (rc == 0) {
				struct ns_error warn = { 0 };
				ns_pipeline_cache_written(cache, &warn);
				warn_user(o, &warn);
			}
			rc = 0; /* a failed cache write does not fail the report */
		}
	}
	if (rc == 0 && sk->dropped.msg[0]) {
		struct ns_error warn = { 0 };
		ns_error_set(&warn, NS_ERR_IO, "the cache is not written: %s", sk->dropped.msg);
		warn_user(o, &warn);
	}
	return rc;
}

int ns_run_load(const char *input, const struct ns_load_opts *o, struct ns_run *run, struct ns_error *err)
{
	char **paths = NULL;
	size_t n = 0;
	struct ns_source_id *ids = NULL;
	struct sink sk = { .store = NULL };
	char *cache = NULL, *target = NULL;
	const char *db_out = o->db_out;
	int rc;

	memset(run, 0, sizeof(*run));
	if (ns_store_is_db(input)) {
		run->from_db = true;
		return ns_store_load(input, &run->traces, &run->n, err);
	}
	bool neuron = false; /* Neuron exports take part: they are not in the cache key */
	bool devprofs = false;
	if ((rc = ns_cli_neuron_probe(input, &neuron, &devprofs, err)))
		goto out;
	rc = ns_find_traces(input, &paths, &n, err);
	if (rc)
		goto out;
	rc = ns_source_ids(paths, n, &ids, err);
	if (rc)
		goto out;
	if (o->check_output) { /* before any work */
		if ((rc = ns_store_check_output(o->db_out, o->force, ids, n, &target, err)))
			goto out;
		db_out = target;
	}
	if (o->use_cache && !db_out) {
		bool valid;
		cache = ns_pipeline_cache_lookup(ids, n, neuron, &valid);
		if (valid) {
			run->from_db = true;
			rc = ns_store_load(cache, &run->traces, &run->n, err);
			if (rc == 0 && !needs_parse(run)) {
				ns_pipeline_cache_used(cache);
				goto out;
			}
			/* an unreadable cache is rebuilt, not fatal; a damaged trace is
			 * parsed again so its warning (or --strict error) is the same
			 * (needs_parse) */
			ns_run_release(run);
			rc = 0;
		}
		db_out = cache;
	}
	if (db_out) {
		sk.optional = !o->db_out;
		if ((rc = store_result(&sk, ns_store_create(db_out, &sk.store, store_err(&sk, err)))))
			goto out;
		if (sk.store)
			ns_store_reserve(sk.store, total_size(ids, n));
	}
	struct progress prog;
	progress_init(&prog, input, paths, ids, n, o);
	rc = parse_all(paths, ids, n, o, neuron, devprofs, &sk, &prog, run, err);
	if (rc == 0)
		rc = commit_store(&sk, cache, o, err);
out:
	ns_store_abort(sk.store);
	if (ids)
		ns_source_ids_free(ids, n);
	free(cache);
	free(target);
	free_paths(paths, n);
	if (rc)
		ns_run_release(run);
	return rc;
}

void ns_run_release(struct ns_run *run)
{
	for (size_t i = 0; i < run->n; i++)
		ns_trace_release(&run->traces[i]);
	free(run->traces);
	memset(run, 0, sizeof(*run));
}

/* Parses input into o->db_out. */
static int ingest(const char *input, const struct ns_load_opts *o, struct ns_error *err)
{
	struct ns_run run;
	struct ns_load_opts lo = *o;
	lo.use_cache = false;
	lo.db_only = true;
	int rc = ns_run_load(input, &lo, &run, err);
	ns_run_release(&run);
	return rc;
}

/* Ingests input into a private database in $TMPDIR (else /tmp): *db_path,
 * for the caller to delete. */
static int temporary_db(const char *input, const struct ns_load_opts *o, char **db_path, struct ns_error *err)
{
	const char *dir = getenv("TMPDIR");
	struct ns_load_opts lo = *o;
	int fd, rc;
	if (asprintf(db_path, "%s/neuron-stats-sql-XXXXXX", dir && *dir ? dir : "/tmp") < 0) {
		*db_path = NULL;
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	if ((fd = mkstemp(*db_path)) < 0) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: cannot create a temporary database: %s", *db_path,
				  strerror(errno));
		free(*db_path);
		*db_path = NULL;
		return rc;
	}
	close(fd);
	lo.db_out = *db_path;
	lo.db_temporary = true;
	if ((rc = ingest(input, &lo, err))) {
		unlink(*db_path);
		free(*db_path);
		*db_path = NULL;
	}
	return rc;
}

/* The cache database of input's traces (the policy of ns_run_load), valid
 * or written now; NULL where they are not cached, or where the cache could
 * not be written (*warn says why). */
static int cached_db(const char *input, const struct ns_load_opts *o, char **db_path, struct ns_error *warn,
		     struct ns_error *err)
{
	char **paths = NULL;
	size_t n = 0;
	struct ns_source_id *ids = NULL;
	struct ns_error cache_err = { 0 };
	bool neuron = false, devprofs = false, valid;
	int rc;
	*db_path = NULL;
	if ((rc = ns_find_traces(input, &paths, &n, err)) || (rc = ns_source_ids(paths, n, &ids, err)) ||
	    (rc = ns_cli_neuron_probe(input, &neuron, &devprofs, err)))
		goto out;
	if (!(*db_path = ns_pipeline_cache_lookup(ids, n, neuron, &valid)))
		goto out;
	if (valid) {
		ns_pipeline_cache_used(*db_path);
		goto out;
	}
	struct ns_load_opts lo = *o;
	lo.db_out = *db_path;
	if (!(rc = ingest(input, &lo, &cache_err))) {
		ns_pipeline_cache_written(*db_path, warn);
		goto out;
	}
	free(*db_path);
	*db_path = NULL;
	if (rc != NS_ERR_IO) { /* (an error in the input would be the same again) */
		*err = cache_err;
		goto out;
	}
	ns_error_set(warn, NS_ERR_IO, "the cache is not written: %s", cache_err.msg);
	rc = 0;
out:
	ns_source_ids_free(ids, n);
	free_paths(paths, n);
	return rc;
}

int ns_run_query_db(const char *input, const struct ns_load_opts *o, char **db_path, bool *temporary,
		    struct ns_error *err)
{
	struct ns_error warn = { 0 };
	int rc = 0;
	*db_path = NULL;
	*temporary = false;
	if (ns_store_is_db(input))
		return 0;
	rc = o->use_cache ? cached_db(input, o, db_path, &warn, err) : 0;
	warn_user(o, &warn);
	if (rc || *db_path)
		return rc;
	*temporary = true;
	return temporary_db(input, o, db_path, err);
}
