/* Shared by the store's .c files: the schema text and the mapping from
 * SQLite result codes to ns_error. Not used outside src/store/. */
#ifndef NS_STORE_INTERNAL_H
#define NS_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
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

/* The tables a store fills through its row queue (store.c stmt_def), and
 * the correlation index it builds once a trace's events are in. */
enum stmt_id {
	STMT_EVENT,
	STMT_STRING,
	STMT_TRACE_STRING,
	STMT_THREAD,
	STMT_PROCESS,
	STMT_META,
	STMT_XWARN,
	STMT_FLOW,
	STMT_STATS,
	STMT_MEMORY,
	STMT_AVG,
	STMT_TRACE,
	STMT_DETAIL,
	STMT_NEFF_SUMMARY,
	STMT_ENGINE_OPCODES,
	STMT_CORRELATION_INDEX,
	STMT__COUNT
};
/* For merge.c, which fills a store being written with rows it copies:
 * the store's row queue (statements as above), and a string interned
 * into the database's strings (its id; UINT32_MAX when out of memory),
 * written to the strings table by ns_store_write_strings. */
struct ns_store;
struct ns_rowq *ns_store_rows(struct ns_store *s);
uint32_t ns_store_intern(struct ns_store *s, const char *text, size_t len);
int ns_store_write_strings(struct ns_store *s, struct ns_error *err);

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

/* Checks that db_path holds a neuron-stats database of the schema this
 * build reads (NS_ERR_INPUT: another file; NS_ERR_UNSUPPORTED: another
 * version), and that each of names[0..n) in db is a table (a view so named
 * would run instead: a database is input, not code). */
int ns_store_check_schema(const char *db_path, struct ns_error *err);
int ns_store_check_tables(const char *db_path, sqlite3 *db, const char *const *names, size_t n, struct ns_error *err);

#endif
