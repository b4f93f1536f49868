/* NEFF JSON members, navigated by reference as the runtime does:
 * kelf-*.json graphs[].definition -> sgNN/def.json -> engine JSON/BIN,
 * plus info.json, hlo_stats.json, sgNN/tensor_map.json and neff.json.
 *
 * Only the navigation skeleton can fail the open: a kelf or def.json that
 * is missing or not a JSON object. Anything else that is absent or has the
 * wrong type becomes a line in neff->notes and leaves the field unknown. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "neff/neff-format.h"
#include "neff/neff-internal.h"

struct reader {
	struct ns_neff *neff;
	struct ns_error *err;
	bool nomem; /* sticky: an allocation failed; reported once at the end */
};

static void note(struct reader *r, const char *fmt, ...) NS_PRINTF(2, 3);

static void note(struct reader *r, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (neff_note(r->neff, "%s", line))
		r->nomem = true;
}

static char *dup_str(struct reader *r, const char *s)
{
	char *copy = s ? strdup(s) : NULL;
	if (s && !copy)
		r->nomem = true;
	return copy;
}

/* dir is the member's directory with its trailing '/', or "". */
static char *join(struct reader *r, const char *dir, size_t dir_len, const char *name)
{
	size_t name_len = strlen(name);
	char *joined = malloc(dir_len + name_len + 1);
	if (!joined) {
		r->nomem = true;
		return NULL;
	}
	memcpy(joined, dir, dir_len);
	memcpy(joined + dir_len, name, name_len + 1);
	return joined;
}

static size_t dir_len(const char *member)
{
	const char *slash = strrchr(member, '/');
	return slash ? (size_t)(slash - member) + 1 : 0;
}

static const char *get_string(const cJSON *obj, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/* An integral JSON number that a double holds exactly (|v| <= 2^53). */
static bool get_int(const cJSON *item, int64_t *ret)
{
	if (!cJSON_IsNumber(item))
		return false;
	double v = item->valuedouble;
	if (!(v >= -9007199254740992.0 && v <= 9007199254740992.0) || v != (double)(int64_t)v)
		return false;
	*ret = (int64_t)v;
	return true;
}

static int64_t count_or_unknown(const cJSON *item)
{
	return cJSON_IsArray(item) || cJSON_IsObject(item) ? cJSON_GetArraySize(item) : -1;
}

/* Parses a kept member as a JSON object. For a required member, absence or
 * bad JSON fails the open; otherwise it is noted and *ret stays NULL. */
static int parse_member(struct reader *r, const struct ns_neff_member *m, bool required,
			cJSON **ret)
{
	const char *path = r->neff->path;
	const char *end = NULL;
	cJSON *doc = NULL;

	*ret = NULL;
	if (!m->data) {
		if (required)
			return ns_error_set(r->err, NS_ERR_NOMEM,
					    "%s: member '%s' is %llu bytes, over the %u-byte limit for "
					    "JSON members",
					    path, m->name, (unsigned long long)m->size,
					    NEFF_MAX_JSON_MEMBER);
		note(r, "%s: %llu bytes, over the JSON limit; not read", m->name,
		     (unsigned long long)m->size);
		return NS_OK;
	}
	doc = cJSON_ParseWithLengthOpts(m->data, (size_t)m->size, &end, false);
	size_t offset = end ? (size_t)(end - m->data) : 0;
	while (doc && offset < m->size && strchr(" \t\r\n", m->data[offset]) && m->data[offset])
		offset++;
	if (!doc || !cJSON_IsObject(doc) || offset < m->size) {
		const char *what = !doc ? "invalid JSON"
				   : !cJSON_IsObject(doc) ? "not a JSON object"
				   : "data after the JSON value";
		if (doc && !cJSON_IsObject(doc))
			offset = 0;
		cJSON_Delete(doc);
		if (required)
			return ns_error_set(r->err, NS_ERR_INPUT, "%s: member '%s': byte %zu: %s", path,
					    m->name, offset, what);
		note(r, "%s: byte %zu: %s; ignored", m->name, offset, what);
		return NS_OK;
	}
	*ret = doc;
	return NS_OK;
}

/* An optional member by name: NULL (and a note) when absent or unusable. */
static cJSON *parse_optional(struct reader *r, const char *name)
{
	const struct ns_neff_member *m = ns_neff_find_member(r->neff, name);
	cJSON *doc = NULL;
	if (!m)
		note(r, "%s: absent", name);
	else
		parse_member(r, m, false, &doc); /* cannot fail when not required */
	return doc;
}

static void read_engine(struct reader *r, struct ns_neff_subgraph *sg, const cJSON *def,
			enum ns_neff_engine_id id)
{
	struct ns_neff_engine *eng = &sg->engines[id];
	const char *key = ns_neff_engine_key(id);
	char instr_key[16];
	snprintf(instr_key, sizeof(instr_key), "%s_instr", key);
	const char *json_name = get_string(def, key);
	const char *bin_name = get_string(def, instr_key);
	size_t dlen = dir_len(sg->definition);
	cJSON *eng_doc = NULL;

	eng->dma_count = -1;
	if (!json_name && !bin_name) {
		note(r, "%s: no \"%s\" or \"%s\" (engine %s)", sg->definition, key, instr_key,
		     ns_neff_engine_name(id));
		return;
	}
	eng->listed = true;
	if (json_name) {
		eng->json_member = join(r, sg->definition, dlen, json_name);
		if (!eng->json_member)
			return;
		eng_doc = parse_optional(r, eng->json_member);
		eng->dma_count = count_or_unknown(cJSON_GetObjectItemCaseSensitive(eng_doc, "dma"));
		if (!bin_name) /* def.json normally names the binary; the engine JSON does too */
			bin_name = get_string(eng_doc, "instr");
	}
	if (!bin_name) {
		note(r, "%s: no binary named for engine %s", sg->definition, ns_neff_engine_name(id));
		goto out;
	}
	eng->bin_member = join(r, sg->definition, dlen, bin_name);
	if (!eng->bin_member)
		goto out;
	const struct ns_neff_member *bin = ns_neff_find_member(r->neff, eng->bin_member);
	if (!bin) {
		note(r, "%s: absent (engine %s binary)", eng->bin_member, ns_neff_engine_name(id));
		goto out;
	}
	eng->bin_present = true;
	eng->bin_size = bin->size;
	eng->instructions = bin->size / NEFF_INSTRUCTION_SIZE;
	if (bin->size % NEFF_INSTRUCTION_SIZE)
		note(r, "%s: %llu bytes is not a whole number of 64-byte instructions", bin->name,
		     (unsigned long long)bin->size);
out:
	cJSON_Delete(eng_doc);
}

/* The I/O tensor named name, added (kind given) if new; NULL when out of memory. */
static struct ns_neff_tensor *tensor_for(struct reader *r, const char *name, enum ns_neff_io kind)
{
	struct ns_neff *neff = r->neff;
	for (size_t i = 0; i < neff->tensor_count; i++)
		if (strcmp(neff->tensors[i].name, name) == 0)
			return &neff->tensors[i];

	struct ns_neff_tensor *grown =
		realloc(neff->tensors, (neff->tensor_count + 1) * sizeof(*grown));
	if (!grown) {
		r->nomem = true;
		return NULL;
	}
	neff->tensors = grown;
	struct ns_neff_tensor *t = &neff->tensors[neff->tensor_count];
	*t = (struct ns_neff_tensor){ .kind = kind, .var_id = -1, .name = dup_str(r, name) };
	if (!t->name)
		return NULL;
	neff->tensor_count++;
	return t;
}

/* Fills dtype and shape where still unknown; where is the member for notes. */
static void set_dtype_shape(struct reader *r, struct ns_neff_tensor *t, const char *dtype,
			    const cJSON *shape, const char *where)
{
	if (!t->dtype)
		t->dtype = dup_str(r, dtype);
	if (t->shape_known || !shape)
		return;
	int rank = cJSON_GetArraySize(shape);
	int64_t *dims = rank > 0 ? calloc((size_t)rank, sizeof(*dims)) : NULL;
	if (rank > 0 && !dims) {
		r->nomem = true;
		return;
	}
	int i = 0;
	const cJSON *dim;
	cJSON_ArrayForEach(dim, shape) {
		if (!get_int(dim, &dims[i]) || dims[i] < 0) {
			note(r, "%s: shape of '%s' is not a list of sizes", where, t->name);
			free(dims);
			return;
		}
		i++;
	}
	t->shape = dims;
	t->rank = (size_t)rank;
	t->shape_known = cJSON_IsArray(shape);
}

static bool io_kind(const char *s, enum ns_neff_io *ret)
{
	if (s && strcmp(s, "input") == 0)
		*ret = NS_NEFF_INPUT;
	else if (s && strcmp(s, "output") == 0)
		*ret = NS_NEFF_OUTPUT;
	else
		return false;
	return true;
}

/* Device I/O buffers of one subgraph: names, sizes and var ids from def.json
 * "var", dtypes and shapes from the sibling tensor_map.json. */
static void read_subgraph_io(struct reader *r, const struct ns_neff_subgraph *sg, const cJSON *def)
{
	const cJSON *var;
	enum ns_neff_io kind;

	cJSON_ArrayForEach(var, cJSON_GetObjectItemCaseSensitive(def, "var")) {
		if (!var->string || !io_kind(get_string(var, "type"), &kind))
			continue;
		struct ns_neff_tensor *t = tensor_for(r, var->string, kind);
		if (!t)
			return;
		int64_t v;
		if (get_int(cJSON_GetObjectItemCaseSensitive(var, "size"), &v) && v >= 0) {
			t->size = (uint64_t)v;
			t->size_known = true;
		}
		if (get_int(cJSON_GetObjectItemCaseSensitive(var, "var_id"), &v))
			t->var_id = v;
	}

	char *map_name = join(r, sg->definition, dir_len(sg->definition), "tensor_map.json");
	if (!map_name)
		return;
	cJSON *map = parse_optional(r, map_name);
	const cJSON *entry;
	cJSON_ArrayForEach(entry, map) {
		if (!entry->string || !io_kind(get_string(entry, "kind"), &kind))
			continue;
		struct ns_neff_tensor *t = tensor_for(r, entry->string, kind);
		if (!t)
			break;
		const cJSON *shape = cJSON_GetObjectItemCaseSensitive(entry, "tf_shape");
		if (!cJSON_IsArray(shape))
			shape = cJSON_GetObjectItemCaseSensitive(entry, "sim_shape");
		set_dtype_shape(r, t, get_string(entry, "dtype"), cJSON_IsArray(shape) ? shape : NULL,
				map_name);
	}
	cJSON_Delete(map);
	free(map_name);
}

static int read_def(struct reader *r, struct ns_neff_subgraph *sg, const struct ns_neff_member *m)
{
	cJSON *def = NULL;
	int rc = parse_member(r, m, true, &def);
	if (rc)
		return rc;

	sg->def_version = dup_str(r, get_string(def, "version"));
	sg->var_count = count_or_unknown(cJSON_GetObjectItemCaseSensitive(def, "var"));
	if (sg->var_count < 0)
		note(r, "%s: no \"var\" object", sg->definition);

	const cJSON *features = cJSON_GetObjectItemCaseSensitive(def, "neff_features");
	int nfeatures = cJSON_IsArray(features) ? cJSON_GetArraySize(features) : 0;
	if (nfeatures > 0) {
		sg->features = calloc((size_t)nfeatures, sizeof(char *));
		if (!sg->features)
			r->nomem = true;
	}
	const cJSON *feature;
	if (!sg->features)
		features = NULL;
	cJSON_ArrayForEach(feature, features) {
		if (cJSON_IsString(feature))
			sg->features[sg->feature_count++] = dup_str(r, feature->valuestring);
	}

	for (int id = 0; id < NS_NEFF_ENGINE_COUNT; id++)
		read_engine(r, sg, def, (enum ns_neff_engine_id)id);

	/* LNC2 subgraphs are per physical core with the same I/O; list it once. */
	if (!r->neff->tensor_subgraph) {
		r->neff->tensor_subgraph = dup_str(r, sg->name);
		read_subgraph_io(r, sg, def);
	}
	cJSON_Delete(def);
	return NS_OK;
}

static int read_kelf(struct reader *r, const struct ns_neff_member *m)
{
	struct ns_neff *neff = r->neff;
	cJSON *kelf = NULL;
	int rc = parse_member(r, m, true, &kelf);
	if (rc)
		return rc;

	if (!neff->kelf_version && !neff->kelf_target) {
		neff->kelf_version = dup_str(r, get_string(kelf, "version"));
		neff->kelf_target = dup_str(r, get_string(kelf, "target"));
	}
	const cJSON *graphs = cJSON_GetObjectItemCaseSensitive(kelf, "graphs");
	if (!cJSON_IsArray(graphs)) {
		note(r, "%s: no \"graphs\" array", m->name);
		goto out;
	}
	size_t ngraphs = (size_t)cJSON_GetArraySize(graphs);
	if (ngraphs == 0)
		goto out;
	struct ns_neff_subgraph *grown =
		realloc(neff->subgraphs, (neff->subgraph_count + ngraphs) * sizeof(*grown));
	if (!grown) {
		r->nomem = true;
		goto out;
	}
	neff->subgraphs = grown;

	int index = 0;
	const cJSON *graph;
	cJSON_ArrayForEach(graph, graphs) {
		const char *def_name = get_string(graph, "definition");
		const char *name = get_string(graph, "name");
		if (!def_name) {
			note(r, "%s: graphs[%d] has no \"definition\"", m->name, index++);
			continue;
		}
		const struct ns_neff_member *def = ns_neff_find_member(neff, def_name);
		if (!def) {
			rc = ns_error_set(r->err, NS_ERR_INPUT,
					  "%s: member '%s': graphs[%d].definition '%s' is not in the "
					  "archive",
					  neff->path, m->name, index, def_name);
			goto out;
		}
		struct ns_neff_subgraph *sg = &neff->subgraphs[neff->subgraph_count++];
		*sg = (struct ns_neff_subgraph){
			.name = dup_str(r, name ? name : def_name),
			.kelf_member = dup_str(r, m->name),
			.definition = dup_str(r, def_name),
			.var_count = -1,
		};
		if (!sg->name || !sg->kelf_member || !sg->definition)
			goto out;
		rc = read_def(r, sg, def);
		if (rc)
			goto out;
		index++;
	}
out:
	cJSON_Delete(kelf);
	return rc;
}

static void read_info(struct reader *r)
{
	cJSON *info = parse_optional(r, "info.json");
	r->neff->compiler_version = dup_str(r, get_string(info, "tool_version"));
	r->neff->kelp_version = dup_str(r, get_string(info, "kelp_version"));
	if (info && !r->neff->compiler_version)
		note(r, "info.json: no \"tool_version\"");
	cJSON_Delete(info);
}

static void read_hlo_stats(struct reader *r)
{
	struct ns_neff *neff = r->neff;
	cJSON *stats = parse_optional(r, "hlo_stats.json");
	neff->has_hlo_stats = stats != NULL;
	for (int i = 0; stats && i < NS_NEFF_HLO_STAT_COUNT; i++) {
		const char *key = ns_neff_hlo_stat_key((enum ns_neff_hlo_stat)i);
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(stats, key);
		if (cJSON_IsNumber(value)) {
			neff->hlo[i] = value->valuedouble;
			neff->hlo_present[i] = true;
		} else if (value) {
			note(r, "hlo_stats.json: \"%s\" is not a number", key);
		}
	}
	cJSON_Delete(stats);
}

/* neff.json metadata.signatures.default.{inputs,outputs}: model-level I/O;
 * fills in what the subgraph files did not give. */
static void read_neff_json(struct reader *r)
{
	if (!ns_neff_find_member(r->neff, "neff.json"))
		return; /* not in every producer's output; absence is not news */
	r->neff->has_neff_json = true;
	cJSON *doc = parse_optional(r, "neff.json");
	const cJSON *sig = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(doc, "metadata"), "signatures"),
		"default");
	static const char *const lists[] = { [NS_NEFF_INPUT] = "inputs", [NS_NEFF_OUTPUT] = "outputs" };
	for (int kind = NS_NEFF_INPUT; kind <= NS_NEFF_OUTPUT; kind++) {
		const cJSON *entry;
		cJSON_ArrayForEach(entry, cJSON_GetObjectItemCaseSensitive(sig, lists[kind])) {
			if (!entry->string || !cJSON_IsObject(entry))
				continue;
			struct ns_neff_tensor *t = tensor_for(r, entry->string, (enum ns_neff_io)kind);
			if (!t)
				break;
			const cJSON *shape = cJSON_GetObjectItemCaseSensitive(entry, "shape");
			set_dtype_shape(r, t, get_string(entry, "dtype"),
					cJSON_IsArray(shape) ? shape : NULL, "neff.json");
		}
	}
	cJSON_Delete(doc);
}

/* Inputs before outputs, then by var_id (unknown last), then by name. */
static int compare_tensors(const void *pa, const void *pb)
{
	const struct ns_neff_tensor *a = pa, *b = pb;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->var_id != b->var_id) {
		if (a->var_id < 0 || b->var_id < 0)
			return a->var_id < 0 ? 1 : -1;
		return a->var_id < b->var_id ? -1 : 1;
	}
	return strcmp(a->name, b->name);
}

static bool is_kelf_name(const char *name)
{
	size_t len = strlen(name);
	return len > 10 && strncmp(name, "kelf-", 5) == 0 && strcmp(name + len - 5, ".json") == 0 &&
	       !strchr(name, '/');
}

int neff_read_json_members(struct ns_neff *neff, struct ns_error *err)
{
	struct reader r = { .neff = neff, .err = err };
	size_t kelf_count = 0;
	int rc = NS_OK;

	/* kelf names vary ("kelf-0.json", "kelf-a.json"): find them by pattern. */
	for (size_t i = 0; i < neff->member_count && !rc && !r.nomem; i++) {
		const struct ns_neff_member *m = &neff->members[i];
		if (!is_kelf_name(m->name) || ns_neff_find_member(neff, m->name) != m)
			continue;
		kelf_count++;
		rc = read_kelf(&r, m);
	}
	if (rc)
		goto out;
	if (kelf_count == 0) {
		if (!ns_neff_find_member(neff, "neff.json")) {
			rc = ns_error_set(err, NS_ERR_INPUT,
					  "%s: no kelf-*.json or neff.json member among the %zu tar "
					  "members: not a NEFF payload",
					  neff->path, neff->member_count);
			goto out;
		}
		note(&r, "no kelf-*.json member: subgraphs and engines unknown");
	}
	read_info(&r);
	read_hlo_stats(&r);
	read_neff_json(&r);
	ns_sort(neff->tensors, neff->tensor_count, sizeof(*neff->tensors), compare_tensors);
out:
	if (!rc && r.nomem)
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", neff->path);
	return rc;
}
