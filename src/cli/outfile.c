/* A command's -o FILE (html): checked against the inputs before any work,
 * written to a temporary file beside it and renamed over it when complete. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ingest/ingest.h"

/* Whether st is the file at path (by device and inode). */
static bool same_file(const struct stat *st, const char *path)
{
	struct stat in;
	return stat(path, &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino;
}

/* Refused: out is not a regular file, or is input or one of the traces below it. */
static int check_against_inputs(const char *out, const struct stat *st, const char *input, struct ns_error *err)
{
	char **paths = NULL;
	size_t n = 0;
	int rc = 0;
	if (S_ISDIR(st->st_mode)) {
		rc = ns_error_set(err, NS_ERR_USAGE, "%s: is a directory; the output is written only to a regular file",
				      out);
		ns_error_hint(err, "name the file, e.g. -o %s/report.html", out);
		return rc;
	}
	if (!S_ISREG(st->st_mode))
		return ns_error_set(err, NS_ERR_USAGE, "%s: is not a regular file; the output is written only to one", out);
	if (same_file(st, input)) {
		rc = ns_error_set(err, NS_ERR_USAGE, "%s: is the input %s; the output would replace it", out, input);
	} else if (ns_find_traces(input, &paths, &n, err) == 0) {
		for (size_t i = 0; i < n && !rc; i++)
			if (same_file(st, paths[i]))
				rc = ns_error_set(err, NS_ERR_USAGE, "%s: is the input %s; the output would replace it", out,
						  paths[i]);
	} else {
		rc = 0; /* (an input that cannot be listed fails the load, with its own message) */
		memset(err, 0, sizeof(*err));
	}
	if (rc)
		ns_error_hint(err, "choose another -o");
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

int ns_cli_outfile_check(const char *out, const char *input, char **target, struct ns_error *err)
{
	struct stat st;
	*target = NULL;
	if (stat(out, &st) < 0) {
		if (errno != ENOENT)
			return ns_error_set(err, NS_ERR_IO, "%s: cannot check the output: %s", out, strerror(errno));
		struct stat link;
		if (lstat(out, &link) == 0) /* a link to no file */
			return ns_error_set(err, NS_ERR_USAGE, "%s: a symbolic link to no file; not written through it",
					    out);
		*target = strdup(out);
	} else {
		int rc = check_against_inputs(out, &st, input, err);
		if (rc)
			return rc;
		*target = realpath(out, NULL); /* a link is written through: the file it names is replaced */
	}
	return *target ? 0 : ns_error_set(err, NS_ERR_NOMEM, "out of memory");
}

int ns_cli_outfile_open(struct ns_cli_outfile *o, const char *target, struct ns_error *err)
{
	memset(o, 0, sizeof(*o));
	if (asprintf(&o->tmp, "%s.tmp-%ld", target, (long)getpid()) < 0) {
		o->tmp = NULL;
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		int rc = ns_error_set(err, NS_ERR_IO, "%s: cannot create the output: %s", target, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		free(o->tmp);
		o->tmp = NULL;
		return rc;
	}
	o->target = target;
	return 0;
}

int ns_cli_outfile_commit(struct ns_cli_outfile *o, struct ns_error *err)
{
	int rc = 0;
	bool failed = fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0;
	int saved = errno;
	if (fclose(o->f) != 0 && !failed) {
		failed = true;
		saved = errno;
	}
	o->f = NULL;
	if (failed)
		rc = ns_error_set(err, NS_ERR_IO, "%s: cannot write the output: %s", o->target, strerror(saved));
	else if (rename(o->tmp, o->target) != 0)
		rc = ns_error_set(err, NS_ERR_IO, "%s: cannot write the output: %s", o->target, strerror(errno));
	if (rc)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	return rc;
}

void ns_cli_outfile_abort(struct ns_cli_outfile *o)
{
	if (o->f)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}
