/* expand.c - function bodies of the ops a runtime has no kernel for (expand.h). HardSwish(x) =
 * x * HardSigmoid(x; alpha 1/6, beta 0.5), the body ONNX gives it (onnx.ai, HardSwish-14). */
#include "passes/expand.h"

#include <string.h>

static const char *const supported[] = {"HardSwish"};

bool fp_expand_supported(const char *op_type)
{
    for (size_t i = 0; i < G_N_ELEMENTS(supported); i++)
        if (strcmp(supported[i], op_type) == 0)
            return true;
    return false;
}

const char *fp_expand_supported_list(void) { return "HardSwish"; }

/* HardSwish node n becomes Mul(x, HardSigmoid(x)): a new HardSigmoid node (appended to n's graph)
 * writes a new value shaped as x, which n, retyped, reads beside x. */
static void expand_hard_swish(fp_model *m, fp_node *n)
{
    fp_graph *g = n->graph;
    fp_value *x = n->inputs[0];
    g_autofree char *vname = g_strdup_printf("%s/hard_sigmoid_out", n->name);
    g_autofree char *nname = g_strdup_printf("%s/hard_sigmoid", n->name);
    fp_value *hs = fp_graph_value_like(g, vname, x, FP_DT_UNDEFINED);
    fp_node *sig = fp_node_new_attrs(g, FP_OP_HARD_SIGMOID, "HardSigmoid", "", nname, 1, 1, 2);
    sig->inputs[0] = x;
    fp_node_set_output(sig, 0, hs);
    sig->opset = n->opset;
    sig->attrs[0] = (fp_attr){.name = fp_intern(m, "alpha", -1), .type = FP_ATTR_FLOAT, .u.f = 1.0 / 6.0};
    sig->attrs[1] = (fp_attr){.name = fp_intern(m, "beta", -1), .type = FP_ATTR_FLOAT, .u.f = 0.5};
    fp_value **ins = fp_arena_calloc(m->arena, 2, sizeof(fp_value *));
    ins[0] = x;
    ins[1] = hs;
    n->inputs = ins;
    n->n_inputs = 2;
    n->op = FP_OP_MUL;
    n->op_type = fp_intern(m, "Mul", -1);
    n->domain = fp_intern(m, "", -1);
}

bool fp_pass_expand(fp_model *m, const fp_target *t, fp_diag *diag)
{
    if (!t->expand || !g_strv_contains((const char *const *)t->expand, "HardSwish"))
        return false;
    uint32_t count = 0;
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        fp_graph *g = m->graphs->pdata[gi];
        guint len = g->nodes->len; /* the nodes added here are not expanded again */
        for (guint i = 0; i < len; i++) {
            fp_node *n = g->nodes->pdata[i];
            if (n->op != FP_OP_HARD_SWISH || (n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)) || n->n_inputs < 1 ||
                !n->inputs[0])
                continue;
            expand_hard_swish(m, n);
            count++;
        }
    }
    if (!count)
        return false;
    if (diag)
        fp_diag_add(diag, FP_DIAG_INFO, "expand", "expand-function", NULL,
                    "%u HardSwish ran as HardSigmoid + Mul: %s has no kernel for it and inlines its function body",
                    count, t->name);
    fp_model_link(m);
    return true;
}
