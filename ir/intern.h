/* intern.h - the model's intern tables (ir/intern.c): one copy of each name and of each immutable
 * array, owned by the model's arena, so that two equal names are the same pointer within a model. */
#ifndef FP_INTERN_H
#define FP_INTERN_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "shape.h"

typedef struct fp_model fp_model;

/* Interned copy of s (len bytes, or strlen if len < 0) owned by the model. */
const char *fp_intern(fp_model *m, const char *s, gssize len);
/* A hint, ahead of fp_intern or fp_graph_value_len of the len bytes at s: starts loading the part
 * of the intern table that the lookup reads first (a large model's table is far bigger than the
 * caches). Changes nothing. */
void fp_intern_prefetch(const fp_model *m, const char *s, size_t len);

/* A copy of the `size` bytes at p owned by the model, the same copy for equal bytes: for immutable
 * arrays that shape inference makes again on every run (dims of inferred shapes, folded tensors,
 * integer vectors), so that re-running it at other batch sizes does not grow the arena by a copy
 * per value. Never write through the result. 16-byte aligned; size 0 gives a valid pointer. */
const void *fp_intern_blob(fp_model *m, const void *p, size_t size);
/* The interned copy (fp_intern_blob) of rank dims; for rank 0 one shared {0, NULL} dim (readers
 * may copy MAX(rank, 1) dims), for rank < 0 (unknown) NULL. */
fp_dim *fp_intern_dims(fp_model *m, const fp_dim *dims, int32_t rank);

#endif
