/* PyTorch's computeFlops over the trace's text (flops.h; the formulas in
 * docs/report.md "FLOPs"). */
#include "common/flops.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "common/vec.h"

#define MAX_INPUTS 8
#define MAX_DIMS 8

/* One input's shape; n < 0: not a list of integers (a tensor list, a
 * number). */
struct shape {
	int n;
	int64_t d[MAX_DIMS];
};

struct cursor {
	const char *p, *end;
};

static void skip_ws(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool take(struct cursor *c, char ch)
{
	skip_ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static bool take_int(struct cursor *c, int64_t *out)
{
	skip_ws(c);
	bool neg = c->p < c->end && *c->p == '-';
	const char *start = c->p += neg;
	int64_t v = 0;
	for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++)
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *c->p - '0', &v))
			return false;
	*out = neg ? -v : v;
	return c->p > start;
}

/* "[a, b, ...]" (the closing bracket taken); false if anything else. */
static bool take_int_list(struct cursor *c, struct shape *s)
{
	s->n = 0;
	if (!take(c, '['))
		return false;
	if (take(c, ']'))
		return true;
	do {
		if (s->n == MAX_DIMS || !take_int(c, &s->d[s->n]))
			return false;
		s->n++;
	} while (take(c, ','));
	return take(c, ']');
}

/* Skips one value of Input Dims: a nested list, or a token up to the next
 * ',' or ']' (left for the caller). */
static bool skip_value(struct cursor *c)
{
	int depth = 0;
	skip_ws(c);
	for (; c->p < c->end; c->p++) {
		if (*c->p == '[') {
			depth++;
		} else if (*c->p == ']') {
			if (depth == 0)
				return true;
			if (--depth == 0)
				return c->p++, true;
		} else if (*c->p == ',' && depth == 0) {
			return true;
		}
	}
	return false;
}

/* Input Dims: [[8,16],[16,4],[]] -> n shapes (a shape that is not a list
 * of integers has n = -1). */
static int parse_dims(const char *text, size_t len, struct shape *shapes)
{
	struct cursor c = { text, text + len };
	int n = 0;
	if (!take(&c, '['))
		return -1;
	if (take(&c, ']'))
		return 0;
	do {
		if (n == MAX_INPUTS)
			return n; /* the formulas read the first few */
		struct cursor at = c;
		if (!take_int_list(&c, &shapes[n])) {
			c = at;
			shapes[n].n = -1;
			if (!skip_value(&c))
				return -1;
		}
		n++;
	} while (take(&c, ','));
	return take(&c, ']') ? n : -1;
}

/* Concrete Inputs: ["","","","[2, 2]",...]: element k's text (no escapes
 * in what the formulas read), or false. */
static bool concrete_element(const char *text, size_t len, int k, struct cursor *out)
{
	struct cursor c = { text, text + len };
	if (!take(&c, '['))
		return false;
	for (int i = 0;; i++) {
		if (!take(&c, '"'))
			return false;
		const char *start = c.p;
		while (c.p < c.end && *c.p != '"' && *c.p != '\\')
			c.p++;
		if (c.p == c.end || *c.p == '\\')
			return false;
		if (i == k) {
			*out = (struct cursor){ start, c.p };
			return true;
		}
		c.p++;
		if (!take(&c, ','))
			return false;
	}
}

static bool concrete_pair(const char *text, size_t len, int k, int64_t pair[2])
{
	struct cursor c;
	struct shape s;
	if (!text || !concrete_element(text, len, k, &c) || !take_int_list(&c, &s) || s.n != 2)
		return false;
	pair[0] = s.d[0], pair[1] = s.d[1];
	return true;
}

/* The product of factors, or -1 past INT64_MAX (or a negative factor). */
static int64_t product(const int64_t *f, int n)
{
	int64_t p = 1;
	for (int i = 0; i < n; i++)
		if (f[i] < 0 || __builtin_mul_overflow(p, f[i], &p))
			return -1;
	return p;
}

/* mm, addmm: 2 * prod(mat1) / mat1[-1] * prod(mat2); bmm, baddbmm divide
 * by the batch mat1[0] too (PyTorch's order: the divisions exact). */
static int64_t gemm_flops(const struct shape *m1, const struct shape *m2, bool batched)
{
	if (m1->n <= 0 || m2->n < 0 || (batched && m1->n < 2))
		return m1->n == 0 ? 0 : -1;
	int64_t overlap = m1->d[m1->n - 1], batch = batched ? m1->d[0] : 1;
	if (overlap == 0 || batch == 0)
		return 0;
	int64_t a = product(m1->d, m1->n), b = product(m2->d, m2->n), r;
	if (a < 0 || b < 0 || overlap < 0 || batch < 0)
		return -1;
	a = a / overlap / batch;
	if (__builtin_mul_overflow(a, b, &r) || __builtin_mul_overflow(r, 2, &r))
		return -1;
	return r;
}

/* Concrete Inputs element k as an integer ("3"). */
static bool concrete_int(const char *text, size_t len, int k, int64_t *out)
{
	struct cursor c;
	return text && concrete_element(text, len, k, &c) && take_int(&c, out) && (skip_ws(&c), c.p == c.end);
}

/* conv2d: 2 * N * H_out * W_out * kH * kW * C_in * C_out / groups; H_out =
 * (H + 2 pad - dil (kH - 1) - 1) / stride + 1 (C divisions, truncating). */
static int64_t conv2d_flops(const struct shape *in, const struct shape *w, const char *concrete, size_t len)
{
	int64_t stride[2], pad[2], dil[2], groups;
	if (in->n != 4 || w->n != 4 || !concrete_pair(concrete, len, 3, stride) ||
	    !concrete_pair(concrete, len, 4, pad) || !concrete_pair(concrete, len, 5, dil) ||
	    !concrete_int(concrete, len, 6, &groups) || stride[0] == 0 || stride[1] == 0 || groups <= 0)
		return -1;
	int64_t out[2];
	for (int k = 0; k < 2; k++) {
		int64_t size = in->d[2 + k], kernel = w->d[2 + k];
		if (size > INT32_MAX || kernel > INT32_MAX || pad[k] > INT32_MAX || dil[k] > INT32_MAX ||
		    pad[k] < 0 || dil[k] < 0)
			return -1;
		out[k] = (size + 2 * pad[k] - dil[k] * (kernel - 1) - 1) / stride[k] + 1;
	}
	int64_t f[] = { 2, in->d[0], out[0], out[1], w->d[2], w->d[3], in->d[1], w->d[0] };
	int64_t p = product(f, NS_ARRAY_SIZE(f));
	return p < 0 ? -1 : p / groups;
}

/* Fused attention (TraceLens's SDPA model, after flash-attention's
 * benchmark): q, k, v of [B, H, N, d]; 2 * B * H_q * N_q * N_kv * (d_qk +
 * d_v) (QK^T and PV, the softmax not counted), half of it when is_causal
 * (Concrete Inputs element `causal_at`: "True"), which needs N_q = N_kv. */
static int64_t sdpa_flops(const struct shape *q, const struct shape *k, const struct shape *v, const char *concrete,
			  size_t len, int causal_at)
{
	struct cursor flag;
	if (q->n != 4 || k->n != 4 || v->n != 4 || q->d[0] != k->d[0] || q->d[0] != v->d[0] || k->d[1] != v->d[1] ||
	    k->d[2] != v->d[2] || q->d[3] != k->d[3] || !concrete || !concrete_element(concrete, len, causal_at, &flag))
		return -1;
	size_t flag_len = (size_t)(flag.end - flag.p);
	bool causal = flag_len == 4 && strncasecmp(flag.p, "true", 4) == 0;
	int64_t head_dims;
	if (__builtin_add_overflow(q->d[3], v->d[3], &head_dims) || (causal && q->d[2] != k->d[2]))
		return -1;
	int64_t f[] = { 2, q->d[0], q->d[1], q->d[2], k->d[2], head_dims };
	int64_t p = product(f, NS_ARRAY_SIZE(f));
	return p < 0 || !causal ? p : p / 2;
}

enum formula { GEMM, BATCHED_GEMM, CONV2D, ELEMENTWISE, SDPA };

/* The ops with a formula, by exact name; `first`: the Input Dims position
 * of the first operand; `inputs`: how many Input Dims the op must have at
 * least (conv2d exactly); `causal_at`: SDPA's is_causal in Concrete Inputs
 * (the op's schema order). */
static const struct op_formula {
	const char *name;
	enum formula formula;
	int first, inputs, causal_at;
} op_formulas[] = {
	{ "aten::mm", GEMM, 0, 2, 0 },
	{ "aten::addmm", GEMM, 1, 3, 0 },
	{ "aten::bmm", BATCHED_GEMM, 0, 2, 0 },
	{ "aten::baddbmm", BATCHED_GEMM, 1, 3, 0 },
	{ "aten::conv2d", CONV2D, 0, 7, 0 },
	{ "aten::mul", ELEMENTWISE, 0, 1, 0 },
	{ "aten::add", ELEMENTWISE, 0, 1, 0 },
	/* query, key, value, dropout_p, is_causal, return_debug_mask, scale */
	{ "aten::_scaled_dot_product_flash_attention", SDPA, 0, 3, 4 },
	/* query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal, scale */
	{ "aten::_scaled_dot_product_efficient_attention", SDPA, 0, 3, 6 },
	{ "aten::_scaled_dot_product_cudnn_attention", SDPA, 0, 3, 6 },
};

int64_t ns_flops_of_shapes(const char *name, size_t name_len, const char *dims, size_t dims_len,
			   const char *concrete, size_t concrete_len)
{
	const struct op_formula *op = NULL;
	if (!dims || name_len < 8 || memcmp(name, "aten::", 6) != 0)
		return -1;
	for (size_t i = 0; i < NS_ARRAY_SIZE(op_formulas) && !op; i++)
		if (strlen(op_formulas[i].name) == name_len && memcmp(name, op_formulas[i].name, name_len) == 0)
			op = &op_formulas[i];
	struct shape s[MAX_INPUTS];
	int n = op ? parse_dims(dims, dims_len, s) : -1;
	if (!op || n < op->inputs || (op->formula == CONV2D && n != op->inputs))
		return -1;
	const struct shape *in = &s[op->first];
	switch (op->formula) {
	case GEMM:
	case BATCHED_GEMM:
		return gemm_flops(&in[0], &in[1], op->formula == BATCHED_GEMM);
	case CONV2D:
		return conv2d_flops(&in[0], &in[1], concrete, concrete_len);
	case ELEMENTWISE:
		return in->n >= 0 ? product(in->d, in->n) : -1;
	case SDPA:
		return sdpa_flops(&in[0], &in[1], &in[2], concrete, concrete_len, op->causal_at);
	}
	return -1;
}
