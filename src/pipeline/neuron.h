/* The Neuron half of loading a capture (docs/neuron.md): exports found
 * beside a trace, conversions with neuron-explorer (the only place that
 * runs it), and the refusal of raw files when it is not installed. */
#ifndef NS_PIPELINE_NEURON_H
#define NS_PIPELINE_NEURON_H

#include <stdbool.h>

#include "common/error.h"
#include "common/trace.h"
#include "ntff/capture.h"
#include "ingest/ingest.h"
#include "ntff/ntff.h"
#include "pipeline/load.h"
#include "report/report.h"

/* Where converted exports are kept: "<db>.neuron" beside a database being
 * written, else "<cache dir>/neuron". Caller frees; NULL without either. */
char *ns_cli_neuron_export_root(const char *db_out);

/* Scans input once before loading: a raw .ntff/.pb given alone is refused
 * (exit 3); a folder with Neuron files but no trace.json is an input error;
 * *involved says whether Neuron files would change the result (the trace
 * cache is not used then: the exports are not part of its key). */
/* *devprofs says whether it holds device-profile exports (ingest stores
 * their detail). */
int ns_cli_neuron_probe(const char *input, bool *involved, bool *devprofs, struct ns_error *err);

/* After trace_path is ingested into t: when t has no device events, the
 * system profile beside it (converted first if needed) adds them, and
 * sink (if any: the store) receives each as it received the trace's events. */
int ns_cli_neuron_attach(const char *trace_path, struct ns_trace *t, const struct ns_load_opts *lo, ns_event_sink sink,
			 void *sink_ctx, struct ns_error *err);

/* --engines: the device profiles of t's capture on t's time axis (the
 * rows: ntff/rows.h ns_ntff_engine_rows, printed by cli/). */
struct ns_neuron_engines {
	struct ns_engine_timeline tl;
	char **sources;          /* one line per profile: where the numbers came from */
	size_t n_sources;
};

int ns_cli_neuron_engines(const struct ns_trace *t, const struct ns_load_opts *lo, struct ns_neuron_engines *out,
			  struct ns_error *err);
void ns_cli_neuron_engines_release(struct ns_neuron_engines *e);

/* --device-detail: the device profiles of t's capture, each with its
 * NEFF, core and summary figures, in report order. */
struct ns_detail_neff;
struct ns_neuron_detail {
	struct ns_detail_neff *v;
	struct ns_devprof **dps;
	size_t n;
	char **sources;          /* one line per profile */
	size_t n_sources;
};

int ns_cli_neuron_detail(const struct ns_trace *t, const struct ns_load_opts *lo, struct ns_neuron_detail *out,
			 struct ns_error *err);
void ns_cli_neuron_detail_release(struct ns_neuron_detail *d);
/* The same profiles for another option (what: its name in messages, as
 * "--by-engine"): kernels --by-engine. */
int ns_cli_neuron_profiles(const struct ns_trace *t, const struct ns_load_opts *lo, const char *what,
			   struct ns_neuron_detail *out, struct ns_error *err);
/* ingest: the device detail and NEFF summaries of t's capture into the
 * current trace of s (docs/schema.md); nothing when it has no device export. */
struct ns_store;
int ns_cli_neuron_store_detail(const struct ns_trace *t, const struct ns_load_opts *lo, struct ns_store *s,
			       struct ns_error *err);

/* The report's Neuron options: --by-neff (group and show the NEFF key),
 * --engines with --merge (refused), --device-time-unit (checked). */
int ns_cli_neuron_report_opts(bool by_neff, bool engines_merged, const char *device_time_unit, struct ns_agg_opts *ao,
			      struct ns_report_opts *ro, struct ns_error *err);

/* Runs the conversions u lacks (what: NS_CONV_*) into u->export_dir, each
 * announced to lo->ui; with no neuron-explorer / neuron-profile on PATH,
 * NS_ERR_UNSUPPORTED whose hint lists the commands. *ran says whether
 * anything was converted. */
int ns_cli_neuron_convert(const struct ns_cap_unit *u, unsigned what, const struct ns_load_opts *lo, bool *ran,
			  struct ns_error *err);

#endif
