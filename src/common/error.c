#include "common/error.h"
#include "common/assert.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ns_error_set(struct ns_error *err, enum ns_status status, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->status = status;
		err->hint[0] = '\0';
	}
	return (int)status;
}

int ns_error_sys(struct ns_error *err, enum ns_status status, int errnum, const char *what, const char *doing)
{
	if (errnum == ENOMEM)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", what);
	return ns_error_set(err, status, "%s: %s%s%s", what, doing ? doing : "", doing ? ": " : "",
			    strerror(errnum));
}

void ns_error_hint(struct ns_error *err, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
}

void ns_assert_fail(const char *expr, const char *file, int line, const char *func)
{
	while (strncmp(file, "../", 3) == 0) /* __FILE__ as meson passes it, from the build folder */
		file += 3;
	fflush(stdout);
	fprintf(stderr, "neuron-stats: bug: %s:%d: %s: invariant failed: %s\n", file, line, func, expr);
	abort();
}
