/* The streaming JSON scanner (src/ingest/json/scan.c) on its own, as the export
 * readers (src/ingest/json/walk.c) and the trace parser use it: peek, value,
 * advance over any token sequence, plus the span primitives on each value.
 *
 * Properties: the token sequence (offsets and lengths) is the same whether
 * the source hands out the input whole or in pieces of 1..64 bytes; a value
 * span is what ns_json_skip_value accepts or rejects as a whole; unescaping
 * a string never writes more bytes than its body has (ASan sees the
 * exact-size buffer). */
#include <string.h>

#include "fuzz.h"
#include "ingest/json/scan.h"
#include "ingest/source.h"

#define MAX_TOKENS 4096

struct token {
	uint64_t offset, len;
	int kind; /* the first byte, or -1 for a truncated value */
};

static void check_value(const char *p, size_t n)
{
	if (n == 0)
		return;
	size_t e = ns_json_skip_value(p, n, 0, 1);
	FUZZ_CHECK(e <= n, "skip_value went past the span (%zu > %zu)", e, n);
	if (p[0] == '"') {
		bool esc;
		size_t end = ns_json_string_end(p, n, 0, &esc);
		FUZZ_CHECK(end == n, "a string span that is not one string (%zu of %zu)", end, n);
		size_t body = n - 2;
		char *out = malloc(body ? body : 1);
		FUZZ_CHECK(out != NULL, "malloc");
		size_t got = ns_json_unescape(p + 1, body, out);
		FUZZ_CHECK(got <= body, "unescape grew %zu -> %zu", body, got);
		free(out);
	}
}

/* Walks the input; returns the number of tokens written to toks. */
static size_t walk(const uint8_t *data, size_t size, size_t chunk, struct token *toks, char *msg, size_t msg_n)
{
	struct ns_source *src = NULL;
	struct ns_scan sc;
	struct ns_error err = { 0 };
	size_t n = 0;
	msg[0] = '\0';
	if (ns_source_open_mem(data, size, "fuzz.json", 64u << 20, UINT32_MAX, &src, &err)) {
		snprintf(msg, msg_n, "%s", err.msg);
		return 0;
	}
	ns_source_set_max_read(src, chunk);
	if (ns_scan_init(&sc, "fuzz.json", src, &err)) {
		ns_source_close(src);
		return 0;
	}
	while (n < MAX_TOKENS) {
		int c = ns_scan_peek(&sc, &err);
		if (c == -1)
			break;
		if (c == -2) {
			snprintf(msg, msg_n, "%s", err.msg);
			break;
		}
		if (c == 0) {
			int r = ns_scan_rest_is_nul(&sc, &err);
			if (r < 0) {
				snprintf(msg, msg_n, "%s", err.msg);
				break;
			}
			toks[n++] = (struct token){ sc.base + sc.pos, (uint64_t)r, 0 };
			if (r != 0)
				break;
			continue; /* now at the first byte after the NULs */
		}
		if (strchr("{}[],:", c)) {
			char where[256];
			ns_scan_where(&sc, sc.pos, where, sizeof(where));
			toks[n++] = (struct token){ sc.base + sc.pos, fuzz_hash((const uint8_t *)where, strlen(where)), c };
			ns_scan_advance(&sc, 1);
			continue;
		}
		size_t start, end;
		int rc = ns_scan_value(&sc, &start, &end, &err);
		if (rc == NS_SCAN_TRUNCATED) {
			toks[n++] = (struct token){ sc.base + sc.pos, 0, -1 };
			break;
		}
		if (rc) {
			snprintf(msg, msg_n, "%s", err.msg);
			break;
		}
		FUZZ_CHECK(start <= end && end <= sc.len && start == sc.pos, "bad span %zu..%zu (pos %zu len %zu)",
			   start, end, sc.pos, sc.len);
		check_value(sc.buf + start, end - start);
		toks[n++] = (struct token){ sc.base + start, end - start, (unsigned char)sc.buf[start] };
		ns_scan_advance(&sc, end > start ? end - sc.pos : 1);
	}
	ns_scan_release(&sc);
	ns_source_close(src);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct token a[MAX_TOKENS], b[MAX_TOKENS];
	char msg_a[1024], msg_b[1024];
	/* larger pieces for large inputs: a value cut across reads is rescanned */
	size_t chunk = 1 + fuzz_hash(data, size) % 64 + size / 256;
	size_t na = walk(data, size, 0, a, msg_a, sizeof(msg_a));
	size_t nb = walk(data, size, chunk, b, msg_b, sizeof(msg_b));
	/* A value over the size cap is refused at a point that depends on the
	 * reads; a corrupt compressed stream is noticed after a number of bytes
	 * that does too (zstd checks its checksum at the end of a frame). */
	if (strstr(msg_a, "exceeds") || strstr(msg_b, "exceeds") || strstr(msg_a, "corrupt") ||
	    strstr(msg_b, "corrupt"))
		return 0;
	for (size_t i = 0; i < na && i < nb; i++)
		FUZZ_CHECK(a[i].offset == b[i].offset && a[i].len == b[i].len && a[i].kind == b[i].kind,
			   "token %zu: @%llu+%llu '%c' whole, @%llu+%llu '%c' in pieces of %zu", i,
			   (unsigned long long)a[i].offset, (unsigned long long)a[i].len, a[i].kind,
			   (unsigned long long)b[i].offset, (unsigned long long)b[i].len, b[i].kind, chunk);
	FUZZ_CHECK(na == nb, "%zu tokens whole, %zu in pieces of %zu", na, nb, chunk);
	FUZZ_CHECK(strcmp(msg_a, msg_b) == 0, "'%s' whole, '%s' in pieces", msg_a, msg_b);
	return 0;
}
