/* headroom.h - the largest batch whose weights and planned activations fit in a device's memory
 * (passes/memory/headroom.c). */
#ifndef FP_PASS_HEADROOM_H
#define FP_PASS_HEADROOM_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/memory/memory.h"
#include "passes/shape/shapes.h"

#define FP_HEADROOM_ERROR (fp_headroom_error_quark())
GQuark fp_headroom_error_quark(void);
typedef enum {
    FP_HEADROOM_ERROR_NO_BATCH,     /* no input has a symbolic (or unknown) batch dimension */
    FP_HEADROOM_ERROR_UNKNOWN_SIZE, /* activations of unknown size at batch 1: no bound possible */
} fp_headroom_error_code;

/* Largest batch tried when everything keeps fitting. */
#define FP_HEADROOM_MAX_BATCH ((int64_t)1 << 24)

typedef struct {
    uint64_t capacity;        /* device memory, bytes */
    uint64_t reserve;         /* bytes kept free (runtime, framework, other tenants) */
    GHashTable *input_shapes; /* as fp_shape_opts: name -> fp_shape* ('?' frees a dim for the batch) */
    const char *batch_dim;    /* symbol bound to the batch; NULL = first dim of every input */
    fp_memory_opts mem;       /* how activations are planned; mem.reuse (optional) may hold the
                                 plan_at_1 plan's state (the liveness is then not built again) */
    int64_t max_batch;        /* search limit; 0 = FP_HEADROOM_MAX_BATCH */
    /* optional: m->main as planned by fp_pass_memory with `mem` at batch 1, m still inferred at
       batch 1 with these input_shapes and batch_dim (fp_pipeline_run's final plan when the batch is
       1): batch 1 is not planned again */
    const fp_memory_result *plan_at_1;
    int64_t weight_delta; /* added to the planned weight bytes (a weight-precision what-if) */
    /* optional: the bytes held outside the arena (mem.outside: a decoder's KV cache) with m
       inferred at the batch being tried; UINT64_MAX when some size is unknown or overflows */
    uint64_t (*outside_bytes)(void *data);
    void *outside_data;
    fp_shape_opts shapes; /* how the caller inferred m (its fp_pass_shapes options): m is
                                 inferred so again when the search is over; its dims (--dim)
                                 stay bound at every batch of the search */
} fp_headroom_opts;

typedef struct {
    int64_t max_batch;     /* largest batch that fits; 0 when batch 1 does not */
    uint64_t bytes_at_max; /* weights + arena + outside at max_batch (at batch 1 when max_batch is 0) */
    uint64_t arena_at_max;
    uint64_t outside_at_max; /* opts.outside_bytes at max_batch (0 without) */
    uint64_t bytes_above;    /* weights + arena + outside at max_batch + 1; UINT64_MAX when sizes overflow; 0
                              when not evaluated (the search limit was reached) */
    uint64_t weight_bytes;   /* with opts.weight_delta */
    uint64_t usable;         /* capacity - reserve */
    uint32_t evaluations;    /* batches planned */
    bool at_limit;           /* max_batch is the search limit: memory may allow more */
    const char *batch_desc;  /* what was bound: the symbol, or "first dimension of the inputs" */
} fp_headroom_result;

/* Whether some main-graph input of m has a batch to vary: a symbolic or unknown first dimension,
 * or a dimension named batch_dim; in the declared shapes, or in the inferred ones (bound by
 * --input). */
bool fp_headroom_has_batch(const fp_model *m, const char *batch_dim, bool declared);

/* Finds the largest batch B such that weights + planned activations (+ the bytes held outside the
 * arena) at B fit in capacity - reserve: re-runs shape inference (fp_pass_shapes with opts.batch = B) and plans the arena
 * (fp_memory_arena) per batch, jumping to where the line through the batches planned so far reaches
 * the capacity, then interpolating and bisecting; the result satisfies plan(B) fits and
 * plan(B + 1) does not (unless at the limit). A batch whose sizes overflow, or that leaves more
 * values of unknown size than batch 1, does not fit. diag (may be NULL) receives the findings of a
 * run at max_batch (batch 1 when nothing fits), made for them. The model is left inferred as it
 * was found, with opts.shapes (not inferred again when the last run of the search used the same
 * options), also when the search fails. Fails with FP_HEADROOM_ERROR_NO_BATCH when no input has a
 * batch to vary, with FP_HEADROOM_ERROR_UNKNOWN_SIZE when some activation has an unknown size at
 * batch 1 (other symbolic dimensions unbound, data-dependent shapes), or with the error of a
 * pass. */
bool fp_pass_headroom(fp_model *m, const fp_headroom_opts *opts, fp_headroom_result *res, fp_diag *diag,
                      GError **error);

#endif
