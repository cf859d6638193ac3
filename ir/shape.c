/* shape.c - helpers on fp_shape: static test, element count, printing. */
#include "shape.h"

#include <glib.h>

const char fp_sval_unknown[] = "?";

bool fp_shape_static(const fp_shape *s)
{
    if (s->rank < 0)
        return false;
    for (int32_t i = 0; i < s->rank; i++)
        if (!fp_dim_known(s->dims[i]))
            return false;
    return true;
}

/* One pass over the dims (every pass asks for element counts, several times per value). */
bool fp_shape_numel(const fp_shape *s, uint64_t *n)
{
    if (s->rank < 0)
        return false;
    uint64_t acc = 1;
    bool overflow = false;
    for (int32_t i = 0; i < s->rank; i++) {
        const fp_dim *d = &s->dims[i];
        if (d->sym || d->value < 0)
            return false;
        overflow |= !g_uint64_checked_mul(&acc, acc, (uint64_t)d->value);
    }
    if (overflow)
        return false;
    *n = acc;
    return true;
}

/* Writes the decimal digits of v (>= 0) ending just before `end`; returns where they start. */
static char *put_u64(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

/* Without printf: fusion explanations format shapes for every candidate a constraint refuses
 * (hundreds of thousands in a big graph). */
char *fp_shape_to_string(const fp_shape *s)
{
    if (s->rank < 0)
        return g_strdup("?");
    if (s->rank == 0)
        return g_strdup("scalar");
    GString *str = g_string_sized_new(16 + 8 * (gsize)s->rank);
    for (int32_t i = 0; i < s->rank; i++) {
        char num[24], *end = num + sizeof num;
        if (i)
            g_string_append_c(str, 'x');
        if (s->dims[i].sym) {
            g_string_append(str, s->dims[i].sym);
        } else if (s->dims[i].value >= 0) {
            char *p = put_u64(end, (uint64_t)s->dims[i].value);
            g_string_append_len(str, p, end - p);
        } else {
            g_string_append_c(str, '?');
        }
    }
    return g_string_free(str, FALSE);
}
