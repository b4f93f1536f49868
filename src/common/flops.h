/* FLOPs of an op from its input shapes: PyTorch's computeFlops
 * (torch/csrc/profiler/util.cpp, as of 1.13), the number its profiler
 * records with with_flops=True, and for the fused attention ops, which
 * PyTorch does not count, TraceLens's SDPA model. The formulas are in
 * docs/report.md ("FLOPs"); this file holds only arithmetic on the
 * trace's text. */
#ifndef NS_FLOPS_H
#define NS_FLOPS_H

#include <stddef.h>
#include <stdint.h>

/* The FLOPs of op `name` (e.g. "aten::addmm") from the compact JSON text
 * of its args "Input Dims" ([[8,16],[16,4]]) and, for aten::conv2d and the
 * attention ops, of its "Concrete Inputs" (["","","","[2, 2]","[1, 1]",
 * "[1, 1]","1"]: conv2d's stride, padding, dilation, groups; attention's
 * is_causal; NULL when absent). -1 when the op has no
 * formula or the text does not give what it needs (as PyTorch, which then
 * records nothing); a product past INT64_MAX is -1 too. */
int64_t ns_flops_of_shapes(const char *name, size_t name_len, const char *dims, size_t dims_len,
			   const char *concrete, size_t concrete_len);

#endif
