/* --category, --rank, --steps: the traces and events a command analyses
 * (cli/cli.h; the event rules are aggregate/select.h's). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/vec.h"
#include "pipeline/load.h"

void ns_cli_write_category_words(FILE *out)
{
	for (int c = NS_CAT_OTHER + 1; c < NS_CAT__COUNT; c++)
		if (c != NS_CAT_AC2G && c != NS_CAT_FWDBWD)
			fprintf(out, "%s\n", ns_cat_name((enum ns_cat)c));
}

/* "N[,N|A-B...]" into s->ranks. */
static int parse_ranks(const char *arg, struct ns_cli_selection *s, struct ns_error *err)
{
	const char *p = arg;
	for (;;) {
		size_t len = strcspn(p, ",");
		char item[64];
		long lo, hi;
		snprintf(item, sizeof(item), "%.*s", (int)(len < 63 ? len : 63), p);
		char *dash = strchr(item, '-');
		if (dash)
			*dash = '\0';
		if (len >= sizeof(item) || ns_opt_parse_long(item, 0, INT32_MAX, &lo) ||
		    ns_opt_parse_long(dash ? dash + 1 : item, lo, INT32_MAX, &hi))
			return ns_error_set(err, NS_ERR_USAGE, "--rank: not a rank N or range A-B (A <= B), '%.*s'", (int)len,
					    p);
		if (s->n_ranks == NS_ARRAY_SIZE(s->ranks))
			return ns_error_set(err, NS_ERR_USAGE, "--rank: at most %zu ranks or ranges",
					    NS_ARRAY_SIZE(s->ranks));
		s->ranks[s->n_ranks].first = lo;
		s->ranks[s->n_ranks++].last = hi;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static bool keeps_name(void *names, const char *name)
{
	return ns_name_filter_keeps(names, name);
}

int ns_cli_select_parse(const struct ns_cli_select *o, struct ns_cli_selection *s, struct ns_error *err)
{
	memset(s, 0, sizeof(*s));
	int rc = 0;
	if (o->include.n || o->exclude.n) {
		s->names = ns_cli_name_filter(&o->include, &o->exclude);
		s->events.keep_name = keeps_name;
	}
	if (o->category)
		rc = ns_select_parse_categories(o->category, &s->events, err);
	if (!rc && o->hide_annotations) /* (after --category: it narrows it) */
		ns_select_hide_annotations(&s->events);
	if (!rc && o->steps)
		rc = ns_select_parse_steps(o->steps, &s->events, err);
	if (!rc && o->rank)
		rc = parse_ranks(o->rank, s, err);
	return rc;
}

static int64_t rank_of(const struct ns_run *run, size_t i)
{
	return run->traces[i].rank != NS_NONE ? run->traces[i].rank : (int64_t)i;
}

/* A --rank range that matched no trace: the error names the ranks there are. */
static int no_such_rank(const struct ns_run *run, const char *input, int64_t first, int64_t last, struct ns_error *err)
{
	char have[200] = "";
	size_t used = 0;
	for (size_t i = 0; i < run->n && used + 24 < sizeof(have); i++)
		used += (size_t)snprintf(have + used, sizeof(have) - used, "%s%" PRId64, i ? ", " : "", rank_of(run, i));
	if (first == last)
		return ns_error_set(err, NS_ERR_USAGE, "--rank %" PRId64 ": no such rank in %s (its ranks: %s)", first,
				    input, have);
	return ns_error_set(err, NS_ERR_USAGE, "--rank %" PRId64 "-%" PRId64 ": no such rank in %s (its ranks: %s)",
			    first, last, input, have);
}

/* --rank: the run keeps the traces of those ranks, in order; a trace
 * without distributedInfo.rank is given its position as rank. */
static int select_ranks(const struct ns_cli_selection *s, const char *input, struct ns_run *run, struct ns_error *err)
{
	for (size_t r = 0; r < s->n_ranks; r++) {
		size_t i = 0;
		while (i < run->n && (rank_of(run, i) < s->ranks[r].first || rank_of(run, i) > s->ranks[r].last))
			i++;
		if (i == run->n)
			return no_such_rank(run, input, s->ranks[r].first, s->ranks[r].last, err);
	}
	size_t n = 0;
	for (size_t i = 0; i < run->n; i++) {
		int64_t rank = rank_of(run, i);
		bool kept = false;
		for (size_t r = 0; r < s->n_ranks; r++)
			kept |= rank >= s->ranks[r].first && rank <= s->ranks[r].last;
		if (!kept) {
			ns_trace_release(&run->traces[i]);
			continue;
		}
		run->traces[i].rank = rank;
		run->traces[n++] = run->traces[i];
	}
	run->n = n;
	return 0;
}

int ns_cli_select_run(const struct ns_cli_selection *s, const char *input, struct ns_run *run, struct ns_error *err)
{
	int rc = s->n_ranks ? select_ranks(s, input, run, err) : 0;
	struct ns_select events = s->events;
	events.name_ctx = (void *)&s->names; /* (where s is now) */
	for (size_t i = 0; rc == 0 && i < run->n; i++)
		rc = ns_trace_select(&run->traces[i], &events, err);
	return rc;
}
