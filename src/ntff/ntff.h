/* Neuron device profiles (docs/neuron.md): raw NTFF/.pb files are only
 * identified (their format is not public and is never decoded here); the
 * JSON exports neuron-explorer writes from them are read, streaming:
 *   - the legacy device-profile JSON (--output-format json with -n/-s),
 *   - summary-json,
 *   - the system-profile JSON (and the nrt_sys_trace_fetch_events form),
 * and the system profile's hardware intervals become device events of the
 * ns_trace model, so aggregate.c attributes them like any kernel.
 *
 * Library rules: nothing here prints or exits. Structural damage (not JSON,
 * not an object) is an error naming the file and byte offset; a truncated
 * file keeps what came before (truncated_at >= 0); a missing key or a value
 * of the wrong type is a note and the value stays unknown. */
#ifndef NS_NTFF_H
#define NS_NTFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/strtab.h"
#include "common/trace.h"
#include "ntff/capture.h"

/* ---- units and engines ---- */

enum ns_time_unit { NS_TU_AUTO = 0, NS_TU_NS, NS_TU_US, NS_TU_MS, NS_TU_S };

/* "ns", "us", "ms", "s" -> the unit; NS_TU_AUTO for anything else. */
enum ns_time_unit ns_time_unit_parse(const char *s);
const char *ns_time_unit_name(enum ns_time_unit u);

/* The NeuronCore engines an --engines column is kept for. */
enum ns_engine { NS_ENG_PE = 0, NS_ENG_ACT, NS_ENG_DVE, NS_ENG_POOL, NS_ENG_SP, NS_ENG_DMA, NS_ENG__COUNT };

const char *ns_engine_name(enum ns_engine e);  /* "PE", "ACT", "DVE", "POOL", "SP", "DMA" */
const char *ns_engine_alias(enum ns_engine e); /* "TensorE", "ScalarE", "VectorE", "GpSimd", "SyncE", "DMA" */
/* An engine or track label as exports write it ("tensor", "TensorMatrix",
 * "pe", "Activation", "gpsimd", "qSyncIO", ...) -> the engine, or
 * NS_ENG__COUNT when unknown. */
enum ns_engine ns_engine_from_label(const char *s, size_t len);

/* One flat key/value of an export (numbers keep their text too). */
struct ns_kv {
	char *key;
	char *text;      /* the value as written (strings unescaped) */
	double num;
	bool is_num;     /* a JSON number, or a string holding one */
};

/* Notes on field-level damage: the first NS_NOTES_KEPT, and a count. */
#define NS_NOTES_KEPT 20
struct ns_notes {
	char *v[NS_NOTES_KEPT];
	size_t n;
	uint64_t total;
};

/* ---- raw files ---- */

struct ns_raw_info {
	enum ns_cap_kind kind;     /* NS_CAP_NTFF or NS_CAP_PB */
	uint64_t size;
	unsigned char head[16];    /* first bytes, for the listing */
	size_t head_len;
	const char *looks_like;    /* non-NULL when the content is something else ("JSON", "gzip", "Parquet") */
	bool too_small;            /* an NTFF under its 128-byte header */
};

/* Identifies a raw capture file by name and size (never decodes it). */
int ns_ntff_identify(const char *path, struct ns_raw_info *out, struct ns_error *err);

/* ---- legacy device-profile JSON ---- */

struct ns_span { int64_t start, end; };

/* --device-detail: instruction time grouped by one field of the
 * instruction rows (docs/neuron.md "Device detail"): the HLO op
 * (hlo_name), the framework layer (layer), the opcode (opcode). */
enum ns_detail { NS_DETAIL_HLO = 0, NS_DETAIL_LAYER, NS_DETAIL_OPCODE, NS_DETAIL__COUNT };

const char *ns_detail_name(enum ns_detail k);  /* "hlo", "layer", "opcode" */
const char *ns_detail_field(enum ns_detail k); /* "hlo_name", "layer", "opcode" */
/* "hlo", "layer", "opcode" -> the key; NS_DETAIL__COUNT for anything else. */
enum ns_detail ns_detail_parse(const char *s);

/* One group: the instructions whose field is `name` ("" when they have
 * none), how many, and their durations added (ns). */
struct ns_detail_row {
	ns_str name;                 /* into ns_devprof.detail_names */
	uint64_t count;
	int64_t total_ns;
};

/* The per-NEFF figures of the device profile's Summary that the report
 * shows (docs/neuron.md "NEFF summary"); absent ones stay unset. */
enum ns_metric { NS_MET_TOTAL_TIME = 0, NS_MET_MFU, NS_MET_MBU, NS_MET_HBM_READ, NS_MET_HBM_WRITE,
		 NS_MET_SPILL_SAVE, NS_MET_SPILL_RELOAD, NS_MET_THROTTLE, NS_MET__COUNT };

struct ns_metric_info {
	const char *name;            /* report column: "total_time_us", "mfu_percent", ... */
	const char *column;          /* neff_summary column (docs/schema.md): "total_time_ns", ... */
	const char *head;            /* table heading */
	char kind;                   /* 't' ns (shown as us), 'p' percent, 'b' bytes */
};
extern const struct ns_metric_info ns_metrics[NS_MET__COUNT];

struct ns_neff_metrics {
	double v[NS_MET__COUNT];     /* 't': ns; 'p': 0-100; 'b': bytes */
	bool has[NS_MET__COUNT];
};

struct ns_devprof;
/* One device profile of a trace's capture for --device-detail and the
 * store: the NEFF it ran and the core. */
struct ns_detail_neff {
	const struct ns_devprof *dp;
	const char *neff;            /* "" if unknown */
	int64_t nc;                  /* -1 if unknown */
	struct ns_neff_metrics m;
};

/* One instruction (or dma) row of a device profile: its duration, the
 * engine it ran on (NS_ENG__COUNT: an unknown label) and its opcode. */
struct ns_dp_instr {
	int64_t dur_ns;
	ns_str opcode;               /* into ns_devprof.detail_names ("" for none, and for dma rows) */
	uint8_t engine;              /* enum ns_engine */
	bool dma;                    /* a row of the dma array (else of instruction) */
};

enum ns_engine_src { NS_ESRC_NONE = 0, NS_ESRC_ACTIVE_TIME, NS_ESRC_INSTRUCTION, NS_ESRC_DMA };

struct ns_devprof {
	char *path;
	enum ns_time_unit unit;      /* of its timestamps */
	char unit_why[160];          /* how the unit was chosen */
	int64_t origin_ns;           /* metadata first_hw_timestamp added to relative timestamps, or 0 */
	struct ns_kv *summary;       /* summary[0] */
	size_t n_summary;
	struct ns_kv *metadata;      /* metadata[0] */
	size_t n_metadata;
	char ntff_filename[256];     /* profile_info */
	char neff_hash[65];          /* profile_info neff hash / name, normalized */
	uint64_t count[8];           /* elements of: instruction, dma, active_time, layer_summary,
					summary, metadata, profile_info, other arrays */
	/* busy intervals per engine, merged, in ns on the device clock */
	struct ns_span *busy[NS_ENG__COUNT];
	size_t n_busy[NS_ENG__COUNT];
	enum ns_engine_src busy_src[NS_ENG__COUNT];
	uint64_t unknown_engine;     /* intervals whose engine label is unknown */
	int64_t first_ns, last_ns;   /* over all busy intervals (NS_NONE if none) */
	char **unknown_keys;         /* top-level keys not interpreted */
	size_t n_unknown_keys;
	struct ns_notes notes;
	struct ns_notes explorer_warnings; /* the export's own "warnings" (dropped events, ...) */
	int64_t truncated_at;        /* -1, or the byte where the file was cut */
	/* instruction time by hlo_name / layer / opcode, most time first */
	struct ns_strtab detail_names;
	struct ns_detail_row *detail[NS_DETAIL__COUNT];
	size_t n_detail[NS_DETAIL__COUNT];
	uint64_t n_instructions;     /* instruction rows with a usable duration */
	struct ns_dp_instr *instr;   /* the instruction and dma rows with a duration in the ns range, file order */
	size_t n_instr;
	int64_t instruction_ns;      /* their durations added */
	/* throttle_summary (Parquet ThrottleSummary): the longest throttle_active_time_ns
	 * of a row of throttle_type "all" (or without a type); NS_NONE if none */
	int64_t throttle_ns;
};

enum { NS_DP_INSTRUCTION = 0, NS_DP_DMA, NS_DP_ACTIVE_TIME, NS_DP_LAYER, NS_DP_SUMMARY, NS_DP_METADATA,
       NS_DP_PROFILE_INFO, NS_DP_OTHER };

/* unit: NS_TU_AUTO detects it (docs/neuron.md "Time units"). */
int ns_devprof_read(const char *path, enum ns_time_unit unit, struct ns_devprof **out, struct ns_error *err);
void ns_devprof_free(struct ns_devprof *dp);

struct ns_summary;
struct ns_summary_node;
/* The NEFF summary figures of a device profile: its summary[0] (JSON
 * "summary", Parquet Summary), then what it lacks from the pair's
 * summary-json node sn (optional). Percents follow the fraction rule of
 * summary-json, applied to summary[0]'s own *_percent values. */
void ns_devprof_metrics(const struct ns_devprof *dp, const struct ns_summary *s, const struct ns_summary_node *sn,
			struct ns_neff_metrics *out);

/* ---- summary-json ---- */

struct ns_summary_node {
	char id[96];                 /* "n_<hex>" (device) or "s_<hex>" (system) */
	struct ns_kv *kv;
	size_t n_kv;
};

struct ns_summary {
	char *path;
	struct ns_summary_node *nodes;
	size_t n_nodes;
	bool percent_is_fraction;    /* every *_percent value was <= 1 */
	struct ns_notes notes;
	int64_t truncated_at;
};

int ns_summary_read(const char *path, struct ns_summary **out, struct ns_error *err);
void ns_summary_free(struct ns_summary *s);
/* A time key of a node in ns (keys ending in _ns are ns, other *_time keys
 * seconds). False if absent or not a number. */
bool ns_summary_time_ns(const struct ns_summary_node *n, const char *key, int64_t *out);
/* A *_percent key on the 0-100 scale. */
bool ns_summary_percent(const struct ns_summary *s, const struct ns_summary_node *n, const char *key, double *out);
/* The engine's *_active_time key ("tensor_engine_active_time", ..., "dma_active_time"). */
const char *ns_summary_engine_key(enum ns_engine e);

/* ---- system-profile JSON ---- */

/* neuron-explorer's own "warnings" of an export, one per entry (docs/neuron.md
 * "Explorer's warnings"); the first NS_XWARN_KEPT are kept, all counted. */
#define NS_XWARN_KEPT 10000
struct ns_xwarn {
	char *category;              /* "" when none */
	char *message;
	uint64_t offset;             /* byte offset of the entry in the file */
};
struct ns_xwarnings {
	struct ns_xwarn *v;
	size_t n, cap;
	uint64_t total;
};

enum ns_sys_source { NS_SYS_FRAMEWORK = 0, NS_SYS_RUNTIME, NS_SYS_HARDWARE };
enum ns_sys_phase { NS_SYS_COMPLETE = 0, NS_SYS_START, NS_SYS_STOP, NS_SYS_INSTANT };

/* One kept system event. Times are ns; NS_NONE when absent. */
struct ns_sys_event {
	int64_t ts, dur;             /* host clock (epoch ns) */
	int64_t nc_ts, cpu_ts;       /* a sync sample: device-clock ns and host ns of one moment */
	int64_t id, parent_id, exec_id, tracking_id, nc, pid, tid, seq;
	int64_t correlation, external_id;
	int64_t pcore;               /* pcore_idx: physical core within the logical one (LNC2: 0/1) */
	uint32_t flows_off, n_flows; /* into ns_sysprof.flows */
	ns_str name, neff, label;    /* label: model_name */
	ns_str instance;             /* instance_id, 0 if absent */
	uint8_t source;              /* enum ns_sys_source */
	uint8_t phase;               /* enum ns_sys_phase */
	uint64_t offset;             /* byte offset of the event in the file */
};

struct ns_sysprof {
	char *path;
	struct ns_strtab strings;
	struct ns_sys_event *ev;     /* kept events, file order */
	size_t n_ev, cap_ev;
	int64_t *flows;
	size_t n_flows, cap_flows;
	enum ns_time_unit unit;
	char unit_why[160];
	struct ns_kv *metadata;      /* system_profile_metadata[0] */
	size_t n_metadata;
	uint64_t n_device_profiles;  /* device_profile_list entries */
	/* Logical NeuronCore size of the run (1, 2), 0 when unknown. Not in
	 * the JSON: the caller sets it from the NEFF headers' lnc_size before
	 * ns_sysprof_attach, which otherwise infers it from pcore_idx. */
	uint32_t lnc_size;
	uint64_t n_events;           /* every event read */
	uint64_t n_source[3];        /* by enum ns_sys_source, every event read */
	char **unknown_keys;
	size_t n_unknown_keys;
	struct ns_notes notes;
	struct ns_notes explorer_warnings; /* the export's own "warnings" (dropped events, ring overwrites) */
	struct ns_xwarnings xwarn;   /* the same, as (category, message), for the database */
	int64_t truncated_at;
	/* ns_sysprof_keep_process: the events of other processes dropped */
	uint64_t n_other_process;    /* kept events of another process */
	uint64_t n_no_process;       /* kept events without a process_id */
};

int ns_sysprof_read(const char *path, struct ns_sysprof **out, struct ns_error *err);
void ns_sysprof_free(struct ns_sysprof *sp);
/* Keeps only the events of one process: process_id == pid, and instance_id
 * == instance when both are known (an export of a whole capture folder
 * covers every process: docs/neuron.md "Capture directories"). Events
 * without a process_id are dropped too; both counts are recorded. */
void ns_sysprof_keep_process(struct ns_sysprof *sp, const char *instance, int64_t pid);

/* ---- correlation: system profile -> device events of a trace ---- */

struct ns_attach_stats {
	uint64_t intervals;          /* hardware execution intervals built */
	uint64_t unpaired;           /* start/stop halves without their other half */
	uint64_t by_ids;             /* launcher carried correlation / External id */
	uint64_t by_time;            /* launcher matched a trace event by name and time */
	uint64_t unlinked;           /* added without a launching op */
	/* LNC2: one execution of a logical core shows once per physical core;
	 * the copies are folded into one interval (docs/neuron.md "LNC"). */
	uint32_t lnc_size;           /* the size applied */
	const char *lnc_from;        /* where it came from (static text) */
	/* Without flow ids the launchers are matched to trace.json by name and
	 * host time; a skew between the two host clocks is measured and
	 * removed first (docs/neuron.md "Clock skew"). */
	int64_t skew_ns;             /* added to system-profile host times to match trace.json */
	uint64_t skew_votes;         /* launchers that agree with that offset (0: none measured) */
	uint64_t skew_candidates;    /* launchers with a same-name trace event nearby */
	uint64_t hw_intervals;       /* hardware intervals before folding */
	uint64_t folded;             /* intervals folded into another physical core's */
};

/* Appends one NS_CAT_KERNEL event per hardware interval (nc_exec_running)
 * to t, linked to the op that launched it (docs/neuron.md "Correlation").
 * Their idx continue after t->n_trace_events. */
int ns_sysprof_attach(const struct ns_sysprof *sp, struct ns_trace *t, struct ns_attach_stats *st,
		      struct ns_error *err);

/* ---- engine timelines: device profiles placed on a trace's time axis ---- */

struct ns_devprof_ref {
	const struct ns_devprof *dp;
	int64_t nc;                  /* NeuronCore of its NTFF, -1 if unknown */
	const char *neff_hash;       /* of the NEFF it was converted with ("" if unknown) */
};

enum ns_align { NS_ALIGN_NONE = 0, NS_ALIGN_SYNC, NS_ALIGN_ANCHOR };

struct ns_core_engines {
	int64_t nc;
	struct ns_span *busy[NS_ENG__COUNT]; /* merged, trace time axis */
	size_t n_busy[NS_ENG__COUNT];
};

struct ns_engine_timeline {
	struct ns_core_engines *cores;
	size_t n_cores;
	enum ns_align *align;        /* per profile given, how it was placed */
};

/* sp (optional) supplies sync points; without one for a core, a profile is
 * anchored at the first device event of t on that core with its NEFF hash. */
int ns_engine_timeline_build(const struct ns_devprof_ref *refs, size_t n, const struct ns_sysprof *sp,
			     const struct ns_trace *t, struct ns_engine_timeline *out, struct ns_error *err);
void ns_engine_timeline_release(struct ns_engine_timeline *tl);
/* Busy ns of engine e on core nc inside [start, end) of the trace axis. */
int64_t ns_engine_busy_in(const struct ns_engine_timeline *tl, int64_t nc, enum ns_engine e, int64_t start,
			  int64_t end);
/* The NeuronCore a device event of t ran on: its thread's integer pid, else 0. */
int64_t ns_event_core(const struct ns_trace *t, const struct ns_event *ev);

/* ---- conversion with neuron-explorer ---- */

enum { NS_CONV_SYSTEM = 1 << 0, NS_CONV_DEVICE = 1 << 1 };

struct ns_ntff_cmd {
	char *argv[16];              /* argv[0] is the tool; NULL-terminated */
	char *stdout_path;           /* the command prints the export: send stdout here (else NULL) */
	char *output;                /* the export file it creates */
};

/* The neuron-explorer command lines (neuron-formats.md §3.3) that export
 * what u lacks into outdir: the system profile (NS_CONV_SYSTEM, when there
 * is an ntrace.pb) and per NEFF/NTFF pair the device JSON and summary-json
 * (NS_CONV_DEVICE). */
int ns_ntff_commands(const struct ns_cap_unit *u, const char *tool, const char *outdir, unsigned what,
		     struct ns_ntff_cmd **out, size_t *n, struct ns_error *err);
void ns_ntff_cmds_free(struct ns_ntff_cmd *c, size_t n);
/* The command as one shell line ("... > file" for stdout). Caller frees. */
char *ns_ntff_cmd_text(const struct ns_ntff_cmd *c);

#endif
