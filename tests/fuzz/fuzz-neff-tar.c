/* The NEFF tar walker and JSON members (src/neff/neff-archive.c,
 * neff-json.c): the input is the payload; a valid header is put in front of
 * it, so the fuzzer spends its time inside the archive. The first byte
 * chooses the encoding: odd -> the rest is gzip-compressed here first (as
 * real NEFFs are), even -> the rest is used as a raw tar. */
#include <zlib.h>

#include "neff-common.h"

static void put_le(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (4u << 20))
		return 0;
	bool gzip = data[0] & 1;
	data++;
	size--;
	size_t cap = 1024 + (gzip ? compressBound((uLong)size) + 32 : size);
	uint8_t *file = calloc(1, cap);
	FUZZ_CHECK(file != NULL, "calloc");
	size_t payload = size;
	if (gzip) {
		z_stream z = { 0 };
		FUZZ_CHECK(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
		z.next_in = (Bytef *)data;
		z.avail_in = (uInt)size;
		z.next_out = file + 1024;
		z.avail_out = (uInt)(cap - 1024);
		FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
		payload = z.total_out;
		deflateEnd(&z);
	} else if (size) {
		memcpy(file + 1024, data, size);
	}
	put_le(file + 0x00, 2);       /* pkg_version */
	put_le(file + 0x08, 1024);    /* header_size */
	put_le(file + 0x10, payload); /* data_size */
	put_le(file + 0x18, 2);       /* version_major */
	file[0xA8] = 1;               /* num_tpb */
	neff_check(file, 1024 + payload);
	free(file);
	return 0;
}
