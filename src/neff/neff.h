/* NEFF (Neuron Executable File Format) reader: the compiled model that a
 * Neuron device profile belongs to. A NEFF is a 1024-byte little-endian
 * header followed by a (usually gzip'd) tar of JSON and binary members;
 * docs/neff.md says what is read from where and what is checked.
 *
 * Library rules: nothing here prints to stdout/stderr or exits. Errors come
 * back as an ns_status with err->msg naming the file and the byte offset
 * ("x.neff: byte 16: ...") or the tar member ("x.neff: member 'sg00/def.json':
 * ..."). Damage in the JSON *contents* (a missing key, a wrong type) is not
 * an error: it is recorded in ns_neff.notes and the field stays unknown. */
#ifndef NS_NEFF_H
#define NS_NEFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Engine order is the runtime's engine index (pe=0 act=1 pool=2 dve=3 sp=4). */
enum ns_neff_engine_id {
	NS_NEFF_PE,
	NS_NEFF_ACT,
	NS_NEFF_POOL,
	NS_NEFF_DVE,
	NS_NEFF_SP,
	NS_NEFF_ENGINE_COUNT
};

/* Keys of hlo_stats.json, in the order they are printed. */
enum ns_neff_hlo_stat {
	NS_NEFF_HLO_MAC_COUNT,
	NS_NEFF_HLO_TRAFFIC,
	NS_NEFF_HLO_ARITHMETIC_INTENSITY,
	NS_NEFF_HLO_IFMAP_SIZE,
	NS_NEFF_HLO_OFMAP_SIZE,
	NS_NEFF_HLO_CONSTANT_SIZE,
	NS_NEFF_HLO_ALIASED_OUTPUT_SIZE,
	NS_NEFF_HLO_INPUT_COUNT,
	NS_NEFF_HLO_OUTPUT_COUNT,
	NS_NEFF_HLO_OUTPUTS_READ_FROM_COUNT,
	NS_NEFF_HLO_PASSTHROUGH_TENSORS_COUNT,
	NS_NEFF_HLO_REDUNDANT_OUTPUT_COUNT,
	NS_NEFF_HLO_STAT_COUNT
};

enum ns_neff_payload {
	NS_NEFF_PAYLOAD_GZIP_TAR, /* 1F 8B at the payload start (all real files) */
	NS_NEFF_PAYLOAD_TAR,      /* "ustar" at payload + 257 */
};

/* The 1024-byte header, decoded field by field (names as in the official
 * neff_header_t). Strings are NUL-terminated copies of fixed-size fields. */
struct ns_neff_header {
	uint64_t pkg_version;         /* 0x000: 1 or 2, selects the payload encoding */
	uint64_t header_size;         /* 0x008: 1024 in every known file */
	uint64_t data_size;           /* 0x010: payload bytes after the header, incl. zero padding */
	uint64_t version_major;       /* 0x018: NEFF format version, <= 2 */
	uint64_t version_minor;       /* 0x020 */
	char build_version[129];      /* 0x028: free text, empty in real nkipy files */
	uint32_t num_tpb;             /* 0x0A8: "unused_0"/"gzip flag" per RE; 1 in all samples */
	uint8_t hash[32];             /* 0x0AC: opaque; real files match no digest */
	char hash_hex[65];            /* hash as hex: 32 digits when bytes 16..31 are 0, else 64 */
	uint8_t uuid[16];             /* 0x0CC */
	char uuid_str[37];            /* 8-4-4-4-12 form */
	char name[257];               /* 0x0DC */
	uint32_t requested_tpb_count; /* 0x1DC */
	uint8_t tpb_per_node[64];     /* 0x1E0: one byte per kelf node */
	uint64_t feature_bits;        /* 0x220: incompatible-feature bits; names not public */
	uint32_t lnc_size;            /* 0x228: logical NeuronCore size ("vnc_size" in RE) */
	bool pad_nonzero;             /* 0x22C..0x3FF should be zero */
};

struct ns_neff_member {
	char *name;        /* tar path with a leading "./" removed; a lookup key, never a file path */
	uint64_t offset;   /* of the member's data in the (inflated) tar */
	uint64_t size;
	char *data;        /* contents + NUL for *.json members within the limits, else NULL */
};

struct ns_neff_engine {
	bool listed;             /* def.json names the engine (JSON or binary) */
	char *json_member;       /* engine JSON, e.g. "sg00/PE.json"; NULL if not named */
	char *bin_member;        /* engine binary, e.g. "sg00/PE.bin"; NULL if not named */
	bool bin_present;        /* bin_member is in the archive */
	uint64_t bin_size;       /* bytes; 0 when absent */
	uint64_t instructions;   /* bin_size / 64 (sequencer slots) */
	int64_t dma_count;       /* entries of the engine JSON "dma" array; -1 unknown */
};

struct ns_neff_subgraph {
	char *name;              /* kelf graphs[].name, e.g. "sg00" */
	char *kelf_member;       /* the kelf-*.json that lists it */
	char *definition;        /* its def.json member, e.g. "sg00/def.json" */
	char *def_version;       /* def.json "version"; NULL if absent */
	char **features;         /* def.json "neff_features" */
	size_t feature_count;
	int64_t var_count;       /* entries of def.json "var"; -1 unknown */
	struct ns_neff_engine engines[NS_NEFF_ENGINE_COUNT];
};

enum ns_neff_io { NS_NEFF_INPUT, NS_NEFF_OUTPUT };

struct ns_neff_tensor {
	char *name;
	enum ns_neff_io kind;
	char *dtype;             /* NULL if unknown */
	int64_t *shape;          /* NULL and rank 0 if unknown */
	size_t rank;
	bool shape_known;        /* also true for a known scalar (rank 0) */
	uint64_t size;           /* bytes, from def.json var.<name>.size */
	bool size_known;
	int64_t var_id;          /* def.json var_id; -1 unknown */
};

struct ns_neff {
	char *path;              /* as given to ns_neff_open() */
	const char *file_name;   /* last component of path */
	uint64_t file_size;
	struct ns_neff_header header;

	enum ns_neff_payload payload;
	uint64_t compressed_size; /* gzip stream bytes (= tar_size for a raw tar) */
	uint64_t padding_size;    /* data_size - compressed_size (zeros in real files) */
	uint64_t tar_size;        /* bytes of tar stream read, end-of-archive blocks included */

	struct ns_neff_member *members; /* in archive order */
	size_t member_count;

	char *kelf_version, *kelf_target;          /* from the first kelf-*.json */
	char *compiler_version, *kelp_version;     /* info.json tool_version, kelp_version */
	bool has_neff_json;

	struct ns_neff_subgraph *subgraphs;        /* in kelf order */
	size_t subgraph_count;

	struct ns_neff_tensor *tensors;            /* inputs, then outputs, by var_id */
	size_t tensor_count;
	char *tensor_subgraph;                     /* subgraph the I/O list was read from */

	bool has_hlo_stats;
	double hlo[NS_NEFF_HLO_STAT_COUNT];
	bool hlo_present[NS_NEFF_HLO_STAT_COUNT];

	char **notes;            /* what was absent or odd, one line each */
	size_t note_count;
};

/* Reads and validates a NEFF. On success *ret owns a new ns_neff (free with
 * ns_neff_free()); on failure *ret is untouched and err says why. */
int ns_neff_open(const char *path, struct ns_neff **ret, struct ns_error *err);
/* Same, from bytes in memory; path is only used in messages. */
int ns_neff_open_mem(const void *bytes, size_t size, const char *path, struct ns_neff **ret,
		     struct ns_error *err);
void ns_neff_free(struct ns_neff *neff);
/* Decodes only the 1024-byte header of the NEFF at path (no payload read,
 * no validation beyond the file holding a whole header): what a caller
 * needs for lnc_size without inflating the tar. */
int ns_neff_read_header(const char *path, struct ns_neff_header *h, struct ns_error *err);

/* The last member with that exact name, or NULL. */
const struct ns_neff_member *ns_neff_find_member(const struct ns_neff *neff, const char *name);

const char *ns_neff_engine_key(enum ns_neff_engine_id id);   /* "pe", "act", ... (def.json keys) */
const char *ns_neff_engine_name(enum ns_neff_engine_id id);  /* "PE", "Activation", ... */
const char *ns_neff_engine_alias(enum ns_neff_engine_id id); /* "TensorE", "ScalarE", ... */
const char *ns_neff_hlo_stat_key(enum ns_neff_hlo_stat stat); /* "HloMacCount", ... */

/* Runtime capture names (docs §2.2): "neff_<hash>.neff" (model mode),
 * "neff_<hash>_vnc_<N>.neff" (session mode, hash decimal) and
 * "graph_<hash>.neff" (vLLM, hash alphanumeric). name may be a path. */
struct ns_neff_filename {
	char hash[65];
	int64_t vnc;             /* -1 when the name has no _vnc_<N> */
	bool vllm;               /* graph_<hash>.neff */
};
/* Returns true and fills *ret when name follows one of the patterns. */
bool ns_neff_parse_filename(const char *name, struct ns_neff_filename *ret);
/* Copies the hash part of such a name into out. Returns the hash length
 * (> 0), 0 when the name follows none of the patterns, or -1 when out
 * (n bytes, NUL included) is too small. */
int ns_neff_hash_from_filename(const char *name, char *out, size_t n);
/* The NEFF hash in the form capture file names use: decimal digits. A
 * "0x"-prefixed hex value of up to 16 digits becomes its decimal u64; a
 * NEFF file name or path (neff_<hash>[_vnc_<N>].neff, graph_<hash>.neff)
 * becomes its hash; anything else is kept as written, trimmed. Returns the
 * length written to out (NUL-terminated), 0 for an empty value. */
size_t ns_neff_hash_normalize(const char *s, size_t len, char *out, size_t n);

#endif
