/* liveness.h - activation buffers of a graph and their lifetimes over an execution order
 * (passes/memory/liveness.c).
 *
 * fp_liveness_build turns one graph into an fp_memgraph: the schedulable nodes, their dependencies,
 * and the activation buffers each node defines and reads once views are merged with the buffer
 * they alias. The memgraph does not depend on an order; fp_memgraph_lifetimes gives the buffers'
 * lifetimes for one order, applying in-place reuse where the input dies at the op. The rules are
 * in docs/memory.md.
 */
#ifndef FP_PASS_LIVENESS_H
#define FP_PASS_LIVENESS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/memory/memplan.h"

/* Buffer flags. */
enum {
    FP_BUF_INPUT = 1u << 0,   /* holds a graph input: live from step 0, never reused */
    FP_BUF_OUTPUT = 1u << 1,  /* holds a graph output: live to the last step, never reused */
    FP_BUF_UNKNOWN = 1u << 2, /* a value in it has no known size: counted as 0 bytes */
};

/* The memory problem of one graph, independent of the order. Nodes are numbered 0..n_nodes-1,
 * buffers 0..n_bufs-1; x_start arrays are CSR offsets with n+1 entries. Every array is g_malloc'ed
 * and freed by fp_memgraph_clear. Tests build memgraphs by hand. */
typedef struct {
    uint32_t n_nodes, n_bufs;
    uint32_t *pred_start, *preds;     /* per node: nodes that must run before it (each once) */
    uint32_t *def_start, *defs;       /* per node: buffers it defines */
    uint32_t *use_start, *uses;       /* per node: buffers it reads (each once) */
    uint64_t *workspace;              /* per node: bytes live only while it runs (subgraphs) */
    int32_t *inplace_in;              /* per node: buffer it may overwrite in place, or -1 */
    int32_t *inplace_out;             /* per node: the output buffer written there, or -1 */
    uint64_t *bytes;                  /* per buffer */
    uint32_t *flags;                  /* per buffer: FP_BUF_* */
    int32_t *producer;                /* per buffer: defining node, -1 for graph inputs */
    uint32_t *reader_start, *readers; /* per buffer: nodes reading it (each once) */
} fp_memgraph;

void fp_memgraph_clear(fp_memgraph *mg);

/* Fills reader_start/readers from use_start/uses (both must be set; readers must be NULL). */
void fp_memgraph_index_readers(fp_memgraph *mg);

/* True when order (n_nodes entries) is a permutation of the nodes respecting every pred. */
bool fp_memgraph_order_valid(const fp_memgraph *mg, const uint32_t *order);

/* Lifetimes of the buffers when the nodes run in `order` (a valid order). out receives
 * n_bufs + n_nodes planner buffers: out[b] for buffer b, out[n_bufs + v] for node v's workspace
 * (size 0 when it has none). A buffer taken over in place by a node's output merges into the chain
 * of its input: the chain's first entry spans the whole chain and the merged entry gets size 0.
 * Sizes are mg->bytes (not rounded). slot (may be NULL, n_bufs entries) receives, per buffer, the
 * entry of out that holds it. Returns the number of in-place merges. */
uint32_t fp_memgraph_lifetimes(const fp_memgraph *mg, const uint32_t *order, fp_membuf *out, uint32_t *slot);
/* fp_memgraph_lifetimes, with workspaces false the buffers alone: out receives n_bufs entries. */
uint32_t fp_memgraph_lifetimes_n(const fp_memgraph *mg, const uint32_t *order, bool workspaces, fp_membuf *out,
                                 uint32_t *slot);
/* Whether some node has a nonzero workspace. */
bool fp_memgraph_has_workspace(const fp_memgraph *mg);

/* LOAD of `order`: the largest live bytes (sizes rounded to align) at any step; peak_step may be
 * NULL. False only on 64-bit overflow. */
bool fp_memgraph_load(const fp_memgraph *mg, const uint32_t *order, uint64_t align, uint64_t *load, uint32_t *peak_step,
                      GError **error);

/* ---- from the IR ---- */

typedef struct {
    fp_memgraph mg;
    const fp_graph *graph;
    fp_node **nodes;      /* per memgraph node: the IR node */
    fp_node **free_nodes; /* live nodes outside the memgraph (Constant, folded), topo order */
    uint32_t n_free;
    const fp_value **buf_value; /* per buffer: the value that defines it (first of its aliases) */
    uint32_t *buf_aliases;      /* per buffer: number of values sharing it (1 = no alias) */
    int32_t *value_buf;         /* per value id of the graph: its buffer, or -1 (weight, fused, ...) */
    uint64_t weight_bytes;      /* initializers, constants and folded values of this graph */
    uint64_t folded_bytes;      /* the part of weight_bytes that the file does not store: values folded
                                   from constants (ConstantOfShape's fill), which a runtime's constant
                                   folding makes at load */
    uint32_t n_unknown;         /* activation buffers of unknown size (counted as 0) */
    uint32_t n_fused;           /* values internal to a fused group (never materialized) */
    uint32_t n_views;           /* values sharing the buffer of a view's input */
    fp_dtype float_as;          /* fp_liveness_opts.float_as of the build */
    /* what fp_liveness_resize needs: the weights read at run time (the bytes of those with a tensor
       from the model, which never change, and the others), per memgraph node the in-place pair
       its sizes permit or not (-1: none), and the structure the memgraph was built on */
    uint64_t weight_fixed;
    const fp_value **weights;
    uint32_t n_weights;
    int32_t *inplace_a, *inplace_o;
    uint8_t *node_state; /* per IR node id: removed, free or scheduled */
    uint32_t n_graph_nodes, n_graph_values;
    int32_t *node_idx;         /* per IR node id: memgraph node (>= 0), free node k (-2 - k), or -1 */
    uint32_t *eff_start, *eff; /* per free node (CSR): the memgraph nodes it depends on, directly or
                                  through other free nodes */
} fp_liveness;

/* Builds the memgraph of graph g. Nodes flagged FP_NODE_REMOVED are ignored; Constant nodes and
 * FP_NODE_FOLDED nodes compute no activation and are left out of the memgraph (free_nodes), their
 * dependencies carried through. workspace (may be NULL) gives bytes per IR node id (index in
 * g->nodes) needed while that node runs. opts (may be NULL: none) leaves values out of the arena
 * and sizes float32 activations at another dtype; fp_liveness_resize keeps them. Values of unknown size are reported in diag (one entry
 * per graph). Requires fp_model_link. NULL with an error on a cycle. Caller fp_liveness_free()s. */
typedef struct {
    GHashTable *outside; /* values of g (keys: const fp_value *) held in memory allocated apart from
                            the arena (a decoder's KV cache): they and their views get no buffer */
    fp_dtype float_as;   /* float32 activations sized as this dtype (ATC's force_fp16: FLOAT16);
                            FP_DT_UNDEFINED: as they are */
    bool outputs_apart;  /* a view whose output is a graph output writes a buffer of its own instead of
                            sharing its input's (ONNX Runtime allocates every graph output apart) */
} fp_liveness_opts;
fp_liveness *fp_liveness_build(const fp_graph *g, const uint64_t *workspace, const fp_liveness_opts *opts,
                               fp_diag *diag, GError **error);
/* Brings lv, made by fp_liveness_build for its graph, to the graph's current sizes (shape inference
 * run again, at another batch say): buffer bytes, FP_BUF_UNKNOWN, in-place pairs, workspaces (as
 * fp_liveness_build's argument), weight_bytes and n_unknown, with the same findings in diag. The
 * memgraph's structure depends on sizes nowhere else: false, lv unchanged, when the graph's node or
 * value count, or some node's removed or free (Constant, folded) state, differs from the build, in
 * which case lv must be built again. */
bool fp_liveness_resize(fp_liveness *lv, const uint64_t *workspace, fp_diag *diag);
void fp_liveness_free(fp_liveness *lv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_liveness, fp_liveness_free)

/* The full execution order (memgraph nodes and free nodes) for a memgraph order: each free node
 * right after the last node it depends on (lv from fp_liveness_build). full receives n_nodes +
 * n_free IR nodes; step_of (may be NULL, n_nodes entries) receives, per memgraph step, its index in
 * `full`. */
void fp_liveness_full_order(const fp_liveness *lv, const uint32_t *order, fp_node **full, uint32_t *step_of);

#endif
