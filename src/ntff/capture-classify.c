/* Neuron capture files: what a file is, from its name and, for a *.json,
 * a sniff of its first bytes (docs/neuron.md "Capture directories";
 * neuron-formats.md §2); the rank a trace names. */
#include "ntff/capture-internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "ingest/source.h"
#include "neff/neff.h"

#define SNIFF_BYTES 65536

static const char *const kind_names[NS_CAP__COUNT] = {
	[NS_CAP_TRACE] = "framework trace",
	[NS_CAP_NEFF] = "NEFF",
	[NS_CAP_NTFF] = "NTFF",
	[NS_CAP_PB] = "runtime trace",
	[NS_CAP_SYSTEM_JSON] = "system-profile export",
	[NS_CAP_DEVICE_JSON] = "device-profile export",
	[NS_CAP_SUMMARY_JSON] = "summary-json export",
	[NS_CAP_PARQUET] = "Parquet export",
	[NS_CAP_PERFETTO] = "Perfetto export",
};

const char *ns_cap_kind_name(enum ns_cap_kind k)
{
	return k < NS_CAP__COUNT ? kind_names[k] : "";
}

/* Top-level keys that identify a JSON export (§3.4); the first match wins,
 * so Kineto's keys come first. */
static const struct {
	const char *key;
	enum ns_cap_kind kind;
} json_markers[] = {
	{ "traceEvents", NS_CAP_TRACE },
	{ "schemaVersion", NS_CAP_TRACE },
	{ "system_profile_metadata", NS_CAP_SYSTEM_JSON },
	{ "device_profile_list", NS_CAP_SYSTEM_JSON },
	{ "trace_event", NS_CAP_SYSTEM_JSON },
	{ "trace_events", NS_CAP_SYSTEM_JSON },
	{ "data_version", NS_CAP_SYSTEM_JSON }, /* nrt_sys_trace_fetch_events */
	{ "instruction", NS_CAP_DEVICE_JSON },
	{ "active_time", NS_CAP_DEVICE_JSON },
	{ "profile_info", NS_CAP_DEVICE_JSON },
	{ "layer_summary", NS_CAP_DEVICE_JSON },
	{ "dma", NS_CAP_DEVICE_JSON },
	{ "neff_node", NS_CAP_DEVICE_JSON },
	{ "summary", NS_CAP_DEVICE_JSON },
};

static const char *const pb_names[] = {
	[NS_PB_NTRACE] = "ntrace.pb",
	[NS_PB_TRACE_INFO] = "trace_info.pb",
	[NS_PB_CPU_UTIL] = "cpu_util.pb",
	[NS_PB_HOST_MEM] = "host_mem.pb",
};

bool cap_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Parses decimal digits at *p (advancing it); -1 if there are none. */
static int64_t digits(const char **p)
{
	int64_t v = 0;
	const char *s = *p;
	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) /* saturates: hashes are u64 text, kept as text */
		v = v < (INT64_MAX - 9) / 10 ? v * 10 + (*s - '0') : INT64_MAX;
	*p = s;
	return v;
}

/* Matches lit at *p (advancing it). */
static bool eat(const char **p, const char *lit)
{
	size_t n = strlen(lit);
	if (strncmp(*p, lit, n) != 0)
		return false;
	*p += n;
	return true;
}

void cap_copy_text(char *out, size_t n, const char *s, size_t len)
{
	if (len >= n)
		len = n - 1;
	memcpy(out, s, len);
	out[len] = '\0';
}

/* NTFF names of §2.2. */
static void parse_ntff_name(const char *name, struct ns_cap_file *f)
{
	size_t len = strlen(name) - 5; /* without ".ntff" */
	const char *p = name;
	int64_t a, b, c;
	cap_copy_text(f->stem, sizeof(f->stem), name, len);
	f->naming = NS_NTFF_OTHER;
	if (eat(&p, "profile_nc_") && (a = digits(&p)) >= 0 && eat(&p, "_session_") &&
	    (b = digits(&p)) >= 0 && strcmp(p, ".ntff") == 0) {
		f->naming = NS_NTFF_SESSION;
		f->nc = a;
		f->session = b;
		return;
	}
	p = name;
	const char *hash = p;
	if ((a = digits(&p)) >= 0) {
		size_t hash_len = (size_t)(p - hash);
		if (eat(&p, "_instid_") && (b = digits(&p)) >= 0 && eat(&p, "_vnc_") && (c = digits(&p)) >= 0 &&
		    strcmp(p, ".ntff") == 0) {
			f->naming = NS_NTFF_MODEL;
			cap_copy_text(f->hash, sizeof(f->hash), hash, hash_len);
			f->instid = b;
			f->nc = c;
		}
		return;
	}
	p = name;
	if (eat(&p, "profile")) {
		if (strcmp(p, ".ntff") == 0) {
			f->naming = NS_NTFF_CLI;
		} else if (eat(&p, "_rank_") && (a = digits(&p)) >= 0 && strcmp(p, ".ntff") == 0) {
			f->naming = NS_NTFF_CLI;
			f->cli_rank = a;
		} else if (eat(&p, "_exec_") && (a = digits(&p)) >= 0 && strcmp(p, ".ntff") == 0) {
			f->naming = NS_NTFF_CLI;
			f->exec = a;
		}
		return;
	}
	p = name;
	if (eat(&p, "model_") && digits(&p) >= 0 && eat(&p, "_pid_") && digits(&p) >= 0 && eat(&p, "_vnc_") &&
	    (a = digits(&p)) >= 0 && (*p == '_' || *p == '.')) {
		f->naming = NS_NTFF_CONTINUOUS;
		f->nc = a;
	}
}

/* Export names: "<ntff stem>__neff_<hash>[.summary].json" (what neuron-stats
 * converts to), "..._nc_<N>_session_<S>.json", "..._nc_<N>_model_<hash>.json". */
static void parse_export_name(const char *name, struct ns_cap_file *f)
{
	const char *sep = strstr(name, "__neff_");
	if (sep) {
		const char *h = sep + 7, *e = h;
		while (isalnum((unsigned char)*e))
			e++;
		cap_copy_text(f->stem, sizeof(f->stem), name, (size_t)(sep - name));
		cap_copy_text(f->hash, sizeof(f->hash), h, (size_t)(e - h));
		return;
	}
	const char *nc = NULL, *m = name;
	int64_t id;
	if (eat(&m, "device_profile_model_") && (id = digits(&m)) >= 0 && *m == '.') {
		f->model_id = id; /* the NEFF comes from model_name inside (sniff_model_name) */
		return;
	}
	for (const char *p = strstr(name, "_nc_"); p; p = strstr(p + 1, "_nc_"))
		nc = p;
	if (!nc)
		return;
	/* "<instance>_pid_<pid>_nc_...": whose process it is (neuron-explorer
	 * view -d writes these at the top of the capture folder) */
	const char *pid = strstr(name, "_pid_");
	if (pid && pid < nc && pid > name) {
		const char *q = pid + 5;
		int64_t v = digits(&q);
		if (v >= 0 && q == nc) {
			cap_copy_text(f->instance, sizeof(f->instance), name, (size_t)(pid - name));
			f->pid = v;
		}
	}
	const char *p = nc + 4;
	int64_t n = digits(&p), s;
	if (n < 0)
		return;
	if (eat(&p, "_session_") && (s = digits(&p)) >= 0) {
		f->nc = n;
		f->session = s;
	} else if (eat(&p, "_model_")) {
		const char *h = p;
		while (isalnum((unsigned char)*p))
			p++;
		f->nc = n;
		cap_copy_text(f->hash, sizeof(f->hash), h, (size_t)(p - h));
	}
}

/* A file that cannot be read is no capture file of its kind, but an
 * allocation that failed while reading it must not pass for that: the
 * sniffers below return -1 then (exit 6, not a file silently left out). */
static bool source_oom(const struct ns_error *err)
{
	return err->status == NS_ERR_NOMEM;
}

/* Reads up to SNIFF_BYTES (decompressed) of path into buf; *len: the
 * length. -1 on OOM. */
static int sniff(const char *path, char *buf, size_t *len)
{
	struct ns_source *src = NULL;
	struct ns_error err = { 0 };
	*len = 0;
	if (ns_source_open(path, 0, 0, &src, &err) == 0) {
		while (*len < SNIFF_BYTES) {
			ssize_t got = ns_source_read(src, buf + *len, SNIFF_BYTES - *len, &err);
			if (got <= 0)
				break;
			*len += (size_t)got;
		}
	}
	ns_source_close(src);
	buf[*len] = '\0';
	return source_oom(&err) ? -1 : 0;
}

static bool is_summary_id(const char *k, size_t len)
{
	if (len < 10 || (k[0] != 'n' && k[0] != 's') || k[1] != '_')
		return false;
	for (size_t i = 2; i < len; i++)
		if (!isxdigit((unsigned char)k[i]))
			return false;
	return true;
}

/* A streaming walk over the top-level keys of a JSON object: one byte at a
 * time, holding only the key being read (keys longer than the buffer match
 * nothing). */
struct key_walk {
	int depth;
	bool in_str, esc, want_key, in_key, started, not_object;
	char key[64];
	size_t key_len;
	bool key_long;
};

/* Feeds one byte; true when it completed a top-level key (in w->key). */
static bool key_walk_byte(struct key_walk *w, char c)
{
	if (w->in_str) {
		if (w->esc) {
			w->esc = false;
		} else if (c == '\\') {
			w->esc = true;
		} else if (c == '"') {
			w->in_str = false;
			if (w->in_key) {
				w->in_key = false;
				return !w->key_long;
			}
			return false;
		}
		if (w->in_key) {
			if (w->key_len + 1 < sizeof(w->key))
				w->key[w->key_len++] = c;
			else
				w->key_long = true;
			w->key[w->key_len] = '\0';
		}
		return false;
	}
	if (isspace((unsigned char)c))
		return false;
	if (!w->started) {
		w->started = true;
		w->not_object = c != '{';
	}
	switch (c) {
	case '"':
		w->in_str = true;
		if (w->depth == 1 && w->want_key) {
			w->in_key = true;
			w->want_key = false;
			w->key_len = 0;
			w->key_long = false;
			w->key[0] = '\0';
		}
		break;
	case '{':
	case '[':
		if (++w->depth == 1)
			w->want_key = c == '{';
		break;
	case '}':
	case ']':
		w->depth--;
		break;
	case ',':
		w->want_key = w->depth == 1;
		break;
	default:
		break;
	}
	return false;
}

/* The export kind from the top-level keys (docs/neuron.md "File names"):
 * a node id as the first key is summary-json; otherwise the best marker
 * among the keys of the first SNIFF_BYTES, else the first marker after
 * them, at any position in the file (read streaming, to its end if need
 * be: a fetch-events export may hold megabytes of events before its
 * data_version, a sorted system export its cpu_util before the rest). */
static int sniff_json(const char *path, enum ns_cap_kind *kind_out)
{
	enum { N_MARKERS = NS_ARRAY_SIZE(json_markers) };
	struct ns_source *src = NULL;
	struct ns_error err = { 0 };
	struct key_walk w = { 0 };
	char *buf = malloc(SNIFF_BYTES);
	size_t best = N_MARKERS, keys = 0;
	uint64_t at = 0;
	enum ns_cap_kind kind = NS_CAP__COUNT;
	if (!buf)
		err.status = NS_ERR_NOMEM;
	if (!buf || ns_source_open(path, 0, 0, &src, &err) != 0)
		goto out;
	for (;;) {
		ssize_t got = ns_source_read(src, buf, SNIFF_BYTES, &err);
		if (got <= 0)
			break;
		for (ssize_t i = 0; i < got; i++) {
			if (!key_walk_byte(&w, buf[i])) {
				if (w.not_object || (w.started && w.depth == 0))
					goto decide;
				continue;
			}
			if (keys++ == 0 && is_summary_id(w.key, w.key_len)) {
				kind = NS_CAP_SUMMARY_JSON;
				goto out;
			}
			for (size_t m = 0; m < best; m++)
				if (strcmp(json_markers[m].key, w.key) == 0)
					best = m;
			/* the first marker is the best there is: a Kineto trace is known
			 * at its traceEvents key, not 64 KiB later (a directory of
			 * ranks is classified one file after another) */
			if (best == 0 || (best < N_MARKERS && at + (uint64_t)i >= SNIFF_BYTES))
				goto decide;
		}
		at += (uint64_t)got;
		if (best < N_MARKERS && at >= SNIFF_BYTES)
			break;
	}
decide:
	if (best < N_MARKERS)
		kind = json_markers[best].kind;
out:
	ns_source_close(src);
	free(buf);
	*kind_out = kind;
	return source_oom(&err) ? -1 : 0;
}

/* Explorer writes a processed profile as a folder of tables (parquet.c,
 * pqexport.c). Its one-row metadata table stands for the whole folder: a
 * device-profile export (Metadata.parquet) or a system-profile export
 * (SystemProfileMetadata.parquet), named after the folder
 * ("<ntff stem>__neff_<hash>[@latest]", as --output-file DIR writes it).
 * The folder's other tables are part of that export (not listed); a table
 * in a folder without one is a Parquet file (listed, not read). */
bool cap_parquet_anchor(const char *name, enum ns_cap_kind *kind)
{
	if (strcmp(name, "Metadata.parquet") == 0)
		*kind = NS_CAP_DEVICE_JSON;
	else if (strcmp(name, "SystemProfileMetadata.parquet") == 0)
		*kind = NS_CAP_SYSTEM_JSON;
	else
		return false;
	return true;
}

static enum ns_cap_kind parquet_profile_kind(const char *path, const char *name, struct ns_cap_file *f)
{
	enum ns_cap_kind kind;
	char folder[256];
	if (!cap_parquet_anchor(name, &kind))
		return NS_CAP_PARQUET;
	if (kind == NS_CAP_DEVICE_JSON && name > path + 1) {
		const char *end = name - 1, *start = end;
		while (start > path && start[-1] != '/')
			start--;
		cap_copy_text(folder, sizeof(folder), start, (size_t)(end - start));
		char *at = strstr(folder, "@latest");
		if (at)
			*at = '\0';
		parse_export_name(folder, f);
	}
	return kind;
}

/* The NEFF of a device export whose name does not say it: the first
 * "model_name" string holding a NEFF path (AWS's exports carry the path
 * there), read streaming; hash "" when there is none. -1 on OOM. */
static int sniff_model_name(const char *path, char *hash, size_t n)
{
	static const char key[] = "\"model_name\"";
	enum { KEEP = 1024 };
	struct ns_source *src = NULL;
	struct ns_error err = { 0 };
	char *buf = malloc(SNIFF_BYTES + KEEP + 1);
	size_t have = 0;
	hash[0] = '\0';
	if (!buf)
		err.status = NS_ERR_NOMEM;
	if (!buf || ns_source_open(path, 0, 0, &src, &err) != 0)
		goto out;
	for (;;) {
		ssize_t got = ns_source_read(src, buf + have, SNIFF_BYTES, &err);
		if (got <= 0)
			break;
		have += (size_t)got;
		buf[have] = '\0';
		for (const char *k = memmem(buf, have, key, sizeof(key) - 1); k;
		     k = memmem(k + 1, have - (size_t)(k + 1 - buf), key, sizeof(key) - 1)) {
			const char *v = k + sizeof(key) - 1, *end = buf + have;
			while (v < end && (isspace((unsigned char)*v) || *v == ':'))
				v++;
			const char *close = v < end && *v == '"' ? memchr(v + 1, '"', (size_t)(end - v - 1)) : NULL;
			if (!close)
				continue; /* cut by the read (looked at again with the next) or not a string */
			if (memmem(v + 1, (size_t)(close - v - 1), ".neff", 5)) {
				ns_neff_hash_normalize(v + 1, (size_t)(close - v - 1), hash, n);
				goto out;
			}
		}
		/* keep the tail: a key or value cut by the read */
		if (have > KEEP) {
			memmove(buf, buf + have - KEEP, KEEP);
			have = KEEP;
		}
	}
out:
	ns_source_close(src);
	free(buf);
	return source_oom(&err) ? -1 : 0;
}

int ns_capture_classify(const char *path, struct ns_cap_file *f, struct ns_error *err)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	struct ns_neff_filename nf;
	memset(f, 0, sizeof(*f));
	f->nc = f->session = f->instid = f->cli_rank = f->exec = f->model_id = f->pid = -1;
	if (cap_ends_with(name, ".neff")) {
		f->kind = NS_CAP_NEFF;
		if (ns_neff_parse_filename(name, &nf)) {
			snprintf(f->hash, sizeof(f->hash), "%s", nf.hash);
			f->nc = nf.vnc;
		}
	} else if (cap_ends_with(name, ".ntff")) {
		f->kind = NS_CAP_NTFF;
		parse_ntff_name(name, f);
	} else if (cap_ends_with(name, ".pb")) {
		f->kind = NS_CAP_PB;
		f->naming = NS_PB_OTHER;
		for (size_t i = 0; i < NS_ARRAY_SIZE(pb_names); i++)
			if (strcmp(name, pb_names[i]) == 0)
				f->naming = (uint8_t)i;
	} else if (cap_ends_with(name, ".parquet")) {
		f->kind = parquet_profile_kind(path, name, f);
	} else if (cap_ends_with(name, ".pftrace")) {
		f->kind = NS_CAP_PERFETTO;
	} else if (cap_ends_with(name, ".json") || cap_ends_with(name, ".json.gz") || cap_ends_with(name, ".json.zst")) {
		if (sniff_json(path, &f->kind))
			goto oom;
		if (f->kind == NS_CAP__COUNT)
			return 0;
		if (f->kind == NS_CAP_DEVICE_JSON || f->kind == NS_CAP_SUMMARY_JSON)
			parse_export_name(name, f);
		if (f->kind == NS_CAP_DEVICE_JSON && !f->stem[0] && !f->hash[0] && f->session < 0 &&
		    sniff_model_name(path, f->hash, sizeof(f->hash)))
			goto oom;
	} else {
		return 0;
	}
	return 1;
oom:
	ns_error_set(err, NS_ERR_NOMEM, "%s: out of memory", path);
	return -1;
}

/* distributedInfo.rank of the trace at path into *rank (-1 if none); -1
 * on OOM. */
int cap_sniff_rank(const char *path, int64_t *rank)
{
	char *buf = malloc(SNIFF_BYTES + 1);
	size_t n;
	*rank = -1;
	if (!buf || sniff(path, buf, &n)) {
		free(buf);
		return -1;
	}
	const char *di = memmem(buf, n, "\"distributedInfo\"", 17);
	if (di) {
		const char *end = memchr(di, '}', n - (size_t)(di - buf));
		const char *r = memmem(di, (size_t)((end ? end : buf + n) - di), "\"rank\"", 6);
		if (r) {
			r += 6;
			while (*r == ' ' || *r == ':' || *r == '\t' || *r == '\n' || *r == '\r')
				r++;
			*rank = digits(&r);
		}
	}
	free(buf);
	return 0;
}
