/* Marks for rows whose device time comes from an export with
 * neuron-explorer warnings (xwarn.h). */
#include "report/xwarn.h"

#include "report/escape.h"

bool ns_xwarn_engines_row(const struct ns_trace *t, bool has_time)
{
	return has_time && t->n_xwarn > 0;
}

bool ns_xwarn_detail_profile(const struct ns_detail_neff *p)
{
	return p->dp->explorer_warnings.total > 0;
}

bool ns_xwarn_detail_any(const struct ns_detail_neff *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ns_xwarn_detail_profile(&v[i]))
			return true;
	return false;
}

static void put_text(FILE *out, const char *s, bool markdown)
{
	if (markdown)
		ns_md_text(out, s);
	else
		ns_fputs_visible(s, out);
}

void ns_xwarn_trace_note(FILE *out, const struct ns_trace *t, bool markdown)
{
	const struct ns_strtab *st = &t->strings;
	bool several = false;
	size_t shown = 0;
	if (!t->n_xwarn)
		return;
	for (size_t i = 1; i < t->n_xwarn && !several; i++)
		several = t->xwarn[i].file != t->xwarn[0].file;
	fprintf(out, "%s" NS_WARN_MARK " device time from %s with %zu neuron-explorer warning%s",
		markdown ? "\n" : "", several ? "Neuron exports" : "a Neuron export", t->n_xwarn,
		t->n_xwarn == 1 ? "" : "s");
	for (size_t i = 0; i < t->n_xwarn; i++) { /* each category once */
		ns_str c = t->xwarn[i].category;
		bool seen = !c;
		for (size_t j = 0; j < i && !seen; j++)
			seen = t->xwarn[j].category == c;
		if (seen)
			continue;
		fputs(shown++ ? ", " : " (", out);
		put_text(out, ns_strtab_get(st, c), markdown);
	}
	fputs(shown ? "): " : ": ", out);
	for (size_t i = 0; i < t->n_xwarn; i++) { /* each export once (several when merged) */
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = t->xwarn[j].file == t->xwarn[i].file;
		if (seen)
			continue;
		if (i)
			fputs(", ", out);
		put_text(out, ns_strtab_get(st, t->xwarn[i].file), markdown);
	}
	fputc('\n', out);
}

void ns_xwarn_detail_note(FILE *out, const struct ns_detail_neff *v, size_t n, bool markdown)
{
	uint64_t total = 0;
	size_t files = 0;
	for (size_t i = 0; i < n; i++)
		if (ns_xwarn_detail_profile(&v[i])) {
			total += v[i].dp->explorer_warnings.total;
			files++;
		}
	if (!files)
		return;
	fprintf(out, "%s" NS_WARN_MARK " device time from %s with %llu neuron-explorer warning%s: ", markdown ? "\n" : "",
		files > 1 ? "Neuron exports" : "a Neuron export", (unsigned long long)total, total == 1 ? "" : "s");
	for (size_t i = 0, k = 0; i < n; i++)
		if (ns_xwarn_detail_profile(&v[i])) {
			if (k++)
				fputs(", ", out);
			put_text(out, v[i].dp->path, markdown);
		}
	fputc('\n', out);
}
