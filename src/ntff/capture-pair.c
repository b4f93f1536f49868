/* Neuron capture directories: within a unit, NEFFs paired with NTFFs and
 * the exports with the pairs, and the gaps (what is missing, and the advice
 * for a device export named only by its model id) (docs/neuron.md
 * "Capture directories"). */
#include "common/sort.h"
#include "ntff/capture-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_pair(struct ns_cap_unit *u, size_t neff, size_t ntff)
{
	struct ns_cap_pair *v = realloc(u->pairs, (u->n_pairs + 1) * sizeof(*v));
	if (!v)
		return -1;
	u->pairs = v;
	u->pairs[u->n_pairs++] = (struct ns_cap_pair){ neff, ntff, -1, -1 };
	return 0;
}

static int add_gap(struct ns_cap_unit *u, enum ns_cap_gap_kind kind, int64_t file, int64_t pair)
{
	struct ns_cap_gap *v = realloc(u->gaps, (u->n_gaps + 1) * sizeof(*v));
	if (!v)
		return -1;
	u->gaps = v;
	u->gaps[u->n_gaps++] = (struct ns_cap_gap){ kind, file, pair };
	return 0;
}

/* NEFF <-> NTFF (§2.3): model mode by the hash in both names (same vnc
 * preferred); session and continuous mode with every NEFF of the NTFF's
 * core (or every NEFF when the NEFF names carry no vnc); CLI and other
 * names only when there is exactly one NEFF. */
static int pair_ntff(struct ns_cap_unit *u, size_t t)
{
	const struct ns_cap_file *ntff = &u->files[t];
	size_t n_neff = 0, only = 0;
	int64_t best = -1;
	if (ntff->size == 0)
		return 0; /* an empty NTFF (a capture that never wrote) is no device trace */
	for (size_t k = 0; k < u->n_files; k++)
		if (u->files[k].kind == NS_CAP_NEFF) {
			n_neff++;
			only = k;
		}
	if (ntff->hash[0]) {
		for (size_t k = 0; k < u->n_files; k++) {
			const struct ns_cap_file *f = &u->files[k];
			if (f->kind != NS_CAP_NEFF || strcmp(f->hash, ntff->hash) != 0)
				continue;
			if (best < 0 || (f->nc == ntff->nc && u->files[best].nc != ntff->nc))
				best = (int64_t)k;
		}
		return best >= 0 ? add_pair(u, (size_t)best, t) : 0;
	}
	if (ntff->nc >= 0) {
		bool any_nc = false;
		for (size_t k = 0; k < u->n_files; k++)
			any_nc |= u->files[k].kind == NS_CAP_NEFF && u->files[k].nc == ntff->nc;
		for (size_t k = 0; k < u->n_files; k++) {
			const struct ns_cap_file *f = &u->files[k];
			if (f->kind == NS_CAP_NEFF && (any_nc ? f->nc == ntff->nc : f->nc < 0) && add_pair(u, k, t))
				return -1;
		}
		return 0;
	}
	return n_neff == 1 ? add_pair(u, only, t) : 0;
}

static bool export_matches(const struct ns_cap_file *e, const struct ns_cap_file *neff,
			   const struct ns_cap_file *ntff, int how)
{
	switch (how) {
	case 0: /* names the NTFF (and the NEFF, when it names one) */
		return e->stem[0] && strcmp(e->stem, ntff->stem) == 0 && (!e->hash[0] || strcmp(e->hash, neff->hash) == 0);
	case 1: /* names the NEFF hash (and the core, when both say) */
		return !e->stem[0] && e->hash[0] && strcmp(e->hash, neff->hash) == 0 &&
		       (e->nc < 0 || ntff->nc < 0 || e->nc == ntff->nc);
	default: /* names the session NTFF's core and session */
		return !e->stem[0] && !e->hash[0] && e->session >= 0 && e->session == ntff->session && e->nc == ntff->nc;
	}
}

static void pair_exports(struct ns_cap_unit *u, bool *claimed)
{
	for (int how = 0; how < 3; how++) {
		for (size_t p = 0; p < u->n_pairs; p++) {
			struct ns_cap_pair *pr = &u->pairs[p];
			for (size_t k = 0; k < u->n_files; k++) {
				const struct ns_cap_file *e = &u->files[k];
				int64_t *slot = e->kind == NS_CAP_DEVICE_JSON ? &pr->device_json
						: e->kind == NS_CAP_SUMMARY_JSON ? &pr->summary_json : NULL;
				if (!slot || *slot >= 0 || !export_matches(e, &u->files[pr->neff], &u->files[pr->ntff], how))
					continue;
				*slot = (int64_t)k;
				claimed[k] = true;
			}
		}
	}
	/* one pair and one export of a kind whose name says nothing (ntff.json,
	 * summary.json, ...): they belong together */
	if (u->n_pairs != 1)
		return;
	for (int kind = NS_CAP_DEVICE_JSON; kind <= NS_CAP_SUMMARY_JSON; kind++) {
		int64_t *slot = kind == NS_CAP_DEVICE_JSON ? &u->pairs[0].device_json : &u->pairs[0].summary_json;
		int64_t found = -1;
		size_t count = 0;
		for (size_t k = 0; k < u->n_files; k++)
			if ((int)u->files[k].kind == kind && !claimed[k] && !u->files[k].stem[0] && !u->files[k].hash[0] &&
			    u->files[k].session < 0) {
				found = (int64_t)k;
				count++;
			}
		if (*slot < 0 && count == 1) {
			*slot = found;
			claimed[found] = true;
		}
	}
}

static int find_gaps(struct ns_cap_unit *u, const bool *claimed)
{
	int64_t ntrace = -1, trace_info = -1;
	bool neuron = false; /* raw files or exports that only make sense with a trace */
	for (size_t k = 0; k < u->n_files; k++) {
		const struct ns_cap_file *f = &u->files[k];
		neuron |= f->kind == NS_CAP_NTFF || f->kind == NS_CAP_PB || f->kind == NS_CAP_SYSTEM_JSON ||
			  f->kind == NS_CAP_DEVICE_JSON || f->kind == NS_CAP_SUMMARY_JSON ||
			  (f->kind == NS_CAP_NEFF && !f->shared);
		if (f->kind == NS_CAP_PB && f->naming == NS_PB_NTRACE)
			ntrace = (int64_t)k;
		if (f->kind == NS_CAP_PB && f->naming == NS_PB_TRACE_INFO)
			trace_info = (int64_t)k;
	}
	if (neuron && u->trace < 0 && add_gap(u, NS_GAP_NO_TRACE, -1, -1))
		return -1;
	for (size_t k = 0; k < u->n_files; k++) {
		const struct ns_cap_file *f = &u->files[k];
		bool paired = false;
		for (size_t p = 0; p < u->n_pairs; p++)
			paired |= u->pairs[p].neff == k || u->pairs[p].ntff == k;
		if (f->kind == NS_CAP_NTFF && !paired &&
		    add_gap(u, f->size == 0 ? NS_GAP_NTFF_EMPTY : NS_GAP_NTFF_NO_NEFF, (int64_t)k, -1))
			return -1;
		if (f->kind == NS_CAP_NEFF && !f->shared && !paired && add_gap(u, NS_GAP_NEFF_NO_NTFF, (int64_t)k, -1))
			return -1;
		if ((f->kind == NS_CAP_DEVICE_JSON || f->kind == NS_CAP_SUMMARY_JSON) && !claimed[k] &&
		    add_gap(u, f->model_id >= 0 ? NS_GAP_EXPORT_MODEL_ID : NS_GAP_EXPORT_UNPAIRED, (int64_t)k, -1))
			return -1;
	}
	for (size_t p = 0; p < u->n_pairs; p++)
		if ((u->pairs[p].device_json < 0 && add_gap(u, NS_GAP_PAIR_NO_DEVICE, -1, (int64_t)p)) ||
		    (u->pairs[p].summary_json < 0 && add_gap(u, NS_GAP_PAIR_NO_SUMMARY, -1, (int64_t)p)))
			return -1;
	if (ntrace >= 0 && u->system_json < 0 && add_gap(u, NS_GAP_PB_NO_EXPORT, ntrace, -1))
		return -1;
	if (ntrace >= 0 && trace_info < 0 && add_gap(u, NS_GAP_NO_TRACE_INFO, ntrace, -1))
		return -1;
	if (trace_info >= 0 && ntrace < 0 && add_gap(u, NS_GAP_NO_NTRACE, trace_info, -1))
		return -1;
	return 0;
}

int ns_capture_model_export_gap(const struct ns_cap_unit *u, size_t file, char *out, size_t n,
				struct ns_error *err)
{
	const struct ns_cap_file *f = &u->files[file];
	size_t len = 0;
	out[0] = '\0';
	for (size_t p = 0; p < u->n_pairs; p++) {
		const char *name = u->files[u->pairs[p].neff].name;
		bool listed = false;
		if (u->pairs[p].device_json >= 0)
			continue;
		for (size_t q = 0; q < p; q++) /* a NEFF of two pairs (two cores) once */
			listed |= u->pairs[q].device_json < 0 && u->pairs[q].neff == u->pairs[p].neff;
		if (!listed && len < n)
			len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", name);
	}
	if (!err)
		return NS_ERR_UNSUPPORTED;
	ns_error_set(err, NS_ERR_UNSUPPORTED,
		     "%s: not used: its NEFF is named only by its model id (%lld), and the Neuron docs tie a model "
		     "id to no NEFF file; %s%s",
		     f->path, (long long)f->model_id, out[0] ? "it may belong to " : "no NEFF here lacks a device export",
		     out);
	ns_error_hint(err, "rename it <ntff stem>__neff_<hash>.json (as neuron-stats writes) for the pair it "
			   "belongs to, or convert that pair (`neuron-stats ls` gives the commands)");
	return NS_ERR_UNSUPPORTED;
}

/* Indexes, pairs and gaps of a unit whose files are all added. */
int cap_finish_unit(struct ns_cap_unit *u)
{
	bool *claimed = NULL;
	int rc = -1;
	ns_sort(u->files, u->n_files, sizeof(*u->files), cap_cmp_files);
	for (size_t k = 0; k < u->n_files; k++)
		cap_set_name(&u->files[k]);
	u->trace = u->system_json = -1;
	for (size_t k = 0; k < u->n_files; k++) {
		const struct ns_cap_file *f = &u->files[k];
		if (f->kind == NS_CAP_TRACE && u->trace < 0)
			u->trace = (int64_t)k;
		/* an export in the capture wins over a converted one, the process's
		 * own over one it shares with other processes */
		const struct ns_cap_file *cur = u->system_json < 0 ? NULL : &u->files[u->system_json];
		if (f->kind == NS_CAP_SYSTEM_JSON &&
		    (!cur || (cur->converted && !f->converted) || (cur->split && !f->split && !f->converted)))
			u->system_json = (int64_t)k;
	}
	if (u->trace >= 0 && cap_sniff_rank(u->files[u->trace].path, &u->rank))
		goto out;
	for (size_t k = 0; k < u->n_files; k++)
		if (u->files[k].kind == NS_CAP_NTFF && pair_ntff(u, k))
			goto out;
	if (!(claimed = calloc(u->n_files + 1, sizeof(*claimed))))
		goto out;
	pair_exports(u, claimed);
	rc = find_gaps(u, claimed);
out:
	free(claimed);
	return rc;
}
