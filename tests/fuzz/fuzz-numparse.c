/* Exact number parsing (src/ingest/numparse.c): ns_parse_us_to_ns and
 * ns_parse_int64 on any token text.
 *
 * Properties: a plain integer token parses as strtoll reads it (and fails
 * exactly when strtoll overflows); a parsed time printed back as
 * "<us>.<3 digits>" parses to the same nanoseconds; integer microseconds are
 * exactly 1000 times the integer; an integer token is parsed identically by
 * both functions up to the factor 1000 when in range. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "fuzz.h"
#include "ingest/ingest.h"

static bool plain_integer(const char *s, size_t n)
{
	size_t i = n && s[0] == '-';
	if (i == n || n > 30)
		return false;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *tok = (const char *)data;
	int64_t ns, v;
	char buf[64];

	if (size > 256)
		return 0;
	int us_rc = ns_parse_us_to_ns(tok, size, &ns);
	int int_rc = ns_parse_int64(tok, size, &v);

	if (us_rc == 0) {
		/* print back as exact decimal microseconds and parse again */
		uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
		int len = snprintf(buf, sizeof(buf), "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", mag / 1000,
				   mag % 1000);
		int64_t again;
		FUZZ_CHECK(ns_parse_us_to_ns(buf, (size_t)len, &again) == 0 && again == ns,
			   "'%.*s' -> %" PRId64 " -> '%s' does not round-trip", (int)size, tok, ns, buf);
	}
	if (plain_integer(tok, size)) {
		char z[40];
		memcpy(z, tok, size);
		z[size] = '\0';
		errno = 0;
		long long ref = strtoll(z, NULL, 10);
		bool fits = errno == 0;
		FUZZ_CHECK((int_rc == 0) == fits, "'%s': ns_parse_int64 rc %d, strtoll %s", z, int_rc,
			   fits ? "fits" : "overflows");
		if (fits) {
			FUZZ_CHECK(v == ref, "'%s': %" PRId64 " != %lld", z, v, ref);
			bool us_fits = ref <= INT64_MAX / 1000 && ref >= INT64_MIN / 1000;
			FUZZ_CHECK((us_rc == 0) == us_fits, "'%s': us rc %d", z, us_rc);
			if (us_fits)
				FUZZ_CHECK(ns == ref * 1000, "'%s' us -> %" PRId64 " ns", z, ns);
		}
	}
	if (int_rc == 0 && us_rc == 0 && v <= INT64_MAX / 1000 && v >= INT64_MIN / 1000)
		FUZZ_CHECK(ns == v * 1000, "'%.*s': int %" PRId64 ", ns %" PRId64, (int)size, tok, v, ns);
	return 0;
}
