/* Shared by the store's .c files: the schema text and the mapping from
 * SQLite result codes to ns_error. Not used outside src/store/. */
#ifndef NS_STORE_INTERNAL_H
#define NS_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

#ifndef NS_VERSION
#define NS_VERSION "unknown"
#endif
/* store_info 'writer': the build that wrote a database. The cache trusts
 * only databases written by the running build. */
#define NS_STORE_WRITER "neuron-stats " NS_VERSION

/* PRAGMA application_id of every neuron-stats database: "NSdb". */
#define NS_APPLICATION_ID 0x4e536462

/* Tables and views, created in an empty database (docs/schema.md). */
extern const char ns_schema_tables[];
extern const char ns_schema_views[];
/* Indexes, created after the bulk load (building them once is cheaper than
 * maintaining them row by row): the correlation index once a trace's events
 * are in (later traces' rows update it), the rest at commit. */
extern const char ns_schema_correlation_index[];
extern const char ns_schema_indexes[];

/* Sets err from a failed SQLite call: "<path>: <what>: <sqlite message>",
 * with the status the result code deserves (disk full and I/O errors are
 * NS_ERR_IO, out of memory NS_ERR_NOMEM, a damaged file NS_ERR_INPUT).
 * Returns the status. */
int ns_store_sqlite_error(struct ns_error *err, sqlite3 *db, int rc, const char *path,
			  const char *what);
/* The same with SQLite's message given (taken where the failure happened). */
int ns_store_sqlite_failure(struct ns_error *err, int rc, const char *msg, const char *path,
			    const char *what);

/* Opens an existing database read-only. On failure sets err and returns
 * non-zero (*out is NULL). */
int ns_store_open_readonly(const char *db_path, sqlite3 **out, struct ns_error *err);

/* Reads the application id and user version from the 100-byte SQLite file
 * header without opening the database. Returns false if path is not an
 * SQLite file. */
bool ns_store_read_header(const char *db_path, uint32_t *application_id, uint32_t *user_version);

#endif
