/* The rows ingest hands its sinks (ingest/rows.h), recorded with copies of
 * their texts, to be handed to the store later: a directory's traces are
 * parsed on several threads (--jobs) while one store writes them, in order. */
#ifndef NS_ROWLOG_H
#define NS_ROWLOG_H

#include <stddef.h>

#include "common/error.h"
#include "common/trace.h"
#include "ingest/rows.h"

struct ns_rowlog_event;
struct ns_rowlog_flow;

struct ns_rowlog {
	struct ns_rowlog_event *events;
	struct ns_rowlog_flow *flows;
	char *text; /* the rows' texts (args, metadata, flow ids), one after the other */
	size_t n_events, cap_events, n_flows, cap_flows, n_text, cap_text;
};

/* An ns_event_sink and an ns_flow_sink (ctx = struct ns_rowlog *). */
int ns_rowlog_event(void *ctx, const struct ns_trace *t, const struct ns_row_event *row, struct ns_error *err);
int ns_rowlog_flow(void *ctx, const struct ns_trace *t, const struct ns_row_flow *row, struct ns_error *err);

/* Hands the recorded rows to sink and flow_sink, events first, each in the
 * order recorded (ingest's order): the first non-zero return stops it. */
int ns_rowlog_replay(const struct ns_rowlog *log, const struct ns_trace *t, ns_event_sink sink,
		     ns_flow_sink flow_sink, void *ctx, struct ns_error *err);

void ns_rowlog_release(struct ns_rowlog *log);

#endif
