/* decoder_config.c - a KV cache found from the graph checked against onnxruntime-genai's
 * genai_config.json, and the runtime facts taken from it (decoder.h: fp_kv_cache_configure). */
#include "analysis/decoder.h"

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

/* Whether value v (NULL: none found) is named as template tmpl says for `layer`; false with the
 * error naming `field` when it is not. tmpl NULL: nothing to check. */
static bool named(const fp_value *v, const char *tmpl, uint32_t layer, const fp_genai_config *c, const char *field,
                  const fp_model *m, GError **error)
{
    if (!tmpl || !v)
        return true;
    g_autofree char *want = fp_genai_name(tmpl, layer);
    if (strcmp(v->name, want) == 0)
        return true;
    return disagree(error, c, field, "'%s' names '%s' for layer %u; %s has '%s' there", tmpl, want, layer, m->path,
                    v->name);
}

/* Each tensor's past input and present output named by c's templates. */
static bool check_names(const fp_kv_cache *kv, const fp_genai_config *c, const fp_model *m, GError **error)
{
    for (uint32_t i = 0; i < kv->n_tensors; i++) {
        const fp_kv_tensor *t = &kv->tensors[i];
        const fp_value *present = t->present && t->present->is_output ? t->present : NULL;
        const char *past = t->packed ? c->past_packed : t->value ? c->past_value : c->past_key;
        const char *pres = t->packed ? c->present_packed : t->value ? c->present_value : c->present_key;
        const char *past_field = t->packed  ? "model.decoder.inputs.past_names"
                                 : t->value ? "model.decoder.inputs.past_value_names"
                                            : "model.decoder.inputs.past_key_names";
        const char *pres_field = t->packed  ? "model.decoder.outputs.present_names"
                                 : t->value ? "model.decoder.outputs.present_value_names"
                                            : "model.decoder.outputs.present_key_names";
        if (!named(t->past, past, t->layer, c, past_field, m, error) ||
            !named(present, pres, t->layer, c, pres_field, m, error))
            return false;
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

bool fp_kv_cache_configure(fp_kv_cache *kv, const fp_genai_config *c, const fp_model *m, GError **error)
{
    if (!kv)
        return disagree(error, c, "model.decoder", "describes a decoder, but %s has no past key and value inputs",
                        m->path);
    if (!same_count(c->layers, kv->layers, c, "model.decoder.num_hidden_layers", m, error) ||
        !same_count(c->kv_heads, kv->kv_heads, c, "model.decoder.num_key_value_heads", m, error) ||
        !same_count(c->head_size, kv->head_dim, c, "model.decoder.head_size", m, error) ||
        !check_names(kv, c, m, error))
        return false;
    g_free(kv->config);
    kv->config = g_strdup(c->path);
    kv->max_length = c->max_length;
    kv->share_buffer = c->share_buffer;
    return true;
}
