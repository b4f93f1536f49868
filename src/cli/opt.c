#include "cli/opt.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "report/grid.h"

static const struct ns_opt *find_long(const struct ns_opt *opts, const char *name, size_t len)
{
	for (const struct ns_opt *o = opts; o->type != NS_OPT_END; o++)
		if (o->long_name && strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
			return o;
	return NULL;
}

static const struct ns_opt *find_short(const struct ns_opt *opts, char c)
{
	for (const struct ns_opt *o = opts; o->type != NS_OPT_END; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* `what` and `arg` make the message: "unknown option '--x'". */
static int usage_error(const struct ns_cmd_spec *spec, const char *what, const char *arg)
{
	fprintf(stderr, "neuron-stats: error: %s: %s", spec->name, what);
	if (arg)
		fprintf(stderr, " '%s'", arg);
	fprintf(stderr, "\nusage: %s\nTry 'neuron-stats %s --help' for more information.\n", spec->usage, spec->name);
	return 2;
}

int ns_opt_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	/* strtol alone would take blanks, a '+' and a suffix ("2junk" as 2) */
	if (!((s[0] >= '0' && s[0] <= '9') || (s[0] == '-' && s[1] >= '0' && s[1] <= '9')))
		return -1;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A decimal number: digits with an optional sign, point and exponent
 * (strtod alone would also take "inf", "nan", hex and blanks). */
static int parse_real(const char *s, bool percent, double min, double max, double *out)
{
	size_t len = strlen(s);
	if (percent && len && s[len - 1] == '%')
		len--;
	if (len == 0 || len > 64 || strspn(s, "0123456789.eE+-") < len || !strpbrk(s, "0123456789"))
		return -1;
	char buf[65], *end;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	double v = strtod(buf, &end);
	if (errno || *end || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

/* "a, b or c" */
static void write_choices(const char *const *choices, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; choices[i] && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s", i == 0 ? "" : choices[i + 1] ? ", " : " or ",
					 choices[i]);
}

void ns_opt_range(const struct ns_opt *o, char *buf, size_t n)
{
	const char *arg = o->arg_name ? o->arg_name : "N";
	if (o->type == NS_OPT_ENUM)
		write_choices(o->choices, buf, n);
	else if (o->type == NS_OPT_INT && isinf(o->max))
		snprintf(buf, n, "%s%s >= %.0f", o->zero_too ? "0 or " : "", arg, o->min);
	else if (o->type == NS_OPT_INT)
		snprintf(buf, n, "%s%s from %.0f to %.0f", o->zero_too ? "0 or " : "", arg, o->min, o->max);
	else
		snprintf(buf, n, "%s from %.15g to %.15g", arg, o->min, o->max);
}

void ns_opt_range_note(const struct ns_opt *o, char *buf, size_t n)
{
	buf[0] = '\0';
	if (n < 4 || !(o->type == NS_OPT_INT || o->type == NS_OPT_REAL || o->type == NS_OPT_PERCENT))
		return; /* (ENUM: the help names the choices) */
	buf[0] = ' ';
	buf[1] = '[';
	ns_opt_range(o, buf + 2, n - 3);
	strcat(buf, "]");
}

static int add_regex(const struct ns_cmd_spec *spec, const struct ns_opt *o, const char *arg)
{
	struct ns_opt_regexes *list = o->value;
	char what[400], why[256];
	if (list->n == NS_OPT_MAX_REGEX) {
		snprintf(what, sizeof(what), "--%s: at most %d expressions, not one more:", o->long_name,
			 NS_OPT_MAX_REGEX);
		return usage_error(spec, what, arg);
	}
	int rc = regcomp(&list->re[list->n], arg, REG_EXTENDED | REG_NOSUB);
	if (rc == 0) {
		list->n++;
		return 0;
	}
	regerror(rc, &list->re[list->n], why, sizeof(why));
	snprintf(what, sizeof(what), "--%s: not a regular expression (%s):", o->long_name, why);
	return usage_error(spec, what, arg);
}

static int set_value(const struct ns_cmd_spec *spec, const struct ns_opt *o, const char *arg)
{
	char what[160], range[96];
	switch (o->type) {
	case NS_OPT_FLAG:
		*(bool *)o->value = true;
		return 0;
	case NS_OPT_STRING:
		*(const char **)o->value = arg;
		return 0;
	case NS_OPT_INT: {
		long v, min = (long)o->min, max = isinf(o->max) ? LONG_MAX : (long)o->max;
		if (ns_opt_parse_long(arg, o->zero_too && min > 0 ? 0 : min, max, &v) == 0 && (v >= min || v == 0)) {
			*(long *)o->value = v;
			return 0;
		}
		break;
	}
	case NS_OPT_REAL:
	case NS_OPT_PERCENT:
		if (parse_real(arg, o->type == NS_OPT_PERCENT, o->min, o->max, (double *)o->value) == 0)
			return 0;
		break;
	case NS_OPT_ENUM:
		for (const char *const *c = o->choices; *c; c++)
			if (strcmp(arg, *c) == 0) {
				*(const char **)o->value = *c;
				return 0;
			}
		break;
	case NS_OPT_REGEX:
		return add_regex(spec, o, arg);
	case NS_OPT_END:
		break;
	}
	NS_ASSERT(o->type != NS_OPT_END);
	ns_opt_range(o, range, sizeof(range));
	snprintf(what, sizeof(what), "--%s: expected %s%s, not", o->long_name, range,
		 o->type == NS_OPT_PERCENT ? " (percent)" : "");
	return usage_error(spec, what, arg);
}

int ns_opt_parse(const struct ns_cmd_spec *spec, int argc, char **argv, char ***pos, int *npos)
{
	int n = 0;
	bool options_done = false;
	/* positionals are compacted in place at the front of argv+1 */
	char **out = argv + 1;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (options_done || a[0] != '-' || a[1] == '\0') {
			out[n++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			options_done = true;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			ns_opt_help(spec, stdout);
			return -1;
		}
		const struct ns_opt *o;
		const char *arg = NULL;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			o = find_long(spec->opts, a + 2, len);
			if (!o)
				return usage_error(spec, "unknown option", a);
			if (eq)
				arg = eq + 1;
		} else {
			o = find_short(spec->opts, a[1]);
			if (!o)
				return usage_error(spec, "unknown option", a);
			if (a[2] != '\0')
				arg = a + 2;
		}
		if (o->type == NS_OPT_FLAG) {
			if (arg)
				return usage_error(spec, "this option takes no value:", a);
		} else if (!arg) {
			if (i + 1 >= argc)
				return usage_error(spec, "this option needs a value:", a);
			arg = argv[++i];
		}
		int rc = set_value(spec, o, arg);
		if (rc)
			return rc;
	}
	if (n < spec->min_args)
		return usage_error(spec, n ? "too few arguments" : "missing argument", NULL);
	if (spec->max_args >= 0 && n > spec->max_args)
		return usage_error(spec, "unexpected argument", out[spec->max_args]);
	*pos = out;
	*npos = n;
	return 0;
}

/* An option's names: "  -f, --format FORMAT" or "      --long N". */
static void option_names(const struct ns_opt *o, char *buf, size_t n)
{
	snprintf(buf, n, "  %c%c%s--%s%s%s", o->short_name ? '-' : ' ', o->short_name ? o->short_name : ' ',
		 o->short_name ? ", " : "  ", o->long_name, o->arg_name ? " " : "", o->arg_name ? o->arg_name : "");
}

/* An option's help and, for a number, its range ("... [N from 1 to 9]";
 * an ENUM's help names its choices); the caller frees it. NULL on OOM. */
static char *option_text(const struct ns_opt *o)
{
	char range[128], *text = NULL;
	ns_opt_range_note(o, range, sizeof(range));
	return asprintf(&text, "%s%s", o->help, range) < 0 ? NULL : text;
}

#define NAMES_WIDTH 30 /* the help column; longer names go on a line of their own */

static void option_row(struct ns_grid *g, const char *names, const char *text)
{
	ns_grid_row(g, (struct ns_cell[]){ { .type = NS_CELL_TEXT, .text = names }, { .type = NS_CELL_TEXT, .text = text } },
		    true, false);
}

/* The options as a grid in the plain style: names, help. */
static int write_options(const struct ns_opt *opts, FILE *out)
{
	struct ns_grid g;
	size_t n = 0;
	while (opts[n].type != NS_OPT_END)
		n++;
	char(*names)[80] = calloc(n, sizeof(*names));
	char **texts = calloc(n, sizeof(*texts));
	int rc = -1;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_PLAIN;
	g.indent = g.gap = "";
	g.as_is = true; /* the option table's own text */
	ns_grid_col(&g, &(struct ns_grid_col){ .width = NAMES_WIDTH, .left = true });
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	for (size_t i = 0; names && texts && i < n && !g.oom; i++) {
		option_names(&opts[i], names[i], sizeof(names[i]));
		texts[i] = option_text(&opts[i]);
		g.oom |= !texts[i];
		if (strlen(names[i]) < NAMES_WIDTH) {
			option_row(&g, names[i], texts[i]);
		} else {
			option_row(&g, names[i], "");
			option_row(&g, "", texts[i]);
		}
	}
	if (names && texts)
		rc = ns_grid_write_text(out, &g);
	for (size_t i = 0; texts && i < n; i++)
		free(texts[i]);
	free(texts);
	free(names);
	ns_grid_release(&g);
	return rc;
}

void ns_opt_help(const struct ns_cmd_spec *spec, FILE *out)
{
	fprintf(out, "usage: %s\n\n%s\n", spec->usage, spec->summary);
	if (spec->opts && spec->opts[0].type != NS_OPT_END) {
		fputs("\noptions:\n", out);
		if (write_options(spec->opts, out) < 0)
			fputs("  (out of memory)\n", out);
	}
	if (spec->details)
		fprintf(out, "\n%s\n", spec->details);
	if (spec->write_details) {
		fputc('\n', out);
		spec->write_details(out);
	}
}
