/* Capture directory discovery, by name (src/ntff/capture*.c,
 * src/ingest/discover.c, the NEFF file-name patterns of src/neff/neff.c).
 * The input is a list of file names, one per line. Each name is classified
 * on its own; then (for every other input) the names become files in a
 * private directory, which is scanned as `report`/`ingest` scan a capture.
 *
 * Properties: fixed-size name fields stay NUL-terminated; nothing is read
 * or created outside the private directory; scans of hostile names (control
 * bytes, "..", very long or deep paths) finish without error other than
 * "no trace found". */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "ingest/ingest.h"
#include "neff/neff.h"
#include "ntff/capture.h"

#define MAX_NAMES 12
#define MAX_NAME 240

static const char kineto_stub[] = "{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", "
				  "\"name\": \"aten::add\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}]}";

static void classify(const char *name)
{
	char path[PATH_MAX], out[80];
	struct ns_cap_file f;
	struct ns_neff_filename nf;
	snprintf(path, sizeof(path), "%s/none/%s", fuzz_tmpdir(), name);
	if (ns_capture_classify(path, &f, NULL) > 0) {
		FUZZ_CHECK(memchr(f.hash, '\0', sizeof(f.hash)) && memchr(f.stem, '\0', sizeof(f.stem)),
			   "an unterminated field");
		(void)ns_cap_kind_name(f.kind);
	}
	if (ns_neff_parse_filename(name, &nf))
		FUZZ_CHECK(strlen(nf.hash) > 0 && strlen(nf.hash) < sizeof(nf.hash), "bad hash length");
	/* exact-size buffers, so a write past n trips ASan */
	for (size_t n = 1; n < 80; n += 9) {
		char *buf = malloc(n);
		int len = ns_neff_hash_from_filename(name, buf, n);
		FUZZ_CHECK(len < (int)n, "hash of %d bytes in a buffer of %zu", len, n);
		free(buf);
	}
	size_t len = strlen(name);
	for (size_t n = 1; n <= sizeof(out); n += 13) {
		char *buf = malloc(n);
		size_t w = ns_neff_hash_normalize(name, len, buf, n);
		FUZZ_CHECK(w < n && strlen(buf) == w, "normalize wrote %zu in %zu", w, n);
		free(buf);
	}
}

/* Creates root/name (and its folders); names with "..", "." or empty parts
 * are skipped, so nothing lands outside root. */
static void create(const char *root, const char *name, size_t index)
{
	char path[PATH_MAX], copy[MAX_NAME + 1];
	size_t used = (size_t)snprintf(path, sizeof(path), "%s", root);
	size_t name_len = strnlen(name, MAX_NAME);
	memcpy(copy, name, name_len);
	copy[name_len] = '\0';
	char *save = NULL;
	for (char *part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		if (strcmp(part, ".") == 0 || strcmp(part, "..") == 0)
			return;
		used += (size_t)snprintf(path + used, sizeof(path) - used, "/%s", part);
		if (used >= sizeof(path) - 1)
			return;
		if (save && *save) {
			if (mkdir(path, 0700) != 0 && errno != EEXIST)
				return;
		}
	}
	if (used == strlen(root))
		return;
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	if (strstr(name, ".json"))
		fputs(index & 1 ? kineto_stub : "{\"nc_exec_running\": []}", f);
	else
		fprintf(f, "%zu", index);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char names[MAX_NAMES][MAX_NAME + 1];
	size_t n = 0, i = 0;
	while (i < size && n < MAX_NAMES) {
		size_t len = 0;
		while (i < size && data[i] != '\n') {
			if (len < MAX_NAME && data[i] != '\0')
				names[n][len++] = (char)data[i];
			i++;
		}
		i++;
		names[n][len] = '\0';
		if (len)
			n++;
	}
	for (size_t k = 0; k < n; k++)
		classify(names[k]);

	if (fuzz_hash(data, size) & 1)
		return 0;
	char root[PATH_MAX];
	snprintf(root, sizeof(root), "%s/cap", fuzz_tmpdir());
	mkdir(root, 0700);
	for (size_t k = 0; k < n; k++)
		create(root, names[k], k);

	char **paths = NULL;
	size_t np = 0;
	struct ns_error err = { 0 };
	if (ns_find_traces(root, &paths, &np, &err) == 0) {
		for (size_t k = 0; k < np; k++) {
			FUZZ_CHECK(strncmp(paths[k], root, strlen(root)) == 0, "found a path outside: %s", paths[k]);
			free(paths[k]);
		}
		free(paths);
	}
	struct ns_capture *cap = NULL;
	if (ns_capture_scan(root, NULL, &cap, &err) == 0) {
		for (size_t u = 0; u < cap->n_units; u++)
			for (size_t k = 0; k < cap->units[u].n_files; k++)
				FUZZ_CHECK(strncmp(cap->units[u].files[k].path, root, strlen(root)) == 0,
					   "a capture file outside: %s", cap->units[u].files[k].path);
		ns_capture_free(cap);
	}
	fuzz_clear_dir(root);
	return 0;
}
