/* neuron-stats: main(), the command table and the one check of standard
 * output. The commands are the ns-cli library (src/cli/meson.build). */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "report/grid.h"

/* Checks standard output once, after the command (git's run_builtin): a
 * write that failed anywhere, --help included, is exit 5 unless the command
 * already failed with its own code. A reader that went away (EPIPE) gets no
 * message. */
static int finish_stdout(int code)
{
	errno = 0;
	bool failed = fflush(stdout) != 0 || ferror(stdout);
	int saved = errno ? errno : ns_cli_stdout_errno();
	if (fclose(stdout) != 0 && !failed) {
		failed = true;
		saved = errno;
	}
	if (!failed)
		return code;
	if (saved != EPIPE)
		fprintf(stderr, "neuron-stats: error: writing to stdout: %s\n",
			saved ? strerror(saved) : "write error");
	return code ? code : NS_EXIT_IO;
}

static void usage(FILE *out)
{
	fputs("usage: neuron-stats PATH [report options]\n"
	      "       neuron-stats COMMAND [options] [args]\n\n"
	      NS_CLI_TAGLINE "\n\n"
	      "commands:\n",
	      out);
	struct ns_grid g; /* the command list: name (as wide as the longest), summary */
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_PLAIN;
	g.gap = " ";
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	for (size_t i = 0; i < ns_cli_n_commands; i++)
		ns_grid_row(&g,
			    (struct ns_cell[]){ { .type = NS_CELL_TEXT, .text = ns_cli_commands[i].spec->name },
						{ .type = NS_CELL_TEXT, .text = ns_cli_commands[i].spec->summary } },
			    true, false);
	if (ns_grid_write_text(out, &g) < 0)
		fputs("  (out of memory)\n", out);
	ns_grid_release(&g);
	fputs("\n'neuron-stats COMMAND --help' describes a command. Exit status: 0 ok, 1 bad input,\n"
	      "2 usage, 3 unsupported format, 4 regression found (diff), 5 I/O error, 6 out of memory.\n",
	      out);
}

/* Makes sure file descriptors 0, 1 and 2 are open (on /dev/null if they
 * were closed), as SQLite's shell and daemons do: otherwise the next file
 * opened, a temporary database, takes the number and warnings written to
 * "stderr" go into it. Without /dev/null, nothing is safe to open: exit 5. */
static void open_standard_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int opened = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (opened != fd) /* (the lowest free number: fd, as the ones below it are open) */
			_exit(NS_EXIT_IO);
	}
}

int main(int argc, char **argv)
{
	open_standard_fds();
	/* Arrays of 1 MiB and more get pages of their own, returned when freed:
	 * glibc's default raises this threshold as such arrays are freed, and
	 * then serves them from heaps that keep freed memory, one heap per
	 * thread, so a run's peak memory would be the sum of what each
	 * thread ever held (docs/performance.md "Memory"). */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	if (argc < 2) {
		usage(stderr);
		return NS_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return finish_stdout(0);
	}
	if (strcmp(argv[1], "--version") == 0) {
		puts("neuron-stats " NS_VERSION);
		return finish_stdout(0);
	}
	if (strcmp(argv[1], "--man") == 0) { /* the man page, for meson to install (not in the help) */
		ns_cli_write_man(stdout);
		return finish_stdout(0);
	}
	for (size_t i = 0; i < ns_cli_n_commands; i++)
		if (strcmp(argv[1], ns_cli_commands[i].spec->name) == 0)
			return ns_cli_run_cached(&ns_cli_commands[i], argc - 1, argv + 1, finish_stdout);
	/* no command word: the report on PATH */
	return ns_cli_run_cached(&ns_cli_commands[0], argc, argv, finish_stdout);
}
