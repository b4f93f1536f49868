/* The `neff` summary (docs/neff.md): an opened NEFF (neff/neff.h) laid
 * out over the grid engine, as aligned text or as JSON in cJSON's
 * formatted style. Strings from the file are escaped in text (control
 * bytes as \xNN), so a hostile member name cannot move the cursor or
 * forge lines. */
#ifndef NS_NEFF_SUMMARY_H
#define NS_NEFF_SUMMARY_H

#include <stdio.h>

#include "common/error.h"
#include "neff/neff.h"

enum ns_neff_format { NS_NEFF_FORMAT_TEXT, NS_NEFF_FORMAT_JSON };
#define NS_NEFF_SUMMARY_MEMBERS 0x1u /* append the member table / "members" array */

/* Returns NS_OK, or NS_ERR_NOMEM (JSON: nothing written; text: it may stop
 * short); write errors are left to the caller's ferror() check. */
int ns_neff_write_summary(const struct ns_neff *neff, FILE *out, enum ns_neff_format format, unsigned flags,
			  struct ns_error *err);

#endif
