/* Fuzz target: the Parquet reader (src/ntff/parquet.c) on any bytes as a
 * file: the footer, then every column of every row group, then each row as
 * JSON text; then the same bytes as a table of an Explorer profile folder
 * (Instruction.parquet or SystemProfileEvents.parquet, by the size's
 * parity) through the device- or system-profile reader (src/ntff/pqexport.c).
 * Properties: an error always has a message; a decoded column has the row
 * group's row count; every cell's JSON text parses (cJSON); a device
 * profile's busy intervals are ordered and disjoint. */
#include <cjson/cJSON.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "ntff/ntff.h"
#include "ntff/parquet.h"

static void as_profile_table(const uint8_t *data, size_t size)
{
	struct ns_error err = { 0 };
	bool system = size % 2;
	unlink(fuzz_write_file(system ? "Instruction.parquet" : "SystemProfileEvents.parquet", "", 0));
	const char *path = fuzz_write_file(system ? "SystemProfileEvents.parquet" : "Instruction.parquet", data, size);
	if (system) {
		struct ns_sysprof *sp = NULL;
		if (ns_sysprof_read(path, &sp, &err))
			FUZZ_CHECK(err.msg[0], "system profile: an error without a message");
		ns_sysprof_free(sp);
		return;
	}
	struct ns_devprof *dp = NULL;
	if (ns_devprof_read(path, NS_TU_AUTO, &dp, &err)) {
		FUZZ_CHECK(err.msg[0], "device profile: an error without a message");
		return;
	}
	for (int e = 0; e < NS_ENG__COUNT; e++)
		for (size_t i = 1; i < dp->n_busy[e]; i++)
			FUZZ_CHECK(dp->busy[e][i - 1].end <= dp->busy[e][i].start, "busy intervals overlap or are out of order");
	ns_devprof_free(dp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ns_pq_file *f = NULL;
	struct ns_error err = { 0 };
	as_profile_table(data, size);
	if (ns_pq_open_mem("fuzz.parquet", data, size, &f, &err)) {
		FUZZ_CHECK(err.msg[0], "open failed without a message");
		return 0;
	}
	for (size_t g = 0; g < f->n_groups && g < 16; g++) {
		for (size_t c = 0; c < f->n_cols && c < 64; c++) {
			struct ns_pq_cells cells;
			memset(&err, 0, sizeof(err));
			if (ns_pq_read(f, g, c, &cells, &err)) {
				FUZZ_CHECK(err.msg[0], "read failed without a message");
				continue;
			}
			FUZZ_CHECK((int64_t)cells.n_rows == f->groups[g].n_rows, "%zu rows, the group says %lld", cells.n_rows,
				   (long long)f->groups[g].n_rows);
			for (size_t r = 0; r < cells.n_rows && r < 4096; r++) {
				struct ns_pq_text t = { 0 };
				FUZZ_CHECK(ns_pq_cell_json(f, c, &cells, r, &t) == 0, "out of memory");
				cJSON *j = cJSON_ParseWithLength(t.p, t.n);
				FUZZ_CHECK(j != NULL, "cell JSON does not parse: %s", t.p);
				FUZZ_CHECK(!ns_pq_cell_null(f, c, &cells, r) || cJSON_IsNull(j), "a null cell as %s", t.p);
				cJSON_Delete(j);
				ns_pq_text_release(&t);
			}
			ns_pq_cells_release(&cells);
		}
	}
	ns_pq_close(f);
	return 0;
}
