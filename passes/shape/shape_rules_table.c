/* shape_rules_table.c - the shape rule of each op kind, indexed by the op table's enum.
 * Ops not listed have no rule: their outputs keep the shapes declared in the file. */
#include "shape_rules.h"

/* clang-format off */
#define R(op, rule) [FP_OP_##op] = sh_rule_##rule,

const sh_rule fp_shape_rules[FP_OP_COUNT] = {
    /* elementwise binary / variadic */
    R(ADD, binary) R(SUB, binary) R(MUL, binary) R(DIV, binary) R(POW, binary) R(MOD, binary)
    R(MAX, binary) R(MIN, binary) R(MEAN, binary) R(SUM, binary) R(BIT_SHIFT, binary) R(PRELU, same)
    R(AND, compare) R(OR, compare) R(XOR, compare) R(EQUAL, compare) R(GREATER, compare)
    R(GREATER_OR_EQUAL, compare) R(LESS, compare) R(LESS_OR_EQUAL, compare) R(WHERE, where)
    /* unary */
    R(ABS, same) R(ACOS, same) R(ACOSH, same) R(ASIN, same) R(ASINH, same) R(ATAN, same) R(ATANH, same)
    R(CEIL, same) R(COS, same) R(COSH, same) R(ERF, same) R(EXP, same) R(FLOOR, same) R(LOG, same)
    R(NEG, same) R(NOT, same) R(RECIPROCAL, same) R(ROUND, same) R(SIGN, same) R(SIN, same) R(SINH, same)
    R(SQRT, same) R(TAN, same) R(IS_INF, bool_same) R(IS_NAN, bool_same) R(CAST, cast) R(CAST_LIKE, cast)
    R(RELU, same) R(LEAKY_RELU, same) R(SIGMOID, same) R(TANH, same) R(CLIP, same) R(HARD_SIGMOID, same)
    R(HARD_SWISH, same) R(ELU, same) R(SELU, same) R(CELU, same) R(SOFTPLUS, same) R(SOFTSIGN, same)
    R(THRESHOLDED_RELU, same) R(SHRINK, same) R(MISH, same) R(GELU, same) R(QUICK_GELU, same)
    R(FAST_GELU, same) R(BIAS_GELU, bias_gelu)
    R(QUANTIZE_LINEAR, quantize) R(DEQUANTIZE_LINEAR, quantize) R(DYN_QUANTIZE_LINEAR, dyn_quantize)
    /* contractions */
    R(CONV, conv) R(CONV_INTEGER, conv) R(QLINEAR_CONV, conv) R(FUSED_CONV, conv)
    R(CONV_TRANSPOSE, conv_transpose) R(GEMM, gemm) R(FUSED_GEMM, gemm) R(MATMUL, matmul)
    R(MATMUL_INTEGER, matmul) R(QLINEAR_MATMUL, matmul) R(FUSED_MATMUL, matmul) R(EINSUM, einsum)
    R(DET, det) R(ATTENTION, attention) R(GROUP_QUERY_ATTENTION, group_query_attention)
    R(MULTI_HEAD_ATTENTION, multi_head_attention) R(ROTARY_EMBEDDING, rotary_embedding)
    R(MATMUL_NBITS, matmul_nbits) R(MATMUL_INTEGER_TO_FLOAT, matmul_integer_to_float) R(MOE, moe) R(QMOE, qmoe)
    /* normalization */
    R(BATCH_NORM, batch_norm) R(INSTANCE_NORM, same) R(LAYER_NORM, layer_norm) R(GROUP_NORM, same)
    R(LRN, same) R(LP_NORM, same) R(MVN, same) R(SKIP_LAYER_NORM, skip_layer_norm)
    R(SIMPLIFIED_LAYER_NORM, layer_norm) R(SKIP_SIMPLIFIED_LAYER_NORM, skip_layer_norm)
    R(EMBED_LAYER_NORM, embed_layer_norm)
    /* pooling */
    R(AVERAGE_POOL, pool) R(MAX_POOL, pool) R(LP_POOL, pool) R(GLOBAL_AVG_POOL, global_pool)
    R(GLOBAL_MAX_POOL, global_pool) R(GLOBAL_LP_POOL, global_pool) R(MAX_ROI_POOL, roi) R(ROI_ALIGN, roi)
    R(MAX_UNPOOL, max_unpool)
    /* reductions */
    R(REDUCE_L1, reduce) R(REDUCE_L2, reduce) R(REDUCE_LOG_SUM, reduce) R(REDUCE_LOG_SUM_EXP, reduce)
    R(REDUCE_MAX, reduce) R(REDUCE_MEAN, reduce) R(REDUCE_MIN, reduce) R(REDUCE_PROD, reduce)
    R(REDUCE_SUM, reduce) R(REDUCE_SUM_SQUARE, reduce) R(ARG_MAX, arg) R(ARG_MIN, arg)
    R(SOFTMAX, same) R(LOG_SOFTMAX, same) R(HARDMAX, same) R(CUM_SUM, same) R(TOP_K, topk)
    /* views and data movement */
    R(RESHAPE, reshape) R(FLATTEN, flatten) R(SQUEEZE, squeeze) R(UNSQUEEZE, unsqueeze)
    R(IDENTITY, identity) R(REORDER_INPUT, same) R(REORDER_OUTPUT, same) R(TRANS_DATA, same) R(DROPOUT, dropout) R(TRANSPOSE, transpose) R(CONCAT, concat) R(SPLIT, split)
    R(SLICE, slice) R(GATHER, gather) R(GATHER_BLOCK_QUANTIZED, gather_block_quantized) R(GATHER_ELEMENTS, gather_elements) R(GATHER_ND, gather_nd)
    R(SCATTER, same) R(SCATTER_ELEMENTS, same) R(SCATTER_ND, same) R(PAD, pad) R(TILE, tile)
    R(EXPAND, expand) R(RESIZE, resize) R(UPSAMPLE, resize) R(DEPTH_TO_SPACE, depth_space)
    R(SPACE_TO_DEPTH, depth_space) R(COMPRESS, compress) R(REVERSE_SEQUENCE, same) R(TRILU, same)
    R(ONE_HOT, one_hot) R(EYE_LIKE, eye_like) R(GRID_SAMPLE, grid_sample) R(COL2IM, col2im)
    R(CENTER_CROP_PAD, center_crop_pad)
    /* shapes and constants */
    R(SHAPE, shape) R(SIZE, size) R(CONSTANT, constant) R(CONSTANT_OF_SHAPE, constant_of_shape)
    R(RANGE, range) R(NON_ZERO, non_zero) R(UNIQUE, unique) R(NON_MAX_SUPPRESSION, nms)
    /* recurrent */
    R(LSTM, rnn) R(GRU, rnn) R(RNN, rnn)
    /* sequences and optionals */
    R(SEQUENCE_CONSTRUCT, seq_construct) R(SEQUENCE_EMPTY, seq_empty) R(SEQUENCE_AT, seq_at)
    R(SEQUENCE_INSERT, seq_insert) R(SEQUENCE_ERASE, seq_erase) R(SEQUENCE_LENGTH, seq_length)
    R(SPLIT_TO_SEQUENCE, split_to_seq) R(CONCAT_FROM_SEQUENCE, concat_from_seq) R(OPTIONAL, optional)
    R(OPTIONAL_GET_ELEMENT, optional_get) R(OPTIONAL_HAS_ELEMENT, optional_has)
    /* signal, random, misc */
    R(DFT, dft) R(STFT, stft) R(BLACKMAN_WINDOW, window) R(HAMMING_WINDOW, window) R(HANN_WINDOW, window)
    R(MEL_WEIGHT_MATRIX, mel) R(BERNOULLI, random_like) R(RANDOM_NORMAL, random) R(RANDOM_UNIFORM, random)
    R(RANDOM_NORMAL_LIKE, random_like) R(RANDOM_UNIFORM_LIKE, random_like) R(MULTINOMIAL, multinomial)
    R(STRING_NORMALIZER, string_normalizer) R(TFIDF_VECTORIZER, tfidf) R(NLL_LOSS, loss) R(SOFTMAX_CE_LOSS, loss)
};
/* clang-format on */
