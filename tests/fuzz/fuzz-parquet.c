/* Fuzz target: the Parquet reader (src/ntff/parquet.c) on any bytes as a
 * file: the footer, then every column of every row group, then each row as
 * JSON text. Properties: an error always has a message; a decoded column has
 * the row group's row count; every cell's JSON text parses (cJSON). */
#include <cjson/cJSON.h>
#include <string.h>

#include "fuzz.h"
#include "ntff/parquet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ns_pq_file *f = NULL;
	struct ns_error err = { 0 };
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
