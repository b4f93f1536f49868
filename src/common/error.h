/* Errors returned by library code: a status and one formatted message that
 * already names the place (file:line:col or file@byte). Library code never
 * prints or exits; src/cli/ prints the message once and maps the status to
 * an exit code (docs/cli.md "Exit status"). */
#ifndef NS_ERROR_H
#define NS_ERROR_H

#include <stdarg.h>

enum ns_status {
	NS_OK = 0,
	NS_ERR_INPUT = 1,       /* malformed or damaged input: exit 1 */
	NS_ERR_USAGE = 2,       /* bad command line: exit 2 */
	NS_ERR_UNSUPPORTED = 3, /* recognised but undecodable format: exit 3 */
	NS_ERR_REGRESSION = 4,  /* diff gate tripped: exit 4 */
	NS_ERR_IO = 5,          /* cannot read/write a file, disk full: exit 5 */
	NS_ERR_NOMEM = 6,       /* allocation failed or a limit was hit: exit 6 */
};

struct ns_error {
	enum ns_status status;
	char msg[1024];
	char hint[1024]; /* optional second paragraph ("hint: ..."), may be empty */
};

#if defined(__GNUC__)
#define NS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define NS_PRINTF(a, b)
#endif

/* Sets err (if not NULL) and returns status, so callers can write
 * `return ns_error_set(err, NS_ERR_INPUT, "%s:%d: ...", ...);`. */
int ns_error_set(struct ns_error *err, enum ns_status status, const char *fmt, ...) NS_PRINTF(3, 4);
/* For a failed system or C library call on `what` (a path, usually):
 * "<what>: out of memory" and NS_ERR_NOMEM when errnum is ENOMEM (the
 * call could not allocate), else "<what>: <doing>: strerror(errnum)" and
 * status. doing may be NULL. */
int ns_error_sys(struct ns_error *err, enum ns_status status, int errnum, const char *what, const char *doing);
void ns_error_hint(struct ns_error *err, const char *fmt, ...) NS_PRINTF(2, 3);

#endif
