/* shape_rules_moe.c - shape rules of com.microsoft MoE and QMoE (mixture of experts, the second
 * with quantized expert weights): a router picks k of E expert MLPs for each token. Shapes and
 * attributes follow docs/ContribOperators.md of https://github.com/microsoft/onnxruntime
 * (docs/shape-coverage.md, "ONNX Runtime contrib ops"). */
#include <string.h>

#include "shape_rules.h"

/* Where an op keeps its expert weights (fc1, fc2, fc3) and their scales (QMoE: 0 for MoE), and
 * how many weights a byte packs along their last axis (1: none). */
typedef struct {
    uint32_t fc[3], scales[3];
    int64_t pack;
} moe_layout;

static const char *const fc_names[3] = {"fc1_experts_weights", "fc2_experts_weights", "fc3_experts_weights"};

/* The expert weights over hidden size h: fc1 [E, f x inter, h / pack] (f 2 with a fused SwiGLU),
 * fc2 [E, h, inter / pack], fc3 [E, inter, h / pack] when given, and router_probs [tokens, E];
 * *experts gets E. */
static sh_result moe_weights(sh_ctx *c, const moe_layout *l, fp_dim h, int64_t f, fp_dim *experts)
{
    const fp_shape *w[3], *rp = sh_in(c, 1);
    for (int i = 0; i < 3; i++) {
        w[i] = sh_val(c, l->fc[i]) ? sh_in(c, l->fc[i]) : NULL;
        if (w[i] && w[i]->rank != 3)
            return sh_fail(c, "%s rank %d, expected 3 (experts, rows, columns)", fc_names[i], w[i]->rank);
    }
    if (rp && rp->rank != 2)
        return sh_fail(c, "router_probs rank %d, expected 2 (tokens, experts)", rp->rank);
    if (fp_dim_known(h) && h.value % l->pack)
        return sh_fail(c,
                       "hidden size %" G_GINT64_FORMAT " is not a multiple of the %" G_GINT64_FORMAT
                       " weights a byte holds",
                       h.value, l->pack);
    *experts = w[0] ? w[0]->dims[0] : w[1] ? w[1]->dims[0] : sh_dim_unknown();
    fp_dim inter = w[1] ? sh_dim_mul(w[1]->dims[2], sh_dim(l->pack)) : sh_dim_unknown();
    fp_dim cols = sh_dim_div(h, sh_dim(l->pack));
    const struct {
        int w, d;
        fp_dim want;
        const char *name;
    } checks[] = {{0, 2, cols, "columns (hidden size / weights a byte)"},
                  {0, 1, sh_dim_mul(sh_dim(f), inter), "rows (fusion size x inter size)"},
                  {1, 0, *experts, "experts"},
                  {1, 1, h, "hidden size"},
                  {2, 0, *experts, "experts"},
                  {2, 1, inter, "inter size"},
                  {2, 2, cols, "columns (hidden size / weights a byte)"}};
    for (size_t i = 0; i < G_N_ELEMENTS(checks); i++) {
        sh_result r = sh_expect_dim(c, fc_names[checks[i].w], w[checks[i].w], checks[i].d, checks[i].want,
                                    checks[i].name);
        if (r != SH_OK)
            return r;
    }
    return sh_expect_dim(c, "router_probs", rp, 1, *experts, "experts");
}

/* QMoE's integer scales (quant_type 'int'): fcN_scales [E, rows] per column, or with block_size
 * [E, rows, K / block_size] (K the weights' unpacked columns). */
static sh_result qmoe_scales(sh_ctx *c, const moe_layout *l, int64_t block)
{
    for (int i = 0; i < 3; i++) {
        const fp_shape *w = sh_val(c, l->fc[i]) ? sh_in(c, l->fc[i]) : NULL;
        const fp_shape *s = sh_val(c, l->scales[i]) ? sh_in(c, l->scales[i]) : NULL;
        if (!w || !s)
            continue;
        g_autofree char *what = g_strdup_printf("fc%d_scales", i + 1);
        if (s->rank != (block ? 3 : 2))
            return sh_fail(c, "%s rank %d, expected %d (%s)", what, s->rank, block ? 3 : 2,
                           block ? "experts, rows, blocks" : "experts, rows");
        fp_dim k = sh_dim_mul(w->dims[2], sh_dim(l->pack));
        sh_result r = sh_expect_dim(c, what, s, 0, w->dims[0], "experts");
        if (r == SH_OK)
            r = sh_expect_dim(c, what, s, 1, w->dims[1], "rows");
        if (r == SH_OK && block)
            r = sh_expect_dim(c, what, s, 2, fp_dim_known(k) ? sh_dim(k.value / block) : k, "blocks");
        if (r != SH_OK)
            return r;
    }
    return SH_OK;
}

/* The mixture over input [tokens, hidden] or [batch, tokens, hidden] laid out as l: router_probs,
 * fc1 and fc2 given, swiglu_fusion 0, 1 or 2, k (default 1) between 1 and the experts; the output
 * has the input's shape and dtype. */
static sh_result moe_common(sh_ctx *c, const moe_layout *l)
{
    int64_t fusion, k;
    sh_result r = sh_attr_int_in(c, "swiglu_fusion", false, 0, 0, 2, "0, 1 or 2", &fusion);
    if (r != SH_OK)
        return r;
    if (!sh_val(c, 1) || !sh_val(c, l->fc[0]) || !sh_val(c, l->fc[1]))
        return sh_fail(c, "router_probs, fc1_experts_weights and fc2_experts_weights (inputs 1, %u, %u) are required",
                       l->fc[0], l->fc[1]);
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    if (x->rank != 2 && x->rank != 3)
        return sh_fail(c, "input rank %d, expected 2 (tokens, hidden) or 3 (batch, tokens, hidden)", x->rank);
    fp_dim experts;
    r = moe_weights(c, l, x->dims[x->rank - 1], fusion ? 2 : 1, &experts);
    if (r != SH_OK)
        return r;
    int64_t most = fp_dim_known(experts) ? experts.value : G_MAXINT32;
    g_autofree char *what = g_strdup_printf("between 1 and the %" G_GINT64_FORMAT " experts", most);
    r = sh_attr_int_in(c, "k", false, 1, 1, most, what, &k);
    if (r == SH_OK)
        sh_set(c, 0, sh_dt(c, 0), sh_copy(c, x));
    return r;
}

/* MoE(input, router_probs, fc1_experts_weights, fc1_experts_bias, fc2_experts_weights, ...). */
sh_result sh_rule_moe(sh_ctx *c)
{
    static const moe_layout l = {{2, 4, 6}, {0, 0, 0}, 1};
    return moe_common(c, &l);
}

/* Weights a byte of QMoE's experts holds: 8 / expert_weight_bits for integer weights, 2 for the
 * FP4 quant types, 1 for fp8; 0 for a quant_type that is none of those. */
static int64_t qmoe_pack(const fp_node *n)
{
    const char *q = fp_node_attr_string(n, "quant_type", "int");
    int64_t bits = fp_node_attr_int(n, "expert_weight_bits", 4);
    if (strcmp(q, "int") == 0)
        return bits == 2 || bits == 4 || bits == 8 ? 8 / bits : 0;
    if (strcmp(q, "fp4") == 0 || strcmp(q, "nvfp4") == 0 || strcmp(q, "wfp4afp8") == 0)
        return 2;
    return strcmp(q, "fp8") == 0 ? 1 : 0;
}

/* QMoE(input, router_probs, fc1_experts_weights, fc1_scales, fc1_experts_bias, fc2_experts_weights,
 * fc2_scales, ..., fc3_experts_weights, fc3_scales, ...): expert_weight_bits 2, 4 or 8 (default 4),
 * block_size absent (per column) or a power of two >= 16, quant_type int (default), fp4, nvfp4,
 * fp8 or wfp4afp8; the weights packed along their last axis. */
sh_result sh_rule_qmoe(sh_ctx *c)
{
    int64_t bits, block;
    bool integer = strcmp(fp_node_attr_string(c->n, "quant_type", "int"), "int") == 0;
    sh_result r = sh_block_attrs(c, "expert_weight_bits", 0, !integer, true, &bits, &block);
    if (r != SH_OK)
        return r;
    moe_layout l = {{2, 5, 8}, {3, 6, 9}, qmoe_pack(c->n)};
    if (!l.pack)
        return sh_fail(c, "attribute 'quant_type' is '%s': must be int, fp4, nvfp4, fp8 or wfp4afp8",
                       fp_node_attr_string(c->n, "quant_type", "int"));
    r = moe_common(c, &l);
    return r == SH_OK && integer ? qmoe_scales(c, &l, block) : r;
}
