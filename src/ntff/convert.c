/* The neuron-explorer (or neuron-profile) command lines that turn a
 * capture's raw files into the JSON exports this tool reads
 * (neuron-formats.md §3.3). Built here, run by src/cli/. */
#include "ntff/ntff.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYSTEM_EXPORT "system_profile.json"

struct list {
	struct ns_ntff_cmd *v;
	size_t n;
};

/* Appends a command from NULL-terminated argv strings (copied). */
static int add_cmd(struct list *l, const char *stdout_path, const char *output, ...)
{
	struct ns_ntff_cmd *grown = realloc(l->v, (l->n + 1) * sizeof(*grown));
	struct ns_ntff_cmd *c;
	va_list ap;
	int argc = 0, rc = 0;
	if (!grown)
		return -1;
	l->v = grown;
	c = &l->v[l->n++];
	memset(c, 0, sizeof(*c));
	va_start(ap, output);
	for (const char *a; (a = va_arg(ap, const char *)) != NULL && argc < 15;)
		if (!(c->argv[argc++] = strdup(a)))
			rc = -1;
	va_end(ap);
	if ((stdout_path && !(c->stdout_path = strdup(stdout_path))) || !(c->output = strdup(output)))
		rc = -1;
	return rc;
}

int ns_ntff_commands(const struct ns_cap_unit *u, const char *tool, const char *outdir, unsigned what,
		     struct ns_ntff_cmd **out, size_t *n, struct ns_error *err)
{
	struct list l = { 0 };
	char *path = NULL, *sum = NULL;
	bool ntrace = false;
	int rc = 0;
	*out = NULL;
	*n = 0;
	for (size_t k = 0; k < u->n_files; k++)
		ntrace |= u->files[k].kind == NS_CAP_PB && u->files[k].naming == NS_PB_NTRACE;
	if ((what & NS_CONV_SYSTEM) && ntrace && u->system_json < 0) {
		if (asprintf(&path, "%s/%s", outdir, SYSTEM_EXPORT) < 0 ||
		    add_cmd(&l, NULL, path, tool, "view", "-d", u->dir, "--output-format", "json",
			    "--ignore-device-profile", "--output-file", path, (char *)NULL))
			rc = -1;
		free(path);
		path = NULL;
	}
	for (size_t p = 0; !rc && (what & NS_CONV_DEVICE) && p < u->n_pairs; p++) {
		const struct ns_cap_pair *pr = &u->pairs[p];
		const struct ns_cap_file *neff = &u->files[pr->neff], *ntff = &u->files[pr->ntff];
		/* the name records the pair, so discovery pairs the exports back */
		if (asprintf(&path, "%s/%s__neff_%s.json", outdir, ntff->stem, neff->hash) < 0 ||
		    asprintf(&sum, "%s/%s__neff_%s.summary.json", outdir, ntff->stem, neff->hash) < 0)
			rc = -1;
		if (!rc && pr->device_json < 0 &&
		    add_cmd(&l, NULL, path, tool, "view", "-n", neff->path, "-s", ntff->path, "--output-format", "json",
			    "--output-file", path, (char *)NULL))
			rc = -1;
		if (!rc && pr->summary_json < 0 &&
		    add_cmd(&l, sum, sum, tool, "view", "-n", neff->path, "-s", ntff->path, "--output-format",
			    "summary-json", (char *)NULL))
			rc = -1;
		free(path);
		free(sum);
		path = sum = NULL;
	}
	if (rc) {
		ns_ntff_cmds_free(l.v, l.n);
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

void ns_ntff_cmds_free(struct ns_ntff_cmd *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (int a = 0; a < 16 && c[i].argv[a]; a++)
			free(c[i].argv[a]);
		free(c[i].stdout_path);
		free(c[i].output);
	}
	free(c);
}

/* A command line being built: measured first (buf NULL), then written. */
struct line {
	char *buf;
	size_t len;
};

static void put(struct line *l, const char *s, size_t n)
{
	if (l->buf)
		memcpy(l->buf + l->len, s, n);
	l->len += n;
}

/* Appends s to the line, single-quoted if it holds shell metacharacters. */
static void put_word(struct line *l, const char *s)
{
	if (*s && !strpbrk(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!")) {
		put(l, s, strlen(s));
		return;
	}
	put(l, "'", 1);
	for (; *s; s++) {
		if (*s == '\'')
			put(l, "'\\''", 4);
		else
			put(l, s, 1);
	}
	put(l, "'", 1);
}

static void put_cmd(struct line *l, const struct ns_ntff_cmd *c)
{
	for (int a = 0; a < 16 && c->argv[a]; a++) {
		if (a)
			put(l, " ", 1);
		put_word(l, c->argv[a]);
	}
	if (c->stdout_path) {
		put(l, " > ", 3);
		put_word(l, c->stdout_path);
	}
}

char *ns_ntff_cmd_text(const struct ns_ntff_cmd *c)
{
	struct line l = { NULL, 0 };
	put_cmd(&l, c);
	if (!(l.buf = malloc(l.len + 1)))
		return NULL;
	l.len = 0;
	put_cmd(&l, c);
	l.buf[l.len] = '\0';
	return l.buf;
}
