/* fuse_constraints.c - the named predicates fusion rules are built from, check_NAME for each row
 * NAME of fuse_constraints.def. Each one checks a match and, when it fails, explains why: the
 * actual value, the required one, a one-line message naming the node, and a concrete fix. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "passes/fusion/fuse.h"
#include "passes/float16.h"

const char *const fp_fuse_constraint_names[FP_CONSTRAINT_COUNT] = {
#define X(name) [FP_CONSTRAINT_##name] = #name,
#include "passes/fusion/fuse_constraints.def"
#undef X
};

/* ---------------------------------------------------------------- helpers */

static char *fmt(const fp_match *mt, const char *f, ...) G_GNUC_PRINTF(2, 3);

/* What glibc's printf prints for a NULL %s. */
static const char *or_null(const char *s) { return s ? s : "(null)"; }

#define FMT_PLAIN_MAX 8 /* most %s of a format fmt concatenates without printf */

/* printf into the match's scratch arena (fp_match.tmp). Formats of plain %s (most explanations:
 * node, value and op names) are concatenated without printf, which costs more than the rest of a
 * refused candidate's check: one scan of f counts them, one copies. */
static char *fmt(const fp_match *mt, const char *f, ...)
{
    va_list ap;
    int n_args = 0;
    bool plain = true;
    for (const char *p = strchr(f, '%'); p && plain; p = strchr(p + 2, '%'))
        plain = p[1] == 's' && n_args++ < FMT_PLAIN_MAX;
    char *out;
    va_start(ap, f);
    if (plain) {
        const char *args[FMT_PLAIN_MAX];
        size_t lens[FMT_PLAIN_MAX], len = strlen(f) - 2 * (size_t)n_args;
        for (int i = 0; i < n_args; i++) {
            args[i] = or_null(va_arg(ap, const char *));
            len += lens[i] = strlen(args[i]);
        }
        char *w = out = fp_arena_alloc(mt->tmp, len + 1);
        const char *p = f;
        for (int i = 0; i < n_args; i++) {
            const char *q = strchr(p, '%');
            memcpy(w, p, (size_t)(q - p));
            w += q - p;
            memcpy(w, args[i], lens[i]);
            w += lens[i];
            p = q + 2;
        }
        strcpy(w, p);
    } else {
        va_list again;
        va_copy(again, ap);
        char buf[512];
        int n = vsnprintf(buf, sizeof buf, f, ap);
        g_assert(n >= 0);
        if ((size_t)n < sizeof buf) {
            out = fp_arena_strndup(mt->tmp, buf, (size_t)n);
        } else {
            out = fp_arena_alloc(mt->tmp, (size_t)n + 1);
            vsnprintf(out, (size_t)n + 1, f, again);
        }
        va_end(again);
    }
    va_end(ap);
    return out;
}

static char *sdup(const fp_match *mt, const char *s) { return fp_arena_strndup(mt->tmp, s, strlen(s)); }

/* fp_shape_to_string's text ("?", "scalar", "1x?xN"), in the match's scratch arena: a refused
 * candidate's explanation formats shapes, and a GString each costs more than the rest. */
static char *shape_str(const fp_match *mt, const fp_shape *s)
{
    if (s->rank < 0)
        return sdup(mt, "?");
    if (s->rank == 0)
        return sdup(mt, "scalar");
    size_t len = 0;
    for (int32_t i = 0; i < s->rank; i++)
        len += 1 + (s->dims[i].sym ? strlen(s->dims[i].sym) : 20);
    char *out = fp_arena_alloc(mt->tmp, len + 1), *w = out;
    for (int32_t i = 0; i < s->rank; i++) {
        if (i)
            *w++ = 'x';
        if (s->dims[i].sym) {
            size_t n = strlen(s->dims[i].sym);
            memcpy(w, s->dims[i].sym, n);
            w += n;
        } else if (s->dims[i].value >= 0) {
            char num[24], *end = num + sizeof num, *p = end;
            uint64_t x = (uint64_t)s->dims[i].value;
            do
                *--p = (char)('0' + x % 10);
            while ((x /= 10));
            memcpy(w, p, (size_t)(end - p));
            w += end - p;
        } else {
            *w++ = '?';
        }
    }
    *w = '\0';
    return out;
}

/* Appends a reason why constraint c refused, allocated in mt->tmp like the strings it is given. */
static void reason(const fp_match *mt, GPtrArray *out, const fp_constraint *c, char *actual, char *required,
                   char *message, char *hint)
{
    fp_reason *r = fp_arena_alloc(mt->tmp, sizeof *r);
    r->constraint = sdup(mt, fp_fuse_constraint_names[c->id]);
    r->actual = actual;
    r->required = required;
    r->message = message;
    r->hint = hint;
    g_ptr_array_add(out, r);
}

/* Matched node for pattern index k (a repeated last node: its first link). */
static fp_node *node_at(const fp_match *mt, int k) { return k >= 0 && k < mt->n ? mt->nodes[k] : NULL; }

static const char *origin(const fp_value *v)
{
    if (v->kind == FP_VALUE_INPUT)
        return "a graph input";
    if (v->producer)
        return v->producer->name;
    return "nothing";
}

fp_value *fp_fuse_other_input(const fp_match *mt, const fp_node *n)
{
    int idx = 0;
    while (idx < mt->n && mt->nodes[idx] != n)
        idx++;
    const fp_pat_node *p = &mt->rule->pattern[MIN(idx, mt->rule->n_pattern - 1)];
    bool x_is_pattern = idx == 0 || p->from == FP_PAT_X || p->from2 == FP_PAT_X;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        fp_value *v = n->inputs[i];
        if (v && !(v->producer && fp_fuse_in_match(mt, v->producer)) && !(x_is_pattern && v == mt->x))
            return v;
    }
    return NULL;
}

static bool const_scalar(const fp_value *v, double *out);

/* Scalar value of a small constant, if it has exactly one element (or all equal). */
static bool const_scalar(const fp_value *v, double *out)
{
    const fp_tensor *t = v ? (v->tensor && v->tensor->where == FP_DATA_INLINE ? v->tensor : fp_value_fold(v)) : NULL;
    uint64_t n;
    if (!t || t->where != FP_DATA_INLINE || !fp_shape_numel(&t->shape, &n) || n == 0)
        return false;
    double first = 0;
    for (uint64_t k = 0; k < n; k++) {
        double x;
        if (!fp_tensor_number(t, k, &x))
            return false;
        if (k == 0)
            first = x;
        else if (x != first)
            return false;
    }
    *out = first;
    return true;
}

/* fp_target_list_has for constraint c of the match's rule, remembered in mt->memo. */
static bool list_has(const fp_match *mt, const fp_constraint *c, const char *s)
{
    if (!mt->memo)
        return fp_target_list_has(mt->target, mt->rule->id, c, s);
    fp_list_memo *e = &mt->memo[(((uintptr_t)c >> 4) * 31 + ((uintptr_t)s >> 3)) & (FP_LIST_MEMO - 1)];
    if (e->c != c || e->s != s)
        *e = (fp_list_memo){c, s, fp_target_list_has(mt->target, mt->rule->id, c, s)};
    return e->has;
}

static char *fmt_num(const fp_match *mt, double x) { return fmt(mt, "%g", x); }

static bool sh_eq(fp_dim a, fp_dim b)
{
    return a.sym ? a.sym == b.sym : (a.value >= 0 && a.value == b.value && !b.sym);
}

/* ---------------------------------------------------------------- predicates */

static bool check_single_consumer(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    int last = mt->n - 1;
    for (int i = 0; i < mt->n; i++) {
        fp_node *n = mt->nodes[i];
        if ((c->node >= 0 && i != c->node) || (c->node < 0 && i == last))
            continue;
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            fp_value *v = n->outputs[k];
            if (!v)
                continue;
            for (uint32_t u = 0; u < v->n_uses; u++) {
                fp_node *user = v->uses[u].node;
                if (fp_fuse_in_match(mt, user))
                    continue;
                reason(mt, out, c, fmt(mt, "%u consumers", v->n_uses), sdup(mt, "read only by the pattern"),
                       fmt(mt, "%s %s: output '%s' also feeds %s '%s' outside the %s pattern", n->op_type, n->name,
                           v->name, user->op_type, user->name, mt->rule->id),
                       fmt(mt,
                           "the runtime cannot drop '%s' while '%s' reads it: give '%s' its own copy or "
                           "restructure so that only the pattern reads it",
                           v->name, user->name, user->name));
                return false;
            }
        }
    }
    return true;
}

/* Every node of the match is assigned to the EP when the rule runs: on a target whose float16 ops
 * get Casts (passes/float16.c), a float16 node without a float16 kernel has no EP until they go
 * in, and ORT's level-2 fusions leave it (graph_utils::IsSupportedProvider). */
static bool check_assigned(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    if (fp_float16_stage_of(mt->target) == FP_FLOAT16_NONE)
        return true;
    for (int i = 0; i < mt->n; i++) {
        const fp_node *n = mt->nodes[i];
        if (!fp_float16_unassigned(n))
            continue;
        reason(mt, out, c, sdup(mt, "no EP"), sdup(mt, "assigned to the CPU EP"),
               fmt(mt,
                   "%s %s: reads float16 and the CPU EP has no float16 kernel for it, so no EP runs it "
                   "when the fusions run (its Casts come after)",
                   n->op_type, n->name),
               sdup(mt, "run the model in float32 on the CPU EP, or use ORT_ENABLE_ALL, where the Casts come first"));
        return false;
    }
    return true;
}

/* Every node of the match is assigned to the EP unless the model's opset is at least param
 * `level1_opset`: ONNX Runtime registers the rule's transformer at level 1 too, where it runs from
 * that opset on, before partitioning, on nodes no EP holds yet (LayerNormFusion: the ONNX
 * LayerNormalization of opset 17); below it runs at level 2, as `assigned` says. */
static bool check_level2_assigned(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *n = node_at(mt, 0);
    if (n && n->opset >= fp_target_num(mt->target, mt->rule->id, c))
        return true;
    return check_assigned(c, mt, out);
}

/* Gate: the match is the one of this call's phase where the rule is in the target's
 * `before_partition` and split between the phases by the model opset param `level1_opset`: ONNX
 * Runtime registers its transformer at levels 1 and 2, and the level-1 instance takes the nodes of
 * that opset on, before partitioning, the level-2 one those below it, after (LayerNormFusion). */
static bool check_level1_phase(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    const fp_target *t = mt->target;
    const fp_node *n = node_at(mt, 0);
    if (mt->phase == FP_FUSE_ALL || !n || !fp_target_listed(t->before_partition, mt->rule->id))
        return true;
    return (n->opset >= fp_target_num(t, mt->rule->id, c)) == (mt->phase == FP_FUSE_BEFORE_PARTITION);
}

static bool check_not_graph_output(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    int last = mt->n - 1;
    for (int i = 0; i < mt->n; i++) {
        fp_node *n = mt->nodes[i];
        if ((c->node >= 0 && i != c->node) || (c->node < 0 && i == last && mt->n > 1))
            continue;
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            fp_value *v = n->outputs[k];
            if (v && v->is_output) {
                reason(mt, out, c, sdup(mt, "graph output"), sdup(mt, "an internal value"),
                       fmt(mt, "%s %s: output '%s' is a graph output, so it must stay materialized", n->op_type,
                           n->name, v->name),
                       fmt(mt, "remove '%s' from the graph outputs if nothing downstream needs it", v->name));
                return false;
            }
        }
    }
    return true;
}

/* The Identity (c->node) writes no graph output, or its input comes from another node (no graph
 * input, weight or folded value), is no graph output itself and has this Identity as its one
 * reader: ONNX Runtime's EliminateIdentity then lets the producer write the graph output. */
static bool check_identity_output(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *n = node_at(mt, MAX(c->node, 0));
    const fp_value *y = n && n->n_outputs ? n->outputs[0] : NULL, *x = n && n->n_inputs ? n->inputs[0] : NULL;
    if (!y || !y->is_output)
        return true;
    const fp_node *p = x ? x->producer : NULL;
    if (p && p->op != FP_OP_CONSTANT && !(p->flags & FP_NODE_FOLDED) && !x->is_output && x->n_uses == 1)
        return true;
    const char *why = !p               ? "comes from no node (a graph input or a weight)"
                      : x->is_output   ? "is a graph output too"
                      : x->n_uses != 1 ? "has other readers"
                                       : "is a constant";
    reason(mt, out, c, fmt(mt, "graph output; its input %s", why),
           sdup(mt, "an internal value, or a graph output whose input has one reader and comes from a node"),
           fmt(mt, "%s %s: output '%s' is a graph output and its input '%s' %s, so ONNX Runtime keeps the copy",
               n->op_type, n->name, y->name, x ? x->name : "", why),
           sdup(mt, "nothing to change: the op costs one copy; drop it from the export to save it"));
    return false;
}

static bool check_const_inputs(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    for (uint32_t i = 1; n && i < n->n_inputs; i++) {
        if (c->port >= 0 && (int)i != c->port)
            continue;
        fp_value *v = n->inputs[i];
        if (!v || fp_value_is_constant(v))
            continue;
        reason(mt, out, c, fmt(mt, "computed by %s", origin(v)), sdup(mt, "a constant initializer"),
               fmt(mt, "%s %s: input %u '%s' is not a constant (it comes from %s)", n->op_type, n->name, i, v->name,
                   origin(v)),
               fmt(mt,
                   "make '%s' an initializer (e.g. export with constant folding on, or fold it with "
                   "onnxsim) so the compiler can precompute the fused weights",
                   v->name));
        return false;
    }
    return true;
}

/* The float16 value that the data input of a LayerNorm whose first ReduceMean is rm is cast from,
 * where ONNX Runtime's level-2 LayerNormFusion refuses it for that, or NULL. Below the opset
 * level1_opset that instance fuses, after partitioning: a Cast read only by the ReduceMean and the
 * Sub is part of the match and x_input its input, which the CPU EP refuses in float16. Only on a
 * target whose float16 ops get Casts (the CPU EP's); at its level all they come before the fusions. */
static const fp_value *half_behind_cast(const fp_target *t, const fp_node *rm, double level1_opset)
{
    const fp_value *x = rm && rm->op == FP_OP_REDUCE_MEAN && rm->n_inputs ? rm->inputs[0] : NULL;
    const fp_node *cast = x ? x->producer : NULL;
    if (!cast || cast->op != FP_OP_CAST || rm->opset >= level1_opset || x->n_uses != 2 || x->is_output ||
        !cast->n_inputs || !cast->inputs[0] || cast->inputs[0]->dtype != FP_DT_FLOAT16 ||
        fp_float16_stage_of(t) == FP_FLOAT16_NONE)
        return NULL;
    return cast->inputs[0];
}

static bool check_cpu_half_input(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *rm = node_at(mt, 0);
    const fp_value *half = half_behind_cast(mt->target, rm, fp_target_num(mt->target, mt->rule->id, c));
    if (!half)
        return true;
    reason(mt, out, c, fmt(mt, "float16 '%s' through Cast %s", half->name, rm->inputs[0]->producer->name),
           sdup(mt, "float32 or float64 on the CPU EP"),
           fmt(mt,
               "%s %s: its input is float16 '%s' behind Cast %s, which the fusion takes in: the CPU EP has no "
               "float16 LayerNorm fusion below opset %.0f",
               rm->op_type, rm->name, half->name, rm->inputs[0]->producer->name,
               fp_target_num(mt->target, mt->rule->id, c)),
           fmt(mt, "export at opset %.0f or later (LayerNormFusion then runs before partitioning) or in float32",
               fp_target_num(mt->target, mt->rule->id, c)));
    return false;
}

/* Gate: the RMSNorm pattern whose last node is c->node is no whole LayerNorm that the layer_norm
 * rule takes (ORT's LayerNormFusion runs before SimplifiedLayerNormFusion): its x is not `x - mean`,
 * or the scale Mul's lone reader is no Add of a 1-D operand (the beta, constant or not), or
 * layer_norm refuses the float16 input (cpu_half_input, param level1_opset). */
static bool check_not_layer_norm(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    const fp_node *mul = node_at(mt, c->node);
    const fp_value *y = mul && mul->n_outputs ? mul->outputs[0] : NULL;
    if (!mt->x || !mt->x->producer || mt->x->producer->op != FP_OP_SUB || !y || y->n_uses != 1)
        return true;
    const fp_node *sub = mt->x->producer, *add = y->uses[0].node;
    if (add->op != FP_OP_ADD || add->n_inputs != 2)
        return true;
    const fp_node *rm = sub->n_inputs == 2 && sub->inputs[1] ? sub->inputs[1]->producer : NULL;
    if (half_behind_cast(mt->target, rm, fp_target_num(mt->target, mt->rule->id, c)))
        return true;
    const fp_value *beta = add->inputs[add->inputs[0] == y ? 1 : 0];
    return !beta || beta->shape.rank != 1;
}

static bool check_const_other(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    fp_value *v = n ? fp_fuse_other_input(mt, n) : NULL;
    if (!n || (v && fp_value_is_constant(v)))
        return true;
    if (!out) /* a gate's verdict only */
        return false;
    if (!v) {
        reason(mt, out, c, sdup(mt, "no operand outside the pattern"), sdup(mt, "a constant"),
               fmt(mt, "%s %s: has no constant operand", n->op_type, n->name), sdup(mt, "-"));
        return false;
    }
    reason(mt, out, c, fmt(mt, "computed by %s", origin(v)), sdup(mt, "a constant"),
           fmt(mt, "%s %s: operand '%s' is not a constant (it comes from %s)", n->op_type, n->name, v->name, origin(v)),
           fmt(mt, "fold '%s' into an initializer before deployment", v->name));
    return false;
}

static bool check_bn_outputs_unused(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    for (uint32_t k = 1; n && k < n->n_outputs; k++) {
        fp_value *v = n->outputs[k];
        if (v && (v->n_uses || v->is_output)) {
            reason(mt, out, c, fmt(mt, "output %u '%s' used", k, v->name), sdup(mt, "only output 0 used"),
                   fmt(mt, "%s %s: training output %u '%s' is used", n->op_type, n->name, k, v->name),
                   sdup(mt, "export the model in inference mode (model.eval()) so BatchNormalization has one output"));
            return false;
        }
    }
    return true;
}

static bool check_dtype_in(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    fp_value *v = n && c->port >= 0 && (uint32_t)c->port < n->n_inputs ? n->inputs[c->port] : NULL;
    if (!v)
        return true;
    if (list_has(mt, c, fp_dtype_name(v->dtype)))
        return true;
    g_auto(GStrv) list = fp_target_list_param(mt->target, mt->rule->id, c);
    g_autofree char *joined = g_strjoinv(", ", list);
    reason(mt, out, c, sdup(mt, fp_dtype_name(v->dtype)), fmt(mt, "one of %s", joined),
           fmt(mt, "%s %s: input '%s' is %s; rule %s needs %s", n->op_type, n->name, v->name, fp_dtype_name(v->dtype),
               mt->rule->id, joined),
           fmt(mt, "run the model in %s, or use a target whose kernels support %s", joined, fp_dtype_name(v->dtype)));
    return false;
}

static bool check_bn_params_1d(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *bn = node_at(mt, c->node), *conv = mt->nodes[0];
    fp_value *w = conv->n_inputs > 1 ? conv->inputs[1] : NULL;
    int64_t ch = w && w->shape.rank > 2 ? w->shape.dims[0].value : -1;
    if (ch >= 0 && conv->op == FP_OP_CONV_TRANSPOSE) { /* W is [C_in, C_out / group, k...] */
        int64_t per_group = w->shape.dims[1].value, group = fp_node_attr_int(conv, "group", 1);
        ch = per_group >= 0 && group > 0 && per_group <= G_MAXINT64 / group ? per_group * group : -1;
    }
    for (uint32_t i = 1; bn && i < 5 && i < bn->n_inputs; i++) {
        fp_value *v = bn->inputs[i];
        if (!v)
            continue;
        if (v->shape.rank != 1 || (ch >= 0 && v->shape.dims[0].value != ch)) {
            const char *s = shape_str(mt, &v->shape);
            reason(mt, out, c, fmt(mt, "'%s' has shape %s", v->name, s), fmt(mt, "1-D of length %" G_GINT64_FORMAT, ch),
                   fmt(mt, "%s %s: parameter '%s' has shape %s, not [%" G_GINT64_FORMAT "]", bn->op_type, bn->name,
                       v->name, s, ch),
                   sdup(mt,
                        "store BatchNormalization's scale, bias, mean and var as 1-D tensors of the channel count"));
            return false;
        }
    }
    if (w && w->shape.rank <= 2) {
        reason(mt, out, c, fmt(mt, "weight rank %d", w->shape.rank), sdup(mt, "rank > 2"),
               fmt(mt, "%s %s: weight '%s' has rank %d", conv->op_type, conv->name, w->name, w->shape.rank),
               sdup(mt, "not a spatial convolution"));
        return false;
    }
    return true;
}

static double bn_epsilon(const fp_node *bn) { return fp_node_attr_float(bn, "epsilon", 1e-5); }

static bool check_max_epsilon(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *bn = node_at(mt, c->node);
    double limit = fp_target_num(mt->target, mt->rule->id, c);
    if (!bn || limit <= 0)
        return true;
    double eps = bn_epsilon(bn);
    if (eps <= limit * (1 + 1e-9))
        return true;
    reason(mt, out, c, fmt_num(mt, eps), fmt(mt, "<= %g", limit),
           fmt(mt, "%s %s: epsilon %g > max %g for rule %s on %s", bn->op_type, bn->name, eps, limit, mt->rule->id,
               mt->target->name),
           fmt(mt, "re-export with eps <= %g or set [rule.%s] %s in the target .ini", limit, mt->rule->id, c->param));
    return false;
}

static bool check_min_epsilon(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *bn = node_at(mt, c->node);
    double limit = fp_target_num(mt->target, mt->rule->id, c);
    if (!bn || limit <= 0)
        return true;
    double eps = bn_epsilon(bn);
    if (eps >= limit * (1 - 1e-9))
        return true;
    reason(mt, out, c, fmt_num(mt, eps), fmt(mt, ">= %g", limit),
           fmt(mt, "%s %s: epsilon %g < min %g for rule %s on %s", bn->op_type, bn->name, eps, limit, mt->rule->id,
               mt->target->name),
           fmt(mt, "re-export with eps >= %g or set [rule.%s] %s in the target .ini", limit, mt->rule->id, c->param));
    return false;
}

static bool check_per_channel(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node), *conv = mt->nodes[0];
    fp_value *v = n ? fp_fuse_other_input(mt, n) : NULL;
    fp_value *w = conv->n_inputs > 1 ? conv->inputs[1] : NULL;
    if (!v || !w || w->shape.rank < 1)
        return true;
    int64_t ch = w->shape.dims[0].value;
    int32_t orank = conv->outputs[0] ? conv->outputs[0]->shape.rank : -1;
    uint64_t numel = 0;
    bool ok = fp_shape_numel(&v->shape, &numel) && (numel == 1 || numel == (uint64_t)ch);
    /* the constant must vary only along the channel axis: [C,1,...,1] aligned with the output */
    if (ok && numel != 1 && orank > 0) {
        int32_t r = v->shape.rank, chan_pos = r - (orank - 1);
        for (int32_t d = 0; d < r && ok; d++)
            ok = d == chan_pos ? v->shape.dims[d].value == ch : v->shape.dims[d].value == 1;
    }
    if (ok)
        return true;
    const char *s = shape_str(mt, &v->shape);
    reason(mt, out, c, fmt(mt, "shape %s", s), fmt(mt, "a scalar or [%" G_GINT64_FORMAT ",1,1]", ch),
           fmt(mt, "%s %s: operand '%s' of shape %s does not scale per output channel", n->op_type, n->name, v->name,
               s),
           sdup(mt, "only per-channel constants fold into the convolution's weights and bias"));
    return false;
}

/* ONNX Runtime's ConvMulFusion and ConvAddFusion look for the constant at input 1 of the Mul or
 * Add only: k * conv, the constant first, is no candidate for them. */
static bool check_const_second(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    fp_value *second = n && n->n_inputs > 1 ? n->inputs[1] : NULL, *first = n && n->n_inputs ? n->inputs[0] : NULL;
    if (!n || !second || !first || fp_value_is_constant(second))
        return true;
    reason(
        mt, out, c, fmt(mt, "constant '%s' at input 0", first->name), sdup(mt, "the constant at input 1"),
        fmt(mt,
            "%s %s: its constant '%s' is input 0 and '%s' (from %s) input 1; rule %s reads the constant at input 1 only",
            n->op_type, n->name, first->name, second->name, origin(second), mt->rule->id),
        fmt(mt,
            "write it as %s('%s', '%s'), the constant second (swap the inputs in the exporter or with onnx-graphsurgeon)",
            n->op_type, second->name, first->name));
    return false;
}

/* Whether constant k fits the weights w of rank wr as ONNX Runtime's ConvMulFusion/ConvAddFusion
 * take it: of w's rank with the channels on axis 1 ([1, C, 1, 1]), or of one less with them on
 * axis 0 ([C, 1, 1]), every other dim 1; a rank-0 scalar when `scalar`. */
static bool channel_shape_fits(const fp_shape *k, const fp_shape *w, bool scalar)
{
    if (w->rank <= 2 || k->rank < 0)
        return false;
    if (k->rank == 0)
        return scalar;
    int axis = k->rank == w->rank ? 1 : k->rank == w->rank - 1 ? 0 : -1;
    if (axis < 0 || w->dims[0].sym || w->dims[0].value < 0 || k->dims[axis].sym ||
        k->dims[axis].value != w->dims[0].value)
        return false;
    for (int32_t d = 0; d < k->rank; d++)
        if (d != axis && (k->dims[d].sym || k->dims[d].value != 1))
            return false;
    return true;
}

/* The Mul's or Add's constant has the shape and dtype ONNX Runtime folds into the Conv (param
 * `scalar`: 1 lets a rank-0 scalar fold, as a Mul's does and an Add's does not). */
static bool check_channel_operand(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node), *conv = mt->nodes[0];
    fp_value *k = n ? fp_fuse_other_input(mt, n) : NULL;
    fp_value *w = conv->n_inputs > 1 ? conv->inputs[1] : NULL;
    if (!k || !w)
        return true;
    bool scalar = fp_target_num(mt->target, mt->rule->id, c) != 0;
    if (channel_shape_fits(&k->shape, &w->shape, scalar) && k->dtype == w->dtype)
        return true;
    const char *ks = shape_str(mt, &k->shape), *ws = shape_str(mt, &w->shape);
    if (k->dtype != w->dtype) {
        reason(mt, out, c, sdup(mt, fp_dtype_name(k->dtype)), fmt(mt, "%s, as the weights", fp_dtype_name(w->dtype)),
               fmt(mt, "%s %s: operand '%s' is %s, the weights '%s' %s", n->op_type, n->name, k->name,
                   fp_dtype_name(k->dtype), w->name, fp_dtype_name(w->dtype)),
               sdup(mt, "store the constant in the weights' dtype"));
        return false;
    }
    reason(mt, out, c, fmt(mt, "shape %s", ks),
           fmt(mt, "[C,1,...] or [1,C,1,...] of the weights' rank (C their dim 0; weights %s)%s", ws,
               scalar ? ", or a rank-0 scalar" : ""),
           fmt(mt, "%s %s: operand '%s' of shape %s is not one value per output channel in a shape rule %s takes",
               n->op_type, n->name, k->name, ks, mt->rule->id),
           fmt(mt, "store the constant as [C, 1, 1]%s: a shape [1] or [1, 1, 1, 1] broadcasts alike but is not folded",
               scalar ? " or a rank-0 scalar" : " (a scalar is not folded into the bias either)"));
    return false;
}

/* Whether every input of the main graph is declared with a static shape in the file (what a
 * runtime that has not been told the batch size sees). */
static bool model_inputs_static(const fp_graph *g)
{
    while (g->parent)
        g = g->parent;
    for (guint i = 0; i < g->inputs->len; i++)
        if (!fp_shape_static(&((const fp_value *)g->inputs->pdata[i])->decl_shape))
            return false;
    return true;
}

/* Whether the dims of a, MatMul mm's A, are all known when the target optimizes: on a target that
 * optimizes on the declared dims, a's shape then (fp_value_load_shape) where recorded; else (and
 * when none was recorded) whether the model's inputs are declared static. */
static bool a_static_at_load(const fp_match *mt, const fp_node *mm, const fp_value *a)
{
    const fp_shape *s = mt->target->fold_declared ? fp_value_load_shape(a) : NULL;
    return s ? fp_shape_static(s) : model_inputs_static(mm->graph);
}

/* ONNX Runtime's MatMulAddFusion: B is 2-D with known dims; an A of rank 2 takes a bias [N], [1,N],
 * [M,1] or [M,N]; any other A is reshaped to 2-D around the Gemm, which needs A's dims all known
 * when the runtime optimizes (a_static_at_load) and a bias [N]. (Newer ORT sources also skip
 * attention output projections; ORT 1.30, measured, fuses them.) */
static bool check_gemm_operands(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *mm = node_at(mt, 0), *add = node_at(mt, 1);
    fp_value *a = mm->inputs[0], *b = mm->n_inputs > 1 ? mm->inputs[1] : NULL,
             *bias = add ? fp_fuse_other_input(mt, add) : NULL;
    const char *why = NULL, *hint = NULL;
    if (!b || b->shape.rank != 2 || !fp_shape_static(&b->shape)) {
        why = "B is not a 2-D matrix of known size";
        hint = "Gemm multiplies by a 2-D matrix; batched weights stay MatMul + Add";
    } else if (!bias || bias->shape.rank < 0) {
        why = "the Add's other operand has no known shape";
        hint = "give the bias a static shape";
    } else {
        fp_dim n = b->shape.dims[1];
        const fp_shape *cs = &bias->shape;
        bool row = cs->rank == 1 && sh_eq(cs->dims[0], n);
        if (a->shape.rank == 2) {
            fp_dim m = a->shape.dims[0];
            bool one0 = cs->rank == 2 && fp_dim_known(cs->dims[0]) && cs->dims[0].value == 1;
            bool one1 = cs->rank == 2 && fp_dim_known(cs->dims[1]) && cs->dims[1].value == 1;
            bool ok = row || (one0 && sh_eq(cs->dims[1], n)) ||
                      (cs->rank == 2 && sh_eq(cs->dims[0], m) && (one1 || sh_eq(cs->dims[1], n)));
            if (!ok) {
                why = "the Add's operand does not broadcast as Gemm's C";
                hint = "Gemm's C must be [N], [1,N], [M,1] or [M,N]";
            }
        } else if (!a_static_at_load(mt, mm, a)) {
            why = "A is not 2-D and the model's inputs have symbolic dims, so the reshape to 2-D cannot be fixed "
                  "at load time";
            hint = "export with static input shapes (or keep MatMul + Add)";
        } else if (!row) {
            why = "A is not 2-D and the bias is not [N]";
            hint = "a reshaped Gemm takes a 1-D bias only";
        }
    }
    if (!why)
        return true;
    const char *sa = a ? shape_str(mt, &a->shape) : "?";
    const char *sb = b ? shape_str(mt, &b->shape) : "?";
    const char *sc = bias ? shape_str(mt, &bias->shape) : "?";
    reason(mt, out, c, fmt(mt, "A %s, B %s, bias %s", sa, sb, sc), sdup(mt, "a Gemm-compatible MatMul + Add"),
           fmt(mt, "%s %s: %s", mm->op_type, mm->name, why), sdup(mt, hint));
    return false;
}

static bool check_activation_in(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *act = node_at(mt, c->node);
    if (!act)
        return true;
    if (list_has(mt, c, act->op_type))
        return true;
    g_auto(GStrv) list = fp_target_list_param(mt->target, mt->rule->id, c);
    g_autofree char *joined = g_strjoinv(", ", list);
    reason(mt, out, c, sdup(mt, act->op_type), fmt(mt, "one of %s", joined),
           fmt(mt, "%s %s: %s is not an activation %s fuses into %s on %s", act->op_type, act->name, act->op_type,
               mt->target->name, mt->rule->id, joined),
           fmt(mt, "use one of %s, or add %s to [rule.%s] %s if the target supports it", joined, act->op_type,
               mt->rule->id, c->param));
    return false;
}

static bool check_clip_const_bounds(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *act = node_at(mt, c->node);
    if (!act || act->op != FP_OP_CLIP)
        return true;
    for (uint32_t i = 1; i < act->n_inputs; i++) {
        fp_value *v = act->inputs[i];
        if (v && !fp_value_is_constant(v)) {
            reason(mt, out, c, fmt(mt, "'%s' computed by %s", v->name, origin(v)), sdup(mt, "constant min/max"),
                   fmt(mt, "Clip %s: bound '%s' is not a constant", act->name, v->name),
                   sdup(mt, "make Clip's min and max initializers"));
            return false;
        }
    }
    return true;
}

/* The input of n the constraint's port names, else (no port) n's operand from outside the match
 * (fp_fuse_other_input). */
static fp_value *port_or_other(const fp_constraint *c, const fp_match *mt, const fp_node *n)
{
    return c->port >= 0 && (uint32_t)c->port < n->n_inputs ? n->inputs[c->port] : fp_fuse_other_input(mt, n);
}

static bool check_const_value(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    if (!n)
        return true;
    fp_value *v = port_or_other(c, mt, n);
    double want = fp_target_num(mt->target, mt->rule->id, c), got;
    /* ONNX Runtime's rules compare in float32 within 1e-8 + 1e-5 |want| (optimizer/utils.cc,
     * IsInitializerWithExpectedValue): a float16 sqrt(2) or 0.044715 is another constant there */
    bool ort = mt->rule->source && g_str_has_prefix(mt->rule->source, "onnxruntime");
    double tol = ort ? 1e-8 + 1e-5 * fabs(want) : 1e-3 * MAX(1.0, fabs(want));
    if (v && const_scalar(v, &got) && fabs((double)(float)got - (double)(float)want) <= tol)
        return true;
    if (!out) /* a gate's verdict only */
        return false;
    bool known = v && const_scalar(v, &got);
    reason(mt, out, c, known ? fmt_num(mt, got) : sdup(mt, v ? "not a constant scalar" : "missing"), fmt_num(mt, want),
           fmt(mt, "%s %s: operand %s is %s, the %s pattern needs %g", n->op_type, n->name, v ? v->name : "?",
               known ? "a different constant" : "not a constant scalar", mt->rule->id, want),
           sdup(mt, "the subgraph computes something else than the fused op; nothing to change if that is intended"));
    return false;
}

static bool check_bias_1d(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *add = node_at(mt, c->node);
    fp_value *b = NULL;
    for (uint32_t i = 0; add && i < add->n_inputs && !b; i++)
        if (add->inputs[i] && fp_value_is_constant(add->inputs[i]))
            b = add->inputs[i];
    if (b && b->shape.rank == 1)
        return true;
    if (!out) /* a gate's verdict only */
        return false;
    reason(mt, out, c, b ? fmt(mt, "rank %d", b->shape.rank) : sdup(mt, "no constant operand"),
           sdup(mt, "a 1-D constant bias"),
           fmt(mt, "%s %s: no 1-D constant bias operand", add ? add->op_type : "?", add ? add->name : "?"),
           sdup(mt, "BiasGelu needs Add(x, bias) with a 1-D initializer bias"));
    return false;
}

/* ONNX Runtime's BiasGeluFusion: one operand of the Add is 1-D, constant or not, and its one dim
 * equals the other operand's last dim, both known. */
static bool check_bias_last_dim(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *add = node_at(mt, c->node);
    for (uint32_t i = 0; add && add->n_inputs == 2 && i < 2; i++) {
        fp_value *b = add->inputs[i], *x = add->inputs[1 - i];
        if (!b || !x || b->shape.rank != 1 || x->shape.rank < 1)
            continue;
        fp_dim bd = b->shape.dims[0], xd = x->shape.dims[x->shape.rank - 1];
        if (fp_dim_known(bd) && fp_dim_known(xd) && bd.value == xd.value)
            return true;
    }
    if (!out) /* a gate's verdict only */
        return false;
    reason(mt, out, c, sdup(mt, "no 1-D operand matching the other's last dim"),
           sdup(mt, "a 1-D bias of the last dim's length"),
           fmt(mt, "%s %s: no 1-D operand whose length is the other operand's last dim", add ? add->op_type : "?",
               add ? add->name : "?"),
           sdup(mt, "BiasGelu needs Add(x, bias) with bias 1-D of x's last dim, both sizes known"));
    return false;
}

/* The operand of node c->node that does not come from the pattern is a 1-D constant (a
 * normalization's scale). */
static bool check_const_1d(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    fp_value *v = n ? fp_fuse_other_input(mt, n) : NULL;
    if (!v || v->shape.rank == 1)
        return true;
    reason(mt, out, c, fmt(mt, "rank %d (%s)", v->shape.rank, shape_str(mt, &v->shape)), sdup(mt, "rank 1"),
           fmt(mt, "%s %s: operand '%s' is not 1-D", n->op_type, n->name, v->name),
           fmt(mt, "store '%s' as a 1-D tensor of the normalized dimension (squeeze its leading 1s)", v->name));
    return false;
}

bool fp_fuse_transpose_flags(const fp_node *t, bool *trans, bool *batch, const char **why)
{
    const fp_attr *a = fp_node_attr(t, "perm");
    int32_t r = a ? (int32_t)a->n : t->n_inputs && t->inputs[0] ? t->inputs[0]->shape.rank : -1;
    *why = NULL;
    if (a && a->type != FP_ATTR_INTS)
        *why = "a perm that is not a list of ints";
    else if (r < 2)
        *why = r < 0 ? "no perm and an input of unknown rank" : "rank below 2";
    if (*why)
        return false;
    int64_t p[FP_MAX_RANK];
    for (int32_t i = 0; i < r && i < FP_MAX_RANK; i++)
        p[i] = a ? a->u.ints[i] : r - 1 - i; /* no perm: the axes reversed */
    *trans = p[r - 2] == r - 1;
    bool ok = *trans || p[r - 1] == r - 1; /* the last axis stays in the matrix */
    *batch = r >= 3 && p[0] == 1;
    if (r >= 3)
        ok = ok && (p[0] == 0 || p[0] == 1);
    for (int32_t i = 0; ok && i + 3 < r; i++)
        ok = p[i] + 1 == p[i + 1]; /* the leading batch axes in order */
    if (!ok)
        *why = "a perm that moves the last axis out of the last two, or reorders the batch axes";
    return ok;
}

/* Gate: the Transpose (node c->node) is one FusedMatMul can take (fp_fuse_transpose_flags); any
 * other is no candidate, as ONNX Runtime does not look at it. */
static bool check_transpose_perm(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    fp_node *t = node_at(mt, c->node);
    bool trans, batch;
    const char *why;
    return !t || fp_fuse_transpose_flags(t, &trans, &batch, &why);
}

/* A Transpose (node c->node) that moves the batch axis: both inputs of the MatMul reading it have
 * known shapes of one rank. */
static bool check_batch_shapes(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *t = node_at(mt, c->node), *mm = node_at(mt, c->node + 1);
    bool trans, batch;
    const char *why;
    if (!t || !mm || !fp_fuse_transpose_flags(t, &trans, &batch, &why) || !batch)
        return true;
    const fp_shape *sa = &mm->inputs[0]->shape, *sb = &mm->inputs[1]->shape;
    if (fp_shape_static(sa) && fp_shape_static(sb) && sa->rank == sb->rank)
        return true;
    reason(mt, out, c, fmt(mt, "%s and %s", shape_str(mt, sa), shape_str(mt, sb)), sdup(mt, "known shapes of one rank"),
           fmt(mt, "%s %s: moves the batch axis, and %s %s's inputs are %s and %s", t->op_type, t->name, mm->op_type,
               mm->name, shape_str(mt, sa), shape_str(mt, sb)),
           sdup(mt, "bind the symbolic dims (--dim, --input) or export with static shapes"));
    return false;
}

/* The one integer of a one-element int64/int32 constant input k of n, read exactly (a Slice's end
 * is often INT64_MAX, which no double holds). */
static bool one_int(const fp_node *n, uint32_t k, int64_t *out)
{
    return k < n->n_inputs && n->inputs[k] && fp_value_ints(n->inputs[k], out, 1) == 1;
}

bool fp_fuse_slice_interval(const fp_node *n, int64_t *axis, int64_t *start, int64_t *end)
{
    const fp_shape *s = n->n_inputs ? &n->inputs[0]->shape : NULL;
    int64_t step = 1;
    if (n->op != FP_OP_SLICE || !s || s->rank < 1 || !one_int(n, 3, axis) || !one_int(n, 1, start) ||
        !one_int(n, 2, end) || (n->n_inputs > 4 && n->inputs[4] && (!one_int(n, 4, &step) || step != 1)))
        return false;
    if (*axis < 0)
        *axis += s->rank;
    if (*axis < 0 || *axis >= s->rank || !fp_dim_known(s->dims[*axis]))
        return false;
    int64_t dim = s->dims[*axis].value;
    *start = *start < 0 ? MAX(*start + dim, 0) : MIN(*start, dim);
    *end = *end < 0 ? MAX(*end + dim, 0) : MIN(*end, dim);
    return true;
}

bool fp_fuse_split_member(const fp_node *n, int64_t *axis, int64_t *start, int64_t *end, bool *squeeze)
{
    *squeeze = false;
    if (n->op != FP_OP_GATHER)
        return fp_fuse_slice_interval(n, axis, start, end);
    const fp_shape *s = n->n_inputs ? &n->inputs[0]->shape : NULL;
    const fp_value *ind = n->n_inputs > 1 ? n->inputs[1] : NULL;
    if (n->opset < 13 || !s || s->rank < 1 || !ind || ind->dtype != FP_DT_INT64 || ind->shape.rank > 1 ||
        !one_int(n, 1, start))
        return false;
    *axis = fp_node_attr_int(n, "axis", 0);
    if (*axis < 0)
        *axis += s->rank;
    if (*axis < 0 || *axis >= s->rank || !fp_dim_known(s->dims[*axis]))
        return false;
    int64_t dim = s->dims[*axis].value;
    if (*start < 0)
        *start += dim;
    *end = *start + 1;
    *squeeze = ind->shape.rank == 0;
    return *start >= 0 && *start < dim;
}

/* Gate: the tensor the Slices read (the anchor's input 0) is one ONNX Runtime splits: a graph input
 * or initializer, or the output of a node with one output that is not a Shape; and at least two of
 * its readers are in the match. */
static bool check_split_source(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)c, (void)out;
    const fp_value *x = mt->x;
    const fp_node *p = x ? x->producer : NULL;
    return x && mt->n >= 2 && (!p || (p->n_outputs == 1 && p->op != FP_OP_SHAPE));
}

/* The readers in the match are Slices and Gathers of one axis, each a known interval
 * (fp_fuse_split_member), together covering the axis once (ONNX Runtime's
 * GatherSliceToSplitFusion). */
static bool check_split_intervals(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    int64_t axis0 = -1, cover[FP_PAT_MAX + 8][2];
    const char *why = NULL;
    const fp_node *bad = NULL;
    for (int i = 0; i < mt->n && !why; i++) {
        int64_t axis, lo, hi;
        bool squeeze;
        bad = mt->nodes[i];
        if (!fp_fuse_split_member(bad, &axis, &lo, &hi, &squeeze) || lo >= hi)
            why = bad->op == FP_OP_GATHER
                      ? "its index is not one int64 constant (a scalar or one element) within a known dim, opset 13 on"
                      : "starts, ends and axes are not one-element constants (steps 1) over a known dim";
        else if (i && axis != axis0)
            why = "the Slices cut different axes";
        axis0 = axis;
        cover[i][0] = lo;
        cover[i][1] = hi;
    }
    int64_t dim = why ? 0 : mt->x->shape.dims[axis0].value, total = 0;
    for (int i = 0; i < mt->n && !why; i++) {
        total += cover[i][1] - cover[i][0];
        for (int j = 0; j < i && !why; j++)
            if (cover[i][0] < cover[j][1] && cover[j][0] < cover[i][1])
                why = "the slices overlap";
    }
    if (!why && total != dim)
        why = "the slices do not cover the whole axis";
    if (!why)
        return true;
    reason(mt, out, c, sdup(mt, why), sdup(mt, "disjoint Slices and Gathers covering one axis"),
           fmt(mt, "%s %s and the other readers of '%s': %s", bad->op_type, bad->name, mt->x->name, why),
           sdup(mt, "-"));
    return false;
}

/* The node's opset is at least the parameter (ONNX Runtime's rules check their op versions). */
static bool check_min_opset(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *n = node_at(mt, MAX(c->node, 0));
    double want = fp_target_num(mt->target, mt->rule->id, c);
    if (!n || n->opset >= want)
        return true;
    reason(mt, out, c, fmt(mt, "opset %d", n->opset), fmt(mt, ">= %.0f", want),
           fmt(mt, "%s %s: opset %d", n->op_type, n->name, n->opset),
           fmt(mt, "convert the model to opset %.0f or later (onnx.version_converter)", want));
    return false;
}

/* The node's opset is at most the parameter: the op versions ONNX Runtime's rule knows end there. */
static bool check_max_opset(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *n = node_at(mt, MAX(c->node, 0));
    double want = fp_target_num(mt->target, mt->rule->id, c);
    if (!n || n->opset <= want)
        return true;
    reason(mt, out, c, fmt(mt, "opset %d", n->opset), fmt(mt, "<= %.0f", want),
           fmt(mt, "%s %s: opset %d, a version of %s the rule does not take", n->op_type, n->name, n->opset,
               n->op_type),
           fmt(mt, "export at opset %.0f or below, or check a newer ONNX Runtime", want));
    return false;
}

/* The data input of node c->node has a static shape (GE's fusion passes that need one). */
/* Whether value v (the `role` of node n: "input", "weight") has a static shape; else the reason,
 * with `fix`. */
static bool static_shape(const fp_constraint *c, const fp_match *mt, GPtrArray *out, const fp_node *n,
                         const fp_value *v, const char *role, const char *fix)
{
    if (!v || fp_shape_static(&v->shape))
        return true;
    const char *s = shape_str(mt, &v->shape);
    reason(mt, out, c, fmt(mt, "shape %s", s), sdup(mt, "a static shape"),
           fmt(mt, "%s %s: %s '%s' has a dynamic shape %s", n->op_type, n->name, role, v->name, s), sdup(mt, fix));
    return false;
}

static bool check_static_input(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, MAX(c->node, 0));
    return static_shape(c, mt, out, n, n && n->n_inputs ? n->inputs[0] : NULL, "input",
                        "bind the dims (--input, --dim) or compile with static shapes (atc --input_shape)");
}

/* The constant operand of node c->node is at most param (an epsilon). */
static bool check_const_at_most(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    fp_value *v = n ? fp_fuse_other_input(mt, n) : NULL;
    double x, limit = fp_target_num(mt->target, mt->rule->id, c);
    if (!v || !const_scalar(v, &x) || x <= limit)
        return true;
    reason(mt, out, c, fmt(mt, "%g", x), fmt(mt, "<= %g", limit),
           fmt(mt, "%s %s: constant %g is above %g", n->op_type, n->name, x, limit),
           fmt(mt, "the pass takes an epsilon of at most %g", limit));
    return false;
}

/* Gate: the pattern's data input x is not a difference (x - mean): the Pow of a centred variance
 * belongs to a LayerNorm, not to an RMSNorm. */
static bool check_not_centered(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)c, (void)out;
    return !mt->x || !mt->x->producer || mt->x->producer->op != FP_OP_SUB;
}

/* Always refuses: the target's compiler has no pass for this pattern; its list param names the
 * fused op an exporter can emit instead. */
static bool check_no_pass(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    g_auto(GStrv) instead = fp_target_list_param(mt->target, mt->rule->id, c);
    g_autofree char *op = instead && *instead ? g_strjoinv(", ", instead) : g_strdup("one fused op");
    fp_node *n = node_at(mt, 0);
    reason(mt, out, c, fmt(mt, "%d separate ops", mt->n), sdup(mt, "a fusion pass of the compiler"),
           fmt(mt,
               "%s %s and the %d ops after it: %s has no fusion pass for this pattern (none in its fusion rule "
               "reference), so it runs them as separate kernels",
               n->op_type, n->name, mt->n - 1, mt->target->name),
           fmt(mt, "export it as %s", op));
    return false;
}

/* The MatMul (node c->node) reads two different tensors (a Transpose feeding both ports stays). */
static bool check_distinct_operands(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    if (!n || n->n_inputs < 2 || n->inputs[0] != n->inputs[1])
        return true;
    reason(mt, out, c, fmt(mt, "both inputs '%s'", n->inputs[0]->name), sdup(mt, "two different tensors"),
           fmt(mt, "%s %s: reads '%s' as both operands", n->op_type, n->name, n->inputs[0]->name), sdup(mt, "-"));
    return false;
}

/* Gate: the pattern's previous node feeds node c->node at input 0 or 1 (a FusedMatMul's matrices,
 * not its scale). */
static bool check_matmul_operand(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    fp_node *n = node_at(mt, c->node), *prev = node_at(mt, c->node - 1);
    return !n || !prev || (n->n_inputs >= 2 && (n->inputs[0] == prev->outputs[0] || n->inputs[1] == prev->outputs[0]));
}

/* v's shape as the target's compiler reads it in its conditions: on a target that optimizes on the
 * declared dims (ONNX Runtime), the shape it knows then (fp_value_load_shape: symbolic dims, no
 * shape data propagated but constants), else the bound one. */
static const fp_shape *cond_shape(const fp_match *mt, const fp_value *v)
{
    return mt->target->fold_declared ? fp_value_opt_shape(v) : &v->shape;
}

/* Whether dims a and b are one as ONNX Runtime compares them in its fusions: both known and
 * equal, or both the same symbol. */
static bool same_dim(fp_dim a, fp_dim b)
{
    if (fp_dim_known(a) || fp_dim_known(b))
        return fp_dim_known(a) && fp_dim_known(b) && a.value == b.value;
    return a.sym && b.sym && strcmp(a.sym, b.sym) == 0;
}

/* Two activations of one shape: on a target that optimizes on the declared dims (ONNX Runtime's
 * CheckFirstAdd), every dim the same number or the same symbol, none unknown; else the same shape
 * as printed. */
static bool activations_alike(const fp_match *mt, const fp_shape *a, const fp_shape *b)
{
    if (!mt->target->fold_declared)
        return strcmp(shape_str(mt, a), shape_str(mt, b)) == 0;
    if (a->rank < 0 || a->rank != b->rank)
        return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (!same_dim(a->dims[i], b->dims[i]))
            return false;
    return true;
}

static bool check_activation_operands(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *add = node_at(mt, c->node);
    if (!add || add->n_inputs != 2 || !add->inputs[0] || !add->inputs[1])
        return true;
    fp_value *a = add->inputs[0], *b = add->inputs[1];
    const fp_shape *xa = cond_shape(mt, a), *xb = cond_shape(mt, b);
    if (!fp_value_is_constant(a) && !fp_value_is_constant(b) && activations_alike(mt, xa, xb))
        return true;
    const char *sa = shape_str(mt, xa), *sb = shape_str(mt, xb);
    if (!out) /* a gate's verdict only */
        return false;
    reason(mt, out, c, fmt(mt, "%s and %s", sa, sb), sdup(mt, "two activations of the same shape"),
           fmt(mt, "%s %s: operands '%s' %s and '%s' %s are not a residual pair", add->op_type, add->name, a->name, sa,
               b->name, sb),
           sdup(mt, "SkipLayerNormalization fuses a residual Add of two equal-shaped activations"));
    return false;
}

static bool check_rank_is(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    fp_value *y = n && n->n_outputs ? n->outputs[0] : NULL;
    double want = fp_target_num(mt->target, mt->rule->id, c);
    int32_t rank = y ? cond_shape(mt, y)->rank : -1;
    if (!y || rank == (int32_t)want)
        return true;
    reason(mt, out, c, fmt(mt, "rank %d", rank), fmt(mt, "rank %g", want),
           fmt(mt, "%s %s: output '%s' has rank %d, the fused kernel takes rank %g", n->op_type, n->name, y->name, rank,
               want),
           sdup(mt, "reshape to [batch, sequence, hidden] around the block"));
    return false;
}

static bool check_last_axis(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    if (!n || !n->inputs[0])
        return true;
    int32_t rank = n->inputs[0]->shape.rank;
    int64_t axis;
    if (n->op == FP_OP_SOFTMAX) {
        axis = fp_node_attr_int(n, "axis", n->opset >= 13 ? -1 : 1);
    } else {
        const fp_attr *a = fp_node_attr(n, "axes");
        int64_t vals[2];
        if (a && a->type == FP_ATTR_INTS && a->n == 1) {
            axis = a->u.ints[0];
        } else if (n->n_inputs > 1 && n->inputs[1] && n->inputs[1]->n_sval == 1 && !n->inputs[1]->sval[0].sym) {
            axis = n->inputs[1]->sval[0].value;
        } else {
            axis = -999;
        }
        (void)vals;
    }
    if (axis == -1 || (rank > 0 && axis == rank - 1))
        return true;
    reason(mt, out, c, fmt(mt, "axis %" G_GINT64_FORMAT, axis), sdup(mt, "the last axis"),
           fmt(mt, "%s %s: normalizes over axis %" G_GINT64_FORMAT ", not the last one", n->op_type, n->name, axis),
           sdup(mt, "the fused kernel normalizes over the innermost (hidden) dimension only"));
    return false;
}

static bool check_static_weight(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    fp_value *w = n && c->port >= 0 && (uint32_t)c->port < n->n_inputs ? n->inputs[c->port] : NULL;
    return static_shape(c, mt, out, n, w, "weight",
                        "the pass allows dynamic data inputs but not dynamic weights: fix the weight's shape");
}

static bool check_max_chain(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    int links = mt->n - (mt->rule->n_pattern - 1);
    double limit = fp_target_num(mt->target, mt->rule->id, c);
    if ((double)links <= limit) /* limit is any double of the target file: no cast to int */
        return true;
    fp_node *first = node_at(mt, c->node);
    reason(mt, out, c, fmt(mt, "%d ops", links), fmt(mt, "<= %g ops", limit),
           fmt(mt,
               "%s %s: a chain of %d elementwise ops follows the convolution; the fused kernel holds at "
               "most %g",
               first ? first->op_type : "?", first ? first->name : "?", links, limit),
           fmt(mt, "split the tail or raise [rule.%s] %s if the target's buffer allows it", mt->rule->id, c->param));
    return false;
}

static bool check_no_control_edges(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    for (int i = 0; i < mt->n; i++) {
        fp_node *n = mt->nodes[i];
        if (fp_node_n_ctrl(n)) {
            reason(mt, out, c, fmt(mt, "%u control edges", fp_node_n_ctrl(n)), sdup(mt, "none"),
                   fmt(mt, "%s %s: has a control dependency on '%s'", n->op_type, n->name, n->ext->ctrl[0]->name),
                   sdup(mt, "control edges pin the op's position; remove the dependency if it is not needed"));
            return false;
        }
    }
    return true;
}

/* The node (c->node) is one ONNX Runtime's graph_utils::CanRemoveNode lets go: one of its inputs
 * comes from another node (an edge; a Constant or a folded result is an initializer, no edge), or
 * none does and it has a single input. An Expand or Dropout reading a graph input beside its
 * constant operands has no edge and more than one input: it stays. */
static bool check_one_input_edge(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    uint32_t edges = 0, inputs = 0;
    for (uint32_t i = 0; n && i < n->n_inputs; i++) {
        const fp_value *v = n->inputs[i];
        inputs += v != NULL;
        edges += v && v->producer && v->producer->op != FP_OP_CONSTANT && !(v->producer->flags & FP_NODE_FOLDED);
    }
    if (!n || edges == 1 || (edges == 0 && inputs == 1))
        return true;
    reason(mt, out, c, fmt(mt, "%u input edges, %u inputs", edges, inputs),
           sdup(mt, "one input edge, or a single input"),
           fmt(mt,
               "%s %s: ONNX Runtime removes a node only when one of its inputs comes from another node "
               "or it has just one input",
               n->op_type, n->name),
           sdup(mt, "nothing to change: the op costs one copy; drop it from the export to save it"));
    return false;
}

static bool check_mask_unused(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    fp_value *mask = n && n->n_outputs > 1 ? n->outputs[1] : NULL;
    if (!mask || (!mask->n_uses && !mask->is_output))
        return true;
    reason(mt, out, c, fmt(mt, "mask '%s' used", mask->name), sdup(mt, "mask unused"),
           fmt(mt, "%s %s: its mask output '%s' is read", n->op_type, n->name, mask->name),
           sdup(mt, "drop the use of the dropout mask for inference"));
    return false;
}

/* The arithmetic anchor is a no-op as ONNX Runtime's NoopElimination finds one: x + 0, 0 + x, x - 0,
 * x * 1, 1 * x or x / 1, exactly one input a constant (the second for Sub and Div) of at most one
 * element and of no greater rank than x's, known in the shape the target's conditions read
 * (cond_shape). A gate: any other Add/Sub/Mul/Div is no candidate. */
static bool check_noop_operand(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    const fp_node *n = node_at(mt, c->node);
    if (!n || n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1])
        return false;
    bool k0 = fp_value_is_constant(n->inputs[0]), k1 = fp_value_is_constant(n->inputs[1]);
    if (k0 == k1 || (k0 && (n->op == FP_OP_SUB || n->op == FP_OP_DIV)))
        return false;
    const fp_value *k = n->inputs[k0 ? 0 : 1], *x = n->inputs[k0 ? 1 : 0];
    uint64_t numel = 0;
    double v;
    int32_t x_rank = cond_shape(mt, x)->rank;
    if (x_rank < 0 || k->shape.rank > x_rank || !fp_shape_numel(&k->shape, &numel) || numel > 1)
        return false;
    if (numel == 0)
        return true;
    bool additive = n->op == FP_OP_ADD || n->op == FP_OP_SUB;
    return const_scalar(k, &v) && (float)v == (additive ? 0.0f : 1.0f);
}

/* The node's operand at c->port (none: the one from outside the match) is a constant of one
 * element. */
static bool check_const_scalar(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    fp_value *v = n ? port_or_other(c, mt, n) : NULL;
    uint64_t numel = 0;
    double x;
    if (v && fp_value_is_constant(v) && fp_shape_numel(&v->shape, &numel) && numel == 1 && const_scalar(v, &x))
        return true;
    if (!out) /* a gate's verdict only */
        return false;
    reason(mt, out, c, sdup(mt, v ? "not a constant scalar" : "missing"), sdup(mt, "a constant scalar"),
           fmt(mt, "%s %s: operand is not a constant scalar", n ? n->op_type : "?", n ? n->name : "?"),
           sdup(mt, "only a scalar scale folds into the matmul's alpha"));
    return false;
}

/* The first MatMul's Q (port 0) has a head size TensorRT's fused MHA kernels take: its list
 * param is "min,max,multiple" (16, 256, 8 for FP16/BF16). */
static bool check_head_dim(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    fp_value *q = n && n->n_inputs ? n->inputs[0] : NULL;
    if (!q || q->shape.rank < 1)
        return true;
    g_auto(GStrv) lim = fp_target_list_param(mt->target, mt->rule->id, c);
    double lo = 16, hi = 256, mult = 8;
    if (lim && lim[0] && lim[1] && lim[2])
        lo = g_ascii_strtod(lim[0], NULL), hi = g_ascii_strtod(lim[1], NULL), mult = g_ascii_strtod(lim[2], NULL);
    fp_dim d = q->shape.dims[q->shape.rank - 1];
    if (!fp_dim_known(d)) {
        reason(mt, out, c, sdup(mt, "unknown"), fmt(mt, "%g to %g, a multiple of %g", lo, hi, mult),
               fmt(mt, "%s %s: the head size of '%s' is not known", n->op_type, n->name, q->name),
               sdup(mt, "bind the shapes (--input, --dim) so the head size is known"));
        return false;
    }
    int64_t h = d.value;
    if (h >= lo && h <= hi && mult > 0 && h % (int64_t)mult == 0)
        return true;
    reason(mt, out, c, fmt(mt, "%" G_GINT64_FORMAT, h), fmt(mt, "%g to %g, a multiple of %g", lo, hi, mult),
           fmt(mt, "%s %s: head size %" G_GINT64_FORMAT " of '%s' is outside what the fused MHA kernels take",
               n->op_type, n->name, h, q->name),
           fmt(mt, "use a head size of %g to %g that is a multiple of %g (pad the heads)", lo, hi, mult));
    return false;
}

/* Always refuses: the scores are scaled after the first MatMul (node c->node is the scale);
 * TensorRT's fused attention needs Q or K scaled before it. */
static bool check_scale_before_bmm1(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *s = node_at(mt, c->node), *bmm1 = node_at(mt, 0);
    reason(mt, out, c, fmt(mt, "%s %s after the first MatMul", s->op_type, s->name),
           sdup(mt, "Q or K scaled before the first MatMul"),
           fmt(mt, "%s %s: scales the scores of %s %s; TensorRT's fused attention needs the scale on Q or K",
               s->op_type, s->name, bmm1->op_type, bmm1->name),
           sdup(mt, "scale Q (or K, or both by the square root) by 1/sqrt(head size) before the MatMul"));
    return false;
}

/* The elementwise op (node c->node) joins two tensors of one shape but for the batch axis (no
 * broadcast otherwise). */
static bool check_no_broadcast(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    fp_node *n = node_at(mt, c->node);
    if (!n || n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1])
        return true;
    const fp_shape *a = &n->inputs[0]->shape, *b = &n->inputs[1]->shape;
    bool ok = a->rank == b->rank && a->rank >= 1;
    for (int32_t d = 1; ok && d < a->rank; d++)
        ok = fp_dim_known(a->dims[d]) && fp_dim_known(b->dims[d]) && a->dims[d].value == b->dims[d].value;
    if (ok)
        return true;
    const char *sa = shape_str(mt, a), *sb = shape_str(mt, b);
    reason(mt, out, c, fmt(mt, "%s and %s", sa, sb), sdup(mt, "equal shapes (but for the batch axis)"),
           fmt(mt, "%s %s: '%s' %s and '%s' %s broadcast", n->op_type, n->name, n->inputs[0]->name, sa,
               n->inputs[1]->name, sb),
           sdup(mt, "expand the operand to the convolution's output shape, or keep it a separate kernel"));
    return false;
}

/* Gate: node c->node's operand from outside the match is no constant (an activation). */
static bool check_other_activation(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    fp_node *n = node_at(mt, c->node);
    fp_value *v = n ? fp_fuse_other_input(mt, n) : NULL;
    return v && !fp_value_is_constant(v);
}

/* Gate: node c->node scales a tensor by a constant scalar: Div x / c, or Mul by c on either side;
 * x has a known rank >= 1, and c's rank is at most x's (ORT's MatMulScaleFusion, leading form), of
 * the shapes the target's compiler knows (cond_shape: ORT reads its graph's, where a Squeeze of a
 * tensor of unknown rank has none). */
static bool check_leading_scale(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    fp_node *n = node_at(mt, c->node);
    if (!n || n->n_inputs != 2)
        return false;
    int k = fp_fuse_scale_operand(n, NULL);
    if (k < 0)
        return false;
    const fp_shape *x = cond_shape(mt, n->inputs[1 - k]);
    return x->rank >= 1 && n->inputs[k]->shape.rank <= x->rank;
}

/* Gate: the anchor carries no activation yet (a FusedConv made by an earlier rule may). */
static bool check_no_activation(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    fp_node *n = node_at(mt, c->node);
    return !n || !fp_node_attr(n, "activation");
}

/* Gate: every matched node is a layer TensorRT's PointWise fusion takes (an activation, an
 * elementwise or unary op: not a Cast, a Where or a comparison). */
static bool check_pointwise_kind(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)c, (void)out;
    for (int i = 0; i < mt->n; i++) {
        fp_op op = mt->nodes[i]->op;
        if (op == FP_OP_CAST || op == FP_OP_WHERE || op == FP_OP_EQUAL || op == FP_OP_GREATER ||
            op == FP_OP_GREATER_OR_EQUAL || op == FP_OP_LESS || op == FP_OP_LESS_OR_EQUAL || op == FP_OP_NOT ||
            op == FP_OP_AND || op == FP_OP_OR || op == FP_OP_XOR || op == FP_OP_IS_INF || op == FP_OP_IS_NAN)
            return false;
    }
    return true;
}

/* SoftmaxSmallOpFusionPass is switched on: param `enabled` (0 by default: ATC ships the pass off in
 * fusion_config.json) is not 0. The fix names both ways out: the switch, or one ONNX Softmax, which
 * GE maps to SoftmaxV2 without the pass. */
static bool check_softmax_pass_on(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    if (fp_target_num(mt->target, mt->rule->id, c) != 0)
        return true;
    const fp_node *n = node_at(mt, 0);
    reason(mt, out, c, fmt(mt, "%s = 0 (ATC's default)", c->param), fmt(mt, "%s = 1", c->param),
           fmt(mt,
               "%s %s and the %d ops after it: SoftmaxSmallOpFusionPass is off by default in ATC "
               "(fusion_config.json), so %s runs them as separate kernels",
               n->op_type, n->name, mt->n - 1, mt->target->name),
           fmt(mt,
               "switch the pass on with atc --fusion_switch_file (a line SoftmaxSmallOpFusionPass:on; then set "
               "[rule.%s] %s = 1 in the target), or export the softmax as one ONNX Softmax (torch.softmax), "
               "which GE maps to SoftmaxV2 directly",
               mt->rule->id, c->param));
    return false;
}

/* The axes reduce n reduces over an input of rank `rank` (1 to 31), as a bit set in *set (bit a:
 * axis a): from its `axes` attribute, else from a known constant axes input; none given means
 * every axis (0 with noop_with_empty_axes). False when the axes cannot be known or are out of
 * range. */
static bool reduce_axes(const fp_node *n, int32_t rank, uint32_t *set)
{
    const fp_attr *a = fp_node_attr(n, "axes");
    const fp_value *in = n->n_inputs > 1 ? n->inputs[1] : NULL;
    int64_t ax[FP_MAX_RANK];
    uint32_t count = 0;
    if (rank < 1 || rank > 31)
        return false;
    if (a && a->type == FP_ATTR_INTS) {
        for (count = 0; count < a->n && count < FP_MAX_RANK; count++)
            ax[count] = a->u.ints[count];
    } else if (in) {
        if (in->n_sval < 0 || in->n_sval > FP_MAX_RANK)
            return false;
        for (count = 0; count < (uint32_t)in->n_sval; count++) {
            if (in->sval[count].sym)
                return false;
            ax[count] = in->sval[count].value;
        }
    }
    if (count == 0) {
        *set = fp_node_attr_int(n, "noop_with_empty_axes", 0) ? 0 : (1u << rank) - 1;
        return true;
    }
    *set = 0;
    for (uint32_t i = 0; i < count; i++) {
        int64_t k = ax[i] < 0 ? ax[i] + rank : ax[i];
        if (k < 0 || k >= rank)
            return false;
        *set |= 1u << k;
    }
    return true;
}

/* Whether reduce n keeps the reduced axes: GE's keep_dims (default false), or ONNX's keepdims
 * (default 1). */
static bool reduce_keeps_dims(const fp_node *n)
{
    if (fp_node_attr(n, "keep_dims"))
        return fp_node_attr_int(n, "keep_dims", 0) != 0;
    bool ge = n->graph && n->graph->model && n->graph->model->format &&
              g_str_has_prefix(n->graph->model->format, "ge-");
    return fp_node_attr_int(n, "keepdims", ge ? 0 : 1) != 0;
}

/* The match's reduces (ReduceMax and ReduceSum of a softmax) all keep their dims and reduce one
 * known set of axes of the pattern's data input. */
static bool check_same_reduce_axes(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    int32_t rank = mt->x ? mt->x->shape.rank : -1;
    const fp_node *first = NULL, *bad = NULL;
    uint32_t want = 0, got = 0;
    const char *why = NULL;
    for (int i = 0; i < mt->n && !why; i++) {
        const fp_node *n = mt->nodes[i];
        if (fp_op_fuse_kind(n->op) != FP_FK_REDUCE)
            continue;
        bad = n;
        if (!reduce_keeps_dims(n))
            why = "drops the reduced axes (keepdims 0)";
        else if (!reduce_axes(n, rank, &got))
            why = "reduces axes that are not known";
        else if (first && got != want)
            why = "reduces other axes than the first reduce";
        if (!first)
            first = n, want = got;
    }
    if (!why)
        return true;
    reason(mt, out, c, sdup(mt, why), sdup(mt, "keepdims 1 and the same axes in both reduces"),
           fmt(mt, "%s %s: %s; the pass needs both reduces over the same axes with keepdims 1", bad->op_type, bad->name,
               why),
           sdup(mt, "reduce over the same axes with keepdims=True (x.amax(dim, keepdim=True), "
                    "x.sum(dim, keepdim=True)), or export one Softmax"));
    return false;
}

/* Gate: the Concat (node c->node) is rotate_half of the pattern's data input x: Concat(Neg(Slice
 * [h, D)), Slice [0, h)) on x's last axis, h = D / 2 (torch's x[..., D//2:] and x[..., :D//2]),
 * each Slice's interval known (fp_fuse_slice_interval). */
static bool check_rotate_half(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    const fp_node *cat = node_at(mt, c->node);
    const fp_value *x = mt->x;
    if (!cat || !x || x->shape.rank < 1 || cat->n_inputs != 2 || !cat->inputs[0] || !cat->inputs[1])
        return false;
    const fp_node *neg = cat->inputs[0]->producer, *lo = cat->inputs[1]->producer;
    const fp_node *hi = neg && neg->n_inputs && neg->inputs[0] ? neg->inputs[0]->producer : NULL;
    int32_t last = x->shape.rank - 1;
    int64_t axis = fp_node_attr_int(cat, "axis", fp_node_attr_int(cat, "concat_dim", 0));
    int64_t ah, sh, eh, al, sl, el;
    if (axis < 0)
        axis += x->shape.rank;
    if (!hi || !lo || axis != last || !fp_fuse_slice_interval(hi, &ah, &sh, &eh) ||
        !fp_fuse_slice_interval(lo, &al, &sl, &el) || ah != last || al != last)
        return false;
    int64_t d = x->shape.dims[last].value;
    return sl == 0 && el == d / 2 && sh == d / 2 && eh == d;
}

/* What ApplyRotaryPosEmb takes (its general constraint set): the pattern's data input x and the
 * operands of the match's Muls from outside it (cos, sin) 4-D of one dtype; x's last axis (the
 * head dim), when known, even and at most param. */
static bool check_rotary_operands(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_value *x = mt->x;
    const char *why = NULL;
    for (int i = 0; x && i < mt->n && !why; i++) {
        fp_node *n = mt->nodes[i];
        const fp_value *v = i == 0 ? x : n->op == FP_OP_MUL ? fp_fuse_other_input(mt, n) : NULL;
        if (!v)
            continue;
        if (v->shape.rank != 4)
            why = fmt(mt, "'%s' is %d-D (%s)", v->name, v->shape.rank, shape_str(mt, &v->shape));
        else if (v->dtype != x->dtype)
            why = fmt(mt, "'%s' is %s, x '%s' %s", v->name, fp_dtype_name(v->dtype), x->name, fp_dtype_name(x->dtype));
    }
    double limit = fp_target_num(mt->target, mt->rule->id, c);
    fp_dim d = x && x->shape.rank > 0 ? x->shape.dims[x->shape.rank - 1] : (fp_dim){.value = -1};
    if (!why && fp_dim_known(d) && (d.value % 2 != 0 || (double)d.value > limit))
        why = fmt(mt, "head dim %" G_GINT64_FORMAT " of '%s'", d.value, x->name);
    if (!why)
        return true;
    const fp_node *n = node_at(mt, 0);
    reason(mt, out, c, sdup(mt, why), fmt(mt, "x, cos, sin 4-D of one dtype; head dim even, <= %g", limit),
           fmt(mt,
               "%s %s: %s; ApplyRotaryPosEmb takes x, cos and sin 4-D of one dtype and an even head dim of at "
               "most %g",
               n->op_type, n->name, why, limit),
           fmt(mt,
               "give the fused op x, cos and sin 4-D (BSND or BNSD) of x's dtype, head dim even and <= %g "
               "(reshape and cast around it)",
               limit));
    return false;
}

bool fp_fuse_pad_pads(const fp_node *pad, int64_t *pads, int *n)
{
    int64_t v[2 * FP_MAX_RANK];
    const fp_attr *a = fp_node_attr(pad, "pads");
    if (pad->opset >= 11) {
        *n = pad->n_inputs > 1 && pad->inputs[1] ? fp_value_ints(pad->inputs[1], v, 2 * FP_MAX_RANK) : -1;
    } else {
        *n = a && a->type == FP_ATTR_INTS && a->n <= 2 * FP_MAX_RANK ? (int)a->n : -1;
        if (*n > 0)
            memcpy(v, a->u.ints, sizeof(int64_t) * (size_t)*n);
    }
    if (*n < 4 || *n % 2)
        return false;
    memcpy(pads, v, sizeof(int64_t) * (size_t)*n);
    return true;
}

/* Why Pad n cannot fold into the Conv or pool after it (ONNX Runtime's PadFusion), NULL when it
 * can: constant mode with a zero fill, pads known, none on the first two dims, none negative, no
 * axes input. */
static const char *pad_refusal(const fp_node *n)
{
    const char *mode = fp_node_attr_string(n, "mode", "constant");
    int64_t pads[2 * FP_MAX_RANK];
    double fill = 0;
    int np;
    if (strcmp(mode, "constant") != 0)
        return "its mode is not constant";
    if (n->n_inputs > 3)
        return "it has an axes input";
    if (n->opset >= 11 && n->n_inputs > 2 && n->inputs[2] &&
        (!fp_value_is_constant(n->inputs[2]) || !const_scalar(n->inputs[2], &fill) || fill != 0))
        return "its constant_value is not a constant zero";
    if (n->opset < 11 && fp_node_attr_float(n, "value", 0.0) != 0.0)
        return "its value is not zero";
    if (!fp_fuse_pad_pads(n, pads, &np))
        return "its pads are not constant";
    int half = np / 2;
    if (pads[0] || pads[1] || pads[half] || pads[half + 1])
        return "it pads the batch or channel dim";
    for (int i = 0; i < np; i++)
        if (pads[i] < 0)
            return "it crops (a negative pad)";
    return NULL;
}

static bool check_pad_foldable(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *n = node_at(mt, MAX(c->node, 0));
    const char *why = pad_refusal(n);
    if (!why)
        return true;
    reason(mt, out, c, sdup(mt, why), sdup(mt, "constant mode, zero fill, constant pads on the spatial dims only"),
           fmt(mt, "%s %s: %s", n->op_type, n->name, why),
           sdup(mt, "pad with zeros on the spatial dims only, or put the padding in the Conv's or pool's pads"));
    return false;
}

/* The node takes explicit padding: a `pads` attribute, no auto_pad but NOTSET, one output (a MaxPool's
 * Indices would not see the padding). */
static bool check_explicit_pads(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *n = node_at(mt, c->node >= 0 ? c->node : mt->n - 1);
    const char *auto_pad = fp_node_attr_string(n, "auto_pad", "NOTSET");
    const fp_attr *pads = fp_node_attr(n, "pads");
    int32_t rank = n->n_inputs && n->inputs[0] ? n->inputs[0]->shape.rank : -1;
    const char *why = strcmp(auto_pad, "NOTSET") != 0 ? "auto_pad is set"
                      : !pads                         ? "it has no pads attribute"
                      : n->n_outputs > 1              ? "it has a second output (MaxPool's Indices)"
                      : pads->type != FP_ATTR_INTS || rank < 3 || pads->n != 2 * (uint32_t)(rank - 2)
                          ? "its pads do not give a start and an end per spatial dim"
                          : NULL;
    if (!why)
        return true;
    reason(mt, out, c, sdup(mt, why), sdup(mt, "explicit pads (auto_pad NOTSET), one output"),
           fmt(mt, "%s %s: %s", n->op_type, n->name, why),
           fmt(mt, "give %s a pads attribute (zeros) in place of auto_pad", n->name));
    return false;
}

/* Gate: the Cast (node c->node) converts to the type its input already has (ONNX Runtime's
 * CastElimination removes it at level 1, before the fusions look). */
static bool check_noop_cast(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    fp_node *n = node_at(mt, c->node);
    const fp_value *x = n && n->n_inputs && n->n_outputs ? n->inputs[0] : NULL, *y = x ? n->outputs[0] : NULL;
    return y && n->op == FP_OP_CAST && x->dtype != FP_DT_UNDEFINED && y->dtype == x->dtype;
}

/* Gate: the Expand (node c->node) gives its input back: its shape input a constant 1-D int64 of at
 * most the input's rank whose trailing entries are each 1 or the input's dim there (a symbolic dim
 * takes 1 only); ONNX Runtime's ExpandElimination removes it at level 1. */
static bool check_noop_expand(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)out;
    fp_node *n = node_at(mt, c->node);
    const fp_value *x = n && n->n_inputs == 2 && n->inputs[1] ? n->inputs[0] : NULL;
    int64_t to[FP_MAX_RANK];
    if (!x || n->op != FP_OP_EXPAND || n->inputs[1]->dtype != FP_DT_INT64)
        return false;
    int k = fp_value_ints(n->inputs[1], to, FP_MAX_RANK);
    if (k < 1 || x->shape.rank < k)
        return false;
    for (int j = k - 1, i = x->shape.rank - 1; j >= 0; j--, i--) {
        fp_dim d = x->shape.dims[i];
        bool known = !d.sym && d.value >= 0;
        if (to[j] > 1 && (!known || d.value != to[j]))
            return false;
    }
    return true;
}

/* The op types of the Q path ONNX Runtime's AttentionFusion walks up from the scores MatMul's
 * input 0, the node nearest the scores first. */
static const fp_op q_path[] = {FP_OP_TRANSPOSE, FP_OP_RESHAPE, FP_OP_ADD, FP_OP_MATMUL};

/* The root the Q path of the scores MatMul n reaches (its producers through input 0 of the
 * q_path ops, in that order), or NULL; *stop the first node on the path that is not the op
 * q_path names (NULL when none: a graph input or initializer). */
static const fp_node *q_path_root(const fp_node *n, const fp_node **stop)
{
    const fp_value *v = n->n_inputs ? n->inputs[0] : NULL;
    *stop = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(q_path); i++) {
        const fp_node *p = v ? v->producer : NULL;
        if (!p || p->op != q_path[i]) {
            *stop = p;
            return NULL;
        }
        v = p->n_inputs ? p->inputs[0] : NULL;
    }
    return v ? v->producer : NULL;
}

/* The scores MatMul's Q (node c->node, input 0) is the BERT projection ONNX Runtime's
 * AttentionFusion starts from: Transpose <- Reshape <- Add(bias) <- MatMul <- a LayerNormalization
 * with a bias (the pass looks for attention only below one; SkipLayerNormalization, which the
 * LayerNormalization becomes later in ORT's order, counts as one). */
static bool check_qkv_from_layer_norm(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *n = node_at(mt, c->node), *stop = NULL;
    if (!n)
        return true;
    const fp_node *root = q_path_root(n, &stop);
    bool biased = root && ((root->op == FP_OP_LAYER_NORM && root->n_inputs > 2 && root->inputs[2]) ||
                           root->op == FP_OP_SKIP_LAYER_NORM);
    if (biased)
        return true;
    char *actual = root   ? fmt(mt, "the Q projection reads %s %s", root->op_type, root->name)
                   : stop ? fmt(mt, "Q comes from %s %s", stop->op_type, stop->name)
                          : sdup(mt, "Q is a graph input or a constant");
    reason(mt, out, c, actual, sdup(mt, "Q = Transpose(Reshape(Add(MatMul(LayerNormalization with a bias), bias)))"),
           fmt(mt,
               "%s %s: ONNX Runtime's AttentionFusion looks for attention only below a LayerNormalization with "
               "a bias whose Q, K and V projections are MatMul + bias Add; %s",
               n->op_type, n->name, actual),
           sdup(mt, "an RMSNorm (SimplifiedLayerNormalization), bias-free projections or rotary embeddings get no "
                    "Attention from ORT's optimizer: export com.microsoft MultiHeadAttention / GroupQueryAttention "
                    "(onnxruntime.transformers or onnxruntime-genai's model builder) to get a fused kernel"));
    return false;
}

/* ---------------------------------------------------------------- quantized node units (QDQ) */

/* Every input the anchor has comes from a DequantizeLinear of the unit (ONNX Runtime's
 * NodeGroupSelector::CheckQDQNodes: as many DQ nodes as actual inputs), or is one ONNX Runtime
 * quantizes at load (quantized_at_load). */
/* Whether ONNX Runtime's WeightBiasQuantization (level 1) quantizes input k of the anchor of a unit
 * with an output QuantizeLinear: a Conv, ConvTranspose or Gemm whose input 0 is dequantized with a
 * scalar scale, and input k a float weight (1) or a 1-D bias (2) held in an initializer. */
static bool quantized_at_load(const fp_match *mt, uint32_t k)
{
    const fp_node *a = mt->nodes[0], *dq = fp_fuse_unit_dq(mt, a->inputs[0]);
    const fp_value *v = a->inputs[k], *s = dq && dq->n_inputs > 1 ? dq->inputs[1] : NULL;
    bool has_q = false;
    for (int i = 1; i < mt->n; i++)
        has_q |= mt->nodes[i]->op == FP_OP_QUANTIZE_LINEAR;
    if (!has_q || !s || s->shape.rank > 1 || (s->shape.rank == 1 && s->shape.dims[0].value != 1) ||
        (a->op != FP_OP_CONV && a->op != FP_OP_CONV_TRANSPOSE && a->op != FP_OP_GEMM) ||
        v->kind != FP_VALUE_INITIALIZER || v->overridable)
        return false;
    return k == 1 ? v->dtype == FP_DT_FLOAT : k == 2 && v->shape.rank == 1;
}

static bool check_dq_inputs(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *a = mt->nodes[0];
    for (uint32_t k = 0; k < a->n_inputs; k++) {
        const fp_value *v = a->inputs[k];
        if (!v || fp_fuse_unit_dq(mt, v) || quantized_at_load(mt, k))
            continue;
        reason(mt, out, c, fmt(mt, "input %u from %s", k, origin(v)), sdup(mt, "every input dequantized"),
               fmt(mt, "%s %s: input %u '%s' is not dequantized (it comes from %s), so the QDQ unit is not whole",
                   a->op_type, a->name, k, v->name, origin(v)),
               fmt(mt,
                   "quantize '%s' too (a QuantizeLinear / DequantizeLinear pair, or a quantized initializer "
                   "and its DequantizeLinear), or leave %s in float",
                   v->name, a->name));
        return false;
    }
    return true;
}

/* Gate: no QuantizeLinear reads the anchor's output (the unit without an output Q:
 * MatMulIntegerToFloat, QGemm with a float output, MatMulNBits). */
static bool check_no_q_reader(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    (void)c;
    (void)out;
    const fp_value *v = mt->nodes[0]->outputs[0];
    for (uint32_t u = 0; u < v->n_uses; u++)
        if (v->uses[u].node->op == FP_OP_QUANTIZE_LINEAR)
            return false;
    return true;
}

/* The dtype list c allows holds the quantized tensor of the unit's DequantizeLinear at anchor
 * input c->port, or with port -1 those at inputs 0 and 1 and the QuantizeLinear's output (its zero
 * point's type, uint8 without one). */
static bool check_quant_dtypes(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *a = mt->nodes[0];
    const fp_value *t[3] = {0};
    for (uint32_t k = 0; k < 2 && k < a->n_inputs; k++)
        if ((c->port < 0 && k < 2) || (int)k == c->port) {
            const fp_node *dq = fp_fuse_unit_dq(mt, a->inputs[k]);
            t[k] = dq ? dq->inputs[0] : NULL;
        }
    if (c->port >= 2 && (uint32_t)c->port < a->n_inputs) {
        const fp_node *dq = fp_fuse_unit_dq(mt, a->inputs[c->port]);
        t[0] = dq ? dq->inputs[0] : NULL;
    }
    for (int i = 1; c->port < 0 && i < mt->n; i++)
        if (mt->nodes[i]->op == FP_OP_QUANTIZE_LINEAR && mt->nodes[i]->n_inputs > 2)
            t[2] = mt->nodes[i]->inputs[2];
    for (int i = 0; i < 3; i++) {
        if (!t[i] || list_has(mt, c, fp_dtype_name(t[i]->dtype)))
            continue;
        g_auto(GStrv) list = fp_target_list_param(mt->target, mt->rule->id, c);
        g_autofree char *joined = g_strjoinv(", ", list);
        const char *dt = fp_dtype_name(t[i]->dtype);
        reason(mt, out, c, sdup(mt, dt), fmt(mt, "one of %s", joined),
               fmt(mt, "%s %s: '%s' is quantized to %s; the %s kernel takes %s", a->op_type, a->name, t[i]->name, dt,
                   mt->rule->fused_op ? mt->rule->fused_op : a->op_type, joined),
               fmt(mt, "quantize '%s' to %s", t[i]->name, joined));
        return false;
    }
    return true;
}

/* Whether constant scalars x and y hold the same value: scales by value, zero points (absent: 0 of
 * the default type) by dtype and bytes. */
static bool same_const(const fp_value *x, const fp_value *y)
{
    double a, b;
    if (!x || !y)
        return x == y;
    if (const_scalar(x, &a) && const_scalar(y, &b))
        return a == b;
    const fp_tensor *s = x->tensor ? x->tensor : fp_value_fold(x), *t = y->tensor ? y->tensor : fp_value_fold(y);
    return s && t && s->where == FP_DATA_INLINE && t->where == FP_DATA_INLINE && s->dtype == t->dtype &&
           s->nbytes == t->nbytes && memcmp(s->data, t->data, s->nbytes) == 0;
}

/* The unit's QuantizeLinear quantizes as its DequantizeLinear dequantized: the same constant scale
 * and zero point, and with num 1 a positive scale (a negative one reorders the values a MaxPool
 * compares). ONNX Runtime's DropQDQNodeGroupSelector (IsQDQPairSupported,
 * IsQOrDQScalePositiveConstantScalar). */
static bool check_same_quant(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *a = mt->nodes[0], *dq = fp_fuse_unit_dq(mt, a->inputs[0]), *q = NULL;
    for (int i = 1; i < mt->n; i++)
        if (mt->nodes[i]->op == FP_OP_QUANTIZE_LINEAR)
            q = mt->nodes[i];
    if (!dq || !q)
        return true;
    const fp_value *qs = q->n_inputs > 1 ? q->inputs[1] : NULL, *ds = dq->n_inputs > 1 ? dq->inputs[1] : NULL;
    const fp_value *qz = q->n_inputs > 2 ? q->inputs[2] : NULL, *dz = dq->n_inputs > 2 ? dq->inputs[2] : NULL;
    double s = 0;
    bool scalar = qs && const_scalar(qs, &s) && fp_value_is_constant(qs);
    if (scalar && same_const(qs, ds) && same_const(qz, dz) &&
        (fp_target_num(mt->target, mt->rule->id, c) == 0 || s > 0))
        return true;
    reason(mt, out, c, scalar ? fmt(mt, "scale %g", s) : sdup(mt, "scale not a constant scalar"),
           sdup(mt, fp_target_num(mt->target, mt->rule->id, c)
                        ? "the DQ's constant scalar scale and zero point, scale > 0"
                        : "the DQ's constant scalar scale and zero point"),
           fmt(mt,
               "%s %s: QuantizeLinear %s does not quantize as DequantizeLinear %s dequantized (scale or zero point "
               "differ, are not constant scalars, or the scale is not positive), so %s cannot run on the quantized "
               "tensor",
               a->op_type, a->name, q->name, dq->name, a->name),
           fmt(mt, "give %s and %s one constant scale and zero point", q->name, dq->name));
    return false;
}

/* Why DequantizeLinear dq's weight cannot become MatMulNBits' B (a static phrase), or NULL: a
 * constant rank-2 [K, N] tensor quantized in blocks of block_size >= min_block (a power of two)
 * along K (axis 0), a float or float16 scale [ceil(K / block_size), N] and a zero point of that
 * shape or none, all constant. ONNX Runtime's DQMatMulNodeGroupSelector and its check of the DQ. */
static const char *nbits_refusal(const fp_node *dq, int64_t min_block)
{
    const fp_value *w = dq->inputs[0], *s = dq->n_inputs > 1 ? dq->inputs[1] : NULL;
    const fp_value *z = dq->n_inputs > 2 ? dq->inputs[2] : NULL;
    int64_t bs = fp_node_attr_int(dq, "block_size", 0), axis = fp_node_attr_int(dq, "axis", 1);
    if (!fp_value_is_constant(w) || !s || !fp_value_is_constant(s) || (z && !fp_value_is_constant(z)))
        return "the weight, its scale and zero point are not all constants";
    if (w->shape.rank != 2)
        return "the weight is not a [K, N] matrix";
    if (s->dtype != FP_DT_FLOAT && s->dtype != FP_DT_FLOAT16)
        return "the scale is neither float nor float16";
    if (bs <= 0)
        return "the weight is not block-quantized (no block_size)";
    if (axis != 0)
        return "the blocks run along N (axis 1), not along K (axis 0)";
    if (bs < min_block || (bs & (bs - 1)))
        return "block_size is under 16 or not a power of two";
    int64_t k = w->shape.dims[0].value, n = w->shape.dims[1].value;
    bool fits = s->shape.rank == 2 && k >= 0 && s->shape.dims[0].value == (k + bs - 1) / bs &&
                s->shape.dims[1].value == n;
    if (!fits ||
        (z && (z->shape.rank != 2 || z->shape.dims[0].value != s->shape.dims[0].value || z->shape.dims[1].value != n)))
        return "the scale or zero point is not [ceil(K / block_size), N]";
    return NULL;
}

#define NBITS_MIN_BLOCK 16 /* the smallest block MatMulNBits takes */

/* The unit's weight DequantizeLinear (at anchor input 1) can become MatMulNBits' packed B: an
 * activation not dequantized, a weight type of the list, and what nbits_refusal checks. */
static bool check_nbits_weight(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *a = mt->nodes[0], *dq = a->n_inputs > 1 ? fp_fuse_unit_dq(mt, a->inputs[1]) : NULL;
    if (!dq)
        return true;
    const fp_value *w = dq->inputs[0], *x = a->inputs[0];
    const char *why = x && x->producer && x->producer->op == FP_OP_DEQUANTIZE_LINEAR
                          ? "its input 0 is dequantized too (a unit of two DQs, not a weight-only one)"
                      : list_has(mt, c, fp_dtype_name(w->dtype)) ? nbits_refusal(dq, NBITS_MIN_BLOCK)
                                                                 : "the weight's type is not one MatMulNBits takes";
    if (!why)
        return true;
    int64_t bs = fp_node_attr_int(dq, "block_size", 0);
    reason(
        mt, out, c,
        fmt(mt, "%s %s, axis %" G_GINT64_FORMAT ", block_size %" G_GINT64_FORMAT, fp_dtype_name(w->dtype),
            shape_str(mt, &w->shape), fp_node_attr_int(dq, "axis", 1), bs),
        fmt(mt, "a constant [K, N] weight in blocks of a power of two >= %d along K", NBITS_MIN_BLOCK),
        fmt(mt, "%s %s: DequantizeLinear %s cannot become MatMulNBits' packed weight: %s", a->op_type, a->name,
            dq->name, why),
        fmt(mt,
            "quantize '%s' in blocks of a power of two >= 16 along K (axis 0), as onnxruntime's matmul_nbits_quantizer "
            "writes QDQ",
            w->name));
    return false;
}

/* No lone Relu or Clip reads the anchor of a unit without an output QuantizeLinear: ONNX Runtime
 * takes such an activation for one a Q after it may make redundant and selects a unit with that Q
 * or none (NodeGroupSelector::GetQDQSelection). */
static bool check_no_clip_after(const fp_constraint *c, const fp_match *mt, GPtrArray *out)
{
    const fp_node *a = mt->nodes[0];
    const fp_value *v = a->outputs[0];
    if (v->n_uses != 1 || (v->uses[0].node->op != FP_OP_RELU && v->uses[0].node->op != FP_OP_CLIP))
        return true;
    const fp_node *act = v->uses[0].node;
    const fp_value *o = act->n_outputs ? act->outputs[0] : NULL;
    if (!o || o->n_uses != 1 || o->is_output)
        return true;
    reason(mt, out, c, fmt(mt, "%s %s reads it, then %s", act->op_type, act->name, o->uses[0].node->op_type),
           sdup(mt, "no lone Relu / Clip reading it"),
           fmt(mt,
               "%s %s: its only reader is %s %s, which ONNX Runtime takes for an activation a QuantizeLinear "
               "after it may make redundant: it selects a unit at %s only with that QuantizeLinear (the %s "
               "dropped), never one without",
               a->op_type, a->name, act->op_type, act->name, a->name, act->op_type),
           fmt(mt, "let %s keep a float output read by more than the %s, or quantize its output", a->name, act->name));
    return false;
}

typedef bool (*check_fn)(const fp_constraint *, const fp_match *, GPtrArray *);

/* The predicates by id: one per row of fuse_constraints.def. */
static const check_fn checks[FP_CONSTRAINT_COUNT] = {
#define X(name) [FP_CONSTRAINT_##name] = check_##name,
#include "passes/fusion/fuse_constraints.def"
#undef X
};

int fp_fuse_constraint_find(const char *name)
{
    for (int i = 0; i < FP_CONSTRAINT_COUNT; i++)
        if (strcmp(fp_fuse_constraint_names[i], name) == 0)
            return i;
    return -1;
}

bool fp_fuse_constraint_check(const fp_constraint *c, const fp_match *mt, GPtrArray *reasons)
{
    g_assert((unsigned)c->id < FP_CONSTRAINT_COUNT);
    return checks[c->id](c, mt, reasons);
}

bool fp_fuse_const_scalar(const fp_value *v, double *value) { return const_scalar(v, value); }

int fp_fuse_scale_operand(const fp_node *n, double *value_out)
{
    double v;
    uint64_t numel = 0;
    for (int k = n->op == FP_OP_DIV ? 1 : 0; k < 2 && n->n_inputs == 2; k++) {
        const fp_value *s = n->inputs[k], *x = n->inputs[1 - k];
        if (!s || !x || !fp_value_is_constant(s) || !fp_shape_numel(&s->shape, &numel) || numel != 1 ||
            !const_scalar(s, &v))
            continue;
        if (value_out)
            *value_out = n->op == FP_OP_DIV ? 1.0 / v : v;
        return k;
    }
    return -1;
}
