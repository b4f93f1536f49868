/* The grid engine (src/report/grid.c). Expected strings are written out by hand from
 * the rules in grid.h (PyTorch's widths, cuts and gaps: spec A6.3, A6.7). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
