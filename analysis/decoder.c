/* decoder.c - KV-cache inputs and outputs found from the graph (decoder.h). */
#include "analysis/decoder.h"

#include <string.h>

#include "analysis/bind.h"

typedef enum { ROLE_NONE, ROLE_KV, ROLE_KEY, ROLE_VALUE, ROLE_PACKED } kv_role;

/* The role that use u gives its value: the past input (the first) of a Concat on the sequence axis (axis 2 of
 * a rank-4 BNSH tensor; GE's ConcatD and ConcatV2D name it concat_dim) whose result is a graph
 * output, a past key or value input of an attention op that owns the cache, or the packed past
 * (input 4, K and V in one tensor) of com.microsoft Attention. *present receives the tensor that
 * extends it, or NULL. */
static kv_role use_role(const fp_use *u, const fp_value **present)
{
    const fp_node *n = u->node;
    *present = NULL;
    if (n->op == FP_OP_CONCAT && u->port == 0 && n->n_outputs == 1 && n->outputs[0] && n->outputs[0]->is_output) {
        int64_t axis = fp_node_attr_int(n, "axis", fp_node_attr_int(n, "concat_dim", 0));
        if (axis != 2 && axis != -2)
            return ROLE_NONE;
        *present = n->outputs[0];
        return ROLE_KV;
    }
    if (n->op == FP_OP_ATTENTION && u->port == 4 && !(n->flags & FP_NODE_FUSED)) {
        *present = n->n_outputs > 1 ? n->outputs[1] : NULL;
        return ROLE_PACKED;
    }
    uint32_t k = n->op == FP_OP_GROUP_QUERY_ATTENTION ? 3 : n->op == FP_OP_MULTI_HEAD_ATTENTION ? 6 : UINT32_MAX;
    if (k == UINT32_MAX || (u->port != k && u->port != k + 1))
        return ROLE_NONE;
    uint32_t out = u->port == k ? 1 : 2; /* present_key, present_value */
    *present = out < n->n_outputs ? n->outputs[out] : NULL;
    return u->port == k ? ROLE_KEY : ROLE_VALUE;
}

/* The first role a use of v gives it (use_role), directly or through the Identity a GE Data op
 * becomes (it reads the graph input and passes it on), and its present tensor. */
static kv_role uses_role(const fp_value *v, const fp_value **present)
{
    for (uint32_t i = 0; i < v->n_uses; i++) {
        const fp_node *n = v->uses[i].node;
        const fp_value *via = n->op == FP_OP_IDENTITY && n->n_outputs == 1 ? n->outputs[0] : NULL;
        for (uint32_t j = 0; via && j < via->n_uses; j++) {
            kv_role r = use_role(&via->uses[j], present);
            if (r != ROLE_NONE)
                return r;
        }
        kv_role r = use_role(&v->uses[i], present);
        if (r != ROLE_NONE)
            return r;
    }
    return ROLE_NONE;
}

/* The role of graph input v, a float tensor declared of rank 4 ([batch, kv_heads, tokens,
 * head_dim]) or, as Attention's packed past, 5 ([2, batch, heads, tokens, head_dim]), and its
 * present tensor. */
static kv_role input_role(const fp_value *v, const fp_value **present)
{
    *present = NULL;
    int32_t rank = v->decl_shape.rank;
    if ((rank != 4 && rank != 5) || !fp_dtype_is_float(v->decl_dtype))
        return ROLE_NONE;
    kv_role r = uses_role(v, present);
    if ((r == ROLE_PACKED) != (rank == 5)) {
        *present = NULL;
        return ROLE_NONE;
    }
    return r;
}

/* K or V for a past input found by a Concat: by the last part of its name when it says
 * ("past_key_values.0.key", "...value", "past_k", "past.0.v"), else by its place (K, V, K, ...). */
static bool is_value(const fp_value *v, uint32_t nth)
{
    const char *dot = strrchr(v->name, '.'), *last = dot ? dot + 1 : v->name;
    if (strstr(last, "value") || strcmp(last, "v") == 0 || g_str_has_suffix(last, "_v"))
        return true;
    if (strstr(last, "key") || strcmp(last, "k") == 0 || g_str_has_suffix(last, "_k"))
        return false;
    return nth % 2 == 1;
}

/* Dim `axis` of the BNSH layout ([batch, kv_heads, tokens, head_dim]) in tensor t's declared past:
 * one axis further in a packed [2, batch, heads, tokens, head_dim] one; in a paged [blocks,
 * block_size, kv_heads, head_dim] one the heads and head dim, the batch and tokens unknown. */
static fp_dim past_dim(const fp_kv_tensor *t, int axis)
{
    if (t->paged)
        return axis == 1 || axis == 3 ? t->past->decl_shape.dims[axis == 1 ? 2 : 3] : (fp_dim){-1, NULL};
    return t->past->decl_shape.dims[axis + t->packed];
}

/* The symbol of BNSH axis `axis` shared by every tensor's past input, or NULL. */
static const char *shared_sym(const fp_kv_cache *kv, int axis)
{
    const char *sym = past_dim(&kv->tensors[0], axis).sym;
    for (uint32_t i = 1; i < kv->n_tensors && sym; i++)
        if (g_strcmp0(past_dim(&kv->tensors[i], axis).sym, sym) != 0)
            sym = NULL;
    return sym;
}

/* Bytes one token of one sequence takes in tensor t (K and V for a packed one) at dtype; false
 * when unknown. */
static bool token_bytes(const fp_kv_tensor *t, fp_dtype dtype, uint64_t *bytes)
{
    fp_dim h = past_dim(t, 1), d = past_dim(t, 3);
    return fp_dim_known(h) && fp_dim_known(d) &&
           fp_dtype_bytes(dtype, (uint64_t)h.value * (uint64_t)d.value * (t->packed ? 2 : 1), bytes);
}

/* Whether some input of g declares a dim called sym (only those can be bound). */
static bool input_declares(const fp_graph *g, const char *sym)
{
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_shape *s = &((const fp_value *)g->inputs->pdata[i])->decl_shape;
        for (int32_t k = 0; k < s->rank; k++)
            if (g_strcmp0(s->dims[k].sym, sym) == 0)
                return true;
    }
    return false;
}

/* The symbol of the token axis every present output declares (a plain symbol, not a sum such as
 * "past_sequence_length + sequence_length", and neither the past nor the new tokens') when some
 * input of g declares it too, or NULL. */
static const char *present_total(const fp_kv_cache *kv, const fp_graph *g)
{
    const char *sym = NULL;
    for (uint32_t i = 0; i < kv->n_tensors; i++) {
        const fp_kv_tensor *t = &kv->tensors[i];
        const fp_shape *s = t->present ? &t->present->decl_shape : NULL;
        const char *d = s && s->rank == 4 + t->packed ? s->dims[2 + t->packed].sym : NULL;
        if (!d || strchr(d, '+') || (sym && strcmp(sym, d) != 0))
            return NULL;
        sym = d;
    }
    if (!sym || g_strcmp0(sym, kv->past_dim) == 0 || g_strcmp0(sym, kv->new_dim) == 0)
        return NULL;
    return input_declares(g, sym) ? sym : NULL;
}

/* The new-token and total-token symbols: axis 1 of the rank-2 integer inputs whose axis 0 is the
 * batch (a sum such as "past_sequence_length + sequence_length" is neither: it follows from them);
 * the total, when no such input names it, the present outputs' token axis (present_total: a model
 * whose mask is [batch, 1, new, total] declares it there). */
static void token_dims(fp_kv_cache *kv, const fp_graph *g)
{
    for (guint i = 0; i < g->inputs->len && kv->batch_dim; i++) {
        const fp_value *v = g->inputs->pdata[i];
        const fp_shape *s = &v->decl_shape;
        bool ids = v->decl_dtype == FP_DT_INT64 || v->decl_dtype == FP_DT_INT32; /* token ids, masks */
        if (s->rank != 2 || !ids || g_strcmp0(s->dims[0].sym, kv->batch_dim) != 0 || !s->dims[1].sym ||
            strchr(s->dims[1].sym, '+') || g_strcmp0(s->dims[1].sym, kv->past_dim) == 0)
            continue;
        const char *sym = s->dims[1].sym;
        if (!kv->new_dim)
            kv->new_dim = sym;
        else if (!kv->total_dim && strcmp(sym, kv->new_dim) != 0)
            kv->total_dim = sym;
    }
    if (!kv->total_dim && kv->batch_dim)
        kv->total_dim = present_total(kv, g);
}

/* Heads, head dim, dtype and bytes per token from the tensors' declared shapes. */
static void summarize(fp_kv_cache *kv)
{
    kv->kv_heads = past_dim(&kv->tensors[0], 1).value;
    kv->head_dim = past_dim(&kv->tensors[0], 3).value;
    kv->dtype = kv->tensors[0].past->decl_dtype;
    uint64_t per_token = 0;
    bool known = true;
    for (uint32_t i = 0; i < kv->n_tensors; i++) {
        const fp_kv_tensor *t = &kv->tensors[i];
        if (past_dim(t, 1).value != kv->kv_heads)
            kv->kv_heads = -1;
        if (past_dim(t, 3).value != kv->head_dim)
            kv->head_dim = -1;
        if (t->past->decl_dtype != kv->dtype)
            kv->dtype = FP_DT_UNDEFINED;
        uint64_t b = 0;
        known &= token_bytes(t, t->past->decl_dtype, &b);
        per_token += b;
    }
    kv->bytes_per_token = known ? per_token : 0;
    kv->batch_dim = shared_sym(kv, 0);
    kv->past_dim = shared_sym(kv, 2);
}

fp_kv_cache *fp_kv_cache_find(const fp_model *m)
{
    const fp_graph *g = m->main;
    g_autoptr(GArray) found = g_array_new(FALSE, TRUE, sizeof(fp_kv_tensor));
    uint32_t nth = 0, keys = 0, values = 0;
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_value *v = g->inputs->pdata[i], *present = NULL;
        kv_role r = input_role(v, &present);
        if (r == ROLE_NONE)
            continue;
        bool value = r == ROLE_VALUE || (r == ROLE_KV && is_value(v, nth)), packed = r == ROLE_PACKED;
        nth++;
        fp_kv_tensor t = {.past = v,
                          .present = present,
                          .value = value,
                          .packed = packed,
                          .layer = value ? values++ : keys++};
        values += packed; /* a packed tensor holds the layer's V too */
        g_array_append_val(found, t);
    }
    if (!found->len)
        return NULL;
    return fp_kv_cache_new(m, g_steal_pointer(&found), MAX(keys, values));
}

fp_kv_cache *fp_kv_cache_new(const fp_model *m, GArray *tensors, uint32_t layers)
{
    g_assert(tensors->len > 0);
    fp_kv_cache *kv = g_new0(fp_kv_cache, 1);
    kv->n_tensors = tensors->len;
    kv->tensors = (fp_kv_tensor *)g_array_free(tensors, FALSE);
    kv->layers = layers;
    summarize(kv);
    token_dims(kv, m->main);
    fp_kv_cache_find_cross(kv, m);
    return kv;
}

void fp_kv_cache_free(fp_kv_cache *kv)
{
    if (!kv)
        return;
    g_free(kv->tensors);
    g_free(kv->cross);
    g_free(kv->state);
    g_free(kv->config);
    fp_genai_config_free(kv->genai);
    g_free(kv);
}

bool fp_kv_tensor_bytes(const fp_value *v, int from, fp_dtype dtype, int64_t tokens, int64_t block, uint64_t *bytes)
{
    int32_t rank = v->shape.rank, t = rank - 2;
    if ((rank != 4 && rank != 5) || from < 0 || from >= rank)
        return false;
    fp_dim d[5];
    memcpy(d, v->shape.dims, sizeof(fp_dim) * (size_t)rank);
    if (fp_dim_known(d[t]))
        d[t].value = MAX(d[t].value, tokens);
    if (block > 0 && fp_dim_known(d[t]))
        d[t].value = (d[t].value + block - 1) / block * block;
    uint64_t numel = 0;
    return fp_shape_numel(&(fp_shape){rank - from, d + from}, &numel) &&
           fp_dtype_bytes(dtype != FP_DT_UNDEFINED ? dtype : v->dtype, numel, bytes);
}

/* Dim `axis` of the BNSH layout in v as inferred now (v rank 4, or 5 packed); unknown else. */
static fp_dim now_dim(const fp_value *v, int axis)
{
    int32_t rank = v->shape.rank;
    return rank == 4 || rank == 5 ? v->shape.dims[axis + rank - 4] : (fp_dim){-1, NULL};
}

/* The sum of fp_kv_tensor_bytes over kv's present tensors (their past inputs where none was found; at
 * least max_length tokens in a shared buffer), or over its past inputs; UINT64_MAX when unknown. */
static uint64_t sum_bytes(const fp_kv_cache *kv, bool present, fp_dtype dtype, int64_t block)
{
    uint64_t sum = 0, b = 0;
    bool paged = fp_kv_cache_paged(kv); /* a pool: its block slots are not a token axis */
    int64_t tokens = present && kv->share_buffer && !paged ? kv->max_length : 0;
    block = paged ? 0 : block;
    for (uint32_t i = 0; i < kv->n_tensors; i++) {
        const fp_kv_tensor *t = &kv->tensors[i];
        if (!fp_kv_tensor_bytes(present && t->present ? t->present : t->past, 0, dtype, tokens, block, &b) ||
            !g_uint64_checked_add(&sum, sum, b))
            return UINT64_MAX;
    }
    return sum;
}

uint64_t fp_kv_cache_held(const fp_kv_cache *kv, fp_dtype dtype, int64_t block)
{
    uint64_t self = sum_bytes(kv, true, dtype, block), cross = fp_kv_cache_cross(kv, dtype, block), sum = 0;
    return self != UINT64_MAX && cross != UINT64_MAX && g_uint64_checked_add(&sum, self, cross) ? sum : UINT64_MAX;
}

uint64_t fp_kv_sizing_held(void *sizing)
{
    const fp_kv_sizing *z = sizing;
    return fp_kv_cache_held(z->kv, z->dtype, z->block);
}

uint64_t fp_kv_cache_past(const fp_kv_cache *kv, fp_dtype dtype)
{
    return kv->share_buffer || fp_kv_cache_paged(kv) ? 0 : sum_bytes(kv, false, dtype, 0);
}

bool fp_kv_cache_paged(const fp_kv_cache *kv) { return kv->tensors[0].paged; }

uint64_t fp_kv_cache_state_per_sequence(const fp_kv_cache *kv)
{
    uint64_t sum = 0, numel = 0, b = 0;
    for (uint32_t i = 0; i < kv->n_state; i++) {
        const fp_shape *s = &kv->state[i].past->shape;
        if (s->rank < 1 || !fp_shape_numel(&(fp_shape){s->rank - 1, s->dims + 1}, &numel) ||
            !fp_dtype_bytes(kv->state[i].past->dtype, numel, &b) || !g_uint64_checked_add(&sum, sum, b))
            return 0;
    }
    return sum;
}

int64_t fp_kv_cache_tokens(const fp_kv_cache *kv)
{
    if (fp_kv_cache_paged(kv))
        return -1;
    const fp_value *v = kv->tensors[0].present ? kv->tensors[0].present : kv->tensors[0].past;
    fp_dim t = now_dim(v, 2);
    return fp_dim_known(t) ? t.value : -1;
}

bool fp_kv_cache_step(const fp_kv_cache *kv, int64_t *batch, int64_t *past, int64_t *new_tokens)
{
    const fp_value *p = kv->tensors[0].past, *q = kv->tensors[0].present;
    if (!q || fp_kv_cache_paged(kv))
        return false;
    fp_dim b = now_dim(p, 0), pt = now_dim(p, 2), qt = now_dim(q, 2);
    if (!fp_dim_known(b) || !fp_dim_known(pt) || !fp_dim_known(qt) || qt.value < pt.value)
        return false;
    *batch = b.value;
    *past = pt.value;
    *new_tokens = qt.value - *past;
    return true;
}

fp_dtype fp_kv_cache_dtype_at(const fp_kv_cache *kv, fp_dtype what_if)
{
    return what_if != FP_DT_UNDEFINED ? what_if : kv->dtype;
}

uint64_t fp_kv_cache_token_bytes(const fp_kv_cache *kv, fp_dtype dtype)
{
    if (!kv->bytes_per_token || dtype == FP_DT_UNDEFINED)
        return kv->bytes_per_token;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < kv->n_tensors; i++) {
        uint64_t b = 0;
        if (!token_bytes(&kv->tensors[i], dtype, &b))
            return 0;
        sum += b;
    }
    return sum;
}

GHashTable *fp_kv_cache_outside(const fp_kv_cache *kv)
{
    GHashTable *set = g_hash_table_new(NULL, NULL);
    for (uint32_t i = 0; i < kv->n_tensors; i++) {
        g_hash_table_add(set, (gpointer)kv->tensors[i].past);
        if (kv->tensors[i].present)
            g_hash_table_add(set, (gpointer)kv->tensors[i].present);
    }
    for (uint32_t i = 0; i < kv->n_cross; i++)
        g_hash_table_add(set, (gpointer)kv->cross[i].past);
    return set;
}

/* The step analysed: decode (1 new token, context - 1 past), prefill (context new, no past) or a
 * training step (bound as a prefill: the whole sequence at once, without the cache). */
typedef enum { FP_PHASE_DECODE, FP_PHASE_PREFILL, FP_PHASE_TRAIN } fp_decoder_phase;

/* Parses "decode" or "prefill"; false for anything else. */
static bool phase_parse(const char *s, fp_decoder_phase *out)
{
    if (strcmp(s, "decode") == 0 || strcmp(s, "prefill") == 0) {
        *out = strcmp(s, "decode") == 0 ? FP_PHASE_DECODE : FP_PHASE_PREFILL;
        return true;
    }
    return false;
}

/* The binding note's line for `phase` at `context` tokens, `said` listing the dims bound. */
static char *step_note(fp_decoder_phase phase, int64_t context, const char *said)
{
    switch (phase) {
    case FP_PHASE_DECODE:
        return g_strdup_printf("a decode step at a context of %" G_GINT64_FORMAT " tokens (%s)", context, said);
    case FP_PHASE_PREFILL:
        return g_strdup_printf("a prefill of %" G_GINT64_FORMAT " tokens (%s)", context, said);
    default:
        return g_strdup_printf("trained as a full sequence of %" G_GINT64_FORMAT " tokens (%s), its present "
                               "outputs not kept",
                               context, said);
    }
}

/* Appends to *dims (n entries, g_renew'd; names g_strdup'd, as fp_bind_parse_dims makes them) the
 * bindings of kv's new, past and total token dims for `phase` at `context` tokens per sequence
 * (total = context), skipping those the entries already name and the batch (batch_dim as in
 * fp_bind_is_batch). *note (g_free) says what was added (step_note); NULL when nothing was. */
static void bind_tokens(const fp_kv_cache *kv, const fp_model *m, const char *batch_dim, int64_t context,
                        fp_decoder_phase phase, fp_dim_binding **dims, size_t *n, char **note)
{
    const char *syms[] = {kv->new_dim, kv->past_dim, kv->total_dim};
    bool decode = phase == FP_PHASE_DECODE;
    const int64_t vals[] = {decode ? 1 : context, decode ? context - 1 : 0, context};
    g_autoptr(GString) said = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(syms); i++) {
        if (!syms[i] || fp_bind_names(*dims, *n, syms[i]) || fp_bind_is_batch(m, batch_dim, syms[i]))
            continue;
        *dims = g_renew(fp_dim_binding, *dims, *n + 1);
        (*dims)[(*n)++] = (fp_dim_binding){g_strdup(syms[i]), vals[i]};
        g_string_append_printf(said, "%s%s=%" G_GINT64_FORMAT, said->len ? ", " : "", syms[i], vals[i]);
    }
    *note = said->len ? step_note(phase, context, said->str) : NULL;
}

/* Appends to *dims the binding of kv's cross-attention token dim (a symbol no entry names, that
 * some input declares) to the encoder length its genai_config.json gives
 * (fp_genai_encoder_tokens); *note (g_free) says so, NULL when nothing was bound. */
static void bind_cross(const fp_kv_cache *kv, const fp_model *m, fp_dim_binding **dims, size_t *n, char **note)
{
    int64_t tokens = kv->genai ? fp_genai_encoder_tokens(kv->genai) : -1;
    *note = NULL;
    if (!kv->cross_dim || tokens < 1 || fp_bind_names(*dims, *n, kv->cross_dim) ||
        !input_declares(m->main, kv->cross_dim))
        return;
    *dims = g_renew(fp_dim_binding, *dims, *n + 1);
    (*dims)[(*n)++] = (fp_dim_binding){g_strdup(kv->cross_dim), tokens};
    *note = g_strdup_printf("the encoder's length %s=%" G_GINT64_FORMAT " (%s: model.type %s, onnxruntime-genai's "
                            "3000 audio frames halved by the encoder)",
                            kv->cross_dim, tokens, kv->config, kv->genai->model_type);
}

bool fp_decoder_phase_check(const char *phase, GError **error)
{
    fp_decoder_phase p;
    if (!phase || phase_parse(phase, &p))
        return true;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--phase %s: expected decode or prefill", phase);
    return false;
}

bool fp_kv_cache_bind(const fp_kv_cache *kv, const fp_model *m, const fp_decoder_step *step, fp_dim_binding **dims,
                      size_t *n, char **note, GError **error)
{
    fp_decoder_phase phase = step->training ? FP_PHASE_TRAIN : FP_PHASE_DECODE;
    const char *opt = step->training ? "--seq" : "--context";
    *note = NULL;
    if (!fp_decoder_phase_check(step->phase, error))
        return false;
    if (step->phase)
        phase_parse(step->phase, &phase);
    if (step->context < 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %" G_GINT64_FORMAT ": must be positive", opt,
                    step->context);
        return false;
    }
    if (!kv && (step->context || step->phase)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s: %s: the model has no KV cache (no past key and value inputs found)", m->path,
                    step->training ? "--seq" : "--context / --phase");
        return false;
    }
    if (!kv || step->inputs)
        return true;
    int64_t context = step->context ? step->context : FP_DECODER_DEFAULT_CONTEXT;
    const fp_dim_binding *seq = step->training && kv->new_dim ? fp_bind_find(*dims, *n, kv->new_dim) : NULL;
    if (seq) /* a training sequence bound by --dim: the total follows it */
        context = seq->value;
    g_autofree char *said = NULL, *cross = NULL;
    bind_tokens(kv, m, step->batch_dim, context, phase, dims, n, &said);
    bind_cross(kv, m, dims, n, &cross);
    if (said || cross)
        *note = g_strdup_printf("decoder: %s%s%s; %s to change", said ? said : "", said && cross ? "; " : "",
                                cross ? cross : "", step->training ? "--seq N or --dim NAME=N" : "--dim NAME=N");
    return true;
}
