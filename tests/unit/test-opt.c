/* src/cli/opt.c: numeric option values are parsed strictly and checked
 * against the range in their table entry; --help prints that range. The
 * accepted spellings are those of a whole decimal number (C's strtol and
 * strtod also take blanks, '+', "inf", hex and trailing junk, which is what
 * atoi let through before: "-g stack=2junk"). */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opt.h"

static long v_int = 7, v_cap = 55;
static double v_real = 0.5, v_pct = 5;
static const char *v_unit;
static const char *const units[] = { "s", "ms", "us", NULL };
static struct ns_opt_regexes v_include;

static const struct ns_opt opts[] = {
	NS_INT('n', "rows", "N", "rows", &v_int, -1, NS_NO_MAX),
	NS_INT_OR_ZERO(0, "cap", "N", "cap", &v_cap, 4, NS_NO_MAX),
	NS_REAL(0, "alpha", "A", "alpha", &v_real, 1e-12, 1),
	NS_PERCENT('t', "threshold", "PCT", "threshold", &v_pct, 0, 1e9),
	NS_ENUM('u', "unit", "UNIT", "unit: s, ms or us", &v_unit, units),
	NS_OPT_LAST,
};

static const struct ns_cmd_spec spec = { .name = "t", .usage = "neuron-stats t [options]", .summary = "A test.",
					 .opts = opts };

/* Parses one "--name=value"; returns ns_opt_parse's status. */
static int parse1(const char *arg)
{
	char *argv[] = { (char *)"t", (char *)arg, NULL };
	char **pos;
	int npos;
	return ns_opt_parse(&spec, 2, argv, &pos, &npos);
}

Test(opt, whole_decimal_integers_only)
{
	long v = 99;
	cr_expect_eq(ns_opt_parse_long("42", 0, 100, &v), 0);
	cr_expect_eq(v, 42);
	cr_expect_eq(ns_opt_parse_long("-1", -1, 100, &v), 0);
	cr_expect_eq(v, -1);
	const char *bad[] = { "2junk", " 5", "5 ", "+5", "", "-", "0x10", "1e3", "5.0", "--1",
			      "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 99;
		cr_expect_eq(ns_opt_parse_long(bad[i], LONG_MIN, LONG_MAX, &v), -1, "'%s' accepted", bad[i]);
		cr_expect_eq(v, 99, "'%s' wrote the value", bad[i]);
	}
	cr_expect_eq(ns_opt_parse_long("-2", -1, 100, &v), -1, "below the range");
	cr_expect_eq(ns_opt_parse_long("101", -1, 100, &v), -1, "above the range");
}

Test(opt, integer_options_keep_their_range, .init = cr_redirect_stderr)
{
	cr_expect_eq(parse1("--rows=-1"), 0);
	cr_expect_eq(v_int, -1);
	cr_expect_eq(parse1("--rows=-2"), 2);
	cr_expect_eq(parse1("-n5x"), 2);
	cr_expect_eq(v_int, -1, "a refused value leaves the old one");
	cr_expect_eq(parse1("--cap=0"), 0, "the special value");
	cr_expect_eq(v_cap, 0);
	cr_expect_eq(parse1("--cap=4"), 0);
	cr_expect_eq(v_cap, 4);
	for (const char *const *a = (const char *const[]){ "--cap=1", "--cap=3", "--cap=-1", "--cap=00x", NULL }; *a; a++)
		cr_expect_eq(parse1(*a), 2, "%s accepted", *a);
	cr_expect_eq(v_cap, 4);
}

Test(opt, real_and_percent_options_keep_their_range, .init = cr_redirect_stderr)
{
	cr_expect_eq(parse1("--alpha=0.01"), 0);
	cr_expect_eq(v_real, 0.01);
	cr_expect_eq(parse1("--alpha=1e-3"), 0);
	cr_expect_eq(v_real, 1e-3);
	const char *bad[] = { "--alpha=0", "--alpha=1.5", "--alpha=inf", "--alpha=nan", "--alpha= 0.1",
			      "--alpha=0x1p-3", "--alpha=0.1%", "--alpha=.", "-t-1", "-t5%%", "-t1e10" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(parse1(bad[i]), 2, "%s accepted", bad[i]);
	cr_expect_eq(v_real, 1e-3);
	cr_expect_eq(parse1("-t2.5%"), 0);
	cr_expect_eq(v_pct, 2.5);
	cr_expect_eq(parse1("--threshold=10"), 0);
	cr_expect_eq(v_pct, 10);
}

Test(opt, a_refused_value_names_the_range, .init = cr_redirect_stderr)
{
	cr_expect_eq(parse1("--cap=2"), 2);
	fflush(stderr);
	cr_expect_stderr_eq_str("neuron-stats: error: t: --cap: expected 0 or N >= 4, not '2'\n"
				"usage: neuron-stats t [options]\n"
				"Try 'neuron-stats t --help' for more information.\n");
}

Test(opt, a_choice_is_one_of_the_list, .init = cr_redirect_stderr)
{
	cr_expect_eq(parse1("--unit=ms"), 0);
	cr_expect_eq(v_unit, units[1], "the value is the list's own entry");
	cr_expect_eq(parse1("-uus"), 0);
	cr_expect_eq(v_unit, units[2]);
	for (const char *const *a = (const char *const[]){ "--unit=MS", "--unit=", "--unit=m", "--unit=mss", NULL }; *a; a++)
		cr_expect_eq(parse1(*a), 2, "%s accepted", *a);
	cr_expect_eq(v_unit, units[2], "a refused value leaves the old one");
}

Test(opt, a_refused_choice_names_the_choices, .init = cr_redirect_stderr)
{
	cr_expect_eq(parse1("--unit=ns"), 2);
	fflush(stderr);
	cr_expect_stderr_eq_str("neuron-stats: error: t: --unit: expected s, ms or us, not 'ns'\n"
				"usage: neuron-stats t [options]\n"
				"Try 'neuron-stats t --help' for more information.\n");
}

Test(opt, help_prints_each_range)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cr_assert(f);
	ns_opt_help(&spec, f);
	fclose(f);
	cr_expect_str_eq(text, "usage: neuron-stats t [options]\n\nA test.\n\noptions:\n"
			       "  -n, --rows N                rows [N >= -1]\n"
			       "      --cap N                 cap [0 or N >= 4]\n"
			       "      --alpha A               alpha [A from 1e-12 to 1]\n"
			       "  -t, --threshold PCT         threshold [PCT from 0 to 1000000000]\n"
			       "  -u, --unit UNIT             unit: s, ms or us\n");
	free(text);
}

/* NS_REGEX: each value is compiled (POSIX ERE) and kept in order; a bad
 * expression is a usage error naming the option; at most NS_OPT_MAX_REGEX. */
static const struct ns_opt regex_opts[] = {
	NS_REGEX(0, "include", "REGEX", "include", &v_include),
	NS_OPT_LAST,
};
static const struct ns_cmd_spec regex_spec = { .name = "t", .usage = "neuron-stats t [options]",
					       .summary = "A test.", .opts = regex_opts };

static int parse_regex(const char *arg)
{
	char *argv[] = { (char *)"t", (char *)arg, NULL };
	char **pos;
	int npos;
	return ns_opt_parse(&regex_spec, 2, argv, &pos, &npos);
}

Test(opt, regex_options_compile_each_value, .init = cr_redirect_stderr)
{
	v_include.n = 0;
	cr_expect_eq(parse_regex("--include=^aten::(mm|add)$"), 0);
	cr_expect_eq(parse_regex("--include=gelu"), 0);
	cr_assert_eq(v_include.n, 2);
	cr_expect_eq(regexec(&v_include.re[0], "aten::mm", 0, NULL, 0), 0);
	cr_expect_neq(regexec(&v_include.re[0], "aten::mmx", 0, NULL, 0), 0);
	cr_expect_eq(regexec(&v_include.re[1], "aten::gelu", 0, NULL, 0), 0);
	cr_expect_eq(parse_regex("--include=("), 2);
	cr_expect_eq(v_include.n, 2, "a bad expression was kept");
	while (v_include.n < NS_OPT_MAX_REGEX)
		cr_assert_eq(parse_regex("--include=x"), 0);
	cr_expect_eq(parse_regex("--include=x"), 2, "more than NS_OPT_MAX_REGEX");
	fflush(stderr);
	cr_expect_stderr_eq_str(
		"neuron-stats: error: t: --include: not a regular expression (Unmatched ( or \\(): '('\n"
		"usage: neuron-stats t [options]\nTry 'neuron-stats t --help' for more information.\n"
		"neuron-stats: error: t: --include: at most 16 expressions, not one more: 'x'\n"
		"usage: neuron-stats t [options]\nTry 'neuron-stats t --help' for more information.\n");
}
