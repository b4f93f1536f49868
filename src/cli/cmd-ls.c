/* neuron-stats ls PATH: what a Neuron capture holds, per rank, what pairs
 * with what, and what is missing (docs/neuron.md "Capture directories");
 * on one file, what the file is or holds. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/vec.h"
#include "ntff/capture.h"
#include "ntff/ntff.h"
#include "pipeline/neuron.h"
#include "report/grid.h"
#include "report/report.h"

static const char *opt_unit;

static const struct ns_opt ls_opts[] = {
	NS_ENUM(0, "device-time-unit", "UNIT", "time unit of device-profile exports: ns, us, ms or s (default: detect)",
		&opt_unit, ns_cli_device_time_units),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_ls_spec = {
	.name = "ls",
	.usage = "neuron-stats ls PATH [--device-time-unit UNIT]",
	.summary = "List a Neuron capture: per rank, the files, NEFF/NTFF pairs, exports and what is missing.",
	.details = "PATH may also be one file: an export (system profile, device profile, summary-json)\n"
		   "is read and summarised; a raw .ntff or .pb is identified, never decoded (its format\n"
		   "is not public). Exports converted earlier are found in the cache\n"
		   "($NEURON_STATS_CACHE_DIR/neuron/...). Rules: docs/neuron.md.",
	.opts = ls_opts,
	.min_args = 1,
	.max_args = 1,
	.complete_args = NS_COMPLETE_FILE,
};

/* Each gap: what it says (after the file or pair it names) and what to do. */
static const struct {
	const char *what, *hint;
} gap_text[] = {
	[NS_GAP_NO_TRACE] = { "no framework trace (trace.json)",
			      "export it into this folder with torch_neuronx.profiling.NeuronProfiler.export_trace "
			      "(or torch.profiler's on_trace_ready); without it there is no op table" },
	[NS_GAP_NTFF_NO_NEFF] = { "no NEFF it pairs with",
				  "copy the NEFF (neff_<hash>[_vnc_<N>].neff) from the compile cache "
				  "(TORCH_NEURONX_NEFF_CACHE_DIR) into this folder" },
	[NS_GAP_NEFF_NO_NTFF] = { "no device trace (NTFF) for it",
				  "only --engines needs one: capture with NEURON_RT_INSPECT_DEVICE_PROFILE=1 "
				  "(or ProfileMode.DEVICE)" },
	[NS_GAP_PAIR_NO_DEVICE] = { "no device-profile export yet",
				    "--engines converts it when neuron-explorer is on PATH; or run the commands below" },
	[NS_GAP_PAIR_NO_SUMMARY] = { "no summary-json export yet",
				     "only `ls` of the export shows it; run the command below to have it" },
	[NS_GAP_PB_NO_EXPORT] = { "not converted yet (no system-profile export)",
				  "needed when trace.json has no device events; the report converts it when "
				  "neuron-explorer is on PATH; or run the commands below" },
	[NS_GAP_NO_TRACE_INFO] = { "no trace_info.pb beside it",
				   "Explorer reads the folder (-d) only with both; copy trace_info.pb from the same run" },
	[NS_GAP_NO_NTRACE] = { "no ntrace.pb beside it",
			       "the runtime event trace is missing; copy ntrace.pb from the same run" },
	[NS_GAP_EXPORT_UNPAIRED] = { "names no NTFF found here",
				     "name it <ntff stem>__neff_<hash>.json (as neuron-stats writes) so it pairs" },
	[NS_GAP_NTFF_EMPTY] = { "is empty (0 bytes): not a device trace",
				"the runtime did not write it (the process ended before the profile was saved?); "
				"capture again" },
	[NS_GAP_EXPORT_MODEL_ID] = { "names its NEFF only by its model id, which the Neuron docs tie to no NEFF file: "
				     "not used",
				     "rename it <ntff stem>__neff_<hash>.json (as neuron-stats writes) for the pair it "
				     "belongs to, or convert that pair with the commands below" },
};

static const char *const ntff_modes[] = {
	[NS_NTFF_SESSION] = "session mode", [NS_NTFF_MODEL] = "model mode", [NS_NTFF_CLI] = "CLI capture",
	[NS_NTFF_CONTINUOUS] = "continuous", [NS_NTFF_OTHER] = "unrecognised name",
};

/* path relative to the scanned root when below it. */
/* A name or text from the disk or from a file, its control characters made
 * visible (docs/report.md "Control characters and Markdown"). The result
 * lives until VIS_SLOTS later calls, so one printf can show several; a
 * failed allocation shows "?". */
#define VIS_SLOTS 4
static const char *vis(const char *s)
{
	static char *slots[VIS_SLOTS];
	static size_t next;
	char *owned;
	const char *v = ns_visible(s, &owned);
	if (!owned)
		return v ? v : "?";
	free(slots[next]);
	slots[next] = owned;
	next = (next + 1) % VIS_SLOTS;
	return owned;
}

/* A column of a listing line: its width (0: the last column, not
 * padded) and whether it is right-aligned. */
struct ls_col {
	size_t width;
	bool right;
};

/* A text cell; an empty text is an empty cell, so that the columns before
 * it are still padded. */
static struct ns_cell text_cell(const char *s)
{
	return (struct ns_cell){ .type = *s ? NS_CELL_TEXT : NS_CELL_EMPTY, .text = s };
}

/* One listing line: n cells in fixed-width columns one space apart, after
 * four spaces, control characters made visible (the grid's plain style). */
static void print_columns(const struct ls_col *cols, const struct ns_cell *cells, size_t n)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_PLAIN;
	g.indent = "    ";
	g.gap = " ";
	for (size_t c = 0; c < n; c++)
		ns_grid_col(&g, &(struct ns_grid_col){ .width = cols[c].width, .left = !cols[c].right });
	ns_grid_row(&g, cells, true, false);
	if (ns_grid_write_text(stdout, &g) < 0)
		puts("    ?"); /* out of memory */
	ns_grid_release(&g);
}

static const char *rel(const char *root, const char *path)
{
	size_t n = strlen(root);
	if (strncmp(path, root, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

/* Files of the unit's own folder (and converted ones) are named by their
 * name (a Parquet profile's: "<folder>/Metadata.parquet"). */
static bool in_unit(const struct ns_cap_unit *u, const struct ns_cap_file *f)
{
	size_t n = strlen(u->dir);
	return f->converted || (strncmp(f->path, u->dir, n) == 0 && f->path[n] == '/' && strcmp(f->path + n + 1, f->name) == 0);
}

static void file_detail(const struct ns_cap_file *f, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	switch (f->kind) {
	case NS_CAP_NEFF:
		len = (size_t)snprintf(out, n, "hash %s", *f->hash ? f->hash : "? (not a runtime name)");
		if (f->nc >= 0)
			snprintf(out + len, n - len, ", vnc %" PRId64, f->nc);
		if (f->shared)
			snprintf(out + strlen(out), n - strlen(out), "%s",
				 strstr(f->path, "/neffs/") || strncmp(f->path, "neffs/", 6) == 0
					 ? ", from neffs/"
					 : ", shared with the CLI capture below its folder");
		break;
	case NS_CAP_NTFF:
		len = (size_t)snprintf(out, n, "%s", ntff_modes[f->naming]);
		if (*f->hash)
			len += (size_t)snprintf(out + len, n - len, ", hash %s", f->hash);
		if (f->nc >= 0)
			len += (size_t)snprintf(out + len, n - len, ", nc %" PRId64, f->nc);
		if (f->session >= 0)
			len += (size_t)snprintf(out + len, n - len, ", session %" PRId64, f->session);
		if (f->cli_rank >= 0)
			len += (size_t)snprintf(out + len, n - len, ", rank %" PRId64, f->cli_rank);
		if (f->exec >= 0)
			len += (size_t)snprintf(out + len, n - len, ", execution %" PRId64, f->exec);
		snprintf(out + len, n - len, f->size == 0 ? "; EMPTY (0 bytes), not usable" : "; raw, not decoded");
		break;
	case NS_CAP_PB:
	case NS_CAP_PARQUET:
	case NS_CAP_PERFETTO:
		snprintf(out, n, f->kind == NS_CAP_PB ? "raw, not decoded" : "not read (use the JSON exports)");
		break;
	default:
		if (f->converted)
			snprintf(out, n, "converted (cache)");
		else if (f->split)
			snprintf(out, n, "covers the process folders below it: this one's events (process_id)");
		break;
	}
}

static void print_unit(const struct ns_capture *c, const struct ns_cap_unit *u)
{
	const char *root = c->root;
	char detail[256];
	if (u->rank >= 0)
		printf("rank %" PRId64 "  %s\n", u->rank, strcmp(u->dir, root) == 0 ? "." : vis(rel(root, u->dir)));
	else
		printf("process  %s\n", strcmp(u->dir, root) == 0 ? "." : vis(rel(root, u->dir)));
	if (u->instance[0] || u->session[0]) {
		printf("  instance %s, pid ", u->instance[0] ? vis(u->instance) : "?");
		if (u->pid >= 0)
			printf("%" PRId64, u->pid);
		else
			fputs("?", stdout);
		printf(", session %s\n", u->session[0] ? vis(u->session) : "-");
	}
	puts("  files");
	for (size_t k = 0; k < u->n_files; k++) {
		const struct ns_cap_file *f = &u->files[k];
		file_detail(f, detail, sizeof(detail));
		static const struct ls_col cols[] = { { 22, false }, { 48, false }, { 10, true }, { 0, false } };
		char size_unit[sizeof(detail) + 8];
		snprintf(size_unit, sizeof(size_unit), "B%s%s", *detail ? "  " : "", detail);
		print_columns(cols, (struct ns_cell[]){ text_cell(ns_cap_kind_name(f->kind)),
							text_cell(in_unit(u, f) ? f->name : rel(root, f->path)),
							{ .type = NS_CELL_INT, .i = (int64_t)f->size }, text_cell(size_unit) },
			      NS_ARRAY_SIZE(cols));
	}
	if (u->export_dir) {
		bool any = false;
		for (size_t k = 0; k < u->n_files; k++)
			any |= u->files[k].converted;
		if (any)
			printf("  converted exports are in %s\n", vis(u->export_dir));
	}
	if (u->n_pairs) {
		puts("  pairs (NEFF + NTFF)");
		for (size_t p = 0; p < u->n_pairs; p++) {
			const struct ns_cap_pair *pr = &u->pairs[p];
			printf("    %s + %s\n", vis(u->files[pr->neff].name), vis(u->files[pr->ntff].name));
			printf("      device-profile export  %s\n", pr->device_json >= 0 ? vis(u->files[pr->device_json].name) : "-");
			printf("      summary-json export    %s\n", pr->summary_json >= 0 ? vis(u->files[pr->summary_json].name) : "-");
		}
	}
	if (!u->n_gaps) {
		puts("  missing: nothing");
		return;
	}
	puts("  missing");
	for (size_t g = 0; g < u->n_gaps; g++) {
		const struct ns_cap_gap *gap = &u->gaps[g];
		char name[600] = "";
		if (gap->file >= 0)
			snprintf(name, sizeof(name), "%s", vis(u->files[gap->file].name));
		else if (gap->pair >= 0)
			snprintf(name, sizeof(name), "%s + %s", vis(u->files[u->pairs[gap->pair].neff].name),
				 vis(u->files[u->pairs[gap->pair].ntff].name));
		printf("    - %s%s%s\n      hint: %s\n", name, *name ? ": " : "", gap_text[gap->kind].what,
		       gap_text[gap->kind].hint);
		if (gap->kind == NS_GAP_EXPORT_MODEL_ID) {
			char candidates[600];
			ns_capture_model_export_gap(u, (size_t)gap->file, candidates, sizeof(candidates), NULL);
			printf("      may belong to: %s\n", candidates[0] ? vis(candidates) : "no NEFF here lacks a device export");
		}
	}
}

/* The conversion commands the unit still lacks, writing into the capture. */
static int print_commands(const struct ns_cap_unit *u, struct ns_error *err)
{
	struct ns_ntff_cmd *cmds = NULL;
	size_t n = 0;
	int rc = ns_ntff_commands(u, "neuron-explorer", u->dir, NS_CONV_SYSTEM | NS_CONV_DEVICE, &cmds, &n, err);
	if (!rc && n) {
		puts("  commands (neuron-explorer; the report runs them itself when it is on PATH)");
		for (size_t i = 0; i < n; i++) {
			char *line = ns_ntff_cmd_text(&cmds[i]);
			if (!line) {
				rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
				break;
			}
			printf("    %s\n", vis(line));
			free(line);
		}
	}
	ns_ntff_cmds_free(cmds, n);
	return rc;
}

static int list_dir(const char *path, struct ns_error *err)
{
	struct ns_capture *c = NULL;
	char *root = ns_cli_neuron_export_root(NULL);
	struct ns_capture_opts co = { .export_root = root };
	int rc = ns_capture_scan(path, &co, &c, err);
	if (rc)
		goto out;
	if (c->n_units == 0) {
		rc = ns_error_set(err, NS_ERR_INPUT,
				  "%s: no capture files (trace.json, *.neff, *.ntff, *.pb, Neuron JSON exports)", path);
		goto out;
	}
	printf("Neuron capture %s: %zu folder%s with capture files\n", vis(c->root), c->n_units, c->n_units == 1 ? "" : "s");
	for (size_t u = 0; u < c->n_units && !rc; u++) {
		putchar('\n');
		print_unit(c, &c->units[u]);
		rc = print_commands(&c->units[u], err);
	}
out:
	ns_capture_free(c);
	free(root);
	return rc;
}

static void print_notes(const struct ns_notes *notes, int64_t truncated_at)
{
	if (truncated_at >= 0)
		printf("  truncated at byte %" PRId64 "; what came before it is used\n", truncated_at);
	if (!notes->total)
		return;
	printf("  ignored values: %" PRIu64 "%s\n", notes->total, notes->total > notes->n ? " (first ones listed)" : "");
	for (size_t i = 0; i < notes->n; i++)
		printf("    %s\n", vis(notes->v[i]));
}

/* The export's own "warnings" (neuron-explorer's: dropped events, ring overwrites). */
static void print_explorer_warnings(const struct ns_notes *w)
{
	if (!w->total)
		return;
	printf("  Explorer warnings: %" PRIu64 "%s\n", w->total, w->total > w->n ? " (first ones listed)" : "");
	for (size_t i = 0; i < w->n; i++)
		printf("    %s\n", w->v[i]);
}

static void print_keys(const char *what, char *const *keys, size_t n)
{
	if (!n)
		return;
	printf("  %s:", what);
	for (size_t i = 0; i < n; i++)
		printf("%s %s", i ? "," : "", vis(keys[i]));
	putchar('\n');
}

static void print_kv(const char *what, const struct ns_kv *kv, size_t n)
{
	if (!n)
		return;
	printf("  %s:\n", what);
	static const struct ls_col cols[] = { { 40, false }, { 0, false } };
	for (size_t i = 0; i < n; i++)
		print_columns(cols, (struct ns_cell[]){ text_cell(kv[i].key), text_cell(kv[i].text) }, NS_ARRAY_SIZE(cols));
}

/* The processes whose kept events an export holds, when several (an export
 * of a whole capture folder: each process folder takes its own). */
static void print_processes(const struct ns_sysprof *sp)
{
	enum { MAX_PROCS = 16 };
	struct proc {
		ns_str instance;
		int64_t pid;
		size_t n;
	} procs[MAX_PROCS];
	size_t n = 0, more = 0;
	for (size_t i = 0; i < sp->n_ev; i++) {
		const struct ns_sys_event *ev = &sp->ev[i];
		size_t k = 0;
		while (k < n && (procs[k].pid != ev->pid || procs[k].instance != ev->instance))
			k++;
		if (k == n && n == MAX_PROCS) {
			more++;
			continue;
		}
		if (k == n)
			procs[n++] = (struct proc){ ev->instance, ev->pid, 0 };
		procs[k].n++;
	}
	if (n < 2)
		return;
	printf("  processes (kept events): ");
	for (size_t k = 0; k < n; k++) {
		const char *inst = ns_strtab_get(&sp->strings, procs[k].instance);
		printf("%s%s%s", k ? ", " : "", vis(inst), *inst ? " " : "");
		if (procs[k].pid == NS_NONE)
			printf("no process_id: %zu", procs[k].n);
		else
			printf("pid %" PRId64 ": %zu", procs[k].pid, procs[k].n);
	}
	if (more)
		printf(", %zu of further processes", more);
	printf("; in a capture each process folder below takes its own\n");
}

static int show_system(const char *path, struct ns_error *err)
{
	struct ns_sysprof *sp = NULL;
	int rc = ns_sysprof_read(path, &sp, err);
	if (rc)
		return rc;
	printf("  time unit: %s (%s)\n", ns_time_unit_name(sp->unit), sp->unit_why);
	print_kv("system_profile_metadata", sp->metadata, sp->n_metadata);
	printf("  device_profile_list: %" PRIu64 " entries\n", sp->n_device_profiles);
	printf("  events: %" PRIu64 " (framework %" PRIu64 ", runtime %" PRIu64 ", hardware %" PRIu64
	       "); %zu kept for correlation\n",
	       sp->n_events, sp->n_source[NS_SYS_FRAMEWORK], sp->n_source[NS_SYS_RUNTIME], sp->n_source[NS_SYS_HARDWARE],
	       sp->n_ev);
	print_processes(sp);
	print_keys("unknown keys (kept out)", sp->unknown_keys, sp->n_unknown_keys);
	print_explorer_warnings(&sp->explorer_warnings);
	print_notes(&sp->notes, sp->truncated_at);
	ns_sysprof_free(sp);
	return 0;
}

static int show_device(const char *path, struct ns_error *err)
{
	static const char *const sections[] = { "instruction", "dma", "active_time", "layer_summary", "summary",
						"metadata", "profile_info", "other known" };
	static const char *const srcs[] = { "-", "active_time", "instruction", "dma" };
	struct ns_devprof *dp = NULL;
	char us[64];
	int rc = ns_devprof_read(path, ns_time_unit_parse(opt_unit), &dp, err);
	if (rc)
		return rc;
	printf("  profile_info: NTFF %s, NEFF %s\n", *dp->ntff_filename ? vis(dp->ntff_filename) : "?",
	       *dp->neff_hash ? vis(dp->neff_hash) : "?");
	fputs("  elements:", stdout);
	for (size_t i = 0; i < NS_ARRAY_SIZE(sections); i++)
		printf("%s %s %" PRIu64, i ? "," : "", sections[i], dp->count[i]);
	printf("\n  time unit: %s (%s)\n", ns_time_unit_name(dp->unit), dp->unit_why);
	if (dp->origin_ns)
		printf("  timestamps are relative: metadata first_hw_timestamp %" PRId64 " ns added\n", dp->origin_ns);
	puts("  busy time per engine (merged intervals):");
	for (int e = 0; e < NS_ENG__COUNT; e++) {
		int64_t sum = 0;
		for (size_t i = 0; i < dp->n_busy[e]; i++)
			sum += dp->busy[e][i].end - dp->busy[e][i].start;
		static const struct ls_col cols[] = { { 4, false }, { 8, false }, { 16, true }, { 0, false } };
		char intervals[96];
		ns_format_us(us, sizeof(us) - 2, sum);
		strcat(us, "us");
		snprintf(intervals, sizeof(intervals), " %zu intervals, from %s", dp->n_busy[e], srcs[dp->busy_src[e]]);
		print_columns(cols, (struct ns_cell[]){ text_cell(ns_engine_name((enum ns_engine)e)),
							text_cell(ns_engine_alias((enum ns_engine)e)), text_cell(us),
							text_cell(intervals) },
			      NS_ARRAY_SIZE(cols));
	}
	if (dp->unknown_engine)
		printf("  intervals with an unknown engine label: %" PRIu64 "\n", dp->unknown_engine);
	print_kv("summary", dp->summary, dp->n_summary);
	print_kv("metadata", dp->metadata, dp->n_metadata);
	print_keys("unknown keys (kept out)", dp->unknown_keys, dp->n_unknown_keys);
	print_explorer_warnings(&dp->explorer_warnings);
	print_notes(&dp->notes, dp->truncated_at);
	ns_devprof_free(dp);
	return 0;
}

static int show_summary(const char *path, struct ns_error *err)
{
	struct ns_summary *s = NULL;
	int rc = ns_summary_read(path, &s, err);
	if (rc)
		return rc;
	printf("  *_percent values: %s\n", s->percent_is_fraction ? "fractions (all <= 1), shown x100"
								   : "percents");
	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct ns_summary_node *node = &s->nodes[i];
		printf("  node %s: %zu keys\n", node->id[0] ? vis(node->id) : "(flat)", node->n_kv);
		for (size_t k = 0; k < node->n_kv; k++) {
			const struct ns_kv *kv = &node->kv[k];
			static const struct ls_col cols[] = { { 44, false }, { 0, false } };
			int64_t ns;
			double pct;
			char value[64];
			const char *shown = value;
			if (ns_summary_percent(s, node, kv->key, &pct)) {
				snprintf(value, sizeof(value), "%.4f %%", pct);
			} else if (ns_summary_time_ns(node, kv->key, &ns)) {
				ns_format_us(value, sizeof(value) - 2, ns);
				strcat(value, "us");
			} else {
				shown = kv->text;
			}
			print_columns(cols, (struct ns_cell[]){ text_cell(kv->key), text_cell(shown) },
				      NS_ARRAY_SIZE(cols));
		}
	}
	print_notes(&s->notes, s->truncated_at);
	ns_summary_free(s);
	return 0;
}

static int show_file(const char *path, struct ns_error *err)
{
	struct ns_cap_file f;
	struct ns_raw_info raw;
	char detail[256];
	int rc;
	if ((rc = ns_capture_classify(path, &f, err)) <= 0)
		return rc < 0 ? NS_ERR_NOMEM : ns_error_set(err, NS_ERR_INPUT, "%s: not a Neuron capture file or export", path);
	f.path = (char *)path;
	if (f.kind == NS_CAP_NTFF || f.kind == NS_CAP_PB) {
		if ((rc = ns_ntff_identify(path, &raw, err)))
			return rc;
		f.size = raw.size;
		file_detail(&f, detail, sizeof(detail));
		printf("%s: %s, %" PRIu64 " B (%s)\n", vis(path), ns_cap_kind_name(f.kind), raw.size, vis(detail));
		fputs("  its binary format is not publicly documented and is not decoded by this tool\n", stdout);
		if (raw.looks_like)
			printf("  note: it starts like %s, not like a raw capture file\n", raw.looks_like);
		if (raw.too_small)
			puts("  note: smaller than the 128-byte NTFF header");
		return 0;
	}
	struct stat st;
	if (stat(path, &st) == 0)
		f.size = (uint64_t)st.st_size;
	file_detail(&f, detail, sizeof(detail));
	printf("%s: %s, %" PRIu64 " B%s%s\n", vis(path), ns_cap_kind_name(f.kind), f.size, *detail ? "; " : "",
	       vis(detail));
	switch (f.kind) {
	case NS_CAP_SYSTEM_JSON: return show_system(path, err);
	case NS_CAP_DEVICE_JSON: return show_device(path, err);
	case NS_CAP_SUMMARY_JSON: return show_summary(path, err);
	case NS_CAP_NEFF: printf("  `neuron-stats neff %s` summarises it\n", vis(path)); return 0;
	case NS_CAP_TRACE: printf("  `neuron-stats report %s` prints its op table\n", vis(path)); return 0;
	default: return 0;
	}
}

int cmd_ls(int argc, char **argv)
{
	struct ns_error err = { 0 };
	struct stat st;
	char **pos;
	int npos, rc;
	opt_unit = NULL;
	rc = ns_opt_parse(&cmd_ls_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (stat(pos[0], &st) != 0) {
		ns_error_sys(&err, NS_ERR_IO, errno, pos[0], "cannot open");
		return ns_cli_fail(&err);
	}
	rc = S_ISDIR(st.st_mode) ? list_dir(pos[0], &err) : show_file(pos[0], &err);
	if (rc) {
		fflush(stdout);
		return ns_cli_fail(&err);
	}
	return 0;
}
