/* The result cache (docs/cli.md "Cache"): a command that prints a result
 * from traces is keyed by its options, the program, the environment and
 * the identity of its input files (pipeline/cache.c); a repeated run
 * replays the bytes and the exit code the first one gave, without parsing.
 * On a miss, standard output and error are teed (fopencookie) into a
 * memory log of records in the order written, stored when the command
 * succeeded (exit 0, or 4: a regression found). Progress lines bypass the
 * log (ns_cli_progress_stream). A page written to a file (html -o FILE) is
 * the entry's last record, written again through outfile.c on a hit: the
 * FILE is not in the key, only that there is one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pipeline/cache.h"

#define MAX_LOG (64u << 20) /* a bigger output is not cached */

struct capture {
	FILE *out, *err;    /* the real streams */
	unsigned char *log;
	size_t len, cap;
	bool dropped;       /* too big or out of memory: not stored */
};

static struct capture *active; /* while a miss runs */

FILE *ns_cli_progress_stream(void)
{
	return active ? active->err : stderr;
}

static void record(struct capture *c, enum ns_result_stream stream, const char *buf, size_t n)
{
	size_t need = c->len + NS_RESULT_RECORD_HEAD + n;
	if (c->dropped || n == 0)
		return;
	if (n > MAX_LOG || need > MAX_LOG) {
		c->dropped = true;
		return;
	}
	if (need > c->cap) {
		size_t cap = need * 2;
		unsigned char *grown = realloc(c->log, cap);
		if (!grown) {
			c->dropped = true;
			return;
		}
		c->log = grown;
		c->cap = cap;
	}
	ns_result_record_head(c->log + c->len, stream, (uint32_t)n);
	memcpy(c->log + c->len + NS_RESULT_RECORD_HEAD, buf, n);
	c->len = need;
}

/* The tees: the bytes go to the real stream (unbuffered: its errors show
 * at once, as fflush(stdout) would see them) and into the log. */
static ssize_t tee_out(void *ctx, const char *buf, size_t n)
{
	struct capture *c = ctx;
	record(c, NS_RESULT_STDOUT, buf, n);
	return fwrite(buf, 1, n, c->out) == n ? (ssize_t)n : -1;
}

static ssize_t tee_err(void *ctx, const char *buf, size_t n)
{
	struct capture *c = ctx;
	record(c, NS_RESULT_STDERR, buf, n);
	return fwrite(buf, 1, n, c->err) == n ? (ssize_t)n : -1;
}

static int close_out(void *ctx)
{
	struct capture *c = ctx;
	return fclose(c->out) == 0 ? 0 : -1;
}

/* The spec's option of a "--long[=v]" or "-s[v]" word; NULL if none. */
static const struct ns_opt *find_opt(const struct ns_opt *opts, const char *a)
{
	for (const struct ns_opt *o = opts; o->type != NS_OPT_END; o++) {
		size_t len = o->long_name ? strlen(o->long_name) : 0;
		if (a[1] == '-' ? o->long_name && strncmp(a + 2, o->long_name, len) == 0 &&
					  (a[2 + len] == '\0' || a[2 + len] == '=')
				: o->short_name && a[1] == o->short_name)
			return o;
	}
	return NULL;
}

/* The words of argv that make the key (--jobs left out: the output is the
 * same for any; html's -o FILE as "--output", FILE in *out_file) and the
 * inputs; false when the run is not cached: --help, --no-cache, another
 * file option, a usage error for the command. */
static bool key_words(const struct ns_command *c, int argc, char **argv, char **words, size_t *n_words,
		      char **inputs, const char **out_file)
{
	static char output_word[] = "--output";
	size_t n = 0, n_pos = 0;
	bool options_done = false;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (options_done || a[0] != '-' || a[1] == '\0') {
			if (n_pos < c->cache_inputs)
				inputs[n_pos] = a;
			n_pos++;
			words[n++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			options_done = true;
			continue;
		}
		const struct ns_opt *o = find_opt(c->spec->opts, a);
		if (!o || !o->long_name || strcmp(o->long_name, "no-cache") == 0 ||
		    (o->complete == NS_COMPLETE_FILE && strcmp(o->long_name, "output") != 0))
			return false;
		bool attached = a[1] == '-' ? strchr(a, '=') != NULL : a[2] != '\0';
		bool takes = o->type != NS_OPT_FLAG;
		if (takes && !attached && ++i >= argc)
			return false;
		if (strcmp(o->long_name, "jobs") == 0)
			continue;
		if (o->complete == NS_COMPLETE_FILE) {
			*out_file = !attached ? argv[i] : a[1] == '-' ? strchr(a, '=') + 1 : a + 2;
			words[n++] = output_word;
			continue;
		}
		words[n++] = a;
		if (takes && !attached)
			words[n++] = argv[i];
	}
	*n_words = n;
	return n_pos == c->cache_inputs;
}

/* The page of a hit (html -o FILE) to target, through a temporary file. */
static int write_file(const char *target, const unsigned char *bytes, size_t n, struct ns_error *err)
{
	struct ns_cli_outfile of;
	int rc = ns_cli_outfile_open(&of, target, err);
	if (!rc) {
		fwrite(bytes, 1, n, of.f);
		rc = ns_cli_outfile_commit(&of, err);
	}
	return rc;
}

/* A hit: the log written as it was, the entry marked as used. As the
 * command does, -o FILE is checked against the input before anything. */
static int replay(const struct ns_result *r, const char *entry, const char *out_file, const char *input,
		  int (*finish)(int))
{
	struct ns_error err = { 0 };
	char *target = NULL;
	int code = r->code;
	if (out_file && ns_cli_outfile_check(out_file, input, &target, &err))
		return finish(ns_cli_fail(&err));
	for (size_t at = 0; at < r->len;) {
		const unsigned char *rec = r->log + at, *bytes = rec + NS_RESULT_RECORD_HEAD;
		size_t n = ns_result_record_len(rec);
		at += NS_RESULT_RECORD_HEAD + n;
		if (rec[0] == NS_RESULT_FILE) {
			if (target && write_file(target, bytes, n, &err)) {
				code = ns_cli_fail(&err);
				break;
			}
			continue;
		}
		if (rec[0] == NS_RESULT_STDERR)
			fflush(stdout); /* (the order of the first run) */
		fwrite(bytes, 1, n, rec[0] == NS_RESULT_STDOUT ? stdout : stderr);
	}
	free(target);
	ns_cache_touch(entry);
	return finish(code);
}

/* After a miss that wrote out_file: its bytes, the log's last record (a
 * file over the log's limit is not cached, as a larger output is not). */
static void record_file(struct capture *cap, const char *out_file)
{
	struct stat st;
	FILE *f = fopen(out_file, "rb");
	bool sized = f && fstat(fileno(f), &st) == 0 && st.st_size >= 0 && st.st_size < MAX_LOG;
	size_t size = sized ? (size_t)st.st_size : 0;
	unsigned char *bytes = sized ? malloc(size + 1) : NULL;
	if (bytes && fread(bytes, 1, size + 1, f) == size)
		record(cap, NS_RESULT_FILE, (const char *)bytes, size);
	else
		cap->dropped = true;
	free(bytes);
	if (f)
		fclose(f);
}

/* After a miss that succeeded: the entry written, the folder pruned. */
static void store(const char *entry, const char *key, size_t key_len, int code, const struct capture *cap)
{
	struct ns_error err = { 0 }, warn = { 0 };
	if (ns_result_write(entry, key, key_len, code, cap->log, cap->len, &err) == 0) {
		ns_pipeline_cache_written(entry, &warn);
		ns_cli_warn(&warn);
	} else if (err.status != NS_ERR_NOMEM) {
		ns_error_set(&warn, NS_ERR_IO, "the cache is not written: %s", err.msg);
		ns_cli_warn(&warn);
	}
}

/* A miss: the command run with its output teed into cap's log. */
static int run_captured(const struct ns_command *c, int argc, char **argv, int (*finish)(int), const char *entry,
			const char *key, size_t key_len, const char *out_file)
{
	static char out_buf[1 << 16]; /* (not allocated: a failed allocation fails no write) */
	struct capture cap = { .out = stdout, .err = stderr };
	/* (err first: closing out would close the real stdout) */
	FILE *err = fopencookie(&cap, "w", (cookie_io_functions_t){ .write = tee_err });
	FILE *out = err ? fopencookie(&cap, "w", (cookie_io_functions_t){ .write = tee_out, .close = close_out }) : NULL;
	if (!out) {
		if (err)
			fclose(err);
		return finish(c->run(argc, argv));
	}
	setvbuf(cap.out, NULL, _IONBF, 0);
	setvbuf(out, out_buf, isatty(1) ? _IOLBF : _IOFBF, sizeof(out_buf));
	setvbuf(err, NULL, _IONBF, 0);
	stdout = out;
	stderr = err;
	active = &cap;
	int code = finish(c->run(argc, argv)); /* (closes out, and with it the real stdout) */
	stdout = cap.out; /* (closed, as finish leaves it without the cache; out is freed) */
	stderr = cap.err;
	active = NULL;
	fclose(err);
	if (out_file && code == NS_EXIT_OK)
		record_file(&cap, out_file);
	if ((code == NS_EXIT_OK || code == NS_EXIT_REGRESSION) && !cap.dropped)
		store(entry, key, key_len, code, &cap);
	free(cap.log);
	return code;
}

int ns_cli_run_cached(const struct ns_command *c, int argc, char **argv, int (*finish)(int))
{
	char **words = calloc((size_t)argc + 1, sizeof(*words)), *inputs[2] = { NULL, NULL };
	char *key = NULL, *entry = NULL;
	const char *out_file = NULL;
	size_t n_words = 0, key_len = 0;
	struct ns_result r;
	int code;
	if (!words || c->cache_inputs == 0 || c->cache_inputs > 2 || !key_words(c, argc, argv, words, &n_words, inputs, &out_file) ||
	    !(key = ns_pipeline_result_key(c->spec->name, words, n_words, inputs, c->cache_inputs, &key_len)) ||
	    !(entry = ns_pipeline_result_entry(key, key_len))) {
		code = finish(c->run(argc, argv));
	} else if (ns_result_read(entry, key, key_len, &r) == 0) {
		code = replay(&r, entry, out_file, inputs[0], finish);
		ns_result_release(&r);
	} else {
		code = run_captured(c, argc, argv, finish, entry, key, key_len, out_file);
	}
	free(words);
	free(key);
	free(entry);
	return code;
}
