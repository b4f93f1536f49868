/* The grid engine (src/report/grid.c) and the field table
 * (src/report/fields.c). Expected strings are written out by hand from
 * the rules in grid.h (PyTorch's widths, cuts and gaps: spec A6.3, A6.7). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/fields.h"
#include "report/grid.h"
#include "report/report.h"

static char *render(const struct ns_grid *g, int form)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cr_assert(f);
	if (form == 0)
		cr_assert_eq(ns_grid_write_text(f, g), 0);
	else if (form == 1)
		ns_grid_write_csv(f, g, true);
	else if (form == 2)
		ns_grid_write_json(f, g);
	else
		ns_grid_write_markdown(f, g);
	fclose(f);
	return text;
}

static struct ns_cell text(const char *s)
{
	return (struct ns_cell){ .type = NS_CELL_TEXT, .text = s };
}

static struct ns_cell time_us(double us, int64_t ns)
{
	return (struct ns_cell){ .type = NS_CELL_TIME, .us = us, .i = ns };
}

/* Name (auto, pad 4, right), a fixed 12 time, and calls. */
static void two_rows(struct ns_grid *g)
{
	ns_grid_init(g, NULL);
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Name", .key = "name", .pad = 4, .md_left = true,
					      .md_dashes = 5 });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Self CPU", .key = "self_cpu_us", .width = 12, .md_dashes = 9 });
	ns_grid_col(g, &(struct ns_grid_col){ .header = "Calls", .key = "calls", .width = 12, .md_dashes = 6 });
	struct ns_cell a[] = { text("aten::add"), time_us(1500.25, 1500250), { .type = NS_CELL_INT, .i = 2 } };
	struct ns_cell b[] = { text("x, \"y\"|z"), time_us(0.5, 500), { .type = NS_CELL_EMPTY } };
	ns_grid_row(g, a, true, false);
	ns_grid_row(g, b, true, true);
	g->mark = "*";
}

Test(grid, pytorch_text_table)
{
	struct ns_grid g;
	two_rows(&g);
	char *got = render(&g, 0);
	cr_assert_str_eq(got, "-------------  ------------  ------------  \n"
			      "         Name      Self CPU         Calls  \n"
			      "-------------  ------------  ------------  \n"
			      "    aten::add       1.500ms             2  \n"
			      "     x, \"y\"|z       0.500us                *\n"
			      "-------------  ------------  ------------  \n",
			 "%s", got);
	free(got);
	ns_grid_release(&g);
}

Test(grid, csv_json_markdown)
{
	struct ns_grid g;
	two_rows(&g);
	char *got = render(&g, 1);
	cr_assert_str_eq(got, "name,self_cpu_us,calls\r\naten::add,1500.250,2\r\n\"x, \"\"y\"\"|z\",0.500,\r\n");
	free(got);
	got = render(&g, 2);
	cr_assert_str_eq(got, "[\n  {\"name\": \"aten::add\", \"self_cpu_us\": 1500.250, \"calls\": 2},\n"
			      "  {\"name\": \"x, \\\"y\\\"|z\", \"self_cpu_us\": 0.500, \"calls\": null}\n]");
	free(got);
	got = render(&g, 3);
	cr_assert_str_eq(got, "| Name | Self CPU | Calls |\n"
			      "|:-----|---------:|------:|\n"
			      "| aten::add | 1.500ms | 2 |\n"
			      "| x, \"y\"\\|z * | 0.500us |  |\n");
	free(got);
	ns_grid_release(&g);
}

Test(grid, empty_json_is_an_empty_array)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	ns_grid_col(&g, &(struct ns_grid_col){ .key = "name" });
	char *got = render(&g, 2);
	cr_assert_str_eq(got, "[]");
	free(got);
	ns_grid_release(&g);
}

/* Found by fuzz-neff-tar: an hlo_stats.json with no known key made a grid
 * with no columns, and its row was copied from NULL. */
Test(grid, a_row_of_a_grid_without_columns_is_an_empty_object)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	ns_grid_row(&g, NULL, true, false);
	cr_assert_eq(g.n_rows, 1);
	char *got = render(&g, 2);
	cr_assert_str_eq(got, "[\n  {}\n]");
	free(got);
	ns_grid_release(&g);
}

Test(grid, a_row_not_shown_still_sizes_its_column)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	ns_grid_col(&g, &(struct ns_grid_col){ .header = "N", .pad = 4 });
	struct ns_cell a = text("ab"), b = text("abcdef");
	ns_grid_row(&g, &a, true, false);
	ns_grid_row(&g, &b, false, false);
	cr_assert_eq(ns_grid_width(&g, 0), 10);
	cr_assert_eq(ns_grid_line_width(&g), 10);
	char *got = render(&g, 0);
	cr_assert_str_eq(got, "----------  \n         N  \n----------  \n        ab  \n----------  \n");
	free(got);
	ns_grid_release(&g);
}

Test(grid, cuts_at_the_cap)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	/* Name: at cap - 3 characters or more, cap - 3 and "..."; the header is never cut */
	ns_grid_col(&g, &(struct ns_grid_col){ .header = "Name", .pad = 4, .cap = 8, .cut = NS_CUT_END_DOTS });
	/* Shapes: the first cap characters */
	ns_grid_col(&g, &(struct ns_grid_col){ .header = "S", .pad = 4, .cap = 6, .cut = NS_CUT_END, .none = "[]" });
	struct ns_cell r1[] = { text("abcdefghij"), text("[1, 2, 3]") };
	struct ns_cell r2[] = { text("abc\xc3\xa9"), text(NULL) }; /* widths count characters: 4, not cut */
	ns_grid_row(&g, r1, true, false);
	ns_grid_row(&g, r2, true, false);
	char *got = render(&g, 0);
	cr_assert_str_eq(got, "--------  ------  \n"
			      "    Name       S  \n"
			      "--------  ------  \n"
			      "abcde...  [1, 2,  \n"
			      "    abc\xc3\xa9      []  \n"
			      "--------  ------  \n",
			 "%s", got);
	free(got);
	ns_grid_release(&g);
}

Test(grid, split_column_one_line_per_piece_then_a_blank_line)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	ns_grid_col(&g, &(struct ns_grid_col){ .header = "N", .width = 3 });
	ns_grid_col(&g, &(struct ns_grid_col){ .header = "Source", .pad = 4, .cap = 10, .left = true,
					       .cut = NS_CUT_FRONT_DOTS, .split = ';' });
	struct ns_cell r1[] = { text("a"), text("x.py(1): f;/long/path/y.py(22): g") };
	struct ns_cell r2[] = { text("b"), text(NULL) };
	ns_grid_row(&g, r1, true, false);
	ns_grid_row(&g, r2, true, false);
	char *got = render(&g, 0);
	cr_assert_str_eq(got, "---  ----------  \n"
			      "  N  Source      \n"
			      "---  ----------  \n"
			      "  a  x.py(1): f  \n"
			      "     ...(22): g  \n"
			      "                 \n"
			      "  b              \n"
			      "                 \n"
			      "---  ----------  \n",
			 "%s", got);
	free(got);
	ns_grid_release(&g);
}

Test(grid, cell_text_of_each_type)
{
	struct ns_grid g;
	struct ns_grid_col col = { .none = "-" };
	char b[64];
	ns_grid_init(&g, "ms");
	cr_assert_str_eq(ns_grid_cell_text(&g, &col, &(struct ns_cell){ .type = NS_CELL_TIME, .us = 1234.5 }, b, 64),
			 "1.234ms");
	g.time_unit = NULL;
	cr_assert_str_eq(ns_grid_cell_text(&g, &col, &(struct ns_cell){ .type = NS_CELL_TIME, .us = 2e6 }, b, 64),
			 "2.000s");
	cr_assert_str_eq(ns_grid_cell_text(&g, &col, &(struct ns_cell){ .type = NS_CELL_SHARE, .us = 1, .total = 3 },
					   b, 64),
			 "33.33%");
	cr_assert_str_eq(ns_grid_cell_text(&g, &col, &(struct ns_cell){ .type = NS_CELL_SHARE, .us = 1 }, b, 64), "NaN");
	cr_assert_str_eq(ns_grid_cell_text(&g, &col, &(struct ns_cell){ .type = NS_CELL_BYTES, .i = -1536 }, b, 64),
			 "-1.50 KB");
	cr_assert_str_eq(ns_grid_cell_text(&g, &col, &(struct ns_cell){ .type = NS_CELL_BYTES, .i = 1023 }, b, 64),
			 "1023 B");
	cr_assert_str_eq(ns_grid_cell_text(&g, &col, &(struct ns_cell){ .type = NS_CELL_BOOL, .i = 1 }, b, 64), "true");
	cr_assert_str_eq(ns_grid_cell_text(&g, &col, &(struct ns_cell){ .type = NS_CELL_TEXT }, b, 64), "-");
	cr_assert_str_eq(ns_grid_cell_text(&g, &col, &(struct ns_cell){ .type = NS_CELL_US, .i = -1500 }, b, 64),
			 "-1.500us");
	ns_grid_release(&g);
}

Test(grid, numbers_of_a_diff_signed_missing_and_exact)
{
	struct ns_grid g;
	struct ns_grid_col plain = { .none = "-" }, sign = { .none = "-", .sign = true };
	char b[64];
	ns_grid_init(&g, NULL);
	/* NS: a half ns rounds to even; signed, the sign is the value's before rounding */
	cr_assert_str_eq(ns_grid_cell_text(&g, &plain, &(struct ns_cell){ .type = NS_CELL_NS, .x = 2500.5 }, b, 64),
			 "2.500");
	cr_assert_str_eq(ns_grid_cell_text(&g, &sign, &(struct ns_cell){ .type = NS_CELL_NS, .x = 1501.5 }, b, 64),
			 "+1.502");
	cr_assert_str_eq(ns_grid_cell_text(&g, &sign, &(struct ns_cell){ .type = NS_CELL_NS, .x = -0.5 }, b, 64),
			 "-0.000");
	cr_assert_str_eq(ns_grid_cell_text(&g, &sign, &(struct ns_cell){ .type = NS_CELL_PCT, .x = 20.34 }, b, 64),
			 "+20.3%");
	cr_assert_str_eq(ns_grid_cell_text(&g, &plain, &(struct ns_cell){ .type = NS_CELL_PCT, .x = -INFINITY }, b, 64),
			 "-inf");
	cr_assert_str_eq(ns_grid_cell_text(&g, &sign, &(struct ns_cell){ .type = NS_CELL_PCT, .x = NAN }, b, 64), "-");
	cr_assert_str_eq(ns_grid_cell_text(&g, &plain, &(struct ns_cell){ .type = NS_CELL_P, .x = 0.00002 }, b, 64),
			 "<0.0001");
	cr_assert_str_eq(ns_grid_cell_text(&g, &plain, &(struct ns_cell){ .type = NS_CELL_P, .x = 0.04321 }, b, 64),
			 "0.0432");
	cr_assert_str_eq(ns_grid_cell_text(&g, &plain, &(struct ns_cell){ .type = NS_CELL_EMPTY }, b, 64), "-");
	/* CSV and JSON: exact µs, 3 decimals, 6 digits; NaN and infinity missing */
	ns_grid_col(&g, &(struct ns_grid_col){ .key = "us" });
	ns_grid_col(&g, &(struct ns_grid_col){ .key = "pct" });
	ns_grid_col(&g, &(struct ns_grid_col){ .key = "p" });
	struct ns_cell r1[] = { { .type = NS_CELL_NS, .x = -1500.5 }, { .type = NS_CELL_PCT, .x = 12.34567 },
				{ .type = NS_CELL_P, .x = 0.0000123456789 } };
	struct ns_cell r2[] = { { .type = NS_CELL_NS, .x = 7 }, { .type = NS_CELL_PCT, .x = INFINITY },
				{ .type = NS_CELL_P, .x = NAN } };
	ns_grid_row(&g, r1, true, false);
	ns_grid_row(&g, r2, true, false);
	char *got = render(&g, 1);
	cr_assert_str_eq(got, "us,pct,p\r\n-1.500,12.346,1.23457e-05\r\n0.007,,\r\n", "%s", got);
	free(got);
	got = render(&g, 2);
	cr_assert_str_eq(got,
			 "[\n  {\"us\": -1.500, \"pct\": 12.346, \"p\": 1.23457e-05},\n"
			 "  {\"us\": 0.007, \"pct\": null, \"p\": null}\n]",
			 "%s", got);
	free(got);
	ns_grid_release(&g);
}

Test(grid, open_style_groups_and_a_footer)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_OPEN;
	ns_grid_col(&g, &(struct ns_grid_col){ .header = "v", .left = true, .min = 1 });
	ns_grid_col(&g, &(struct ns_grid_col){ .header = "base", .group = "calls", .min = 4 });
	ns_grid_col(&g, &(struct ns_grid_col){ .header = "name", .left = true });
	struct ns_cell r1[] = { text("up"), { .type = NS_CELL_INT, .i = 12 }, text("a long name") };
	struct ns_cell total[] = { text("up"), { .type = NS_CELL_INT, .i = 120 }, text("[total]") };
	ns_grid_row(&g, r1, true, false);
	ns_grid_footer(&g, total);
	char *got = render(&g, 0);
	cr_assert_str_eq(got, "    calls\n"
			      "v   base  name\n"
			      "--  ----  ----\n"
			      "up    12  a long name\n"
			      "--  ----  ----\n"
			      "up   120  [total]\n",
			 "%s", got);
	free(got);
	ns_grid_release(&g);
}

Test(grid, markdown_joined_cells_bold_and_numbers_unescaped)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	ns_grid_col(&g, &(struct ns_grid_col){ .header = "Name", .md_left = true, .md_dashes = 5 });
	ns_grid_col(&g, &(struct ns_grid_col){ .header = "Δ", .md_dashes = 6, .sign = true, .none = "-" });
	ns_grid_col(&g, &(struct ns_grid_col){ .md_join = " (p ", .md_end = ")" });
	struct ns_cell r1[] = { text("a_b"), { .type = NS_CELL_PCT, .x = 20.34, .strong = true },
				{ .type = NS_CELL_P, .x = 0.00001 } };
	struct ns_cell r2[] = { text("c"), { .type = NS_CELL_PCT, .x = NAN }, { .type = NS_CELL_P, .x = NAN } };
	ns_grid_row(&g, r1, true, false);
	ns_grid_row(&g, r2, true, false);
	char *got = render(&g, 3);
	cr_assert_str_eq(got, "| Name | Δ |\n"
			      "|:-----|------:|\n"
			      "| a\\_b | **+20.3%** (p <0.0001) |\n"
			      "| c | - |\n",
			 "%s", got);
	free(got);
	ns_grid_release(&g);
}

Test(grid, plain_style_has_no_rules_and_no_trailing_blanks)
{
	struct ns_grid g;
	ns_grid_init(&g, NULL);
	g.style = NS_GRID_PLAIN;
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	ns_grid_col(&g, &(struct ns_grid_col){ .left = true });
	struct ns_cell r1[] = { text("count"), text("calls"), text("c") };
	struct ns_cell r2[] = { text("key"), text("name, Z to A"), text("") };
	ns_grid_row(&g, r1, true, false);
	ns_grid_row(&g, r2, true, false);
	char *got = render(&g, 0);
	cr_assert_str_eq(got, "  count  calls         c\n  key    name, Z to A\n", "%s", got);
	free(got);
	ns_grid_release(&g);
}

/* ---- the field table ---- */

Test(fields, every_sort_key_and_alias_resolves_to_itself)
{
	size_t keys = 0;
	for (size_t i = 0; i < ns_n_fields; i++)
		for (size_t k = 0; k < 2; k++) {
			const struct ns_sort_key *key = &ns_fields[i].sort[k];
			const struct ns_field *f = NULL;
			if (!key->name)
				continue;
			keys++;
			cr_assert_eq(ns_sort_key_find_field(key->name, &f), key, "%s", key->name);
			cr_assert_eq(f, &ns_fields[i]);
			cr_assert_eq(ns_sort_key_field(key), &ns_fields[i]);
			char aliases[256];
			snprintf(aliases, sizeof(aliases), "%s", key->aliases);
			for (char *a = strtok(aliases, " "); a; a = strtok(NULL, " "))
				cr_assert_eq(ns_sort_key_find(a), key, "alias %s of %s", a, key->name);
		}
	cr_assert_geq(keys, 13); /* the 13 of PyTorch's sort_by, and any added since */
}

Test(fields, aliases_the_old_help_missed)
{
	cr_assert_str_eq(ns_sort_key_find("cpu_avg")->name, "cpu_time");
	cr_assert_str_eq(ns_sort_key_find("calls")->name, "count");
	cr_assert_str_eq(ns_sort_key_find("self_cuda_mem")->name, "self_device_memory_usage");
	cr_assert_str_eq(ns_sort_key_find("self_xpu_time_total")->name, "self_device_time_total");
	cr_assert(ns_sort_key_find("name")->ascending);
	cr_assert(!ns_sort_key_find("key")->ascending);
	cr_assert_null(ns_sort_key_find("Self CPU"));
}

Test(fields, generated_help_names_every_key_and_alias)
{
	char *help = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&help, &len);
	cr_assert(f);
	ns_fields_write_sort_help(f);
	fclose(f);
	for (size_t i = 0; i < ns_n_fields; i++)
		for (size_t k = 0; k < 2; k++) {
			const struct ns_sort_key *key = &ns_fields[i].sort[k];
			char line[160];
			if (!key->name)
				continue;
			snprintf(line, sizeof(line), "\n  %s ", key->name);
			cr_assert(strstr(help, line), "%s missing from:\n%s", key->name, help);
			cr_assert(strstr(help, key->aliases), "%s missing", key->aliases);
		}
	cr_assert(strstr(help, "  cpu_time                  CPU time per call               cpu_avg\n"), "%s", help);
	cr_assert_null(strstr(help, " \n"), "no trailing blanks:\n%s", help);
	free(help);
}

Test(fields, machine_names_and_places_are_unique)
{
	for (size_t i = 0; i < ns_n_fields; i++)
		for (size_t j = i + 1; j < ns_n_fields; j++) {
			const struct ns_field *a = &ns_fields[i], *b = &ns_fields[j];
			cr_assert(!a->machine || !b->machine || strcmp(a->machine, b->machine), "%s", a->machine);
			cr_assert(!a->at.text || a->at.text != b->at.text);
			cr_assert(!a->at.machine || a->at.machine != b->at.machine);
			cr_assert(!a->at.markdown || a->at.markdown != b->at.markdown);
		}
	for (size_t i = 0; i < ns_n_fields; i++) {
		const struct ns_field *f = &ns_fields[i];
		cr_assert(!f->at.machine || f->machine, "a CSV/JSON column needs a machine name");
		cr_assert(!(f->at.text || f->at.markdown) || f->header, "a table column needs a header");
		cr_assert(f->help && f->get);
	}
}

Test(fields, each_getter_gives_a_cell_of_its_kind)
{
	static const enum ns_cell_type of_kind[] = {
		[NS_KIND_TEXT] = NS_CELL_TEXT,	 [NS_KIND_COUNT] = NS_CELL_INT,	    [NS_KIND_TIME] = NS_CELL_TIME,
		[NS_KIND_PERCENT] = NS_CELL_SHARE, [NS_KIND_BYTES] = NS_CELL_BYTES, [NS_KIND_FLAG] = NS_CELL_BOOL,
		[NS_KIND_FLOPS] = NS_CELL_FLOPS,	 [NS_KIND_RATE] = NS_CELL_REAL,
	};
	struct ns_avg row = { .count = 2, .self_cpu_ns = 3000, .self_cpu_time_total = 3.0 };
	struct ns_field_ctx ctx = { .total_self_cpu = 3.0 };
	for (size_t i = 0; i < ns_n_fields; i++) {
		struct ns_cell c;
		ns_fields[i].get(&ctx, &row, &c);
		cr_assert_eq(c.type, of_kind[ns_fields[i].kind], "%s", ns_fields[i].machine);
	}
}
