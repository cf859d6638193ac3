/* decoder_cross.c - the cross-attention K and V of an encoder-decoder (Whisper, Marian, T5): found
 * by name among the graph inputs, and their bytes, of the encoder's length whatever the context
 * (decoder.h). Rules and sources: docs/memory.md, "KV cache". */
#include "analysis/decoder.h"

#include <string.h>

/* Whether graph input name is a cross-attention K or V by its name: Optimum's
 * past_key_values.N.encoder.key / .value, onnxruntime-genai's past_key_cross_N /
 * past_value_cross_N; *value: V (else K). */
static bool cross_name(const char *name, bool *value)
{
    const char *enc = strstr(name, ".encoder.");
    if (enc) {
        const char *last = enc + strlen(".encoder.");
        *value = strcmp(last, "value") == 0;
        return *value || strcmp(last, "key") == 0;
    }
    if (!strstr(name, "_cross"))
        return false;
    *value = strstr(name, "value") != NULL;
    return *value || strstr(name, "key") != NULL;
}

/* Whether v is one of kv's self-attention past inputs. */
static bool in_self(const fp_kv_cache *kv, const fp_value *v)
{
    for (uint32_t i = 0; i < kv->n_tensors; i++)
        if (kv->tensors[i].past == v)
            return true;
    return false;
}

/* The symbol, or the number (-1: they differ or are unknown), of axis 2 that every cross tensor
 * declares, into kv. */
static void cross_dims(fp_kv_cache *kv)
{
    kv->cross_dim = kv->cross[0].past->decl_shape.dims[2].sym;
    kv->cross_tokens = kv->cross[0].past->decl_shape.dims[2].value;
    for (uint32_t i = 1; i < kv->n_cross; i++) {
        fp_dim d = kv->cross[i].past->decl_shape.dims[2];
        if (g_strcmp0(d.sym, kv->cross_dim) != 0)
            kv->cross_dim = NULL;
        if (d.value != kv->cross_tokens)
            kv->cross_tokens = -1;
    }
    if (kv->cross_dim || kv->cross_tokens < 1)
        kv->cross_tokens = -1;
}

void fp_kv_cache_find_cross(fp_kv_cache *kv, const fp_model *m)
{
    const fp_graph *g = m->main;
    g_autoptr(GArray) found = g_array_new(FALSE, TRUE, sizeof(fp_kv_tensor));
    uint32_t keys = 0, values = 0;
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_value *v = g->inputs->pdata[i];
        bool value = false;
        if (v->decl_shape.rank != 4 || !fp_dtype_is_float(v->decl_dtype) || !cross_name(v->name, &value) ||
            in_self(kv, v))
            continue;
        fp_kv_tensor t = {.past = v, .value = value, .layer = value ? values++ : keys++};
        g_array_append_val(found, t);
    }
    fp_kv_cache_set_cross(kv, g_steal_pointer(&found), MAX(keys, values));
}

void fp_kv_cache_set_cross(fp_kv_cache *kv, GArray *tensors, uint32_t layers)
{
    g_free(kv->cross);
    kv->n_cross = tensors->len;
    kv->cross_layers = layers;
    kv->cross = tensors->len ? (fp_kv_tensor *)g_array_free(tensors, FALSE) : NULL;
    if (!kv->n_cross)
        g_array_free(tensors, TRUE);
    kv->cross_dim = NULL;
    kv->cross_tokens = -1;
    if (kv->n_cross)
        cross_dims(kv);
}

/* The sum of fp_kv_tensor_bytes over kv's cross tensors (rank 4) from axis `from`; UINT64_MAX when
 * unknown. */
static uint64_t cross_sum(const fp_kv_cache *kv, int from, fp_dtype dtype, int64_t block)
{
    uint64_t sum = 0, b = 0;
    for (uint32_t i = 0; i < kv->n_cross; i++) {
        const fp_value *v = kv->cross[i].past;
        if (v->shape.rank != 4 || !fp_kv_tensor_bytes(v, from, dtype, 0, block, &b) ||
            !g_uint64_checked_add(&sum, sum, b))
            return UINT64_MAX;
    }
    return sum;
}

uint64_t fp_kv_cache_cross(const fp_kv_cache *kv, fp_dtype dtype, int64_t block)
{
    return cross_sum(kv, 0, dtype, block);
}

uint64_t fp_kv_cache_cross_per_sequence(const fp_kv_cache *kv, fp_dtype dtype)
{
    uint64_t b = cross_sum(kv, 1, dtype, 0);
    return b == UINT64_MAX ? 0 : b;
}
