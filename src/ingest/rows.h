/* Decoded rows: what ingest hands a consumer (the store) for every
 * traceEvents element, and the flow events paired. Nothing here is JSON:
 * times are integer ns, the args the store keeps are typed fields, the
 * metadata events' args are decoded. Strings are the trace's (ns_str into
 * ns_trace.strings, 0 for absent) unless a field says it is text; text and
 * `args` are valid only during the call that hands the row out. */
#ifndef NS_INGEST_ROWS_H
#define NS_INGEST_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/strtab.h"
#include "common/trace.h"

/* A flow event's "id" as written: an integer (also a quoted one, "12"),
 * else its text (a string without its quotes, escapes as written). */
struct ns_row_flow_id {
	bool present;
	bool is_int;
	int64_t num;
	const char *text;
	size_t len;
};

/* What a ph "M" event says about its process or thread. */
enum ns_row_meta_kind {
	NS_ROW_META_NONE = 0,
	NS_ROW_META_PROCESS_NAME,       /* text: args "name" */
	NS_ROW_META_PROCESS_LABELS,     /* text: args "labels" */
	NS_ROW_META_PROCESS_SORT_INDEX, /* sort_index */
	NS_ROW_META_PROCESS_OTHER,      /* another "process_*" event: the process exists */
	NS_ROW_META_THREAD_SORT_INDEX,  /* sort_index */
};

struct ns_row_meta {
	uint8_t kind;            /* enum ns_row_meta_kind */
	bool has_text;           /* the args value was a string */
	bool has_sort_index;     /* args "sort_index" was a number */
	const char *text;        /* decoded (escapes resolved), up to a NUL */
	size_t len;
	int64_t sort_index;      /* the number truncated to an integer (NS_NONE when out of range) */
};

/* One traceEvents element, kept or not. */
struct ns_row_event {
	struct ns_event ev;        /* compact part (also pushed to the model when kept) */
	bool kept;                 /* pushed into ns_trace.events */
	uint8_t ph;                /* enum ns_ph */
	ns_str cat_text;           /* category as written, 0 if absent */
	int64_t rf_id;             /* args "Record function id", or NS_NONE */
	int64_t seq_nr;            /* args "Sequence number" */
	int64_t fwd_tid;           /* args "Fwd thread id" */
	int64_t device;            /* args "device" */
	int64_t stream;            /* args "stream" */
	int64_t ev_idx;            /* args "Ev Idx" */
	int64_t bytes;             /* args "Bytes" (0 if absent; memory records also have it in ev.mem) */
	int64_t copy_bytes;        /* args "bytes" (memcpy, memset) when an integer, else NS_NONE */
	int16_t mem_device_type;   /* args "Device Type", or -1 (likewise) */
	ns_str input_types;        /* args "Input type", compact JSON text */
	int64_t flops;             /* args "flops", else the FLOPs of its shapes (ev.flags NS_EV_FLOPS_SHAPES), or NS_NONE */
	const char *concrete;      /* args "Concrete Inputs" as in the file (NULL if absent): conv2d's FLOPs read it */
	size_t concrete_len;
	const char *args;          /* the args object's text as in the file, for events.args (NULL if absent) */
	size_t args_len;
	struct ns_row_flow_id flow_id; /* ph "s" / "f" */
	struct ns_row_meta meta;   /* ph "M" */
	uint64_t byte_offset;      /* where the event object starts in the (decompressed) stream */
	uint64_t line;
};

/* A kept ph "X" row of ev with no args (device work added after ingest). */
static inline struct ns_row_event ns_row_event_of(const struct ns_event *ev)
{
	return (struct ns_row_event){ .ev = *ev, .kept = true, .ph = NS_PH_X, .rf_id = NS_NONE,
				      .seq_nr = NS_NONE, .fwd_tid = NS_NONE, .device = NS_NONE,
				      .stream = NS_NONE, .ev_idx = NS_NONE, .copy_bytes = NS_NONE,
				      .mem_device_type = -1, .flops = NS_NONE };
}

/* One side of a flow: its event (position in traceEvents), track and time. */
struct ns_row_flow_end {
	bool present;
	uint32_t event;
	uint32_t thread;
	int64_t ts_ns;
};

/* A flow: ph "s" and "f" events paired by (cat, id) in file order, an "s"
 * opening, the next "f" closing. A start never closed, and an end with
 * nothing open, have the other side absent. */
struct ns_row_flow {
	ns_str cat;                /* the trace's string ("" when absent) */
	struct ns_row_flow_id id;
	struct ns_row_flow_end start, end;
};

/* Called for every traceEvents element, in file order; then (flow_sink)
 * for every flow, in no particular order, by the end of ingest. A non-zero
 * return stops ingest with that status. */
typedef int (*ns_event_sink)(void *ctx, const struct ns_trace *t, const struct ns_row_event *row,
			     struct ns_error *err);
typedef int (*ns_flow_sink)(void *ctx, const struct ns_trace *t, const struct ns_row_flow *row,
			    struct ns_error *err);

/* Pairs flow events as they come (rows.c): holds only the flows open. */
struct ns_flow_open;
struct ns_flow_pairs {
	struct ns_flow_open *slots; /* open addressing by (cat, id) */
	size_t cap, n;
	struct ns_strtab ids;       /* text ids, for their keys */
};

void ns_flow_pairs_init(struct ns_flow_pairs *fp);
void ns_flow_pairs_release(struct ns_flow_pairs *fp);
/* Takes a ph "s" or "f" row with an id: hands the flows it closes (an "f";
 * an "s" that replaces an open one) to sink. */
int ns_flow_pairs_add(struct ns_flow_pairs *fp, const struct ns_trace *t, const struct ns_row_event *row,
		      ns_flow_sink sink, void *ctx, struct ns_error *err);
/* Hands the starts still open to sink and empties fp. */
int ns_flow_pairs_finish(struct ns_flow_pairs *fp, const struct ns_trace *t, ns_flow_sink sink, void *ctx,
			 struct ns_error *err);

#endif
