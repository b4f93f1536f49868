#include "pipeline/rowlog.h"

#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

/* A row with its texts' places in log->text (their pointers are not used:
 * the text array moves as it grows). */
struct ns_rowlog_event {
	struct ns_row_event row;
	size_t args_at, meta_at, flow_id_at;
};

struct ns_rowlog_flow {
	struct ns_row_flow row;
	size_t id_at;
};

/* Copies len bytes (and a NUL) of text into the log: where, in *at. */
static int keep_text(struct ns_rowlog *log, const char *text, size_t len, size_t *at, struct ns_error *err)
{
	*at = log->n_text;
	if (!text)
		return 0;
	if (len + 1 < len || NS_GROW_MIN(log->text, log->cap_text, log->n_text + len + 1, 1u << 16) < 0)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory recording a trace's rows");
	memcpy(log->text + log->n_text, text, len);
	log->text[log->n_text + len] = '\0';
	log->n_text += len + 1;
	return 0;
}

int ns_rowlog_event(void *ctx, const struct ns_trace *t, const struct ns_row_event *row, struct ns_error *err)
{
	struct ns_rowlog *log = ctx;
	struct ns_rowlog_event e = { .row = *row };
	int rc;
	(void)t;
	if ((rc = keep_text(log, row->args, row->args_len, &e.args_at, err)) ||
	    (rc = keep_text(log, row->meta.text, row->meta.len, &e.meta_at, err)) ||
	    (rc = keep_text(log, row->flow_id.text, row->flow_id.len, &e.flow_id_at, err)))
		return rc;
	if (NS_GROW_MIN(log->events, log->cap_events, log->n_events + 1, 1024) < 0)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory recording a trace's rows");
	log->events[log->n_events++] = e;
	return 0;
}

int ns_rowlog_flow(void *ctx, const struct ns_trace *t, const struct ns_row_flow *row, struct ns_error *err)
{
	struct ns_rowlog *log = ctx;
	struct ns_rowlog_flow f = { .row = *row };
	int rc;
	(void)t;
	if ((rc = keep_text(log, row->id.text, row->id.len, &f.id_at, err)))
		return rc;
	if (NS_GROW(log->flows, log->cap_flows, log->n_flows + 1) < 0)
		return ns_error_set(err, NS_ERR_NOMEM, "out of memory recording a trace's rows");
	log->flows[log->n_flows++] = f;
	return 0;
}

/* The text kept at `at` for a pointer that was set (NULL stays NULL). */
static const char *text_at(const struct ns_rowlog *log, const char *was, size_t at)
{
	return was ? log->text + at : NULL;
}

int ns_rowlog_replay(const struct ns_rowlog *log, const struct ns_trace *t, ns_event_sink sink,
		     ns_flow_sink flow_sink, void *ctx, struct ns_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < log->n_events && !rc; i++) {
		const struct ns_rowlog_event *e = &log->events[i];
		struct ns_row_event row = e->row;
		row.args = text_at(log, row.args, e->args_at);
		row.meta.text = text_at(log, row.meta.text, e->meta_at);
		row.flow_id.text = text_at(log, row.flow_id.text, e->flow_id_at);
		rc = sink(ctx, t, &row, err);
	}
	for (size_t i = 0; i < log->n_flows && !rc; i++) {
		struct ns_row_flow row = log->flows[i].row;
		row.id.text = text_at(log, row.id.text, log->flows[i].id_at);
		rc = flow_sink(ctx, t, &row, err);
	}
	return rc;
}

void ns_rowlog_release(struct ns_rowlog *log)
{
	free(log->events);
	free(log->flows);
	free(log->text);
	memset(log, 0, sizeof(*log));
}
