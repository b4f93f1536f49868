/* The environment variables the pipeline reads (docs/cli.md). */
#ifndef NS_PIPELINE_ENV_H
#define NS_PIPELINE_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

/* A size in bytes: decimal digits, optionally followed by K, M or G (KiB,
 * MiB, GiB), at most max. False if text is not one. */
bool ns_parse_size(const char *text, uint64_t max, uint64_t *out);

/* The size in the environment variable name (as ns_parse_size, from min,
 * 1 or more, to max); 0 when unset, and with *warn set when it is not one. */
uint64_t ns_env_size(const char *name, uint64_t min, uint64_t max, struct ns_error *warn);

#endif
