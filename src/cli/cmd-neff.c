/* neuron-stats neff FILE.neff: what a compiled model contains (docs/neff.md). */
#include <string.h>

#include "cli/cli.h"
#include "neff/neff.h"
#include "report/neff-summary.h"

static bool opt_members;
static const char *opt_format;

static const char *const formats[] = { "text", "json", NULL };

static const struct ns_opt neff_opts[] = {
	NS_FLAG('m', "members", "also list the tar members (offset, size, name)", &opt_members),
	NS_ENUM('f', "format", "FORMAT", "text (default) or json", &opt_format, formats),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_neff_spec = {
	.name = "neff",
	.usage = "neuron-stats neff FILE.neff [--members] [--format text|json]",
	.summary = "Summarise a compiled model (NEFF): engines' instruction counts, I/O, HLO stats.",
	.details = "The file is checked structurally (header sizes, gzip stream, tar headers, the\n"
		   "kelf -> def.json references); the header hash is shown but not verified.\n"
		   "Instruction counts are engine binary sizes / 64. Format notes: docs/neff.md.",
	.opts = neff_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

int cmd_neff(int argc, char **argv)
{
	struct ns_neff *neff = NULL;
	struct ns_error err = { 0 };
	enum ns_neff_format format = NS_NEFF_FORMAT_TEXT;
	char **pos;
	int npos, rc;

	opt_members = false;
	opt_format = NULL;
	rc = ns_opt_parse(&cmd_neff_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? NS_EXIT_OK : rc;
	if (opt_format && strcmp(opt_format, "json") == 0)
		format = NS_NEFF_FORMAT_JSON;
	if (ns_neff_open(pos[0], &neff, &err) ||
	    ns_neff_write_summary(neff, stdout, format, opt_members ? NS_NEFF_SUMMARY_MEMBERS : 0,
				  &err)) {
		rc = ns_cli_fail(&err);
		goto out;
	}
	rc = NS_EXIT_OK;
out:
	ns_neff_free(neff);
	return rc;
}
