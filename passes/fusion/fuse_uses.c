/* fuse_uses.c - the use lists while the fusion pass rewrites: each rewrite takes the uses of the
 * nodes it changes out of the lists and puts their new uses in, so that every list stays the one
 * fp_model_link would make, without relinking the model (fuse_internal.h). */
#include <string.h>

#include "passes/fusion/fuse_internal.h"

/* fp_model_link lists a value's uses by model-wide node index (graphs in model order, nodes in
 * array order), then port, an implicit use (UINT32_MAX) after the inputs. A rewrite changes the
 * uses of the nodes it rewires or removes (fz->chg) only: their uses before it are taken out of the
 * lists and their uses after it put in, in that order, so that every list is the one a relink would
 * make, and a list the rewrite leaves as it was (a Conv's shared weight) is not touched. */
typedef struct {
    fp_value *v;
    uint64_t key; /* model-wide node index << 32 | port */
    fp_use use;
} keyed_use;

static uint64_t use_key(const fp_node *n, uint32_t port) { return ((uint64_t)fp_node_index(n) << 32) | port; }

static void add_unique(GPtrArray *a, gpointer p)
{
    for (guint i = 0; i < a->len; i++)
        if (a->pdata[i] == p)
            return;
    g_ptr_array_add(a, p);
}

/* Appends the uses by the nodes of fz->chg (the live ones) to `to`, sorted by value, then key. */
static void chg_uses(const fp_fuser *fz, GArray *to)
{
    guint n = 0;
    for (guint i = 0; i < fz->chg->len; i++) {
        const fp_node *c = fz->chg->pdata[i];
        if (!(c->flags & FP_NODE_REMOVED))
            n += c->n_inputs + fp_node_n_implicit(c);
    }
    g_array_set_size(to, n);
    keyed_use *a = (keyed_use *)(void *)to->data;
    n = 0;
    for (guint i = 0; i < fz->chg->len; i++) {
        fp_node *c = fz->chg->pdata[i];
        if (c->flags & FP_NODE_REMOVED)
            continue;
        uint64_t key = (uint64_t)fp_node_index(c) << 32;
        for (uint32_t k = 0; k < c->n_inputs + fp_node_n_implicit(c); k++) {
            bool imp = k >= c->n_inputs;
            fp_value *v = imp ? c->ext->implicit[k - c->n_inputs] : c->inputs[k];
            uint32_t port = imp ? UINT32_MAX : k;
            if (v)
                a[n++] = (keyed_use){v, key | port, {c, port}};
        }
    }
    g_array_set_size(to, n);
    for (guint i = 1; i < n; i++) { /* insertion sort: a few uses */
        keyed_use x = a[i];
        guint j = i;
        for (; j > 0 && (a[j - 1].v > x.v || (a[j - 1].v == x.v && a[j - 1].key > x.key)); j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

#define LOCAL_MAX 32 /* a rewrite that rewires more nodes than this leaves the uses to fp_model_link */

bool fp_fuse_uses_begin(fp_fuser *fz, const fp_match *mt)
{
    if (mt->rule->rewrite == FP_RW_SPLIT) /* adds a value: the model is linked and numbered again */
        fz->relink = true;
    if (fz->relink)
        return false;
    g_ptr_array_set_size(fz->chg, 0);
    for (int i = 0; i < mt->n; i++) /* the matched nodes are distinct */
        g_ptr_array_add(fz->chg, mt->nodes[i]);
    if (mt->rule->rewrite == FP_RW_ELIMINATE || mt->rule->rewrite == FP_RW_PAD) {
        /* the consumers of the anchor's output read its input */
        const fp_value *out = mt->nodes[0]->outputs[0];
        if (out->n_uses > LOCAL_MAX) {
            fz->relink = true;
            return false;
        }
        for (uint32_t u = 0; u < out->n_uses; u++)
            add_unique(fz->chg, out->uses[u].node);
    }
    chg_uses(fz, fz->before);
    return true;
}

/* First index in [lo, hi) of v's uses whose key is not below `key`. */
static uint32_t lower_bound(const fp_value *v, uint32_t lo, uint32_t hi, uint64_t key)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (use_key(v->uses[mid].node, v->uses[mid].port) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Takes uses b[0..nb) out of v's list and puts a[0..na) in (each sorted by key). The list is
 * rewritten in place when it does not grow, else copied into the model's arena (the next
 * fp_model_link puts every list back into its graph's pool). False when a use to take out is not
 * where the order says (a list not made by fp_model_link): the caller relinks. */
static bool relist(fp_fuser *fz, fp_value *v, const keyed_use *b, guint nb, const keyed_use *a, guint na)
{
    uint32_t len = v->n_uses, w = 0, from = 0;
    for (guint i = 0; i < nb; i++) { /* out, keeping the rest in order */
        uint32_t pos = lower_bound(v, from, len, b[i].key);
        if (pos >= len || v->uses[pos].node != b[i].use.node || v->uses[pos].port != b[i].use.port)
            return false;
        if (pos > from)
            memmove(v->uses + w, v->uses + from, sizeof(fp_use) * (pos - from));
        w += pos - from;
        fz->link_work += pos - from + 1;
        from = pos + 1;
    }
    if (len > from)
        memmove(v->uses + w, v->uses + from, sizeof(fp_use) * (len - from));
    uint32_t kept = w + (len - from), n = kept + na;
    if (n > len) {
        fp_use *grown = fp_arena_alloc_raw(fz->m->arena, sizeof(fp_use) * n);
        if (kept) /* an empty list may have no storage */
            memcpy(grown, v->uses, sizeof(fp_use) * kept);
        v->uses = grown;
        fz->link_work += kept;
    }
    uint32_t hi = kept;
    for (guint j = na; j-- > 0;) { /* in, from the last: each shifts the kept uses after it */
        uint32_t pos = lower_bound(v, 0, hi, a[j].key);
        if (hi > pos)
            memmove(v->uses + pos + j + 1, v->uses + pos, sizeof(fp_use) * (hi - pos));
        v->uses[pos + j] = a[j].use;
        fz->link_work += hi - pos + 1;
        hi = pos;
    }
    v->n_uses = n;
    return true;
}

void fp_fuse_uses_end(fp_fuser *fz)
{
    chg_uses(fz, fz->after);
    const keyed_use *b = (const keyed_use *)(const void *)fz->before->data;
    const keyed_use *a = (const keyed_use *)(const void *)fz->after->data;
    guint nb = fz->before->len, na = fz->after->len, i = 0, j = 0;
    while (i < nb || j < na) {
        fp_value *v = i < nb && (j >= na || b[i].v <= a[j].v) ? b[i].v : a[j].v;
        guint i1 = i, j1 = j;
        while (i1 < nb && b[i1].v == v)
            i1++;
        while (j1 < na && a[j1].v == v)
            j1++;
        bool same = i1 - i == j1 - j;
        for (guint k = 0; same && k < i1 - i; k++)
            same = b[i + k].key == a[j + k].key;
        if (!same && !relist(fz, v, b + i, i1 - i, a + j, j1 - j)) {
            fz->relink = true;
            return;
        }
        i = i1;
        j = j1;
    }
    if (fz->link_work > fz->link_budget)
        fz->relink = true;
}

void fp_fuse_uses_init(fp_fuser *fz, size_t total)
{
    fz->chg = g_ptr_array_new();
    fz->before = g_array_new(FALSE, FALSE, sizeof(keyed_use));
    fz->after = g_array_new(FALSE, FALSE, sizeof(keyed_use));
    fz->link_budget = 2 * total + 4096;
}

void fp_fuse_uses_free(fp_fuser *fz)
{
    g_ptr_array_free(fz->chg, TRUE);
    g_array_free(fz->before, TRUE);
    g_array_free(fz->after, TRUE);
}
