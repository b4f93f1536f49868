/* summary-json (neuron-formats.md §3.4b): an object keyed by profile node
 * id ("n_<hex>" device, "s_<hex>" system), each a flat dict of Summary
 * fields. Times are seconds unless the key ends in _ns; *_percent values
 * are fractions when every one of them is <= 1 (docs/neuron.md). */
#include "ntff/ntff-internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

/* Key suffixes whose values must be numbers. */
static const char *const numeric_suffixes[] = { "_time", "_ns", "_percent", "_count", "_bytes", "_flops" };

static const char *const engine_keys[NS_ENG__COUNT] = {
	[NS_ENG_PE] = "tensor_engine_active_time",  [NS_ENG_ACT] = "scalar_engine_active_time",
	[NS_ENG_DVE] = "vector_engine_active_time", [NS_ENG_POOL] = "gpsimd_engine_active_time",
	[NS_ENG_SP] = "sync_engine_active_time",    [NS_ENG_DMA] = "dma_active_time",
};

const char *ns_summary_engine_key(enum ns_engine e)
{
	return e < NS_ENG__COUNT ? engine_keys[e] : "";
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* "n_<hex>" / "s_<hex>" profile node ids. */
static bool is_node_id(const char *k)
{
	size_t len = strlen(k);
	if (len < 4 || (k[0] != 'n' && k[0] != 's') || k[1] != '_')
		return false;
	for (size_t i = 2; i < len; i++)
		if (!isxdigit((unsigned char)k[i]))
			return false;
	return true;
}

static int add_node(struct ns_summary *s, const char *id, struct ns_kv *kv, size_t n_kv)
{
	struct ns_summary_node *v = realloc(s->nodes, (s->n_nodes + 1) * sizeof(*v));
	if (!v)
		return -1;
	s->nodes = v;
	struct ns_summary_node *node = &s->nodes[s->n_nodes++];
	memset(node, 0, sizeof(*node));
	snprintf(node->id, sizeof(node->id), "%s", id);
	node->kv = kv;
	node->n_kv = n_kv;
	return 0;
}

static int on_key(void *ctx, const char *key)
{
	(void)ctx;
	(void)key;
	return NS_JS_VALUE;
}

static int check_numbers(struct ns_summary *s, const struct ns_summary_node *node, uint64_t offset)
{
	for (size_t i = 0; i < node->n_kv; i++) {
		const struct ns_kv *kv = &node->kv[i];
		for (size_t k = 0; k < NS_ARRAY_SIZE(numeric_suffixes); k++)
			if (!kv->is_num && ends_with(kv->key, numeric_suffixes[k]) &&
			    note_add(&s->notes, s->path, offset, "%s: \"%s\" is not a number; ignored", node->id, kv->key))
				return -1;
	}
	return 0;
}

static int on_value(void *ctx, const char *key, const struct ns_jv *v, uint64_t offset, struct ns_error *err)
{
	struct ns_summary *s = ctx;
	struct ns_kv *kv = NULL;
	size_t n = 0;
	if (v->type != 'o' && is_node_id(key))
		return note_add(&s->notes, s->path, offset, "%s: not an object; skipped", key)
			       ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
	if (v->type != 'o') {
		/* a flat dict (no node ids): its fields form one node "" */
		struct ns_summary_node *flat = s->n_nodes && !s->nodes[s->n_nodes - 1].id[0] ? &s->nodes[s->n_nodes - 1] : NULL;
		if (!flat) {
			if (add_node(s, "", NULL, 0))
				return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
			flat = &s->nodes[s->n_nodes - 1];
		}
		struct ns_kv *grown = realloc(flat->kv, (flat->n_kv + 1) * sizeof(*grown));
		if (!grown)
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		flat->kv = grown;
		struct ns_kv *e = &flat->kv[flat->n_kv];
		long double d;
		e->key = strdup(key);
		e->text = ns_jv_strdup(v);
		if (!e->key || !e->text) {
			free(e->key);
			free(e->text);
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		}
		e->is_num = ns_jv_num(v, &d);
		e->num = e->is_num ? (double)d : 0;
		flat->n_kv++;
		return 0;
	}
	int rc = kv_from_object(v, &kv, &n);
	if (rc == -2)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	if (rc)
		return note_add(&s->notes, s->path, offset, "%s: not a valid object; skipped", key)
			       ? ns_error_set(err, NS_ERR_NOMEM, "out of memory") : 0;
	if (add_node(s, key, kv, n)) {
		kv_free(kv, n);
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	}
	if (check_numbers(s, &s->nodes[s->n_nodes - 1], offset))
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory");
	return 0;
}

int ns_summary_read(const char *path, struct ns_summary **out, struct ns_error *err)
{
	static const struct ns_json_stream_cb cb = { on_key, NULL, on_value };
	struct ns_summary *s = calloc(1, sizeof(*s));
	bool any_percent = false, all_fraction = true;
	int rc;
	*out = NULL;
	if (!s || !(s->path = strdup(path))) {
		rc = ns_error_set(err, NS_ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = jstream_file(path, &cb, s, &s->truncated_at, err)))
		goto out;
	for (size_t i = 0; i < s->n_nodes; i++)
		for (size_t k = 0; k < s->nodes[i].n_kv; k++) {
			const struct ns_kv *kv = &s->nodes[i].kv[k];
			if (kv->is_num && ends_with(kv->key, "_percent")) {
				any_percent = true;
				all_fraction &= fabs(kv->num) <= 1.0;
			}
		}
	s->percent_is_fraction = any_percent && all_fraction;
	*out = s;
	s = NULL;
out:
	ns_summary_free(s);
	return rc;
}

void ns_summary_free(struct ns_summary *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_nodes; i++)
		kv_free(s->nodes[i].kv, s->nodes[i].n_kv);
	free(s->nodes);
	notes_release(&s->notes);
	free(s->path);
	free(s);
}

bool ns_summary_time_ns(const struct ns_summary_node *n, const char *key, int64_t *out)
{
	const struct ns_kv *kv = kv_find(n->kv, n->n_kv, key);
	if (!kv || !kv->is_num)
		return false;
	if (ends_with(key, "_ns"))
		*out = (int64_t)llround(kv->num);
	else if (ends_with(key, "_time"))
		*out = (int64_t)llround(kv->num * 1e9);
	else
		return false;
	return true;
}

bool ns_summary_percent(const struct ns_summary *s, const struct ns_summary_node *n, const char *key, double *out)
{
	const struct ns_kv *kv = kv_find(n->kv, n->n_kv, key);
	if (!kv || !kv->is_num || !ends_with(key, "_percent"))
		return false;
	*out = s->percent_is_fraction ? kv->num * 100.0 : kv->num;
	return true;
}
