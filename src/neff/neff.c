/* NEFF: opening, the 1024-byte header, and the names around it. The payload
 * (tar) is read by neff-archive.c, its JSON members by neff-json.c. */
#include "neff/neff.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "neff/neff-format.h"
#include "neff/neff-internal.h"

static const struct {
	const char *key, *name, *alias;
} engine_names[NS_NEFF_ENGINE_COUNT] = {
	[NS_NEFF_PE] = { "pe", "PE", "TensorE" },
	[NS_NEFF_ACT] = { "act", "Activation", "ScalarE" },
	[NS_NEFF_POOL] = { "pool", "Pool", "GpSimd" },
	[NS_NEFF_DVE] = { "dve", "DVE", "VectorE" },
	[NS_NEFF_SP] = { "sp", "SP", "SyncE" },
};

static const char *const hlo_stat_keys[NS_NEFF_HLO_STAT_COUNT] = {
	[NS_NEFF_HLO_MAC_COUNT] = "HloMacCount",
	[NS_NEFF_HLO_TRAFFIC] = "Traffic",
	[NS_NEFF_HLO_ARITHMETIC_INTENSITY] = "ArithmeticIntensity",
	[NS_NEFF_HLO_IFMAP_SIZE] = "IfmapSize",
	[NS_NEFF_HLO_OFMAP_SIZE] = "OfmapSize",
	[NS_NEFF_HLO_CONSTANT_SIZE] = "ConstantSize",
	[NS_NEFF_HLO_ALIASED_OUTPUT_SIZE] = "AliasedOutputSize",
	[NS_NEFF_HLO_INPUT_COUNT] = "HloInputCount",
	[NS_NEFF_HLO_OUTPUT_COUNT] = "HloOutputCount",
	[NS_NEFF_HLO_OUTPUTS_READ_FROM_COUNT] = "OutputsReadFromCount",
	[NS_NEFF_HLO_PASSTHROUGH_TENSORS_COUNT] = "PassthroughTensorsCount",
	[NS_NEFF_HLO_REDUNDANT_OUTPUT_COUNT] = "RedundantOutputCount",
};

const char *ns_neff_engine_key(enum ns_neff_engine_id id)
{
	return engine_names[id].key;
}

const char *ns_neff_engine_name(enum ns_neff_engine_id id)
{
	return engine_names[id].name;
}

const char *ns_neff_engine_alias(enum ns_neff_engine_id id)
{
	return engine_names[id].alias;
}

const char *ns_neff_hlo_stat_key(enum ns_neff_hlo_stat stat)
{
	return hlo_stat_keys[stat];
}

int neff_note(struct ns_neff *neff, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);

	char **grown = realloc(neff->notes, (neff->note_count + 1) * sizeof(*grown));
	if (!grown)
		return NS_ERR_NOMEM;
	neff->notes = grown;
	neff->notes[neff->note_count] = strdup(line);
	if (!neff->notes[neff->note_count])
		return NS_ERR_NOMEM;
	neff->note_count++;
	return NS_OK;
}

int neff_source_read(struct neff_source *src, void *buf, size_t n, struct ns_error *err)
{
	size_t got;

	if (src->file) {
		got = fread(buf, 1, n, src->file);
		if (got < n && ferror(src->file))
			return ns_error_set(err, NS_ERR_IO, "%s: byte %llu: read failed: %s", src->path,
					    (unsigned long long)(src->pos + got), strerror(errno));
	} else {
		got = n <= src->size - src->pos ? n : (size_t)(src->size - src->pos);
		if (got)
			memcpy(buf, src->mem + src->pos, got);
	}
	if (got < n)
		return ns_error_set(err, NS_ERR_IO,
				    "%s: byte %llu: unexpected end of file (did it change while being read?)",
				    src->path, (unsigned long long)(src->pos + got));
	src->pos += n;
	return NS_OK;
}

static uint64_t get_le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;
	for (unsigned i = bytes; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* Copies a fixed-size, NUL-padded field into a NUL-terminated string. */
static void copy_field(char *dst, const uint8_t *field, size_t len)
{
	memcpy(dst, field, len);
	dst[len] = '\0';
}

static void to_hex(char *dst, const uint8_t *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		dst[2 * i] = digits[bytes[i] >> 4];
		dst[2 * i + 1] = digits[bytes[i] & 15];
	}
	dst[2 * n] = '\0';
}

static void decode_header(const uint8_t *raw, struct ns_neff_header *h)
{
	h->pkg_version = get_le(raw + NEFF_OFF_PKG_VERSION, 8);
	h->header_size = get_le(raw + NEFF_OFF_HEADER_SIZE, 8);
	h->data_size = get_le(raw + NEFF_OFF_DATA_SIZE, 8);
	h->version_major = get_le(raw + NEFF_OFF_VERSION_MAJOR, 8);
	h->version_minor = get_le(raw + NEFF_OFF_VERSION_MINOR, 8);
	copy_field(h->build_version, raw + NEFF_OFF_BUILD_VERSION, sizeof(h->build_version) - 1);
	h->num_tpb = (uint32_t)get_le(raw + NEFF_OFF_NUM_TPB, 4);
	memcpy(h->hash, raw + NEFF_OFF_HASH, sizeof(h->hash));
	memcpy(h->uuid, raw + NEFF_OFF_UUID, sizeof(h->uuid));
	copy_field(h->name, raw + NEFF_OFF_NAME, sizeof(h->name) - 1);
	h->requested_tpb_count = (uint32_t)get_le(raw + NEFF_OFF_REQUESTED_TPB, 4);
	memcpy(h->tpb_per_node, raw + NEFF_OFF_TPB_PER_NODE, sizeof(h->tpb_per_node));
	h->feature_bits = get_le(raw + NEFF_OFF_FEATURE_BITS, 8);
	h->lnc_size = (uint32_t)get_le(raw + NEFF_OFF_LNC_SIZE, 4);

	h->pad_nonzero = false;
	for (unsigned i = NEFF_OFF_PAD; i < NEFF_HEADER_SIZE; i++)
		h->pad_nonzero |= raw[i] != 0;

	/* pkg 2 keeps an MD5 in the first half and zeros in the second [RE]. */
	bool second_half_zero = true;
	for (size_t i = 16; i < sizeof(h->hash); i++)
		second_half_zero &= h->hash[i] == 0;
	to_hex(h->hash_hex, h->hash, second_half_zero ? 16 : sizeof(h->hash));

	char u[33];
	to_hex(u, h->uuid, sizeof(h->uuid));
	snprintf(h->uuid_str, sizeof(h->uuid_str), "%.8s-%.4s-%.4s-%.4s-%.12s", u, u + 8, u + 12,
		 u + 16, u + 20);
}

int ns_neff_read_header(const char *path, struct ns_neff_header *h, struct ns_error *err)
{
	uint8_t raw[NEFF_HEADER_SIZE];
	FILE *f = fopen(path, "rb");
	size_t got;
	if (!f)
		return ns_error_set(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
	got = fread(raw, 1, sizeof(raw), f);
	fclose(f);
	if (got < sizeof(raw))
		return ns_error_set(err, NS_ERR_INPUT,
				    "%s: byte %zu: truncated NEFF header: the header needs 1024 bytes", path, got);
	decode_header(raw, h);
	return NS_OK;
}

/* What a file that is not a NEFF looks like, for the hint. */
static const char *guess_file_kind(const char *path, const uint8_t *head, size_t n)
{
	size_t i = 0;
	while (i < n && isspace(head[i]))
		i++;
	if (i < n && (head[i] == '{' || head[i] == '['))
		return "JSON text";
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		return "a gzip file (a NEFF's gzip stream starts at byte 1024)";
	if (n >= 4 && memcmp(head, "PAR1", 4) == 0)
		return "a Parquet file (a Neuron Explorer export)";
	if (n >= 16 && memcmp(head, "SQLite format 3", 16) == 0)
		return "an SQLite database";
	if (n >= TAR_OFF_MAGIC + 5 && memcmp(head + TAR_OFF_MAGIC, "ustar", 5) == 0)
		return "a plain tar archive (a NEFF has a 1024-byte header before its tar)";
	size_t len = strlen(path);
	if ((len >= 5 && strcmp(path + len - 5, ".ntff") == 0) ||
	    (len >= 3 && strcmp(path + len - 3, ".pb") == 0))
		return "a raw Neuron capture file (NTFF / runtime .pb), which is not a NEFF";
	return NULL;
}

/* The structural checks of docs/neff.md "Validation", in order; the
 * first failure wins. head holds the first min(size, 1024) bytes. */
static int check_header(struct ns_neff *neff, const uint8_t *head, size_t head_len,
			struct ns_error *err)
{
	const char *path = neff->path;
	uint64_t size = neff->file_size;
	const struct ns_neff_header *h = &neff->header;
	int rc = NS_OK;

	if (size == 0)
		return ns_error_set(err, NS_ERR_INPUT, "%s: empty file, not a NEFF", path);

	/* No magic number: the first two fields have to look right. */
	if (size < 8) {
		rc = ns_error_set(err, NS_ERR_INPUT, "%s: byte 0: not a NEFF file: only %llu bytes",
				  path, (unsigned long long)size);
	} else if (h->pkg_version < NEFF_PKG_VERSION_MIN || h->pkg_version > NEFF_PKG_VERSION_MAX) {
		rc = ns_error_set(err, NS_ERR_INPUT,
				  "%s: byte 0: not a NEFF file: pkg_version is %llu, expected 1 or 2",
				  path, (unsigned long long)h->pkg_version);
	} else if (size >= 16 && (h->header_size < NEFF_HEADER_SIZE ||
				  h->header_size > NEFF_HEADER_SIZE_MAX)) {
		rc = ns_error_set(err, NS_ERR_INPUT,
				  "%s: byte 8: not a NEFF file: header_size is %llu, expected 1024",
				  path, (unsigned long long)h->header_size);
	}
	if (rc) {
		const char *kind = guess_file_kind(path, head, head_len);
		if (kind)
			ns_error_hint(err, "the file looks like %s", kind);
		return rc;
	}

	if (size < NEFF_HEADER_SIZE)
		return ns_error_set(err, NS_ERR_INPUT,
				    "%s: byte %llu: truncated NEFF header: the file has %llu bytes, "
				    "the header needs 1024",
				    path, (unsigned long long)size, (unsigned long long)size);
	if (h->header_size >= size)
		return ns_error_set(err, NS_ERR_INPUT,
				    "%s: byte 8: header_size %llu is not smaller than the file (%llu bytes)",
				    path, (unsigned long long)h->header_size, (unsigned long long)size);
	if (h->version_major > NEFF_VERSION_MAJOR_MAX)
		return ns_error_set(err, NS_ERR_UNSUPPORTED,
				    "%s: byte 24: NEFF version %llu.%llu is not supported "
				    "(the runtime accepts 0.x-2.x)",
				    path, (unsigned long long)h->version_major,
				    (unsigned long long)h->version_minor);
	if (h->data_size == 0)
		return ns_error_set(err, NS_ERR_INPUT, "%s: byte 16: data_size is 0: no payload", path);
	if (h->data_size > size - h->header_size)
		return ns_error_set(err, NS_ERR_INPUT,
				    "%s: byte 16: data_size %llu runs past the end of the file "
				    "(%llu bytes after the %llu-byte header)",
				    path, (unsigned long long)h->data_size,
				    (unsigned long long)(size - h->header_size),
				    (unsigned long long)h->header_size);

	if (h->header_size != NEFF_HEADER_SIZE)
		rc = neff_note(neff, "header_size is %llu, not 1024; the payload was read from there",
			       (unsigned long long)h->header_size);
	if (!rc && h->pad_nonzero)
		rc = neff_note(neff, "header padding (bytes 0x22c-0x3ff) is not all zero");
	if (!rc && h->version_major == 2 && (h->feature_bits & NEFF_FEATURES_UNSUPPORTED))
		rc = neff_note(neff, "feature_bits 0x%llx has bits in 27-62 set, which runtime 2.31 "
			       "refuses (newer compiler?)", (unsigned long long)h->feature_bits);
	if (!rc && h->data_size < size - h->header_size)
		rc = neff_note(neff, "%llu bytes after header_size + data_size are ignored",
			       (unsigned long long)(size - h->header_size - h->data_size));
	if (rc)
		return ns_error_set(err, rc, "%s: out of memory", path);
	return NS_OK;
}

/* Reads everything from src into a new ns_neff. */
static int load(struct neff_source *src, struct ns_neff **ret, struct ns_error *err)
{
	struct ns_neff *neff = NULL;
	uint8_t head[NEFF_HEADER_SIZE] = { 0 };
	size_t head_len = src->size < sizeof(head) ? (size_t)src->size : sizeof(head);
	int rc;

	neff = calloc(1, sizeof(*neff));
	if (!neff || !(neff->path = strdup(src->path))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", src->path);
		goto out;
	}
	const char *slash = strrchr(neff->path, '/');
	neff->file_name = slash ? slash + 1 : neff->path;
	neff->file_size = src->size;

	rc = neff_source_read(src, head, head_len, err);
	if (rc)
		goto out;
	decode_header(head, &neff->header); /* fields past head_len read as zero */
	rc = check_header(neff, head, head_len, err);
	if (rc)
		goto out;

	/* Skip to the payload when header_size > 1024. */
	for (uint64_t skip = neff->header.header_size - head_len; skip > 0;) {
		size_t n = skip < sizeof(head) ? (size_t)skip : sizeof(head);
		rc = neff_source_read(src, head, n, err);
		if (rc)
			goto out;
		skip -= n;
	}
	rc = neff_read_archive(src, neff, err);
	if (rc)
		goto out;
	rc = neff_read_json_members(neff, err);
	if (rc)
		goto out;

	*ret = neff;
	neff = NULL;
out:
	ns_neff_free(neff);
	return rc;
}

int ns_neff_open(const char *path, struct ns_neff **ret, struct ns_error *err)
{
	struct neff_source src = { .path = path };
	struct stat st;
	int rc;

	src.file = fopen(path, "rb");
	if (!src.file)
		return ns_error_sys(err, NS_ERR_IO, errno, path, "cannot open");
	if (fstat(fileno(src.file), &st) != 0) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = ns_error_set(err, NS_ERR_IO, "%s: not a regular file", path);
		goto out;
	}
	src.size = (uint64_t)st.st_size;
	rc = load(&src, ret, err);
out:
	fclose(src.file);
	return rc;
}

int ns_neff_open_mem(const void *bytes, size_t size, const char *path, struct ns_neff **ret,
		     struct ns_error *err)
{
	struct neff_source src = { .path = path, .mem = bytes, .size = size };
	return load(&src, ret, err);
}

static void free_strings(char **strings, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(strings[i]);
	free(strings);
}

void ns_neff_free(struct ns_neff *neff)
{
	if (!neff)
		return;
	for (size_t i = 0; i < neff->member_count; i++) {
		free(neff->members[i].name);
		free(neff->members[i].data);
	}
	free(neff->members);
	for (size_t i = 0; i < neff->subgraph_count; i++) {
		struct ns_neff_subgraph *sg = &neff->subgraphs[i];
		free(sg->name);
		free(sg->kelf_member);
		free(sg->definition);
		free(sg->def_version);
		free_strings(sg->features, sg->feature_count);
		for (int e = 0; e < NS_NEFF_ENGINE_COUNT; e++) {
			free(sg->engines[e].json_member);
			free(sg->engines[e].bin_member);
		}
	}
	free(neff->subgraphs);
	for (size_t i = 0; i < neff->tensor_count; i++) {
		free(neff->tensors[i].name);
		free(neff->tensors[i].dtype);
		free(neff->tensors[i].shape);
	}
	free(neff->tensors);
	free(neff->tensor_subgraph);
	free(neff->kelf_version);
	free(neff->kelf_target);
	free(neff->compiler_version);
	free(neff->kelp_version);
	free_strings(neff->notes, neff->note_count);
	free(neff->path);
	free(neff);
}

const struct ns_neff_member *ns_neff_find_member(const struct ns_neff *neff, const char *name)
{
	/* Like tar extraction, a later member of the same name wins. */
	for (size_t i = neff->member_count; i-- > 0;)
		if (strcmp(neff->members[i].name, name) == 0)
			return &neff->members[i];
	return NULL;
}

/* Length of the run of bytes at s accepted by is_ok (isdigit, isalnum). */
static size_t span(const char *s, int (*is_ok)(int))
{
	size_t n = 0;
	while (s[n] && is_ok((unsigned char)s[n]))
		n++;
	return n;
}

bool ns_neff_parse_filename(const char *name, struct ns_neff_filename *ret)
{
	struct ns_neff_filename parsed = { .vnc = -1 };
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	size_t len = strlen(base);

	if (len < 5 || strcmp(base + len - 5, ".neff") != 0)
		return false;
	len -= 5;

	const char *hash;
	size_t hash_len;
	if (len > 5 && strncmp(base, "neff_", 5) == 0) {
		hash = base + 5;
		hash_len = span(hash, isdigit);
		const char *rest = hash + hash_len;
		size_t rest_len = len - 5 - hash_len;
		if (rest_len > 5 && strncmp(rest, "_vnc_", 5) == 0) {
			size_t vnc_len = span(rest + 5, isdigit);
			if (vnc_len != rest_len - 5 || vnc_len > 9)
				return false;
			parsed.vnc = strtoll(rest + 5, NULL, 10);
		} else if (rest_len != 0) {
			return false;
		}
	} else if (len > 6 && strncmp(base, "graph_", 6) == 0) {
		hash = base + 6;
		hash_len = span(hash, isalnum);
		if (hash_len != len - 6)
			return false;
		parsed.vllm = true;
	} else {
		return false;
	}
	if (hash_len == 0 || hash_len >= sizeof(parsed.hash))
		return false;
	memcpy(parsed.hash, hash, hash_len);
	parsed.hash[hash_len] = '\0';
	*ret = parsed;
	return true;
}

size_t ns_neff_hash_normalize(const char *s, size_t len, char *out, size_t n)
{
	char name[512];
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && len <= 18) {
		uint64_t v = 0;
		size_t i = 2;
		for (; i < len && isxdigit((unsigned char)s[i]); i++)
			v = v * 16 + (uint64_t)(isdigit((unsigned char)s[i]) ? s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10));
		if (i == len) {
			snprintf(out, n, "%llu", (unsigned long long)v);
			return strlen(out);
		}
	}
	snprintf(name, sizeof(name), "%.*s", (int)len, s);
	if (len < sizeof(name) && ns_neff_hash_from_filename(name, out, n) > 0)
		return strlen(out);
	snprintf(out, n, "%.*s", (int)len, s);
	return strlen(out);
}

int ns_neff_hash_from_filename(const char *name, char *out, size_t n)
{
	struct ns_neff_filename parsed;
	if (!ns_neff_parse_filename(name, &parsed))
		return 0;
	size_t len = strlen(parsed.hash);
	if (len >= n)
		return -1;
	memcpy(out, parsed.hash, len + 1);
	return (int)len;
}
