#include "pipeline/env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

bool ns_parse_size(const char *text, uint64_t max, uint64_t *out)
{
	char *end;
	if (!text || !(*text >= '0' && *text <= '9'))
		return false;
	errno = 0;
	unsigned long long n = strtoull(text, &end, 10);
	int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
	if (shift)
		end++;
	if (errno || end == text || *end || n > (max >> shift))
		return false;
	*out = (uint64_t)n << shift;
	return true;
}

uint64_t ns_env_size(const char *name, uint64_t min, uint64_t max, struct ns_error *warn)
{
	const char *v = getenv(name);
	uint64_t n;
	if (!v || !*v)
		return 0;
	if (!ns_parse_size(v, max, &n) || n < min) {
		ns_error_set(warn, NS_ERR_USAGE, "%s=%s is not a number from %llu to %llu; using the default", name, v,
			     (unsigned long long)min, (unsigned long long)max);
		return 0;
	}
	return n;
}
