/* shape.h - dimensions and shapes of the IR (fp_dim, fp_shape) and the helpers on them that
 * ir/shape.c defines: static test, element count, printing. */
#ifndef FP_SHAPE_H
#define FP_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One dimension: a known size (sym == NULL, value >= 0), a named symbol (sym != NULL), or
 * unknown (sym == NULL, value < 0). */
typedef struct {
    int64_t value;
    const char *sym;
} fp_dim;

/* A shape; rank < 0 means the rank itself is unknown. dims is arena-owned. */
typedef struct {
    int32_t rank;
    fp_dim *dims;
} fp_shape;

static inline bool fp_dim_known(fp_dim d) { return d.sym == NULL && d.value >= 0; }
/* Marks an unknown element of fp_value.sval. */
extern const char fp_sval_unknown[];
/* True when the rank and every dim are known integers. */
bool fp_shape_static(const fp_shape *s);
/* Element count of a static shape; false when not static or on overflow. */
bool fp_shape_numel(const fp_shape *s, uint64_t *n);
/* "1x3x224x224", "batchx3x?x?", "?" for unknown rank, "scalar" for rank 0. Caller frees. */
char *fp_shape_to_string(const fp_shape *s);

#endif
