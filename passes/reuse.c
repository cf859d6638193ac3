/* reuse.c - the reuse distance of activation buffers (reuse.h): a run of a graph replayed twice
 * over a simplified ONNX Runtime buffer plan; a buffer whose last touch lies further back than the
 * last cache level's capacity in distinct bytes (its stack distance: the bytes of the buffers
 * touched since, each once, and the kernels' other traffic) goes to memory. */
#include "passes/reuse.h"

#include "passes/memory/ortplan.h"

/* A buffer of the plan. */
typedef struct {
    const fp_value *first; /* the value it was made for: the dims and dtype a reuse must match */
    uint64_t last;         /* the tick of its last touch, 0 for none */
    int64_t refs;          /* reads still to come in this run (+1 for a graph output: kept) */
} buffer;

typedef struct {
    GArray *bufs;     /* buffer, in creation order */
    GHashTable *free; /* bytes (uint64_t *) -> GArray of guint indices into bufs of buffers of that
                         size, the most recently freed last */
    GArray *prev;     /* the previous run's bufs (NULL in the first run) */
    int32_t *buf_of;  /* per value id: its buffer, -1 for none */
    uint64_t now;     /* the tick of the kernel running: 1 + the kernels run before, across runs */
    uint64_t *tree;   /* a Fenwick tree over ticks 1..ticks: at each, the bytes last touched then */
    uint64_t ticks;
    uint64_t total; /* the bytes in the tree */
    uint64_t capacity;
} replay;

static buffer *buf_at(const replay *r, int32_t b) { return &g_array_index(r->bufs, buffer, b); }

/* Adds (or, with remove, takes away) `bytes` at tick t of r's tree. */
static void tree_add(replay *r, uint64_t t, uint64_t bytes, bool remove)
{
    for (r->total = remove ? r->total - bytes : r->total + bytes; t <= r->ticks; t += t & -t)
        r->tree[t] = remove ? r->tree[t] - bytes : r->tree[t] + bytes;
}

/* Whether the distinct bytes touched after tick `last` (0: never touched) outgrow the capacity. */
static bool far(const replay *r, uint64_t last)
{
    uint64_t before = 0;
    for (uint64_t t = last; t > 0; t -= t & -t)
        before += r->tree[t];
    return !last || r->total - before > r->capacity;
}

/* Buffer b touched now: its bytes move to the current tick. */
static void touch(replay *r, buffer *b)
{
    uint64_t bytes = fp_value_bytes(b->first);
    if (b->last)
        tree_add(r, b->last, bytes, true);
    tree_add(r, r->now, bytes, false);
    b->last = r->now;
}

/* The buffer node n's output k takes (fp_reuse_cold's rules), made when none fits; *cold set when
 * that buffer was last touched further back than the capacity. A new one takes over the last touch
 * of the buffer made at its creation index in the run before (none in the first run: cold). */
static int32_t place(replay *r, const fp_node *n, uint32_t k, bool *cold)
{
    const fp_value *v = n->outputs[k];
    int32_t in = k == 0 ? fp_ort_inplace_input(n) : -1;
    const fp_value *x = in >= 0 && (uint32_t)in < n->n_inputs ? n->inputs[in] : NULL;
    if (x && r->buf_of[x->id] >= 0 && buf_at(r, r->buf_of[x->id])->refs == 1 && fp_ort_same_size(NULL, x, v)) {
        *cold = false; /* its input's buffer, which this node reads now */
        return r->buf_of[x->id];
    }
    uint64_t bytes = fp_value_bytes(v);
    GArray *sized = g_hash_table_lookup(r->free, &bytes);
    for (guint i = sized ? sized->len : 0; i-- > 0;) {
        int32_t b = (int32_t)g_array_index(sized, guint, i);
        if (fp_ort_same_size(NULL, buf_at(r, b)->first, v)) {
            g_array_remove_index(sized, i);
            *cold = far(r, buf_at(r, b)->last);
            return b;
        }
    }
    guint made = r->bufs->len;
    uint64_t last = r->prev && made < r->prev->len ? g_array_index(r->prev, buffer, made).last : 0;
    *cold = far(r, last);
    g_array_append_val(r->bufs, ((buffer){.first = v, .last = last}));
    return (int32_t)made;
}

/* Kernel n's cold bytes before it runs: its inputs' buffers last touched far back, then its
 * outputs' (placing them). */
static uint64_t kernel_cold(replay *r, const fp_node *n)
{
    uint64_t cold = 0;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        const fp_value *v = n->inputs[k];
        if (v && r->buf_of[v->id] >= 0 && far(r, buf_at(r, r->buf_of[v->id])->last))
            cold += fp_value_bytes(v);
    }
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        const fp_value *v = n->outputs[k];
        uint64_t bytes = fp_value_bytes(v);
        if (!bytes || v->kind != FP_VALUE_INTERMEDIATE)
            continue;
        bool c = false;
        int32_t b = place(r, n, k, &c);
        cold += c ? bytes : 0;
        r->buf_of[v->id] = b;
        buf_at(r, b)->refs += v->n_uses + (v->is_output ? 1 : 0);
    }
    return cold;
}

/* Puts buffer b on the free list of its size. */
static void release(replay *r, int32_t b)
{
    uint64_t bytes = fp_value_bytes(buf_at(r, b)->first);
    GArray *sized = g_hash_table_lookup(r->free, &bytes);
    if (!sized) {
        sized = g_array_new(FALSE, FALSE, sizeof(guint));
        g_hash_table_insert(r->free, g_memdup2(&bytes, sizeof bytes), sized);
    }
    guint id = (guint)b;
    g_array_append_val(sized, id);
}

/* After node n ran, moving `traffic` bytes: its reads spent (a buffer read for the last time
 * freed), every buffer it touched moved to the current tick, and the rest of its traffic (weights,
 * graph inputs: bytes no buffer holds, each counted as distinct) added there. A view's output
 * shares its input's buffer; a view touches nothing. */
static void ran(replay *r, const fp_node *n, bool view, uint64_t traffic)
{
    uint64_t held = 0;
    if (view && n->n_inputs && n->inputs[0] && n->n_outputs && n->outputs[0] && r->buf_of[n->inputs[0]->id] >= 0) {
        const fp_value *y = n->outputs[0];
        r->buf_of[y->id] = r->buf_of[n->inputs[0]->id];
        buf_at(r, r->buf_of[y->id])->refs += y->n_uses + (y->is_output ? 1 : 0);
    }
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        const fp_value *v = n->inputs[k];
        if (!v || r->buf_of[v->id] < 0)
            continue;
        buffer *b = buf_at(r, r->buf_of[v->id]);
        if (!view) {
            touch(r, b);
            held += fp_value_bytes(v);
        }
        if (--b->refs == 0)
            release(r, r->buf_of[v->id]);
    }
    for (uint32_t k = 0; !view && k < n->n_outputs; k++)
        if (n->outputs[k] && r->buf_of[n->outputs[k]->id] >= 0) {
            touch(r, buf_at(r, r->buf_of[n->outputs[k]->id]));
            held += fp_value_bytes(n->outputs[k]);
        }
    if (!view && traffic > held)
        tree_add(r, r->now, traffic - held, false);
}

uint64_t *fp_reuse_cold(const fp_graph *g, fp_node *const *order, uint32_t n, const uint64_t *traffic,
                        uint64_t capacity, uint64_t *arena)
{
    uint64_t *cold = g_new0(uint64_t, MAX(n, 1));
    if (arena)
        *arena = 0;
    if (!capacity)
        return cold;
    replay r = {.buf_of = g_new(int32_t, MAX(g->values->len, 1)), .capacity = capacity, .ticks = 2 * (uint64_t)n};
    r.tree = g_new0(uint64_t, r.ticks + 1);
    for (int run = 0; run < 2; run++) {
        r.bufs = g_array_new(FALSE, FALSE, sizeof(buffer));
        r.free = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
        for (guint i = 0; i < g->values->len; i++)
            r.buf_of[i] = -1;
        for (uint32_t i = 0; i < n; i++) {
            if (traffic[i] == FP_REUSE_SKIP)
                continue;
            bool view = fp_op_has(order[i]->op, FP_OPF_VIEW);
            r.now = (uint64_t)run * n + i + 1;
            uint64_t c = view ? 0 : kernel_cold(&r, order[i]);
            cold[i] = run ? c : 0;
            ran(&r, order[i], view, traffic[i]);
        }
        g_hash_table_destroy(r.free);
        if (r.prev)
            g_array_free(r.prev, TRUE);
        r.prev = r.bufs;
    }
    for (guint b = 0; arena && b < r.prev->len; b++)
        *arena += fp_value_bytes(g_array_index(r.prev, buffer, b).first);
    g_array_free(r.prev, TRUE);
    g_free(r.buf_of);
    g_free(r.tree);
    return cold;
}
