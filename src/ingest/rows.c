/* Flow pairing (rows.h): an open-addressing map from (cat, id) to the start
 * open for it, with linear probing and backward-shift deletion, so that it
 * holds only the flows open at the moment (a launch's flow closes a few
 * events after it opens), not every flow of the trace. */
#include "ingest/rows.h"

#include <stdlib.h>
#include <string.h>

struct ns_flow_open {
	int64_t key;       /* the integer id, or the text id's string in fp->ids */
	ns_str cat;
	bool is_int;
	bool used;
	struct ns_row_flow_end start;
};

void ns_flow_pairs_init(struct ns_flow_pairs *fp)
{
	memset(fp, 0, sizeof(*fp));
	ns_strtab_init(&fp->ids);
}

void ns_flow_pairs_release(struct ns_flow_pairs *fp)
{
	free(fp->slots);
	ns_strtab_release(&fp->ids);
	memset(fp, 0, sizeof(*fp));
}

static size_t slot_of(const struct ns_flow_pairs *fp, ns_str cat, bool is_int, int64_t key)
{
	uint64_t h = (uint64_t)key ^ ((uint64_t)cat << 33) ^ (is_int ? 0 : 0x9e3779b97f4a7c15u);
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9u;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebu;
	h ^= h >> 31;
	return (size_t)h & (fp->cap - 1);
}

/* The slot of (cat, is_int, key): the one holding it, or the free one
 * where it would go. */
static struct ns_flow_open *find(struct ns_flow_pairs *fp, ns_str cat, bool is_int, int64_t key)
{
	size_t i = slot_of(fp, cat, is_int, key);
	for (;; i = (i + 1) & (fp->cap - 1)) {
		struct ns_flow_open *o = &fp->slots[i];
		if (!o->used || (o->key == key && o->cat == cat && o->is_int == is_int))
			return o;
	}
}

/* Room for one more open flow (the table at most 3/4 full). -1 on OOM. */
static int make_room(struct ns_flow_pairs *fp)
{
	if ((fp->n + 1) * 4 <= fp->cap * 3)
		return 0;
	size_t old_cap = fp->cap, cap = old_cap ? old_cap * 2 : 256;
	struct ns_flow_open *old = fp->slots, *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	fp->slots = slots;
	fp->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].used)
			*find(fp, old[i].cat, old[i].is_int, old[i].key) = old[i];
	free(old);
	return 0;
}

/* Empties slot o, moving later entries of its probe run back into the gap. */
static void remove_open(struct ns_flow_pairs *fp, struct ns_flow_open *o)
{
	size_t mask = fp->cap - 1, gap = (size_t)(o - fp->slots);
	for (size_t i = (gap + 1) & mask; fp->slots[i].used; i = (i + 1) & mask) {
		const struct ns_flow_open *e = &fp->slots[i];
		size_t home = slot_of(fp, e->cat, e->is_int, e->key);
		/* e may fill the gap if its home is not in (gap, i] (cyclically) */
		if (((i - home) & mask) >= ((i - gap) & mask)) {
			fp->slots[gap] = *e;
			gap = i;
		}
	}
	fp->slots[gap].used = false;
	fp->n--;
}

static int hand_out(const struct ns_flow_pairs *fp, const struct ns_trace *t, const struct ns_flow_open *o,
		    const struct ns_row_flow_end *end, ns_flow_sink sink, void *ctx, struct ns_error *err)
{
	struct ns_row_flow row = { .cat = o->cat, .id = { .present = true, .is_int = o->is_int } };
	if (o->is_int) {
		row.id.num = o->key;
	} else {
		row.id.text = ns_strtab_get(&fp->ids, (ns_str)o->key);
		row.id.len = ns_strtab_len(&fp->ids, (ns_str)o->key);
	}
	if (o->start.present)
		row.start = o->start;
	if (end)
		row.end = *end;
	return sink(ctx, t, &row, err);
}

int ns_flow_pairs_add(struct ns_flow_pairs *fp, const struct ns_trace *t, const struct ns_row_event *row,
		      ns_flow_sink sink, void *ctx, struct ns_error *err)
{
	const struct ns_row_flow_id *id = &row->flow_id;
	struct ns_flow_open key = { .cat = row->cat_text, .is_int = id->is_int, .key = id->num };
	struct ns_row_flow_end here = { true, row->ev.idx, row->ev.thread, row->ev.ts_ns };
	int rc = 0;
	if (!id->is_int) {
		ns_str text = ns_strtab_intern(&fp->ids, id->text, id->len);
		if (text == UINT32_MAX)
			return ns_error_set(err, NS_ERR_NOMEM, "out of memory while pairing flow events");
		key.key = text;
	}
	if (make_room(fp))
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory while pairing flow events");
	struct ns_flow_open *o = find(fp, key.cat, key.is_int, key.key);
	if (row->ph == NS_PH_F) { /* closes the open one, or stands alone */
		rc = hand_out(fp, t, o->used ? o : &key, &here, sink, ctx, err);
		if (o->used)
			remove_open(fp, o);
		return rc;
	}
	if (o->used) /* a second start: the first is never closed */
		rc = hand_out(fp, t, o, NULL, sink, ctx, err);
	else
		fp->n++;
	*o = key;
	o->used = true;
	o->start = here;
	return rc;
}

int ns_flow_pairs_finish(struct ns_flow_pairs *fp, const struct ns_trace *t, ns_flow_sink sink, void *ctx,
			 struct ns_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < fp->cap && !rc; i++)
		if (fp->slots[i].used)
			rc = hand_out(fp, t, &fp->slots[i], NULL, sink, ctx, err);
	free(fp->slots);
	fp->slots = NULL;
	fp->cap = fp->n = 0;
	return rc;
}
