/* op.h - op kinds and their traits, generated from the X-macro table in ops.def. */
#ifndef FP_OP_H
#define FP_OP_H

#include <stdbool.h>
#include <stdint.h>

/* Traits an op kind has (FLAGS column of ops.def). */
enum {
    FP_OPF_EW = 1u << 0,        /* elementwise with multidirectional broadcast */
    FP_OPF_UNARY = 1u << 1,     /* elementwise, one data input, output shape = input shape */
    FP_OPF_VIEW = 1u << 2,      /* output aliases input 0 (no copy at runtime) */
    FP_OPF_INPLACE = 1u << 3,   /* may write its output over input 0 when sizes match */
    FP_OPF_ACT = 1u << 4,       /* an activation function */
    FP_OPF_CTRL = 1u << 5,      /* control flow with subgraphs */
    FP_OPF_SHAPEOF = 1u << 6,   /* output depends only on the input's shape */
    FP_OPF_NOCOMPUTE = 1u << 7, /* no arithmetic at inference time */
    FP_OPF_RANDOM = 1u << 8,    /* draws random numbers: never folded, never merged with its twin */
    FP_OPF_TRANSC = 1u << 9,    /* elementwise at a cost per element above its traffic's: a
                                   transcendental function (exp, erf, tanh, a trigonometric one: a
                                   polynomial per element), a division, square root or reciprocal (the divider's
                                   throughput), a power (a scalar loop or the C library's pow) */
};

/* Role of an op in fusion patterns (FUSE_KIND column of ops.def). */
typedef enum {
    FP_FK_NONE,
    FP_FK_EW,
    FP_FK_ACT,
    FP_FK_CONV,
    FP_FK_GEMM,
    FP_FK_MATMUL,
    FP_FK_NORM,
    FP_FK_POOL,
    FP_FK_REDUCE,
    FP_FK_SOFTMAX,
    FP_FK_LAYOUT,
    FP_FK_DATA,
} fp_fuse_kind;

typedef enum {
#define X(id, name, flags, fk) FP_OP_##id,
#include "ops.def"
#undef X
    FP_OP_COUNT
} fp_op;

/* Number of rows in ops.def; bump it when adding an op (checked at compile time). */
#define FP_OP_COUNT_EXPECTED 207

typedef struct {
    const char *name;
    uint32_t flags;
    fp_fuse_kind fuse_kind;
} fp_op_info;

extern const fp_op_info fp_op_table[FP_OP_COUNT];

static inline const char *fp_op_name(fp_op op) { return fp_op_table[op].name; }
static inline bool fp_op_has(fp_op op, uint32_t flag) { return (fp_op_table[op].flags & flag) != 0; }
static inline fp_fuse_kind fp_op_fuse_kind(fp_op op) { return fp_op_table[op].fuse_kind; }

/* Op kind for an ONNX op type in the default or com.microsoft domain; FP_OP_OPAQUE if unknown.
 * `domain` may be NULL or "" for ai.onnx. O(1) average (hash lookup). */
fp_op fp_op_from_onnx(const char *domain, const char *op_type);

#endif
