/* Table-driven option parsing: each command declares a static array of
 * struct ns_opt; parsing, --help text and docs/cli.md all come from it. */
#ifndef NS_OPT_H
#define NS_OPT_H

#include <stdbool.h>
#include <stdio.h>

enum ns_opt_type {
	NS_OPT_END = 0,
	NS_OPT_FLAG,   /* bool *value = true */
	NS_OPT_STRING, /* const char **value = optarg */
	NS_OPT_INT,    /* long *value, decimal, may be negative */
};

struct ns_opt {
	enum ns_opt_type type;
	char short_name;      /* 0 if none */
	const char *long_name;
	const char *arg_name; /* e.g. "KEY"; NULL for flags */
	const char *help;     /* one line */
	void *value;
};

struct ns_cmd_spec {
	const char *name;     /* "report", "sql", ... */
	const char *usage;    /* "neuron-stats sql DB_OR_TRACE QUERY [options]" */
	const char *summary;  /* one line for the command list */
	const char *details;  /* optional paragraph printed after the options (may be NULL) */
	const struct ns_opt *opts;
	int min_args, max_args; /* positional argument count bounds (-1 = unbounded) */
};

/* Parses argv[1..] (argv[0] is the command name). Options and positionals
 * may be mixed; "--" ends options. On success returns 0 and sets
 * *pos / *npos (pointers into argv). Prints --help to stdout and returns -1
 * (caller exits 0); prints a usage error to stderr and returns 2. */
int ns_opt_parse(const struct ns_cmd_spec *spec, int argc, char **argv, char ***pos, int *npos);
void ns_opt_help(const struct ns_cmd_spec *spec, FILE *out);

#endif
