/* Runs a fuzz target without libFuzzer: every file named on the command line
 * (or found in a directory named there, in sorted order) is passed once to
 * LLVMFuzzerTestOneInput. This is how `meson test` replays the seed corpus
 * and every crash input kept under tests/fuzz/regressions/. A missing
 * directory is skipped (a target may have no regressions yet). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
		if (!buf) {
			fprintf(stderr, "replay: out of memory\n");
			exit(1);
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	fclose(f);
	/* an exact-size copy, so reads past the input trip ASan as under libFuzzer */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact)
		exit(1);
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!names || !(names[n] = strdup(de->d_name)))
			exit(1);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path))
				rc = -1;
			else
				(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int rc = 0;
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (run_dir(argv[i], &count))
				rc = 1;
		} else if (stat(argv[i], &st) == 0) {
			if (run_file(argv[i]))
				rc = 1;
			else
				count++;
		}
	}
	fprintf(stderr, "replayed %zu inputs\n", count); /* (fuzz-opt sends stdout to /dev/null) */
	return rc;
}
