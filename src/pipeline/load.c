#include "pipeline/load.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jobs.h"
#include "ingest/ingest.h"
#include "pipeline/cache.h"
#include "pipeline/env.h"
#include "pipeline/neuron.h"
#include "pipeline/rowlog.h"
#include "store/store.h"

/* Tells the user interface of a warning (nothing without one). */
static void warn_user(const struct ns_load_opts *o, const struct ns_error *warn)
{
	if (warn->msg[0] && o->ui && o->ui->warn)
		o->ui->warn(o->ui->ctx, warn);
}

/* ns_env_size, its warning (a value it does not take) told the user. */
static uint64_t env_size(const struct ns_load_opts *o, const char *name, uint64_t min, uint64_t max)
{
	struct ns_error warn = { 0 };
	uint64_t v = ns_env_size(name, min, max, &warn);
	warn_user(o, &warn);
	return v;
}

/* NEURON_STATS_GZIP: "zlib" decodes gzip with zlib, "isal" (the default)
 * with ISA-L where this build has it; another value is told and ignored. */
static bool env_gzip_zlib(const struct ns_load_opts *o)
{
	const char *v = getenv("NEURON_STATS_GZIP");
	struct ns_error warn = { 0 };
	if (!v || !*v || strcmp(v, "isal") == 0)
		return false;
	if (strcmp(v, "zlib") == 0)
		return true;
	ns_error_set(&warn, NS_ERR_USAGE, "NEURON_STATS_GZIP=%s is neither zlib nor isal: ignored", v);
	warn_user(o, &warn);
	return false;
}

#define PROGRESS_MIN_BYTES (64u << 20) /* NEURON_STATS_PROGRESS_MIN's default */
#define SPLIT_MIN_BYTES (32u << 20)    /* NEURON_STATS_SPLIT_MIN's default */

/* A run's progress over all its inputs' bytes, passed to the user
 * interface as one percentage per change: a trace file alone, "DIR (2/5)"
 * for the traces of a directory (2: the files parsed so far, plus one).
 * Every command that loads through ns_run_load (report, diff, sql's cache,
 * ingest) shows it alike. With --jobs, the parses of several files add to
 * it from their threads (lock). */
struct progress {
	const struct ns_load_ui *ui; /* NULL: none shown (a small run, nobody to tell) */
	const char *input;           /* the run's input, as given */
	char *const *paths;
	const struct ns_source_id *ids;
	size_t n, files_done;        /* the inputs; those parsed */
	uint64_t *file_done;         /* per input: its bytes parsed so far */
	uint64_t done, total;        /* bytes of the inputs parsed; of all */
	int shown;                   /* the percentage on the line now; -1: none */
	pthread_mutex_t lock;
};

/* What a file's parse is told to report its progress to. */
struct file_progress {
	struct progress *run;
	size_t file;
};

static uint64_t file_size(const struct progress *p, size_t i)
{
	return (uint64_t)(p->ids[i].size > 0 ? p->ids[i].size : 0);
}

/* Progress only for a run of at least $NEURON_STATS_PROGRESS_MIN bytes
 * (streams have no size: none). */
static void progress_init(struct progress *p, const char *input, char *const *paths, const struct ns_source_id *ids,
			  size_t n, const struct ns_load_opts *o)
{
	uint64_t min = env_size(o, "NEURON_STATS_PROGRESS_MIN", 1, UINT64_MAX);
	*p = (struct progress){ .input = input, .paths = paths, .ids = ids, .n = n, .shown = -1 };
	for (size_t i = 0; i < n; i++)
		p->total += file_size(p, i);
	if (o->ui && o->ui->progress && p->total && p->total >= (min ? min : PROGRESS_MIN_BYTES) &&
	    (p->file_done = calloc(n, sizeof(*p->file_done)))) {
		p->ui = o->ui;
		pthread_mutex_init(&p->lock, NULL);
	}
}

static void progress_release(struct progress *p)
{
	if (p->ui)
		pthread_mutex_destroy(&p->lock);
	free(p->file_done);
	p->file_done = NULL;
	p->ui = NULL;
}

/* An ns_ingest_opts.progress (ctx = struct file_progress *): done of the
 * file's bytes. */
static void show_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct file_progress *fp = ctx;
	struct progress *p = fp->run;
	char label[4200];
	uint64_t size = file_size(p, fp->file);
	(void)total;
	done = done < size ? done : size;
	pthread_mutex_lock(&p->lock);
	p->done += done - p->file_done[fp->file];
	p->file_done[fp->file] = done;
	int pct = (int)(p->done * 100 / p->total);
	if (pct != p->shown) {
		if (p->n == 1)
			snprintf(label, sizeof(label), "%s", p->paths[0]);
		else
			snprintf(label, sizeof(label), "%s (%zu/%zu)", p->input, p->files_done + 1, p->n);
		p->ui->progress(p->ui->ctx, label, (uint64_t)pct, 100);
		p->shown = pct;
	}
	pthread_mutex_unlock(&p->lock);
}

/* The line erased, if shown (p->lock held); the next step shows it again. */
static void erase_line(struct progress *p)
{
	if (p->shown >= 0)
		p->ui->progress(p->ui->ctx, p->input, 0, 0);
	p->shown = -1;
}

static void progress_erase(struct progress *p)
{
	if (!p->ui)
		return;
	pthread_mutex_lock(&p->lock);
	erase_line(p);
	pthread_mutex_unlock(&p->lock);
}

/* After file i's parse: its bytes all count, and the line is erased; it
 * stays off (the other parses wait) until progress_resume, while file i's
 * warnings are told. */
static void progress_file_done(struct progress *p, size_t i)
{
	if (!p->ui)
		return;
	pthread_mutex_lock(&p->lock);
	p->done += file_size(p, i) - p->file_done[i];
	p->file_done[i] = file_size(p, i);
	p->files_done++;
	erase_line(p);
}

static void progress_resume(struct progress *p)
{
	if (p->ui)
		pthread_mutex_unlock(&p->lock);
}

static void free_paths(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* The database being written, if any. */
struct sink {
	struct ns_store *store;
};

/* An ns_event_sink (ctx = struct sink *). */
static int sink_event(void *ctx, const struct ns_trace *t, const struct ns_row_event *row, struct ns_error *err)
{
	struct sink *sk = ctx;
	if (!sk->store)
		return 0;
	return ns_store_event(sk->store, t, row, err);
}

/* An ns_flow_sink (ctx = struct sink *). */
static int sink_flow(void *ctx, const struct ns_trace *t, const struct ns_row_flow *row, struct ns_error *err)
{
	struct sink *sk = ctx;
	if (!sk->store)
		return 0;
	return ns_store_flow(sk->store, t, row, err);
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

/* The key_averages rows of agg (its FunctionEvents made) and the end of
 * t in sk's store; the rows made on a thread meanwhile unless made_rows. */
static int store_stats(struct sink *sk, struct ns_trace *t, struct ns_agg *agg, bool made_rows, struct ns_error *err)
{
	struct rows_job job = { .agg = agg };
	pthread_t thread;
	bool threaded = !made_rows && pthread_create(&thread, NULL, make_rows, &job) == 0;
	int rc = sk->store ? ns_store_event_stats(sk->store, t, agg, err) : 0;
	if (threaded)
		pthread_join(thread, NULL);
	else if (!made_rows)
		make_rows(&job);
	if (!rc && job.rc) {
		*err = job.err;
		rc = job.rc;
	}
	if (!rc && sk->store)
		rc = ns_store_end_trace(sk->store, t, agg, err);
	return rc;
}

/* Aggregates t into sk's store. */
static int store_aggregate(struct sink *sk, struct ns_trace *t, struct ns_error *err)
{
	struct ns_agg agg;
	int rc = ns_aggregate_fevents(t, NULL, &agg, err);
	if (!rc)
		rc = store_stats(sk, t, &agg, false, err);
	ns_agg_release(&agg);
	return rc;
}

/* What the parse of one trace leaves for its finish. */
struct parsed {
	struct ns_error warn, err;
	struct file_progress progress;
	struct ns_rowlog rows;  /* in parallel with a store: its rows, for the store */
	struct ns_agg agg;      /* likewise: its FunctionEvents and key_averages rows */
	bool has_agg;
};

/* A run's traces being parsed, by ns_jobs_run: each parsed (work) on a
 * thread of the pool, then finished in order on the calling one (stored,
 * its warnings told). With one job, or Neuron exports to attach, the store
 * is fed while parsing, as a loop would; with more, each trace's rows are
 * recorded and aggregated on its thread, and fed to the store in order. */
struct parse_run {
	char *const *paths;
	const struct ns_source_id *ids;
	const struct ns_load_opts *o;
	bool neuron, devprofs, parallel;
	uint64_t max_out;
	uint32_t max_ratio;
	bool gzip_zlib;          /* NEURON_STATS_GZIP=zlib */
	uint64_t split_min;      /* ns_ingest_opts: a core to spare for each trace, else 0 */
	uint32_t split_permille, split_parts;
	struct sink *sk;
	struct progress *prog;
	struct ns_run *run;
	struct parsed *parsed;
};

/* ns_job_work: parses trace i (recording its rows and aggregating them in
 * parallel; streaming them into the store otherwise). */
static int parse_one(void *ctx, size_t i)
{
	struct parse_run *pr = ctx;
	struct ns_trace *t = &pr->run->traces[i];
	struct parsed *p = &pr->parsed[i];
	struct sink *sk = pr->sk;
	struct ns_ingest_opts io = { .strict = pr->o->strict, .max_decompressed = pr->max_out,
				     .max_ratio = pr->max_ratio, .keep_python = pr->o->keep_python,
				     .gzip_zlib = pr->gzip_zlib };
	int64_t trace_id;
	int rc;
	if (pr->prog->ui) {
		p->progress = (struct file_progress){ .run = pr->prog, .file = i };
		io.progress = show_progress;
		io.progress_ctx = &p->progress;
	}
	if (sk->store && pr->parallel) {
		io.sink = ns_rowlog_event;
		io.flow_sink = ns_rowlog_flow;
		io.sink_ctx = &p->rows;
	} else if (sk->store) {
		if ((rc = ns_store_begin_trace(sk->store, &pr->ids[i], &trace_id, &p->err)))
			return rc;
		io.sink = sink_event;
		io.flow_sink = sink_flow;
		io.sink_ctx = sk;
	} else {
		io.split_min = pr->split_min;
		io.split_permille = pr->split_permille;
		io.split_parts = pr->split_parts;
	}
	if ((rc = ns_ingest_file(pr->paths[i], t, &io, &p->warn, &p->err)))
		return rc;
	if (sk->store && pr->parallel) {
		p->has_agg = true;
		if (!(rc = ns_aggregate_fevents(t, NULL, &p->agg, &p->err)))
			rc = ns_aggregate_rows(&p->agg, &p->err);
	}
	return rc;
}

/* Feeds trace i's recorded rows and aggregation to the store. */
static int store_recorded(struct parse_run *pr, size_t i, struct ns_error *err)
{
	struct ns_trace *t = &pr->run->traces[i];
	struct parsed *p = &pr->parsed[i];
	struct sink *sk = pr->sk;
	int64_t trace_id;
	int rc;
	if ((rc = ns_store_begin_trace(sk->store, &pr->ids[i], &trace_id, err)) ||
	    (rc = ns_rowlog_replay(&p->rows, t, sink_event, sink_flow, sk, err)))
		return rc;
	ns_rowlog_release(&p->rows);
	if (sk->store && (rc = ns_store_end_events(sk->store, t, err)))
		return rc;
	return sk->store ? store_stats(sk, t, &p->agg, true, err) : 0;
}

/* ns_job_finish: trace i's warnings and notes told, its Neuron device
 * work attached, its rows stored (in order, whatever the jobs). */
static int finish_one(void *ctx, size_t i)
{
	struct parse_run *pr = ctx;
	struct ns_trace *t = &pr->run->traces[i];
	struct parsed *p = &pr->parsed[i];
	struct sink *sk = pr->sk;
	const struct ns_load_opts *o = pr->o;
	int rc = 0;
	progress_file_done(pr->prog, i);
	warn_user(o, &p->warn);
	if (o->ui && o->ui->parsed)
		o->ui->parsed(o->ui->ctx, t);
	progress_resume(pr->prog);
	/* Neuron device work from the system profile (docs/neuron.md) */
	if (pr->neuron && (rc = ns_cli_neuron_attach(pr->paths[i], t, o, sk->store ? sink_event : NULL,
						     sk->store ? sk : NULL, &p->err)))
		return rc;
	/* the device detail of its capture (docs/schema.md device_detail) */
	if (sk->store && o->db_out && pr->devprofs &&
	    (rc = ns_cli_neuron_store_detail(t, o, sk->store, &p->err)))
		return rc;
	if (sk->store && pr->parallel)
		rc = store_recorded(pr, i, &p->err);
	else if (sk->store && !(rc = ns_store_end_events(sk->store, t, &p->err)))
		rc = store_aggregate(sk, t, &p->err);
	if (p->has_agg)
		ns_agg_release(&p->agg);
	p->has_agg = false;
	/* (freeing it now overlaps the writer's last rows, and the next
	 * trace of a directory reuses the memory) */
	if (!rc && o->db_only && pr->sk->store)
		ns_trace_release(t);
	return rc;
}

/* Parses every path into run->traces, streaming each into sk's store if
 * set, on up to o->jobs threads. */
static int parse_all(char **paths, const struct ns_source_id *ids, size_t n, const struct ns_load_opts *o,
		     bool neuron, bool devprofs, struct sink *sk, struct progress *prog, struct ns_run *run,
		     struct ns_error *err)
{
	struct parse_run pr = { .paths = paths, .ids = ids, .o = o, .neuron = neuron, .devprofs = devprofs,
				.sk = sk, .prog = prog, .run = run };
	unsigned jobs = o->jobs > 1 && !neuron && !devprofs ? o->jobs : 1;
	int rc;
	pr.max_out = env_size(o, "NEURON_STATS_MAX_DECOMPRESSED", 1, UINT64_MAX);
	pr.max_ratio = (uint32_t)env_size(o, "NEURON_STATS_MAX_RATIO", 1, UINT32_MAX);
	pr.gzip_zlib = env_gzip_zlib(o);
	pr.parallel = jobs > 1 && n > 1;
	/* one file on two cores when there are more cores than traces (tests
	 * force it on small files, and pick the parts: NEURON_STATS_SPLIT_PARTS
	 * and _AT) */
	if (o->jobs > n) {
		pr.split_min = env_size(o, "NEURON_STATS_SPLIT_MIN", 1, UINT64_MAX);
		pr.split_min = pr.split_min ? pr.split_min : SPLIT_MIN_BYTES;
		pr.split_permille = (uint32_t)env_size(o, "NEURON_STATS_SPLIT_AT", 1, 999);
		pr.split_parts = (uint32_t)env_size(o, "NEURON_STATS_SPLIT_PARTS", 2, 64);
	}
	run->traces = calloc(n, sizeof(*run->traces));
	pr.parsed = calloc(n, sizeof(*pr.parsed));
	if (!run->traces || !pr.parsed) {
		free(pr.parsed);
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	for (; run->n < n; run->n++)
		ns_trace_init(&run->traces[run->n]);
	rc = ns_jobs_run(n, jobs, parse_one, finish_one, &pr);
	progress_erase(prog);
	for (size_t i = 0; i < n; i++) {
		struct parsed *p = &pr.parsed[i];
		if (rc && p->err.status && !err->status) /* (the first trace that failed, in order) */
			*err = p->err;
		ns_rowlog_release(&p->rows);
		if (p->has_agg)
			ns_agg_release(&p->agg);
	}
	free(pr.parsed);
	return rc;
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

/* After the parse: commits sk's database (when one is written). */
static int commit_store(struct sink *sk, struct ns_error *err)
{
	struct ns_store *store = sk->store;
	sk->store = NULL; /* (commit frees it, whatever happens) */
	return store ? ns_store_commit(store, err) : 0;
}

int ns_run_load(const char *input, const struct ns_load_opts *o, struct ns_run *run, struct ns_error *err)
{
	char **paths = NULL;
	size_t n = 0;
	struct ns_source_id *ids = NULL;
	struct sink sk = { .store = NULL };
	char *target = NULL;
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
	/* (no database cache here: loading one took longer than parsing the
	 * trace; the result cache, cli/rcache.c, keeps what a command printed) */
	if (db_out) {
		if ((rc = ns_store_create(db_out, &sk.store, err)))
			goto out;
		if (sk.store)
			ns_store_reserve(sk.store, total_size(ids, n));
	}
	struct progress prog;
	progress_init(&prog, input, paths, ids, n, o);
	rc = parse_all(paths, ids, n, o, neuron, devprofs, &sk, &prog, run, err);
	progress_release(&prog);
	if (rc == 0)
		rc = commit_store(&sk, err);
out:
	ns_store_abort(sk.store);
	if (ids)
		ns_source_ids_free(ids, n);
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
