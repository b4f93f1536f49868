/* Unit tests of the Parquet reader (src/ntff/parquet.c). Expected values
 * come from the format's public texts (the Thrift compact protocol's
 * varint and zigzag, parquet-format Encodings.md, snappy's
 * format_description.txt), worked by hand below, and from the rows
 * tools/parquet-fixtures/gen_parquet.mjs gave parquet-wasm (the Rust parquet
 * crate) to write fixtures/neuron-exports/parquet/types-*.parquet. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntff/parquet.h"

static char *fixture(const char *name)
{
	const char *root = getenv("NS_SOURCE_ROOT");
	char *p;
	cr_assert(asprintf(&p, "%s/fixtures/neuron-exports/parquet/%s", root ? root : ".", name) > 0);
	return p;
}

Test(parquet, varint_and_zigzag)
{
	/* 300 = 0b1_0010_1100 -> 0xAC 0x02 (low 7 bits first, high bit = more) */
	const unsigned char v300[] = { 0xac, 0x02 }, cut[] = { 0x80 };
	size_t i = 0;
	uint64_t v;
	cr_assert(ns_pq_varint(v300, 2, &i, &v));
	cr_assert_eq(v, 300);
	cr_assert_eq(i, 2);
	i = 0;
	cr_assert_not(ns_pq_varint(cut, 1, &i, &v));
	/* zigzag: 0->0, 1->-1, 2->1, 3->-2, 4294967294->2147483647, 4294967295->-2147483648 */
	cr_assert_eq(ns_pq_zigzag(0), 0);
	cr_assert_eq(ns_pq_zigzag(1), -1);
	cr_assert_eq(ns_pq_zigzag(2), 1);
	cr_assert_eq(ns_pq_zigzag(3), -2);
	cr_assert_eq(ns_pq_zigzag(4294967294u), 2147483647);
	cr_assert_eq(ns_pq_zigzag(4294967295u), -2147483648LL);
}

Test(parquet, rle_hybrid_bit_packed_and_runs)
{
	/* Encodings.md: 0..7 bit-packed at width 3 is 10001000 11000110 11111010,
	 * after the header 1 group << 1 | 1 = 3; then a run of 5 fours: 5 << 1 = 10, 0x04. */
	const unsigned char p[] = { 0x03, 0x88, 0xc6, 0xfa, 0x0a, 0x04 };
	uint32_t out[13];
	size_t bad;
	cr_assert_eq(ns_pq_rle(p, sizeof(p), 3, out, 13, &bad), 0);
	for (uint32_t k = 0; k < 8; k++)
		cr_assert_eq(out[k], k);
	for (int k = 8; k < 13; k++)
		cr_assert_eq(out[k], 4);
	/* one value more than the data holds: damage at the next header (byte 6) */
	uint32_t more[14];
	cr_assert_eq(ns_pq_rle(p, sizeof(p), 3, more, 14, &bad), -1);
	cr_assert_eq(bad, 6);
	/* a run value wider than the bit width */
	const unsigned char wide[] = { 0x02, 0x09 };
	cr_assert_eq(ns_pq_rle(wide, 2, 3, out, 1, &bad), -1);
}

Test(parquet, snappy_literal_and_copies)
{
	/* length 9; literal "abc" (tag (3-1) << 2 = 0x08); copy of 6 at offset 3
	 * with a 1-byte offset (tag (6-4) << 2 | 1 = 0x09, offset 0x03) */
	const unsigned char in[] = { 0x09, 0x08, 'a', 'b', 'c', 0x09, 0x03 };
	unsigned char out[9];
	size_t bad;
	cr_assert_eq(ns_pq_snappy(in, sizeof(in), out, 9, &bad), 0);
	cr_assert_arr_eq(out, "abcabcabc", 9);
	/* the same copy with a 2-byte offset: tag (6-1) << 2 | 2 = 0x16, 03 00 */
	const unsigned char in2[] = { 0x09, 0x08, 'a', 'b', 'c', 0x16, 0x03, 0x00 };
	cr_assert_eq(ns_pq_snappy(in2, sizeof(in2), out, 9, &bad), 0);
	cr_assert_arr_eq(out, "abcabcabc", 9);
	/* an offset before the start of the output, a wrong length, a cut literal */
	const unsigned char far[] = { 0x09, 0x08, 'a', 'b', 'c', 0x09, 0x04 };
	cr_assert_eq(ns_pq_snappy(far, sizeof(far), out, 9, &bad), -1);
	cr_assert_eq(bad, 5);
	cr_assert_eq(ns_pq_snappy(in, sizeof(in), out, 8, &bad), -1);
	cr_assert_eq(ns_pq_snappy(in, 4, out, 9, &bad), -1);
}

Test(parquet, delta_binary_packed)
{
	/* Encodings.md example 1: 1 2 3 4 5 -> block 128, 4 miniblocks, 5 values,
	 * first 1 (zigzag 2); min delta 1 (zigzag 2), widths 0 0 0 0 */
	const unsigned char p[] = { 0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0 };
	int64_t out[5];
	size_t used, bad;
	cr_assert_eq(ns_pq_delta(p, sizeof(p), false, out, 5, &used, &bad), 0);
	for (int k = 0; k < 5; k++)
		cr_assert_eq(out[k], k + 1);
	cr_assert_eq(used, sizeof(p));
	/* example 2: 7 5 3 1 2 3 4 5: deltas -2 -2 -2 1 1 1 1, min -2 (zigzag 3),
	 * relative 0 0 0 3 3 3 3 at width 2 in the first miniblock (32 values, 8 bytes) */
	const unsigned char q[] = { 0x80, 0x01, 0x04, 0x08, 0x0e, 0x03, 2, 0, 0, 0,
				    0xc0, 0xff, 0, 0, 0, 0, 0, 0 };
	int64_t out2[8];
	const int64_t want[] = { 7, 5, 3, 1, 2, 3, 4, 5 };
	cr_assert_eq(ns_pq_delta(q, sizeof(q), false, out2, 8, &used, &bad), 0);
	cr_assert_arr_eq(out2, want, sizeof(want));
	/* the miniblock cut off */
	cr_assert_eq(ns_pq_delta(q, 12, false, out2, 8, &used, &bad), -1);
}

/* Every row of a table as "col=json ..." lines. */
static char *dump(struct ns_pq_file *f)
{
	struct ns_pq_text t = { 0 };
	struct ns_error err = { 0 };
	for (size_t g = 0; g < f->n_groups; g++) {
		struct ns_pq_cells c[8];
		cr_assert_leq(f->n_cols, 8);
		for (size_t k = 0; k < f->n_cols; k++)
			cr_assert_eq(ns_pq_read(f, g, k, &c[k], &err), 0, "%s", err.msg);
		for (size_t r = 0; r < (size_t)f->groups[g].n_rows; r++)
			for (size_t k = 0; k < f->n_cols; k++) {
				ns_pq_text_add(&t, f->cols[k].name, strlen(f->cols[k].name));
				ns_pq_text_add(&t, "=", 1);
				ns_pq_cell_json(f, k, &c[k], r, &t);
				ns_pq_text_add(&t, k + 1 < f->n_cols ? " " : "\n", 1);
			}
		for (size_t k = 0; k < f->n_cols; k++)
			ns_pq_cells_release(&c[k]);
	}
	return t.p;
}

/* The rows gen_parquet.mjs wrote (its `small` array; 9007199254740993 is
 * that JavaScript number, 2^53, once parsed). */
static const char types_rows[] =
	"a=1 s=\"x\" f=0.5 b=true l=[\"1\",\"2\"]\n"
	"a=null s=null f=null b=null l=null\n"
	"a=-3 s=\"x\" f=-2.25 b=false l=[]\n"
	"a=9007199254740992 s=\"\xc3\xbc" "n\xc3\xaf \\\"q\\\"\\u000a\" f=1e+300 b=true l=[\"7\"]\n";

Test(parquet, every_codec_and_page_version_parquet_wasm_wrote)
{
	static const char *const names[] = { "types-uncompressed-v1.parquet", "types-uncompressed-v2.parquet",
					     "types-snappy-v1.parquet", "types-snappy-v2.parquet",
					     "types-zstd-v1.parquet", "types-zstd-v2.parquet" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = fixture(names[i]);
		struct ns_pq_file *f;
		struct ns_error err = { 0 };
		cr_assert_eq(ns_pq_open(path, &f, &err), 0, "%s", err.msg);
		cr_assert_eq(f->n_rows, 4);
		cr_assert(f->cols[4].is_list);
		char *rows = dump(f);
		cr_assert_str_eq(rows, types_rows, "%s", names[i]);
		free(rows);
		ns_pq_close(f);
		free(path);
	}
}

Test(parquet, other_codecs_are_refused_as_unsupported)
{
	static const char *const names[] = { "types-gzip-v1.parquet", "types-brotli-v2.parquet",
					     "types-lz4raw-v1.parquet" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = fixture(names[i]);
		struct ns_pq_file *f;
		struct ns_pq_cells c;
		struct ns_error err = { 0 };
		cr_assert_eq(ns_pq_open(path, &f, &err), 0, "%s", err.msg);
		cr_assert_eq(ns_pq_read(f, 0, 0, &c, &err), NS_ERR_UNSUPPORTED);
		cr_assert(strstr(err.msg, "compression codec") && strstr(err.msg, "is not supported"), "%s", err.msg);
		ns_pq_close(f);
		free(path);
	}
}

Test(parquet, damage_names_the_byte_offset)
{
	char *path = fixture("types-snappy-v1.parquet");
	FILE *in = fopen(path, "rb");
	static unsigned char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf), in);
	struct ns_pq_file *f = NULL;
	struct ns_error err = { 0 };
	fclose(in);
	cr_assert_gt(n, 100);
	/* the footer length pointing before the file */
	unsigned char *bad = malloc(n);
	memcpy(bad, buf, n);
	bad[n - 5] = 0x7f;
	cr_assert_eq(ns_pq_open_mem("x.parquet", bad, n, &f, &err), NS_ERR_INPUT);
	cr_assert(strstr(err.msg, "footer length") != NULL, "%s", err.msg);
	/* no trailing magic */
	memcpy(bad, buf, n);
	bad[n - 1] = 'X';
	cr_assert_eq(ns_pq_open_mem("x.parquet", bad, n, &f, &err), NS_ERR_INPUT);
	cr_assert(strstr(err.msg, "not a Parquet file") != NULL, "%s", err.msg);
	/* "PARE": an encrypted footer */
	memcpy(bad + n - 4, "PARE", 4);
	cr_assert_eq(ns_pq_open_mem("x.parquet", bad, n, &f, &err), NS_ERR_UNSUPPORTED);
	/* every cut of the file is refused without a crash */
	for (size_t cut = 0; cut < n; cut++) {
		int rc = ns_pq_open_mem("x.parquet", buf, cut, &f, &err);
		cr_assert_neq(rc, 0);
	}
	/* a byte flipped anywhere: open and read give 0 or an error with a message */
	for (size_t k = 0; k < n; k++) {
		memcpy(bad, buf, n);
		bad[k] ^= 0x5a;
		if (ns_pq_open_mem("x.parquet", bad, n, &f, &err)) {
			cr_assert(err.msg[0]);
			continue;
		}
		for (size_t g = 0; g < f->n_groups; g++)
			for (size_t c = 0; c < f->n_cols; c++) {
				struct ns_pq_cells cells;
				if (ns_pq_read(f, g, c, &cells, &err) == 0)
					ns_pq_cells_release(&cells);
				else
					cr_assert(err.msg[0]);
			}
		ns_pq_close(f);
	}
	free(bad);
	free(path);
}

Test(parquet, a_struct_column_is_refused_and_the_others_read)
{
	char *path = fixture("types-struct.parquet");
	struct ns_pq_file *f;
	struct ns_pq_cells c;
	struct ns_pq_text t = { 0 };
	struct ns_error err = { 0 };
	cr_assert_eq(ns_pq_open(path, &f, &err), 0, "%s", err.msg);
	cr_assert_eq(f->n_cols, 2);
	cr_assert_eq(ns_pq_read(f, 0, 1, &c, &err), NS_ERR_UNSUPPORTED);
	cr_assert(strstr(err.msg, "column 'st' holds nested values") != NULL, "%s", err.msg);
	/* the plain column beside it still reads */
	cr_assert_eq(ns_pq_read(f, 0, 0, &c, &err), 0, "%s", err.msg);
	ns_pq_cell_json(f, 0, &c, 1, &t);
	cr_assert_str_eq(t.p, "2");
	ns_pq_text_release(&t);
	ns_pq_cells_release(&c);
	ns_pq_close(f);
	free(path);
}
