/* shape_attrs.c - attribute types and required attributes of the ONNX ops the shape rules read,
 * checked before a rule runs: a rule reading `kernel_shape` given as a float, or a Cast without
 * `to`, would otherwise fall back to a default and infer a wrong shape in silence. Types and
 * requirements are those of the ONNX operator specifications (onnx/docs/Operators.md). GE graphs
 * use other attribute names and types for ops of the same name and are not checked. */
#include <string.h>

#include "shape_ctx.h"

typedef struct {
    fp_op op;
    const char *name;
    fp_attr_type type;
    int16_t required_from; /* opset from which the attribute is required; 0 = optional */
    int16_t typed_from;    /* opset from which the type is checked (Cast `to` was a string before 6) */
} attr_spec;

/* clang-format off */
#define OPT(op, name, type) {FP_OP_##op, name, FP_ATTR_##type, 0, 0},
#define REQ(op, name, type, from) {FP_OP_##op, name, FP_ATTR_##type, from, 0},
#define CONV_ATTRS(op) OPT(op, "kernel_shape", INTS) OPT(op, "strides", INTS) OPT(op, "pads", INTS) \
    OPT(op, "dilations", INTS) OPT(op, "group", INT) OPT(op, "auto_pad", STRING)
#define POOL_ATTRS(op) REQ(op, "kernel_shape", INTS, 1) OPT(op, "strides", INTS) OPT(op, "pads", INTS) \
    OPT(op, "dilations", INTS) OPT(op, "auto_pad", STRING) OPT(op, "ceil_mode", INT)
#define REDUCE_ATTRS(op) OPT(op, "axes", INTS) OPT(op, "keepdims", INT) OPT(op, "noop_with_empty_axes", INT)
#define AXIS_ATTR(op) OPT(op, "axis", INT)

static const attr_spec specs[] = {
    CONV_ATTRS(CONV) CONV_ATTRS(CONV_INTEGER) CONV_ATTRS(QLINEAR_CONV) CONV_ATTRS(CONV_TRANSPOSE)
    OPT(CONV_TRANSPOSE, "output_shape", INTS) OPT(CONV_TRANSPOSE, "output_padding", INTS)
    POOL_ATTRS(AVERAGE_POOL) POOL_ATTRS(MAX_POOL) POOL_ATTRS(LP_POOL)
    OPT(AVERAGE_POOL, "count_include_pad", INT) OPT(MAX_POOL, "storage_order", INT)
    {FP_OP_CAST, "to", FP_ATTR_INT, 1, 6},
    REQ(CONCAT, "axis", INT, 4)
    AXIS_ATTR(GATHER) AXIS_ATTR(GATHER_ELEMENTS) AXIS_ATTR(FLATTEN) AXIS_ATTR(SOFTMAX) AXIS_ATTR(LOG_SOFTMAX)
    AXIS_ATTR(HARDMAX) AXIS_ATTR(SPLIT) AXIS_ATTR(ONE_HOT) AXIS_ATTR(TOP_K) AXIS_ATTR(LAYER_NORM)
    AXIS_ATTR(QUANTIZE_LINEAR) AXIS_ATTR(DEQUANTIZE_LINEAR) AXIS_ATTR(COMPRESS)
    OPT(SPLIT, "split", INTS) OPT(SPLIT, "num_outputs", INT)
    OPT(TRANSPOSE, "perm", INTS)
    OPT(SQUEEZE, "axes", INTS) OPT(UNSQUEEZE, "axes", INTS)
    REDUCE_ATTRS(REDUCE_L1) REDUCE_ATTRS(REDUCE_L2) REDUCE_ATTRS(REDUCE_LOG_SUM) REDUCE_ATTRS(REDUCE_LOG_SUM_EXP)
    REDUCE_ATTRS(REDUCE_MAX) REDUCE_ATTRS(REDUCE_MEAN) REDUCE_ATTRS(REDUCE_MIN) REDUCE_ATTRS(REDUCE_PROD)
    REDUCE_ATTRS(REDUCE_SUM) REDUCE_ATTRS(REDUCE_SUM_SQUARE)
    AXIS_ATTR(ARG_MAX) AXIS_ATTR(ARG_MIN) OPT(ARG_MAX, "keepdims", INT) OPT(ARG_MIN, "keepdims", INT)
    OPT(GEMM, "alpha", FLOAT) OPT(GEMM, "beta", FLOAT) OPT(GEMM, "transA", INT) OPT(GEMM, "transB", INT)
    OPT(BATCH_NORM, "epsilon", FLOAT) OPT(LAYER_NORM, "epsilon", FLOAT) OPT(INSTANCE_NORM, "epsilon", FLOAT)
    REQ(EINSUM, "equation", STRING, 1)
    REQ(DEPTH_TO_SPACE, "blocksize", INT, 1) OPT(DEPTH_TO_SPACE, "mode", STRING) REQ(SPACE_TO_DEPTH, "blocksize", INT, 1)
    OPT(RESHAPE, "allowzero", INT)
    OPT(CUM_SUM, "exclusive", INT) OPT(CUM_SUM, "reverse", INT)
    OPT(PAD, "mode", STRING) OPT(PAD, "pads", INTS)
    OPT(RESIZE, "mode", STRING) OPT(RESIZE, "coordinate_transformation_mode", STRING)
    OPT(SLICE, "starts", INTS) OPT(SLICE, "ends", INTS) OPT(SLICE, "axes", INTS)
    REQ(IF, "then_branch", GRAPH, 1) REQ(IF, "else_branch", GRAPH, 1) REQ(LOOP, "body", GRAPH, 1)
    REQ(SCAN, "body", GRAPH, 1) REQ(SCAN, "num_scan_inputs", INT, 1)
    OPT(SCAN, "scan_input_axes", INTS) OPT(SCAN, "scan_output_axes", INTS)
    OPT(CONSTANT_OF_SHAPE, "value", TENSOR)
    OPT(SHAPE, "start", INT) OPT(SHAPE, "end", INT)
    REQ(LRN, "size", INT, 1) OPT(LEAKY_RELU, "alpha", FLOAT) OPT(ELU, "alpha", FLOAT)
    REQ(MAX_ROI_POOL, "pooled_shape", INTS, 1)
};
/* clang-format on */

static const char *const type_names[] = {
    [FP_ATTR_UNDEFINED] = "UNDEFINED",
    [FP_ATTR_FLOAT] = "FLOAT",
    [FP_ATTR_INT] = "INT",
    [FP_ATTR_STRING] = "STRING",
    [FP_ATTR_TENSOR] = "TENSOR",
    [FP_ATTR_GRAPH] = "GRAPH",
    [FP_ATTR_FLOATS] = "FLOATS",
    [FP_ATTR_INTS] = "INTS",
    [FP_ATTR_STRINGS] = "STRINGS",
    [FP_ATTR_TENSORS] = "TENSORS",
    [FP_ATTR_GRAPHS] = "GRAPHS",
    [FP_ATTR_TYPE] = "TYPE_PROTO",
    [FP_ATTR_TYPES] = "TYPE_PROTOS",
    [FP_ATTR_SPARSE_TENSOR] = "SPARSE_TENSOR",
    [FP_ATTR_SPARSE_TENSORS] = "SPARSE_TENSORS",
};

static const char *type_name(fp_attr_type t)
{
    return (unsigned)t < G_N_ELEMENTS(type_names) && type_names[t] ? type_names[t] : "?";
}

/* Exact, or a form the readers accept (fp_node_attr_float takes an INT, sh_attr_ints an INT). */
static bool type_ok(fp_attr_type have, fp_attr_type want)
{
    return have == want || (want == FP_ATTR_INTS && have == FP_ATTR_INT) ||
           (want == FP_ATTR_FLOATS && have == FP_ATTR_FLOAT) || (want == FP_ATTR_FLOAT && have == FP_ATTR_INT);
}

/* specs grouped by op, in table order within an op: by_op[first[op] .. first[op + 1]) (built once;
 * a scan of the whole table per node cost more than the rest of the check) */
static uint16_t by_op[G_N_ELEMENTS(specs)], first[FP_OP_COUNT + 1];

static gpointer index_specs(gpointer unused)
{
    (void)unused;
    for (size_t i = 0; i < G_N_ELEMENTS(specs); i++)
        first[specs[i].op + 1]++;
    for (int op = 0; op < FP_OP_COUNT; op++)
        first[op + 1] += first[op];
    uint16_t fill[FP_OP_COUNT];
    memcpy(fill, first, sizeof fill);
    for (size_t i = 0; i < G_N_ELEMENTS(specs); i++)
        by_op[fill[specs[i].op]++] = (uint16_t)i;
    return NULL;
}

bool sh_check_attrs(sh_ctx *c)
{
    static GOnce once = G_ONCE_INIT;
    const fp_node *n = c->n;
    if (c->ge || (*n->domain && strcmp(n->domain, "ai.onnx") != 0) || n->op == FP_OP_OPAQUE ||
        (unsigned)n->op >= FP_OP_COUNT)
        return true;
    g_once(&once, index_specs, NULL);
    for (size_t i = first[n->op]; i < first[n->op + 1]; i++) {
        const attr_spec *s = &specs[by_op[i]];
        const fp_attr *a = fp_node_attr(n, s->name);
        if (!a) {
            if (s->required_from && c->opset >= s->required_from) {
                sh_fail(c, "missing required attribute '%s' (%s)", s->name, type_name(s->type));
                return false;
            }
            continue;
        }
        if (a->ref_attr_name || c->opset < s->typed_from || type_ok(a->type, s->type))
            continue;
        sh_fail(c, "attribute '%s' is %s, expected %s", s->name, type_name(a->type), type_name(s->type));
        return false;
    }
    return true;
}
