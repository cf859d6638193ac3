/* step.c - one training step's memory (step.h): model state by the optimizer's rules
 * (training_memory_facts.md section 6), then a liveness simulation over the topological order:
 * forward allocates each op's outputs (views none) and frees a storage after its last reader
 * unless backward saved it; backward runs the recording ops in reverse, allocating the gradient of
 * each input that requires grad (a parameter's once, kept), then freeing the gradients of the op's
 * outputs, its auxiliaries and the storages no earlier op saved. */
#include "passes/training/step.h"

#include <string.h>

static const char *const optimizers[] = {"sgd", "momentum", "adam", "adamw", NULL};
static const char *const precisions[] = {"fp32", "amp-fp16", "amp-bf16", NULL};
static const char *const autograds[] = {"2", "1.13", NULL};

/* The index of s in the NULL-terminated names, or -1. */
static int name_index(const char *const *names, const char *s)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

bool fp_train_optimizer_parse(const char *s, fp_train_optimizer *out)
{
    int i = name_index(optimizers, s);
    if (i >= 0)
        *out = (fp_train_optimizer)i;
    return i >= 0;
}

const char *fp_train_optimizer_name(fp_train_optimizer o) { return optimizers[o]; }

bool fp_train_precision_parse(const char *s, fp_train_precision *out)
{
    int i = name_index(precisions, s);
    if (i >= 0)
        *out = (fp_train_precision)i;
    return i >= 0;
}

const char *fp_train_precision_name(fp_train_precision p) { return precisions[p]; }

bool fp_train_autograd_parse(const char *s, fp_train_autograd *out)
{
    int i = name_index(autograds, s);
    if (i >= 0)
        *out = (fp_train_autograd)i;
    return i >= 0;
}

const char *fp_train_autograd_name(fp_train_autograd a) { return autograds[a]; }

typedef struct {
    const fp_graph *g;
    const fp_train_saved *s;
    fp_node *const *order;
    uint32_t n;
    uint32_t *last_use;   /* per value id (storages): order index of the last forward reader
                             (fp_train_last_reads) */
    int64_t *saved_until; /* per value id (storages): order index of the earliest op saving it, or -1 */
    uint64_t *aux;        /* per node id: bytes of the auxiliaries it saved */
    uint32_t *free_start; /* per order index (n + 1 entries): where its storages begin in free_ids */
    uint32_t *free_ids;   /* value ids of the saved storages, by the order index that frees them */
} sim;

static bool is_storage(const fp_value *v) { return fp_train_storage_of(v) == v && !fp_value_is_fixed(v); }

static uint64_t bytes_of(const sim *z, const fp_value *v)
{
    bool known;
    return fp_train_value_bytes(z->s, v, &known);
}

/* The per-storage tables: last forward reader, earliest saving op; the auxiliaries per op. */
static void tables(sim *z)
{
    uint32_t nv = z->g->values->len;
    z->last_use = fp_train_last_reads(z->g, z->order, z->n);
    z->saved_until = g_new(int64_t, nv);
    z->aux = g_new0(uint64_t, z->g->nodes->len);
    for (uint32_t i = 0; i < nv; i++)
        z->saved_until[i] = -1;
    g_autofree uint32_t *pos = g_new0(uint32_t, z->g->nodes->len);
    for (uint32_t i = 0; i < z->n; i++)
        pos[z->order[i]->id] = i;
    for (guint i = 0; i < z->s->items->len; i++) {
        const fp_saved_item *it = &g_array_index(z->s->items, fp_saved_item, i);
        uint32_t at = pos[it->node->id];
        if (!it->storage) {
            z->aux[it->node->id] += it->bytes;
        } else if (it->storage->graph == z->g) {
            int64_t *u = &z->saved_until[it->storage->id];
            *u = *u < 0 ? at : MIN(*u, (int64_t)at);
        }
    }
}

/* The saved storages bucketed by the order index of the op whose backward frees them. */
static void buckets(sim *z)
{
    uint32_t nv = z->g->values->len;
    z->free_start = g_new0(uint32_t, z->n + 1);
    for (uint32_t v = 0; v < nv; v++)
        if (z->saved_until[v] >= 0)
            z->free_start[z->saved_until[v] + 1]++;
    for (uint32_t i = 0; i < z->n; i++)
        z->free_start[i + 1] += z->free_start[i];
    z->free_ids = g_new(uint32_t, z->free_start[z->n] + 1);
    g_autofree uint32_t *fill = g_memdup2(z->free_start, sizeof(uint32_t) * (z->n + 1));
    for (uint32_t v = 0; v < nv; v++)
        if (z->saved_until[v] >= 0)
            z->free_ids[fill[z->saved_until[v]]++] = v;
}

/* Forward: the most bytes live at once, and the op there. */
static uint64_t forward(const sim *z, const fp_node **at)
{
    uint64_t live = 0, peak = 0;
    g_autofree uint8_t *gone = g_new0(uint8_t, z->g->values->len); /* freed (an op may read one twice) */
    for (guint i = 0; i < z->g->inputs->len; i++)
        live += bytes_of(z, z->g->inputs->pdata[i]);
    for (uint32_t i = 0; i < z->n; i++) {
        const fp_node *nd = z->order[i];
        if (nd->flags & FP_NODE_FOLDED)
            continue;
        for (uint32_t k = 0; k < nd->n_outputs; k++)
            if (nd->outputs[k] && is_storage(nd->outputs[k]))
                live += bytes_of(z, nd->outputs[k]);
        live += z->aux[nd->id];
        if (live > peak)
            peak = live, *at = nd;
        for (uint32_t k = 0; k < nd->n_inputs + nd->n_outputs; k++) { /* storages read last here */
            const fp_value *v = k < nd->n_inputs ? nd->inputs[k] : nd->outputs[k - nd->n_inputs];
            const fp_value *st = v ? fp_train_storage_of(v) : NULL;
            if (!st || st->graph != z->g || !is_storage(st) || st->is_output || z->saved_until[st->id] >= 0 ||
                z->last_use[st->id] != i || gone[st->id])
                continue;
            gone[st->id] = 1;
            live -= MIN(live, bytes_of(z, st));
        }
    }
    return peak;
}

/* Bytes saved at the end of forward (storages and auxiliaries). */
static uint64_t saved_live(const sim *z)
{
    uint64_t b = 0;
    for (guint i = 0; i < z->g->values->len; i++)
        if (z->saved_until[i] >= 0)
            b += bytes_of(z, z->g->values->pdata[i]);
    for (guint i = 0; i < z->g->nodes->len; i++)
        b += z->aux[i];
    return b;
}

static bool records(const sim *z, const fp_node *n) { return fp_train_records(z->s, n); }

/* Gradients op nd's backward makes: its inputs' (a parameter's into *param_grads, once). */
static uint64_t make_grads(const sim *z, const fp_node *nd, uint8_t *has_grad, uint64_t *param_grads)
{
    uint64_t made = 0;
    for (uint32_t k = 0; k < nd->n_inputs; k++) {
        const fp_value *v = nd->inputs[k];
        if (!v || v->graph != z->g || !z->s->requires_grad[v->id] || has_grad[v->id])
            continue;
        has_grad[v->id] = 1;
        uint64_t b = bytes_of(z, v);
        if (fp_value_is_fixed(v)) /* a parameter, or one the export transposed */
            *param_grads += b;
        else if (!fp_op_has(nd->op, FP_OPF_VIEW) || nd->op == FP_OP_DROPOUT)
            made += b; /* a view's gradient is a view of its output's */
    }
    return made;
}

/* Backward: the most bytes live at once (parameter gradients so far included), and the op. */
static uint64_t backward(const sim *z, const fp_node **at, uint64_t *param_grads)
{
    g_autofree uint8_t *has_grad = g_new0(uint8_t, z->g->values->len);
    uint64_t saved = saved_live(z), grads = 0, peak = 0;
    for (guint i = 0; i < z->g->outputs->len; i++) {
        const fp_value *y = z->g->outputs->pdata[i];
        if (y->graph == z->g && z->s->requires_grad[y->id]) {
            grads += bytes_of(z, y);
            has_grad[y->id] = 1;
        }
    }
    *param_grads = 0;
    for (uint32_t i = z->n; i-- > 0;) {
        const fp_node *nd = z->order[i];
        if ((nd->flags & FP_NODE_FOLDED) || !records(z, nd))
            continue;
        grads += make_grads(z, nd, has_grad, param_grads);
        uint64_t live = saved + grads + *param_grads;
        if (live > peak)
            peak = live, *at = nd;
        for (uint32_t k = 0; k < nd->n_outputs; k++) {
            const fp_value *y = nd->outputs[k];
            if (y && has_grad[y->id] && (!fp_op_has(nd->op, FP_OPF_VIEW) || nd->op == FP_OP_DROPOUT))
                grads -= MIN(grads, bytes_of(z, y));
        }
        saved -= MIN(saved, z->aux[nd->id]);
        for (uint32_t k = z->free_start[i]; k < z->free_start[i + 1]; k++) /* storages no earlier op saved */
            saved -= MIN(saved, bytes_of(z, z->g->values->pdata[z->free_ids[k]]));
    }
    return peak;
}

static uint64_t flops_of(const sim *z, uint64_t *backward_flops)
{
    uint64_t f = 0;
    *backward_flops = 0;
    for (uint32_t i = 0; i < z->n; i++) {
        const fp_node *nd = z->order[i];
        if ((nd->flags & FP_NODE_FOLDED) || !nd->metrics_known)
            continue;
        f += nd->metrics.flops;
        if (!records(z, nd))
            continue;
        uint64_t times = 1;
        if (fp_train_is_product(nd->op)) { /* one product per input needing its gradient */
            times = 0;
            for (uint32_t k = 0; k < nd->n_inputs && k < 2; k++)
                times += nd->inputs[k] && z->s->requires_grad[nd->inputs[k]->id];
        }
        *backward_flops += times * nd->metrics.flops;
    }
    return f;
}

void fp_train_step_run(const fp_model *m, const fp_train_saved *saved, fp_train_optimizer opt, fp_train_step *out)
{
    memset(out, 0, sizeof *out);
    sim z = {.g = m->main, .s = saved};
    z.order = fp_graph_order(m->main, &z.n, NULL);
    out->parameter_bytes = saved->parameter_bytes;
    out->gradient_bytes = saved->parameter_bytes;
    out->optimizer_bytes = opt == FP_OPT_SGD        ? 0
                           : opt == FP_OPT_MOMENTUM ? saved->parameter_bytes
                                                    : 2 * saved->parameter_bytes;
    out->amp_cache_bytes = saved->half ? 2 * saved->parameters : 0;
    out->saved_bytes = saved->saved_bytes;
    if (!z.order)
        return;
    tables(&z);
    buckets(&z);
    const fp_node *fat = NULL, *bat = NULL;
    uint64_t pgrads = 0;
    out->forward_peak = forward(&z, &fat);
    out->backward_peak = backward(&z, &bat, &pgrads);
    uint64_t state = out->parameter_bytes + out->optimizer_bytes;
    uint64_t fwd = out->forward_peak + out->amp_cache_bytes, bwd = out->backward_peak + out->amp_cache_bytes;
    uint64_t step = out->gradient_bytes;
    out->peak_phase = "optimizer step";
    uint64_t top = step;
    if (fwd > top)
        top = fwd, out->peak_phase = "forward", out->peak_node = fat;
    if (bwd > top)
        top = bwd, out->peak_phase = "backward", out->peak_node = bat;
    out->peak_bytes = state + top;
    out->forward_flops = flops_of(&z, &out->backward_flops);
    g_free(z.last_use);
    g_free(z.saved_until);
    g_free(z.aux);
    g_free(z.free_start);
    g_free(z.free_ids);
}
