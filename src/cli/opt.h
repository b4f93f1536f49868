/* Table-driven option parsing: each command declares a static array of
 * struct ns_opt; parsing, --help text and docs/cli.md all come from it. */
#ifndef NS_OPT_H
#define NS_OPT_H

#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum ns_opt_type {
	NS_OPT_END = 0,
	NS_OPT_FLAG,    /* bool *value = true */
	NS_OPT_STRING,  /* const char **value = optarg */
	NS_OPT_INT,     /* long *value: a decimal integer within [min, max] (or 0, with zero_too) */
	NS_OPT_REAL,    /* double *value: a decimal number within [min, max] */
	NS_OPT_PERCENT, /* double *value: as NS_OPT_REAL, an optional trailing '%' */
	NS_OPT_ENUM,    /* const char **value = the entry of choices equal to the argument */
	NS_OPT_REGEX,   /* struct ns_opt_regexes *value: one more POSIX ERE, compiled (repeatable) */
};

/* The expressions of a repeatable NS_OPT_REGEX option, in the order given;
 * they live as long as the process. */
#define NS_OPT_MAX_REGEX 16
struct ns_opt_regexes {
	regex_t re[NS_OPT_MAX_REGEX];
	size_t n;
};

/* What shell completion offers for an option's value (cli/complete.c). */
enum ns_opt_complete {
	NS_COMPLETE_NONE = 0, /* nothing: a number, a label */
	NS_COMPLETE_FILE,     /* file names */
	NS_COMPLETE_WORDS,    /* choices (NS_OPT_ENUM) or the words words() writes */
};

/* A numeric option's value is checked when it is parsed (a usage error
 * names the range) and --help prints the range after the option's help. */
struct ns_opt {
	enum ns_opt_type type;
	char short_name;      /* 0 if none */
	const char *long_name;
	const char *arg_name; /* e.g. "KEY"; NULL for flags */
	const char *help;     /* one line */
	void *value;
	double min, max;      /* numeric types: the accepted range, inclusive */
	bool zero_too;        /* NS_OPT_INT: 0 is accepted as well (a special value the help names) */
	const char *const *choices;  /* NS_OPT_ENUM: the accepted values, NULL-terminated */
	enum ns_opt_complete complete;
	void (*words)(FILE *out);    /* NS_COMPLETE_WORDS without choices: the candidates, one per line */
};

/* Table entries, one per option (a command's table ends with NS_OPT_LAST). */
#define NS_OPT_(t, s, l, arg, text, var, ...) \
	{ .type = (t), .short_name = (s), .long_name = (l), .arg_name = (arg), .help = (text), .value = (var), __VA_ARGS__ }
#define NS_FLAG(s, l, text, var) NS_OPT_(NS_OPT_FLAG, s, l, NULL, text, var, .complete = NS_COMPLETE_NONE)
#define NS_STRING(s, l, arg, text, var) NS_OPT_(NS_OPT_STRING, s, l, arg, text, var, .complete = NS_COMPLETE_NONE)
/* a file name: the shell completes file names */
#define NS_FILE(s, l, arg, text, var) NS_OPT_(NS_OPT_STRING, s, l, arg, text, var, .complete = NS_COMPLETE_FILE)
/* one of choices (a usage error names them); the shell offers them */
#define NS_ENUM(s, l, arg, text, var, list) \
	NS_OPT_(NS_OPT_ENUM, s, l, arg, text, var, .choices = (list), .complete = NS_COMPLETE_WORDS)
/* a string the command checks (a list, KEY=N); the shell offers what fn writes */
#define NS_WORDS(s, l, arg, text, var, fn) \
	NS_OPT_(NS_OPT_STRING, s, l, arg, text, var, .complete = NS_COMPLETE_WORDS, .words = (fn))
/* a POSIX extended regular expression, compiled when parsed (a bad one is
 * a usage error naming the option); repeatable */
#define NS_REGEX(s, l, arg, text, var) NS_OPT_(NS_OPT_REGEX, s, l, arg, text, var, .complete = NS_COMPLETE_NONE)
#define NS_INT(s, l, arg, text, var, lo, hi) NS_OPT_(NS_OPT_INT, s, l, arg, text, var, .min = (lo), .max = (hi))
#define NS_INT_OR_ZERO(s, l, arg, text, var, lo, hi) \
	NS_OPT_(NS_OPT_INT, s, l, arg, text, var, .min = (lo), .max = (hi), .zero_too = true)
#define NS_REAL(s, l, arg, text, var, lo, hi) NS_OPT_(NS_OPT_REAL, s, l, arg, text, var, .min = (lo), .max = (hi))
#define NS_PERCENT(s, l, arg, text, var, lo, hi) NS_OPT_(NS_OPT_PERCENT, s, l, arg, text, var, .min = (lo), .max = (hi))
#define NS_OPT_LAST { .type = NS_OPT_END }
#define NS_NO_MAX INFINITY /* NS_INT: no upper bound but LONG_MAX's */

struct ns_cmd_spec {
	const char *name;     /* "report", "sql", ... */
	const char *usage;    /* "neuron-stats sql DB_OR_TRACE QUERY [options]" */
	const char *summary;  /* one line for the command list */
	const char *details;  /* optional paragraph printed after the options (may be NULL) */
	const struct ns_opt *opts;
	int min_args, max_args; /* positional argument count bounds (-1 = unbounded) */
	void (*write_details)(FILE *out); /* optional: generated text printed after details (sort keys) */
	enum ns_opt_complete complete_args; /* what the shell offers for the positional arguments */
};

/* Parses argv[1..] (argv[0] is the command name). Options and positionals
 * may be mixed; "--" ends options. On success returns 0 and sets
 * *pos / *npos (pointers into argv). Prints --help to stdout and returns -1
 * (caller exits 0); prints a usage error to stderr and returns 2. */
int ns_opt_parse(const struct ns_cmd_spec *spec, int argc, char **argv, char ***pos, int *npos);
void ns_opt_help(const struct ns_cmd_spec *spec, FILE *out);

/* A whole decimal integer ("-1", "42"; no sign '+', blank, suffix or
 * overflow) within [min, max]: 0, else -1. */
int ns_opt_parse_long(const char *s, long min, long max, long *out);
/* The range of a numeric option as --help and usage errors show it, e.g.
 * "N >= -1", "0 or N >= 4", "A from 1e-12 to 1". */
void ns_opt_range(const struct ns_opt *o, char *buf, size_t n);
/* What --help appends to a numeric option's help: " [" range "]"; "" for
 * the other types. */
void ns_opt_range_note(const struct ns_opt *o, char *buf, size_t n);

#endif
