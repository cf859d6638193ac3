/* onnx_write.c - binary ONNX from protobuf text, float and uint8 initializers filled with a fixed
 * pattern (see onnx_write.h). */
#include "frontends/onnx/onnx_write.h"

#include <math.h>
#include <string.h>

#include "frontends/onnx/onnx.h"
#include "frontends/pbtxt/pbtxt.h"
#include "onnx.pb-c.h"

#define FLOAT_TYPE 1                       /* onnx.TensorProto.FLOAT */
#define UINT8_TYPE 2                       /* onnx.TensorProto.UINT8 */
#define MAX_FILL_BYTES ((uint64_t)1 << 30) /* an initializer this writer fills */

/* Elements of t (its dims' product); false when a dim is negative or the product exceeds max. */
static bool elements(const Onnx__TensorProto *t, uint64_t max, uint64_t *n)
{
    *n = 1;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || (t->dims[i] > 0 && *n > max / (uint64_t)t->dims[i]))
            return false;
        *n *= (uint64_t)t->dims[i];
    }
    return true;
}

/* The writer's pattern at index i of initializer number `seed`: a multiplicative hash, shifted by
 * the seed. */
static uint64_t pattern(uint64_t i, uint64_t seed) { return (i + seed * 7919u) * 2654435761u; }

/* Fills t, the model's initializer number `seed`, with n floats of the pattern onnx_write.h
 * describes (a multiplicative hash of the index, shifted by the seed, gives u in [-1, 1); the scale
 * sqrt(3 / fan_in) makes its variance 1 / fan_in). */
static void fill(Onnx__TensorProto *t, uint64_t n, uint64_t seed)
{
    float *v = g_malloc(MAX(n, 1) * sizeof *v);
    bool weight = t->n_dims >= 2;
    uint64_t fan_in = weight && t->dims[0] > 0 ? MAX(n / (uint64_t)t->dims[0], 1) : 1;
    double scale = sqrt(3.0 / (double)fan_in);
    for (uint64_t i = 0; i < n; i++) {
        double u = (double)(pattern(i, seed) % 65536) / 32768.0 - 1.0;
        v[i] = weight ? (float)(u * scale) : (float)(1.0 + u / 2);
    }
    t->has_raw_data = 1;
    t->raw_data.len = n * sizeof *v;
    t->raw_data.data = (uint8_t *)v;
}

/* Fills t, the model's initializer number `seed`, with n bytes of the same hash (packed 4-bit
 * weights: each nibble in 0..15). */
static void fill_bytes(Onnx__TensorProto *t, uint64_t n, uint64_t seed)
{
    uint8_t *v = g_malloc(MAX(n, 1));
    for (uint64_t i = 0; i < n; i++)
        v[i] = (uint8_t)(pattern(i, seed) >> 8);
    t->has_raw_data = 1;
    t->raw_data.len = n;
    t->raw_data.data = v;
}

/* True when t is a float or uint8 tensor declared without any data. */
static bool needs_data(const Onnx__TensorProto *t)
{
    return t->has_data_type && (t->data_type == FLOAT_TYPE || t->data_type == UINT8_TYPE) && !t->has_raw_data &&
           t->n_float_data == 0 && t->n_int32_data == 0 && t->n_external_data == 0;
}

GBytes *fp_onnx_write_text(const char *text, size_t len, GError **error)
{
    Onnx__ModelProto *mp = (Onnx__ModelProto *)fp_pbtxt_parse(&onnx__model_proto__descriptor, text, len, 0, NULL,
                                                              error);
    if (!mp)
        return NULL;
    for (size_t i = 0; mp->graph && i < mp->graph->n_initializer; i++) {
        Onnx__TensorProto *t = mp->graph->initializer[i];
        uint64_t n;
        if (!needs_data(t))
            continue;
        if (!elements(t, MAX_FILL_BYTES / (t->data_type == UINT8_TYPE ? 1 : sizeof(float)), &n)) {
            g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_LIMIT, "initializer '%s': over 1 GiB or a negative dim",
                        t->name ? t->name : "");
            onnx__model_proto__free_unpacked(mp, NULL);
            return NULL;
        }
        if (t->data_type == UINT8_TYPE)
            fill_bytes(t, n, i);
        else
            fill(t, n, i);
    }
    size_t size = onnx__model_proto__get_packed_size(mp);
    uint8_t *buf = g_malloc(MAX(size, 1));
    onnx__model_proto__pack(mp, buf);
    onnx__model_proto__free_unpacked(mp, NULL);
    return g_bytes_new_take(buf, size);
}
