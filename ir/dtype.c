/* dtype.c - element type names and sizes. */
#include "dtype.h"

#include <glib.h>
#include <math.h>
#include <string.h>

static const struct {
    const char *name, *onnx;
    unsigned bits;
} dtypes[FP_DT_COUNT] = {
#define X(id, num, name, bits) [num] = {name, #id, bits},
    FP_DTYPES(X)
#undef X
};

const char *fp_dtype_name(fp_dtype t) { return fp_dtype_valid(t) ? dtypes[t].name : "undefined"; }

unsigned fp_dtype_bits(fp_dtype t) { return fp_dtype_valid(t) ? dtypes[t].bits : 0; }

bool fp_dtype_is_float(fp_dtype t)
{
    switch (t) {
    case FP_DT_FLOAT:
    case FP_DT_DOUBLE:
    case FP_DT_FLOAT16:
    case FP_DT_BFLOAT16:
    case FP_DT_COMPLEX64:
    case FP_DT_COMPLEX128:
    case FP_DT_FLOAT8E4M3FN:
    case FP_DT_FLOAT8E4M3FNUZ:
    case FP_DT_FLOAT8E5M2:
    case FP_DT_FLOAT8E5M2FNUZ:
    case FP_DT_FLOAT4E2M1:
        return true;
    default:
        return false;
    }
}

fp_dtype fp_dtype_from_name(const char *name)
{
    static const struct {
        const char *alias;
        fp_dtype t;
    } aliases[] = {{"fp32", FP_DT_FLOAT},  {"fp16", FP_DT_FLOAT16}, {"bf16", FP_DT_BFLOAT16},
                   {"fp64", FP_DT_DOUBLE}, {"half", FP_DT_FLOAT16}, {"float", FP_DT_FLOAT}};
    for (size_t i = 0; i < G_N_ELEMENTS(aliases); i++)
        if (g_ascii_strcasecmp(name, aliases[i].alias) == 0)
            return aliases[i].t;
    for (int i = 1; i < FP_DT_COUNT; i++)
        if (g_ascii_strcasecmp(name, dtypes[i].name) == 0 || g_ascii_strcasecmp(name, dtypes[i].onnx) == 0)
            return (fp_dtype)i;
    return FP_DT_UNDEFINED;
}

bool fp_dtype_bytes(fp_dtype t, uint64_t n, uint64_t *bytes)
{
    unsigned bits = fp_dtype_bits(t);
    if (!bits)
        return false;
    if (bits < 8) {
        *bytes = n / (8 / bits) + (n % (8 / bits) != 0);
        return true;
    }
    return g_uint64_checked_mul(bytes, n, bits / 8);
}

double fp_half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

uint16_t fp_double_to_half(double d)
{
    float f = (float)d;
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff)
        return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        m |= 0x800000;
        return (uint16_t)(sign | ((m >> (14 - e)) + ((m >> (13 - e)) & 1)));
    }
    return (uint16_t)(sign | (uint32_t)(e << 10) | ((m >> 13) + ((m >> 12) & 1)));
}
