/* decoder_config.c - a decoder's KV cache named by onnxruntime-genai's genai_config.json, checked
 * against the cache found from the graph and the declared dims (decoder.h: fp_kv_cache_configure). */
#include "analysis/decoder.h"

#include <stdlib.h>
#include <string.h>

/* One line naming c's file and `field`. */
static bool disagree(GError **error, const fp_genai_config *c, const char *field, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static bool disagree(GError **error, const fp_genai_config *c, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *why = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s: %s", c->path, field, why);
    return false;
}

/* Whether name is template tmpl (NULL: none) with a layer number (decimal, no sign, no leading
 * zero, below 2^31) for its %d; the number into *layer. */
static bool matches(const char *tmpl, const char *name, uint32_t *layer)
{
    const char *d = tmpl ? strstr(tmpl, "%d") : NULL;
    if (!d)
        return false;
    size_t pre = (size_t)(d - tmpl), post = strlen(d + 2), len = strlen(name);
    if (len <= pre + post || strncmp(name, tmpl, pre) != 0 || strcmp(name + len - post, d + 2) != 0)
        return false;
    size_t digits = len - pre - post;
    const char *num = name + pre;
    if (digits > 10 || (num[0] == '0' && digits > 1))
        return false;
    for (size_t i = 0; i < digits; i++)
        if (num[i] < '0' || num[i] > '9')
            return false;
    uint64_t v = strtoull(num, NULL, 10);
    if (v > G_MAXINT32)
        return false;
    *layer = (uint32_t)v;
    return true;
}

/* The value of `list` (graph inputs or outputs) called name, or NULL. */
static const fp_value *named(const GPtrArray *list, const char *name)
{
    for (guint i = 0; i < list->len; i++)
        if (strcmp(((const fp_value *)list->pdata[i])->name, name) == 0)
            return list->pdata[i];
    return NULL;
}

/* The kind c's layer_types gives layer `layer` ("absent" past its end). */
static const char *layer_kind(const fp_genai_config *c, uint32_t layer)
{
    for (uint32_t i = 0; c->layer_types && c->layer_types[i]; i++)
        if (i == layer)
            return c->layer_types[i];
    return "absent";
}

/* What one past template names: K, V or both (packed), the present template of the same tensor,
 * and the field naming the template. */
typedef struct {
    const char *past, *present, *field;
    bool value, packed;
} kv_names;

/* The tensor graph input v is under c's templates into *t: 1; 0 (t untouched) when no template
 * names it; -1 with the error when it is named but not a KV tensor. */
static int tensor_of(const fp_value *v, const fp_genai_config *c, const fp_model *m, fp_kv_tensor *t, GError **error)
{
    const kv_names names[] = {
        {c->past_key, c->present_key, "model.decoder.inputs.past_key_names", false, false},
        {c->past_value, c->present_value, "model.decoder.inputs.past_value_names", true, false},
        {c->past_packed, c->present_packed, "model.decoder.inputs.past_names", true, true},
    };
    uint32_t layer = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        const kv_names *n = &names[i];
        if (!matches(n->past, v->name, &layer))
            continue;
        int rank = n->packed ? 5 : 4;
        if (v->decl_shape.rank != rank || !fp_dtype_is_float(v->decl_dtype))
            return -!disagree(error, c, n->field, "'%s' of %s is no float tensor of rank %d (a KV cache's)", v->name,
                              m->path, rank);
        g_autofree char *present = n->present ? fp_genai_name(n->present, layer) : NULL;
        if (!fp_genai_layer_attends(c, layer))
            return -!disagree(error, c, "model.decoder.layer_types",
                              "layer %u is '%s', but %s has its KV input '%s' (only full_attention layers have one)",
                              layer, layer_kind(c, layer), m->path, v->name);
        *t = (fp_kv_tensor){.past = v,
                            .present = present ? named(m->main->outputs, present) : NULL,
                            .value = n->value,
                            .packed = n->packed,
                            .paged = c->paged && !n->packed,
                            .layer = layer};
        return 1;
    }
    return 0;
}

/* The layers of found's tensors, each counted once. */
static uint32_t count_layers(const GArray *found)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(NULL, NULL);
    for (guint i = 0; i < found->len; i++)
        g_hash_table_add(seen, GUINT_TO_POINTER(g_array_index(found, fp_kv_tensor, i).layer + 1u));
    return g_hash_table_size(seen);
}

/* Whether every past input of the cache found from the graph is among found's; false with the
 * error naming the template that should name it. */
static bool covers(const fp_kv_cache *graph, const GArray *found, const fp_genai_config *c, const fp_model *m,
                   GError **error)
{
    for (uint32_t i = 0; i < graph->n_tensors; i++) {
        const fp_kv_tensor *t = &graph->tensors[i];
        bool in = false;
        for (guint j = 0; j < found->len && !in; j++)
            in = g_array_index(found, fp_kv_tensor, j).past == t->past;
        if (in)
            continue;
        const char *field = t->packed  ? "model.decoder.inputs.past_names"
                            : t->value ? "model.decoder.inputs.past_value_names"
                                       : "model.decoder.inputs.past_key_names";
        const char *tmpl = t->packed ? c->past_packed : t->value ? c->past_value : c->past_key;
        return disagree(error, c, field, "'%s' does not name '%s', a past %s input of %s's KV cache", tmpl ? tmpl : "",
                        t->past->name,
                        t->packed  ? "K and V"
                        : t->value ? "V"
                                   : "K",
                        m->path);
    }
    return true;
}

/* A count of c (-1: absent) against the graph's (-1: unknown or differing). */
static bool same_count(int64_t config, int64_t graph, const fp_genai_config *c, const char *field, const fp_model *m,
                       GError **error)
{
    if (config < 0 || graph < 0 || config == graph)
        return true;
    return disagree(error, c, field, "%" G_GINT64_FORMAT ", but %s declares %" G_GINT64_FORMAT, config, m->path, graph);
}

/* The declared dim `axis` of every tensor of `found` against count (-1: absent), the config's field. */
static bool cross_count(const GArray *found, int axis, int64_t count, const fp_genai_config *c, const char *field,
                        const fp_model *m, GError **error)
{
    for (guint i = 0; i < found->len; i++) {
        const fp_value *v = g_array_index(found, fp_kv_tensor, i).past;
        int64_t d = v->decl_shape.dims[axis].value;
        if (count >= 0 && d >= 0 && d != count)
            return disagree(error, c, field, "%" G_GINT64_FORMAT ", but %s declares '%s' with %" G_GINT64_FORMAT, count,
                            m->path, v->name, d);
    }
    return true;
}

/* A paged cache's declared blocks (axis 0) and block slots (axis 1) against c's
 * engine.dynamic_batching num_blocks (-1: absent) and block_size. */
static bool paged_counts(const fp_kv_cache *kv, const fp_genai_config *c, const fp_model *m, GError **error)
{
    g_autoptr(GArray) found = g_array_new(FALSE, TRUE, sizeof(fp_kv_tensor));
    g_array_append_vals(found, kv->tensors, kv->n_tensors);
    return !fp_kv_cache_paged(kv) ||
           (cross_count(found, 0, c->num_blocks, c, "engine.dynamic_batching.num_blocks", m, error) &&
            cross_count(found, 1, c->block_size, c, "engine.dynamic_batching.block_size", m, error));
}

/* Into kv, the state tensors c's past_conv_names names in m (float, rank 3 [batch, channels,
 * conv_cache_size], as onnxruntime-genai's LFM2Cache requires, of layers that do not attend), each
 * with the output present_conv_names gives for its layer; false with the error when one is not. */
static bool configure_state(fp_kv_cache *kv, const fp_genai_config *c, const fp_model *m, GError **error)
{
    g_autoptr(GArray) found = g_array_new(FALSE, TRUE, sizeof(fp_kv_tensor));
    const char *field = "model.decoder.inputs.past_conv_names";
    for (guint i = 0; c->past_conv && i < m->main->inputs->len; i++) {
        const fp_value *v = m->main->inputs->pdata[i];
        uint32_t layer = 0;
        if (!matches(c->past_conv, v->name, &layer))
            continue;
        if (v->decl_shape.rank != 3 || !fp_dtype_is_float(v->decl_dtype))
            return disagree(error, c, field, "'%s' of %s is no float tensor of rank 3 (a conv state's)", v->name,
                            m->path);
        if (c->layer_types && fp_genai_layer_attends(c, layer))
            return disagree(error, c, "model.decoder.layer_types",
                            "layer %u is 'full_attention', but %s has its conv state input '%s'", layer, m->path,
                            v->name);
        g_autofree char *present = c->present_conv ? fp_genai_name(c->present_conv, layer) : NULL;
        fp_kv_tensor t = {.past = v, .present = present ? named(m->main->outputs, present) : NULL, .layer = layer};
        g_array_append_val(found, t);
    }
    kv->n_state = found->len;
    kv->state = found->len ? (fp_kv_tensor *)g_array_free(g_steal_pointer(&found), FALSE) : NULL;
    return true;
}

/* c's layer_types against its num_hidden_layers (onnxruntime-genai's LFM2Cache requires one kind
 * per layer). */
static bool layer_types_ok(const fp_genai_config *c, GError **error)
{
    guint n = c->layer_types ? g_strv_length(c->layer_types) : 0;
    if (!c->layer_types || c->layers < 0 || n == (guint)c->layers)
        return true;
    return disagree(error, c, "model.decoder.layer_types",
                    "%u kinds, but num_hidden_layers is %" G_GINT64_FORMAT " (one kind per layer)", n, c->layers);
}

/* kv's cross-attention tensors from c's cross_past_key_names and cross_past_value_names, when it
 * has them (else those found by name stay): float tensors of rank 4 whose heads (axis 1) and head
 * size (axis 3) are c's num_attention_heads and head_size (onnxruntime-genai's CrossCache shape);
 * false with the error when a template names no input or a tensor disagrees. */
static bool configure_cross(fp_kv_cache *kv, const fp_genai_config *c, const fp_model *m, GError **error)
{
    const char *tmpl[] = {c->cross_key, c->cross_value};
    const char *field[] = {"model.decoder.inputs.cross_past_key_names", "model.decoder.inputs.cross_past_value_names"};
    g_autoptr(GArray) found = g_array_new(FALSE, TRUE, sizeof(fp_kv_tensor));
    g_autoptr(GHashTable) layers = g_hash_table_new(NULL, NULL);
    for (size_t k = 0; k < G_N_ELEMENTS(tmpl); k++) {
        guint before = found->len;
        for (guint i = 0; tmpl[k] && i < m->main->inputs->len; i++) {
            const fp_value *v = m->main->inputs->pdata[i];
            uint32_t layer = 0;
            if (!matches(tmpl[k], v->name, &layer))
                continue;
            if (v->decl_shape.rank != 4 || !fp_dtype_is_float(v->decl_dtype))
                return disagree(error, c, field[k], "'%s' of %s is no float tensor of rank 4 (a KV cache's)", v->name,
                                m->path);
            fp_kv_tensor t = {.past = v, .value = k == 1, .layer = layer};
            g_array_append_val(found, t);
            g_hash_table_add(layers, GUINT_TO_POINTER(layer + 1u));
        }
        if (tmpl[k] && found->len == before)
            return disagree(error, c, field[k], "'%s' names no input of %s", tmpl[k], m->path);
    }
    if (!c->cross_key && !c->cross_value)
        return true;
    if (!cross_count(found, 1, c->heads, c, "model.decoder.num_attention_heads", m, error) ||
        !cross_count(found, 3, c->head_size, c, "model.decoder.head_size", m, error))
        return false;
    fp_kv_cache_set_cross(kv, g_steal_pointer(&found), g_hash_table_size(layers));
    return true;
}

bool fp_kv_cache_configure(fp_kv_cache **kv, fp_genai_config **cp, const fp_model *m, bool asked, GError **error)
{
    const fp_genai_config *c = *cp;
    g_autoptr(GArray) found = g_array_new(FALSE, TRUE, sizeof(fp_kv_tensor));
    if (!layer_types_ok(c, error))
        return false;
    for (guint i = 0; i < m->main->inputs->len; i++) {
        fp_kv_tensor t;
        int r = tensor_of(m->main->inputs->pdata[i], c, m, &t, error);
        if (r < 0)
            return false;
        if (r)
            g_array_append_val(found, t);
    }
    if (!found->len && (*kv || asked))
        return disagree(error, c, "model.decoder.inputs.past_key_names", "'%s' names no input of %s%s%s%s",
                        c->past_packed ? c->past_packed : c->past_key, m->path,
                        *kv ? ", whose KV cache (found from its graph) reads '" : ", which has no KV cache",
                        *kv ? (*kv)->tensors[0].past->name : "", *kv ? "'" : "");
    if (!found->len || (*kv && !covers(*kv, found, c, m, error)))
        return !found->len;
    uint32_t layers = count_layers(found);
    if (c->layers >= 0 && layers > c->layers)
        return disagree(error, c, "model.decoder.num_hidden_layers",
                        "%" G_GINT64_FORMAT ", but %s has KV inputs of %u layers", c->layers, m->path, layers);
    g_autoptr(fp_kv_cache) named = fp_kv_cache_new(m, g_steal_pointer(&found), layers);
    if (!same_count(c->kv_heads, named->kv_heads, c, "model.decoder.num_key_value_heads", m, error) ||
        !same_count(c->head_size, named->head_dim, c, "model.decoder.head_size", m, error))
        return false;
    if (!paged_counts(named, c, m, error) || !configure_cross(named, c, m, error) ||
        !configure_state(named, c, m, error))
        return false;
    named->config = g_strdup(c->path);
    named->max_length = c->max_length;
    named->share_buffer = c->share_buffer;
    named->genai = g_steal_pointer(cp);
    fp_kv_cache_free(*kv);
    *kv = g_steal_pointer(&named);
    return true;
}
