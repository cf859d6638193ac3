/* reuse.h - which activation bytes a run of a graph moves to and from memory rather than its last
 * cache level: a least-recently-used model of that level over the buffers ONNX Runtime's planner
 * hands out, in a steady-state run (passes/reuse.c). The cost model reads them as cold bytes
 * (passes/cost.c); docs/devices.md, "Activations past the last level". */
#ifndef FP_PASS_REUSE_H
#define FP_PASS_REUSE_H

#include <stdint.h>

#include "ir/graph.h"

/* traffic[i] of a node that does not run (removed, folded, control flow) */
#define FP_REUSE_SKIP UINT64_MAX

/* For each of the n nodes of `order` (graph g's, in the order they run), the bytes of its
 * activation inputs and outputs whose buffer lies more than `capacity` distinct bytes back (its
 * stack distance): the bytes of the buffers touched since its last touch, each once, and the rest
 * of the traffic of the kernels run in between (traffic[i]: the bytes order[i] moves, FP_REUSE_SKIP
 * for a node that does not run; what is not its buffers' bytes counts as distinct: weights, graph
 * inputs), counted in the second of two runs, so that a buffer's first use in a run goes back to
 * its last in the run before. A view op (FP_OPF_VIEW)
 * shares its input's buffer. A kernel's output 0 takes over the input ONNX Runtime runs in place
 * (fp_ort_inplace_input) when it reads that input last and the shapes match; any other output a
 * freed buffer of its size and dims (fp_ort_same_size), the most recently freed first; else a new one.
 * Graph inputs, initializers, constants and values of unknown size hold none. capacity 0: none
 * is cold. *arena (when not NULL): the bytes of the buffers the second run made (0 when capacity
 * is 0). A g_free'd array of n. */
uint64_t *fp_reuse_cold(const fp_graph *g, fp_node *const *order, uint32_t n, const uint64_t *traffic,
                        uint64_t capacity, uint64_t *arena);

#endif
