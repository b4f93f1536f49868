/* The command-line parser (src/cli/opt.c) with the real option tables of
 * every command except the SQL itself (nothing is run: only ns_opt_parse
 * and the value parsers of --group-by and --sort; --format and the other
 * choices are NS_OPT_ENUM, checked by ns_opt_parse). The input is
 * the argument list, NUL-separated; its first byte picks the command.
 *
 * Properties: parsing returns 0 (help: -1, usage error: 2) and the
 * positionals it returns are arguments of the input, within the command's
 * bounds. stdout is sent to /dev/null (run libFuzzer with -close_fd_mask=2
 * to also silence the usage messages). */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fuzz.h"
#include "report/report.h"

#define MAX_ARGS 64

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	int fd = open("/dev/null", O_WRONLY);
	if (fd >= 0) {
		fflush(stdout);
		dup2(fd, 1);
		close(fd);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	/* (every command of the table: a new one is fuzzed without an edit here) */
	const struct ns_cmd_spec *spec = ns_cli_commands[data[0] % ns_cli_n_commands].spec;
	char *text = malloc(size + 1);
	char *argv[MAX_ARGS + 2], *orig[MAX_ARGS + 2];
	int argc = 0;
	FUZZ_CHECK(text != NULL, "malloc");
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	argv[argc++] = (char *)spec->name;
	for (size_t i = 0; i < size - 1 && argc <= MAX_ARGS; i += strlen(text + i) + 1)
		argv[argc++] = text + i;
	argv[argc] = NULL;
	memcpy(orig, argv, sizeof(argv));

	char **pos = NULL;
	int npos = -1;
	int rc = ns_opt_parse(spec, argc, argv, &pos, &npos);
	FUZZ_CHECK(rc == 0 || rc == -1 || rc == 2, "ns_opt_parse returned %d", rc);
	if (rc == 0) {
		FUZZ_CHECK(npos >= spec->min_args && (spec->max_args < 0 || npos <= spec->max_args),
			   "%d positionals for %s", npos, spec->name);
		for (int k = 0; k < npos; k++) {
			bool found = false;
			for (int j = 1; j < argc; j++)
				found |= pos[k] == orig[j];
			FUZZ_CHECK(found, "positional %d is not an argument", k);
		}
	}
	/* the value parsers on every argument */
	for (int j = 1; j < argc; j++) {
		struct ns_agg_opts ao = { .backend_override = -1 };
		struct ns_error err = { 0 };
		(void)ns_cli_parse_group_by(orig[j], &ao, &err);
		(void)ns_sort_key_find(orig[j]);
	}
	free(text);
	return 0;
}
