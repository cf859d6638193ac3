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

#include "ir/par.h"

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
    return fp_memgraph_lifetimes_n(mg, order, true, out, slot);
}

uint32_t fp_memgraph_lifetimes_n(const fp_memgraph *mg, const uint32_t *order, bool workspaces, fp_membuf *out,
                                 uint32_t *slot)
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
    for (uint32_t v = 0; v < n && workspaces; v++)
        out[mg->n_bufs + v] = (fp_membuf){mg->workspace[v], pos[v], pos[v]};
    if (!slot)
        g_free(sl);
    g_free(own_last);
    g_free(pos);
    return merges;
}

bool fp_memgraph_has_workspace(const fp_memgraph *mg)
{
    for (uint32_t v = 0; v < mg->n_nodes; v++)
        if (mg->workspace[v])
            return true;
    return false;
}

/* fp_memplan_load of fp_memgraph_lifetimes' entries, without them: the same lifetimes and in-place
 * merges (buffer b lives [first[b], last[b]], at size 0 when merged), their rounded sizes summed in
 * the entries' order (the same overflow error), LOAD by a difference array over the steps. The
 * steps are not renumbered as fp_memplan_load may do: that keeps their order, so LOAD and the
 * first step reaching it are the same. */
bool fp_memgraph_load(const fp_memgraph *mg, const uint32_t *order, uint64_t align, uint64_t *load, uint32_t *peak_step,
                      GError **error)
{
    uint32_t n = mg->n_nodes, nb = mg->n_bufs, T = MAX(n, 1);
    uint32_t *pos = g_new(uint32_t, n + 1);
    for (uint32_t t = 0; t < n; t++)
        pos[order[t]] = t;
    uint32_t *first = g_new(uint32_t, nb + 1), *last = g_new(uint32_t, nb + 1);
    uint32_t *own_last = g_new(uint32_t, nb + 1), *sl = g_new(uint32_t, nb + 1);
    uint8_t *merged = g_new0(uint8_t, nb + 1);
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t f = mg->producer[b] >= 0 ? pos[mg->producer[b]] : 0, l = f;
        for (uint32_t k = mg->reader_start[b]; k < mg->reader_start[b + 1]; k++)
            l = MAX(l, pos[mg->readers[k]]);
        if (mg->flags[b] & FP_BUF_OUTPUT)
            l = T - 1;
        first[b] = f;
        last[b] = own_last[b] = l;
        sl[b] = b;
    }
    for (uint32_t t = 0; t < n; t++) {
        uint32_t v = order[t];
        int32_t a = mg->inplace_in[v], o = mg->inplace_out[v];
        if (a < 0 || o < 0 || own_last[a] != t)
            continue;
        last[sl[a]] = MAX(last[sl[a]], last[o]);
        merged[o] = 1;
        sl[o] = sl[a];
    }
    uint64_t *in = g_new0(uint64_t, (size_t)T + 1), *out = g_new0(uint64_t, (size_t)T + 1);
    fp_memplan_naive sum = {0};
    bool ok = true;
    for (uint32_t e = 0; e < nb + n && ok; e++) {
        bool buf = e < nb;
        uint64_t size = buf ? (merged[e] ? 0 : mg->bytes[e]) : mg->workspace[e - nb], at = sum.total;
        ok = fp_memplan_naive_add(&sum, size, align, NULL, error);
        if (!ok || !size)
            continue;
        uint32_t f = buf ? first[e] : pos[e - nb], l = buf ? last[e] : pos[e - nb];
        in[f] += sum.total - at; /* the rounded size; no sum overflows when the total does not */
        out[l + 1] += sum.total - at;
    }
    uint64_t cur = 0, best = 0;
    uint32_t peak = 0;
    for (uint32_t t = 0; t < T && ok; t++) {
        cur = cur + in[t] - out[t];
        if (cur > best) {
            best = cur;
            peak = t;
        }
    }
    if (ok) {
        *load = best;
        if (peak_step)
            *peak_step = peak;
    }
    g_free(in);
    g_free(out);
    g_free(merged);
    g_free(sl);
    g_free(own_last);
    g_free(last);
    g_free(first);
    g_free(pos);
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

/* The channel block of a 4-D layout that pads channels: C0 of GE's NC1HWC0 (passes/ge_format.c: 32
 * for a 1-byte dtype, else 16), the block of ONNX Runtime's NCHWc ("NCHW16c", passes/nchwc.c); 0
 * for any other layout. */
static uint64_t channel_block(const char *layout, fp_dtype dt)
{
    if (!layout)
        return 0;
    if (strcmp(layout, "NC1HWC0") == 0)
        return fp_dtype_bits(dt) == 8 ? 32 : 16;
    char *end = NULL;
    uint64_t block = g_str_has_prefix(layout, "NCHW") ? g_ascii_strtoull(layout + 4, &end, 10) : 0;
    return end && end != layout + 4 && strcmp(end, "c") == 0 ? block : 0;
}

/* Bytes of a tensor value with known dtype and shape (a float32 one at float_as, unless that is
 * FP_DT_UNDEFINED). A 4-D value whose layout blocks its channels (channel_block) takes them padded
 * to the block. */
static bool value_bytes(const fp_value *v, fp_dtype float_as, uint64_t *bytes)
{
    uint64_t n;
    if (v->type != FP_TYPE_TENSOR || !fp_shape_numel(&v->shape, &n))
        return false;
    fp_dtype dt = float_as != FP_DT_UNDEFINED && v->dtype == FP_DT_FLOAT ? float_as : v->dtype;
    uint64_t c0 = channel_block(fp_value_layout(v), dt);
    if (c0 > 1 && v->shape.rank == 4 && v->shape.dims[1].value > 0) {
        uint64_t c = (uint64_t)v->shape.dims[1].value;
        n = n / c * ((c + c0 - 1) / c0 * c0);
    }
    return fp_dtype_bytes(dt, n, bytes);
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

/* Prefetching for the walks over g->values: the values and their producers are scattered over the
 * model's arena, each a few cache lines, and a walk does little else than read them, so it waits on
 * memory unless the next ones are on their way: value i + PF_AHEAD, then the producer of value
 * i + PF_AHEAD / 2 (by then in cache). */
enum { PF_AHEAD = 16 };

static inline void prefetch_lines(const void *p, size_t bytes)
{
    for (size_t o = 0; o < bytes; o += 64)
        __builtin_prefetch((const char *)p + o);
}

/* The lines of a node holding op, flags and id. */
static inline void prefetch_node(const fp_node *n)
{
    __builtin_prefetch(&n->op);
    __builtin_prefetch(&n->flags);
}

/* For the walks over the nodes in topological order: node t + PF_AHEAD, the array of inputs (or
 * outputs) of node t + PF_AHEAD / 2, and the values in it of node t + PF_AHEAD / 4. */
static inline void prefetch_topo(fp_node *const *topo, uint32_t n, uint32_t t, bool outputs)
{
    if (t + PF_AHEAD < n) {
        const fp_node *a = topo[t + PF_AHEAD];
        __builtin_prefetch(a);
        __builtin_prefetch(&a->inputs);
        __builtin_prefetch(&a->flags);
    }
    if (t + PF_AHEAD / 2 < n) {
        const fp_node *b = topo[t + PF_AHEAD / 2];
        __builtin_prefetch(outputs ? (const void *)b->outputs : (const void *)b->inputs);
    }
    if (t + PF_AHEAD / 4 < n) {
        const fp_node *c = topo[t + PF_AHEAD / 4];
        fp_value *const *vs = outputs ? c->outputs : c->inputs;
        uint32_t m = MIN(outputs ? c->n_outputs : c->n_inputs, 4u);
        for (uint32_t k = 0; k < m; k++)
            if (vs[k])
                __builtin_prefetch(vs[k]);
    }
}

static inline void prefetch_value(const GPtrArray *values, guint i)
{
    if (i + PF_AHEAD < values->len) {
        const fp_value *v = g_ptr_array_index(values, i + PF_AHEAD);
        __builtin_prefetch(&v->kind);
        __builtin_prefetch(&v->producer);
    }
    if (i + PF_AHEAD / 2 < values->len) {
        const fp_value *w = g_ptr_array_index(values, i + PF_AHEAD / 2);
        if (w->producer) {
            __builtin_prefetch(&w->producer->op);
            __builtin_prefetch(&w->producer->flags);
            __builtin_prefetch(&w->producer->group);
        }
    }
}

/* lv->node_idx encodes, per IR node id, a memgraph node (>= 0), free node k (FREE_IDX(k)), or
 * neither (NO_IDX: removed). */
#define NO_IDX (-1)
#define FREE_IDX(k) (-2 - (int32_t)(k))
#define FREE_OF(x) ((uint32_t)(-2 - (x)))
#define NO_PROD UINT32_MAX

/* A growing array of uint32_t (doubling; most arrays are sized exactly instead). */
typedef struct {
    uint32_t *v;
    size_t len, cap;
} u32vec;

static inline void u32vec_push(u32vec *a, uint32_t x)
{
    if (a->len == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->v = g_renew(uint32_t, a->v, a->cap);
    }
    a->v[a->len++] = x;
}

/* An activation value as classify_values read it: what make_buffers needs of it, so that the
 * values are not read again. */
typedef struct {
    uint64_t bytes;
    uint32_t id;
    uint8_t known, input, output;
} act_rec;

/* Per value id (the index in g->values): class, view union-find parent, and the id of its live
 * producer in g (NO_PROD: none). The builder walks the values once and the nodes in topological
 * order twice; every other step works on these arrays. */
typedef struct {
    const fp_graph *g;
    fp_liveness *lv;
    fp_node *const *topo; /* the graph's (fp_graph_order) */
    uint32_t n_topo;
    uint8_t *cls;
    uint32_t *uf;
    uint32_t *prod;
    int32_t *dep;  /* make_nodes: per value id, lv->node_idx of its producer (prod, translated) */
    u32vec cand;   /* ids of the outputs in g of live nodes, in topological order */
    act_rec *acts; /* the activations (before views), in value order */
    size_t n_acts;
    u32vec eff;         /* make_nodes: lv->eff being filled (lv->eff_start is) */
    bool outputs_apart; /* fp_liveness_opts.outputs_apart */
} builder;

static uint32_t uf_find(uint32_t *uf, uint32_t x)
{
    while (uf[x] != x) {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    return x;
}

/* The class of value v of g: weights (initializers, constants, outputs of free nodes), values of
 * no live producer (none), values internal to a fused kernel, activations. */
static value_class class_of(const fp_graph *g, const fp_value *v)
{
    const fp_node *p = v->producer;
    if (fp_value_is_weight(v))
        return V_WEIGHT;
    if (p && (p->flags & FP_NODE_REMOVED))
        return V_NONE;
    if (p && is_free(p))
        return V_WEIGHT;
    if (!p && v->kind != FP_VALUE_INPUT)
        return V_NONE;
    return fused_internal(g, v) ? V_FUSED : V_ACT;
}

/* classify_values' work per half of the values (fp_par_halves): each value's class, union-find
 * parent and producer into B's arrays (each value's own entries), and, in value order, the
 * activations into acts[h], the weights this graph reads at run time into weights[h], the fused
 * values counted. */
typedef struct {
    const builder *B;
    act_rec *acts[2];
    size_t n_acts[2];
    const fp_value **weights[2];
    uint32_t n_weights[2], n_fused[2];
} classify_job;

static void classify_half(void *arg, int h, size_t from, size_t to)
{
    classify_job *j = arg;
    const builder *B = j->B;
    const fp_graph *g = B->g;
    for (guint i = (guint)from; i < to; i++) {
        prefetch_value(g->values, i);
        const fp_value *v = g_ptr_array_index(g->values, i);
        const fp_node *p = v->producer;
        bool live = p && !(p->flags & FP_NODE_REMOVED);
        value_class c = class_of(g, v);
        B->cls[i] = (uint8_t)c;
        B->uf[i] = i;
        B->prod[i] = live && p->graph == g ? p->id : NO_PROD;
        if (c == V_FUSED)
            j->n_fused[h]++;
        if (c == V_ACT) {
            act_rec *a = &j->acts[h][j->n_acts[h]++];
            a->id = i;
            a->known = value_bytes(v, B->lv->float_as, &a->bytes);
            a->input = v->kind == FP_VALUE_INPUT;
            a->output = v->is_output;
        }
        if (c != V_WEIGHT)
            continue;
        bool needed = fp_value_is_weight(v) || v->is_output;
        for (uint32_t u = 0; u < v->n_uses && !needed; u++) {
            const fp_node *cn = owner_in(g, v->uses[u].node);
            needed = cn && !is_free(cn);
        }
        if (needed)
            j->weights[h][j->n_weights[h]++] = v;
    }
}

/* One walk over the values: their class (views aside), producer, the fused count and the weights
 * this graph reads at run time (initializers, Constant outputs, and folded values read by a node
 * that is not folded: lv->weights, in value order). A big graph's second half of the values is
 * walked on the side thread (ir/par.h), into lists of its own appended after the first half's. */
static void classify_values(builder *B)
{
    const fp_graph *g = B->g;
    fp_liveness *lv = B->lv;
    guint n = g->values->len, half = n / 2;
    lv->weights = g_new(const fp_value *, n + 1);
    B->acts = g_new(act_rec, n + 1);
    classify_job j = {.B = B,
                      .acts = {B->acts, g_new(act_rec, n - half + 1)},
                      .weights = {lv->weights, g_new(const fp_value *, n - half + 1)}};
    fp_par_halves(n, g->nodes->len, classify_half, &j);
    memcpy(B->acts + j.n_acts[0], j.acts[1], j.n_acts[1] * sizeof *j.acts[1]);
    memcpy(lv->weights + j.n_weights[0], j.weights[1], j.n_weights[1] * sizeof *j.weights[1]);
    B->n_acts = j.n_acts[0] + j.n_acts[1];
    lv->n_weights = j.n_weights[0] + j.n_weights[1];
    lv->n_fused += j.n_fused[0] + j.n_fused[1];
    g_free(j.acts[1]);
    g_free(j.weights[1]);
}

/* One walk over the nodes in topological order: memgraph nodes and free nodes (node_idx,
 * node_state); views, in that order so that a view's input is settled before its output; and the
 * outputs of live nodes, candidates for buffers (B->cand). */
static void walk_nodes(builder *B)
{
    const fp_graph *g = B->g;
    fp_liveness *lv = B->lv;
    for (uint32_t t = 0; t < B->n_topo; t++) {
        prefetch_topo(B->topo, B->n_topo, t, true);
        fp_node *n = B->topo[t];
        bool free = is_free(n);
        if (free) {
            lv->node_idx[n->id] = FREE_IDX(lv->n_free);
            lv->node_state[n->id] = 1;
            lv->free_nodes[lv->n_free++] = n;
        } else {
            lv->node_idx[n->id] = (int32_t)lv->mg.n_nodes;
            lv->node_state[n->id] = 2;
            lv->nodes[lv->mg.n_nodes++] = n;
        }
        if (!free && fp_op_has(n->op, FP_OPF_VIEW) && n->n_inputs && n->n_outputs) {
            const fp_value *in = n->inputs[0], *out = n->outputs[0];
            if (in && out && B->cls[out->id] == V_ACT && !(B->outputs_apart && out->is_output)) {
                if (in->graph != g || B->cls[in->id] == V_WEIGHT || B->cls[in->id] == V_NONE) {
                    B->cls[out->id] = V_NONE; /* aliases memory this graph does not plan */
                } else if (B->cls[in->id] == V_ACT) {
                    B->uf[out->id] = uf_find(B->uf, in->id);
                    B->lv->n_views++;
                }
            }
        }
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            const fp_value *v = n->outputs[k];
            if (v && v->graph == g)
                u32vec_push(&B->cand, v->id);
        }
    }
}

/* lv->weight_bytes: the bytes of the weights with a tensor from the model (no pass changes those)
 * plus the current sizes of the others, lv->weights, which are lv->folded_bytes (UINT64_MAX on
 * overflow: sums that saturate, so the order of the terms does not matter). */
static void sum_weights(fp_liveness *lv)
{
    uint64_t folded = 0, total = UINT64_MAX;
    for (uint32_t i = 0; i < lv->n_weights; i++) {
        uint64_t b = 0;
        if (!value_bytes(lv->weights[i], FP_DT_UNDEFINED, &b))
            b = 0;
        if (!g_uint64_checked_add(&folded, folded, b))
            folded = UINT64_MAX;
    }
    lv->folded_bytes = folded;
    lv->weight_bytes = g_uint64_checked_add(&total, lv->weight_fixed, folded) ? total : UINT64_MAX;
}

/* Splits the weights collected by classify_values: those with a tensor from the model go into
 * weight_fixed, lv->weights keeps the others (folded values: their size follows the shapes). */
static void split_weights(fp_liveness *lv)
{
    uint64_t fixed = 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < lv->n_weights; i++) {
        if (i + PF_AHEAD < lv->n_weights)
            __builtin_prefetch(&lv->weights[i + PF_AHEAD]->tensor);
        if (i + PF_AHEAD / 2 < lv->n_weights && lv->weights[i + PF_AHEAD / 2]->tensor)
            __builtin_prefetch(lv->weights[i + PF_AHEAD / 2]->tensor);
        const fp_value *v = lv->weights[i];
        if (v->tensor && v->tensor->nbytes) {
            if (!g_uint64_checked_add(&fixed, fixed, v->tensor->nbytes))
                fixed = UINT64_MAX;
        } else {
            lv->weights[k++] = v;
        }
    }
    lv->n_weights = k;
    lv->weight_fixed = fixed;
}

/* Buffer b takes the size of value v (the largest of its values; unknown[b] when v's is unknown). */
static inline void size_value(fp_memgraph *mg, const fp_value *v, fp_dtype float_as, uint32_t b, uint8_t *unknown)
{
    uint64_t bytes;
    if (value_bytes(v, float_as, &bytes))
        mg->bytes[b] = MAX(mg->bytes[b], bytes);
    else
        unknown[b] = 1;
}

/* After size_value on every value with a buffer: FP_BUF_UNKNOWN where no value of a buffer has a
 * known size (one finding in diag per graph), n_unknown. Frees unknown. */
static void size_finish(fp_liveness *lv, uint8_t *unknown, fp_diag *diag)
{
    const fp_graph *g = lv->graph;
    fp_memgraph *mg = &lv->mg;
    GString *names = NULL;
    const char *first_node = NULL;
    lv->n_unknown = 0;
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
                    "graph '%s': %u activation buffer%s of unknown size counted as 0 bytes: %s%s", g->name,
                    lv->n_unknown, lv->n_unknown == 1 ? "" : "s", names->str, lv->n_unknown > 5 ? ", ..." : "");
    if (names)
        g_string_free(names, TRUE);
    g_free(unknown);
}

/* Buffer sizes from the current shapes: per buffer the largest of its values, FP_BUF_UNKNOWN when
 * none has a known size (one finding in diag per graph), n_unknown. Looks only at the values that
 * have a buffer. */
static void size_buffers(fp_liveness *lv, fp_diag *diag)
{
    const fp_graph *g = lv->graph;
    fp_memgraph *mg = &lv->mg;
    uint8_t *unknown = g_new0(uint8_t, mg->n_bufs + 1);
    memset(mg->bytes, 0, (mg->n_bufs + 1) * sizeof *mg->bytes);
    for (guint i = 0; i < g->values->len; i++) {
        if (i + PF_AHEAD < g->values->len && lv->value_buf[i + PF_AHEAD] >= 0)
            __builtin_prefetch(g_ptr_array_index(g->values, i + PF_AHEAD));
        int32_t b = lv->value_buf[i]; /* value ids are indexes in g->values */
        if (b >= 0)
            size_value(mg, g_ptr_array_index(g->values, i), lv->float_as, (uint32_t)b, unknown);
    }
    size_finish(lv, unknown, diag);
}

/* Buffers: one per alias-set root among activations, numbered in topological order of definition
 * (graph inputs first); producers, aliases, flags and sizes. */
static void make_buffers(builder *B, fp_diag *diag)
{
    const fp_graph *g = B->g;
    fp_liveness *lv = B->lv;
    fp_memgraph *mg = &lv->mg;
    uint32_t nv = g->values->len;
    lv->value_buf = g_new(int32_t, nv + 1);
    memset(lv->value_buf, 0xff, (nv + 1) * sizeof(int32_t));
    size_t cap = g->inputs->len + B->cand.len + 1;
    lv->buf_value = g_new(const fp_value *, cap);
    mg->producer = g_new(int32_t, cap);
    mg->n_bufs = 0;
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_value *v = g_ptr_array_index(g->inputs, i);
        if (B->cls[v->id] == V_ACT && uf_find(B->uf, v->id) == v->id && lv->value_buf[v->id] < 0) {
            lv->value_buf[v->id] = (int32_t)mg->n_bufs;
            mg->producer[mg->n_bufs] = B->prod[v->id] != NO_PROD ? MAX(lv->node_idx[B->prod[v->id]], NO_IDX) : NO_IDX;
            lv->buf_value[mg->n_bufs++] = v;
        }
    }
    for (size_t j = 0; j < B->cand.len; j++) {
        uint32_t id = B->cand.v[j];
        if (B->cls[id] == V_ACT && uf_find(B->uf, id) == id && lv->value_buf[id] < 0) {
            lv->value_buf[id] = (int32_t)mg->n_bufs;
            mg->producer[mg->n_bufs] = B->prod[id] != NO_PROD ? MAX(lv->node_idx[B->prod[id]], NO_IDX) : NO_IDX;
            lv->buf_value[mg->n_bufs++] = g_ptr_array_index(g->values, id);
        }
    }
    mg->bytes = g_new0(uint64_t, mg->n_bufs + 1);
    mg->flags = g_new0(uint32_t, mg->n_bufs + 1);
    lv->buf_aliases = g_new0(uint32_t, mg->n_bufs + 1);
    uint8_t *unknown = g_new0(uint8_t, mg->n_bufs + 1);
    for (size_t k = 0; k < B->n_acts; k++) {
        const act_rec *a = &B->acts[k];
        if (B->cls[a->id] != V_ACT) /* a view of memory this graph does not plan */
            continue;
        int32_t b = lv->value_buf[uf_find(B->uf, a->id)];
        if (b < 0)
            continue; /* an activation no node defines here (cannot happen in a verified graph) */
        lv->value_buf[a->id] = b;
        lv->buf_aliases[b]++;
        if (a->input)
            mg->flags[b] |= FP_BUF_INPUT;
        if (a->output)
            mg->flags[b] |= FP_BUF_OUTPUT;
        if (a->known)
            mg->bytes[b] = MAX(mg->bytes[b], a->bytes);
        else
            unknown[b] = 1;
    }
    size_finish(lv, unknown, diag);
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

/* Dependencies being collected for one node: memgraph nodes, each once (mark[] against stamp). */
typedef struct {
    u32vec *out;
    uint32_t *mark, stamp;
} dep_set;

static inline void dep_add(dep_set *d, uint32_t i)
{
    if (d->mark[i] != d->stamp) {
        d->mark[i] = d->stamp;
        u32vec_push(d->out, i);
    }
}

/* The memgraph nodes that IR node index x (lv->node_idx) stands for: itself, or for a free node
 * the memgraph nodes it depends on (read through B->eff, which d may be growing). */
static inline void dep_idx(const builder *B, int32_t x, dep_set *d)
{
    if (x >= 0) {
        dep_add(d, (uint32_t)x);
    } else if (x != NO_IDX) {
        uint32_t k = FREE_OF(x);
        for (uint32_t j = B->lv->eff_start[k]; j < B->lv->eff_start[k + 1]; j++)
            dep_add(d, B->eff.v[j]);
    }
}

/* IR node p, when it is a live node of g. */
static inline void dep_node(const builder *B, const fp_node *p, dep_set *d)
{
    if (p && p->graph == B->g && !(p->flags & FP_NODE_REMOVED))
        dep_idx(B, B->lv->node_idx[p->id], d);
}

/* The producer of value x. */
static inline void dep_value(const builder *B, const fp_value *x, dep_set *d)
{
    if (x->graph != B->g) /* an outer value (B->dep is per value of g): its producer as a node */
        dep_node(B, x->producer, d);
    else
        dep_idx(B, B->dep[x->id], d);
}

/* Buffer read by a memgraph node (each once: umark[] against v + 1). */
static inline void use_value(const builder *B, const fp_value *x, u32vec *uses, uint32_t *umark, uint32_t v)
{
    if (x->graph != B->g)
        return;
    int32_t b = B->lv->value_buf[x->id];
    if (b >= 0 && umark[b] != v + 1) {
        umark[b] = v + 1;
        u32vec_push(uses, (uint32_t)b);
    }
}

/* Every node waits for: producers of its inputs and implicit inputs, and control predecessors; a
 * free node stands for the memgraph nodes it depends on (lv->eff), a memgraph node also reads its
 * inputs' buffers. One walk in topological order: free nodes' dependencies are settled before
 * anything reads them. */
static void make_nodes(builder *B, const uint64_t *workspace)
{
    fp_liveness *lv = B->lv;
    fp_memgraph *mg = &lv->mg;
    uint32_t n = mg->n_nodes;
    uint32_t *mark = g_new0(uint32_t, n + 1), *umark = g_new0(uint32_t, mg->n_bufs + 1);
    u32vec preds = {g_new(uint32_t, n + 64), 0, n + 64}, uses = {g_new(uint32_t, n + 64), 0, n + 64};
    mg->pred_start = g_new(uint32_t, n + 1);
    mg->use_start = g_new(uint32_t, n + 1);
    mg->workspace = g_new(uint64_t, n + 1);
    mg->inplace_in = g_new(int32_t, n + 1);
    mg->inplace_out = g_new(int32_t, n + 1);
    lv->inplace_a = g_new(int32_t, n + 1);
    lv->inplace_o = g_new(int32_t, n + 1);
    lv->eff_start = g_new(uint32_t, lv->n_free + 1);
    mg->pred_start[0] = mg->use_start[0] = lv->eff_start[0] = 0;
    uint32_t stamp = 0;
    for (uint32_t t = 0; t < B->n_topo; t++) {
        prefetch_topo(B->topo, B->n_topo, t, false);
        const fp_node *nd = B->topo[t];
        int32_t x = lv->node_idx[nd->id];
        bool sched = x >= 0;
        dep_set d = {sched ? &preds : &B->eff, mark, ++stamp};
        uint32_t v = sched ? (uint32_t)x : 0;
        for (uint32_t k = 0; k < nd->n_inputs; k++) {
            const fp_value *in = nd->inputs[k];
            if (!in)
                continue;
            dep_value(B, in, &d);
            if (sched)
                use_value(B, in, &uses, umark, v);
        }
        for (uint32_t k = 0, ni = fp_node_n_implicit(nd); k < ni; k++) {
            dep_value(B, nd->ext->implicit[k], &d);
            if (sched)
                use_value(B, nd->ext->implicit[k], &uses, umark, v);
        }
        for (uint32_t k = 0, nc = fp_node_n_ctrl(nd); k < nc; k++)
            dep_node(B, nd->ext->ctrl[k], &d);
        if (!sched) {
            lv->eff_start[FREE_OF(x) + 1] = (uint32_t)B->eff.len;
            continue;
        }
        mg->pred_start[v + 1] = (uint32_t)preds.len;
        mg->use_start[v + 1] = (uint32_t)uses.len;
        mg->workspace[v] = workspace ? workspace[nd->id] : 0;
        lv->inplace_a[v] = lv->inplace_o[v] = -1;
        if (fp_op_has(nd->op, FP_OPF_INPLACE) && nd->n_inputs && nd->n_outputs && nd->inputs[0] && nd->outputs[0] &&
            nd->inputs[0]->graph == B->g) {
            int32_t a = lv->value_buf[nd->inputs[0]->id], o = lv->value_buf[nd->outputs[0]->id];
            if (a >= 0 && o >= 0 && a != o && mg->producer[o] == (int32_t)v) {
                lv->inplace_a[v] = a;
                lv->inplace_o[v] = o;
            }
        }
    }
    lv->eff = g_renew(uint32_t, B->eff.v, B->eff.len + 1);
    B->eff = (u32vec){0};
    apply_inplace(lv);
    mg->preds = g_renew(uint32_t, preds.v, preds.len + 1);
    mg->uses = g_renew(uint32_t, uses.v, uses.len + 1);
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

/* The values of `outside` (graph inputs and outputs of g held in memory the runtime allocates
 * apart, a decoder's KV cache) get no buffer: class V_NONE, as the views of them walk_nodes finds. */
static void leave_outside(builder *B, GHashTable *outside)
{
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, outside);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        const fp_value *v = key;
        if (v->graph == B->g && B->cls[v->id] == V_ACT)
            B->cls[v->id] = V_NONE;
    }
}

/* What fp_liveness_build's structure depends on per IR node: removed (0), free (1), scheduled (2). */
static uint8_t node_state(const fp_node *n) { return (n->flags & FP_NODE_REMOVED) ? 0 : is_free(n) ? 1 : 2; }

/* One walk over the values (classes, weights), one over the nodes in topological order (memgraph
 * and free nodes, views, buffer candidates), the buffers from what they found, and a second walk
 * over the nodes (dependencies, reads, in-place pairs). */
fp_liveness *fp_liveness_build(const fp_graph *g, const uint64_t *workspace, const fp_liveness_opts *opts,
                               fp_diag *diag, GError **error)
{
    builder B = {.g = g, .outputs_apart = opts && opts->outputs_apart};
    B.topo = fp_graph_order(g, &B.n_topo, error);
    if (!B.topo)
        return NULL;
    fp_liveness *lv = g_new0(fp_liveness, 1);
    lv->graph = g;
    lv->float_as = opts ? opts->float_as : FP_DT_UNDEFINED;
    B.lv = lv;
    uint32_t nn = g->nodes->len, nv = g->values->len;
    lv->n_graph_nodes = nn;
    lv->n_graph_values = nv;
    lv->node_idx = g_new(int32_t, nn + 1);
    memset(lv->node_idx, 0xff, (nn + 1) * sizeof(int32_t)); /* NO_IDX */
    lv->node_state = g_new0(uint8_t, nn + 1);               /* removed */
    lv->nodes = g_new(fp_node *, B.n_topo + 1);
    lv->free_nodes = g_new(fp_node *, B.n_topo + 1);
    B.cls = g_new(uint8_t, nv + 1);
    B.uf = g_new(uint32_t, nv + 1);
    B.prod = g_new(uint32_t, nv + 1);
    B.cand = (u32vec){g_new(uint32_t, nv + 1), 0, nv + 1};
    classify_values(&B);
    if (opts && opts->outside)
        leave_outside(&B, opts->outside);
    walk_nodes(&B);
    B.eff = (u32vec){g_new(uint32_t, lv->n_free + 64), 0, lv->n_free + 64};
    split_weights(lv);
    sum_weights(lv);
    make_buffers(&B, diag);
    g_free(B.cand.v);
    g_free(B.acts);
    B.dep = (int32_t *)B.prod; /* in place: prod is read no more */
    for (uint32_t i = 0; i < nv; i++)
        B.dep[i] = B.prod[i] != NO_PROD ? lv->node_idx[B.prod[i]] : NO_IDX;
    make_nodes(&B, workspace);
    /* the arrays sized by an upper bound, to their size (in place: the liveness may be kept) */
    lv->weights = g_renew(const fp_value *, lv->weights, lv->n_weights + 1);
    lv->buf_value = g_renew(const fp_value *, lv->buf_value, lv->mg.n_bufs + 1);
    lv->mg.producer = g_renew(int32_t, lv->mg.producer, lv->mg.n_bufs + 1);
    lv->nodes = g_renew(fp_node *, lv->nodes, lv->mg.n_nodes + 1);
    lv->free_nodes = g_renew(fp_node *, lv->free_nodes, lv->n_free + 1);
    g_free(B.eff.v);
    g_free(B.prod);
    g_free(B.uf);
    g_free(B.cls);
    return lv;
}

/* fp_liveness_resize's structure check: whether every node of the graph is in the state (removed,
 * free, scheduled) it had when lv was built. */
typedef struct {
    const fp_liveness *lv;
    bool same;
} state_check;

static void check_states(void *arg)
{
    state_check *c = arg;
    const fp_liveness *lv = c->lv;
    const fp_graph *g = lv->graph;
    c->same = true;
    for (uint32_t i = 0; i < lv->n_graph_nodes && c->same; i++) {
        if (i + PF_AHEAD < lv->n_graph_nodes)
            prefetch_node(g_ptr_array_index(g->nodes, i + PF_AHEAD));
        c->same = node_state(g_ptr_array_index(g->nodes, i)) == lv->node_state[i];
    }
}

/* The check of the structure runs beside the sizing on a big graph when no findings are asked for
 * (ir/par.h): the sizing then writes only lv's sizes, which a failed check throws away with lv. */
bool fp_liveness_resize(fp_liveness *lv, const uint64_t *workspace, fp_diag *diag)
{
    const fp_graph *g = lv->graph;
    if (g->nodes->len != lv->n_graph_nodes || g->values->len != lv->n_graph_values)
        return false;
    state_check check = {lv, false};
    fp_par_job job;
    bool split = !diag && fp_par_worth(lv->n_graph_nodes);
    fp_par_start(&job, check_states, &check, split);
    if (!split && !check.same)
        return false;
    sum_weights(lv);
    size_buffers(lv, diag);
    apply_inplace(lv);
    fp_par_join(&job);
    if (!check.same)
        return false;
    if (!workspace) {
        memset(lv->mg.workspace, 0, lv->mg.n_nodes * sizeof *lv->mg.workspace);
    } else {
        for (uint32_t i = 0; i < lv->n_graph_nodes; i++)
            if (lv->node_idx[i] >= 0)
                lv->mg.workspace[lv->node_idx[i]] = workspace[i];
    }
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
    g_free(lv->node_idx);
    g_free(lv->eff_start);
    g_free(lv->eff);
    g_free(lv);
}

void fp_liveness_full_order(const fp_liveness *lv, const uint32_t *order, fp_node **full, uint32_t *step_of)
{
    uint32_t n = lv->mg.n_nodes;
    uint32_t *pos = g_new(uint32_t, n + 1);
    for (uint32_t t = 0; t < n; t++)
        pos[order[t]] = t;
    /* free node k may run right after the latest memgraph node it depends on (key - 1; key 0: at
     * the start); buckets by key keep the free nodes' topological order (counting sort) */
    uint32_t *key = g_new(uint32_t, lv->n_free + 1);
    uint32_t *start = g_new0(uint32_t, n + 2);
    for (uint32_t k = 0; k < lv->n_free; k++) {
        uint32_t kk = 0;
        for (uint32_t j = lv->eff_start[k]; j < lv->eff_start[k + 1]; j++)
            kk = MAX(kk, pos[lv->eff[j]] + 1);
        key[k] = kk;
        start[kk + 1]++;
    }
    for (uint32_t b = 1; b < n + 2; b++)
        start[b] += start[b - 1];
    fp_node **sorted = g_new(fp_node *, lv->n_free + 1);
    uint32_t *fill = g_memdup2(start, (n + 2) * sizeof *start);
    for (uint32_t k = 0; k < lv->n_free; k++)
        sorted[fill[key[k]]++] = lv->free_nodes[k];
    uint32_t out = 0;
    for (uint32_t j = start[0]; j < start[1]; j++)
        full[out++] = sorted[j];
    for (uint32_t t = 0; t < n; t++) {
        if (step_of)
            step_of[t] = out;
        full[out++] = lv->nodes[order[t]];
        for (uint32_t j = start[t + 1]; j < start[t + 2]; j++)
            full[out++] = sorted[j];
    }
    g_assert(out == n + lv->n_free);
    g_free(fill);
    g_free(sorted);
    g_free(start);
    g_free(key);
    g_free(pos);
}
