/* The `neuron-stats neff` summary, as aligned text or as JSON. Strings that
 * come from the file are escaped in text output (control bytes as \xNN), so
 * a hostile member name cannot move the cursor or forge lines. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "neff/neff.h"

#define MAX_EXACT_DOUBLE 9007199254740992.0 /* 2^53 */

static const char *payload_name(enum ns_neff_payload payload)
{
	return payload == NS_NEFF_PAYLOAD_GZIP_TAR ? "gzip" : "tar";
}

/* Number of tpb_per_node entries up to the last non-zero one. */
static size_t tpb_node_count(const struct ns_neff_header *h)
{
	size_t n = sizeof(h->tpb_per_node);
	while (n > 0 && h->tpb_per_node[n - 1] == 0)
		n--;
	return n;
}

/* ---- text ---- */

/* Decimal with ',' between groups of three digits; returns buf. */
static const char *group_digits(uint64_t value, char buf[32])
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)value);
	int out = 0;
	for (int i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = '\0';
	return buf;
}

static bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static size_t escaped_len(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += needs_escape((unsigned char)*s) ? 4 : 1;
	return n;
}

/* Writes s escaped, then spaces up to width columns. */
static void put_padded(FILE *out, const char *s, size_t width)
{
	size_t n = 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (needs_escape(c)) {
			fprintf(out, "\\x%02x", c);
			n += 4;
		} else {
			fputc(c, out);
			n++;
		}
	}
	for (; n < width; n++)
		fputc(' ', out);
}

static void put_string(FILE *out, const char *s)
{
	put_padded(out, s, 0);
}

/* "  label           " with the value to follow. */
static void put_label(FILE *out, const char *label)
{
	fprintf(out, "  %-20s", label);
}

/* missing is shown for a NULL or empty value. */
static void put_field(FILE *out, const char *label, const char *value, const char *missing)
{
	put_label(out, label);
	put_string(out, value && *value ? value : missing);
	fputc('\n', out);
}

/* A double as an integer with digit groups when it is one, else %.6g. */
static const char *format_number(double v, char buf[32])
{
	if (v == floor(v) && fabs(v) < MAX_EXACT_DOUBLE) {
		if (v >= 0)
			return group_digits((uint64_t)v, buf);
		snprintf(buf, 32, "%.0f", v);
		return buf;
	}
	snprintf(buf, 32, "%.6g", v);
	return buf;
}

static void write_header_text(const struct ns_neff *neff, FILE *out)
{
	const struct ns_neff_header *h = &neff->header;
	char a[32], b[32], c[32];

	fputs("NEFF ", out);
	put_string(out, neff->file_name);
	fputc('\n', out);
	put_label(out, "file size");
	fprintf(out, "%s bytes\n", group_digits(neff->file_size, a));
	put_field(out, "name", h->name, "(empty)");
	put_field(out, "uuid", h->uuid_str, "");
	put_label(out, "hash");
	fprintf(out, "%s (opaque, not verified)\n", h->hash_hex);
	put_label(out, "NEFF version");
	fprintf(out, "%llu.%llu\n", (unsigned long long)h->version_major,
		(unsigned long long)h->version_minor);
	put_field(out, "build version", h->build_version, "(empty)");
	put_field(out, "compiler", neff->compiler_version, "(unknown)");
	if (neff->kelp_version)
		put_field(out, "kelp version", neff->kelp_version, "");
	put_label(out, "target");
	put_string(out, neff->kelf_target ? neff->kelf_target : "(unknown)");
	if (neff->kelf_version) {
		fputs(" (kelf version ", out);
		put_string(out, neff->kelf_version);
		fputc(')', out);
	}
	fputc('\n', out);
	put_label(out, "LNC size");
	fprintf(out, "%u\n", h->lnc_size);
	put_label(out, "TPBs");
	fprintf(out, "num_tpb %u, requested %u, per node [", h->num_tpb, h->requested_tpb_count);
	for (size_t i = 0; i < tpb_node_count(h); i++)
		fprintf(out, "%s%u", i ? " " : "", h->tpb_per_node[i]);
	fputs("]\n", out);
	put_label(out, "feature bits");
	fprintf(out, "0x%llx", (unsigned long long)h->feature_bits);
	const char *sep = " (bits ";
	for (int bit = 0; bit < 64; bit++) {
		if (h->feature_bits >> bit & 1) {
			fprintf(out, "%s%d", sep, bit);
			sep = " ";
		}
	}
	fputs(h->feature_bits ? "; names not public)\n" : "\n", out);
	put_label(out, "header");
	fprintf(out, "pkg_version %llu, %s bytes, data_size %s\n", (unsigned long long)h->pkg_version,
		group_digits(h->header_size, a), group_digits(h->data_size, b));
	put_label(out, "payload");
	if (neff->payload == NS_NEFF_PAYLOAD_GZIP_TAR)
		fprintf(out, "gzip %s bytes + %s padding -> tar %s bytes\n",
			group_digits(neff->compressed_size, a), group_digits(neff->padding_size, b),
			group_digits(neff->tar_size, c));
	else
		fprintf(out, "tar %s bytes + %s padding\n", group_digits(neff->tar_size, a),
			group_digits(neff->padding_size, b));
	put_label(out, "members");
	fprintf(out, "%zu\n", neff->member_count);
	put_label(out, "subgraphs");
	fprintf(out, "%zu\n", neff->subgraph_count);
}

static void write_subgraph_text(const struct ns_neff_subgraph *sg, FILE *out)
{
	char a[32], b[32];
	uint64_t total_instructions = 0, total_bytes = 0;

	fputs("\nSubgraph ", out);
	put_string(out, sg->name);
	fputs(" (", out);
	put_string(out, sg->definition);
	if (sg->def_version) {
		fputs(", def version ", out);
		put_string(out, sg->def_version);
	}
	for (size_t i = 0; i < sg->feature_count; i++) {
		fputs(i ? " " : ", features ", out);
		put_string(out, sg->features[i] ? sg->features[i] : "?");
	}
	if (sg->var_count >= 0)
		fprintf(out, ", %lld vars", (long long)sg->var_count);
	fputs(")\n", out);

	fprintf(out, "  %-22s %12s %12s  %s\n", "ENGINE", "INSTRUCTIONS", "BIN BYTES", "BINARY");
	for (int id = 0; id < NS_NEFF_ENGINE_COUNT; id++) {
		const struct ns_neff_engine *eng = &sg->engines[id];
		char label[40];
		snprintf(label, sizeof(label), "%s (%s)", ns_neff_engine_name((enum ns_neff_engine_id)id),
			 ns_neff_engine_alias((enum ns_neff_engine_id)id));
		fprintf(out, "  %-22s ", label);
		if (eng->bin_present) {
			fprintf(out, "%12s %12s  ", group_digits(eng->instructions, a),
				group_digits(eng->bin_size, b));
			put_string(out, eng->bin_member);
			total_instructions += eng->instructions;
			total_bytes += eng->bin_size;
		} else if (eng->bin_member) {
			fprintf(out, "%12s %12s  ", "-", "-");
			put_string(out, eng->bin_member);
			fputs(" (absent)", out);
		} else {
			fprintf(out, "%12s %12s  %s", "-", "-", eng->listed ? "(no binary named)" : "(not listed)");
		}
		fputc('\n', out);
	}
	fprintf(out, "  %-22s %12s %12s\n", "total", group_digits(total_instructions, a),
		group_digits(total_bytes, b));
}

static void format_shape(const struct ns_neff_tensor *t, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';
	if (!t->shape_known) {
		snprintf(buf, n, "?");
		return;
	}
	if (t->rank == 0) {
		snprintf(buf, n, "scalar");
		return;
	}
	for (size_t i = 0; i < t->rank && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%lld", i ? "x" : "",
					 (long long)t->shape[i]);
}

static void write_tensors_text(const struct ns_neff *neff, FILE *out)
{
	size_t name_width = 4, dtype_width = 5, shape_width = 5;
	char shape[128], a[32];

	if (neff->tensor_count == 0)
		return;
	for (size_t i = 0; i < neff->tensor_count; i++) {
		const struct ns_neff_tensor *t = &neff->tensors[i];
		size_t len = escaped_len(t->name);
		name_width = len > name_width ? len : name_width;
		len = t->dtype ? escaped_len(t->dtype) : 1;
		dtype_width = len > dtype_width ? len : dtype_width;
		format_shape(t, shape, sizeof(shape));
		len = strlen(shape);
		shape_width = len > shape_width ? len : shape_width;
	}
	fputs("\nI/O tensors", out);
	if (neff->tensor_subgraph) {
		fputs(" (", out);
		put_string(out, neff->tensor_subgraph);
		fputc(')', out);
	}
	fprintf(out, "\n  %-6s  %-*s  %-*s  %-*s  %14s\n", "KIND", (int)name_width, "NAME",
		(int)dtype_width, "DTYPE", (int)shape_width, "SHAPE", "BYTES");
	for (size_t i = 0; i < neff->tensor_count; i++) {
		const struct ns_neff_tensor *t = &neff->tensors[i];
		fprintf(out, "  %-6s  ", t->kind == NS_NEFF_INPUT ? "input" : "output");
		put_padded(out, t->name, name_width);
		fputs("  ", out);
		put_padded(out, t->dtype ? t->dtype : "?", dtype_width);
		format_shape(t, shape, sizeof(shape));
		fprintf(out, "  %-*s  %14s\n", (int)shape_width, shape,
			t->size_known ? group_digits(t->size, a) : "?");
	}
}

static void write_hlo_text(const struct ns_neff *neff, FILE *out)
{
	char a[32];

	if (!neff->has_hlo_stats)
		return;
	fputs("\nHLO stats (hlo_stats.json)\n", out);
	for (int i = 0; i < NS_NEFF_HLO_STAT_COUNT; i++) {
		if (!neff->hlo_present[i])
			continue;
		/* The compiler writes -1 for "not computed". */
		const char *value = neff->hlo[i] == -1 ? "unknown (-1)" : format_number(neff->hlo[i], a);
		fprintf(out, "  %-24s %18s\n", ns_neff_hlo_stat_key((enum ns_neff_hlo_stat)i), value);
	}
}

static void write_members_text(const struct ns_neff *neff, FILE *out)
{
	char a[32], b[32];

	fprintf(out, "\nMembers (%zu)\n  %14s %14s  %s\n", neff->member_count, "TAR OFFSET", "SIZE",
		"NAME");
	for (size_t i = 0; i < neff->member_count; i++) {
		const struct ns_neff_member *m = &neff->members[i];
		fprintf(out, "  %14s %14s  ", group_digits(m->offset, a), group_digits(m->size, b));
		put_string(out, m->name);
		fputc('\n', out);
	}
}

static void write_text(const struct ns_neff *neff, FILE *out, unsigned flags)
{
	write_header_text(neff, out);
	for (size_t i = 0; i < neff->subgraph_count; i++)
		write_subgraph_text(&neff->subgraphs[i], out);
	write_tensors_text(neff, out);
	write_hlo_text(neff, out);
	if (neff->note_count) {
		fputs("\nNotes\n", out);
		for (size_t i = 0; i < neff->note_count; i++) {
			fputs("  - ", out);
			put_string(out, neff->notes[i]);
			fputc('\n', out);
		}
	}
	if (flags & NS_NEFF_SUMMARY_MEMBERS)
		write_members_text(neff, out);
}

/* ---- JSON ---- */

/* cJSON_Add* return NULL on allocation failure; remember it once. */
struct json_out {
	bool nomem;
};

static cJSON *check(struct json_out *j, cJSON *item)
{
	if (!item)
		j->nomem = true;
	return item;
}

static void add_string(struct json_out *j, cJSON *obj, const char *key, const char *value)
{
	check(j, value ? cJSON_AddStringToObject(obj, key, value) : cJSON_AddNullToObject(obj, key));
}

/* Integers above 2^53 would lose digits as JSON numbers: those become strings. */
static cJSON *make_u64(uint64_t v)
{
	if (v <= (uint64_t)MAX_EXACT_DOUBLE)
		return cJSON_CreateNumber((double)v);
	char buf[24];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return cJSON_CreateString(buf);
}

/* Attaches item (taking ownership) and returns it, or NULL when it is gone. */
static cJSON *add_item(struct json_out *j, cJSON *obj, const char *key, cJSON *item)
{
	if (!check(j, item) || !cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		j->nomem = true;
		return NULL;
	}
	return item;
}

static cJSON *append(struct json_out *j, cJSON *array, cJSON *item)
{
	if (!check(j, item) || !cJSON_AddItemToArray(array, item)) {
		cJSON_Delete(item);
		j->nomem = true;
		return NULL;
	}
	return item;
}

static void add_u64(struct json_out *j, cJSON *obj, const char *key, uint64_t v)
{
	add_item(j, obj, key, make_u64(v));
}

/* A count where -1 means unknown. */
static void add_count(struct json_out *j, cJSON *obj, const char *key, int64_t v)
{
	add_item(j, obj, key, v < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)v));
}

static cJSON *new_object(struct json_out *j, cJSON *parent, const char *key)
{
	return add_item(j, parent, key, cJSON_CreateObject());
}

static cJSON *new_array(struct json_out *j, cJSON *parent, const char *key)
{
	return add_item(j, parent, key, cJSON_CreateArray());
}

static void json_header(struct json_out *j, cJSON *root, const struct ns_neff *neff)
{
	const struct ns_neff_header *h = &neff->header;
	cJSON *hdr = new_object(j, root, "header");
	if (!hdr)
		return;
	char buf[24];

	add_u64(j, hdr, "pkg_version", h->pkg_version);
	add_u64(j, hdr, "header_size", h->header_size);
	add_u64(j, hdr, "data_size", h->data_size);
	add_u64(j, hdr, "version_major", h->version_major);
	add_u64(j, hdr, "version_minor", h->version_minor);
	add_string(j, hdr, "build_version", h->build_version);
	add_u64(j, hdr, "num_tpb", h->num_tpb);
	add_string(j, hdr, "hash", h->hash_hex);
	add_string(j, hdr, "uuid", h->uuid_str);
	add_string(j, hdr, "name", h->name);
	add_u64(j, hdr, "requested_tpb_count", h->requested_tpb_count);
	cJSON *nodes = new_array(j, hdr, "tpb_per_node");
	for (size_t i = 0; nodes && i < tpb_node_count(h); i++)
		append(j, nodes, cJSON_CreateNumber(h->tpb_per_node[i]));
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)h->feature_bits);
	add_string(j, hdr, "feature_bits", buf);
	cJSON *bits = new_array(j, hdr, "feature_bit_numbers");
	for (int bit = 0; bits && bit < 64; bit++)
		if (h->feature_bits >> bit & 1)
			append(j, bits, cJSON_CreateNumber(bit));
	add_u64(j, hdr, "lnc_size", h->lnc_size);
}

static void json_subgraph(struct json_out *j, cJSON *array, const struct ns_neff_subgraph *sg)
{
	cJSON *obj = append(j, array, cJSON_CreateObject());
	if (!obj)
		return;
	add_string(j, obj, "name", sg->name);
	add_string(j, obj, "kelf", sg->kelf_member);
	add_string(j, obj, "definition", sg->definition);
	add_string(j, obj, "def_version", sg->def_version);
	cJSON *features = new_array(j, obj, "neff_features");
	for (size_t i = 0; features && i < sg->feature_count; i++)
		append(j, features, sg->features[i] ? cJSON_CreateString(sg->features[i])
						    : cJSON_CreateNull());
	add_count(j, obj, "var_count", sg->var_count);

	uint64_t total = 0;
	cJSON *engines = new_array(j, obj, "engines");
	for (int id = 0; engines && id < NS_NEFF_ENGINE_COUNT; id++) {
		const struct ns_neff_engine *eng = &sg->engines[id];
		cJSON *e = append(j, engines, cJSON_CreateObject());
		if (!e)
			break;
		add_string(j, e, "engine", ns_neff_engine_key((enum ns_neff_engine_id)id));
		add_string(j, e, "name", ns_neff_engine_name((enum ns_neff_engine_id)id));
		add_string(j, e, "alias", ns_neff_engine_alias((enum ns_neff_engine_id)id));
		add_item(j, e, "listed", cJSON_CreateBool(eng->listed));
		add_string(j, e, "json", eng->json_member);
		add_string(j, e, "binary", eng->bin_member);
		add_item(j, e, "binary_present", cJSON_CreateBool(eng->bin_present));
		if (eng->bin_present) {
			add_u64(j, e, "bin_size", eng->bin_size);
			add_u64(j, e, "instructions", eng->instructions);
		} else {
			add_item(j, e, "bin_size", cJSON_CreateNull());
			add_item(j, e, "instructions", cJSON_CreateNull());
		}
		add_count(j, e, "dma_count", eng->dma_count);
		total += eng->instructions;
	}
	add_u64(j, obj, "instructions_total", total);
}

static void json_tensor(struct json_out *j, cJSON *array, const struct ns_neff_tensor *t)
{
	cJSON *obj = append(j, array, cJSON_CreateObject());
	if (!obj)
		return;
	add_string(j, obj, "name", t->name);
	add_string(j, obj, "kind", t->kind == NS_NEFF_INPUT ? "input" : "output");
	add_string(j, obj, "dtype", t->dtype);
	if (t->shape_known) {
		cJSON *shape = new_array(j, obj, "shape");
		for (size_t i = 0; shape && i < t->rank; i++)
			append(j, shape, cJSON_CreateNumber((double)t->shape[i]));
	} else {
		add_item(j, obj, "shape", cJSON_CreateNull());
	}
	add_item(j, obj, "size", t->size_known ? make_u64(t->size) : cJSON_CreateNull());
	add_count(j, obj, "var_id", t->var_id);
}

static cJSON *build_json(const struct ns_neff *neff, unsigned flags, struct json_out *j)
{
	cJSON *root = check(j, cJSON_CreateObject());
	if (!root)
		return NULL;

	add_string(j, root, "file", neff->file_name);
	add_string(j, root, "path", neff->path);
	add_u64(j, root, "file_size", neff->file_size);
	json_header(j, root, neff);

	cJSON *payload = new_object(j, root, "payload");
	if (payload) {
		add_string(j, payload, "encoding", payload_name(neff->payload));
		add_u64(j, payload, "compressed_size", neff->compressed_size);
		add_u64(j, payload, "padding_size", neff->padding_size);
		add_u64(j, payload, "tar_size", neff->tar_size);
		add_u64(j, payload, "member_count", neff->member_count);
	}
	add_string(j, root, "compiler_version", neff->compiler_version);
	add_string(j, root, "kelp_version", neff->kelp_version);
	add_string(j, root, "kelf_version", neff->kelf_version);
	add_string(j, root, "target", neff->kelf_target);

	cJSON *subgraphs = new_array(j, root, "subgraphs");
	for (size_t i = 0; subgraphs && i < neff->subgraph_count; i++)
		json_subgraph(j, subgraphs, &neff->subgraphs[i]);

	add_string(j, root, "tensor_subgraph", neff->tensor_subgraph);
	cJSON *tensors = new_array(j, root, "tensors");
	for (size_t i = 0; tensors && i < neff->tensor_count; i++)
		json_tensor(j, tensors, &neff->tensors[i]);

	if (neff->has_hlo_stats) {
		cJSON *hlo = new_object(j, root, "hlo_stats");
		for (int i = 0; hlo && i < NS_NEFF_HLO_STAT_COUNT; i++)
			if (neff->hlo_present[i])
				add_item(j, hlo, ns_neff_hlo_stat_key((enum ns_neff_hlo_stat)i),
					 cJSON_CreateNumber(neff->hlo[i]));
	} else {
		add_item(j, root, "hlo_stats", cJSON_CreateNull());
	}

	cJSON *notes = new_array(j, root, "notes");
	for (size_t i = 0; notes && i < neff->note_count; i++)
		append(j, notes, cJSON_CreateString(neff->notes[i]));

	if (flags & NS_NEFF_SUMMARY_MEMBERS) {
		cJSON *members = new_array(j, root, "members");
		for (size_t i = 0; members && i < neff->member_count; i++) {
			cJSON *m = append(j, members, cJSON_CreateObject());
			if (!m)
				break;
			add_string(j, m, "name", neff->members[i].name);
			add_u64(j, m, "offset", neff->members[i].offset);
			add_u64(j, m, "size", neff->members[i].size);
		}
	}
	return root;
}

int ns_neff_write_summary(const struct ns_neff *neff, FILE *out, enum ns_neff_format format,
			  unsigned flags, struct ns_error *err)
{
	struct json_out j = { 0 };
	cJSON *root = NULL;
	char *text = NULL;
	int rc = NS_OK;

	if (format == NS_NEFF_FORMAT_TEXT) {
		write_text(neff, out, flags);
		goto out;
	}
	root = build_json(neff, flags, &j);
	text = j.nomem ? NULL : cJSON_Print(root);
	if (!text) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory building JSON", neff->path);
		goto out;
	}
	fputs(text, out);
	fputc('\n', out);
out:
	cJSON_free(text);
	cJSON_Delete(root);
	return rc;
}
