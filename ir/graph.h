/* graph.h - fuseplan's IR: a model of graphs, nodes, values and tensor metadata.
 *
 * Ownership: one fp_model owns one arena; every node, value, tensor, attribute, string and
 * array reachable from it lives in that arena and is freed by fp_model_free. GLib containers
 * in these structs are indexes (they point into the arena) and are freed with the model too.
 * Strings are interned (intern.h): two equal names are the same pointer within a model.
 */
#ifndef FP_GRAPH_H
#define FP_GRAPH_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "arena.h"
#include "dtype.h"
#include "intern.h"
#include "op.h"
#include "shape.h"

#define FP_IR_ERROR (fp_ir_error_quark())
GQuark fp_ir_error_quark(void);
typedef enum {
    FP_IR_ERROR_CYCLE,
    FP_IR_ERROR_DANGLING,
    FP_IR_ERROR_DUPLICATE,
    FP_IR_ERROR_INVALID,
    FP_IR_ERROR_LIMIT,
} fp_ir_error_code;

/* Constant tensors up to this many bytes keep their values (shape inference needs them): integer
 * ones (shapes, axes, indices, repeats), and floating-point ones up to FP_INLINE_FLOAT_MAX bytes
 * (Resize scales, Range bounds, a Mul's scalar): larger floating-point constants are weights
 * (BatchNormalization scales and biases), which no pass reads (fp_inline_max). */
#define FP_INLINE_MAX 4096
#define FP_INLINE_FLOAT_MAX 256
static inline uint64_t fp_inline_max(fp_dtype t) { return fp_dtype_is_float(t) ? FP_INLINE_FLOAT_MAX : FP_INLINE_MAX; }
/* Nesting limit for subgraphs (If inside Loop inside ...). */
#define FP_MAX_GRAPH_DEPTH 64
/* Node limit of a model, all graphs together, read from a file of `bytes` bytes (fp_max_nodes):
 * FP_MAX_NODES, or one node per FP_NODE_MIN_BYTES of the file when that is more. A real node takes
 * at least ~60 bytes of file (op type, input and output names), so big real graphs load, while a
 * small hostile file (empty nodes are 5 bytes) stays at FP_MAX_NODES, whose analysis takes a few
 * seconds (docs/robustness.md): every file under 16 MB has the fixed limit. */
#define FP_MAX_NODES 250000
#define FP_NODE_MIN_BYTES 64
static inline uint64_t fp_max_nodes(uint64_t bytes)
{
    return bytes / FP_NODE_MIN_BYTES > FP_MAX_NODES ? bytes / FP_NODE_MIN_BYTES : FP_MAX_NODES;
}
/* Graph limit of a model, the main graph and every subgraph (If, Loop, Scan bodies): each pass
 * costs something per graph too. */
#define FP_MAX_GRAPHS 10000
/* Largest rank accepted anywhere. */
#define FP_MAX_RANK 64

typedef struct fp_model fp_model;
typedef struct fp_graph fp_graph;
typedef struct fp_node fp_node;
typedef struct fp_value fp_value;

/* Where a tensor's payload lives. Weights are never loaded: only small ones keep values. */
typedef enum {
    FP_DATA_NONE,     /* no payload known (e.g. empty, strings) */
    FP_DATA_INLINE,   /* `data` holds the values (little-endian, packed as dtype) */
    FP_DATA_FILE,     /* bytes [offset, offset+length) of the model file */
    FP_DATA_EXTERNAL, /* external file `location`, [offset, offset+length); length 0 = to end */
} fp_data_where;

typedef struct {
    fp_dtype dtype;
    fp_data_where where;
    fp_shape shape;   /* always static for a tensor */
    uint64_t nbytes;  /* payload size per dtype and dims (0 if it overflows or unsized) */
    const void *data; /* FP_DATA_INLINE: nbytes of values; for FP_DT_STRING an array of
                         numel `const char *` (nbytes is 0) */
    uint64_t offset, length;
    const char *location; /* FP_DATA_EXTERNAL */
} fp_tensor;

typedef enum {
    FP_VALUE_INTERMEDIATE,
    FP_VALUE_INPUT,       /* graph input (not an initializer) */
    FP_VALUE_INITIALIZER, /* weight */
    FP_VALUE_CONSTANT,    /* output of a Constant node */
} fp_value_kind;

typedef enum {
    FP_TYPE_TENSOR,
    FP_TYPE_SEQUENCE,
    FP_TYPE_MAP,
    FP_TYPE_OPTIONAL,
    FP_TYPE_SPARSE,
    FP_TYPE_UNKNOWN,
} fp_type_kind;

typedef struct {
    fp_node *node;
    uint32_t port; /* input index; UINT32_MAX for an implicit (subgraph) use */
} fp_use;

/* What few values have, kept out of fp_value (fp_value.rare): a million-node model has ~1.4 million
 * values, and ONNX sets none of the layout fields, shape inference few sequences (a fold alone needs
 * no fp_value_ext). Read through the accessors below (fp_value_layout, ...), written through the
 * setters. */
typedef struct {
    const char *layout;           /* memory format named by the file (GE: "NCHW", "NC1HWC0", "FRACTAL_Z:4"),
                             interned; NULL when the format does not say (ONNX) */
    const char *origin_layout;    /* GE origin_format: the framework's layout, interned, or NULL */
    const fp_shape *origin_shape; /* GE origin_shape (framework-side shape), or NULL */
    /* set by shape inference: */
    const fp_tensor *fold; /* constant content computed at analysis time (inline), else NULL */
    fp_shape *elems;       /* SEQUENCE: each element's shape when the length is known */
    int32_t n_elems;       /* n_elems < 0: length unknown (shape = common element shape) */
    /* set by analysis/declared.c for a target that optimizes on the declared dims: */
    bool has_load_shape; /* load_shape holds */
    fp_shape load_shape; /* the shape the target's runtime knows when it optimizes the model (ONNX
                            Runtime: nothing bound, no shape data propagated but constants) */
    /* set by passes/denormal.c: */
    float denormal; /* the fraction of its elements that are denormal floats (0: none known) */
} fp_value_ext;

/* Field order and widths keep the struct small (112 bytes: a million-node model has ~1.4 million
 * values): what the edge walks read (fp_model_link, fp_graph_topo, liveness) first, then the rest;
 * the enums are stored as bytes; the rare fields are behind `rare`. */
struct fp_value {
    fp_graph *graph;
    fp_node *producer; /* NULL for inputs, initializers, unresolved */
    fp_use *uses;      /* consumers, rebuilt by fp_graph_link */
    uint32_t n_uses;
    uint32_t id; /* index in graph->values */
    uint32_t producer_port;
    uint8_t kind;       /* fp_value_kind */
    uint8_t type;       /* fp_type_kind */
    uint8_t elem_kind;  /* fp_type_kind; OPTIONAL: what it wraps (FP_TYPE_TENSOR or FP_TYPE_SEQUENCE) */
    uint8_t dtype;      /* fp_dtype: element type (of the tensor, or of the sequence/optional element) */
    uint8_t decl_dtype; /* fp_dtype, as declared (see decl_shape) */
    bool is_output;     /* listed among graph outputs */
    bool declared;      /* appeared in a value_info/input/output declaration */
    bool overridable;   /* an initializer the graph also lists as an input: a runtime lets the
                             caller feed it, so optimizers (ONNX Runtime's) take it as no constant */
    int32_t n_sval;     /* set by shape inference: elements in sval; n_sval < 0: sval unknown */
    const char *name;
    fp_tensor *tensor; /* initializer/constant metadata, else NULL */
    fp_shape shape;
    fp_shape decl_shape; /* type and shape as declared in the file (frontends set decl_dtype/decl_shape
                             and dtype/shape); shape inference recomputes dtype/shape from them */
    fp_dim *sval;        /* set by shape inference: elements of a small integer vector/scalar (shape
                             arithmetic: Shape->Gather->Concat chains): sym NULL = the integer `value`
                             (may be < 0), sym = a symbol, sym = fp_sval_unknown = unknown */
    uintptr_t rare;      /* the rare fields: 0 while none was set; a fold alone (the common case: a
                             folded shape computation) is its fp_tensor pointer with the low bit set
                             (tensors are 8-aligned); else an fp_value_ext pointer (fp_value_ext_get) */
};

/* Element k (< its element count) of t, whose data is inline, as a double into *out: float,
 * double, float16, int64 and int32 tensors; false for other dtypes. */
bool fp_tensor_number(const fp_tensor *t, uint64_t k, double *out);

/* v's value when v is a constant of one element (an inline initializer, a Constant or a fold) of a
 * dtype fp_tensor_number reads, into *out; else false. */
bool fp_value_scalar(const fp_value *v, double *out);

/* v's fp_value_ext, or NULL when v has none (no rare field, or only a fold). */
static inline fp_value_ext *fp_value_ext_get(const fp_value *v) { return v->rare & 1 ? NULL : (fp_value_ext *)v->rare; }
static inline const fp_tensor *fp_value_fold(const fp_value *v)
{
    if (v->rare & 1)
        return (const fp_tensor *)(v->rare & ~(uintptr_t)1);
    return v->rare ? ((const fp_value_ext *)v->rare)->fold : NULL;
}
static inline const char *fp_value_layout(const fp_value *v)
{
    const fp_value_ext *e = fp_value_ext_get(v);
    return e ? e->layout : NULL;
}
static inline const char *fp_value_origin_layout(const fp_value *v)
{
    const fp_value_ext *e = fp_value_ext_get(v);
    return e ? e->origin_layout : NULL;
}
static inline const fp_shape *fp_value_origin_shape(const fp_value *v)
{
    const fp_value_ext *e = fp_value_ext_get(v);
    return e ? e->origin_shape : NULL;
}
/* v's shape as the target's runtime knows it when it optimizes (fp_value_ext.load_shape), or NULL
 * when none was recorded (the target optimizes on the bound shapes, or v is newer). */
static inline const fp_shape *fp_value_load_shape(const fp_value *v)
{
    const fp_value_ext *e = fp_value_ext_get(v);
    return e && e->has_load_shape ? &e->load_shape : NULL;
}
/* fp_value_load_shape(v) where one was recorded, else v's shape: the shape the passes that
 * follow a runtime's optimizer read. */
static inline const fp_shape *fp_value_opt_shape(const fp_value *v)
{
    const fp_shape *s = fp_value_load_shape(v);
    return s ? s : &v->shape;
}
static inline fp_shape *fp_value_elems(const fp_value *v)
{
    const fp_value_ext *e = fp_value_ext_get(v);
    return e ? e->elems : NULL;
}
static inline int32_t fp_value_n_elems(const fp_value *v)
{
    const fp_value_ext *e = fp_value_ext_get(v);
    return e ? e->n_elems : -1;
}

/* The fraction of v's elements that are denormal floats, as passes/denormal.c found (0: none). */
static inline float fp_value_denormal(const fp_value *v)
{
    const fp_value_ext *e = fp_value_ext_get(v);
    return e ? e->denormal : 0;
}

/* v's fp_value_ext, allocated in v's model's arena when v has none (all NULL, n_elems -1, the fold
 * v had). Never fails. Not thread-safe (it allocates). */
fp_value_ext *fp_value_ext_ensure(fp_value *v);
/* Sets v's layout fields (interned strings and an arena-owned shape, or NULL). Allocates v's
 * fp_value_ext only when one of them is not NULL. */
void fp_value_set_layout(fp_value *v, const char *layout, const char *origin_layout, const fp_shape *origin_shape);
/* Sets v's fold (arena- or caller-owned, outliving the model's use of it; NULL: none). Allocates
 * nothing (a fold alone is kept in v->rare), so that resetting every value before shape inference,
 * and folding again at another batch, stay free. */
static inline void fp_value_set_fold(fp_value *v, const fp_tensor *fold)
{
    fp_value_ext *e = fp_value_ext_get(v);
    if (e)
        e->fold = fold;
    else
        v->rare = fold ? (uintptr_t)fold | 1 : 0;
}
/* Sets v's sequence element shapes: n_elems of them (n_elems < 0: length unknown, elems NULL).
 * Setting (NULL, -1) allocates nothing. */
static inline void fp_value_set_elems(fp_value *v, fp_shape *elems, int32_t n_elems)
{
    if (elems || n_elems >= 0 || fp_value_ext_get(v)) {
        fp_value_ext *e = fp_value_ext_ensure(v);
        e->elems = elems;
        e->n_elems = n_elems;
    }
}

typedef enum {
    FP_ATTR_UNDEFINED,
    FP_ATTR_FLOAT,
    FP_ATTR_INT,
    FP_ATTR_STRING,
    FP_ATTR_TENSOR,
    FP_ATTR_GRAPH,
    FP_ATTR_FLOATS,
    FP_ATTR_INTS,
    FP_ATTR_STRINGS,
    FP_ATTR_TENSORS,
    FP_ATTR_GRAPHS,
    FP_ATTR_TYPE,  /* type proto: kept by name only */
    FP_ATTR_TYPES, /* list of type protos */
    FP_ATTR_SPARSE_TENSOR,
    FP_ATTR_SPARSE_TENSORS,
} fp_attr_type;

typedef struct {
    const char *name;
    const char *ref_attr_name; /* function attribute reference, else NULL */
    union {
        double f;
        int64_t i;
        const char *s; /* STRING: n bytes, NUL-terminated copy (may contain NULs) */
        fp_tensor *t;
        fp_graph *g;
        double *floats;
        int64_t *ints;
        const char **strings;
        fp_tensor **tensors;
        fp_graph **graphs;
    } u;
    fp_attr_type type;
    uint32_t n; /* element count for list types; string length for STRING */
} fp_attr;

/* Node flags */
enum {
    FP_NODE_FOLDED = 1u << 0,        /* a shape computation evaluated at analysis time */
    FP_NODE_REMOVED = 1u << 1,       /* removed by a pass (kept for reports, not executed) */
    FP_NODE_FUSED = 1u << 2,         /* the result of a fusion: metrics.flops is the sum of its members' */
    FP_NODE_RUNTIME_SHAPE = 1u << 3, /* a Shape or Size the runtime evaluates at inference: the compiler
                                        optimizes before the dims its input declares are bound */
    FP_NODE_RESHAPE_CONST = 1u << 4, /* computes only the shape of a Reshape that ONNX Runtime's
                                        ReshapeFusion turns into a constant (analysis/declared.c) */
    FP_NODE_QUANTIZED = 1u << 5,     /* the kernel a QDQ node unit became (QLinearConv, MatMulNBits, an
                                        int8 MaxPool): no later fusion rule matches it */
};

/* Per-op work, filled by passes/metrics.c (docs/metrics.md gives the formulas); whether it is known
 * is fp_node.metrics_known. */
typedef struct {
    uint64_t flops;        /* floating-point (or integer) operations; 2 per multiply-accumulate */
    uint64_t bytes_act;    /* activation bytes read (inputs that are not weights) */
    uint64_t bytes_weight; /* weight bytes read (initializers, constants, folded values) */
    uint64_t bytes_out;    /* bytes written */
    uint64_t params;       /* weight elements read */
} fp_metrics;

/* What few nodes have, kept out of fp_node (fp_node.ext): edges that only control flow (implicit
 * inputs of If / Loop / Scan) and GE graphs (control edges) have. */
typedef struct {
    fp_value **implicit; /* outer-scope values its subgraphs read (this graph or an ancestor) */
    fp_node **ctrl;      /* control dependencies (GE `src:-1` edges) */
    uint32_t n_implicit;
    uint32_t n_ctrl;
} fp_node_ext;

/* Field order and widths keep the struct small (144 bytes, and a million-node model has a million):
 * what every traversal reads (id, flags, the edge arrays and their counts) in the first 64 bytes;
 * the rare edges are in `ext`. */
struct fp_node {
    uint32_t id;        /* index in graph->nodes */
    uint16_t flags;     /* FP_NODE_* */
    bool metrics_known; /* `metrics` holds: false when an input or output shape is not static (a byte
                           of its own: the metrics pass writes it while other passes read flags) */
    uint32_t n_inputs;
    uint32_t n_outputs;
    uint32_t n_attrs;
    fp_op op;
    uint32_t group;       /* fusion group id + 1 (set by the fusion pass); 0 = not fused. A value whose
                       producer and every consumer share a group, and that is not a graph output,
                       is internal to the fused kernel: it never materializes in memory. */
    uint32_t ort_index;   /* the index ONNX Runtime gives the node when a pass of its makes it anew
                           (passes/nchwc.c), ordered after every node of the graph before that
                           pass; 0: its id (fp_node_ort_index) */
    int16_t opset;        /* version of `domain` in the model's opset imports, 0 if absent; clamped to
                       INT16_MIN..INT16_MAX (every rule compares it with versions below 100) */
    uint16_t n_subgraphs; /* at most FP_MAX_GRAPHS */
    fp_value **inputs;    /* NULL entry: omitted optional input (keeps its port) */
    fp_value **outputs;   /* NULL entry: omitted optional output */
    fp_node_ext *ext;     /* implicit inputs and control edges (fp_node_ext), NULL while none */
    fp_graph *graph;
    fp_attr *attrs;
    fp_graph **subgraphs; /* graphs held in attributes, in attribute order */
    const char *op_type;  /* as written in the model ("Conv", "Conv2D") */
    const char *domain;   /* "" for the default domain */
    const char *name;     /* never NULL; synthesized "<op_type>_<index>" when the model has none */
    fp_metrics metrics;
};

/* The index ONNX Runtime's NodeCompare orders n by: its ort_index when a pass set one, else its id. */
static inline uint32_t fp_node_ort_index(const fp_node *n) { return n->ort_index ? n->ort_index : n->id; }
/* n's implicit inputs and control edges (fp_node_ext): the count 0 and the array NULL when n has
 * no ext. */
static inline uint32_t fp_node_n_implicit(const fp_node *n) { return n->ext ? n->ext->n_implicit : 0; }
/* Whether n runs at inference: a node (not NULL), neither removed by a pass nor folded. */
static inline bool fp_node_live(const fp_node *n) { return n && !(n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)); }
static inline fp_value **fp_node_implicit(const fp_node *n) { return n->ext ? n->ext->implicit : NULL; }
static inline uint32_t fp_node_n_ctrl(const fp_node *n) { return n->ext ? n->ext->n_ctrl : 0; }
static inline fp_node **fp_node_ctrl(const fp_node *n) { return n->ext ? n->ext->ctrl : NULL; }

/* Bytes of v's tensor; 0 for NULL or a size not known. */
static inline uint64_t fp_value_bytes(const fp_value *v)
{
    uint64_t n = 0, bytes = 0;
    return v && fp_shape_numel(&v->shape, &n) && fp_dtype_bytes((fp_dtype)v->dtype, n, &bytes) ? bytes : 0;
}

/* Whether v is a weight: an initializer or a Constant's tensor, stored in the model. */
static inline bool fp_value_is_weight(const fp_value *v)
{
    return v->kind == FP_VALUE_INITIALIZER || v->kind == FP_VALUE_CONSTANT;
}

/* Whether v's value is known before the model runs: a weight (an overridable one too) or a result
 * folded at analysis time. */
static inline bool fp_value_is_fixed(const fp_value *v)
{
    return fp_value_is_weight(v) || (v->producer && (v->producer->flags & FP_NODE_FOLDED));
}

/* Whether v's value is fixed by the model: a weight or Constant (not an initializer the graph also
 * takes as an input, which the caller may feed: ONNX Runtime takes it as no constant), or a result
 * folded at analysis time. False for NULL. */
static inline bool fp_value_is_constant(const fp_value *v)
{
    if (!v)
        return false;
    if (fp_value_is_weight(v))
        return !v->overridable;
    return v->producer && (v->producer->flags & FP_NODE_FOLDED);
}

struct fp_graph {
    const char *name;
    fp_model *model;
    fp_graph *parent; /* NULL for the main graph */
    fp_node *owner;   /* node whose attribute holds this graph */
    uint32_t depth;
    GPtrArray *nodes;        /* fp_node*, in file order (not necessarily topological) */
    GPtrArray *values;       /* fp_value*, every value of this graph */
    GPtrArray *inputs;       /* fp_value*, graph inputs that are not initializers */
    GPtrArray *outputs;      /* fp_value*, in declared order */
    GPtrArray *initializers; /* fp_value* of kind FP_VALUE_INITIALIZER */
    GHashTable *by_name;     /* interned name -> fp_value* of this graph, for the names whose intern
                            entry holds another graph's value (graph.c); NULL while none */
    fp_use *use_pool;        /* storage of every value's use list (g_malloc, rebuilt by link) */
    size_t node_base;        /* index of this graph's first node / value in model-wide arrays (fp_model_number) */
    size_t value_base;
    size_t use_cap; /* use_pool's size in uses: a link that needs no more reuses it (a pool of
                            a million-node graph is fresh pages to fault in each time otherwise) */
    fp_node **topo; /* fp_graph_order's cache (g_malloc), NULL when not computed since the last
                            fp_model_link or new node */
    uint32_t n_topo;
    GPtrArray *folded; /* fp_node* of this graph that shape inference marked FP_NODE_FOLDED, so
                            that its next run clears only those (passes/shape/shapes.c); NULL while none */
};

typedef struct {
    const char *domain;
    int64_t version;
} fp_opset;

struct fp_model {
    fp_arena *arena;
    struct fp_strings *strings;   /* intern table of fp_intern (intern.c; it points into the arena) */
    struct fp_blobs *blobs;       /* intern table of fp_intern_blob (intern.c; it points into the arena) */
    struct fp_model_cache *cache; /* graph.c's: the slab new values are cut from, the last opset */
    GPtrArray *graphs;            /* every fp_graph, main first (index, not owner) */
    fp_graph *main;
    const char *path;   /* file it came from */
    const char *format; /* "onnx", "onnx-text", "ge-text", ... */
    const char *producer_name, *producer_version, *domain, *doc;
    int64_t ir_version, model_version;
    fp_opset *opsets;
    uint32_t n_opsets;
    uint64_t file_size;
};

/* ---- model and graph construction (used by frontends) ---- */

/* New empty model with an arena; `path` is copied. Never fails. */
fp_model *fp_model_new(const char *path, const char *format);
/* Frees the model, its arena and every index. NULL is ignored. */
void fp_model_free(fp_model *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_model, fp_model_free)

/* New graph; the first one created becomes m->main. parent/owner NULL for the main graph. */
fp_graph *fp_graph_new(fp_model *m, const char *name, fp_graph *parent, fp_node *owner);

/* Makes room for n_nodes nodes and n_values values in g (and their names in the intern table), as
 * a frontend that knows the counts before it reads the graph asks: the indexes then grow in one
 * step instead of by doubling, which leaves the smaller copies behind in malloc's heap. A hint:
 * more may be added. */
void fp_graph_reserve(fp_graph *g, uint32_t n_nodes, uint32_t n_values);

/* The value called `name` in g, created as FP_VALUE_INTERMEDIATE with unknown type if absent.
 * `name` need not be interned. */
fp_value *fp_graph_value(fp_graph *g, const char *name);
/* fp_graph_value(g, name) made a tensor of like's shape and of `dtype` (FP_DT_UNDEFINED: like's): a
 * value a pass adds beside another (a Cast's or a reorder's output). */
fp_value *fp_graph_value_like(fp_graph *g, const char *name, const fp_value *like, fp_dtype dtype);
/* Output `port` of n is v, and v's producer n (the use lists wait for fp_model_link). */
void fp_node_set_output(fp_node *n, uint32_t port, fp_value *v);
/* Every reader of `from` that its use list names (inputs and a subgraph's implicit inputs) reads
 * `to` instead; the use lists wait for fp_model_link, or for the caller's own update. */
void fp_value_move_readers(const fp_value *from, fp_value *to);
/* Makes room for ops between v's producer and v (a graph output a pass converts back): the
 * producer writes a new value `name` like v (of `dtype`; FP_DT_UNDEFINED: v's) instead, which every
 * node of g that read v reads, but those `keeps` (may be NULL) says go on reading v; returns the
 * new value. The caller then writes v from it. The use lists wait for fp_model_link. */
fp_value *fp_value_interpose(fp_graph *g, fp_value *v, const char *name, fp_dtype dtype,
                             bool (*keeps)(const fp_node *reader));
/* A new initializer of g called `name` (not a name g has already): dtype, shape (arena-owned, or
 * static storage), the nbytes of data copied inline. */
fp_value *fp_graph_initializer(fp_graph *g, const char *name, fp_dtype dtype, fp_shape shape, const void *data,
                               uint64_t nbytes);
/* A new int64 initializer of g called `name` (not a name g has already) holding vals[0..n): a
 * 1-D tensor inline, its sval set (a pass's new axes, split sizes). */
fp_value *fp_graph_int64_initializer(fp_graph *g, const char *name, const int64_t *vals, uint32_t n);
/* The contents of v when it is a constant (fp_value_is_constant) int64 or int32 tensor held inline
 * (its own, or folded) of at most max elements: written to out, their count returned; else -1. */
int fp_value_ints(const fp_value *v, int64_t *out, int max);
/* The contents of v when it is a constant float32 tensor held inline (its own, or folded) of at
 * most max elements: written to out, their count returned; else -1. */
int fp_value_floats(const fp_value *v, float *out, int max);
/* fp_graph_value of the len bytes at name (no NUL among them; need not be NUL-terminated). */
fp_value *fp_graph_value_len(fp_graph *g, const char *name, size_t len);
/* fp_graph_value_len, telling whether the value was there already (*existed). */
fp_value *fp_graph_value_ex(fp_graph *g, const char *name, size_t len, bool *existed);
/* out[i] = fp_graph_value_len(g, names[i], lens[i]) for i = 0..n-1 in that order (NULL where
 * names[i] is NULL), the lookups waiting for memory together rather than one after the other: a
 * node's names at once. */
void fp_graph_values_len(fp_graph *g, size_t n, const char *const *names, const size_t *lens, fp_value **out);
/* Removes v from g's index of names: fp_graph_find no longer finds it (v stays in g->values). */
void fp_graph_forget(fp_graph *g, fp_value *v);
/* The value called name in g only, or NULL. */
fp_value *fp_graph_find(const fp_graph *g, const char *name);
/* The value visible under `name` from g: g first, then its ancestors. NULL if none. */
fp_value *fp_graph_lookup(const fp_graph *g, const char *name);

/* A new node appended to g; arrays allocated for n_inputs / n_outputs (all NULL); no attributes
 * (attrs points to none). */
fp_node *fp_node_new(fp_graph *g, fp_op op, const char *op_type, const char *domain, const char *name,
                     uint32_t n_inputs, uint32_t n_outputs);

/* fp_node_new, with room for n_attrs attributes (zeroed) in the same allocation: n->attrs and
 * n->n_attrs are set (attrs is not NULL when n_attrs is 0, but holds nothing). */
fp_node *fp_node_new_attrs(fp_graph *g, fp_op op, const char *op_type, const char *domain, const char *name,
                           uint32_t n_inputs, uint32_t n_outputs, uint32_t n_attrs);

/* fp_node_new_attrs with op_type and domain already interned in g's model (fp_intern), not NULL,
 * and so is name unless it is NULL or empty: for a frontend that keeps op kinds, and finds most
 * node names among the names of their outputs. */
fp_node *fp_node_new_interned(fp_graph *g, fp_op op, const char *op_type, const char *domain, const char *name,
                              uint32_t n_inputs, uint32_t n_outputs, uint32_t n_attrs);

/* n->ext, allocated in n's model's arena (empty) when n has none. Never fails. Not thread-safe. */
fp_node_ext *fp_node_ext_ensure(fp_node *n);

/* The node called `name` in any graph of m (first found), or NULL. O(nodes). */
fp_node *fp_node_lookup(const fp_model *m, const char *name);

/* Attribute lookup by name; NULL if absent. */
const fp_attr *fp_node_attr(const fp_node *n, const char *name);
/* Sets n's attribute of a.name to a, a.name interned in m; added (in m's arena, after the others)
 * when n has none of that name. */
void fp_node_set_attr(fp_model *m, fp_node *n, fp_attr a);
int64_t fp_node_attr_int(const fp_node *n, const char *name, int64_t dflt);
double fp_node_attr_float(const fp_node *n, const char *name, double dflt);
const char *fp_node_attr_string(const fp_node *n, const char *name, const char *dflt);
/* Entry i of n's INTS attribute `name`; dflt when it is absent, not INTS, or has no entry i. */
int64_t fp_node_attr_ints_at(const fp_node *n, const char *name, uint32_t i, int64_t dflt);

/* Opset version of `domain` ("" = ai.onnx) in the model, 0 if not imported. */
int64_t fp_model_opset(const fp_model *m, const char *domain);

/* ---- derived structure ---- */

/* Numbers the model's nodes and values for arrays indexed across all its graphs: sets each graph's
 * node_base and value_base from the current counts, graph by graph; *n_nodes and *n_values (either
 * may be NULL) receive the totals. The indexes (fp_node_index, fp_value_index) hold until a graph
 * gains a node or value; fp_model_link numbers again. */
void fp_model_number(fp_model *m, size_t *n_nodes, size_t *n_values);
static inline size_t fp_node_index(const fp_node *n) { return n->graph->node_base + n->id; }
static inline size_t fp_value_index(const fp_value *v) { return v->graph->value_base + v->id; }

/* Prefetches the first three cache lines of node n: the node and, in the same block, its input
 * and output arrays (ir/graph.c node_new). */
static inline void fp_node_prefetch(const fp_node *n)
{
    const char *a = (const char *)n;
    __builtin_prefetch(a);
    __builtin_prefetch(a + 64);
    __builtin_prefetch(a + 128);
}

/* For a walk over nodes[0..n) (an order or a graph's node array) that reads each node and the
 * values it reads and writes, at node i: prefetches node i + FP_NODES_AHEAD, then the values of
 * node i + FP_NODES_AHEAD / 2, whose pointers its lines hold by then. A big graph's nodes and
 * values are far beyond the caches. */
enum { FP_NODES_AHEAD = 8 };

static inline void fp_nodes_prefetch(fp_node *const *nodes, size_t n, size_t i)
{
    if (i + FP_NODES_AHEAD < n)
        fp_node_prefetch(nodes[i + FP_NODES_AHEAD]);
    if (i + FP_NODES_AHEAD / 2 < n) {
        const fp_node *b = nodes[i + FP_NODES_AHEAD / 2];
        for (uint32_t k = 0; k < b->n_inputs; k++)
            if (b->inputs[k])
                __builtin_prefetch(b->inputs[k]);
        for (uint32_t k = 0; k < b->n_outputs; k++)
            if (b->outputs[k])
                __builtin_prefetch(b->outputs[k], 1);
    }
}

/* Rebuilds every value's use list (consumers) from node inputs and implicit inputs, for every
 * graph of the model. O(nodes + edges). */
void fp_model_link(fp_model *m);

/* Topological order of g's live nodes (not FP_NODE_REMOVED) by Kahn's algorithm, stable with
 * respect to file order. On a cycle returns NULL and sets FP_IR_ERROR_CYCLE naming a node on it.
 * Requires fp_model_link. Caller frees the array (g_free); *n_out receives the count. */
fp_node **fp_graph_topo(const fp_graph *g, uint32_t *n_out, GError **error);
/* ONNX Runtime's default topological order of g's live nodes (GraphViewer's
 * nodes_in_topological_order_: Graph::ReverseDFSFrom the leaves with NodeCompare): a depth-first
 * walk up from the nodes no node reads, taken in ascending ORT index (fp_node_ort_index: the id
 * unless a pass gave the node the index ORT gives it) so that the last is walked first; at a node
 * its producers are pushed in ascending ORT index, so the highest is walked first; a node is
 * emitted when the walk leaves it. Constant nodes (initializers to ORT, joined by no edge) come
 * first, in array order. Control edges are not followed. Requires fp_model_link and an acyclic g.
 * Caller frees the array (g_free); *n_out receives the count. */
fp_node **fp_graph_ort_order(const fp_graph *g, uint32_t *n_out);
/* fp_graph_topo's order, computed once and kept in g until the next fp_model_link (which every
 * rewrite of edges or removal of nodes is followed by) or new node of g: the array belongs to g and
 * is invalid after either. Every pass walks the graph in this order, several of them several
 * times. Not thread-safe (it fills the cache). NULL on a cycle (nothing kept). */
fp_node *const *fp_graph_order(const fp_graph *g, uint32_t *n_out, GError **error);

/* Checks the invariants of every graph; the first violation becomes a GError naming the graph,
 * node and value: every input is produced exactly once or is a graph input, initializer or
 * constant; no dangling consumers; outer-scope references of subgraphs resolved; acyclic.
 * Requires fp_model_link. */
bool fp_model_verify(const fp_model *m, GError **error);

/* ---- statistics ---- */
typedef struct {
    uint64_t nodes;       /* all graphs, subgraphs included */
    uint64_t params;      /* initializer elements, all graphs */
    uint64_t param_bytes; /* initializer bytes, all graphs */
} fp_model_stats;
void fp_model_get_stats(const fp_model *m, fp_model_stats *st);

/* Prints the IR of every graph in a readable form (for --dump-after). */
void fp_model_dump(const fp_model *m, FILE *out);

#endif
