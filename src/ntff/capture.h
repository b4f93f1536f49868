/* Neuron capture directories (docs/neuron.md "Capture directories"): which
 * files a profiling run left, grouped per process ("rank"), and how NEFFs
 * pair with NTFFs and with exports by hash. Files are classified by name; a
 * *.json is classified by a sniff of its first bytes. Nothing is decoded
 * here: raw .ntff/.pb files are only named and sized. */
#ifndef NS_NTFF_CAPTURE_H
#define NS_NTFF_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

enum ns_cap_kind {
	NS_CAP_TRACE = 0,    /* Kineto trace.json (framework trace) */
	NS_CAP_NEFF,         /* compiled model */
	NS_CAP_NTFF,         /* raw device trace (not decoded) */
	NS_CAP_PB,           /* ntrace.pb, trace_info.pb, cpu_util.pb, host_mem.pb (not decoded) */
	NS_CAP_SYSTEM_JSON,  /* system-profile export (or nrt_sys_trace_fetch_events JSON) */
	NS_CAP_DEVICE_JSON,  /* legacy device-profile export (--output-format json) */
	NS_CAP_SUMMARY_JSON, /* --output-format summary-json */
	NS_CAP_PARQUET,      /* Explorer's Parquet tables (not read) */
	NS_CAP_PERFETTO,     /* *.pftrace (not read) */
	NS_CAP__COUNT
};

/* The NTFF file-name families of neuron-formats.md §2.1/§2.2. */
enum ns_ntff_naming {
	NS_NTFF_SESSION = 0, /* profile_nc_<N>_session_<S>.ntff */
	NS_NTFF_MODEL,       /* <hash>_instid_<i>_vnc_<N>.ntff */
	NS_NTFF_CLI,         /* profile.ntff, profile_rank_<r>.ntff, profile_exec_<n>.ntff */
	NS_NTFF_CONTINUOUS,  /* model_<id>_pid_<pid>_vnc_<N>_inst_<...>.ntff */
	NS_NTFF_OTHER,
};

/* The four .pb files of the runtime (§3.2). */
enum ns_pb_role { NS_PB_NTRACE = 0, NS_PB_TRACE_INFO, NS_PB_CPU_UTIL, NS_PB_HOST_MEM, NS_PB_OTHER };

struct ns_cap_file {
	char *path;          /* as found below the scanned root */
	const char *name;    /* last component of path */
	enum ns_cap_kind kind;
	uint64_t size;
	char hash[65];       /* NEFF/NTFF/export hash from the name, normalized; "" if none */
	char stem[256];      /* NTFF: name without ".ntff"; export: the NTFF stem it names; else "" */
	int64_t nc;          /* NEFF vnc, NTFF nc/vnc, export nc; -1 if the name has none */
	int64_t session;     /* NTFF/export session number, -1 */
	int64_t instid;      /* model-mode NTFF instance id, -1 */
	int64_t cli_rank;    /* profile_rank_<r>.ntff, -1 */
	int64_t exec;        /* profile_exec_<n>.ntff, -1 */
	int64_t model_id;    /* export: device_profile_model_<id>.json, -1 */
	char instance[128];  /* export: "<instance>_pid_<pid>_nc_..." in its name, "" */
	int64_t pid;         /* export: the pid of that name, -1 */
	uint8_t naming;      /* NTFF: enum ns_ntff_naming; PB: enum ns_pb_role */
	bool shared;         /* NEFF from a neffs/ folder (vLLM): a candidate for every unit beside it */
	bool converted;      /* export found in the conversion cache, not in the capture */
	bool split;          /* system export of a folder above several process folders: it covers them
				all, and each process takes the events of its own pid (docs/neuron.md) */
};

struct ns_cap_pair {
	size_t neff, ntff;       /* indexes into the unit's files */
	int64_t device_json;     /* the device export of this pair, or -1 */
	int64_t summary_json;    /* the summary-json export of this pair, or -1 */
};

enum ns_cap_gap_kind {
	NS_GAP_NO_TRACE = 0,     /* no framework trace.json */
	NS_GAP_NTFF_NO_NEFF,     /* file: an NTFF whose NEFF is not there */
	NS_GAP_NEFF_NO_NTFF,     /* file: a NEFF without a device trace (informational) */
	NS_GAP_PAIR_NO_DEVICE,   /* pair: no device-profile JSON export yet */
	NS_GAP_PAIR_NO_SUMMARY,  /* pair: no summary-json export yet */
	NS_GAP_PB_NO_EXPORT,     /* file: ntrace.pb without a system-profile export yet */
	NS_GAP_NO_TRACE_INFO,    /* file: ntrace.pb without trace_info.pb */
	NS_GAP_NO_NTRACE,        /* file: trace_info.pb without ntrace.pb */
	NS_GAP_EXPORT_UNPAIRED,  /* file: a device/summary export that names no NTFF found here */
	NS_GAP_NTFF_EMPTY,       /* file: a 0-byte NTFF (never paired: nothing to convert) */
	NS_GAP_EXPORT_MODEL_ID,  /* file: device_profile_model_<id>.json whose NEFF nothing here names */
};

struct ns_cap_gap {
	enum ns_cap_gap_kind kind;
	int64_t file;            /* index into files, or -1 */
	int64_t pair;            /* index into pairs, or -1 */
};

/* One folder holding capture files: a process ("rank") of a session. */
struct ns_cap_unit {
	char *dir;               /* path of the folder */
	char *export_dir;        /* its folder in the conversion cache (NULL without opts.export_root) */
	char instance[128];      /* from "<instance>_pid_<pid>" (or "-"), "" if unknown */
	int64_t pid;             /* -1 if unknown */
	char session[64];        /* a timestamp folder name ("1776672348756756905"), "" if none */
	int64_t rank;            /* distributedInfo.rank of its trace.json, -1 if unknown */
	struct ns_cap_file *files;
	size_t n_files;
	struct ns_cap_pair *pairs;
	size_t n_pairs;
	struct ns_cap_gap *gaps;
	size_t n_gaps;
	int64_t trace;           /* index of the framework trace, -1 */
	int64_t system_json;     /* index of the system-profile export, -1 */
};

struct ns_capture {
	char *root;
	struct ns_cap_unit *units; /* sorted by dir */
	size_t n_units;
};

struct ns_capture_opts {
	/* Exports converted earlier live in <export_root>/<ns_capture_key(dir)>/
	 * and count as found (NULL: no such folder). */
	const char *export_root;
	bool shallow;            /* only the folder itself, not its subfolders */
};

/* Scans path (a directory, walked to a bounded depth, or one file) into
 * *out. A folder without capture files is not a unit; no unit at all is
 * not an error (n_units == 0). Free with ns_capture_free. */
int ns_capture_scan(const char *path, const struct ns_capture_opts *o, struct ns_capture **out,
		    struct ns_error *err);
void ns_capture_free(struct ns_capture *c);

/* *found: the unit whose folder is dir (compared by realpath), or NULL.
 * Fails only when out of memory. */
int ns_capture_find(const struct ns_capture *c, const char *dir, const struct ns_cap_unit **found,
		    struct ns_error *err);

/* A device_profile_model_<id>.json export whose NEFF nothing here names
 * (NS_GAP_EXPORT_MODEL_ID): the public docs tie a model id to no NEFF file
 * (DeviceProfileList has model_id, nc_id and device_profile_name only), so
 * it is not used. Writes the NEFFs it may belong to (those of pairs without
 * a device export), ", "-separated, into out ("" when none); and, with err,
 * the whole message (NS_ERR_UNSUPPORTED, returned). */
int ns_capture_model_export_gap(const struct ns_cap_unit *u, size_t file, char *out, size_t n,
				struct ns_error *err);

/* Classifies one file by its name (and, for *.json, its keys): 1 for a
 * capture file, 0 for a file that is not one (or cannot be read), -1 when
 * out of memory (err, if not NULL, set to NS_ERR_NOMEM). */
int ns_capture_classify(const char *path, struct ns_cap_file *f, struct ns_error *err);

/* The folder part of path ("." when it has none). Caller frees; NULL on OOM. */
char *ns_capture_folder(const char *path);

/* 16 hex digits naming dir (by its realpath) in a conversion cache. */
void ns_capture_key(const char *dir, char out[17]);

const char *ns_cap_kind_name(enum ns_cap_kind k);

#endif
