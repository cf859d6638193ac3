/* shape_rules.h - the per-op shape rules (shape_rules_nn.c, shape_rules_data.c,
 * shape_rules_attn.c, shape_rules_quant.c, shape_rules_moe.c) and the table that hangs them off the op table (shape_rules_table.c). */
#ifndef FP_SHAPE_RULES_H
#define FP_SHAPE_RULES_H

#include "shape_ctx.h"

/* clang-format off */
#define SH_RULES(X)                                                                                        \
    X(binary) X(compare) X(where) X(same) X(bool_same) X(cast) X(quantize) X(dyn_quantize)                 \
    X(conv) X(conv_transpose) X(pool) X(global_pool) X(roi) X(max_unpool) X(gemm) X(matmul) X(einsum)      \
    X(det) X(batch_norm) X(layer_norm) X(skip_layer_norm) X(reduce) X(arg) X(topk) X(rnn) X(loss)          \
    X(reshape) X(flatten) X(squeeze) X(unsqueeze) X(identity) X(dropout) X(transpose) X(concat) X(split)   \
    X(slice) X(gather) X(gather_elements) X(gather_nd) X(pad) X(tile) X(expand) X(resize) X(depth_space)   \
    X(compress) X(one_hot) X(eye_like) X(grid_sample) X(center_crop_pad) X(shape)                          \
    X(size) X(constant) X(constant_of_shape) X(range) X(non_zero) X(unique) X(nms) X(window) X(dft)        \
    X(stft) X(mel) X(random) X(random_like) X(multinomial) X(seq_construct) X(seq_empty) X(seq_at)         \
    X(seq_insert) X(seq_erase) X(seq_length) X(split_to_seq) X(concat_from_seq) X(optional)                \
    X(optional_get) X(optional_has) X(string_normalizer) X(tfidf) X(bias_gelu) X(attention) X(col2im)     \
    X(group_query_attention) X(multi_head_attention) X(embed_layer_norm) X(rotary_embedding) X(matmul_nbits)     \
    X(matmul_integer_to_float) X(gather_block_quantized) X(moe) X(qmoe)

/* clang-format on */
typedef sh_result (*sh_rule)(sh_ctx *c);

#define X(name) sh_result sh_rule_##name(sh_ctx *c);
SH_RULES(X)
#undef X

/* Per-op shape rules, indexed by fp_op (NULL: no rule). */
extern const sh_rule fp_shape_rules[FP_OP_COUNT];

#endif
