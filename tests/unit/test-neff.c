/* NEFF reader: the two real nkipy NEFFs (numbers checked against
 * docs/neff.md and the format reference), damaged copies of them, and
 * synthetic archives built here in memory (ustar + zlib gzip), one defect
 * each. The corpus lives in $NS_CORPUS (tests/meson.build: ../shared/corpus or
 * the copy vendored in tests/data); a NEFF it lacks skips the test that reads it. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "neff/neff-format.h"
#include "neff/neff.h"
#include "report/neff-summary.h"

#define ARTIFACTS "aws-neuron-nkipy/at-1dc349f/spike/tests/artifacts/"

/* ---- helpers ---- */

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

/* Room for n more bytes (and a NUL); doubling, so that 65,537 tar members
 * are not 65,537 copies of the archive (under ASan, realloc always moves). */
static void reserve(struct bytes *b, size_t n)
{
	if (b->len + n + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n + 1)
		cap *= 2;
	b->p = realloc(b->p, cap);
	cr_assert_not_null(b->p);
	b->cap = cap;
}

static void append(struct bytes *b, const void *data, size_t n)
{
	reserve(b, n);
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void append_zeros(struct bytes *b, size_t n)
{
	reserve(b, n);
	memset(b->p + b->len, 0, n);
	b->len += n;
}

static struct bytes read_corpus(const char *name)
{
	const char *root = getenv("NS_CORPUS");
	char path[4096];
	snprintf(path, sizeof(path), "%s/" ARTIFACTS "%s", root ? root : "../shared/corpus", name);
	FILE *f = fopen(path, "rb");
	if (!f && errno == ENOENT)
		cr_skip_test("%s not found: this corpus lacks it (tests/data/SOURCES.md lists the vendored files)", path);
	cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
	struct bytes b = { 0 };
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		append(&b, chunk, n);
	fclose(f);
	return b;
}

static char *corpus_path(const char *name)
{
	const char *root = getenv("NS_CORPUS");
	char path[4096];
	snprintf(path, sizeof(path), "%s/" ARTIFACTS "%s", root ? root : "../shared/corpus", name);
	if (access(path, F_OK) != 0)
		cr_skip_test("%s not found: this corpus lacks it (tests/data/SOURCES.md lists the vendored files)", path);
	char *copy = strdup(path);
	cr_assert_not_null(copy);
	return copy;
}

static struct ns_neff *open_ok(const void *bytes, size_t len)
{
	struct ns_neff *neff = NULL;
	struct ns_error err = { 0 };
	int rc = ns_neff_open_mem(bytes, len, "x.neff", &neff, &err);
	cr_assert_eq(rc, NS_OK, "unexpected error: %s", err.msg);
	cr_assert_not_null(neff);
	return neff;
}

/* Opens bytes as "x.neff", which must fail with status and message msg. */
static void expect_error(const void *bytes, size_t len, enum ns_status status, const char *msg)
{
	struct ns_neff *neff = NULL;
	struct ns_error err = { 0 };
	int rc = ns_neff_open_mem(bytes, len, "x.neff", &neff, &err);
	cr_expect_eq(rc, (int)status, "status %d, wanted %d (%s)", rc, status, err.msg);
	cr_expect_eq(err.status, status);
	cr_expect_str_eq(err.msg, msg);
	cr_expect_null(neff);
}

static bool has_note(const struct ns_neff *neff, const char *text)
{
	for (size_t i = 0; i < neff->note_count; i++)
		if (strcmp(neff->notes[i], text) == 0)
			return true;
	return false;
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* One ustar header (+ content padded to 512) with a correct checksum;
 * declared_size lets a test lie about the size. */
static void tar_entry(struct bytes *tar, const char *name, char type, const void *data,
		      size_t size, size_t declared_size)
{
	uint8_t h[512] = { 0 };
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000664", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	snprintf((char *)h + 124, 12, "%011o", (unsigned)declared_size);
	memcpy(h + 136, "00000000000", 12);
	h[156] = (uint8_t)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	append(tar, h, sizeof(h));
	append(tar, data, size);
	append_zeros(tar, (512 - size % 512) % 512);
}

static void tar_file(struct bytes *tar, const char *name, const char *text)
{
	tar_entry(tar, name, '0', text, strlen(text), strlen(text));
}

static void tar_end(struct bytes *tar)
{
	append_zeros(tar, 1024);
}

static struct bytes gzip_of(const struct bytes *in)
{
	z_stream zs = { 0 };
	cr_assert_eq(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	struct bytes out = { 0 };
	append_zeros(&out, deflateBound(&zs, in->len) + 64);
	zs.next_in = in->p;
	zs.avail_in = (uInt)in->len;
	zs.next_out = out.p;
	zs.avail_out = (uInt)out.len;
	cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	out.len = zs.total_out;
	deflateEnd(&zs);
	return out;
}

/* A 1024-byte header (pkg 2, version 2.0, lnc 1) + payload + padding zeros;
 * data_size counts the padding, as in real files. */
static struct bytes neff_of(const struct bytes *payload, size_t padding)
{
	struct bytes f = { 0 };
	append_zeros(&f, 1024);
	put_le(f.p + 0x000, 2, 8);
	put_le(f.p + 0x008, 1024, 8);
	put_le(f.p + 0x010, payload->len + padding, 8);
	put_le(f.p + 0x018, 2, 8);
	put_le(f.p + 0x0A8, 1, 4);
	memcpy(f.p + 0x0DC, "synthetic.neff", 15);
	put_le(f.p + 0x1DC, 1, 4);
	f.p[0x1E0] = 1;
	put_le(f.p + 0x228, 1, 4);
	append(&f, payload->p, payload->len);
	append_zeros(&f, padding);
	return f;
}

static struct bytes gzip_neff(struct bytes *tar)
{
	struct bytes gz = gzip_of(tar);
	struct bytes f = neff_of(&gz, 100);
	free(gz.p);
	free(tar->p);
	return f;
}

static const char kelf_json[] =
	"{\"graphs\":[{\"definition\":\"sg00/def.json\",\"name\":\"sg00\"}],"
	"\"version\":\"0.5\",\"target\":\"test\"}";
static const char def_json[] =
	"{\"version\":\"0.6\",\"pe\":\"PE.json\",\"pe_instr\":\"PE.bin\",\"act_instr\":\"ACT.bin\","
	"\"neff_features\":[\"neff_feature_vnc\"],"
	"\"var\":{\"in\":{\"type\":\"input\",\"size\":64,\"var_id\":1},"
	"\"out\":{\"type\":\"output\",\"size\":8,\"var_id\":2},\"SB\":{\"type\":\"state-buffer\",\"var_id\":0}}}";
static const char pe_json[] = "{\"dma\":[{},{}],\"instr\":\"PE.bin\",\"name\":\"PE.json\"}";

/* kelf + def + PE (10 instructions) + ACT (100 bytes, not whole instructions). */
static void tar_minimal(struct bytes *tar)
{
	static uint8_t bin[640];
	tar_file(tar, "kelf-0.json", kelf_json);
	tar_file(tar, "sg00/def.json", def_json);
	tar_file(tar, "sg00/PE.json", pe_json);
	tar_entry(tar, "sg00/PE.bin", '0', bin, 640, 640);
	tar_entry(tar, "sg00/ACT.bin", '0', bin, 100, 100);
}

/* ---- the real files ---- */

Test(neff_corpus, small_header_and_payload)
{
	struct bytes b = read_corpus("matmul_small.neff");
	struct ns_neff *neff = open_ok(b.p, b.len);
	const struct ns_neff_header *h = &neff->header;

	cr_expect_eq(neff->file_size, 62464);
	cr_expect_eq(h->pkg_version, 2);
	cr_expect_eq(h->header_size, 1024);
	cr_expect_eq(h->data_size, 61440); /* = file size - 1024: padding included */
	cr_expect_eq(h->version_major, 2);
	cr_expect_eq(h->version_minor, 0);
	cr_expect_str_eq(h->build_version, "");
	cr_expect_eq(h->num_tpb, 1);
	cr_expect_str_eq(h->hash_hex, "bcb3e9ef77301698cd8b4cb9471ff5ac");
	cr_expect_str_eq(h->uuid_str, "00a04c53-5fd9-4f07-bffd-d5eacdefc852");
	cr_expect_str_eq(h->name, "file.neff");
	cr_expect_eq(h->requested_tpb_count, 1);
	cr_expect_eq(h->tpb_per_node[0], 1);
	cr_expect_eq(h->tpb_per_node[1], 0);
	cr_expect_eq(h->feature_bits, 0x209c00);
	cr_expect_eq(h->lnc_size, 2);
	cr_expect_not(h->pad_nonzero);

	cr_expect_eq(neff->payload, NS_NEFF_PAYLOAD_GZIP_TAR);
	cr_expect_eq(neff->compressed_size, 53601);
	cr_expect_eq(neff->padding_size, 7839);
	cr_expect_eq(neff->tar_size, 356864);
	cr_expect_eq(neff->member_count, 72);
	cr_expect_eq(neff->note_count, 0, "first note: %s", neff->note_count ? neff->notes[0] : "");

	cr_expect_str_eq(neff->compiler_version, "2.23.6484.0+3b612583");
	cr_expect_str_eq(neff->kelp_version, "Dynamic");
	cr_expect_str_eq(neff->kelf_version, "0.5");
	cr_expect_str_eq(neff->kelf_target, "cayman");
	cr_expect(neff->has_neff_json);
	ns_neff_free(neff);
	free(b.p);
}

Test(neff_corpus, small_members)
{
	struct bytes b = read_corpus("matmul_small.neff");
	struct ns_neff *neff = open_ok(b.p, b.len);

	cr_expect_str_eq(neff->members[0].name, "debug_info/debug_info_hlo.dbg_sg000000");
	cr_expect_eq(neff->members[0].offset, 512);
	cr_expect_eq(neff->members[0].size, 400);
	cr_expect_str_eq(neff->members[71].name, "neff.json"); /* the last member */
	cr_expect_eq(neff->members[71].offset, 352768);
	cr_expect_eq(neff->members[71].size, 2807);

	const struct ns_neff_member *def = ns_neff_find_member(neff, "sg00/def.json");
	cr_assert_not_null(def);
	cr_expect_eq(def->size, 3820);
	cr_expect_not_null(def->data); /* JSON is kept */
	cr_expect_eq(strlen(def->data), 3820);
	const struct ns_neff_member *bin = ns_neff_find_member(neff, "sg00/PE.bin");
	cr_assert_not_null(bin);
	cr_expect_null(bin->data); /* binaries are listed, not kept */
	cr_expect_null(ns_neff_find_member(neff, "sg00"));
	ns_neff_free(neff);
	free(b.p);
}

Test(neff_corpus, small_subgraphs_tensors_hlo)
{
	static const uint64_t instructions[NS_NEFF_ENGINE_COUNT] = {
		[NS_NEFF_PE] = 12, [NS_NEFF_ACT] = 5, [NS_NEFF_POOL] = 7, [NS_NEFF_DVE] = 2, [NS_NEFF_SP] = 3,
	};
	struct bytes b = read_corpus("matmul_small.neff");
	struct ns_neff *neff = open_ok(b.p, b.len);

	cr_assert_eq(neff->subgraph_count, 2); /* LNC2: one per physical core */
	for (size_t s = 0; s < 2; s++) {
		const struct ns_neff_subgraph *sg = &neff->subgraphs[s];
		cr_expect_str_eq(sg->name, s ? "sg01" : "sg00");
		cr_expect_str_eq(sg->definition, s ? "sg01/def.json" : "sg00/def.json");
		cr_expect_str_eq(sg->kelf_member, "kelf-0.json");
		cr_expect_str_eq(sg->def_version, "0.6");
		cr_expect_eq(sg->feature_count, 1);
		cr_expect_str_eq(sg->features[0], "neff_feature_vnc");
		cr_expect_eq(sg->var_count, 6);
		for (int e = 0; e < NS_NEFF_ENGINE_COUNT; e++) {
			cr_expect(sg->engines[e].bin_present);
			cr_expect_eq(sg->engines[e].instructions, instructions[e]);
			cr_expect_eq(sg->engines[e].bin_size, instructions[e] * 64);
			cr_expect_eq(sg->engines[e].dma_count, 0);
		}
	}
	cr_expect_str_eq(neff->subgraphs[0].engines[NS_NEFF_ACT].json_member, "sg00/Activation.json");
	cr_expect_str_eq(neff->subgraphs[1].engines[NS_NEFF_PE].bin_member, "sg01/PE.bin");

	cr_assert_eq(neff->tensor_count, 3);
	cr_expect_str_eq(neff->tensor_subgraph, "sg00");
	const struct ns_neff_tensor *x = &neff->tensors[0], *y = &neff->tensors[1],
				    *out = &neff->tensors[2];
	cr_expect_str_eq(x->name, "x");
	cr_expect_eq(x->kind, NS_NEFF_INPUT);
	cr_expect_str_eq(x->dtype, "float16");
	cr_expect_eq(x->rank, 2);
	cr_expect_eq(x->shape[0], 128);
	cr_expect_eq(x->shape[1], 256);
	cr_expect_eq(x->size, 65536); /* 128 * 256 * 2 bytes */
	cr_expect_eq(x->var_id, 1);
	cr_expect_str_eq(y->name, "y");
	cr_expect_eq(y->shape[0], 256);
	cr_expect_str_eq(out->name, "output0");
	cr_expect_eq(out->kind, NS_NEFF_OUTPUT);
	cr_expect_eq(out->size, 32768);
	cr_expect_eq(out->var_id, 3);

	cr_expect(neff->has_hlo_stats);
	cr_expect(neff->hlo_present[NS_NEFF_HLO_MAC_COUNT]);
	cr_expect_eq(neff->hlo[NS_NEFF_HLO_MAC_COUNT], 4194304.0); /* 128 * 256 * 128 */
	cr_expect_eq(neff->hlo[NS_NEFF_HLO_TRAFFIC], 262144.0);
	cr_expect_eq(neff->hlo[NS_NEFF_HLO_ARITHMETIC_INTENSITY], 32.0);
	cr_expect_eq(neff->hlo[NS_NEFF_HLO_INPUT_COUNT], -1.0);
	ns_neff_free(neff);
	free(b.p);
}

Test(neff_corpus, large_instruction_counts)
{
	/* The reference's figures for matmul_large sg00 (and identical sg01). */
	static const uint64_t instructions[NS_NEFF_ENGINE_COUNT] = {
		[NS_NEFF_PE] = 21269, [NS_NEFF_ACT] = 103, [NS_NEFF_POOL] = 6873,
		[NS_NEFF_DVE] = 1101, [NS_NEFF_SP] = 449,
	};
	char *path = corpus_path("matmul_large.neff");
	struct ns_neff *neff = NULL;
	struct ns_error err = { 0 };
	cr_assert_eq(ns_neff_open(path, &neff, &err), NS_OK, "%s", err.msg);

	cr_expect_str_eq(neff->file_name, "matmul_large.neff");
	cr_expect_eq(neff->file_size, 1516544);
	cr_expect_eq(neff->header.data_size, 0x172000);
	cr_expect_eq(neff->header.feature_bits, 0x201c00);
	cr_expect_eq(neff->header.lnc_size, 2);
	cr_expect_str_eq(neff->header.uuid_str, "25e09fd2-caca-464a-9ec3-58c85854fd38");
	cr_expect_eq(neff->compressed_size, 1514364);
	cr_expect_eq(neff->tar_size, 9285120);
	cr_expect_eq(neff->member_count, 72);
	cr_assert_eq(neff->subgraph_count, 2);
	for (size_t s = 0; s < 2; s++)
		for (int e = 0; e < NS_NEFF_ENGINE_COUNT; e++)
			cr_expect_eq(neff->subgraphs[s].engines[e].instructions, instructions[e],
				     "sg%02zu %s", s, ns_neff_engine_name((enum ns_neff_engine_id)e));
	cr_expect_eq(neff->subgraphs[0].engines[NS_NEFF_PE].bin_size, 1361216);
	cr_expect_eq(neff->subgraphs[0].var_count, 22);

	cr_assert_eq(neff->tensor_count, 3);
	cr_expect_eq(neff->tensors[1].size, UINT64_C(4294967296)); /* y: 32768 x 65536 fp16, > 4 GiB - 1 */
	cr_expect_eq(neff->tensors[1].shape[1], 65536);
	cr_expect_eq(neff->tensors[2].size, 16777216);
	cr_expect_eq(neff->hlo[NS_NEFF_HLO_MAC_COUNT], 274877906944.0); /* 128 * 32768 * 65536 */
	ns_neff_free(neff);
	free(path);
}

Test(neff_corpus, summary_text_and_json)
{
	struct bytes b = read_corpus("matmul_large.neff");
	struct ns_neff *neff = open_ok(b.p, b.len);
	char *text = NULL;
	size_t text_len = 0;
	struct ns_error err = { 0 };

	FILE *out = open_memstream(&text, &text_len);
	cr_assert_eq(ns_neff_write_summary(neff, out, NS_NEFF_FORMAT_TEXT, NS_NEFF_SUMMARY_MEMBERS, &err),
		     NS_OK);
	fclose(out);
	cr_expect_not_null(strstr(text, "\n  PE (TensorE)                 21,269    1,361,216  sg00/PE.bin\n"));
	cr_expect_not_null(strstr(text, "\n  HloMacCount                 274,877,906,944\n"));
	cr_expect_not_null(strstr(text, "\nMembers (72)\n"));
	free(text);

	out = open_memstream(&text, &text_len);
	cr_assert_eq(ns_neff_write_summary(neff, out, NS_NEFF_FORMAT_JSON, 0, &err), NS_OK);
	fclose(out);
	cJSON *doc = cJSON_Parse(text);
	cr_assert_not_null(doc, "summary JSON does not parse");
	const cJSON *pe = cJSON_GetArrayItem(
		cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "subgraphs"), 0), "engines"), 0);
	cr_expect_eq(cJSON_GetObjectItem(pe, "instructions")->valuedouble, 21269.0);
	cr_expect_str_eq(cJSON_GetObjectItem(pe, "alias")->valuestring, "TensorE");
	const cJSON *hdr = cJSON_GetObjectItem(doc, "header");
	cr_expect_str_eq(cJSON_GetObjectItem(hdr, "feature_bits")->valuestring, "0x201c00");
	cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(hdr, "feature_bit_numbers")), 4);
	cr_expect_null(cJSON_GetObjectItem(doc, "members")); /* only with the flag */
	cJSON_Delete(doc);
	free(text);
	ns_neff_free(neff);
	free(b.p);
}

/* ---- damaged copies of the real file ---- */

Test(neff_damaged, empty_file)
{
	expect_error("", 0, NS_ERR_INPUT, "x.neff: empty file, not a NEFF");
}

Test(neff_damaged, truncated_header)
{
	struct bytes b = read_corpus("matmul_small.neff");
	expect_error(b.p, 100, NS_ERR_INPUT,
		     "x.neff: byte 100: truncated NEFF header: the file has 100 bytes, the header "
		     "needs 1024");
	free(b.p);
}

Test(neff_damaged, data_size_beyond_file)
{
	struct bytes b = read_corpus("matmul_small.neff");
	put_le(b.p + 0x10, 61441, 8);
	expect_error(b.p, b.len, NS_ERR_INPUT,
		     "x.neff: byte 16: data_size 61441 runs past the end of the file (61440 bytes "
		     "after the 1024-byte header)");
	free(b.p);
}

Test(neff_damaged, data_size_zero)
{
	struct bytes b = read_corpus("matmul_small.neff");
	put_le(b.p + 0x10, 0, 8);
	expect_error(b.p, b.len, NS_ERR_INPUT, "x.neff: byte 16: data_size is 0: no payload");
	free(b.p);
}

Test(neff_damaged, truncated_gzip)
{
	/* Cut inside the gzip stream, with data_size made consistent with the cut. */
	struct bytes b = read_corpus("matmul_small.neff");
	put_le(b.p + 0x10, 30000, 8);
	expect_error(b.p, 1024 + 30000, NS_ERR_INPUT,
		     "x.neff: byte 31024: truncated gzip payload: data_size ends before the end of "
		     "the gzip stream");
	free(b.p);
}

Test(neff_damaged, gzip_crc)
{
	/* The gzip trailer's CRC starts 8 bytes before the end of the 53,601-byte stream. */
	struct bytes b = read_corpus("matmul_small.neff");
	b.p[1024 + 53601 - 8] ^= 0xff;
	expect_error(b.p, b.len, NS_ERR_INPUT,
		     "x.neff: byte 54621: corrupt gzip payload: incorrect data check");
	free(b.p);
}

Test(neff_damaged, deflate_garbage_reported_as_gzip_damage)
{
	/* Flipped bits mid-stream still inflate (to garbage the tar walk trips
	 * over); the CRC names the real cause. */
	struct bytes b = read_corpus("matmul_small.neff");
	for (size_t i = 20000; i < 20100; i++)
		b.p[1024 + i] ^= 0x55;
	expect_error(b.p, b.len, NS_ERR_INPUT,
		     "x.neff: byte 54621: corrupt gzip payload: incorrect data check");
	free(b.p);
}

Test(neff_damaged, version_too_new)
{
	struct bytes b = read_corpus("matmul_small.neff");
	put_le(b.p + 0x18, 3, 8);
	expect_error(b.p, b.len, NS_ERR_UNSUPPORTED,
		     "x.neff: byte 24: NEFF version 3.0 is not supported (the runtime accepts 0.x-2.x)");
	free(b.p);
}

Test(neff_damaged, payload_not_gzip_or_tar)
{
	struct bytes b = read_corpus("matmul_small.neff");
	b.p[1024] = 0;
	expect_error(b.p, b.len, NS_ERR_INPUT,
		     "x.neff: byte 1024: payload is neither gzip (1f 8b) nor a tar archive ('ustar' "
		     "at byte 1281)");
	free(b.p);
}

Test(neff_damaged, header_size_not_plausible)
{
	struct bytes b = read_corpus("matmul_small.neff");
	put_le(b.p + 0x08, 16, 8);
	expect_error(b.p, b.len, NS_ERR_INPUT,
		     "x.neff: byte 8: not a NEFF file: header_size is 16, expected 1024");
	free(b.p);
}

Test(neff_damaged, not_a_neff_json)
{
	static const char json[] = "{\"traceEvents\": []}\n";
	struct ns_neff *neff = NULL;
	struct ns_error err = { 0 };
	int rc = ns_neff_open_mem(json, sizeof(json) - 1, "trace.json", &neff, &err);
	cr_expect_eq(rc, NS_ERR_INPUT);
	/* '{"traceE' read as a little-endian u64 */
	cr_expect_str_eq(err.msg, "trace.json: byte 0: not a NEFF file: pkg_version is "
				  "5000512231447995003, expected 1 or 2");
	cr_expect_str_eq(err.hint, "the file looks like JSON text");
}

Test(neff_damaged, not_a_neff_tiny)
{
	expect_error("abc", 3, NS_ERR_INPUT, "x.neff: byte 0: not a NEFF file: only 3 bytes");
}

Test(neff_damaged, nonzero_padding_is_a_note)
{
	struct bytes b = read_corpus("matmul_small.neff");
	b.p[b.len - 1] = 1;
	struct ns_neff *neff = open_ok(b.p, b.len);
	cr_expect(has_note(neff, "the 7839 bytes after the gzip stream (byte 54625) are not all zero; "
				 "ignored"));
	ns_neff_free(neff);
	free(b.p);
}

Test(neff_damaged, hash_is_never_checked)
{
	struct bytes b = read_corpus("matmul_small.neff");
	memset(b.p + 0xAC, 0xee, 32);
	struct ns_neff *neff = open_ok(b.p, b.len);
	cr_expect_str_eq(neff->header.hash_hex,
			 "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
	ns_neff_free(neff);
	free(b.p);
}

Test(neff_damaged, trailing_bytes_and_future_features_are_notes)
{
	struct bytes b = read_corpus("matmul_small.neff");
	append_zeros(&b, 10);
	put_le(b.p + 0x220, UINT64_C(1) << 40, 8);
	struct ns_neff *neff = open_ok(b.p, b.len);
	cr_expect(has_note(neff, "10 bytes after header_size + data_size are ignored"));
	cr_expect(has_note(neff, "feature_bits 0x10000000000 has bits in 27-62 set, which runtime "
				 "2.31 refuses (newer compiler?)"));
	ns_neff_free(neff);
	free(b.p);
}

/* ---- synthetic archives ---- */

Test(neff_synthetic, minimal_gzip)
{
	struct bytes tar = { 0 };
	tar_minimal(&tar);
	tar_end(&tar);
	struct bytes f = gzip_neff(&tar);
	struct ns_neff *neff = open_ok(f.p, f.len);

	cr_expect_str_eq(neff->header.name, "synthetic.neff");
	cr_expect_eq(neff->padding_size, 100);
	cr_expect_eq(neff->member_count, 5);
	cr_assert_eq(neff->subgraph_count, 1);
	const struct ns_neff_subgraph *sg = &neff->subgraphs[0];
	cr_expect_eq(sg->engines[NS_NEFF_PE].instructions, 10);
	cr_expect_eq(sg->engines[NS_NEFF_PE].dma_count, 2);
	cr_expect_eq(sg->engines[NS_NEFF_ACT].instructions, 1);
	cr_expect_eq(sg->engines[NS_NEFF_ACT].dma_count, -1); /* no engine JSON named */
	cr_expect_not(sg->engines[NS_NEFF_SP].listed);
	cr_expect(has_note(neff, "sg00/ACT.bin: 100 bytes is not a whole number of 64-byte instructions"));
	cr_expect(has_note(neff, "sg00/def.json: no \"sp\" or \"sp_instr\" (engine SP)"));
	cr_expect(has_note(neff, "info.json: absent"));
	cr_expect(has_note(neff, "sg00/tensor_map.json: absent"));
	cr_expect(has_note(neff, "hlo_stats.json: absent"));
	cr_expect_not(neff->has_hlo_stats);
	cr_expect_null(neff->compiler_version);

	cr_assert_eq(neff->tensor_count, 2);
	cr_expect_str_eq(neff->tensors[0].name, "in");
	cr_expect_eq(neff->tensors[0].size, 64);
	cr_expect_not(neff->tensors[0].shape_known); /* no tensor_map.json */
	cr_expect_null(neff->tensors[0].dtype);
	cr_expect_str_eq(neff->tensors[1].name, "out");
	ns_neff_free(neff);
	free(f.p);
}

Test(neff_synthetic, raw_tar_payload)
{
	struct bytes tar = { 0 };
	tar_minimal(&tar);
	tar_end(&tar);
	struct bytes f = neff_of(&tar, 0);
	put_le(f.p, 1, 8); /* pkg_version 1: legacy raw tar */
	struct ns_neff *neff = open_ok(f.p, f.len);
	cr_expect_eq(neff->payload, NS_NEFF_PAYLOAD_TAR);
	cr_expect_eq(neff->member_count, 5);
	cr_expect_eq(neff->subgraphs[0].engines[NS_NEFF_PE].instructions, 10);
	ns_neff_free(neff);
	free(f.p);
	free(tar.p);
}

Test(neff_synthetic, member_size_beyond_archive_gzip)
{
	/* The header says 4096 bytes; the stream ends after one block of content. */
	struct bytes tar = { 0 };
	tar_entry(&tar, "big.bin", '0', "x", 1, 4096);
	struct bytes f = gzip_neff(&tar);
	expect_error(f.p, f.len, NS_ERR_INPUT,
		     "x.neff: tar byte 0: member 'big.bin' declares 4096 bytes, but the archive ends "
		     "at tar byte 1024");
	free(f.p);
}

Test(neff_synthetic, member_size_beyond_archive_raw)
{
	/* Caught before reading (or allocating) anything: a raw tar cannot hold more than data_size. */
	struct bytes tar = { 0 };
	tar_entry(&tar, "kelf-0.json", '0', "{}", 2, 100000);
	tar_end(&tar);
	struct bytes f = neff_of(&tar, 0);
	expect_error(f.p, f.len, NS_ERR_INPUT,
		     "x.neff: tar byte 0: member 'kelf-0.json' declares 100000 bytes, but the archive "
		     "ends at tar byte 2048");
	free(f.p);
	free(tar.p);
}

Test(neff_synthetic, inflation_limit)
{
	/* 4 MiB of zeros gzip to a few KB: more than 256 x data_size. */
	size_t big = 4u << 20;
	uint8_t *zeros = calloc(1, big);
	struct bytes tar = { 0 };
	tar_entry(&tar, "zeros.bin", '0', zeros, big, big);
	tar_end(&tar);
	free(zeros);
	struct bytes gz = gzip_of(&tar);
	struct bytes f = neff_of(&gz, 0);
	char msg[256];
	snprintf(msg, sizeof(msg),
		 "x.neff: tar byte 0: member 'zeros.bin' declares 4194304 bytes, more than the payload "
		 "may inflate to (%zu: 256 x data_size, at most 17179869184)",
		 gz.len * 256);
	expect_error(f.p, f.len, NS_ERR_INPUT, msg);
	free(gz.p);
	free(f.p);
	free(tar.p);
}

Test(neff_synthetic, bad_tar_checksum)
{
	struct bytes tar = { 0 };
	tar_minimal(&tar);
	tar_end(&tar);
	/* kelf-0.json is a header + one block, so def.json's header is at tar byte 1024 */
	tar.p[1024] ^= 1;
	struct bytes f = gzip_neff(&tar);
	expect_error(f.p, f.len, NS_ERR_INPUT, "x.neff: tar byte 1024: bad tar header checksum");
	free(f.p);
}

Test(neff_synthetic, archive_ends_inside_header)
{
	struct bytes tar = { 0 };
	tar_file(&tar, "kelf-0.json", kelf_json);
	append_zeros(&tar, 100);
	tar.p[tar.len - 1] = 'x';
	struct bytes f = gzip_neff(&tar);
	expect_error(f.p, f.len, NS_ERR_INPUT,
		     "x.neff: tar byte 1024: the archive ends inside a tar header (100 of 512 bytes)");
	free(f.p);
}

Test(neff_synthetic, empty_archive)
{
	struct bytes tar = { 0 };
	tar_end(&tar);
	struct bytes f = gzip_neff(&tar);
	expect_error(f.p, f.len, NS_ERR_INPUT, "x.neff: byte 1024: the tar archive has no members");
	free(f.p);
}

Test(neff_synthetic, no_kelf_or_neff_json)
{
	struct bytes tar = { 0 };
	tar_file(&tar, "hello.txt", "hi");
	tar_end(&tar);
	struct bytes f = gzip_neff(&tar);
	expect_error(f.p, f.len, NS_ERR_INPUT,
		     "x.neff: no kelf-*.json or neff.json member among the 1 tar members: not a NEFF "
		     "payload");
	free(f.p);
}

Test(neff_synthetic, definition_missing)
{
	struct bytes tar = { 0 };
	tar_file(&tar, "kelf-0.json", kelf_json);
	tar_end(&tar);
	struct bytes f = gzip_neff(&tar);
	expect_error(f.p, f.len, NS_ERR_INPUT,
		     "x.neff: member 'kelf-0.json': graphs[0].definition 'sg00/def.json' is not in "
		     "the archive");
	free(f.p);
}

Test(neff_synthetic, kelf_invalid_json)
{
	struct bytes tar = { 0 };
	tar_file(&tar, "kelf-0.json", "{\"graphs\": [}");
	tar_end(&tar);
	struct bytes f = gzip_neff(&tar);
	expect_error(f.p, f.len, NS_ERR_INPUT, "x.neff: member 'kelf-0.json': byte 12: invalid JSON");
	free(f.p);
}

Test(neff_synthetic, def_not_an_object)
{
	struct bytes tar = { 0 };
	tar_file(&tar, "kelf-0.json", kelf_json);
	tar_file(&tar, "sg00/def.json", "[1, 2]");
	tar_end(&tar);
	struct bytes f = gzip_neff(&tar);
	expect_error(f.p, f.len, NS_ERR_INPUT,
		     "x.neff: member 'sg00/def.json': byte 0: not a JSON object");
	free(f.p);
}

Test(neff_synthetic, wrong_types_are_notes)
{
	struct bytes tar = { 0 };
	tar_file(&tar, "kelf-0.json", "{\"graphs\":[{\"name\":\"a\"},{\"definition\":\"d.json\"}],"
				      "\"version\":5}");
	tar_file(&tar, "d.json", "{\"pe\":5,\"var\":[],\"neff_features\":\"x\"}");
	tar_file(&tar, "hlo_stats.json", "{\"HloMacCount\":\"many\",\"Traffic\":12}");
	tar_file(&tar, "info.json", "not json");
	tar_end(&tar);
	struct bytes f = gzip_neff(&tar);
	struct ns_neff *neff = open_ok(f.p, f.len);

	cr_expect_null(neff->kelf_version);
	cr_assert_eq(neff->subgraph_count, 1);
	cr_expect_str_eq(neff->subgraphs[0].name, "d.json"); /* no name: the definition */
	cr_expect_eq(neff->subgraphs[0].var_count, 0);
	cr_expect_eq(neff->subgraphs[0].feature_count, 0);
	cr_expect_not(neff->subgraphs[0].engines[NS_NEFF_PE].listed);
	cr_expect(has_note(neff, "kelf-0.json: graphs[0] has no \"definition\""));
	cr_expect(has_note(neff, "d.json: no \"pe\" or \"pe_instr\" (engine PE)"));
	cr_expect(has_note(neff, "hlo_stats.json: \"HloMacCount\" is not a number"));
	cr_expect(has_note(neff, "info.json: byte 0: invalid JSON; ignored"));
	cr_expect(neff->has_hlo_stats);
	cr_expect_not(neff->hlo_present[NS_NEFF_HLO_MAC_COUNT]);
	cr_expect_eq(neff->hlo[NS_NEFF_HLO_TRAFFIC], 12.0);
	ns_neff_free(neff);
	free(f.p);
}

Test(neff_synthetic, long_names_pax_and_dot_slash)
{
	char long_name[301]; /* 290 + "/long.json" + NUL */
	memset(long_name, 'a', sizeof(long_name));
	memcpy(long_name + 290, "/long.json", 11);
	static const char pax[] = "22 path=pax/named.bin\n"; /* the length counts itself */
	cr_assert_eq(strlen(pax), 22);

	/* tar offsets: sg00 0, kelf 512, LongLink 1536, its member 2560, pax 3584,
	 * its member 4608, link 5632 */
	struct bytes tar = { 0 };
	tar_entry(&tar, "sg00", '5', NULL, 0, 0);                  /* directory: skipped */
	tar_file(&tar, "./kelf-0.json", "{\"graphs\":[]}");        /* "./" stripped */
	tar_entry(&tar, "././@LongLink", 'L', long_name, strlen(long_name) + 1, strlen(long_name) + 1);
	tar_file(&tar, "truncated-name", "{}");
	tar_entry(&tar, "PaxHeader", 'x', pax, strlen(pax), strlen(pax));
	tar_file(&tar, "short", "bin");
	tar_entry(&tar, "link", '2', NULL, 0, 0);                   /* symlink: noted */
	tar_end(&tar);
	struct bytes f = gzip_neff(&tar);
	struct ns_neff *neff = open_ok(f.p, f.len);

	cr_assert_eq(neff->member_count, 3);
	cr_expect_str_eq(neff->members[0].name, "kelf-0.json");
	cr_expect_str_eq(neff->members[1].name, long_name);
	cr_expect_not_null(neff->members[1].data);
	cr_expect_str_eq(neff->members[2].name, "pax/named.bin");
	cr_expect_eq(neff->members[2].size, 3);
	cr_expect_eq(neff->subgraph_count, 0);
	cr_expect(has_note(neff, "tar entry 'link' of type '2' at tar byte 5632 skipped"));
	ns_neff_free(neff);
	free(f.p);
}

Test(neff_synthetic, header_size_2048_is_honoured)
{
	struct bytes tar = { 0 };
	tar_minimal(&tar);
	tar_end(&tar);
	struct bytes gz = gzip_of(&tar);
	struct bytes inner = neff_of(&gz, 0);
	struct bytes f = { 0 };
	append(&f, inner.p, 1024); /* the header, */
	append_zeros(&f, 1024);    /* a second KiB of header, */
	append(&f, inner.p + 1024, inner.len - 1024); /* then the payload */
	put_le(f.p + 0x08, 2048, 8);
	struct ns_neff *neff = open_ok(f.p, f.len);
	cr_expect_eq(neff->member_count, 5);
	cr_expect(has_note(neff, "header_size is 2048, not 1024; the payload was read from there"));
	ns_neff_free(neff);
	free(f.p);
	free(inner.p);
	free(gz.p);
	free(tar.p);
}

Test(neff_synthetic, text_escapes_member_names)
{
	struct bytes tar = { 0 };
	tar_file(&tar, "kelf-0.json", "{\"graphs\":[]}");
	tar_file(&tar, "evil\x1b[2Jname", "x");
	tar_end(&tar);
	struct bytes f = gzip_neff(&tar);
	struct ns_neff *neff = open_ok(f.p, f.len);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	cr_assert_eq(ns_neff_write_summary(neff, out, NS_NEFF_FORMAT_TEXT, NS_NEFF_SUMMARY_MEMBERS, NULL),
		     NS_OK);
	fclose(out);
	cr_expect_not_null(strstr(text, "evil\\x1b[2Jname\n"));
	cr_expect_null(strchr(text, '\x1b'));
	free(text);
	ns_neff_free(neff);
	free(f.p);
}

Test(neff_files, open_errors)
{
	struct ns_neff *neff = NULL;
	struct ns_error err = { 0 };
	cr_expect_eq(ns_neff_open("/nonexistent/x.neff", &neff, &err), NS_ERR_IO);
	cr_expect_str_eq(err.msg, "/nonexistent/x.neff: cannot open: No such file or directory");
	cr_expect_eq(ns_neff_open("/", &neff, &err), NS_ERR_IO);
	cr_expect_str_eq(err.msg, "/: not a regular file");
	cr_expect_null(neff);
}

/* ---- capture file names ---- */

Test(neff_filename, patterns)
{
	char hash[32];
	struct ns_neff_filename fn;

	cr_expect_eq(ns_neff_hash_from_filename("neff_395760075800974.neff", hash, sizeof(hash)), 15);
	cr_expect_str_eq(hash, "395760075800974");
	cr_expect_eq(ns_neff_hash_from_filename("dir/i-0b1_pid_17/neff_14382885777943380728_vnc_10.neff",
						hash, sizeof(hash)), 20);
	cr_expect_str_eq(hash, "14382885777943380728");
	cr_expect_eq(ns_neff_hash_from_filename("neffs/graph_a1B2c3.neff", hash, sizeof(hash)), 6);
	cr_expect_str_eq(hash, "a1B2c3");

	cr_assert(ns_neff_parse_filename("neff_12_vnc_3.neff", &fn));
	cr_expect_str_eq(fn.hash, "12");
	cr_expect_eq(fn.vnc, 3);
	cr_expect_not(fn.vllm);
	cr_assert(ns_neff_parse_filename("neff_12.neff", &fn));
	cr_expect_eq(fn.vnc, -1);
	cr_assert(ns_neff_parse_filename("graph_x.neff", &fn));
	cr_expect(fn.vllm);
}

Test(neff_filename, rejects)
{
	static const char *const names[] = {
		"matmul_small.neff", "neff_.neff", "neff_12a.neff", "neff_12_vnc_.neff",
		"neff_12_vnc_3x.neff", "neff_12_vnc_3.ntff", "neff_12", "graph_.neff",
		"graph_a-b.neff", "graph_a.neff.bak", "neff_12_instid_0_vnc_1.neff", ".neff", "",
	};
	char hash[32];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_expect_eq(ns_neff_hash_from_filename(names[i], hash, sizeof(hash)), 0, "%s", names[i]);
	/* A match that does not fit: -1, nothing written past n. */
	cr_expect_eq(ns_neff_hash_from_filename("neff_123456.neff", hash, 6), -1);
	cr_expect_eq(ns_neff_hash_from_filename("neff_12345.neff", hash, 6), 5);
}

/* The member limit: 65,537 empty members are an error naming the header
 * of the one over 65,536, whose name is freed (it leaked: LeakSanitizer,
 * in the ASan build of this test). */
Test(neff_synthetic, more_members_than_the_limit)
{
	struct bytes tar = { 0 };
	for (unsigned i = 0; i <= NEFF_MAX_MEMBERS; i++) {
		char name[32];
		snprintf(name, sizeof(name), "m%u.bin", i);
		tar_entry(&tar, name, '0', "", 0, 0);
	}
	tar_end(&tar);
	struct bytes f = neff_of(&tar, 0);
	put_le(f.p, 1, 8); /* a raw tar */
	char want[200];
	snprintf(want, sizeof(want), "x.neff: tar byte %u: more than 65536 members (limit)", NEFF_MAX_MEMBERS * 512);
	expect_error(f.p, f.len, NS_ERR_NOMEM, want);
	free(f.p);
	free(tar.p);
}
