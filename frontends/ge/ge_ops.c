/* ge_ops.c - GE op types and data types onto the IR's op kinds and dtypes.
 *
 * Only types whose semantics match an IR op kind map; every other GE type stays FP_OP_OPAQUE
 * with its name kept as op_type. Sources for the types: docs/ge.md. */
#include "ge.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *type;
    fp_op op;
} ge_op_row;

/* Sorted by strcmp on `type` (bsearch; the ge suite checks the order). */
static const ge_op_row ge_ops[] = {
    {"Abs", FP_OP_ABS},
    {"Add", FP_OP_ADD},
    {"AddV2", FP_OP_ADD},
    {"AvgPool", FP_OP_AVERAGE_POOL},
    {"AvgPoolV2", FP_OP_AVERAGE_POOL},
    {"BNInference", FP_OP_BATCH_NORM},
    {"BNInferenceD", FP_OP_BATCH_NORM},
    {"BatchMatMul", FP_OP_MATMUL},
    {"BatchMatMulV2", FP_OP_MATMUL},
    {"BatchNorm", FP_OP_BATCH_NORM},
    {"Cast", FP_OP_CAST},
    {"Ceil", FP_OP_CEIL},
    {"Concat", FP_OP_CONCAT},
    {"ConcatD", FP_OP_CONCAT},
    {"ConcatV2", FP_OP_CONCAT},
    {"ConcatV2D", FP_OP_CONCAT},
    {"Const", FP_OP_CONSTANT},
    {"Constant", FP_OP_CONSTANT},
    {"Conv2D", FP_OP_CONV},
    {"Conv2DTranspose", FP_OP_CONV_TRANSPOSE},
    {"Conv2DTransposeD", FP_OP_CONV_TRANSPOSE},
    {"Conv3D", FP_OP_CONV},
    {"Convolution", FP_OP_CONV},
    {"Cos", FP_OP_COS},
    {"Data", FP_OP_IDENTITY},
    {"Deconvolution", FP_OP_CONV_TRANSPOSE},
    {"DepthwiseConv2D", FP_OP_CONV},
    {"Div", FP_OP_DIV},
    {"Dropout", FP_OP_DROPOUT},
    {"Eltwise", FP_OP_ADD},
    {"Elu", FP_OP_ELU},
    {"Equal", FP_OP_EQUAL},
    {"Erf", FP_OP_ERF},
    {"Exp", FP_OP_EXP},
    {"ExpandDims", FP_OP_UNSQUEEZE},
    {"Flatten", FP_OP_FLATTEN},
    {"Floor", FP_OP_FLOOR},
    {"FullyConnection", FP_OP_GEMM},
    {"Gather", FP_OP_GATHER},
    {"GatherV2", FP_OP_GATHER},
    {"GatherV2D", FP_OP_GATHER},
    {"Gelu", FP_OP_GELU},
    {"Greater", FP_OP_GREATER},
    {"GreaterEqual", FP_OP_GREATER_OR_EQUAL},
    {"Identity", FP_OP_IDENTITY},
    {"InstanceNorm", FP_OP_INSTANCE_NORM},
    {"LayerNorm", FP_OP_LAYER_NORM},
    {"LeakyRelu", FP_OP_LEAKY_RELU},
    {"Less", FP_OP_LESS},
    {"LessEqual", FP_OP_LESS_OR_EQUAL},
    {"Log", FP_OP_LOG},
    {"LogSoftmaxV2", FP_OP_LOG_SOFTMAX},
    {"MatMul", FP_OP_MATMUL},
    {"MatMulV2", FP_OP_MATMUL},
    {"MaxPool", FP_OP_MAX_POOL},
    {"MaxPoolV3", FP_OP_MAX_POOL},
    {"Maximum", FP_OP_MAX},
    {"Minimum", FP_OP_MIN},
    {"MirrorPad", FP_OP_PAD},
    {"Mish", FP_OP_MISH},
    {"Mul", FP_OP_MUL},
    {"Neg", FP_OP_NEG},
    {"PRelu", FP_OP_PRELU},
    {"Pad", FP_OP_PAD},
    {"PadD", FP_OP_PAD},
    {"Pooling", FP_OP_MAX_POOL},
    {"Pow", FP_OP_POW},
    {"ReLU", FP_OP_RELU},
    {"RealDiv", FP_OP_DIV},
    {"Reciprocal", FP_OP_RECIPROCAL},
    {"ReduceMax", FP_OP_REDUCE_MAX},
    {"ReduceMaxD", FP_OP_REDUCE_MAX},
    {"ReduceMean", FP_OP_REDUCE_MEAN},
    {"ReduceMeanD", FP_OP_REDUCE_MEAN},
    {"ReduceMin", FP_OP_REDUCE_MIN},
    {"ReduceMinD", FP_OP_REDUCE_MIN},
    {"ReduceProd", FP_OP_REDUCE_PROD},
    {"ReduceProdD", FP_OP_REDUCE_PROD},
    {"ReduceSum", FP_OP_REDUCE_SUM},
    {"ReduceSumD", FP_OP_REDUCE_SUM},
    {"Relu", FP_OP_RELU},
    {"Reshape", FP_OP_RESHAPE},
    {"RmsNorm", FP_OP_SIMPLIFIED_LAYER_NORM},
    {"Round", FP_OP_ROUND},
    {"Shape", FP_OP_SHAPE},
    {"Sigmoid", FP_OP_SIGMOID},
    {"Sign", FP_OP_SIGN},
    {"Sin", FP_OP_SIN},
    {"Size", FP_OP_SIZE},
    {"Slice", FP_OP_SLICE},
    {"SliceD", FP_OP_SLICE},
    {"Softmax", FP_OP_SOFTMAX},
    {"SoftmaxV2", FP_OP_SOFTMAX},
    {"Softplus", FP_OP_SOFTPLUS},
    {"Softsign", FP_OP_SOFTSIGN},
    {"Split", FP_OP_SPLIT},
    {"SplitD", FP_OP_SPLIT},
    {"SplitV", FP_OP_SPLIT},
    {"SplitVD", FP_OP_SPLIT},
    {"Sqrt", FP_OP_SQRT},
    {"Squeeze", FP_OP_SQUEEZE},
    {"Sub", FP_OP_SUB},
    {"Tanh", FP_OP_TANH},
    {"Tile", FP_OP_TILE},
    {"TileD", FP_OP_TILE},
    {"TransData", FP_OP_TRANS_DATA},
    {"Transpose", FP_OP_TRANSPOSE},
    {"TransposeD", FP_OP_TRANSPOSE},
    {"Unsqueeze", FP_OP_UNSQUEEZE},
};

static int row_cmp(const void *key, const void *row) { return strcmp(key, ((const ge_op_row *)row)->type); }

fp_op fp_ge_op_kind(const char *ge_type)
{
    if (!ge_type)
        return FP_OP_OPAQUE;
    const ge_op_row *r = bsearch(ge_type, ge_ops, G_N_ELEMENTS(ge_ops), sizeof ge_ops[0], row_cmp);
    return r ? r->op : FP_OP_OPAQUE;
}

const char *fp_ge_op_table_type(size_t i) { return i < G_N_ELEMENTS(ge_ops) ? ge_ops[i].type : NULL; }

fp_dtype fp_ge_dtype_from_proto(int64_t v)
{
    /* ge.proto.DataType -> fp_dtype; quantized types map to their storage type (same size) */
    static const fp_dtype map[] = {
        [1] = FP_DT_FLOAT,       [2] = FP_DT_FLOAT16,     [3] = FP_DT_INT8,          [4] = FP_DT_UINT8,
        [5] = FP_DT_INT16,       [6] = FP_DT_UINT16,      [7] = FP_DT_INT32,         [8] = FP_DT_INT64,
        [9] = FP_DT_UINT32,      [10] = FP_DT_UINT64,     [11] = FP_DT_BOOL,         [12] = FP_DT_DOUBLE,
        [13] = FP_DT_STRING,     [14] = FP_DT_INT8,       [15] = FP_DT_UINT8,        [16] = FP_DT_COMPLEX64,
        [17] = FP_DT_COMPLEX128, [18] = FP_DT_INT8,       [19] = FP_DT_INT16,        [20] = FP_DT_INT32,
        [21] = FP_DT_UINT8,      [22] = FP_DT_UINT16,     [24] = FP_DT_STRING,       [27] = FP_DT_BFLOAT16,
        [28] = FP_DT_INT4,       [34] = FP_DT_FLOAT8E5M2, [35] = FP_DT_FLOAT8E4M3FN, [39] = FP_DT_FLOAT4E2M1,
    };
    return v > 0 && v < (int64_t)G_N_ELEMENTS(map) ? map[v] : FP_DT_UNDEFINED;
}

fp_dtype fp_ge_dtype_from_cpp(int64_t v)
{
    /* C++ ge::DataType (inc/external/graph/types.h) -> fp_dtype */
    static const fp_dtype map[] = {
        [0] = FP_DT_FLOAT,       [1] = FP_DT_FLOAT16, [2] = FP_DT_INT8,    [3] = FP_DT_INT32,
        [4] = FP_DT_UINT8,       [6] = FP_DT_INT16,   [7] = FP_DT_UINT16,  [8] = FP_DT_UINT32,
        [9] = FP_DT_INT64,       [10] = FP_DT_UINT64, [11] = FP_DT_DOUBLE, [12] = FP_DT_BOOL,
        [13] = FP_DT_STRING,     [14] = FP_DT_INT8,   [15] = FP_DT_UINT8,  [16] = FP_DT_COMPLEX64,
        [17] = FP_DT_COMPLEX128, [18] = FP_DT_INT8,   [19] = FP_DT_INT16,  [20] = FP_DT_INT32,
        [21] = FP_DT_UINT8,      [22] = FP_DT_UINT16, [24] = FP_DT_STRING, [27] = FP_DT_BFLOAT16,
        [29] = FP_DT_INT4,
    };
    if (v < 0 || v >= (int64_t)G_N_ELEMENTS(map))
        return FP_DT_UNDEFINED;
    return v == 0 ? FP_DT_FLOAT : map[v]; /* map[0] is FLOAT; other holes are UNDEFINED (0) */
}
