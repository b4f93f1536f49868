/* The `neff` summary as layouts over the grid (neff-summary.h). Every
 * text a cell shows is kept in a pool until the grids are written. */
#include "report/neff-summary.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "report/grid.h"

#define MAX_EXACT_DOUBLE 9007199254740992.0 /* 2^53 */

/* ---- the texts of the cells ---- */

struct pool {
	char **texts;
	size_t n, cap;
	bool oom;
};

/* Keeps s (allocated; NULL: out of memory, then "" stands in). */
static const char *keep(struct pool *p, char *s)
{
	if (!s || NS_GROW(p->texts, p->cap, p->n + 1)) {
		free(s);
		p->oom = true;
		return "";
	}
	return p->texts[p->n++] = s;
}

static const char *pool_printf(struct pool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *pool_printf(struct pool *p, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return keep(p, s);
}

static void pool_release(struct pool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->texts[i]);
	free(p->texts);
}

static bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* s with its control bytes as \xNN. */
static const char *esc(struct pool *p, const char *s)
{
	char *out = malloc(strlen(s) * 4 + 1), *o = out;
	for (; out && *s; s++)
		o += needs_escape((unsigned char)*s) ? sprintf(o, "\\x%02x", (unsigned char)*s) : (*o = *s, 1);
	if (out)
		*o = '\0';
	return keep(p, out);
}

/* Decimal with ',' between groups of three digits. */
static const char *grouped(struct pool *p, uint64_t value)
{
	char digits[24], buf[32];
	int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)value), n = 0;
	for (int i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[n++] = ',';
		buf[n++] = digits[i];
	}
	buf[n] = '\0';
	return pool_printf(p, "%s", buf);
}

/* A double as an integer with digit groups when it is one, else %.6g. */
static const char *number_text(struct pool *p, double v)
{
	if (v == floor(v) && fabs(v) < MAX_EXACT_DOUBLE)
		return v >= 0 ? grouped(p, (uint64_t)v) : pool_printf(p, "%.0f", v);
	return pool_printf(p, "%.6g", v);
}

/* Number of tpb_per_node entries up to the last non-zero one. */
static size_t tpb_node_count(const struct ns_neff_header *h)
{
	size_t n = sizeof(h->tpb_per_node);
	while (n > 0 && h->tpb_per_node[n - 1] == 0)
		n--;
	return n;
}

static struct ns_cell text(const char *s)
{
	return (struct ns_cell){ .type = NS_CELL_TEXT, .text = s };
}

/* ---- text ---- */

/* A grid in the plain style: indented by two, `gap` between cells. */
static void plain_grid(struct ns_grid *g, const char *gap)
{
	ns_grid_init(g, NULL);
	g->style = NS_GRID_PLAIN;
	g->gap = gap;
	g->as_is = true; /* the layout escaped the file's strings */
}

/* Renders g and releases it; -1 when out of memory. */
static int flush_grid(FILE *out, struct ns_grid *g)
{
	int rc = ns_grid_write_text(out, g);
	ns_grid_release(g);
	return rc;
}

static void field(struct ns_grid *g, const char *label, const char *value)
{
	ns_grid_row(g, (struct ns_cell[]){ text(label), text(value) }, true, false);
}

/* A NULL or empty s is shown as `missing`. */
static const char *or_missing(struct pool *p, const char *s, const char *missing)
{
	return s && *s ? esc(p, s) : missing;
}

static const char *tpb_text(struct pool *p, const struct ns_neff_header *h)
{
	char nodes[64 * 4 + 1] = "";
	for (size_t i = 0, used = 0; i < tpb_node_count(h); i++)
		used += (size_t)snprintf(nodes + used, sizeof(nodes) - used, "%s%u", i ? " " : "", h->tpb_per_node[i]);
	return pool_printf(p, "num_tpb %u, requested %u, per node [%s]", h->num_tpb, h->requested_tpb_count, nodes);
}

static const char *feature_bits_text(struct pool *p, const struct ns_neff_header *h)
{
	char bits[64 * 3 + 1] = "";
	for (int bit = 0, used = 0; bit < 64; bit++)
		if (h->feature_bits >> bit & 1)
			used += snprintf(bits + used, sizeof(bits) - (size_t)used, "%s%d", used ? " " : "", bit);
	if (!h->feature_bits)
		return pool_printf(p, "0x%llx", (unsigned long long)h->feature_bits);
	return pool_printf(p, "0x%llx (bits %s; names not public)", (unsigned long long)h->feature_bits, bits);
}

static const char *payload_text(struct pool *p, const struct ns_neff *neff)
{
	if (neff->payload == NS_NEFF_PAYLOAD_GZIP_TAR)
		return pool_printf(p, "gzip %s bytes + %s padding -> tar %s bytes", grouped(p, neff->compressed_size),
				   grouped(p, neff->padding_size), grouped(p, neff->tar_size));
	return pool_printf(p, "tar %s bytes + %s padding", grouped(p, neff->tar_size), grouped(p, neff->padding_size));
}

static void header_fields(struct ns_grid *g, struct pool *p, const struct ns_neff *neff)
{
	const struct ns_neff_header *h = &neff->header;
	field(g, "file size", pool_printf(p, "%s bytes", grouped(p, neff->file_size)));
	field(g, "name", or_missing(p, h->name, "(empty)"));
	field(g, "uuid", or_missing(p, h->uuid_str, ""));
	field(g, "hash", pool_printf(p, "%s (opaque, not verified)", h->hash_hex));
	field(g, "NEFF version", pool_printf(p, "%llu.%llu", (unsigned long long)h->version_major,
					     (unsigned long long)h->version_minor));
	field(g, "build version", or_missing(p, h->build_version, "(empty)"));
	field(g, "compiler", or_missing(p, neff->compiler_version, "(unknown)"));
	if (neff->kelp_version)
		field(g, "kelp version", or_missing(p, neff->kelp_version, ""));
	field(g, "target", pool_printf(p, "%s%s%s%s", neff->kelf_target ? esc(p, neff->kelf_target) : "(unknown)",
				       neff->kelf_version ? " (kelf version " : "",
				       neff->kelf_version ? esc(p, neff->kelf_version) : "", neff->kelf_version ? ")" : ""));
	field(g, "LNC size", pool_printf(p, "%u", h->lnc_size));
	field(g, "TPBs", tpb_text(p, h));
	field(g, "feature bits", feature_bits_text(p, h));
	field(g, "header", pool_printf(p, "pkg_version %llu, %s bytes, data_size %s", (unsigned long long)h->pkg_version,
				       grouped(p, h->header_size), grouped(p, h->data_size)));
	field(g, "payload", payload_text(p, neff));
	field(g, "members", pool_printf(p, "%zu", neff->member_count));
	field(g, "subgraphs", pool_printf(p, "%zu", neff->subgraph_count));
}

static int write_header_text(FILE *out, struct pool *p, const struct ns_neff *neff)
{
	struct ns_grid g;
	fprintf(out, "NEFF %s\n", esc(p, neff->file_name));
	plain_grid(&g, "");
	ns_grid_col(&g, &(struct ns_grid_col){ .width = 20, .left = true });
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	header_fields(&g, p, neff);
	return flush_grid(out, &g);
}

/* An engine's row: its binary's instructions and bytes, or why none. */
static void engine_row(struct ns_grid *g, struct pool *p, const struct ns_neff_engine *eng, int id)
{
	const char *label = pool_printf(p, "%s (%s)", ns_neff_engine_name((enum ns_neff_engine_id)id),
					ns_neff_engine_alias((enum ns_neff_engine_id)id));
	const char *instructions = "-", *bytes = "-", *binary;
	if (eng->bin_present) {
		instructions = grouped(p, eng->instructions);
		bytes = grouped(p, eng->bin_size);
		binary = esc(p, eng->bin_member);
	} else if (eng->bin_member) {
		binary = pool_printf(p, "%s (absent)", esc(p, eng->bin_member));
	} else {
		binary = eng->listed ? "(no binary named)" : "(not listed)";
	}
	ns_grid_row(g, (struct ns_cell[]){ text(label), text(instructions), text(bytes), text(binary) }, true, false);
}

static const char *subgraph_title(struct pool *p, const struct ns_neff_subgraph *sg)
{
	const char *features = "";
	for (size_t i = 0; i < sg->feature_count; i++)
		features = pool_printf(p, "%s%s%s", features, i ? " " : ", features ",
				       sg->features[i] ? esc(p, sg->features[i]) : "?");
	return pool_printf(p, "Subgraph %s (%s%s%s%s%s)", esc(p, sg->name), esc(p, sg->definition),
			   sg->def_version ? ", def version " : "", sg->def_version ? esc(p, sg->def_version) : "",
			   features, sg->var_count >= 0 ? pool_printf(p, ", %lld vars", (long long)sg->var_count) : "");
}

static int write_subgraph_text(FILE *out, struct pool *p, const struct ns_neff_subgraph *sg)
{
	struct ns_grid g;
	uint64_t total_instructions = 0, total_bytes = 0;
	fprintf(out, "\n%s\n", subgraph_title(p, sg));
	plain_grid(&g, " ");
	ns_grid_col(&g, &(struct ns_grid_col){ .width = 22, .left = true });
	ns_grid_col(&g, &(struct ns_grid_col){ .width = 12 });
	ns_grid_col(&g, &(struct ns_grid_col){ .width = 12, .gap = "  " });
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	ns_grid_row(&g, (struct ns_cell[]){ text("ENGINE"), text("INSTRUCTIONS"), text("BIN BYTES"), text("BINARY") },
		    true, false);
	for (int id = 0; id < NS_NEFF_ENGINE_COUNT; id++) {
		const struct ns_neff_engine *eng = &sg->engines[id];
		engine_row(&g, p, eng, id);
		total_instructions += eng->bin_present ? eng->instructions : 0;
		total_bytes += eng->bin_present ? eng->bin_size : 0;
	}
	ns_grid_row(&g, (struct ns_cell[]){ text("total"), text(grouped(p, total_instructions)),
					    text(grouped(p, total_bytes)), text("") },
		    true, false);
	return flush_grid(out, &g);
}

static const char *shape_text(struct pool *p, const struct ns_neff_tensor *t)
{
	const char *shape = "";
	if (!t->shape_known)
		return "?";
	if (t->rank == 0)
		return "scalar";
	for (size_t i = 0; i < t->rank; i++)
		shape = pool_printf(p, "%s%s%lld", shape, i ? "x" : "", (long long)t->shape[i]);
	return shape;
}

static int write_tensors_text(FILE *out, struct pool *p, const struct ns_neff *neff)
{
	struct ns_grid g;
	if (neff->tensor_count == 0)
		return 0;
	fprintf(out, "\nI/O tensors%s%s%s\n", neff->tensor_subgraph ? " (" : "",
		neff->tensor_subgraph ? esc(p, neff->tensor_subgraph) : "", neff->tensor_subgraph ? ")" : "");
	plain_grid(&g, NULL);
	ns_grid_col(&g, &(struct ns_grid_col){ .width = 6, .left = true });
	for (int c = 0; c < 3; c++) /* name, dtype, shape */
		ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	ns_grid_col(&g, &(struct ns_grid_col){ .width = 14 });
	ns_grid_row(&g, (struct ns_cell[]){ text("KIND"), text("NAME"), text("DTYPE"), text("SHAPE"), text("BYTES") },
		    true, false);
	for (size_t i = 0; i < neff->tensor_count; i++) {
		const struct ns_neff_tensor *t = &neff->tensors[i];
		ns_grid_row(&g, (struct ns_cell[]){ text(t->kind == NS_NEFF_INPUT ? "input" : "output"),
						    text(esc(p, t->name)), text(t->dtype ? esc(p, t->dtype) : "?"),
						    text(shape_text(p, t)), text(t->size_known ? grouped(p, t->size) : "?") },
			    true, false);
	}
	return flush_grid(out, &g);
}

static int write_hlo_text(FILE *out, struct pool *p, const struct ns_neff *neff)
{
	struct ns_grid g;
	if (!neff->has_hlo_stats)
		return 0;
	fputs("\nHLO stats (hlo_stats.json)\n", out);
	plain_grid(&g, " ");
	ns_grid_col(&g, &(struct ns_grid_col){ .width = 24, .left = true });
	ns_grid_col(&g, &(struct ns_grid_col){ .width = 18 });
	for (int i = 0; i < NS_NEFF_HLO_STAT_COUNT; i++)
		if (neff->hlo_present[i]) /* the compiler writes -1 for "not computed" */
			field(&g, ns_neff_hlo_stat_key((enum ns_neff_hlo_stat)i),
			      neff->hlo[i] == -1 ? "unknown (-1)" : number_text(p, neff->hlo[i]));
	return flush_grid(out, &g);
}

static int write_members_text(FILE *out, struct pool *p, const struct ns_neff *neff)
{
	struct ns_grid g;
	fprintf(out, "\nMembers (%zu)\n", neff->member_count);
	plain_grid(&g, " ");
	ns_grid_col(&g, &(struct ns_grid_col){ .width = 14 });
	ns_grid_col(&g, &(struct ns_grid_col){ .width = 14, .gap = "  " });
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	ns_grid_row(&g, (struct ns_cell[]){ text("TAR OFFSET"), text("SIZE"), text("NAME") }, true, false);
	for (size_t i = 0; i < neff->member_count; i++) {
		const struct ns_neff_member *m = &neff->members[i];
		ns_grid_row(&g, (struct ns_cell[]){ text(grouped(p, m->offset)), text(grouped(p, m->size)),
						    text(esc(p, m->name)) },
			    true, false);
	}
	return flush_grid(out, &g);
}

static int write_text(FILE *out, struct pool *p, const struct ns_neff *neff, unsigned flags)
{
	int rc = write_header_text(out, p, neff);
	for (size_t i = 0; rc == 0 && i < neff->subgraph_count; i++)
		rc = write_subgraph_text(out, p, &neff->subgraphs[i]);
	if (rc == 0)
		rc = write_tensors_text(out, p, neff);
	if (rc == 0)
		rc = write_hlo_text(out, p, neff);
	if (rc == 0 && neff->note_count) {
		fputs("\nNotes\n", out);
		for (size_t i = 0; i < neff->note_count; i++)
			fprintf(out, "  - %s\n", esc(p, neff->notes[i]));
	}
	if (rc == 0 && flags & NS_NEFF_SUMMARY_MEMBERS)
		rc = write_members_text(out, p, neff);
	return rc || p->oom ? -1 : 0;
}

/* ---- JSON: one grid per kind of object, in cJSON's formatted style ---- */

enum json_part { JP_ROOT, JP_HEADER, JP_TPBS, JP_BITS, JP_PAYLOAD, JP_SUBGRAPH, JP_FEATURES, JP_ENGINE, JP_TENSOR,
		 JP_SHAPE, JP_HLO, JP_NOTES, JP_MEMBER, JP__COUNT };

struct json_doc {
	struct ns_grid g[JP__COUNT];
	struct pool *pool;
};

/* A number as cJSON prints it: "%d" when it is its int, else 15
 * significant digits, or 17 where 15 do not read back. */
static struct ns_cell number(struct json_doc *j, double d)
{
	int as_int = d >= INT_MAX ? INT_MAX : d <= (double)INT_MIN ? INT_MIN : (int)d;
	char buf[32];
	double back;
	if (isnan(d) || isinf(d))
		return (struct ns_cell){ .type = NS_CELL_EMPTY };
	if (d == (double)as_int)
		snprintf(buf, sizeof(buf), "%d", as_int);
	else if (snprintf(buf, sizeof(buf), "%1.15g", d), sscanf(buf, "%lg", &back) != 1 ||
		 fabs(back - d) > fmax(fabs(back), fabs(d)) * DBL_EPSILON)
		snprintf(buf, sizeof(buf), "%1.17g", d);
	return (struct ns_cell){ .type = NS_CELL_NUM, .text = pool_printf(j->pool, "%s", buf) };
}

/* Integers above 2^53 would lose digits as JSON numbers: those are strings. */
static struct ns_cell u64(struct json_doc *j, uint64_t v)
{
	if (v <= (uint64_t)MAX_EXACT_DOUBLE)
		return number(j, (double)v);
	return text(pool_printf(j->pool, "%llu", (unsigned long long)v));
}

/* A count where -1 means unknown (null). */
static struct ns_cell count(struct json_doc *j, int64_t v)
{
	return v < 0 ? (struct ns_cell){ .type = NS_CELL_EMPTY } : number(j, (double)v);
}

/* A string, null when NULL. */
static struct ns_cell str(const char *s)
{
	return s ? text(s) : (struct ns_cell){ .type = NS_CELL_EMPTY };
}

static struct ns_cell flag(bool b)
{
	return (struct ns_cell){ .type = NS_CELL_BOOL, .i = b };
}

/* Adds cells as the next row of part; the cell that nests it. */
static struct ns_cell add_row(struct json_doc *j, enum json_part part, const struct ns_cell *cells)
{
	struct ns_grid *g = &j->g[part];
	struct ns_cell nested = { .type = NS_CELL_ROW, .sub = g, .i = (int64_t)g->n_rows };
	ns_grid_row(g, cells, true, false);
	return nested;
}

/* The rows of part added since `from`, nested as an array. */
static struct ns_cell rows_since(struct json_doc *j, enum json_part part, size_t from)
{
	return (struct ns_cell){ .type = NS_CELL_ROWS, .sub = &j->g[part], .i = (int64_t)from,
				 .len = j->g[part].n_rows - from };
}

static void keys(struct ns_grid *g, const char *const *names, size_t n)
{
	for (size_t c = 0; c < n; c++)
		ns_grid_col(g, &(struct ns_grid_col){ .key = names[c] });
}

static void json_columns(struct json_doc *j, const struct ns_neff *neff, unsigned flags)
{
	static const char *const root[] = { "file", "path", "file_size", "header", "payload", "compiler_version",
					    "kelp_version", "kelf_version", "target", "subgraphs", "tensor_subgraph",
					    "tensors", "hlo_stats", "notes", "members" };
	static const char *const header[] = { "pkg_version", "header_size", "data_size", "version_major",
					      "version_minor", "build_version", "num_tpb", "hash", "uuid", "name",
					      "requested_tpb_count", "tpb_per_node", "feature_bits",
					      "feature_bit_numbers", "lnc_size" };
	static const char *const payload[] = { "encoding", "compressed_size", "padding_size", "tar_size", "member_count" };
	static const char *const subgraph[] = { "name", "kelf", "definition", "def_version", "neff_features",
						"var_count", "engines", "instructions_total" };
	static const char *const engine[] = { "engine", "name", "alias", "listed", "json", "binary", "binary_present",
					      "bin_size", "instructions", "dma_count" };
	static const char *const tensor[] = { "name", "kind", "dtype", "shape", "size", "var_id" };
	static const char *const member[] = { "name", "offset", "size" }, *const value[] = { "value" };
	keys(&j->g[JP_ROOT], root, NS_ARRAY_SIZE(root) - !(flags & NS_NEFF_SUMMARY_MEMBERS));
	keys(&j->g[JP_HEADER], header, NS_ARRAY_SIZE(header));
	keys(&j->g[JP_PAYLOAD], payload, NS_ARRAY_SIZE(payload));
	keys(&j->g[JP_SUBGRAPH], subgraph, NS_ARRAY_SIZE(subgraph));
	keys(&j->g[JP_ENGINE], engine, NS_ARRAY_SIZE(engine));
	keys(&j->g[JP_TENSOR], tensor, NS_ARRAY_SIZE(tensor));
	keys(&j->g[JP_MEMBER], member, NS_ARRAY_SIZE(member));
	for (int i = 0; i < NS_NEFF_HLO_STAT_COUNT; i++)
		if (neff->hlo_present[i])
			ns_grid_col(&j->g[JP_HLO], &(struct ns_grid_col){ .key = ns_neff_hlo_stat_key((enum ns_neff_hlo_stat)i) });
	static const enum json_part lists[] = { JP_TPBS, JP_BITS, JP_FEATURES, JP_SHAPE, JP_NOTES };
	for (size_t l = 0; l < NS_ARRAY_SIZE(lists); l++) {
		j->g[lists[l]].json_values = true;
		keys(&j->g[lists[l]], value, 1);
	}
}

static struct ns_cell json_header(struct json_doc *j, const struct ns_neff_header *h)
{
	size_t tpbs = j->g[JP_TPBS].n_rows, bits = j->g[JP_BITS].n_rows;
	for (size_t i = 0; i < tpb_node_count(h); i++)
		add_row(j, JP_TPBS, (struct ns_cell[]){ number(j, h->tpb_per_node[i]) });
	for (int bit = 0; bit < 64; bit++)
		if (h->feature_bits >> bit & 1)
			add_row(j, JP_BITS, (struct ns_cell[]){ number(j, bit) });
	return add_row(j, JP_HEADER, (struct ns_cell[]){
		u64(j, h->pkg_version), u64(j, h->header_size), u64(j, h->data_size), u64(j, h->version_major),
		u64(j, h->version_minor), str(h->build_version), u64(j, h->num_tpb), str(h->hash_hex), str(h->uuid_str),
		str(h->name), u64(j, h->requested_tpb_count), rows_since(j, JP_TPBS, tpbs),
		text(pool_printf(j->pool, "0x%llx", (unsigned long long)h->feature_bits)), rows_since(j, JP_BITS, bits),
		u64(j, h->lnc_size) });
}

static void json_engine(struct json_doc *j, const struct ns_neff_engine *eng, enum ns_neff_engine_id id)
{
	struct ns_cell none = { .type = NS_CELL_EMPTY };
	add_row(j, JP_ENGINE, (struct ns_cell[]){
		str(ns_neff_engine_key(id)), str(ns_neff_engine_name(id)), str(ns_neff_engine_alias(id)),
		flag(eng->listed), str(eng->json_member), str(eng->bin_member), flag(eng->bin_present),
		eng->bin_present ? u64(j, eng->bin_size) : none, eng->bin_present ? u64(j, eng->instructions) : none,
		count(j, eng->dma_count) });
}

static void json_subgraph(struct json_doc *j, const struct ns_neff_subgraph *sg)
{
	size_t features = j->g[JP_FEATURES].n_rows, engines = j->g[JP_ENGINE].n_rows;
	uint64_t total = 0;
	for (size_t i = 0; i < sg->feature_count; i++)
		add_row(j, JP_FEATURES, (struct ns_cell[]){ str(sg->features[i]) });
	for (int id = 0; id < NS_NEFF_ENGINE_COUNT; id++) {
		json_engine(j, &sg->engines[id], (enum ns_neff_engine_id)id);
		total += sg->engines[id].instructions;
	}
	add_row(j, JP_SUBGRAPH, (struct ns_cell[]){
		str(sg->name), str(sg->kelf_member), str(sg->definition), str(sg->def_version),
		rows_since(j, JP_FEATURES, features), count(j, sg->var_count), rows_since(j, JP_ENGINE, engines),
		u64(j, total) });
}

static void json_tensor(struct json_doc *j, const struct ns_neff_tensor *t)
{
	size_t dims = j->g[JP_SHAPE].n_rows;
	for (size_t i = 0; t->shape_known && i < t->rank; i++)
		add_row(j, JP_SHAPE, (struct ns_cell[]){ number(j, (double)t->shape[i]) });
	add_row(j, JP_TENSOR, (struct ns_cell[]){
		str(t->name), str(t->kind == NS_NEFF_INPUT ? "input" : "output"), str(t->dtype),
		t->shape_known ? rows_since(j, JP_SHAPE, dims) : (struct ns_cell){ .type = NS_CELL_EMPTY },
		t->size_known ? u64(j, t->size) : (struct ns_cell){ .type = NS_CELL_EMPTY }, count(j, t->var_id) });
}

/* The hlo_stats object: the keys present; null without hlo_stats.json. */
static struct ns_cell json_hlo(struct json_doc *j, const struct ns_neff *neff)
{
	struct ns_cell values[NS_NEFF_HLO_STAT_COUNT];
	size_t n = 0;
	if (!neff->has_hlo_stats)
		return (struct ns_cell){ .type = NS_CELL_EMPTY };
	for (int i = 0; i < NS_NEFF_HLO_STAT_COUNT; i++)
		if (neff->hlo_present[i])
			values[n++] = number(j, neff->hlo[i]);
	return add_row(j, JP_HLO, values);
}

static void json_document(struct json_doc *j, const struct ns_neff *neff)
{
	struct ns_cell header = json_header(j, &neff->header);
	for (size_t i = 0; i < neff->subgraph_count; i++)
		json_subgraph(j, &neff->subgraphs[i]);
	for (size_t i = 0; i < neff->tensor_count; i++)
		json_tensor(j, &neff->tensors[i]);
	for (size_t i = 0; i < neff->note_count; i++)
		add_row(j, JP_NOTES, (struct ns_cell[]){ str(neff->notes[i]) });
	for (size_t i = 0; i < neff->member_count; i++)
		add_row(j, JP_MEMBER, (struct ns_cell[]){ str(neff->members[i].name), u64(j, neff->members[i].offset),
							  u64(j, neff->members[i].size) });
	add_row(j, JP_ROOT, (struct ns_cell[]){
		str(neff->file_name), str(neff->path), u64(j, neff->file_size), header,
		add_row(j, JP_PAYLOAD, (struct ns_cell[]){ str(neff->payload == NS_NEFF_PAYLOAD_GZIP_TAR ? "gzip" : "tar"),
							   u64(j, neff->compressed_size), u64(j, neff->padding_size),
							   u64(j, neff->tar_size), u64(j, neff->member_count) }),
		str(neff->compiler_version), str(neff->kelp_version), str(neff->kelf_version), str(neff->kelf_target),
		rows_since(j, JP_SUBGRAPH, 0), str(neff->tensor_subgraph), rows_since(j, JP_TENSOR, 0), json_hlo(j, neff),
		rows_since(j, JP_NOTES, 0), rows_since(j, JP_MEMBER, 0) });
}

static int write_json(FILE *out, struct pool *p, const struct ns_neff *neff, unsigned flags)
{
	struct json_doc *j = calloc(1, sizeof(*j));
	int rc;
	if (!j)
		return -1;
	j->pool = p;
	for (int part = 0; part < JP__COUNT; part++) {
		ns_grid_init(&j->g[part], NULL);
		j->g[part].json_tabs = true;
	}
	json_columns(j, neff, flags);
	json_document(j, neff);
	j->g[JP_ROOT].oom |= p->oom;
	rc = ns_grid_write_json_document(out, j->g, JP__COUNT); /* JP_ROOT first */
	free(j);
	return rc;
}

int ns_neff_write_summary(const struct ns_neff *neff, FILE *out, enum ns_neff_format format, unsigned flags,
			  struct ns_error *err)
{
	struct pool pool = { 0 };
	int rc = format == NS_NEFF_FORMAT_JSON ? write_json(out, &pool, neff, flags) : write_text(out, &pool, neff, flags);
	pool_release(&pool);
	if (rc)
		return ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory writing the summary", neff->path);
	return NS_OK;
}
