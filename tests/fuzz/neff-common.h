/* Shared by fuzz-neff.c and fuzz-neff-tar.c: open a NEFF held in memory and
 * print both summaries. The JSON summary must parse; the text summary must
 * not carry control bytes from the file (member names are escaped). */
#include <cjson/cJSON.h>
#include <string.h>

#include "fuzz.h"
#include "neff/neff.h"
#include "report/neff-summary.h"

static void neff_check(const uint8_t *data, size_t size)
{
	struct ns_neff *neff = NULL;
	struct ns_error err = { 0 };
	if (ns_neff_open_mem(data, size, "fuzz.neff", &neff, &err)) {
		FUZZ_CHECK(err.msg[0] != '\0', "an error without a message");
		return;
	}
	for (size_t i = 0; i < neff->member_count; i++)
		if (neff->members[i].name[0])
			FUZZ_CHECK(ns_neff_find_member(neff, neff->members[i].name) != NULL, "member %zu not found", i);
	for (int fmt = NS_NEFF_FORMAT_TEXT; fmt <= NS_NEFF_FORMAT_JSON; fmt++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		FUZZ_CHECK(out != NULL, "open_memstream");
		int rc = ns_neff_write_summary(neff, out, (enum ns_neff_format)fmt, NS_NEFF_SUMMARY_MEMBERS, &err);
		fclose(out);
		if (rc == 0 && fmt == NS_NEFF_FORMAT_JSON) {
			cJSON *doc = cJSON_ParseWithLength(buf, len);
			FUZZ_CHECK(doc != NULL, "the JSON summary does not parse");
			cJSON_Delete(doc);
		}
		if (rc == 0 && fmt == NS_NEFF_FORMAT_TEXT)
			for (size_t i = 0; i < len; i++)
				FUZZ_CHECK((unsigned char)buf[i] >= 0x20 || buf[i] == '\n', "control byte 0x%02x in the text summary",
					   (unsigned char)buf[i]);
		free(buf);
	}
	ns_neff_free(neff);
}
