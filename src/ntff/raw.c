/* Raw capture files (.ntff, *.pb): identified by name and size, with a
 * check that the content is not something this tool does read. Their byte
 * layout is not public (neuron-formats.md §3.1, §3.2); nothing is decoded. */
#include "ntff/ntff.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/vec.h"

#define NTFF_HEADER_BYTES 128 /* [RE]: a 128-byte header precedes the protobuf */

/* Content this tool reads, by magic: a raw file that starts like one of
 * these was probably renamed. */
static const struct {
	const char *magic;
	size_t len;
	const char *what;
} magics[] = {
	{ "PAR1", 4, "Parquet" }, { "\x1f\x8b", 2, "gzip" }, { "\x28\xb5\x2f\xfd", 4, "zstd" },
	{ "{", 1, "JSON" },       { "[", 1, "JSON" },
};

int ns_ntff_identify(const char *path, struct ns_raw_info *out, struct ns_error *err)
{
	struct stat st;
	FILE *f;
	size_t len = strlen(path);
	memset(out, 0, sizeof(*out));
	out->kind = len >= 5 && strcmp(path + len - 5, ".ntff") == 0 ? NS_CAP_NTFF : NS_CAP_PB;
	if (stat(path, &st) != 0)
		return ns_error_set(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
	if (!(f = fopen(path, "rb")))
		return ns_error_sys(err, NS_ERR_IO, errno, path, "cannot open");
	out->size = (uint64_t)st.st_size;
	out->head_len = fread(out->head, 1, sizeof(out->head), f);
	fclose(f);
	for (size_t i = 0; i < NS_ARRAY_SIZE(magics); i++)
		if (out->head_len >= magics[i].len && memcmp(out->head, magics[i].magic, magics[i].len) == 0)
			out->looks_like = magics[i].what;
	out->too_small = out->kind == NS_CAP_NTFF && out->size < NTFF_HEADER_BYTES;
	return 0;
}
