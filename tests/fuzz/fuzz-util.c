/* fuzz.h's file helpers. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static char tmpdir[64];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

void fuzz_clear_dir(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_tmpdir(void)
{
	if (tmpdir[0]) {
		fuzz_clear_dir(tmpdir);
		rmdir(tmpdir);
	}
}

const char *fuzz_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(tmpdir, sizeof(tmpdir), "%.40s/ns-fuzz-XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(tmpdir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(remove_tmpdir);
	}
	return tmpdir;
}

const char *fuzz_write_file(const char *name, const void *data, size_t size)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", fuzz_tmpdir(), name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror("fuzz: open");
		abort();
	}
	const char *p = data;
	while (size) {
		ssize_t w = write(fd, p, size);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			perror("fuzz: write");
			abort();
		}
		p += w;
		size -= (size_t)w;
	}
	close(fd);
	return path;
}
