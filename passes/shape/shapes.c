/* shapes.c - the shape-inference pass: resets every value to what the file declares, binds the
 * user's input shapes and batch size, then walks each graph in topological order applying the
 * op's shape rule (shape_rules_*.c), folding constants (fold.c) and descending into If / Loop /
 * Scan bodies. Rules build in a scratch arena; a node's output shapes are then interned in the
 * model (fp_intern_dims), so that running the pass again (headroom: once per batch) does not
 * grow the model's arena by a copy of every shape. */
#include <string.h>

#include "ir/par.h"
#include "fold.h"
#include "shape_rules.h"

typedef struct {
    fp_model *m;
    const fp_shape_opts *opts;
    fp_diag *diag;
    GError **error;
    fp_arena *tmp;      /* scratch of the node being inferred (sh_ctx.tmp) */
    bool ge;            /* sh_ctx.ge */
    fp_fold_memo *memo; /* folds of this run (fp_fold_node) */
    bool attrs_checked; /* fp_shape_opts.attrs_checked */
} pass;

static bool infer_graph(pass *p, fp_graph *g);

/* ---------------------------------------------------------------- reset and binding */

/* How far ahead reset_graph asks for the values it will write (a million-node graph's values are
 * scattered over the arena in small slabs: they are not streamed in by the hardware alone), and
 * for the tensors of those half as far ahead. */
enum { RESET_AHEAD = 16 };

typedef struct {
    GPtrArray *values;
    GPtrArray *seed[2]; /* per half: the constants to seed (fp_fold_seed interns: the caller's) */
} reset_job;

/* reset_graph's work on values [from, to) (fp_par_halves): each back to what the file declares,
 * the constants fp_fold_seed seeds listed in job->seed[h]. Writes only these values. */
static void reset_values(void *arg, int h, size_t from, size_t to)
{
    reset_job *j = arg;
    for (size_t i = from; i < to; i++) {
        fp_value *v = j->values->pdata[i];
        if (i + RESET_AHEAD < to) {
            const char *a = j->values->pdata[i + RESET_AHEAD];
            __builtin_prefetch(a, 1);
            __builtin_prefetch(a + 64, 1);
            __builtin_prefetch(a + sizeof(fp_value) - 1, 1);
            const fp_value *b = j->values->pdata[i + RESET_AHEAD / 2];
            if (b->tensor)
                __builtin_prefetch(b->tensor);
        }
        fp_value_set_fold(v, NULL); /* neither allocates */
        fp_value_set_elems(v, NULL, -1);
        v->sval = NULL;
        v->n_sval = -1;
        if (fp_value_is_weight(v) && v->tensor) {
            v->dtype = v->tensor->dtype;
            v->shape = v->tensor->shape;
            if (fp_fold_seeds(sh_known(v)))
                g_ptr_array_add(j->seed[h], v);
        } else {
            v->dtype = v->decl_dtype;
            v->shape = v->kind == FP_VALUE_INPUT ? v->decl_shape : (fp_shape){-1, NULL};
        }
    }
}

/* Every value of g back to what the file declares (the two halves at once on a big graph),
 * constants seeded, the fold marks of the last run cleared. */
static void reset_graph(fp_model *m, fp_graph *g)
{
    reset_job j = {g->values, {g_ptr_array_new(), g_ptr_array_new()}};
    fp_par_halves(g->values->len, g->nodes->len, reset_values, &j);
    for (int h = 0; h < 2; h++) { /* in value order, as one walk seeded them */
        for (guint i = 0; i < j.seed[h]->len; i++) {
            fp_value *v = j.seed[h]->pdata[i];
            fp_fold_seed(m, v, sh_known(v));
        }
        g_ptr_array_free(j.seed[h], TRUE);
    }
    /* the nodes the last run folded, not every node: a walk over every node of a big graph
     * to clear one bit would be a large part of the reset */
    if (g->folded) {
        for (guint i = 0; i < g->folded->len; i++)
            ((fp_node *)g->folded->pdata[i])->flags &= ~(uint32_t)FP_NODE_FOLDED;
        g_ptr_array_set_size(g->folded, 0);
    }
}

/* Marks n FP_NODE_FOLDED and lists it in its graph's `folded` for the next reset_graph. */
static void mark_folded(fp_node *n)
{
    if (n->flags & FP_NODE_FOLDED) /* a loop body inferred again */
        return;
    n->flags |= FP_NODE_FOLDED;
    if (!n->graph->folded)
        n->graph->folded = g_ptr_array_new();
    g_ptr_array_add(n->graph->folded, n);
}

/* The value of a dim written as a sum ("past_sequence_length + sequence_length", as Hugging Face
 * Optimum names a total length): every term a symbol bound in `syms` or a number; false when a
 * term is neither or the sum leaves [0, 2^62]. */
static bool sum_of_syms(fp_model *m, const char *expr, GHashTable *syms, int64_t *value)
{
    if (!strchr(expr, '+'))
        return false;
    g_auto(GStrv) terms = g_strsplit(expr, "+", -1);
    int64_t sum = 0;
    for (char **t = terms; *t; t++) {
        g_strstrip(*t);
        gpointer val;
        guint64 n = 0;
        if (g_hash_table_lookup_extended(syms, fp_intern(m, *t, -1), NULL, &val))
            n = GPOINTER_TO_SIZE(val) - 1;
        else if (!g_ascii_string_to_unsigned(*t, 10, 0, (guint64)1 << 62, &n, NULL))
            return false;
        sum += (int64_t)n;
        if (sum > (int64_t)1 << 62)
            return false;
    }
    *value = sum;
    return true;
}

/* Replaces symbols bound in `syms` (symbol -> value + 1), and sums of them, by their value. */
static void apply_syms(fp_model *m, fp_value *v, GHashTable *syms)
{
    if (v->shape.rank <= 0 || !g_hash_table_size(syms))
        return;
    fp_dim *d = fp_arena_memdup(m->arena, v->shape.dims, sizeof(fp_dim) * (size_t)v->shape.rank);
    for (int32_t k = 0; k < v->shape.rank; k++) {
        gpointer val;
        int64_t sum;
        if (d[k].sym && g_hash_table_lookup_extended(syms, d[k].sym, NULL, &val))
            d[k] = (fp_dim){GPOINTER_TO_SIZE(val) - 1, NULL};
        else if (d[k].sym && sum_of_syms(m, d[k].sym, syms, &sum))
            d[k] = (fp_dim){sum, NULL};
    }
    v->shape.dims = d;
}

/* The symbolic dims g's inputs declare, comma-separated, each once ("none" when there is none).
 * Caller frees. */
static char *declared_syms(const fp_graph *g)
{
    GString *s = g_string_new(NULL);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_value *v = g->inputs->pdata[i];
        for (int32_t d = 0; d < v->decl_shape.rank; d++)
            if (v->decl_shape.dims[d].sym && g_hash_table_add(seen, (gpointer)v->decl_shape.dims[d].sym))
                g_string_append_printf(s, "%s%s", s->len ? ", " : "", v->decl_shape.dims[d].sym);
    }
    if (!s->len)
        g_string_append(s, "none");
    return g_string_free(s, FALSE);
}

/* Checks the --dim bindings against g's inputs and the symbols `from_inputs` (bound by --input
 * shapes): each name is declared by some input, and not bound to another value there. */
static bool check_dims(pass *p, const fp_graph *g, GHashTable *from_inputs)
{
    g_autofree char *names = declared_syms(g);
    for (size_t i = 0; i < p->opts->n_dims; i++) {
        const fp_dim_binding *b = &p->opts->dims[i];
        const char *sym = fp_intern(p->m, b->name, -1);
        gpointer val;
        bool declared = false;
        for (guint k = 0; k < g->inputs->len && !declared; k++) {
            const fp_value *v = g->inputs->pdata[k];
            for (int32_t d = 0; d < v->decl_shape.rank && !declared; d++)
                declared = v->decl_shape.dims[d].sym == sym;
        }
        if (!declared) {
            g_set_error(p->error, FP_IR_ERROR, FP_IR_ERROR_INVALID,
                        "--dim %s: no input of the model declares a dimension '%s' (its symbolic dims: %s)", b->name,
                        b->name, names);
            return false;
        }
        if (g_hash_table_lookup_extended(from_inputs, sym, NULL, &val) &&
            (int64_t)GPOINTER_TO_SIZE(val) - 1 != b->value) {
            g_set_error(p->error, FP_IR_ERROR, FP_IR_ERROR_INVALID,
                        "--dim %s=%" G_GINT64_FORMAT ": an --input shape binds '%s' to %" G_GINT64_FORMAT, b->name,
                        b->value, b->name, (int64_t)GPOINTER_TO_SIZE(val) - 1);
            return false;
        }
    }
    return true;
}

/* Applies --input overrides, --batch, --dim and known input contents to the main graph's inputs. */
static bool bind_inputs(pass *p, fp_graph *g)
{
    const fp_shape_opts *o = p->opts;
    g_autoptr(GHashTable) syms = g_hash_table_new(g_direct_hash, g_direct_equal);
    if (o && o->input_shapes) {
        GHashTableIter it;
        gpointer key, val;
        g_hash_table_iter_init(&it, o->input_shapes);
        while (g_hash_table_iter_next(&it, &key, &val)) {
            fp_value *v = fp_graph_find(g, key);
            if (!v || v->kind != FP_VALUE_INPUT) {
                g_set_error(p->error, FP_IR_ERROR, FP_IR_ERROR_INVALID, "--input %s: the model has no input named '%s'",
                            (const char *)key, (const char *)key);
                return false;
            }
            const fp_shape *s = val;
            if (v->decl_shape.rank >= 0 && v->decl_shape.rank != s->rank) {
                g_autofree char *d = fp_shape_to_string(&v->decl_shape);
                g_set_error(p->error, FP_IR_ERROR, FP_IR_ERROR_INVALID,
                            "--input %s: rank %d given, but the model declares %s (rank %d)", v->name, s->rank, d,
                            v->decl_shape.rank);
                return false;
            }
            for (int32_t k = 0; k < s->rank && v->decl_shape.rank >= 0; k++)
                if (v->decl_shape.dims[k].sym && fp_dim_known(s->dims[k]))
                    g_hash_table_insert(syms, (gpointer)v->decl_shape.dims[k].sym,
                                        GSIZE_TO_POINTER((gsize)s->dims[k].value + 1));
            v->shape = *s;
        }
    }
    if (o && o->n_dims && !check_dims(p, g, syms))
        return false;
    if (o && o->batch > 0) {
        if (o->batch_dim)
            g_hash_table_insert(syms, (gpointer)fp_intern(p->m, o->batch_dim, -1),
                                GSIZE_TO_POINTER((gsize)o->batch + 1));
        for (guint i = 0; i < g->inputs->len && !o->batch_dim; i++) {
            fp_value *v = g->inputs->pdata[i];
            if (v->shape.rank < 1)
                continue;
            if (v->shape.dims[0].sym) {
                g_hash_table_insert(syms, (gpointer)v->shape.dims[0].sym, GSIZE_TO_POINTER((gsize)o->batch + 1));
            } else if (v->shape.dims[0].value < 0) {
                v->shape = (fp_shape){v->shape.rank, fp_arena_memdup(p->m->arena, v->shape.dims,
                                                                     sizeof(fp_dim) * (size_t)v->shape.rank)};
                v->shape.dims[0] = (fp_dim){o->batch, NULL};
            }
        }
    }
    for (size_t i = 0; o && i < o->n_dims; i++)
        g_hash_table_insert(syms, (gpointer)fp_intern(p->m, o->dims[i].name, -1),
                            GSIZE_TO_POINTER((gsize)o->dims[i].value + 1));
    for (guint i = 0; i < g->inputs->len; i++) {
        fp_value *v = g->inputs->pdata[i];
        apply_syms(p->m, v, syms);
        const fp_tensor *t = o && o->input_values ? g_hash_table_lookup(o->input_values, v->name) : NULL;
        if (t) {
            fp_value_set_fold(v, t);
            fp_fold_seed(p->m, v, t);
        }
    }
    return true;
}

/* ---------------------------------------------------------------- per node */

/* Whether n is evaluated at analysis time (ONNX Runtime's constant folding removes it). */
static bool foldable(const fp_node *n)
{
    if (n->op == FP_OP_CONSTANT)
        return true;
    if (n->op == FP_OP_OPAQUE || fp_op_has(n->op, FP_OPF_CTRL) || n->n_outputs == 0)
        return false;
    if (fp_op_has(n->op, FP_OPF_RANDOM))
        return false;
    switch (n->op) {
    case FP_OP_SEQUENCE_EMPTY:
    case FP_OP_SEQUENCE_CONSTRUCT:
    case FP_OP_OPTIONAL:
        return false;
    case FP_OP_DEQUANTIZE_LINEAR:
    case FP_OP_QUANTIZE_LINEAR:
        return false; /* ONNX Runtime keeps Q/DQ pairs for its QDQ kernels: not constant-folded */
    case FP_OP_SHAPE:
    case FP_OP_SIZE:
        return (n->flags & FP_NODE_RESHAPE_CONST) || (n->inputs[0] && sh_shape_folds(n, &n->inputs[0]->shape));
    case FP_OP_CONCAT: /* ReshapeFusion makes it a constant */
        if ((n->flags & FP_NODE_RESHAPE_CONST) && fp_fold_reshape_ints(n, NULL))
            return true;
        break;
    default:
        /* what computes only such a Concat goes with it (RemoveNodesWithOneOutputBottomUp) */
        if (n->flags & FP_NODE_RESHAPE_CONST)
            return true;
        break;
    }
    bool any = false;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        if (!n->inputs[i])
            continue;
        if (!fp_value_is_constant(n->inputs[i]))
            return false;
        any = true;
    }
    return any;
}

/* Whether n is one of the host ops GE's graph fusion leaves over constants (ConvBnFilterHost,
 * ConvScaleBiasHost, ...: BatchNorm and Scale folded into a Conv's filter and bias), which GE
 * evaluates at build: op types ending in "Host" whose inputs are all constant. */
static bool ge_host_op(const fp_node *n)
{
    if (n->op != FP_OP_OPAQUE || !g_str_has_suffix(n->op_type, "Host") || !n->n_inputs || n->n_outputs == 0)
        return false;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && !fp_value_is_constant(n->inputs[i]))
            return false;
    return true;
}

/* Fills dims the rule left unknown from the file's declaration; warns when both are known and
 * disagree. */
static void merge_declared(pass *p, fp_node *n, fp_value *v)
{
    if (v->dtype == FP_DT_UNDEFINED)
        v->dtype = v->decl_dtype;
    const fp_shape *d = &v->decl_shape;
    if (d->rank < 0)
        return;
    if (v->shape.rank < 0) {
        v->shape = *d;
        return;
    }
    if (v->shape.rank != d->rank) {
        g_autofree char *a = fp_shape_to_string(&v->shape), *b = fp_shape_to_string(d);
        fp_diag_add(p->diag, FP_DIAG_WARNING, "shapes", "shape-declared-mismatch", n->name,
                    "value '%s': inferred %s, the file declares %s", v->name, a, b);
        return;
    }
    fp_dim *dims = NULL;
    for (int32_t k = 0; k < d->rank; k++) {
        fp_dim in = v->shape.dims[k], de = d->dims[k];
        if (!fp_dim_known(in) && (fp_dim_known(de) || (de.sym && !in.sym))) {
            if (!dims)
                dims = fp_arena_memdup(p->tmp, v->shape.dims, sizeof(fp_dim) * (size_t)d->rank);
            dims[k] = de;
        } else if (fp_dim_known(in) && fp_dim_known(de) && in.value != de.value) {
            g_autofree char *a = fp_shape_to_string(&v->shape), *b = fp_shape_to_string(d);
            fp_diag_add(p->diag, FP_DIAG_WARNING, "shapes", "shape-declared-mismatch", n->name,
                        "value '%s': inferred %s, the file declares %s", v->name, a, b);
            return;
        }
    }
    if (dims)
        v->shape.dims = dims;
}

/* Training optimizers (ai.onnx.preview.training): output k has the shape of input 2 + k. */
static sh_result rule_optimizer(sh_ctx *c)
{
    for (uint32_t k = 0; k < c->n->n_outputs; k++) {
        fp_value *in = sh_val(c, 2 + k);
        if (!in)
            return sh_unknown(c, "input %u missing", 2 + k);
        sh_set(c, k, in->dtype, in->shape);
    }
    return SH_OK;
}

/* Gradient (ai.onnx.preview.training): output k has the shape of the value named xs[k]. */
static sh_result rule_gradient(sh_ctx *c)
{
    const fp_attr *xs = fp_node_attr(c->n, "xs");
    if (!xs || xs->type != FP_ATTR_STRINGS)
        return sh_fail(c, "missing attribute xs");
    for (uint32_t k = 0; k < c->n->n_outputs && k < xs->n; k++) {
        fp_value *x = fp_graph_lookup(c->n->graph, xs->u.strings[k]);
        if (!x)
            return sh_fail(c, "xs names '%s', which is not a value of the graph", xs->u.strings[k]);
        sh_set(c, k, x->dtype, x->shape);
    }
    return SH_OK;
}

/* GE graphs are dumped after compilation with a tensor descriptor on every output, and GE ops
 * differ from their ONNX namesakes in attributes (ConcatD's concat_dim, 4-element NCHW strides,
 * 5-D device formats): their declared shapes are the truth. */
static bool trust_declared(const pass *p, const fp_node *n)
{
    if (!p->ge || n->n_outputs == 0)
        return false;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && (n->outputs[k]->decl_shape.rank < 0 || n->outputs[k]->decl_dtype == FP_DT_UNDEFINED))
            return false;
    return true;
}

/* fp_shape_opts.runtime_view after n is inferred: n's outputs keep their shape data (sval) only
 * when n folds to a constant or is FP_NODE_RESHAPE_CONST. */
static void runtime_view(fp_node *n)
{
    if (n->flags & (FP_NODE_FOLDED | FP_NODE_RESHAPE_CONST))
        return;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *v = n->outputs[k];
        if (v) {
            v->sval = NULL;
            v->n_sval = -1;
        }
    }
}

static bool infer_node(pass *p, fp_node *n)
{
    sh_ctx c = {.m = p->m,
                .n = n,
                .opset = n->opset,
                .diag = p->diag,
                .error = p->error,
                .tmp = p->tmp,
                .ge = p->ge,
                .runtime_view = p->opts && p->opts->runtime_view};
    if (trust_declared(p, n)) {
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            fp_value *v = n->outputs[k];
            if (!v)
                continue;
            v->shape = v->decl_shape;
            v->dtype = v->decl_dtype;
            if (v->type == FP_TYPE_UNKNOWN)
                v->type = FP_TYPE_TENSOR;
        }
        if (foldable(n) || ge_host_op(n))
            mark_folded(n);
        fp_fold_node(&c, p->memo);
        return true;
    }
    sh_rule rule = fp_shape_rules[n->op];
    if (!rule && strcmp(n->domain, "ai.onnx.preview.training") == 0) {
        if (strcmp(n->op_type, "Adagrad") == 0 || strcmp(n->op_type, "Adam") == 0 ||
            strcmp(n->op_type, "Momentum") == 0)
            rule = rule_optimizer;
        else if (strcmp(n->op_type, "Gradient") == 0)
            rule = rule_gradient;
    }
    /* the rules read input 0 of every op that takes inputs: a node without it is malformed */
    bool takes_none = n->op == FP_OP_CONSTANT || n->op == FP_OP_RANDOM_NORMAL || n->op == FP_OP_RANDOM_UNIFORM ||
                      n->op == FP_OP_SEQUENCE_EMPTY || n->op == FP_OP_OPTIONAL;
    if (rule && !takes_none && (!n->n_inputs || !n->inputs[0]))
        rule = NULL;
    sh_result r = rule                    ? rule(&c)
                  : fp_shape_rules[n->op] ? sh_unknown(&c, "input 0 is missing")
                                          : sh_unknown(&c, "no shape rule for op type '%s%s%s'", n->domain,
                                                       *n->domain ? "." : "", n->op_type);
    if (r == SH_ERROR && p->ge && p->error && *p->error) {
        /* a GE op whose attributes differ from the ONNX op of the same kind: not a model error */
        fp_diag_add(p->diag, FP_DIAG_WARNING, "shapes", "shape-ge-rule", n->name,
                    "%s '%s': ONNX shape rule does not apply (%s); shape left as declared", n->op_type, n->name,
                    (*p->error)->message);
        g_clear_error(p->error);
        r = SH_UNKNOWN;
    }
    if (r == SH_ERROR) {
        g_free(c.reason);
        return false;
    }
    bool complete = true;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *v = n->outputs[k];
        if (!v)
            continue;
        merge_declared(p, n, v);
        if (v->type == FP_TYPE_UNKNOWN && v->shape.rank >= 0)
            v->type = FP_TYPE_TENSOR;
        complete &= fp_shape_static(&v->shape) || v->type == FP_TYPE_SEQUENCE || v->type == FP_TYPE_MAP;
    }
    if (r == SH_UNKNOWN && !complete)
        fp_diag_add(p->diag, FP_DIAG_INFO, "shapes", "shape-unknown", n->name, "%s '%s': %s", n->op_type, n->name,
                    c.reason ? c.reason : "output shape unknown");
    g_free(c.reason);
    fp_fold_node(&c, p->memo); /* first: a Concat ReshapeFusion makes constant folds on its result */
    if (foldable(n))
        mark_folded(n);
    if (p->opts && p->opts->runtime_view)
        runtime_view(n);
    return true;
}

/* ---------------------------------------------------------------- control flow */

static fp_graph *attr_graph(const fp_node *n, const char *name)
{
    const fp_attr *a = fp_node_attr(n, name);
    return a && a->type == FP_ATTR_GRAPH ? a->u.g : NULL;
}

/* Sets a subgraph input from an outer value's type (keeping declared dims the outer lacks). */
static void set_from(fp_value *dst, fp_dtype dt, const fp_shape *s)
{
    if (dt != FP_DT_UNDEFINED)
        dst->dtype = dt;
    if (s && s->rank >= 0 && (dst->decl_shape.rank < 0 || fp_shape_static(s)))
        dst->shape = *s;
}

/* Common shape of two alternatives: equal dims kept, others unknown; rank mismatch = unknown. */
static fp_shape merge_alt(fp_model *m, const fp_shape *a, const fp_shape *b)
{
    if (a->rank < 0 || b->rank < 0 || a->rank != b->rank)
        return (fp_shape){-1, NULL};
    fp_shape out = {a->rank, fp_arena_memdup(m->arena, a->dims, sizeof(fp_dim) * (size_t)(a->rank ? a->rank : 1))};
    for (int32_t i = 0; i < a->rank; i++)
        if (!sh_dim_eq(a->dims[i], b->dims[i]))
            out.dims[i] = (fp_dim){-1, NULL};
    return out;
}

static void copy_type(fp_value *dst, const fp_value *src)
{
    dst->dtype = src->dtype;
    dst->shape = src->shape;
    dst->type = src->type == FP_TYPE_UNKNOWN ? dst->type : src->type;
    dst->elem_kind = src->elem_kind;
    fp_value_set_fold(dst, fp_value_fold(src));
    dst->sval = src->sval;
    dst->n_sval = src->n_sval;
    fp_value_set_elems(dst, fp_value_elems(src), fp_value_n_elems(src));
}

static bool infer_if(pass *p, fp_node *n)
{
    fp_graph *tg = attr_graph(n, "then_branch"), *eg = attr_graph(n, "else_branch");
    if ((tg && !infer_graph(p, tg)) || (eg && !infer_graph(p, eg)))
        return false;
    int64_t cond[1];
    int cnt = 0;
    sh_ctx c = {.m = p->m, .n = n, .opset = n->opset, .ge = p->ge};
    bool known = sh_ints(&c, 0, cond, 1, &cnt) && cnt == 1;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *v = n->outputs[k];
        if (!v)
            continue;
        fp_value *tv = tg && k < tg->outputs->len ? tg->outputs->pdata[k] : NULL;
        fp_value *ev = eg && k < eg->outputs->len ? eg->outputs->pdata[k] : NULL;
        if (known && (cond[0] ? tv : ev)) {
            copy_type(v, cond[0] ? tv : ev);
        } else if (tv && ev) {
            v->dtype = tv->dtype;
            v->type = tv->type;
            v->shape = merge_alt(p->m, &tv->shape, &ev->shape);
        }
        merge_declared(p, n, v);
    }
    return true;
}

static bool infer_loop(pass *p, fp_node *n)
{
    fp_graph *body = attr_graph(n, "body");
    if (!body)
        return true;
    /* body inputs: iteration number, condition, loop-carried values */
    for (guint i = 0; i < body->inputs->len; i++) {
        fp_value *bv = body->inputs->pdata[i];
        if (i == 0)
            set_from(bv, FP_DT_INT64, &(fp_shape){0, NULL});
        else if (i == 1)
            set_from(bv, FP_DT_BOOL, &(fp_shape){0, NULL});
        else if (i < n->n_inputs && n->inputs[i])
            set_from(bv, n->inputs[i]->dtype, &n->inputs[i]->shape);
    }
    if (!infer_graph(p, body))
        return false;
    int64_t trip[1];
    int cnt = 0;
    sh_ctx c = {.m = p->m, .n = n, .opset = n->opset, .ge = p->ge};
    bool have_trip = n->n_inputs > 0 && n->inputs[0] && sh_ints(&c, 0, trip, 1, &cnt) && cnt == 1;
    uint32_t ncarried = n->n_inputs > 2 ? n->n_inputs - 2 : 0;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *v = n->outputs[k];
        fp_value *bo = 1 + k < body->outputs->len ? body->outputs->pdata[1 + k] : NULL;
        if (!v || !bo)
            continue;
        if (k < ncarried) {
            fp_value *init = n->inputs[2 + k];
            v->dtype = bo->dtype;
            v->type = bo->type;
            v->shape = init ? merge_alt(p->m, &bo->shape, &init->shape) : bo->shape;
        } else if (bo->shape.rank >= 0 && bo->shape.rank < FP_MAX_RANK) {
            fp_shape s = {bo->shape.rank + 1, fp_arena_calloc(p->m->arena, (size_t)bo->shape.rank + 1, sizeof(fp_dim))};
            s.dims[0] = have_trip ? (fp_dim){trip[0], NULL} : (fp_dim){-1, NULL};
            memcpy(s.dims + 1, bo->shape.dims, sizeof(fp_dim) * (size_t)bo->shape.rank);
            v->dtype = bo->dtype;
            v->type = bo->type == FP_TYPE_UNKNOWN ? FP_TYPE_TENSOR : bo->type;
            v->shape = s;
        }
        merge_declared(p, n, v);
    }
    return true;
}

/* A copy of s without dims `drop1` and `drop2` (-1 = none). */
static fp_shape drop_dims(fp_model *m, const fp_shape *s, int32_t drop1, int32_t drop2)
{
    fp_shape out = {0, fp_arena_calloc(m->arena, (size_t)MAX(s->rank, 1), sizeof(fp_dim))};
    for (int32_t d = 0; d < s->rank; d++)
        if (d != drop1 && d != drop2)
            out.dims[out.rank++] = s->dims[d];
    return out;
}

/* Scan-8: inputs (sequence_lens, states..., scans...) all batched on dim 0, scans iterate dim 1;
 * outputs are batched states and [batch, seq, ...] scan outputs. */
static bool infer_scan8(pass *p, fp_node *n, fp_graph *body)
{
    int64_t nscan = fp_node_attr_int(n, "num_scan_inputs", 0);
    uint32_t nstate = n->n_inputs >= (uint32_t)nscan + 1 ? n->n_inputs - 1 - (uint32_t)nscan : 0;
    fp_dim batch = {-1, NULL}, len = {-1, NULL};
    for (guint i = 0; i < body->inputs->len && i + 1 < n->n_inputs; i++) {
        fp_value *bv = body->inputs->pdata[i], *iv = n->inputs[i + 1];
        if (!iv || iv->shape.rank < 1)
            continue;
        batch = iv->shape.dims[0];
        if (i >= nstate && iv->shape.rank >= 2)
            len = iv->shape.dims[1];
        fp_shape s = drop_dims(p->m, &iv->shape, 0, i < nstate ? -1 : 1);
        set_from(bv, iv->dtype, &s);
    }
    if (!infer_graph(p, body))
        return false;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *v = n->outputs[k], *bo = k < body->outputs->len ? body->outputs->pdata[k] : NULL;
        if (!v || !bo || bo->shape.rank < 0 || bo->shape.rank + 2 > FP_MAX_RANK)
            continue;
        int32_t extra = k < nstate ? 1 : 2;
        fp_shape s = {bo->shape.rank + extra, fp_arena_calloc(p->m->arena, (size_t)bo->shape.rank + 2, sizeof(fp_dim))};
        s.dims[0] = batch;
        if (extra == 2)
            s.dims[1] = len;
        memcpy(s.dims + extra, bo->shape.dims, sizeof(fp_dim) * (size_t)bo->shape.rank);
        v->dtype = bo->dtype;
        v->type = FP_TYPE_TENSOR;
        v->shape = s;
        merge_declared(p, n, v);
    }
    return true;
}

static bool infer_scan(pass *p, fp_node *n)
{
    fp_graph *body = attr_graph(n, "body");
    if (!body)
        return true;
    if (n->opset < 9)
        return infer_scan8(p, n, body);
    int64_t nscan = fp_node_attr_int(n, "num_scan_inputs", 0);
    uint32_t nstate = n->n_inputs >= (uint32_t)nscan ? n->n_inputs - (uint32_t)nscan : 0;
    int64_t in_axes[FP_MAX_RANK] = {0}, out_axes[FP_MAX_RANK] = {0};
    int cnt = 0;
    sh_attr_ints(n, "scan_input_axes", in_axes, FP_MAX_RANK, &cnt);
    sh_attr_ints(n, "scan_output_axes", out_axes, FP_MAX_RANK, &cnt);
    fp_dim len = {-1, NULL};
    for (guint i = 0; i < body->inputs->len && i < n->n_inputs; i++) {
        fp_value *bv = body->inputs->pdata[i], *iv = n->inputs[i];
        if (!iv)
            continue;
        if (i < nstate) {
            set_from(bv, iv->dtype, &iv->shape);
        } else if (iv->shape.rank > 0) {
            int32_t ax;
            if (!sh_axis(i - nstate < FP_MAX_RANK ? in_axes[i - nstate] : 0, iv->shape.rank, &ax))
                continue;
            len = iv->shape.dims[ax];
            fp_shape s = drop_dims(p->m, &iv->shape, ax, -1);
            set_from(bv, iv->dtype, &s);
        }
    }
    if (!infer_graph(p, body))
        return false;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *v = n->outputs[k], *bo = k < body->outputs->len ? body->outputs->pdata[k] : NULL;
        if (!v || !bo)
            continue;
        v->dtype = bo->dtype;
        v->type = FP_TYPE_TENSOR;
        if (k < nstate) {
            v->shape = bo->shape;
        } else if (bo->shape.rank >= 0 && bo->shape.rank < FP_MAX_RANK) {
            int32_t r = bo->shape.rank + 1, ax;
            if (!sh_axis(k - nstate < FP_MAX_RANK ? out_axes[k - nstate] : 0, r, &ax))
                ax = 0;
            fp_shape s = {r, fp_arena_calloc(p->m->arena, (size_t)r, sizeof(fp_dim))};
            for (int32_t d = 0, j = 0; d < r; d++)
                s.dims[d] = d == ax ? len : bo->shape.dims[j++];
            v->shape = s;
        }
        merge_declared(p, n, v);
    }
    return true;
}

static bool infer_ctrl(pass *p, fp_node *n)
{
    switch (n->op) {
    case FP_OP_IF:
        return infer_if(p, n);
    case FP_OP_LOOP:
        return infer_loop(p, n);
    case FP_OP_SCAN:
        return infer_scan(p, n);
    default:
        for (uint32_t k = 0; k < n->n_subgraphs; k++)
            if (!infer_graph(p, n->subgraphs[k]))
                return false;
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k])
                merge_declared(p, n, n->outputs[k]);
        return true;
    }
}

/* ---------------------------------------------------------------- graphs */

/* The dims of an input of n equal to s's, when that input's producer ran in this pass (so that
 * they are interned already), else NULL: most ops give an output the shape of an input, and this
 * spares hashing it again. */
static fp_dim *input_dims_like(const fp_node *n, const fp_shape *s)
{
    if (s->rank <= 0)
        return NULL;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const fp_value *in = n->inputs[i];
        if (in && in->producer && in->shape.rank == s->rank &&
            (in->shape.dims == s->dims || memcmp(in->shape.dims, s->dims, sizeof(fp_dim) * (size_t)s->rank) == 0))
            return in->shape.dims;
    }
    return NULL;
}

/* Moves what n's outputs hold in the scratch arena into the model, interned: shapes, and the
 * element shapes of sequences. */
static void intern_outputs(pass *p, fp_node *n)
{
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *v = n->outputs[k];
        if (!v)
            continue;
        fp_dim *same = input_dims_like(n, &v->shape);
        v->shape.dims = same ? same : fp_intern_dims(p->m, v->shape.dims, v->shape.rank);
        const fp_shape *elems = fp_value_elems(v);
        int32_t n_elems = fp_value_n_elems(v);
        if (!elems || n_elems < 0)
            continue;
        size_t n = (size_t)MAX(n_elems, 1);                  /* as seq_set allocates them */
        fp_shape *e = fp_arena_calloc(p->tmp, n, sizeof *e); /* padding zeroed */
        for (int32_t i = 0; i < n_elems; i++) {
            e[i].rank = elems[i].rank;
            e[i].dims = fp_intern_dims(p->m, elems[i].dims, elems[i].rank);
        }
        fp_value_ext_get(v)->elems = (fp_shape *)fp_intern_blob(p->m, e, sizeof *e * n);
    }
}

static bool infer_graph(pass *p, fp_graph *g)
{
    uint32_t count = 0;
    fp_node *const *order = fp_graph_order(g, &count, p->error);
    if (!order)
        return false;
    for (uint32_t i = 0; i < count; i++) {
        fp_node *n = order[i];
        fp_nodes_prefetch(order, count, i);
        sh_ctx c =
            {.m = p->m, .n = n, .opset = n->opset, .diag = p->diag, .error = p->error, .tmp = p->tmp, .ge = p->ge};
        if (!p->attrs_checked && !sh_check_attrs(&c))
            return false;
        bool ok = fp_op_has(n->op, FP_OPF_CTRL) ? infer_ctrl(p, n) : infer_node(p, n);
        intern_outputs(p, n);   /* on an error too: the model stays valid */
        fp_arena_reset(p->tmp); /* nothing of n's inference is referenced any more */
        if (!ok)
            return false;
    }
    return true;
}

bool fp_pass_shapes(fp_model *m, const fp_shape_opts *opts, fp_diag *diag, GError **error)
{
    pass p = {.m = m,
              .opts = opts,
              .diag = diag,
              .error = error,
              .tmp = fp_arena_new(),
              .ge = g_str_has_prefix(m->format, "ge"),
              .memo = fp_fold_memo_new(),
              .attrs_checked = opts && opts->attrs_checked};
    for (guint i = 0; i < m->graphs->len; i++)
        reset_graph(m, m->graphs->pdata[i]);
    bool ok = bind_inputs(&p, m->main) && infer_graph(&p, m->main);
    fp_arena_free(p.tmp);
    fp_fold_memo_free(p.memo);
    return ok;
}
