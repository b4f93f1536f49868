#include "cli/opt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

static int set_value(const struct ns_cmd_spec *spec, const struct ns_opt *o, const char *arg)
{
	switch (o->type) {
	case NS_OPT_FLAG:
		*(bool *)o->value = true;
		return 0;
	case NS_OPT_STRING:
		*(const char **)o->value = arg;
		return 0;
	case NS_OPT_INT: {
		char *end;
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (errno || end == arg || *end) {
			char what[64];
			snprintf(what, sizeof(what), "--%s: not an integer:", o->long_name);
			return usage_error(spec, what, arg);
		}
		*(long *)o->value = v;
		return 0;
	}
	default:
		return 2;
	}
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

void ns_opt_help(const struct ns_cmd_spec *spec, FILE *out)
{
	fprintf(out, "usage: %s\n\n%s\n", spec->usage, spec->summary);
	if (spec->opts && spec->opts[0].type != NS_OPT_END)
		fputs("\noptions:\n", out);
	for (const struct ns_opt *o = spec->opts; o && o->type != NS_OPT_END; o++) {
		char left[80];
		int len = snprintf(left, sizeof(left), "  %s%c%s--%s%s%s", o->short_name ? "-" : "",
				   o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ", o->long_name,
				   o->arg_name ? " " : "", o->arg_name ? o->arg_name : "");
		if (!o->short_name)
			len = snprintf(left, sizeof(left), "      --%s%s%s", o->long_name, o->arg_name ? " " : "",
				       o->arg_name ? o->arg_name : "");
		if (len < 30)
			fprintf(out, "%-30s%s\n", left, o->help);
		else
			fprintf(out, "%s\n%-30s%s\n", left, "", o->help);
	}
	if (spec->details)
		fprintf(out, "\n%s\n", spec->details);
}
