/* PyTorch's computeFlops formulas over the trace's text (common/flops.c).
 * Every expected number is worked out by hand from the formula in
 * docs/report.md "FLOPs"; the conv2d ones are also what PyTorch 1.13
 * recorded for the same shapes (fixtures/flops). */
#include <criterion/criterion.h>
#include <string.h>

#include "common/flops.h"

static int64_t flops(const char *name, const char *dims, const char *concrete)
{
	return ns_flops_of_shapes(name, strlen(name), dims, dims ? strlen(dims) : 0, concrete,
				  concrete ? strlen(concrete) : 0);
}

#define CONV_S2_P1 "[\"\",\"\",\"\",\"[2, 2]\",\"[1, 1]\",\"[1, 1]\",\"1\"]"

Test(flops, mm_is_2mkn)
{
	cr_assert_eq(flops("aten::mm", "[[8,16],[16,4]]", NULL), 2 * 8 * 16 * 4); /* 1024 */
	cr_assert_eq(flops("aten::mm", "[[8, 16], [16, 4]]", NULL), 1024, "spaces as the file may have them");
	cr_assert_eq(flops("aten::mm", "[[0,16],[16,4]]", NULL), 0);
	cr_assert_eq(flops("aten::mm", "[[8,0],[0,4]]", NULL), 0, "a zero inner dimension is 0, as in PyTorch");
	cr_assert_eq(flops("aten::mm", "[[8,16]]", NULL), -1, "one input: no formula");
}

Test(flops, addmm_reads_inputs_1_and_2)
{
	cr_assert_eq(flops("aten::addmm", "[[4],[8,16],[16,4],[],[]]", NULL), 1024);
	cr_assert_eq(flops("aten::addmm", "[[512],[141,512],[512,512],[],[]]", NULL), 2LL * 141 * 512 * 512);
	cr_assert_eq(flops("aten::addmm", "[[4],[8,16]]", NULL), -1);
}

Test(flops, bmm_and_baddbmm_are_2bmkn)
{
	cr_assert_eq(flops("aten::bmm", "[[3,8,16],[3,16,5]]", NULL), 2 * 3 * 8 * 16 * 5); /* 3840 */
	cr_assert_eq(flops("aten::baddbmm", "[[3,8,5],[3,8,16],[3,16,5],[],[]]", NULL), 3840);
	cr_assert_eq(flops("aten::bmm", "[[0,8,16],[0,16,5]]", NULL), 0);
}

Test(flops, conv2d_needs_its_concrete_inputs)
{
	/* H_out = (12 + 2 - 2 - 1) / 2 + 1 = 6: 2 * 2 * 6 * 6 * 3 * 3 * 3 * 6 */
	cr_assert_eq(flops("aten::conv2d", "[[2,3,12,12],[6,3,3,3],[],[],[],[],[]]", CONV_S2_P1), 23328);
	/* dilation 2, groups 3: H_out = 12 - 2 * 2 - 1 + 1 = 8: 2 * 2 * 8 * 8 * 3 * 3 * 3 * 6 / 3 */
	cr_assert_eq(flops("aten::conv2d", "[[2,3,12,12],[6,1,3,3],[],[],[],[],[]]",
			   "[\"\", \"\", \"\", \"[1, 1]\", \"[0, 0]\", \"[2, 2]\", \"3\"]"), 13824);
	cr_assert_eq(flops("aten::conv2d", "[[2,3,12,12],[6,3,3,3],[],[],[],[],[]]", NULL), -1);
	cr_assert_eq(flops("aten::conv2d", "[[2,3,12,12],[6,3,3,3],[],[],[],[],[]]",
			   "[\"\",\"\",\"\",\"[1, 1]\",\"same\",\"[1, 1]\",\"1\"]"), -1, "padding='same'");
	cr_assert_eq(flops("aten::conv2d", "[[3,12,12],[6,3,3,3],[],[],[],[],[]]", CONV_S2_P1), -1, "3-d input");
}

Test(flops, mul_and_add_count_the_first_input)
{
	cr_assert_eq(flops("aten::mul", "[[8,16],[]]", NULL), 128);
	cr_assert_eq(flops("aten::mul", "[[3,8,16],[3,8,16]]", NULL), 384);
	cr_assert_eq(flops("aten::add", "[[1,141,512],[1,141,512],[]]", NULL), 141 * 512);
	cr_assert_eq(flops("aten::add", "[[[1,2],[3]],[2]]", NULL), -1, "a tensor list first");
}

Test(flops, other_ops_and_bad_text_have_none)
{
	cr_assert_eq(flops("aten::matmul", "[[8,16],[16,4]]", NULL), -1);
	cr_assert_eq(flops("aten::mul_", "[[8,16],[8,16]]", NULL), -1);
	cr_assert_eq(flops("aten::mm", NULL, NULL), -1);
	cr_assert_eq(flops("aten::mm", "[[8,16],[16,4]", NULL), -1);
	cr_assert_eq(flops("aten::mm", "[[8,x],[16,4]]", NULL), -1);
	cr_assert_eq(flops("aten::mm", "[[4294967296,4294967296],[4294967296,2]]", NULL), -1, "past 2^63");
}

/* TraceLens's SDPA model: 2 * B * H_q * N_q * N_kv * (d_qk + d_v), halved
 * when is_causal; q, k, v are [B, H, N, d]. */
#define FLASH_CI(causal) "[\"\", \"\", \"\", \"0.\", \"" causal "\", \"False\", \"0.125\"]"

Test(flops, fused_attention_is_qk_plus_pv)
{
	const char *bert = "[[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], []]";
	/* 2 * 1 * 8 * 141 * 141 * (64 + 64): TraceLens's 0.040716288 GFLOPS */
	cr_assert_eq(flops("aten::_scaled_dot_product_flash_attention", bert, FLASH_CI("False")), 40716288);
	cr_assert_eq(flops("aten::_scaled_dot_product_flash_attention", bert, FLASH_CI("True")), 20358144, "causal: half");
	/* cross attention, d_v != d_qk: 2 * 2 * 3 * 5 * 7 * (4 + 6) */
	cr_assert_eq(flops("aten::_scaled_dot_product_flash_attention", "[[2,3,5,4],[2,3,7,4],[2,3,7,6]]", FLASH_CI("False")),
		     4200);
	cr_assert_eq(flops("aten::_scaled_dot_product_flash_attention", "[[2,3,5,4],[2,3,7,4],[2,3,7,6]]", FLASH_CI("True")),
		     -1, "causal needs N_q = N_kv");
	/* efficient and cudnn: is_causal is element 6 */
	const char *eff = "[\"\", \"\", \"\", \"\", \"False\", \"0.\", \"True\", \"\"]";
	cr_assert_eq(flops("aten::_scaled_dot_product_efficient_attention", bert, eff), 20358144);
	cr_assert_eq(flops("aten::_scaled_dot_product_cudnn_attention", bert, eff), 20358144);
}

Test(flops, fused_attention_needs_matching_shapes_and_its_flag)
{
	const char *op = "aten::_scaled_dot_product_flash_attention";
	cr_assert_eq(flops(op, "[[1,8,141,64],[1,8,141,64],[1,8,141,64]]", NULL), -1, "no Concrete Inputs");
	cr_assert_eq(flops(op, "[[1,8,141,64],[1,8,141,64],[1,8,141,64]]", "[\"\", \"\"]"), -1, "no is_causal");
	cr_assert_eq(flops(op, "[[1,8,141],[1,8,141],[1,8,141]]", FLASH_CI("False")), -1, "3-d");
	cr_assert_eq(flops(op, "[[2,8,141,64],[1,8,141,64],[1,8,141,64]]", FLASH_CI("False")), -1, "batches differ");
	cr_assert_eq(flops(op, "[[1,8,141,32],[1,8,141,64],[1,8,141,64]]", FLASH_CI("False")), -1, "d_q != d_k");
	cr_assert_eq(flops(op, "[[1,8,141,64],[1,4,141,64],[1,8,141,64]]", FLASH_CI("False")), -1, "k, v heads differ");
	cr_assert_eq(flops("aten::scaled_dot_product_attention", "[[1,8,141,64],[1,8,141,64],[1,8,141,64]]",
			   FLASH_CI("False")), -1, "the dispatcher op: its FLOPs are the fused op's");
	cr_assert_eq(flops("aten::_flash_attention_forward", "[[1,141,8,64],[1,141,8,64],[1,141,8,64]]", NULL), -1);
}
