/* NEFF files (src/neff): the 1024-byte header, the gzip'd or raw tar
 * payload and its JSON members, from arbitrary bytes. See neff-common.h for
 * the properties; fuzz-neff-tar.c aims at the tar walker directly. */
#include "neff-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	neff_check(data, size);
	return 0;
}
