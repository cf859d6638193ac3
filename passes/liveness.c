/* liveness.c - activation buffers of a graph, their aliases and lifetimes over an order.
 *
 * Rules (docs/memory.md): a view (FP_OPF_VIEW) shares its input's buffer; an in-place op
 * (FP_OPF_INPLACE) writes its output over input 0 when that input dies at the op and the sizes
 * match (ONNX Runtime's rule); graph inputs live from step 0 and outputs to the end, and neither
 * is ever taken over; initializers, constants and folded values are weights, not activations; a
 * value internal to a fused group never materializes; a value of unknown size counts as 0 bytes.
 */
#include "liveness.h"

#include <string.h>

void fp_memgraph_clear(fp_memgraph *mg)
{
    g_free(mg->pred_start);
    g_free(mg->preds);
    g_free(mg->def_start);
    g_free(mg->defs);
    g_free(mg->use_start);
    g_free(mg->uses);
    g_free(mg->workspace);
    g_free(mg->inplace_in);
    g_free(mg->inplace_out);
    g_free(mg->bytes);
    g_free(mg->flags);
    g_free(mg->producer);
    g_free(mg->reader_start);
    g_free(mg->readers);
    memset(mg, 0, sizeof *mg);
}

void fp_memgraph_index_readers(fp_memgraph *mg)
{
    g_assert(mg->readers == NULL);
    mg->reader_start = g_new0(uint32_t, mg->n_bufs + 1);
    for (uint32_t v = 0; v < mg->n_nodes; v++)
        for (uint32_t k = mg->use_start[v]; k < mg->use_start[v + 1]; k++)
            mg->reader_start[mg->uses[k] + 1]++;
    for (uint32_t b = 0; b < mg->n_bufs; b++)
        mg->reader_start[b + 1] += mg->reader_start[b];
    mg->readers = g_new(uint32_t, mg->reader_start[mg->n_bufs] + 1);
    uint32_t *fill = g_memdup2(mg->reader_start, (mg->n_bufs + 1) * sizeof(uint32_t));
    for (uint32_t v = 0; v < mg->n_nodes; v++)
        for (uint32_t k = mg->use_start[v]; k < mg->use_start[v + 1]; k++)
            mg->readers[fill[mg->uses[k]]++] = v;
    g_free(fill);
}

bool fp_memgraph_order_valid(const fp_memgraph *mg, const uint32_t *order)
{
    uint32_t *pos = g_new(uint32_t, mg->n_nodes + 1);
    memset(pos, 0xff, (mg->n_nodes + 1) * sizeof *pos);
    bool ok = true;
    for (uint32_t t = 0; t < mg->n_nodes && ok; t++) {
        ok = order[t] < mg->n_nodes && pos[order[t]] == UINT32_MAX;
        if (ok)
            pos[order[t]] = t;
    }
    for (uint32_t v = 0; v < mg->n_nodes && ok; v++)
        for (uint32_t k = mg->pred_start[v]; k < mg->pred_start[v + 1] && ok; k++)
            ok = pos[mg->preds[k]] < pos[v];
    g_free(pos);
    return ok;
}

uint32_t fp_memgraph_lifetimes(const fp_memgraph *mg, const uint32_t *order, fp_membuf *out, uint32_t *slot)
{
    uint32_t n = mg->n_nodes, T = MAX(n, 1);
    uint32_t *pos = g_new(uint32_t, n + 1);
    for (uint32_t t = 0; t < n; t++)
        pos[order[t]] = t;
    uint32_t *own_last = g_new(uint32_t, mg->n_bufs + 1);
    uint32_t *sl = slot ? slot : g_new(uint32_t, mg->n_bufs + 1);
    for (uint32_t b = 0; b < mg->n_bufs; b++) {
        uint32_t first = mg->producer[b] >= 0 ? pos[mg->producer[b]] : 0, last = first;
        for (uint32_t k = mg->reader_start[b]; k < mg->reader_start[b + 1]; k++)
            last = MAX(last, pos[mg->readers[k]]);
        if (mg->flags[b] & FP_BUF_OUTPUT)
            last = T - 1;
        out[b] = (fp_membuf){mg->bytes[b], first, last};
        own_last[b] = last;
        sl[b] = b;
    }
    uint32_t merges = 0;
    for (uint32_t t = 0; t < n; t++) {
        uint32_t v = order[t];
        int32_t a = mg->inplace_in[v], o = mg->inplace_out[v];
        if (a < 0 || o < 0 || own_last[a] != t)
            continue;
        uint32_t root = sl[a];
        out[root].last = MAX(out[root].last, out[o].last);
        out[o].size = 0;
        sl[o] = root;
        merges++;
    }
    for (uint32_t v = 0; v < n; v++)
        out[mg->n_bufs + v] = (fp_membuf){mg->workspace[v], pos[v], pos[v]};
    if (!slot)
        g_free(sl);
    g_free(own_last);
    g_free(pos);
    return merges;
}

bool fp_memgraph_load(const fp_memgraph *mg, const uint32_t *order, uint64_t align, uint64_t *load,
                      uint32_t *peak_step, GError **error)
{
    size_t nb = (size_t)mg->n_bufs + mg->n_nodes;
    fp_membuf *bufs = g_new(fp_membuf, nb + 1);
    fp_memgraph_lifetimes(mg, order, bufs, NULL);
    bool ok = fp_memplan_load(bufs, nb, align, load, peak_step, error);
    g_free(bufs);
    return ok;
}

/* ---------------------------------------------------------------- from the IR */

typedef enum {
    V_NONE,   /* no buffer here: removed producer, unresolved, or a view of a weight/outer value */
    V_WEIGHT, /* initializer, constant, folded value */
    V_FUSED,  /* internal to a fused group */
    V_ACT,    /* an activation with a buffer */
} value_class;

static bool is_free(const fp_node *n) { return (n->flags & FP_NODE_FOLDED) || n->op == FP_OP_CONSTANT; }

/* The node of g whose subtree contains n (n itself when n is in g), or NULL. */
static const fp_node *owner_in(const fp_graph *g, const fp_node *n)
{
    while (n && n->graph != g)
        n = n->graph->owner;
    return n;
}

/* Bytes of a tensor value with known dtype and shape. */
static bool value_bytes(const fp_value *v, uint64_t *bytes)
{
    uint64_t n;
    if (v->type != FP_TYPE_TENSOR || !fp_shape_numel(&v->shape, &n))
        return false;
    return fp_dtype_bytes(v->dtype, n, bytes);
}

/* Producer and every consumer in the same nonzero fusion group, and not a graph output. */
static bool fused_internal(const fp_graph *g, const fp_value *v)
{
    if (!v->producer || !v->producer->group || v->is_output)
        return false;
    for (uint32_t u = 0; u < v->n_uses; u++) {
        const fp_node *c = owner_in(g, v->uses[u].node);
        if (c && c->group != v->producer->group)
            return false;
    }
    return true;
}

typedef struct {
    const fp_graph *g;
    fp_liveness *lv;
    fp_node **topo;
    uint32_t n_topo;
    int32_t *node_idx; /* per IR node id: memgraph index, -1 for free/removed */
    value_class *cls;  /* per value id */
    uint32_t *uf;      /* per value id: union-find parent (views) */
    GArray **eff;      /* per IR node id of free nodes: memgraph nodes it depends on */
} builder;

static uint32_t uf_find(uint32_t *uf, uint32_t x)
{
    while (uf[x] != x) {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    return x;
}

static void classify_values(builder *B)
{
    const fp_graph *g = B->g;
    for (guint i = 0; i < g->values->len; i++) {
        const fp_value *v = g_ptr_array_index(g->values, i);
        value_class c = V_ACT;
        if (v->kind == FP_VALUE_INITIALIZER || v->kind == FP_VALUE_CONSTANT)
            c = V_WEIGHT;
        else if (v->producer && (v->producer->flags & FP_NODE_REMOVED))
            c = V_NONE;
        else if (v->producer && is_free(v->producer))
            c = V_WEIGHT;
        else if (!v->producer && v->kind != FP_VALUE_INPUT)
            c = V_NONE;
        else if (fused_internal(g, v))
            c = V_FUSED;
        B->cls[v->id] = c;
        B->uf[v->id] = v->id;
    }
    /* views, in topological order so that a view's input is settled before its output */
    for (uint32_t t = 0; t < B->n_topo; t++) {
        const fp_node *n = B->topo[t];
        if (is_free(n) || !fp_op_has(n->op, FP_OPF_VIEW) || !n->n_inputs || !n->n_outputs)
            continue;
        const fp_value *in = n->inputs[0], *out = n->outputs[0];
        if (!in || !out || B->cls[out->id] != V_ACT)
            continue;
        if (in->graph != g || B->cls[in->id] == V_WEIGHT || B->cls[in->id] == V_NONE) {
            B->cls[out->id] = V_NONE; /* aliases memory this graph does not plan */
            continue;
        }
        if (B->cls[in->id] == V_ACT) {
            B->uf[out->id] = uf_find(B->uf, in->id);
            B->lv->n_views++;
        }
    }
}

/* The weight values this graph reads at run time: initializers, Constant outputs, and folded
 * values read by a node that is not folded (lv->weights). */
static void collect_weights(builder *B)
{
    const fp_graph *g = B->g;
    fp_liveness *lv = B->lv;
    lv->weights = g_new(const fp_value *, g->values->len + 1);
    for (guint i = 0; i < g->values->len; i++) {
        const fp_value *v = g_ptr_array_index(g->values, i);
        if (B->cls[v->id] != V_WEIGHT)
            continue;
        bool needed = v->kind == FP_VALUE_INITIALIZER || v->kind == FP_VALUE_CONSTANT || v->is_output;
        for (uint32_t u = 0; u < v->n_uses && !needed; u++) {
            const fp_node *c = owner_in(g, v->uses[u].node);
            needed = c && !is_free(c);
        }
        if (needed)
            lv->weights[lv->n_weights++] = v;
    }
}

/* lv->weight_bytes from the current sizes of lv->weights (UINT64_MAX on overflow). */
static void sum_weights(fp_liveness *lv)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < lv->n_weights; i++) {
        const fp_value *v = lv->weights[i];
        uint64_t b = 0;
        if (v->tensor && v->tensor->nbytes)
            b = v->tensor->nbytes;
        else if (!value_bytes(v, &b))
            b = 0;
        if (!g_uint64_checked_add(&total, total, b))
            total = UINT64_MAX;
    }
    lv->weight_bytes = total;
}

/* Buffer sizes from the current shapes: per buffer the largest of its values, FP_BUF_UNKNOWN when
 * none has a known size (one finding in diag per graph), n_unknown. */
static void size_buffers(fp_liveness *lv, fp_diag *diag)
{
    const fp_graph *g = lv->graph;
    fp_memgraph *mg = &lv->mg;
    uint8_t *unknown = g_new0(uint8_t, mg->n_bufs + 1);
    memset(mg->bytes, 0, (mg->n_bufs + 1) * sizeof *mg->bytes);
    lv->n_unknown = 0;
    for (guint i = 0; i < g->values->len; i++) {
        const fp_value *v = g_ptr_array_index(g->values, i);
        int32_t b = lv->value_buf[v->id];
        if (b < 0)
            continue;
        uint64_t bytes;
        if (value_bytes(v, &bytes))
            mg->bytes[b] = MAX(mg->bytes[b], bytes);
        else
            unknown[b] = 1;
    }
    GString *names = NULL;
    const char *first_node = NULL;
    for (uint32_t b = 0; b < mg->n_bufs; b++) {
        mg->flags[b] &= ~(uint32_t)FP_BUF_UNKNOWN;
        if (!unknown[b] || mg->bytes[b])
            continue;
        mg->flags[b] |= FP_BUF_UNKNOWN;
        if (lv->n_unknown++ < 5) {
            if (!names) {
                names = g_string_new(NULL);
                first_node = lv->buf_value[b]->producer ? lv->buf_value[b]->producer->name : NULL;
            }
            g_string_append_printf(names, "%s'%s'", names->len ? ", " : "", lv->buf_value[b]->name);
        }
    }
    if (lv->n_unknown)
        fp_diag_add(diag, FP_DIAG_WARNING, "memory", "memory-unknown-size", first_node,
                    "graph '%s': %u activation value%s of unknown size counted as 0 bytes: %s%s", g->name,
                    lv->n_unknown, lv->n_unknown == 1 ? "" : "s", names->str, lv->n_unknown > 5 ? ", ..." : "");
    if (names)
        g_string_free(names, TRUE);
    g_free(unknown);
}

/* Buffers: one per alias-set root among activations; sizes, flags, producers. */
static void make_buffers(builder *B)
{
    const fp_graph *g = B->g;
    fp_liveness *lv = B->lv;
    fp_memgraph *mg = &lv->mg;
    uint32_t nv = g->values->len;
    lv->value_buf = g_new(int32_t, nv + 1);
    memset(lv->value_buf, 0xff, (nv + 1) * sizeof(int32_t));
    /* roots first, in topological order of definition: inputs, then node outputs */
    GPtrArray *roots = g_ptr_array_new();
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_value *v = g_ptr_array_index(g->inputs, i);
        if (B->cls[v->id] == V_ACT && uf_find(B->uf, v->id) == v->id && lv->value_buf[v->id] < 0) {
            lv->value_buf[v->id] = (int32_t)roots->len;
            g_ptr_array_add(roots, (gpointer)v);
        }
    }
    for (uint32_t t = 0; t < B->n_topo; t++)
        for (uint32_t k = 0; k < B->topo[t]->n_outputs; k++) {
            const fp_value *v = B->topo[t]->outputs[k];
            if (v && v->graph == g && B->cls[v->id] == V_ACT && uf_find(B->uf, v->id) == v->id &&
                lv->value_buf[v->id] < 0) {
                lv->value_buf[v->id] = (int32_t)roots->len;
                g_ptr_array_add(roots, (gpointer)v);
            }
        }
    mg->n_bufs = roots->len;
    mg->bytes = g_new0(uint64_t, mg->n_bufs + 1);
    mg->flags = g_new0(uint32_t, mg->n_bufs + 1);
    mg->producer = g_new(int32_t, mg->n_bufs + 1);
    lv->buf_value = g_new(const fp_value *, mg->n_bufs + 1);
    lv->buf_aliases = g_new0(uint32_t, mg->n_bufs + 1);
    for (uint32_t b = 0; b < mg->n_bufs; b++) {
        const fp_value *v = g_ptr_array_index(roots, b);
        lv->buf_value[b] = v;
        mg->producer[b] = v->producer ? B->node_idx[v->producer->id] : -1;
    }
    for (guint i = 0; i < nv; i++) {
        const fp_value *v = g_ptr_array_index(g->values, i);
        if (B->cls[v->id] != V_ACT)
            continue;
        int32_t b = lv->value_buf[uf_find(B->uf, v->id)];
        if (b < 0)
            continue; /* an activation no node defines here (cannot happen in a verified graph) */
        lv->value_buf[v->id] = b;
        lv->buf_aliases[b]++;
        if (v->kind == FP_VALUE_INPUT)
            mg->flags[b] |= FP_BUF_INPUT;
        if (v->is_output)
            mg->flags[b] |= FP_BUF_OUTPUT;
    }
    g_ptr_array_free(roots, TRUE);
}

/* Adds to `out` the memgraph nodes that IR node p stands for: itself, or for a free node the
 * memgraph nodes it depends on. mark[] (per memgraph node) deduplicates against stamp. */
static void add_dep(builder *B, const fp_node *p, GArray *out, uint32_t *mark, uint32_t stamp)
{
    if (!p || p->graph != B->g || (p->flags & FP_NODE_REMOVED))
        return;
    int32_t i = B->node_idx[p->id];
    if (i >= 0) {
        if (mark[i] != stamp) {
            mark[i] = stamp;
            g_array_append_val(out, i);
        }
        return;
    }
    GArray *e = B->eff[p->id];
    for (guint k = 0; e && k < e->len; k++) {
        uint32_t j = g_array_index(e, uint32_t, k);
        if (mark[j] != stamp) {
            mark[j] = stamp;
            g_array_append_val(out, j);
        }
    }
}

/* Every node n waits for: producers of its inputs and implicit inputs, and control predecessors. */
static void node_deps(builder *B, const fp_node *n, GArray *out, uint32_t *mark, uint32_t stamp)
{
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k])
            add_dep(B, n->inputs[k]->producer, out, mark, stamp);
    for (uint32_t k = 0; k < n->n_implicit; k++)
        add_dep(B, n->implicit[k]->producer, out, mark, stamp);
    for (uint32_t k = 0; k < n->n_ctrl; k++)
        add_dep(B, n->ctrl[k], out, mark, stamp);
}

/* mg's in-place pairs from the candidates (lv->inplace_a/o) under the current sizes: the two buffers
 * have the same known nonzero size and neither holds a graph input or output. */
static void apply_inplace(fp_liveness *lv)
{
    fp_memgraph *mg = &lv->mg;
    const uint32_t never = FP_BUF_INPUT | FP_BUF_OUTPUT | FP_BUF_UNKNOWN;
    for (uint32_t v = 0; v < mg->n_nodes; v++) {
        int32_t a = lv->inplace_a[v], o = lv->inplace_o[v];
        bool ok = a >= 0 && mg->bytes[a] && mg->bytes[a] == mg->bytes[o] && !(mg->flags[a] & never) &&
                  !(mg->flags[o] & never);
        mg->inplace_in[v] = ok ? a : -1;
        mg->inplace_out[v] = ok ? o : -1;
    }
}

static void make_nodes(builder *B, const uint64_t *workspace)
{
    fp_liveness *lv = B->lv;
    fp_memgraph *mg = &lv->mg;
    uint32_t n = mg->n_nodes;
    uint32_t *mark = g_new0(uint32_t, n + 1);
    uint32_t stamp = 0;
    GArray *preds = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GArray *uses = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    mg->pred_start = g_new0(uint32_t, n + 1);
    mg->use_start = g_new0(uint32_t, n + 1);
    mg->workspace = g_new0(uint64_t, n + 1);
    mg->inplace_in = g_new(int32_t, n + 1);
    mg->inplace_out = g_new(int32_t, n + 1);
    lv->inplace_a = g_new(int32_t, n + 1);
    lv->inplace_o = g_new(int32_t, n + 1);
    /* free nodes first carry their dependencies (topological order: preds settled) */
    for (uint32_t t = 0; t < B->n_topo; t++) {
        const fp_node *f = B->topo[t];
        if (B->node_idx[f->id] >= 0)
            continue;
        B->eff[f->id] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        node_deps(B, f, B->eff[f->id], mark, ++stamp);
    }
    uint32_t *umark = g_new0(uint32_t, mg->n_bufs + 1);
    for (uint32_t v = 0; v < n; v++) {
        const fp_node *nd = lv->nodes[v];
        node_deps(B, nd, preds, mark, ++stamp);
        mg->pred_start[v + 1] = preds->len;
        /* buffers read: inputs, implicit inputs, and values read by nodes of its subgraphs */
        for (uint32_t pass = 0; pass < 2; pass++) {
            uint32_t cnt = pass ? nd->n_implicit : nd->n_inputs;
            for (uint32_t k = 0; k < cnt; k++) {
                const fp_value *x = pass ? nd->implicit[k] : nd->inputs[k];
                if (!x || x->graph != B->g || lv->value_buf[x->id] < 0)
                    continue;
                uint32_t b = (uint32_t)lv->value_buf[x->id];
                if (umark[b] != v + 1) {
                    umark[b] = v + 1;
                    g_array_append_val(uses, b);
                }
            }
        }
        mg->use_start[v + 1] = uses->len;
        mg->workspace[v] = workspace ? workspace[nd->id] : 0;
        lv->inplace_a[v] = lv->inplace_o[v] = -1;
        if (fp_op_has(nd->op, FP_OPF_INPLACE) && nd->n_inputs && nd->n_outputs && nd->inputs[0] &&
            nd->outputs[0] && nd->inputs[0]->graph == B->g) {
            int32_t a = lv->value_buf[nd->inputs[0]->id], o = lv->value_buf[nd->outputs[0]->id];
            if (a >= 0 && o >= 0 && a != o && mg->producer[o] == (int32_t)v) {
                lv->inplace_a[v] = a;
                lv->inplace_o[v] = o;
            }
        }
    }
    apply_inplace(lv);
    mg->preds = (uint32_t *)g_array_free(preds, FALSE);
    mg->uses = (uint32_t *)g_array_free(uses, FALSE);
    /* definitions: each buffer at its producer */
    mg->def_start = g_new0(uint32_t, n + 1);
    for (uint32_t b = 0; b < mg->n_bufs; b++)
        if (mg->producer[b] >= 0)
            mg->def_start[mg->producer[b] + 1]++;
    for (uint32_t v = 0; v < n; v++)
        mg->def_start[v + 1] += mg->def_start[v];
    mg->defs = g_new(uint32_t, mg->def_start[n] + 1);
    uint32_t *fill = g_memdup2(mg->def_start, (n + 1) * sizeof(uint32_t));
    for (uint32_t b = 0; b < mg->n_bufs; b++)
        if (mg->producer[b] >= 0)
            mg->defs[fill[mg->producer[b]]++] = b;
    g_free(fill);
    g_free(umark);
    g_free(mark);
    fp_memgraph_index_readers(mg);
}

/* What fp_liveness_build's structure depends on per IR node: removed (0), free (1), scheduled (2). */
static uint8_t node_state(const fp_node *n) { return (n->flags & FP_NODE_REMOVED) ? 0 : is_free(n) ? 1 : 2; }

/* fp_liveness_build, or with with_nodes false its buffers only (see fp_liveness_build_buffers). */
static fp_liveness *build(const fp_graph *g, const uint64_t *workspace, bool with_nodes, fp_diag *diag,
                          GError **error)
{
    builder B = {.g = g};
    B.topo = fp_graph_topo(g, &B.n_topo, error);
    if (!B.topo)
        return NULL;
    fp_liveness *lv = g_new0(fp_liveness, 1);
    lv->graph = g;
    B.lv = lv;
    uint32_t nn = g->nodes->len, nv = g->values->len;
    B.node_idx = g_new(int32_t, nn + 1);
    memset(B.node_idx, 0xff, (nn + 1) * sizeof(int32_t));
    lv->nodes = g_new(fp_node *, B.n_topo + 1);
    lv->free_nodes = g_new(fp_node *, B.n_topo + 1);
    lv->n_graph_nodes = nn;
    lv->n_graph_values = nv;
    lv->node_state = g_new(uint8_t, nn + 1);
    for (uint32_t i = 0; i < nn; i++)
        lv->node_state[i] = node_state(g_ptr_array_index(g->nodes, i));
    for (uint32_t t = 0; t < B.n_topo; t++) {
        fp_node *n = B.topo[t];
        if (is_free(n)) {
            lv->free_nodes[lv->n_free++] = n;
        } else {
            B.node_idx[n->id] = (int32_t)lv->mg.n_nodes;
            lv->nodes[lv->mg.n_nodes++] = n;
        }
    }
    B.cls = g_new(value_class, nv + 1);
    B.uf = g_new(uint32_t, nv + 1);
    B.eff = with_nodes ? g_new0(GArray *, nn + 1) : NULL;
    classify_values(&B);
    for (guint i = 0; i < nv; i++)
        if (B.cls[i] == V_FUSED)
            lv->n_fused++;
    collect_weights(&B);
    sum_weights(lv);
    make_buffers(&B);
    size_buffers(lv, diag);
    if (with_nodes)
        make_nodes(&B, workspace);
    for (uint32_t i = 0; with_nodes && i < nn; i++)
        if (B.eff[i])
            g_array_free(B.eff[i], TRUE);
    g_free(B.eff);
    g_free(B.uf);
    g_free(B.cls);
    g_free(B.node_idx);
    g_free(B.topo);
    return lv;
}

fp_liveness *fp_liveness_build(const fp_graph *g, const uint64_t *workspace, fp_diag *diag, GError **error)
{
    return build(g, workspace, true, diag, error);
}

fp_liveness *fp_liveness_build_buffers(const fp_graph *g, fp_diag *diag, GError **error)
{
    return build(g, NULL, false, diag, error);
}

bool fp_liveness_resize(fp_liveness *lv, const uint64_t *workspace, fp_diag *diag)
{
    const fp_graph *g = lv->graph;
    g_assert(lv->inplace_a); /* built by fp_liveness_build */
    if (g->nodes->len != lv->n_graph_nodes || g->values->len != lv->n_graph_values)
        return false;
    for (uint32_t i = 0; i < lv->n_graph_nodes; i++)
        if (node_state(g_ptr_array_index(g->nodes, i)) != lv->node_state[i])
            return false;
    sum_weights(lv);
    size_buffers(lv, diag);
    apply_inplace(lv);
    for (uint32_t v = 0; v < lv->mg.n_nodes; v++)
        lv->mg.workspace[v] = workspace ? workspace[lv->nodes[v]->id] : 0;
    return true;
}

void fp_liveness_free(fp_liveness *lv)
{
    if (!lv)
        return;
    fp_memgraph_clear(&lv->mg);
    g_free(lv->nodes);
    g_free(lv->free_nodes);
    g_free(lv->buf_value);
    g_free(lv->buf_aliases);
    g_free(lv->value_buf);
    g_free(lv->weights);
    g_free(lv->inplace_a);
    g_free(lv->inplace_o);
    g_free(lv->node_state);
    g_free(lv);
}

/* Step after which free node f may run: the latest position among what it depends on (-1: none).
 * key[] holds the keys of free nodes already handled, by IR node id. */
static int64_t free_key(const fp_liveness *lv, const fp_node *f, const uint32_t *pos, const int32_t *idx,
                        const int64_t *key)
{
    int64_t k = -1;
    uint32_t total = f->n_inputs + f->n_implicit + f->n_ctrl;
    for (uint32_t i = 0; i < total; i++) {
        const fp_node *p;
        if (i < f->n_inputs)
            p = f->inputs[i] ? f->inputs[i]->producer : NULL;
        else if (i < f->n_inputs + f->n_implicit)
            p = f->implicit[i - f->n_inputs]->producer;
        else
            p = f->ctrl[i - f->n_inputs - f->n_implicit];
        if (!p || p->graph != lv->graph || (p->flags & FP_NODE_REMOVED))
            continue;
        k = MAX(k, idx[p->id] >= 0 ? (int64_t)pos[idx[p->id]] : key[p->id]);
    }
    return k;
}

void fp_liveness_full_order(const fp_liveness *lv, const uint32_t *order, fp_node **full, uint32_t *step_of)
{
    uint32_t n = lv->mg.n_nodes, nn = lv->graph->nodes->len;
    uint32_t *pos = g_new(uint32_t, n + 1);
    for (uint32_t t = 0; t < n; t++)
        pos[order[t]] = t;
    int32_t *idx = g_new(int32_t, nn + 1);
    memset(idx, 0xff, (nn + 1) * sizeof(int32_t));
    for (uint32_t v = 0; v < n; v++)
        idx[lv->nodes[v]->id] = (int32_t)v;
    int64_t *key = g_new(int64_t, nn + 1);
    /* bucket free nodes by key (counting sort keeps their topological order) */
    uint32_t *cnt = g_new0(uint32_t, n + 2);
    for (uint32_t i = 0; i < lv->n_free; i++) {
        const fp_node *f = lv->free_nodes[i];
        key[f->id] = free_key(lv, f, pos, idx, key);
        cnt[key[f->id] + 1]++;
    }
    uint32_t k = 0, fi = 0;
    uint32_t *start = g_new0(uint32_t, n + 2);
    for (uint32_t b = 1; b < n + 2; b++)
        start[b] = start[b - 1] + cnt[b - 1];
    fp_node **sorted = g_new(fp_node *, lv->n_free + 1);
    for (uint32_t i = 0; i < lv->n_free; i++) {
        fp_node *f = lv->free_nodes[i];
        sorted[start[key[f->id] + 1]++] = f;
    }
    for (int64_t t = -1; t < (int64_t)n; t++) {
        if (t >= 0) {
            if (step_of)
                step_of[t] = k;
            full[k++] = lv->nodes[order[t]];
        }
        for (uint32_t c = 0; c < cnt[t + 1]; c++)
            full[k++] = sorted[fi++];
    }
    g_assert(k == n + lv->n_free);
    g_free(sorted);
    g_free(start);
    g_free(cnt);
    g_free(key);
    g_free(idx);
    g_free(pos);
}
