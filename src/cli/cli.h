/* Shared by the command implementations in src/cli/. Only src/cli/ prints
 * to stdout/stderr, reads the environment or decides exit codes. */
#ifndef NS_CLI_H
#define NS_CLI_H

#include "cli/opt.h"
#include "aggregate/select.h"
#include "common/error.h"
#include "report/report.h"

/* Exit codes (docs/cli.md). */
enum {
	NS_EXIT_OK = 0,
	NS_EXIT_INPUT = 1,
	NS_EXIT_USAGE = 2,
	NS_EXIT_UNSUPPORTED = 3,
	NS_EXIT_REGRESSION = 4,
	NS_EXIT_IO = 5,
	NS_EXIT_NOMEM = 6,
};

#define NS_VERSION "0.1.0" /* (meson.build's project version) */
/* The program's one-line description (--help, the man page's NAME). */
#define NS_CLI_TAGLINE "PyTorch key_averages() tables, a SQLite store and run diffs from profiler captures."

extern bool ns_cli_quiet; /* --quiet: no warnings or progress on stderr */

/* --jobs N: the traces of PATH parsed at once (pipeline/load.h
 * ns_load_opts.jobs); 0 until given. ns_cli_jobs: its value, by default the
 * number of online CPUs. */
extern long ns_cli_opt_jobs;
#define NS_CLI_JOBS_OPT                                                                                          \
	NS_INT('j', "jobs", "N",                                                                                 \
	       "parse up to N traces at once; when N is more, a large one in two parts and aggregated on two "   \
	       "threads (default: the online CPUs)",                                                             \
	       &ns_cli_opt_jobs, 1, 1024)
unsigned ns_cli_jobs(void);

/* Prints "neuron-stats: error: <msg>" (+ "hint: ..." lines) to stderr and
 * returns the exit code for err->status. */
/* Writes len bytes to stdout; when that fails, keeps the write's errno for
 * the check after the command (main.c), which errno no longer holds then. */
void ns_cli_stdout_write(const void *p, size_t len);
int ns_cli_stdout_errno(void); /* that errno, 0 if none */
int ns_cli_fail(const struct ns_error *err);
/* Prints "neuron-stats: warning: <msg>" unless --quiet. */
void ns_cli_warn(const struct ns_error *warn);

/* How the pipeline's loads tell the user (warnings, notes, progress on a
 * terminal): call after ns_cli_quiet is set. */
struct ns_load_ui;
const struct ns_load_ui *ns_cli_load_ui(void);

/* --group-by WHAT (name, shape, overload, stack=N; comma-separated) and
 * --format FMT (table, csv, json, markdown), shared by report and diff. */
int ns_cli_parse_group_by(const char *spec, struct ns_agg_opts *ao, struct ns_error *err);
void ns_cli_write_group_by_words(FILE *out); /* --group-by's words (shell completion) */
extern const char *const ns_cli_formats[];    /* --format's choices, in enum ns_format's order */
enum ns_format ns_cli_format(const char *name); /* a --format choice (ns_cli_formats); NULL: table */
extern const char *const ns_cli_device_time_units[]; /* --device-time-unit's choices */
/* --include/--exclude REGEX (repeatable), shared by report and diff. */
#define NS_CLI_INCLUDE_HELP "only rows whose name matches REGEX (POSIX ERE; repeatable: any)"
#define NS_CLI_EXCLUDE_HELP "leave out rows whose name matches REGEX (repeatable)"
struct ns_name_filter ns_cli_name_filter(const struct ns_opt_regexes *include, const struct ns_opt_regexes *exclude);

/* --category, --rank, --steps: the traces and events a command analyses,
 * before aggregation (docs/report.md "Filters"); every command that reads
 * traces puts NS_CLI_SELECT_OPTS in its table and applies
 * ns_cli_select_run to the run it loaded. */
struct ns_cli_select {
	const char *category, *rank, *steps; /* as given */
	/* the analyses' event names (NS_CLI_SELECT_NAME_OPTS; report and diff
	 * have row filters of these names instead) */
	struct ns_opt_regexes include, exclude;
	bool hide_annotations;
};
#define NS_CLI_SELECT_CATEGORY_OPT(o) \
	NS_WORDS(0, "category", "CAT", "only events of these Kineto categories (comma-separated)", &(o).category, \
		 ns_cli_write_category_words)
#define NS_CLI_SELECT_RANK_OPT(o) \
	NS_STRING(0, "rank", "N", "only the traces of these ranks: N, A-B (comma-separated)", &(o).rank)
#define NS_CLI_SELECT_STEPS_OPT(o) \
	NS_STRING(0, "steps", "A..B", "only events of ProfilerStep#A..#B (inclusive)", &(o).steps)
/* (overlap has a --steps flag of its own: it takes the first two only) */
#define NS_CLI_SELECT_OPTS(o) NS_CLI_SELECT_CATEGORY_OPT(o), NS_CLI_SELECT_RANK_OPT(o), NS_CLI_SELECT_STEPS_OPT(o)
/* The analyses, whose rows are not ops, select events by name too. */
#define NS_CLI_SELECT_NAME_OPTS(o)                                                                                   \
	NS_REGEX(0, "include", "REGEX", "only events whose name matches REGEX (POSIX ERE; repeatable: any)",          \
		 &(o).include),                                                                                      \
	NS_REGEX(0, "exclude", "REGEX", "leave out events whose name matches REGEX (repeatable)", &(o).exclude),      \
	NS_FLAG(0, "hide-annotations", "leave out user annotations (ProfilerStep*, record_function), host and device", \
		&(o).hide_annotations)
void ns_cli_write_category_words(FILE *out);
struct ns_cli_selection {
	struct ns_select events;
	struct ns_name_filter names; /* (events.keep_name's) */
	struct {
		int64_t first, last;
	} ranks[32];
	size_t n_ranks;      /* 0: every rank */
};
/* The options parsed (NS_ERR_USAGE). */
int ns_cli_select_parse(const struct ns_cli_select *o, struct ns_cli_selection *s, struct ns_error *err);
/* Drops the traces and events of run (loaded from input) that s does not
 * keep; NS_ERR_USAGE when a --rank or the --steps are in none of them. */
struct ns_run;
int ns_cli_select_run(const struct ns_cli_selection *s, const char *input, struct ns_run *run, struct ns_error *err);

/* Each command returns its exit code; main.c checks standard output once
 * after it (a failed write is exit 5), so a command never flushes itself. */
int cmd_report(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_neff(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_completion(int argc, char **argv);
int cmd_stacks(int argc, char **argv);
int cmd_counters(int argc, char **argv);
int cmd_launches(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_breakdown(int argc, char **argv);
int cmd_overlap(int argc, char **argv);
int cmd_stragglers(int argc, char **argv);
int cmd_ranks(int argc, char **argv);
int cmd_html(int argc, char **argv);

extern const struct ns_cmd_spec cmd_merge_spec;
extern const struct ns_cmd_spec cmd_report_spec, cmd_ingest_spec, cmd_sql_spec, cmd_neff_spec;
extern const struct ns_cmd_spec cmd_ls_spec;
extern const struct ns_cmd_spec cmd_diff_spec;
extern const struct ns_cmd_spec cmd_completion_spec;
extern const struct ns_cmd_spec cmd_stacks_spec;
extern const struct ns_cmd_spec cmd_counters_spec;
extern const struct ns_cmd_spec cmd_launches_spec;
extern const struct ns_cmd_spec cmd_kernels_spec, cmd_breakdown_spec;
extern const struct ns_cmd_spec cmd_overlap_spec, cmd_stragglers_spec, cmd_ranks_spec;
extern const struct ns_cmd_spec cmd_html_spec;

/* A command's -o FILE (outfile.c). Before any work: refused (NS_ERR_USAGE)
 * when out is not a regular file, or is input or a trace below it;
 * *target (caller frees) is where it goes: out, or the file a symbolic
 * link there names. The output is written to "<target>.tmp-<pid>" and
 * renamed over target when complete, so target is never half-written. */
int ns_cli_outfile_check(const char *out, const char *input, char **target, struct ns_error *err);
struct ns_cli_outfile {
	FILE *f;
	const char *target;
	char *tmp;
};
int ns_cli_outfile_open(struct ns_cli_outfile *o, const char *target, struct ns_error *err);
int ns_cli_outfile_commit(struct ns_cli_outfile *o, struct ns_error *err); /* closes; renames over target */
void ns_cli_outfile_abort(struct ns_cli_outfile *o);                      /* closes; removes the temporary file */

/* The analysis commands' main loop: loads PATH, keeps what sel selects,
 * calls each(trace i of n) in order and returns the exit code (a failure printed). */
struct ns_load_opts;
typedef int (*ns_cli_trace_fn)(struct ns_trace *t, size_t i, size_t n, void *ctx, struct ns_error *err);
int ns_cli_each_trace(const char *path, const struct ns_load_opts *lo, const struct ns_cli_select *sel,
		      ns_cli_trace_fn each, void *ctx);
/* Before trace i of n > 1 in a table or Markdown: its path (and rank). */
void ns_cli_trace_header(const struct ns_trace *t, size_t i, size_t n, enum ns_format fmt);

/* The command table: main() dispatches on it, --help lists it, the shell
 * completion scripts are generated from it (cmd-completion.c). */
struct ns_command {
	const struct ns_cmd_spec *spec;
	int (*run)(int argc, char **argv);
	unsigned cache_inputs; /* its first N arguments are traces: the result cache (rcache.c); 0: none */
};
extern const struct ns_command ns_cli_commands[];
extern const size_t ns_cli_n_commands;

/* Runs c (argv[0]: its name) through the result cache (docs/cli.md
 * "Cache"): a hit replays what an earlier run printed, a miss runs it and
 * keeps what it printed. finish checks standard output after the command
 * and gives the exit code (main.c). */
int ns_cli_run_cached(const struct ns_command *c, int argc, char **argv, int (*finish)(int));
/* Where progress lines go: standard error, never into the result cache. */
FILE *ns_cli_progress_stream(void);

/* The manual page neuron-stats(1), roff (neuron-stats --man; cmd-man.c). */
void ns_cli_write_man(FILE *out);

#endif
