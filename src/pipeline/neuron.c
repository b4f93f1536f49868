/* The Neuron half of loading a capture (docs/neuron.md): which exports a
 * trace has beside it, running neuron-explorer when raw files need
 * converting, and the exit-3 refusal when it is not installed. */
#include "pipeline/neuron.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "common/vec.h"
#include "neff/neff.h"
#include "ntff/rows.h"
#include "pipeline/cache.h"
#include "report/detail.h"
#include "store/store.h"

extern char **environ;

/* What the load tells its user (lo->ui; cli/ prints it): a line for people,
 * "neuron-stats: " + the text, and a warning. */
static void tell(const struct ns_load_opts *lo, const char *fmt, ...) NS_PRINTF(2, 3);
static void tell(const struct ns_load_opts *lo, const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;
	if (!lo || !lo->ui || !lo->ui->note)
		return;
	va_start(ap, fmt);
	int len = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (len >= 0)
		lo->ui->note(lo->ui->ctx, text);
	free(len >= 0 ? text : NULL);
}

static void warn(const struct ns_load_opts *lo, const struct ns_error *w)
{
	if (lo && lo->ui && lo->ui->warn)
		lo->ui->warn(lo->ui->ctx, w);
}

/* Tried in this order on PATH (neuron-profile is the older name). */
static const char *const tools[] = { "neuron-explorer", "neuron-profile" };

static bool on_path(const char *name)
{
	const char *path = getenv("PATH");
	bool found = false;
	char *copy = strdup(path ? path : "");
	for (char *save = NULL, *dir = strtok_r(copy, ":", &save); copy && dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char *full;
		if (asprintf(&full, "%s/%s", *dir ? dir : ".", name) < 0)
			break;
		found = access(full, X_OK) == 0;
		free(full);
	}
	free(copy);
	return found;
}

static const char *find_tool(void)
{
	for (size_t i = 0; i < NS_ARRAY_SIZE(tools); i++)
		if (on_path(tools[i]))
			return tools[i];
	return NULL;
}

char *ns_cli_neuron_export_root(const char *db_out)
{
	char *root = NULL;
	if (db_out)
		return asprintf(&root, "%s.neuron", db_out) < 0 ? NULL : root;
	char *dir = ns_pipeline_cache_folder();
	if (dir && asprintf(&root, "%s/neuron", dir) < 0)
		root = NULL;
	free(dir);
	return root;
}

/* Scans dir (with the conversion cache) and returns its unit, or NULL. */
static int scan_unit(const char *dir, const char *export_root, bool shallow, struct ns_capture **c,
		     const struct ns_cap_unit **u, struct ns_error *err)
{
	struct ns_capture_opts co = { export_root, shallow };
	ns_capture_free(*c);
	*c = NULL;
	*u = NULL;
	int rc = ns_capture_scan(dir, &co, c, err);
	if (rc == 0)
		rc = ns_capture_find(*c, dir, u, err);
	return rc;
}

/* Appends the command lines to the hint, as many as fit. */
static void hint_commands(struct ns_error *err, const char *intro, const struct ns_ntff_cmd *cmds, size_t n)
{
	size_t len;
	snprintf(err->hint, sizeof(err->hint), "%s", intro);
	for (size_t i = 0; i < n; i++) {
		char *line = ns_ntff_cmd_text(&cmds[i]);
		len = strlen(err->hint);
		if (!line || len + strlen(line) + 64 >= sizeof(err->hint)) {
			snprintf(err->hint + len, sizeof(err->hint) - len, "\n  ... (%zu more: `neuron-stats ls` lists them)",
				 n - i);
			free(line);
			return;
		}
		snprintf(err->hint + len, sizeof(err->hint) - len, "\n  %s", line);
		free(line);
	}
}

#define CONVERT_TIMEOUT_S 600

/* Seconds a neuron-explorer run may take: NEURON_STATS_CONVERT_TIMEOUT, else
 * CONVERT_TIMEOUT_S. */
static long convert_timeout_s(void)
{
	const char *v = getenv("NEURON_STATS_CONVERT_TIMEOUT");
	char *end;
	long s = v ? strtol(v, &end, 10) : 0;
	return v && *v && !*end && s > 0 && s <= 86400 ? s : CONVERT_TIMEOUT_S;
}

/* Runs one command; stdout goes to a temporary file when it is the export,
 * and the export appears under its name only when the tool succeeded. */
static int run_cmd(const struct ns_ntff_cmd *c, struct ns_error *err)
{
	char *tmp = NULL, *argv[16] = { NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status = 0, rc = 0;
	if (asprintf(&tmp, "%s.tmp-%ld", c->output, (long)getpid()) < 0)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (int a = 0; a < 15 && c->argv[a]; a++)
		argv[a] = strcmp(c->argv[a], c->output) == 0 ? tmp : c->argv[a];
	posix_spawn_file_actions_init(&fa);
	if (c->stdout_path)
		posix_spawn_file_actions_addopen(&fa, 1, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int sp = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	long limit_ms = convert_timeout_s() * 1000L, waited_ms = 0;
	pid_t done = 0;
	/* a stuck converter must not hang the report: poll, and kill it at the limit */
	while (sp == 0 && (done = waitpid(pid, &status, WNOHANG)) == 0 && waited_ms < limit_ms) {
		struct timespec tick = { 0, 20 * 1000 * 1000 };
		nanosleep(&tick, NULL);
		waited_ms += 20;
	}
	if (sp == 0 && done == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (sp != 0) {
		rc = ns_error_set(err, NS_ERR_IO, "cannot run %s: %s", argv[0], strerror(sp));
	} else if (done < 0) {
		rc = ns_error_set(err, NS_ERR_IO, "waiting for %s: %s", argv[0], strerror(errno));
	} else if (done == 0) {
		char *line = ns_ntff_cmd_text(c);
		rc = ns_error_set(err, NS_ERR_IO, "%s timed out after %ld s (NEURON_STATS_CONVERT_TIMEOUT) and was stopped: %s",
				  argv[0], limit_ms / 1000, line ? line : "");
		free(line);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *line = ns_ntff_cmd_text(c);
		rc = ns_error_set(err, NS_ERR_IO, "%s failed (%s %d): %s", argv[0],
				  WIFEXITED(status) ? "exit status" : "signal",
				  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), line ? line : "");
		free(line);
	} else if (rename(tmp, c->output) != 0) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: %s did not write its export: %s", c->output, argv[0],
				  strerror(errno));
	}
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

int ns_cli_neuron_convert(const struct ns_cap_unit *u, unsigned what, const struct ns_load_opts *lo, bool *ran,
			  struct ns_error *err)
{
	const char *tool = find_tool();
	struct ns_ntff_cmd *cmds = NULL;
	size_t n = 0;
	int rc;
	*ran = false;
	/* without the tool, the commands to give the user write into the capture */
	if ((rc = ns_ntff_commands(u, tool ? tool : tools[0], tool && u->export_dir ? u->export_dir : u->dir, what,
				   &cmds, &n, err)) || n == 0)
		goto out;
	if (!tool || !u->export_dir) {
		rc = ns_error_set(err, NS_ERR_UNSUPPORTED,
				  "%s: %s only in raw Neuron capture files (%s); their binary format is not publicly "
				  "documented and is not decoded by this tool",
				  u->dir,
				  what & NS_CONV_SYSTEM ? "trace.json has no device events, and the system profile that has them is"
							: "--engines needs the device profiles, which are",
				  what & NS_CONV_SYSTEM ? "ntrace.pb, trace_info.pb" : "NTFF device traces");
		hint_commands(err, tool ? "no cache folder for the exports (set NEURON_STATS_CACHE_DIR); convert them yourself:"
				       : "install neuron-explorer (or neuron-profile) on PATH and run again, or "
					 "convert on a machine with the Neuron tools and keep the exports in the capture:",
			      cmds, n);
		goto out;
	}
	/* <root>/<key>: root's parent exists (the cache folder, or the database's) */
	char *root = ns_capture_folder(u->export_dir);
	if (root)
		mkdir(root, 0700);
	free(root);
	mkdir(u->export_dir, 0700);
	for (size_t i = 0; i < n && !rc; i++) {
		char *line = ns_ntff_cmd_text(&cmds[i]);
		tell(lo, "converting with %s: %s", tool, line ? line : "");
		free(line);
		rc = run_cmd(&cmds[i], err);
	}
	if (!rc)
		tell(lo, "Neuron exports cached in %s", u->export_dir);
	*ran = rc == 0;
out:
	ns_ntff_cmds_free(cmds, n);
	return rc;
}

/* One warning per "warnings" entry neuron-explorer wrote into an export. */
static void warn_explorer(const struct ns_load_opts *lo, const char *path, const struct ns_notes *w)
{
	struct ns_error e = { 0 };
	for (size_t i = 0; i < w->n; i++) {
		ns_error_set(&e, NS_OK, "%s (neuron-explorer's own warning, kept in the export)", w->v[i]);
		warn(lo, &e);
	}
	if (w->total > w->n) {
		ns_error_set(&e, NS_OK, "%s: %llu more neuron-explorer warnings; `neuron-stats ls %s` lists the first",
			     path, (unsigned long long)(w->total - w->n), path);
		warn(lo, &e);
	}
}

/* Warns about damage an export reader noted or a truncated file. */
static void warn_notes(const struct ns_load_opts *lo, const char *path, const struct ns_notes *notes,
		       int64_t truncated_at)
{
	struct ns_error w = { 0 };
	if (truncated_at >= 0) {
		ns_error_set(&w, NS_OK, "%s: truncated at byte %lld; using what came before it", path,
			     (long long)truncated_at);
		warn(lo, &w);
	}
	if (notes->total) {
		ns_error_set(&w, NS_OK, "%s: %llu value(s) ignored (first: %s); `neuron-stats ls %s` lists them", path,
			     (unsigned long long)notes->total, notes->n ? notes->v[0] : "?", path);
		warn(lo, &w);
	}
}

/* The §6 refusal of a raw file given on its own. */
static int refuse_raw(const char *input, enum ns_cap_kind kind, struct ns_error *err)
{
	struct ns_capture *c = NULL;
	const struct ns_cap_unit *u = NULL;
	struct ns_ntff_cmd *cmds = NULL;
	struct ns_error ignored;
	size_t n = 0;
	char *dir = ns_capture_folder(input);
	ns_error_set(err, NS_ERR_UNSUPPORTED,
		     "%s: raw Neuron capture file (%s); its binary format is not publicly documented and is not "
		     "decoded by this tool",
		     input, kind == NS_CAP_NTFF ? "NTFF device trace" : "runtime .pb");
	if (dir && scan_unit(dir, NULL, true, &c, &u, &ignored) == 0 && u &&
	    ns_ntff_commands(u, tools[0], u->dir, NS_CONV_SYSTEM | NS_CONV_DEVICE, &cmds, &n, &ignored) == 0 && n)
		hint_commands(err, "convert it on a machine with the Neuron tools, then pass the capture folder "
				   "(neuron-stats finds the exports there):",
			      cmds, n);
	else if (u && u->trace >= 0)
		ns_error_hint(err, "its capture folder holds the trace and the exports: `neuron-stats report %s`", u->dir);
	else
		ns_error_hint(err, "convert it on a machine with the Neuron tools, then pass the export:\n"
				   "  neuron-explorer view -n <model.neff> -s <file.ntff> --output-format summary-json > summary.json\n"
				   "  neuron-explorer view -d <capture_dir> --output-format json");
	ns_ntff_cmds_free(cmds, n);
	ns_capture_free(c);
	free(dir);
	return NS_ERR_UNSUPPORTED;
}

int ns_cli_neuron_probe(const char *input, bool *involved, bool *devprofs, struct ns_error *err)
{
	struct ns_capture *c = NULL;
	struct ns_capture_opts co = { 0 };
	struct ns_cap_file f;
	struct stat st;
	bool trace = false, neuron = false;
	char *dir = NULL;
	int rc = 0;
	*involved = *devprofs = false;
	if (stat(input, &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
		return 0; /* loading reports it; a stream is read once, by the trace reader */
	if (!S_ISDIR(st.st_mode)) {
		if ((rc = ns_capture_classify(input, &f, err)) <= 0)
			return rc < 0 ? NS_ERR_NOMEM : 0;
		if (f.kind == NS_CAP_NTFF || f.kind == NS_CAP_PB)
			return refuse_raw(input, f.kind, err);
		if (f.kind == NS_CAP_SYSTEM_JSON || f.kind == NS_CAP_DEVICE_JSON || f.kind == NS_CAP_SUMMARY_JSON) {
			/* valid JSON that is not a Kineto trace: exit 3 (docs/cli.md "Exit status") */
			ns_error_set(err, NS_ERR_UNSUPPORTED, "%s: a Neuron %s, not a framework trace", input,
				     ns_cap_kind_name(f.kind));
			ns_error_hint(err, "pass the capture folder holding it and its trace.json; `neuron-stats ls %s` "
					   "shows what the file holds", input);
			return NS_ERR_UNSUPPORTED;
		}
		if (f.kind != NS_CAP_TRACE)
			return 0;
		/* a trace file: its own folder is its unit */
		if (!(dir = ns_capture_folder(input)))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		co.shallow = true;
	}
	if ((rc = ns_capture_scan(dir ? dir : input, &co, &c, err)))
		goto out;
	for (size_t u = 0; u < c->n_units; u++) {
		const struct ns_cap_unit *un = &c->units[u];
		trace |= un->trace >= 0;
		for (size_t k = 0; k < un->n_files; k++) {
			enum ns_cap_kind kind = un->files[k].kind;
			neuron |= kind != NS_CAP_TRACE;
			*involved |= kind == NS_CAP_SYSTEM_JSON || kind == NS_CAP_PB;
			*devprofs |= kind == NS_CAP_DEVICE_JSON;
		}
	}
	if (neuron && !trace && !dir) {
		rc = ns_error_set(err, NS_ERR_INPUT, "%s: Neuron capture files but no framework trace (trace.json)",
				  input);
		ns_error_hint(err, "key_averages needs the PyTorch profiler's trace of the same run; `neuron-stats "
				   "ls %s` lists what is there",
			      input);
	}
out:
	ns_capture_free(c);
	free(dir);
	return rc;
}

static bool has_device_events(const struct ns_trace *t)
{
	return t->has_cat[NS_CAT_KERNEL] || t->has_cat[NS_CAT_GPU_MEMCPY] || t->has_cat[NS_CAT_GPU_MEMSET];
}

static bool has_ntrace(const struct ns_cap_unit *u)
{
	for (size_t k = 0; k < u->n_files; k++)
		if (u->files[k].kind == NS_CAP_PB && u->files[k].naming == NS_PB_NTRACE)
			return true;
	return false;
}

/* The logical NeuronCore size the unit's NEFF headers give (the largest
 * when they differ), 0 when no NEFF header can be read. */
static uint32_t unit_lnc_size(const struct ns_cap_unit *u)
{
	uint32_t lnc = 0;
	for (size_t k = 0; k < u->n_files; k++) {
		struct ns_neff_header h;
		struct ns_error ignored = { 0 };
		if (u->files[k].kind == NS_CAP_NEFF && ns_neff_read_header(u->files[k].path, &h, &ignored) == 0 &&
		    h.lnc_size > lnc && h.lnc_size <= 64)
			lnc = h.lnc_size;
	}
	return lnc;
}

/* Hands the events from index first on to the sink, as ingest does: each
 * as the row of a kept "X" event without args. */
static int feed(struct ns_trace *t, size_t first, ns_event_sink sink, void *sink_ctx, struct ns_error *err)
{
	for (size_t i = first; sink && i < t->n_events; i++) {
		struct ns_row_event row = ns_row_event_of(&t->events[i]);
		int rc = sink(sink_ctx, t, &row, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* A system export of the whole capture folder (neuron-explorer view -d)
 * covers every process: this unit takes its own pid's events. */
static void split_process(struct ns_sysprof *sp, const struct ns_cap_unit *u, const struct ns_load_opts *lo)
{
	size_t before = sp->n_ev;
	ns_sysprof_keep_process(sp, u->instance, u->pid);
	tell(lo,
	     "%s covers several processes: %zu of its %zu events are those of %s%spid %lld "
	     "(%llu of other processes, %llu without a process_id)",
	     sp->path, sp->n_ev, before, u->instance, u->instance[0] ? " " : "", (long long)u->pid,
	     (unsigned long long)sp->n_other_process, (unsigned long long)sp->n_no_process);
}

/* The export's Explorer warnings go with the trace (the report marks the
 * rows with device time; ingest stores them). */
static int keep_xwarnings(struct ns_trace *t, const struct ns_sysprof *sp, int64_t pid, struct ns_error *err)
{
	ns_str file = sp->xwarn.n ? ns_strtab_intern(&t->strings, sp->path, strlen(sp->path)) : 0;
	for (size_t i = 0; i < sp->xwarn.n; i++) {
		const struct ns_xwarn *x = &sp->xwarn.v[i];
		struct ns_xwarn_ref w = { file, 0, 0, (int64_t)x->offset, pid };
		if (x->category[0])
			w.category = ns_strtab_intern(&t->strings, x->category, strlen(x->category));
		w.message = ns_strtab_intern(&t->strings, x->message, strlen(x->message));
		if (file == UINT32_MAX || w.category == UINT32_MAX || w.message == UINT32_MAX || ns_trace_push_xwarn(t, &w))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	return 0;
}

int ns_cli_neuron_attach(const char *trace_path, struct ns_trace *t, const struct ns_load_opts *lo, ns_event_sink sink,
			 void *sink_ctx, struct ns_error *err)
{
	size_t first = t->n_events;
	struct ns_capture *c = NULL;
	const struct ns_cap_unit *u = NULL;
	struct ns_sysprof *sp = NULL;
	struct ns_attach_stats st;
	char *dir = NULL, *root = NULL;
	bool ran;
	int rc = 0;
	if (has_device_events(t))
		return 0; /* source (a): trace.json has them */
	if (!(dir = ns_capture_folder(trace_path))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	root = ns_cli_neuron_export_root(lo && !lo->db_temporary ? lo->db_out : NULL);
	/* the unit is the trace's own folder */
	if ((rc = scan_unit(dir, root, true, &c, &u, err)) || !u)
		goto out;
	if (u->system_json < 0 && has_ntrace(u)) {
		if ((rc = ns_cli_neuron_convert(u, NS_CONV_SYSTEM, lo, &ran, err))) {
			/* no converter, or it failed or timed out: the CPU table still
			 * stands; the commands go to stderr (an error with --strict) */
			if (lo && lo->strict)
				goto out;
			tell(lo, "warning: %s; the table has no device time%s%s", err->msg, err->hint[0] ? "\nhint: " : "",
			     err->hint);
			memset(err, 0, sizeof(*err));
			rc = 0;
			goto out;
		}
		if ((rc = scan_unit(dir, root, true, &c, &u, err)) || !u)
			goto out;
	}
	if (u->system_json < 0)
		goto out;
	const char *path = u->files[u->system_json].path;
	if ((rc = ns_sysprof_read(path, &sp, err)))
		goto out;
	warn_notes(lo, path, &sp->notes, sp->truncated_at);
	warn_explorer(lo, path, &sp->explorer_warnings);
	if (u->files[u->system_json].split)
		split_process(sp, u, lo);
	if ((rc = keep_xwarnings(t, sp, u->files[u->system_json].split ? u->pid : NS_NONE, err)))
		goto out;
	sp->lnc_size = unit_lnc_size(u);
	if ((rc = ns_sysprof_attach(sp, t, &st, err)) || (rc = feed(t, first, sink, sink_ctx, err)))
		goto out;
	if (st.skew_votes)
		tell(lo,
		     "%s: no flow ids; its host clock is %+lld ns off trace.json's (%llu of %llu launchers "
		     "agree), matched after removing that",
		     path, (long long)st.skew_ns, (unsigned long long)st.skew_votes, (unsigned long long)st.skew_candidates);
	if (st.lnc_size > 1 || st.folded)
		tell(lo, "%s: logical NeuronCore size %u (from %s): %llu hardware intervals counted as %llu executions",
		     path, st.lnc_size, st.lnc_from, (unsigned long long)st.hw_intervals, (unsigned long long)st.intervals);
	if (st.unlinked || st.unpaired) {
		struct ns_error w = { 0 };
		ns_error_set(&w, NS_OK,
			     "%s: %llu of %llu device intervals have no launching op, %llu start/stop halves unpaired",
			     path, (unsigned long long)st.unlinked, (unsigned long long)st.intervals,
			     (unsigned long long)st.unpaired);
		warn(lo, &w);
	}
out:
	ns_sysprof_free(sp);
	ns_capture_free(c);
	free(dir);
	free(root);
	return rc;
}

static int add_source(char ***lines, size_t *n, const char *fmt, ...) NS_PRINTF(3, 4);
static int add_source(char ***lines, size_t *n, const char *fmt, ...)
{
	char **v = realloc(*lines, (*n + 1) * sizeof(*v));
	va_list ap;
	if (!v)
		return -1;
	*lines = v;
	va_start(ap, fmt);
	int rc = vasprintf(&v[*n], fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -1;
	(*n)++;
	return 0;
}

static const char *const align_names[] = {
	[NS_ALIGN_NONE] = "not placed (no clock sample and no device event of its core)",
	[NS_ALIGN_SYNC] = "placed by the system profile's clock samples",
	[NS_ALIGN_ANCHOR] = "placed at the first device event of its core and NEFF",
};

static const char *const src_names[] = {
	[NS_ESRC_NONE] = "-", [NS_ESRC_ACTIVE_TIME] = "active_time",
	[NS_ESRC_INSTRUCTION] = "instruction", [NS_ESRC_DMA] = "dma",
};

/* One "Source:" line for a profile: how it was placed and which array each
 * engine came from (--engines), or how many instructions it holds. */
static int describe(char ***lines, size_t *n, const struct ns_devprof_ref *r, const char *placed, bool engines)
{
	char engines_text[256] = "";
	size_t len = 0;
	const char *slash = strrchr(r->dp->path, '/'), *base = slash ? slash + 1 : r->dp->path;
	size_t plen = strlen(r->dp->path);
	if (slash && plen > 8 && strcmp(r->dp->path + plen - 8, ".parquet") == 0) /* name the profile folder too */
		for (base = slash; base > r->dp->path && base[-1] != '/'; base--)
			;
	if (!engines)
		return add_source(lines, n, "%s (NeuronCore %lld, NEFF %s): %llu instructions; times in %s (%s)", base,
				  (long long)(r->nc < 0 ? 0 : r->nc), *r->neff_hash ? r->neff_hash : "?",
				  (unsigned long long)r->dp->n_instructions, ns_time_unit_name(r->dp->unit), r->dp->unit_why);
	for (int k = 0; k < NS_ENG__COUNT; k++)
		if (r->dp->busy_src[k])
			len += (size_t)snprintf(engines_text + len, sizeof(engines_text) - len, "%s%s from %s", len ? ", " : "",
						ns_engine_name((enum ns_engine)k), src_names[r->dp->busy_src[k]]);
	return add_source(lines, n, "%s (NeuronCore %lld, NEFF %s): %s; %s; times in %s (%s)", base,
			  (long long)(r->nc < 0 ? 0 : r->nc), *r->neff_hash ? r->neff_hash : "?", placed,
			  len ? engines_text : "no busy intervals", ns_time_unit_name(r->dp->unit), r->dp->unit_why);
}

/* The device profiles of t's unit, converted first when only NTFFs are
 * there: dps[i] with its core and NEFF in refs[i] (its pair's, else what
 * its name or profile_info says), and sums[i] the pair's summary-json when
 * there is one. what names the option in messages. */
struct devprofs {
	struct ns_capture *c;
	const struct ns_cap_unit *u;
	struct ns_devprof **dps;
	struct ns_summary **sums;
	struct ns_devprof_ref *refs;
	size_t n;
};

static void devprofs_release(struct devprofs *d)
{
	for (size_t i = 0; i < d->n; i++) {
		if (d->dps)
			ns_devprof_free(d->dps[i]);
		if (d->sums)
			ns_summary_free(d->sums[i]);
	}
	free(d->dps);
	free(d->sums);
	free(d->refs);
	ns_capture_free(d->c);
	memset(d, 0, sizeof(*d));
}

/* device_profile_model_<id>.json exports that pair with nothing: said
 * before their pairs are converted or reported missing. */
static void warn_model_exports(const struct ns_cap_unit *u, const struct ns_load_opts *lo)
{
	struct ns_error e = { 0 };
	char candidates[512];
	for (size_t g = 0; g < u->n_gaps; g++)
		if (u->gaps[g].kind == NS_GAP_EXPORT_MODEL_ID) {
			ns_capture_model_export_gap(u, (size_t)u->gaps[g].file, candidates, sizeof(candidates), &e);
			warn(lo, &e);
		}
}

/* store: for the database (ingest): nothing is converted, nothing warned
 * about (the report does both), and no profile is no error. */
static int devprofs_load(const struct ns_trace *t, const struct ns_load_opts *lo, const char *what, bool summaries,
			 bool store, struct devprofs *d, struct ns_error *err)
{
	char *dir = NULL, *root = NULL;
	enum ns_time_unit unit = ns_time_unit_parse(lo ? lo->device_time_unit : NULL);
	bool ran, need = false;
	int rc = 0;
	memset(d, 0, sizeof(*d));
	/* a trace loaded from a database is found where it was ingested, not
	 * relative to today's working directory */
	if (!(dir = ns_capture_folder(t->abspath ? t->abspath : t->path))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	root = ns_cli_neuron_export_root(lo && !lo->db_temporary ? lo->db_out : NULL);
	if ((rc = scan_unit(dir, root, true, &d->c, &d->u, err)))
		goto out;
	for (size_t p = 0; d->u && p < d->u->n_pairs; p++)
		need |= d->u->pairs[p].device_json < 0;
	if (need && !store)
		warn_model_exports(d->u, lo);
	if (need && !store && ((rc = ns_cli_neuron_convert(d->u, NS_CONV_DEVICE, lo, &ran, err)) ||
		     (rc = scan_unit(dir, root, true, &d->c, &d->u, err))))
		goto out;
	const struct ns_cap_unit *u = d->u;
	if (!u && store)
		goto out; /* not a capture folder: nothing to store */
	if (!u || !(d->dps = calloc(u->n_files + 1, sizeof(*d->dps))) ||
	    !(d->refs = calloc(u->n_files + 1, sizeof(*d->refs))) || !(d->sums = calloc(u->n_files + 1, sizeof(*d->sums)))) {
		rc = u ? ns_error_set(err, NS_ERR_NOMEM, "out of memory")
		       : ns_error_set(err, NS_ERR_INPUT, "%s: %s is not in a Neuron capture folder", what, t->path);
		goto out;
	}
	/* every device export: its pair's core and NEFF, else what its name says */
	for (size_t k = 0; k < u->n_files; k++) {
		const struct ns_cap_file *f = &u->files[k];
		if (f->kind != NS_CAP_DEVICE_JSON)
			continue;
		size_t n = d->n;
		if ((rc = ns_devprof_read(f->path, unit, &d->dps[n], err)))
			goto out;
		d->n++;
		if (!store) {
			warn_notes(lo, f->path, &d->dps[n]->notes, d->dps[n]->truncated_at);
			warn_explorer(lo, f->path, &d->dps[n]->explorer_warnings);
		}
		d->refs[n] = (struct ns_devprof_ref){ d->dps[n], f->nc, *f->hash ? f->hash : d->dps[n]->neff_hash };
		for (size_t p = 0; p < u->n_pairs; p++)
			if (u->pairs[p].device_json == (int64_t)k) {
				d->refs[n].nc = u->files[u->pairs[p].ntff].nc;
				d->refs[n].neff_hash = u->files[u->pairs[p].neff].hash;
				int64_t sj = u->pairs[p].summary_json;
				if (summaries && sj >= 0 && !d->sums[n]) {
					if ((rc = ns_summary_read(u->files[sj].path, &d->sums[n], err)))
						goto out;
					if (!store)
						warn_notes(lo, u->files[sj].path, &d->sums[n]->notes,
									 d->sums[n]->truncated_at);
				}
			}
	}
	if (d->n == 0 && !store) {
		rc = ns_error_set(err, NS_ERR_INPUT, "%s: no device profile in %s", what, u->dir);
		ns_error_hint(err, "capture one with NEURON_RT_INSPECT_DEVICE_PROFILE=1 (or ProfileMode.DEVICE); "
				   "`neuron-stats ls %s` lists what is there", u->dir);
		goto out;
	}
out:
	free(dir);
	free(root);
	if (rc)
		devprofs_release(d);
	return rc;
}

int ns_cli_neuron_engines(const struct ns_trace *t, const struct ns_load_opts *lo, struct ns_neuron_engines *out,
			  struct ns_error *err)
{
	struct devprofs d;
	struct ns_sysprof *sp = NULL;
	int rc;
	memset(out, 0, sizeof(*out));
	if ((rc = devprofs_load(t, lo, "--engines", false, false, &d, err)))
		return rc;
	if (d.u->system_json >= 0 && (rc = ns_sysprof_read(d.u->files[d.u->system_json].path, &sp, err)))
		goto out;
	if (sp && d.u->files[d.u->system_json].split) /* its clock samples: this process's cores */
		ns_sysprof_keep_process(sp, d.u->instance, d.u->pid);
	if ((rc = ns_engine_timeline_build(d.refs, d.n, sp, t, &out->tl, err)))
		goto out;
	for (size_t i = 0; i < d.n; i++)
		if (describe(&out->sources, &out->n_sources, &d.refs[i], align_names[out->tl.align[i]], true)) {
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			goto out;
		}
out:
	devprofs_release(&d);
	ns_sysprof_free(sp);
	if (rc)
		ns_cli_neuron_engines_release(out);
	return rc;
}

/* The profiles of t's capture with their summary figures, in report order. */
static int detail_load(const struct ns_trace *t, const struct ns_load_opts *lo, const char *what, bool store,
		       struct ns_neuron_detail *out, struct ns_error *err)
{
	struct devprofs d;
	int rc;
	memset(out, 0, sizeof(*out));
	if ((rc = devprofs_load(t, lo, what, true, store, &d, err)))
		return rc;
	if (d.n == 0) {
		devprofs_release(&d);
		return 0;
	}
	if (!(out->v = calloc(d.n, sizeof(*out->v)))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	/* the profiles are kept: the rows point into them */
	out->dps = d.dps;
	out->n = d.n;
	d.dps = NULL;
	for (size_t i = 0; i < d.n; i++) {
		struct ns_detail_neff *v = &out->v[i];
		const struct ns_summary_node *sn = d.sums[i] && d.sums[i]->n_nodes ? &d.sums[i]->nodes[0] : NULL;
		v->dp = out->dps[i];
		v->nc = d.refs[i].nc;
		if (!(v->neff = strdup(d.refs[i].neff_hash))) {
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			goto out;
		}
		ns_devprof_metrics(v->dp, d.sums[i], sn, &v->m);
	}
	ns_detail_sort(out->v, out->n);
	for (size_t i = 0; i < out->n; i++) {
		struct ns_devprof_ref r = { out->v[i].dp, out->v[i].nc, out->v[i].neff };
		if (describe(&out->sources, &out->n_sources, &r, NULL, false)) {
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			goto out;
		}
	}
out:
	devprofs_release(&d); /* the summaries; the profiles, unless moved to out */
	if (rc)
		ns_cli_neuron_detail_release(out);
	return rc;
}

int ns_cli_neuron_detail(const struct ns_trace *t, const struct ns_load_opts *lo, struct ns_neuron_detail *out,
			 struct ns_error *err)
{
	return detail_load(t, lo, "--device-detail", false, out, err);
}

int ns_cli_neuron_profiles(const struct ns_trace *t, const struct ns_load_opts *lo, const char *what,
			   struct ns_neuron_detail *out, struct ns_error *err)
{
	return detail_load(t, lo, what, false, out, err);
}

int ns_cli_neuron_store_detail(const struct ns_trace *t, const struct ns_load_opts *lo, struct ns_store *s,
			       struct ns_error *err)
{
	struct ns_neuron_detail d;
	int rc = detail_load(t, lo, "--device-detail", true, &d, err);
	if (!rc && d.n)
		rc = ns_store_device_detail(s, d.v, d.n, err);
	ns_cli_neuron_detail_release(&d);
	return rc;
}

void ns_cli_neuron_detail_release(struct ns_neuron_detail *d)
{
	for (size_t i = 0; d->v && i < d->n; i++)
		free((char *)d->v[i].neff);
	for (size_t i = 0; d->dps && i < d->n; i++)
		ns_devprof_free(d->dps[i]);
	for (size_t i = 0; i < d->n_sources; i++)
		free(d->sources[i]);
	free(d->sources);
	free(d->dps);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

void ns_cli_neuron_engines_release(struct ns_neuron_engines *e)
{
	ns_engine_timeline_release(&e->tl);
	for (size_t i = 0; i < e->n_sources; i++)
		free(e->sources[i]);
	free(e->sources);
	memset(e, 0, sizeof(*e));
}

int ns_cli_neuron_report_opts(bool by_neff, bool engines_merged, const char *device_time_unit, struct ns_agg_opts *ao,
			      struct ns_report_opts *ro, struct ns_error *err)
{
	if (device_time_unit && ns_time_unit_parse(device_time_unit) == NS_TU_AUTO)
		return ns_error_set(err, NS_ERR_USAGE, "--device-time-unit: expected ns, us, ms or s, not '%s'",
				    device_time_unit);
	if (engines_merged)
		return ns_error_set(err, NS_ERR_USAGE, "--engines works per trace: it cannot be used with --merge");
	if (by_neff) {
		ns_ntff_group_by_neff(ao);
		ro->show_neff = true;
	}
	return 0;
}
