/* Shared by the command implementations in src/cli/. Only src/cli/ prints
 * to stdout/stderr, reads the environment or decides exit codes. */
#ifndef NS_CLI_H
#define NS_CLI_H

#include "cli/opt.h"
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

extern bool ns_cli_quiet; /* --quiet: no warnings or progress on stderr */

/* Prints "neuron-stats: error: <msg>" (+ "hint: ..." lines) to stderr and
 * returns the exit code for err->status. */
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
int ns_cli_parse_format(const char *s, enum ns_format *fmt, struct ns_error *err);

/* Each command returns its exit code; main.c checks standard output once
 * after it (a failed write is exit 5), so a command never flushes itself. */
int cmd_report(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_neff(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_diff(int argc, char **argv);

extern const struct ns_cmd_spec cmd_report_spec, cmd_ingest_spec, cmd_sql_spec, cmd_neff_spec;
extern const struct ns_cmd_spec cmd_ls_spec;
extern const struct ns_cmd_spec cmd_diff_spec;

#endif
