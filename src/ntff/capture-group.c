/* Neuron capture directories: the files grouped per process folder
 * ("unit": a rank), the layouts of neuron-explorer's exports moved to the
 * process they belong to, and the exports converted earlier joined from
 * the cache (docs/neuron.md "Capture directories"). */
#include "common/sort.h"
#include "ntff/capture-internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *cap_base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* "<instance>_pid_<pid>" (docs) or "<instance>-<pid>" (RE). */
bool cap_parse_process_dir(const char *name, struct ns_cap_unit *u)
{
	const char *sep = strstr(name, "_pid_"), *num;
	if (sep) {
		num = sep + 5;
	} else {
		sep = strrchr(name, '-');
		if (!sep)
			return false;
		num = sep + 1;
	}
	if (sep == name || !all_digits(num))
		return false;
	cap_copy_text(u->instance, sizeof(u->instance), name, (size_t)(sep - name));
	u->pid = strtoll(num, NULL, 10);
	return true;
}

/* The instance, pid and session of a unit from its folder's name; -1 on
 * OOM. */
static int describe_unit(struct ns_cap_unit *u)
{
	const char *name = cap_base_of(u->dir);
	u->pid = -1;
	u->rank = -1;
	if (all_digits(name) && strlen(name) >= 9) {
		char *parent = ns_capture_folder(u->dir);
		if (!parent)
			return -1;
		cap_copy_text(u->session, sizeof(u->session), name, strlen(name));
		cap_parse_process_dir(cap_base_of(parent), u);
		free(parent);
	} else {
		cap_parse_process_dir(name, u);
	}
	return 0;
}

void ns_capture_key(const char *dir, char out[17])
{
	char *real = realpath(dir, NULL);
	const char *s = real ? real : dir;
	uint64_t h = 14695981039346656037ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
	free(real);
}

/* Adds the exports converted earlier for u (from its cache folder). */
static int add_converted(struct ns_cap_unit *u, const char *export_root, struct ns_error *err)
{
	char key[17];
	struct file_list l = { u->files, u->n_files, u->n_files };
	DIR *d;
	int rc = 0;
	ns_capture_key(u->dir, key);
	if (asprintf(&u->export_dir, "%s/%s", export_root, key) < 0) {
		u->export_dir = NULL;
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	if (!(d = opendir(u->export_dir)))
		return errno == ENOMEM ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
	for (struct dirent *de; (de = readdir(d)) != NULL && !rc;) {
		struct stat st;
		char *child;
		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&child, "%s/%s", u->export_dir, de->d_name) < 0) {
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			break;
		}
		if (stat(child, &st) == 0 && S_ISREG(st.st_mode) && cap_add_if_capture(&l, child, &st, true))
			rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		free(child);
	}
	closedir(d);
	u->files = l.v;
	u->n_files = l.n;
	return rc;
}

static int cmp_units(const void *a, const void *b)
{
	return strcmp(((const struct ns_cap_unit *)a)->dir, ((const struct ns_cap_unit *)b)->dir);
}

/* True if dir is path or below it. */
static bool under(const char *dir, const char *path)
{
	size_t n = strlen(path);
	return strncmp(dir, path, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

bool cap_is_export(enum ns_cap_kind k)
{
	return k == NS_CAP_SYSTEM_JSON || k == NS_CAP_DEVICE_JSON || k == NS_CAP_SUMMARY_JSON;
}

/* A unit that only holds exports (the folder neuron-explorer view -d wrote
 * them into, beside the process folders). */
static bool only_exports(const struct ns_cap_unit *u)
{
	for (size_t k = 0; k < u->n_files; k++)
		if (!cap_is_export(u->files[k].kind))
			return false;
	return true;
}

/* The process unit an export of an exports-only folder belongs to: by the
 * instance and pid its name carries (the session folder holding the
 * NTFF of its core and session, when several); a system export without
 * them to the only process folder below, when there is one. -1: none. */
static int64_t export_home(const struct ns_capture *c, size_t from, const struct ns_cap_file *f)
{
	int64_t best = -1, procs = 0, proc = -1;
	for (size_t u = 0; u < c->n_units; u++) {
		const struct ns_cap_unit *d = &c->units[u];
		/* an export naming its instance and pid finds that process anywhere
		 * in the capture; one without, only below its folder */
		if (u == from || only_exports(d) || (!f->instance[0] && !under(d->dir, c->units[from].dir)))
			continue;
		if (d->instance[0] || d->pid >= 0) {
			procs++;
			proc = (int64_t)u;
		}
		if (!f->instance[0] || strcmp(d->instance, f->instance) != 0 || d->pid != f->pid)
			continue;
		bool has_ntff = false;
		for (size_t k = 0; k < d->n_files; k++)
			has_ntff |= d->files[k].kind == NS_CAP_NTFF && d->files[k].nc == f->nc &&
				    (f->session < 0 || d->files[k].session == f->session);
		if (best < 0 || has_ntff)
			best = (int64_t)u;
	}
	if (best < 0 && !f->instance[0] && f->kind == NS_CAP_SYSTEM_JSON && procs == 1)
		best = proc;
	return best;
}

static int move_file(struct ns_cap_unit *from, size_t k, struct ns_cap_unit *to)
{
	struct file_list ul = { to->files, to->n_files, to->n_files };
	if (cap_push_file(&ul, &from->files[k]))
		return -1;
	to->files = ul.v;
	to->n_files = ul.n;
	memmove(&from->files[k], &from->files[k + 1], (from->n_files - k - 1) * sizeof(*from->files));
	from->n_files--;
	return 0;
}

/* A system export without an instance and pid in its name, in an
 * exports-only folder above several process folders (neuron-explorer view
 * -d of the whole capture): a copy joins every process folder below, marked
 * split (each takes its own pid's events). False when there are not several. */
static int share_system_export(struct ns_capture *c, size_t from, size_t k, bool *shared)
{
	const struct ns_cap_file *f = &c->units[from].files[k];
	size_t procs = 0;
	*shared = false;
	if (f->kind != NS_CAP_SYSTEM_JSON || f->instance[0])
		return 0;
	for (size_t u = 0; u < c->n_units; u++) {
		const struct ns_cap_unit *d = &c->units[u];
		procs += u != from && !only_exports(d) && under(d->dir, c->units[from].dir) && (d->instance[0] || d->pid >= 0);
	}
	if (procs < 2)
		return 0;
	for (size_t u = 0; u < c->n_units; u++) {
		struct ns_cap_unit *d = &c->units[u];
		if (u == from || only_exports(d) || !under(d->dir, c->units[from].dir) || !(d->instance[0] || d->pid >= 0))
			continue;
		struct ns_cap_file copy = c->units[from].files[k];
		struct file_list ul = { d->files, d->n_files, d->n_files };
		copy.split = true;
		if (!(copy.path = strdup(copy.path)) || cap_push_file(&ul, &copy)) {
			free(copy.path);
			return -1;
		}
		d->files = ul.v;
		d->n_files = ul.n;
	}
	struct ns_cap_unit *src = &c->units[from];
	free(src->files[k].path);
	memmove(&src->files[k], &src->files[k + 1], (src->n_files - k - 1) * sizeof(*src->files));
	src->n_files--;
	*shared = true;
	return 0;
}

/* Exports written beside the process folders join their process; the
 * neuron-profile guide's CLI layout (file.neff beside output/profile_rank_N.ntff)
 * gets the NEFF of the parent folder when that has exactly one. */
static int relocate(struct ns_capture *c)
{
	for (size_t s = 0; s < c->n_units; s++) {
		struct ns_cap_unit *src = &c->units[s];
		if (!only_exports(src))
			continue;
		for (size_t k = 0; k < src->n_files;) {
			bool shared;
			if (share_system_export(c, s, k, &shared))
				return -1;
			if (shared)
				continue;
			int64_t home = export_home(c, s, &src->files[k]);
			if (home < 0) {
				k++;
				continue;
			}
			if (move_file(src, k, &c->units[home]))
				return -1;
		}
	}
	for (size_t u = 0; u < c->n_units; u++) {
		struct ns_cap_unit *dst = &c->units[u];
		bool ntff = false, neff = false;
		for (size_t k = 0; k < dst->n_files; k++) {
			ntff |= dst->files[k].kind == NS_CAP_NTFF && dst->files[k].naming == NS_NTFF_CLI;
			neff |= dst->files[k].kind == NS_CAP_NEFF;
		}
		char *parent = ntff && !neff ? ns_capture_folder(dst->dir) : NULL;
		if (ntff && !neff && !parent)
			return -1;
		for (size_t p = 0; parent && p < c->n_units; p++) {
			struct ns_cap_unit *up = &c->units[p];
			size_t n_neff = 0, only = 0;
			if (strcmp(up->dir, parent) != 0)
				continue;
			for (size_t k = 0; k < up->n_files; k++)
				if (up->files[k].kind == NS_CAP_NEFF) {
					n_neff++;
					only = k;
				}
			if (n_neff != 1)
				break;
			struct ns_cap_file f = up->files[only];
			struct file_list ul = { dst->files, dst->n_files, dst->n_files };
			up->files[only].shared = f.shared = true; /* no "NEFF without NTFF" in either */
			if (!(f.path = strdup(f.path)) || cap_push_file(&ul, &f)) {
				free(f.path);
				free(parent);
				return -1;
			}
			dst->files = ul.v;
			dst->n_files = ul.n;
			break;
		}
		free(parent);
	}
	/* folders left empty are no unit */
	size_t out = 0;
	for (size_t u = 0; u < c->n_units; u++) {
		if (c->units[u].n_files) {
			c->units[out++] = c->units[u];
			continue;
		}
		free(c->units[u].files);
		free(c->units[u].dir);
	}
	c->n_units = out;
	return 0;
}

/* Groups the files by folder into units; NEFFs of a neffs/ folder (vLLM)
 * are copied into every unit below the neffs folder's parent. */
int cap_group(struct ns_capture *c, struct file_list *l, const struct ns_capture_opts *o, struct ns_error *err)
{
	for (size_t i = 0; i < l->n; i++) {
		struct ns_cap_file *f = &l->v[i];
		char *dir = ns_capture_folder(f->path);
		enum ns_cap_kind anchor;
		size_t u;
		if (dir && cap_parquet_anchor(cap_base_of(f->path), &anchor)) { /* its profile folder is the export */
			char *parent = ns_capture_folder(dir);
			free(dir);
			dir = parent;
		}
		if (!dir)
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		f->shared = f->kind == NS_CAP_NEFF && strcmp(cap_base_of(dir), "neffs") == 0;
		for (u = 0; u < c->n_units && strcmp(c->units[u].dir, dir) != 0; u++)
			;
		if (u == c->n_units) {
			struct ns_cap_unit *v = realloc(c->units, (c->n_units + 1) * sizeof(*v));
			if (!v) {
				free(dir);
				return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			}
			c->units = v;
			memset(&c->units[u], 0, sizeof(c->units[u]));
			c->units[u].dir = dir;
			c->n_units++;
			if (describe_unit(&c->units[u]))
				return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		} else {
			free(dir);
		}
		struct file_list ul = { c->units[u].files, c->units[u].n_files, c->units[u].n_files };
		if (cap_push_file(&ul, f))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		c->units[u].files = ul.v;
		c->units[u].n_files = ul.n;
		f->path = NULL; /* moved */
	}
	/* shared NEFFs join the units beside their folder */
	for (size_t s = 0; s < c->n_units; s++) {
		struct ns_cap_unit *src = &c->units[s];
		if (strcmp(cap_base_of(src->dir), "neffs") != 0)
			continue;
		char *parent = ns_capture_folder(src->dir);
		if (!parent)
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		for (size_t u = 0; u < c->n_units; u++) {
			struct ns_cap_unit *dst = &c->units[u];
			if (u == s || !under(dst->dir, parent))
				continue;
			for (size_t k = 0; k < src->n_files; k++) {
				struct ns_cap_file f = src->files[k];
				struct file_list ul = { dst->files, dst->n_files, dst->n_files };
				if (f.kind != NS_CAP_NEFF)
					continue;
				if (!(f.path = strdup(f.path)) || cap_push_file(&ul, &f)) {
					free(f.path);
					free(parent);
					return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
				}
				dst->files = ul.v;
				dst->n_files = ul.n;
			}
		}
		free(parent);
	}
	if (relocate(c))
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	for (size_t u = 0; u < c->n_units; u++) {
		if (o && o->export_root && add_converted(&c->units[u], o->export_root, err))
			return err->status;
		if (cap_finish_unit(&c->units[u]))
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	ns_sort(c->units, c->n_units, sizeof(*c->units), cmp_units);
	return 0;
}
