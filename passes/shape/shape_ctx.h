/* shape_ctx.h - the node context and helpers (shape_helpers.c) of the shape-inference pass: used
 * by its driver (shapes.c), its per-op rules (shape_rules*.c) and the constant evaluator (fold.c,
 * fold.h), and depending on none of them. Not used outside passes/shape/. */
#ifndef FP_SHAPE_CTX_H
#define FP_SHAPE_CTX_H

#include <stdarg.h>

#include "passes/shape/shapes.h"

/* Largest integer vector tracked element-wise (shape arithmetic) and largest folded tensor. */
#define SH_MAX_SVAL 64
#define SH_MAX_FOLD_ELEMS 1024

typedef enum { SH_OK, SH_UNKNOWN, SH_ERROR } sh_result;

typedef struct {
    fp_model *m;
    fp_node *n;
    int64_t opset;
    fp_diag *diag;
    GError **error;
    char *reason;      /* why SH_UNKNOWN (g_free'd by the driver) */
    fp_arena *tmp;     /* scratch for what lives while the node is inferred (NULL: m->arena): the driver
                      interns the node's output shapes (fp_intern_dims) and then resets it */
    bool ge;           /* the model is a GE graph (its format starts with "ge"): tested once per pass */
    bool runtime_view; /* fp_shape_opts.runtime_view */
    uint64_t fold_max; /* largest tensor folded (0: SH_MAX_FOLD_ELEMS) */
    fp_arena *keep;    /* where folds are stored (with tmp as the scratch; NULL: interned in m) */
} sh_ctx;

/* The largest tensor c folds. */
static inline uint64_t sh_fold_max(const sh_ctx *c) { return c->fold_max ? c->fold_max : SH_MAX_FOLD_ELEMS; }

/* Where a rule allocates its temporaries and new shapes: the scratch arena, else the model's. */
static inline fp_arena *sh_tmp(const sh_ctx *c) { return c->tmp ? c->tmp : c->m->arena; }

/* ---- inputs ---- */
/* Input i's value, NULL when the node has no input i or it is omitted. */
fp_value *sh_val(sh_ctx *c, uint32_t i);
/* Input i's shape when its rank is known, else NULL. */
const fp_shape *sh_in(sh_ctx *c, uint32_t i);
fp_dtype sh_dt(sh_ctx *c, uint32_t i);
/* Input 0's shape into *x for a rule that needs its rank: SH_UNKNOWN ("input has unknown rank")
 * when the rank is unknown; SH_ERROR after sh_fail when it is below min_rank. */
sh_result sh_input(sh_ctx *c, int32_t min_rank, const fp_shape **x);
/* sh_input of an input whose rank must be `rank` exactly. */
sh_result sh_input_rank(sh_ctx *c, int32_t rank, const fp_shape **x);
/* sh_input, then the node's `axis` attribute (default dflt) normalized into *axis; SH_ERROR after
 * sh_fail when it is out of range for the input's rank. */
sh_result sh_input_axis(sh_ctx *c, int64_t dflt, const fp_shape **x, int32_t *axis);
/* The constant content of v (initializer, Constant, folded or provided input), or NULL. */
const fp_tensor *sh_known(const fp_value *v);
/* Known integer contents of input i (every element a known integer); at most max elements. */
bool sh_ints(sh_ctx *c, uint32_t i, int64_t *out, int max, int *n);
/* Known scalar (float) content of input i. */
bool sh_scalar(sh_ctx *c, uint32_t i, double *out);
/* Integer list attribute; false when absent. */
bool sh_attr_ints(const fp_node *n, const char *name, int64_t *out, int max, int *count);
/* sh_attr_ints of an attribute found already (NULL: absent). */
bool sh_attr_ints_of(const fp_attr *a, int64_t *out, int max, int *count);
bool sh_attr_floats(const fp_node *n, const char *name, double *out, int max, int *count);
/* INT attribute `name` into *out, dflt when absent (required: SH_ERROR naming it when absent);
 * SH_ERROR naming it and `what` (what it must be) when not an INT or outside [lo, hi]; SH_UNKNOWN
 * when it refers to a function's attribute. */
sh_result sh_attr_int_in(sh_ctx *c, const char *name, bool required, int64_t dflt, int64_t lo, int64_t hi,
                         const char *what, int64_t *out);

/* Attribute types and required attributes of an ONNX op (shape_attrs.c); false after sh_fail
 * naming the attribute. GE graphs and other domains pass unchecked. */
bool sh_check_attrs(sh_ctx *c);

/* ---- results ---- */
fp_shape sh_new(sh_ctx *c, int32_t rank);
fp_shape sh_copy(sh_ctx *c, const fp_shape *s);
fp_shape sh_unknown_rank(void);
void sh_set(sh_ctx *c, uint32_t out, fp_dtype dt, fp_shape s);
/* Output k's value, NULL when the node has none there (omitted, or a malformed node). */
static inline fp_value *sh_out(sh_ctx *c, uint32_t k) { return k < c->n->n_outputs ? c->n->outputs[k] : NULL; }
/* Sets output k's dtype when the output exists. */
static inline void sh_out_dtype(sh_ctx *c, uint32_t k, fp_dtype dt)
{
    if (sh_out(c, k))
        sh_out(c, k)->dtype = dt;
}
sh_result sh_unknown(sh_ctx *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
sh_result sh_fail(sh_ctx *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* ---- dims ---- */
static inline fp_dim sh_dim(int64_t v) { return (fp_dim){v, NULL}; }
static inline fp_dim sh_dim_unknown(void) { return (fp_dim){-1, NULL}; }
bool sh_dim_eq(fp_dim a, fp_dim b);
fp_dim sh_dim_mul(fp_dim a, fp_dim b);
fp_dim sh_dim_add(fp_dim a, fp_dim b);
fp_dim sh_dim_sub(fp_dim a, fp_dim b);
fp_dim sh_dim_div(fp_dim a, fp_dim b); /* exact division only */
/* Multidirectional broadcast of two shapes into *out (which may alias a or b); false with
 * sh_fail on a mismatch of known dims. A symbol against an unknown dim gives the symbol, or, in
 * c->runtime_view, an unknown dim (ONNX's broadcast: the unknown one may be 1). */
bool sh_broadcast(sh_ctx *c, const fp_shape *a, const fp_shape *b, fp_shape *out);
/* The bits (attribute bits_name, default 4: one of 2, 4, 8; not read when `any_bits`) and
 * block_size (default dflt_block, required when that is -1: a power of two >= 16, or 0 when
 * `zero_ok`) of a block-quantized op; SH_ERROR naming the attribute otherwise. */
sh_result sh_block_attrs(sh_ctx *c, const char *bits_name, int64_t dflt_block, bool any_bits, bool zero_ok,
                         int64_t *bits, int64_t *block);
/* SH_ERROR naming input `what` and its dim `name` when s is given, its dim d and `want` are known
 * and they differ; else SH_OK. */
sh_result sh_expect_dim(sh_ctx *c, const char *what, const fp_shape *s, int32_t d, fp_dim want, const char *name);
/* The shape of a Gather of x on `axis` (normalized) by indices of shape idx into *out: x's dims
 * with idx's in place of axis; false with sh_fail when that rank exceeds FP_MAX_RANK. */
bool sh_gather_dims(sh_ctx *c, const fp_shape *x, const fp_shape *idx, int32_t axis, fp_shape *out);
/* Normalizes a possibly negative axis for `rank`; false when out of range. */
bool sh_axis(int64_t axis, int32_t rank, int32_t *out);

/* [start, end) of a Shape op over a rank-`rank` input (opset-15 start/end attributes). */
void sh_shape_range(sh_ctx *c, int32_t rank, int32_t *start, int32_t *end);
/* Whether the value of Shape or Size node n over its input shape s is known at analysis time: the
 * dims it returns (Shape's [start, end), every dim for Size) are known. */
bool sh_shape_known(const fp_node *n, const fp_shape *s);
/* Whether Shape or Size node n folds away over its input shape s: its value is known
 * (sh_shape_known) and n is not FP_NODE_RUNTIME_SHAPE. ONNX Runtime's constant folding takes a
 * Shape on the same condition. A node that is known but does not fold stays in the graph, while
 * the sizes after it are inferred from its value. */
bool sh_shape_folds(const fp_node *n, const fp_shape *s);

#endif
