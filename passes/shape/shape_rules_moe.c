/* shape_rules_moe.c - shape rule of com.microsoft MoE (mixture of experts): a router picks k of E
 * expert MLPs for each token. Shapes and attributes follow docs/ContribOperators.md of
 * https://github.com/microsoft/onnxruntime (docs/shape-coverage.md, "ONNX Runtime contrib ops"). */
#include "shape_rules.h"

/* The expert weights of a MoE over hidden size h: fc1 [E, f x inter, h] (f 2 with a fused SwiGLU),
 * fc2 [E, h, inter], fc3 [E, inter, h] when given, and router_probs [tokens, E]; *experts gets E. */
static sh_result moe_weights(sh_ctx *c, fp_dim h, int64_t f, fp_dim *experts)
{
    const char *names[3] = {"fc1_experts_weights", "fc2_experts_weights", "fc3_experts_weights"};
    const fp_shape *w[3] = {sh_in(c, 2), sh_in(c, 4), sh_val(c, 6) ? sh_in(c, 6) : NULL}, *rp = sh_in(c, 1);
    for (int i = 0; i < 3; i++)
        if (w[i] && w[i]->rank != 3)
            return sh_fail(c, "%s rank %d, expected 3 (experts, rows, columns)", names[i], w[i]->rank);
    if (rp && rp->rank != 2)
        return sh_fail(c, "router_probs rank %d, expected 2 (tokens, experts)", rp->rank);
    *experts = w[0] ? w[0]->dims[0] : w[1] ? w[1]->dims[0] : sh_dim_unknown();
    fp_dim inter = w[1] ? w[1]->dims[2] : sh_dim_unknown();
    sh_result r = sh_expect_dim(c, names[0], w[0], 2, h, "hidden size");
    if (r == SH_OK)
        r = sh_expect_dim(c, names[0], w[0], 1, sh_dim_mul(sh_dim(f), inter), "rows (fusion size x inter size)");
    if (r == SH_OK)
        r = sh_expect_dim(c, names[1], w[1], 0, *experts, "experts");
    if (r == SH_OK)
        r = sh_expect_dim(c, names[1], w[1], 1, h, "hidden size");
    if (r == SH_OK)
        r = sh_expect_dim(c, names[2], w[2], 0, *experts, "experts");
    if (r == SH_OK)
        r = sh_expect_dim(c, names[2], w[2], 1, inter, "inter size");
    if (r == SH_OK)
        r = sh_expect_dim(c, names[2], w[2], 2, h, "hidden size");
    return r == SH_OK ? sh_expect_dim(c, "router_probs", rp, 1, *experts, "experts") : r;
}

/* MoE(input [tokens, hidden] or [batch, tokens, hidden], router_probs, fc1_experts_weights, ...,
 * fc2_experts_weights, ...): the output has the input's shape and dtype. swiglu_fusion is 0, 1 or
 * 2; k (default 1) at least 1 and at most the experts. */
sh_result sh_rule_moe(sh_ctx *c)
{
    int64_t fusion, k;
    sh_result r = sh_attr_int_in(c, "swiglu_fusion", false, 0, 0, 2, "0, 1 or 2", &fusion);
    if (r != SH_OK)
        return r;
    if (!sh_val(c, 1) || !sh_val(c, 2) || !sh_val(c, 4))
        return sh_fail(c, "router_probs, fc1_experts_weights and fc2_experts_weights (inputs 1, 2, 4) are required");
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    if (x->rank != 2 && x->rank != 3)
        return sh_fail(c, "input rank %d, expected 2 (tokens, hidden) or 3 (batch, tokens, hidden)", x->rank);
    fp_dim experts;
    r = moe_weights(c, x->dims[x->rank - 1], fusion ? 2 : 1, &experts);
    if (r != SH_OK)
        return r;
    int64_t most = fp_dim_known(experts) ? experts.value : G_MAXINT32;
    g_autofree char *what = g_strdup_printf("between 1 and the %" G_GINT64_FORMAT " experts", most);
    r = sh_attr_int_in(c, "k", false, 1, 1, most, what, &k);
    if (r == SH_OK)
        sh_set(c, 0, sh_dt(c, 0), sh_copy(c, x));
    return r;
}
