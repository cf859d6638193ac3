/* ortplan.h - what ONNX Runtime's CPU arena holds running a graph, modelled on its sequential
 * allocation planner, memory pattern and BFC arena (passes/memory/ortplan.c). The rules and where
 * ORT's source states them: docs/memory.md, "ONNX Runtime's allocation". */
#ifndef FP_PASS_ORTPLAN_H
#define FP_PASS_ORTPLAN_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"

/* ORT's constants: tensors in a memory pattern are aligned to kAllocAlignment, and the BFC arena
 * rounds every chunk up to its minimum allocation size. */
#define FP_ORT_PATTERN_ALIGN 64
#define FP_ORT_ARENA_ROUND 256

typedef struct {
    bool prepack; /* ORT's default: GEMM weights pre-packed by MLAS into the arena, initializers of
                     128 bytes or more held outside it (false: session.disable_prepacking=1, every
                     initializer in one block of the arena) */
    bool folded;  /* the session optimizes (ORT_ENABLE_BASIC and above): its planner knows the shapes
                     its constant folding and ReshapeFusion make known, the load shapes
                     analysis/declared.c records (fp_value_load_shape), which the fusion conditions
                     read too; false (ORT_DISABLE_ALL): what its shape inference propagates alone */
} fp_ort_memory_opts;

typedef struct {
    uint64_t weight_arena;   /* initializers ORT keeps in its arena: the small ones and the packed
                                  copies (with pre-packing), else one block, each aligned */
    uint64_t weight_outside; /* initializers held outside the arena (with pre-packing): not in
                                  weight_arena */
    uint64_t first_run;      /* the first run's peak in use of the activations, outputs and working
                                  buffers: each of the plan's buffers its own chunk of the BFC arena
                                  (best fit, split only from twice the request, power-of-two regions)
                                  from allocation to release */
    uint64_t pattern;        /* later runs: the memory-pattern block of the plan's buffers, rounded */
    uint64_t second_run;     /* the second run's peak in use: the block, the outputs and working
                                  buffers allocated in the arena the first run left */
    uint64_t outputs;        /* graph outputs: allocated one by one, each arena-rounded */
    uint64_t scratch;        /* the largest kernel working buffer (a float Conv's im2col) */
    uint64_t total_first;    /* weight_arena + first_run: the arena's peak in use in the first run */
    uint64_t total_steady;   /* weight_arena + second_run: the arena's peak in a later run */
    uint32_t n_buffers;      /* allocations of the plan (after reuse) */
    uint32_t n_reused;       /* values taking a freed buffer of their shape */
    uint32_t n_inplace;      /* values written over their input in place */
    uint32_t n_views;        /* values sharing their input's buffer (ORT's Alias) */
    uint32_t n_unknown;      /* activation buffers of unknown size (counted as 0) */
} fp_ort_memory_result;

/* Models ONNX Runtime 1.30's CPU allocation of graph g (as fp_pass_memory requires: linked, shapes
 * inferred) run sequentially in its order (a depth-first walk up from the leaves): its planner
 * gives each activation a buffer (an alias shares its input's; a unary element-wise op writes over
 * an input it reads last when the shapes match; else a freed buffer of the same shape, the most
 * recently freed first; else a new one). The first run allocates every buffer from the BFC arena
 * (chunks rounded to 256 bytes; a free chunk under twice the request is taken whole); later runs hold the buffers in one memory-pattern block (64-byte
 * aligned, each in the smallest gap among the buffers live with it, in allocation order). A float
 * Conv takes MLAS's working buffer from the arena while it runs. Subgraphs are not planned. The
 * arena is replayed chunk by chunk: O(allocations x chunks). False with an error on a cycle or a
 * 64-bit overflow. */
bool fp_pass_ort_memory(const fp_graph *g, const fp_ort_memory_opts *opts, fp_ort_memory_result *out, fp_diag *diag,
                        GError **error);

/* The input ORT's planner may hand n's output 0 in place: input 0 of a MayInplace(0, 0) kernel
 * (its activations, Softmax and Cast; not its math or binary ops); the Sum input (3) of a
 * convolution ONNX Runtime fused with an Add, FusedConv (fused_conv.cc) or the NCHWc Conv
 * (nchwc_ops.cc), both MayInplace(3, 0); else -1. */
int32_t fp_ort_inplace_input(const fp_node *n);

/* ORT's SameSize, whether its planner may hand b a buffer made for a (or run b over a in place):
 * both shapes known to its planner (`unknown`: per value id, a shape its planner does not know,
 * as fp_pass_ort_memory marks them; NULL: every shape fuseplan knows), the same element size and the same
 * dims (not only the same bytes). */
bool fp_ort_same_size(const uint8_t *unknown, const fp_value *a, const fp_value *b);

#endif
