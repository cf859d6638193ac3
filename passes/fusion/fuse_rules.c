/* fuse_rules.c - the rule catalogue: each rule is data (pattern, named constraints, rewrite).
 * Targets (passes/fusion/targets/NAME.ini) pick rules and override their parameters. The conditions and
 * their sources are listed in docs/rules.md. */
#include "passes/fusion/fuse.h"

/* clang-format off */
#define END FP_OP_COUNT
#define OPS(...) {__VA_ARGS__, END}
/* pattern node helpers */
#define ANCHOR(lbl, ...) {.label = lbl, .ops = OPS(__VA_ARGS__), .from = -1, .port = -1, .from2 = -1, .port2 = -1}
#define NEXT(lbl, f, p, ...) {.label = lbl, .ops = OPS(__VA_ARGS__), .from = f, .port = p, .from2 = -1, .port2 = -1}
#define NEXT2(lbl, f, p, f2, p2, ...) {.label = lbl, .ops = OPS(__VA_ARGS__), .from = f, .port = p, .from2 = f2, .port2 = p2}
#define NEXT_FLAGS(lbl, f, fl) {.label = lbl, .ops = {END}, .flags = fl, .from = f, .port = 0, .from2 = -1, .port2 = -1}
/* constraint helpers: nm is a name of fuse_constraints.def */
#define C(nm, nd, pt) {.id = FP_CONSTRAINT_##nm, .node = nd, .port = pt}
#define CN(nm, nd, pt, key, val) {.id = FP_CONSTRAINT_##nm, .node = nd, .port = pt, .param = key, .num = val}
#define CL(nm, nd, pt, key, lst) {.id = FP_CONSTRAINT_##nm, .node = nd, .port = pt, .param = key, .list = lst}
/* gating constraints: define the pattern; a failure means "not a candidate" */
#define G(nm, nd, pt) {.id = FP_CONSTRAINT_##nm, .node = nd, .port = pt, .gate = true}
#define GN(nm, nd, pt, key, val) {.id = FP_CONSTRAINT_##nm, .node = nd, .port = pt, .param = key, .num = val, .gate = true}

/* patterns that several compilers' rules share */
/* LayerNorm decomposed: ReduceMean, Sub(x, mean), Pow(., 2), ReduceMean, Add(eps), Sqrt, Div, Mul(gamma), Add(beta) */
#define LAYER_NORM_PATTERN                                                                                            \
    {ANCHOR("mean", FP_OP_REDUCE_MEAN), NEXT2("sub", 0, 1, FP_PAT_X, 0, FP_OP_SUB), NEXT("pow", 1, 0, FP_OP_POW),     \
     NEXT("var", 2, 0, FP_OP_REDUCE_MEAN), NEXT("add_eps", 3, -1, FP_OP_ADD), NEXT("sqrt", 4, 0, FP_OP_SQRT),        \
     NEXT2("div", 5, 1, 1, 0, FP_OP_DIV), NEXT("mul_gamma", 6, -1, FP_OP_MUL), NEXT("add_beta", 7, -1, FP_OP_ADD)}
/* RMSNorm from primitive ops: Pow(x, 2), ReduceMean, Add(eps), Sqrt, Div(x, .), Mul(scale) */
#define RMS_NORM_PATTERN                                                                                              \
    {ANCHOR("pow", FP_OP_POW), NEXT("mean", 0, 0, FP_OP_REDUCE_MEAN), NEXT("add_eps", 1, -1, FP_OP_ADD),             \
     NEXT("sqrt", 2, 0, FP_OP_SQRT), NEXT2("div", 3, 1, FP_PAT_X, 0, FP_OP_DIV), NEXT("mul_scale", 4, -1, FP_OP_MUL)}
/* RMSNorm as x * (1 / Sqrt(...)) * scale: torch.rsqrt's export */
#define RMS_NORM_RECIP_PATTERN                                                                                        \
    {ANCHOR("pow", FP_OP_POW), NEXT("mean", 0, 0, FP_OP_REDUCE_MEAN), NEXT("add_eps", 1, -1, FP_OP_ADD),             \
     NEXT("sqrt", 2, 0, FP_OP_SQRT), NEXT("recip", 3, 1, FP_OP_DIV), NEXT2("mul_x", 4, -1, FP_PAT_X, -1, FP_OP_MUL), \
     NEXT("mul_scale", 5, -1, FP_OP_MUL)}
/* ONNX Runtime's erf-form Gelu rule over a 5-node pattern (the varargs) whose 0.5 Mul is node `half` */
#define ORT_GELU_RULE(half, ...)                                                                                      \
    {.id = "gelu", .title = "erf-form Gelu -> Gelu", .source = "onnxruntime gelu_fusion.cc (level 2)",               \
     .pattern = __VA_ARGS__, .n_pattern = 5,                                                                          \
     .constraints = {C(assigned, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, -1, -1),                                         \
                     GN(const_value, 0, 1, "sqrt2", 1.4142135), GN(const_value, 2, -1, "one", 1.0),                   \
                     GN(const_value, half, -1, "half", 0.5)},                                                         \
     .n_constraints = 6, .rewrite = FP_RW_FUSE, .fused_op = "Gelu", .fused_kind = FP_OP_GELU, .act_node = -1,       \
     .operands = {FP_PAT_X}, .n_operands = 1}
/* tanh-form Gelu up to 1 + tanh: Pow(x, 3), Mul(0.044715), Add(x, .), Mul(sqrt(2/pi)), Tanh, Add(1) */
#define FAST_GELU_HEAD                                                                                                \
    ANCHOR("pow", FP_OP_POW), NEXT("mul_c", 0, -1, FP_OP_MUL), NEXT2("add", 1, -1, FP_PAT_X, -1, FP_OP_ADD),        \
        NEXT("mul_k", 2, -1, FP_OP_MUL), NEXT("tanh", 3, 0, FP_OP_TANH), NEXT("add_one", 4, -1, FP_OP_ADD)
#define FAST_GELU_CONSTS                                                                                              \
    C(single_consumer, -1, -1), C(not_graph_output, -1, -1), GN(const_value, 0, 1, "three", 3.0),                    \
        GN(const_value, 1, -1, "c", 0.044715), GN(const_value, 3, -1, "sqrt_2_over_pi", 0.7978845608),              \
        GN(const_value, 5, -1, "one", 1.0)
/* erf-form Gelu, the 0.5 Mul last: Div(x, sqrt2), Erf, Add(1), Mul(x, .), Mul(., 0.5) */
#define GELU_PATTERN                                                                                                  \
    {ANCHOR("div", FP_OP_DIV), NEXT("erf", 0, 0, FP_OP_ERF), NEXT("add", 1, -1, FP_OP_ADD),                           \
     NEXT2("mul", 2, -1, FP_PAT_X, -1, FP_OP_MUL), NEXT("mul_half", 3, -1, FP_OP_MUL)}

/* QDQ node units (ONNX Runtime's QDQSelectorActionTransformer): the anchor, the QuantizeLinear
 * reading it (node 1, when the unit has one), the DequantizeLinear feeding its input 0, then the
 * optional ones feeding its other inputs (dq_inputs says when one is missing) */
#define UP(lbl, p, opt_) {.label = lbl, .ops = OPS(FP_OP_DEQUANTIZE_LINEAR), .from = 0, .port = p, .from2 = -1, .port2 = -1, .up = true, .opt = opt_}
#define Q_OUT NEXT("q", 0, 0, FP_OP_QUANTIZE_LINEAR)
#define QDQ_SRC(what) "onnxruntime qdq_selector_action_transformer.cc " what ", qdq_selectors.cc (level 2, CPU EP)"
#define QDQ_8BIT CL(quant_dtypes, -1, -1, "dtypes", "int8,uint8")
#define QDQ_Q_UNIT C(single_consumer, 0, -1), C(not_graph_output, 0, -1), C(dq_inputs, -1, -1), QDQ_8BIT
#define QDQ_NO_Q_UNIT G(no_q_reader, 0, -1), C(dq_inputs, -1, -1), QDQ_8BIT, C(no_clip_after, 0, -1)
/* a unit matching pat (a parenthesized list of npat pattern nodes) becomes `fused` of kind `kind`,
 * or keeps its op (fused NULL); the varargs are its constraints */
#define UNPAREN(...) __VA_ARGS__
#define QDQ_RULE(id_, title_, what, pat, npat, fused, kind, ...)                                                       \
    {.id = id_, .title = title_, .source = QDQ_SRC(what), .pattern = {UNPAREN pat}, .n_pattern = npat,                          \
     .constraints = {__VA_ARGS__}, .n_constraints = (int)(sizeof((fp_constraint[]){__VA_ARGS__}) / sizeof(fp_constraint)), \
     .rewrite = FP_RW_QDQ, .fused_op = fused, .fused_kind = kind, .act_node = -1}
#define QDQ_UNARY(op, name) QDQ_RULE("qdq_unary", "DQ + " #op " + Q -> " name, "UnaryOpQDQRules",                     \
    (ANCHOR("op", op), Q_OUT, UP("dq", 0, false)), 3, name, op, QDQ_Q_UNIT)
#define QDQ_BINARY(op, name) QDQ_RULE("qdq_binary", "2 DQ + " #op " + Q -> " name, "BinaryOpQDQRules",              \
    (ANCHOR("op", op), Q_OUT, UP("dq_a", 0, false), UP("dq_b", 1, true)), 4, name, op, QDQ_Q_UNIT)

#define ORT_ACTS "Relu,Sigmoid,Tanh,LeakyRelu,Clip,HardSigmoid"
#define ORT_CONV_BN "onnxruntime/core/optimizer/conv_bn_fusion.cc (ConvBNFusion, level 1)"
#define ORT_CONVT_BN ORT_CONV_BN ", ConvTranspose from ONNX Runtime 1.31 (measured; microsoft/onnxruntime#14270)"
#define ORT_CONV_ACT "onnxruntime/core/optimizer/conv_activation_fusion.cc (level 2)"
#define GE_ATTN_SRC "CANN fusion rule reference: no pass builds FlashAttentionScore, PromptFlashAttention or IncreFlashAttention from primitive ops (fact sheet B.3)"
#define GE_ATTN_OP "FlashAttentionScore (torch_npu.npu_fusion_attention, or scaled_dot_product_attention under torch_npu), PromptFlashAttention / IncreFlashAttention for inference"
#define GE_ROPE_SRC "CANN fusion rule reference: the RoPE passes act on RotaryMul / InterleaveRope only, none builds them from primitive ops (fact sheet B.3); OPST ApplyRotaryPosEmb kernel"
#define GE_ROPE_OP "RotaryMul (torch_npu.npu_rotary_mul), or ApplyRotaryPosEmb for q and k together (torch_npu.npu_apply_rotary_pos_emb)"
#define TRT_FUSIONS "TensorRT 8.x Developer Guide, Types of Fusions"
#define TRT_MHA "TensorRT Developer Guide, MHA fusion (SM >= 75; FP16/BF16 with 16 <= head size <= 256, a multiple of 8)"

const fp_rule fp_rules[] = {
    /* ---- eliminations (ORT level 1: EliminateIdentity, EliminateDropout) ---- */
    {.id = "identity_elim", .title = "remove Identity", .source = "onnxruntime EliminateIdentity (level 1)",
     .pattern = {ANCHOR("identity", FP_OP_IDENTITY)}, .n_pattern = 1,
     .constraints = {C(not_graph_output, 0, -1)}, .n_constraints = 1,
     .rewrite = FP_RW_ELIMINATE, .act_node = -1},
    {.id = "identity_output_elim", .title = "remove an Identity that writes a graph output",
     .source = "onnxruntime identity_elimination.cc, EliminateIdentity::SatisfyCondition (level 1): its producer "
               "writes the graph output",
     .pattern = {ANCHOR("identity", FP_OP_IDENTITY)}, .n_pattern = 1,
     .constraints = {C(identity_output, 0, -1)}, .n_constraints = 1,
     .rewrite = FP_RW_ELIMINATE, .act_node = -1},
    {.id = "dropout_elim", .title = "remove Dropout at inference", .source = "onnxruntime EliminateDropout (level 1)",
     .pattern = {ANCHOR("dropout", FP_OP_DROPOUT)}, .n_pattern = 1,
     .constraints = {C(not_graph_output, 0, -1), C(mask_unused, 0, -1), C(one_input_edge, 0, -1)}, .n_constraints = 3,
     .rewrite = FP_RW_ELIMINATE, .act_node = -1},

    /* a Cast to the type its input has (ORT level 1: CastElimination) */
    {.id = "cast_elim", .title = "remove a Cast to its input's own type",
     .source = "onnxruntime cast_elimination.cc, CastElimination (level 1)",
     .pattern = {ANCHOR("cast", FP_OP_CAST)}, .n_pattern = 1,
     .constraints = {G(noop_cast, 0, -1), C(not_graph_output, 0, -1)}, .n_constraints = 2,
     .rewrite = FP_RW_ELIMINATE, .act_node = -1},

    {.id = "expand_elim", .title = "remove an Expand to its input's own shape",
     .source = "onnxruntime expand_elimination.cc, ExpandElimination (level 1)",
     .pattern = {ANCHOR("expand", FP_OP_EXPAND)}, .n_pattern = 1,
     .constraints = {G(noop_expand, 0, -1), C(not_graph_output, 0, -1), C(one_input_edge, 0, -1)},
     .n_constraints = 3,
     .rewrite = FP_RW_ELIMINATE, .act_node = -1},

    /* x + 0, x * 1 and the like (ORT level 1): the readers read x */
    {.id = "noop_elim", .title = "remove an Add/Sub of 0 or a Mul/Div by 1", .source = "onnxruntime NoopElimination (level 1)",
     .pattern = {ANCHOR("noop", FP_OP_ADD, FP_OP_SUB, FP_OP_MUL, FP_OP_DIV)}, .n_pattern = 1,
     .constraints = {G(noop_operand, 0, -1), C(not_graph_output, 0, -1), C(one_input_edge, 0, -1)},
     .n_constraints = 3,
     .rewrite = FP_RW_ELIMINATE, .act_node = -1},

    /* 1 / x1 * x2 -> x2 / x1 (ORT level 1): the Mul becomes the Div, the 1 / x1 goes */
    {.id = "div_mul", .title = "Div(1, x1) + Mul(x2, .) -> Div(x2, x1)",
     .source = "onnxruntime div_mul_fusion.cc, DivMulFusion (level 1)",
     .pattern = {ANCHOR("div", FP_OP_DIV), NEXT("mul", 0, -1, FP_OP_MUL)}, .n_pattern = 2,
     .constraints = {GN(const_value, 0, 0, "one", 1.0), G(const_scalar, 0, 0), C(single_consumer, -1, -1),
                     C(not_graph_output, 0, -1)},
     .n_constraints = 4, .rewrite = FP_RW_ABSORB, .fused_op = "Div", .fused_kind = FP_OP_DIV, .act_node = -1},

    /* a zero Pad of the spatial dims folded into the pads of the Conv or pool reading it, through a
     * Cast or not (ORT level 1; the op versions its rule knows end at opset 20 for Pad, 21 after) */
    {.id = "pad_fusion", .title = "Pad + Conv / AveragePool / MaxPool -> the padding in their pads",
     .source = "onnxruntime pad_fusion.cc, PadFusion (level 1)",
     .pattern = {ANCHOR("pad", FP_OP_PAD), NEXT("conv", 0, 0, FP_OP_CONV, FP_OP_AVERAGE_POOL, FP_OP_MAX_POOL)},
     .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, -1, -1), C(pad_foldable, 0, -1),
                     C(explicit_pads, 1, -1), CN(max_opset, 0, -1, "pad_opset", 20), CN(max_opset, 1, -1, "opset", 21)},
     .n_constraints = 6, .rewrite = FP_RW_PAD, .act_node = -1},
    {.id = "pad_fusion", .title = "Pad + Cast + Conv / AveragePool / MaxPool -> the padding in their pads",
     .source = "onnxruntime pad_fusion.cc, PadFusion (level 1)",
     .pattern = {ANCHOR("pad", FP_OP_PAD), NEXT("cast", 0, 0, FP_OP_CAST),
                 NEXT("conv", 1, 0, FP_OP_CONV, FP_OP_AVERAGE_POOL, FP_OP_MAX_POOL)},
     .n_pattern = 3,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, -1, -1), C(pad_foldable, 0, -1),
                     C(explicit_pads, 2, -1), CN(max_opset, 0, -1, "pad_opset", 20), CN(max_opset, 2, -1, "opset", 21)},
     .n_constraints = 6, .rewrite = FP_RW_PAD, .act_node = -1},

    /* ---- folds into Conv (ORT level 1; onnxoptimizer fuse_bn_into_conv) ---- */
    {.id = "conv_bn", .title = "fold BatchNormalization into Conv", .source = ORT_CONV_BN,
     .pattern = {ANCHOR("conv", FP_OP_CONV), NEXT("bn", 0, 0, FP_OP_BATCH_NORM)}, .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, 0, -1), C(const_inputs, 0, -1),
                     C(const_inputs, 1, -1), C(bn_outputs_unused, 1, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float32,float64,float16"), C(bn_params_1d, 1, -1),
                     CN(max_epsilon, 1, -1, "max_epsilon", 0), CN(min_epsilon, 1, -1, "min_epsilon", 0)},
     .n_constraints = 9, .rewrite = FP_RW_FOLD, .act_node = -1},
    {.id = "conv_transpose_bn", .title = "fold BatchNormalization into ConvTranspose", .source = ORT_CONVT_BN,
     .pattern = {ANCHOR("conv", FP_OP_CONV_TRANSPOSE), NEXT("bn", 0, 0, FP_OP_BATCH_NORM)}, .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, 0, -1), C(const_inputs, 0, -1),
                     C(const_inputs, 1, -1), C(bn_outputs_unused, 1, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float32,float64,float16"), C(bn_params_1d, 1, -1),
                     CN(max_epsilon, 1, -1, "max_epsilon", 0), CN(min_epsilon, 1, -1, "min_epsilon", 0)},
     .n_constraints = 9, .rewrite = FP_RW_FOLD, .act_node = -1},
    {.id = "conv_mul", .title = "fold a constant Mul into Conv", .source = "onnxruntime ConvMulFusion (level 1)",
     .pattern = {ANCHOR("conv", FP_OP_CONV), NEXT("mul", 0, -1, FP_OP_MUL)}, .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, 0, -1), C(const_inputs, 0, -1),
                     G(const_other, 1, -1), C(const_second, 1, -1), CN(channel_operand, 1, -1, "scalar", 1),
                     CL(dtype_in, 0, 0, "dtypes", "float32,float64,float16")},
     .n_constraints = 7, .rewrite = FP_RW_FOLD, .act_node = -1},
    {.id = "conv_add", .title = "fold a constant Add into Conv's bias", .source = "onnxruntime ConvAddFusion (level 1)",
     .pattern = {ANCHOR("conv", FP_OP_CONV), NEXT("add", 0, -1, FP_OP_ADD)}, .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, 0, -1), C(const_inputs, 0, -1),
                     G(const_other, 1, -1), C(const_second, 1, -1), CN(channel_operand, 1, -1, "scalar", 0),
                     CL(dtype_in, 0, 0, "dtypes", "float32,float64,float16")},
     .n_constraints = 7, .rewrite = FP_RW_FOLD, .act_node = -1},
    {.id = "matmul_add_gemm", .title = "MatMul + Add -> Gemm (Reshapes around it for N-D inputs)",
     .source = "onnxruntime matmul_add_fusion.cc (level 2, CPU); onnxoptimizer fuse_matmul_add_bias_into_gemm",
     .pattern = {ANCHOR("matmul", FP_OP_MATMUL), NEXT("add", 0, -1, FP_OP_ADD)}, .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, 0, -1), C(gemm_operands, 0, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float32,float16,bfloat16")},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "Gemm", .fused_kind = FP_OP_GEMM, .act_node = -1},

    /* ---- QDQ node units into int8 kernels (ORT level 2, CPU EP: QDQSelectorActionTransformer) ---- */
    QDQ_RULE("qdq_drop", "DQ + data movement + Q -> the op on the quantized tensor", "DropQDQNodesRules",
             (ANCHOR("op", FP_OP_RESHAPE, FP_OP_TRANSPOSE, FP_OP_FLATTEN, FP_OP_SQUEEZE, FP_OP_UNSQUEEZE, FP_OP_SLICE,
                      FP_OP_GATHER), Q_OUT, UP("dq", 0, false)), 3, NULL, FP_OP_COUNT,
             C(single_consumer, 0, -1), C(not_graph_output, 0, -1), QDQ_8BIT, CN(same_quant, -1, -1, "positive_scale", 0)),
    QDQ_RULE("qdq_drop", "DQ + data movement + Q -> the op on the quantized tensor", "DropQDQNodesRules",
             (ANCHOR("op", FP_OP_GATHER_ELEMENTS, FP_OP_EXPAND, FP_OP_TILE), Q_OUT, UP("dq", 0, false)), 3, NULL,
             FP_OP_COUNT, C(single_consumer, 0, -1), C(not_graph_output, 0, -1), QDQ_8BIT,
             CN(same_quant, -1, -1, "positive_scale", 0)),
    QDQ_RULE("qdq_drop", "DQ + MaxPool / ReduceMax / ReduceMin + Q -> the op on the quantized tensor",
             "DropQDQNodesRules", (ANCHOR("op", FP_OP_MAX_POOL, FP_OP_REDUCE_MAX, FP_OP_REDUCE_MIN), Q_OUT,
                                    UP("dq", 0, false)), 3, NULL, FP_OP_COUNT,
             C(single_consumer, 0, -1), C(not_graph_output, 0, -1), QDQ_8BIT, CN(same_quant, -1, -1, "positive_scale", 1),
             CN(min_opset, 0, -1, "opset", 12)),
    QDQ_UNARY(FP_OP_AVERAGE_POOL, "QLinearAveragePool"),
    QDQ_UNARY(FP_OP_LEAKY_RELU, "QLinearLeakyRelu"),
    QDQ_UNARY(FP_OP_GLOBAL_AVG_POOL, "QLinearGlobalAveragePool"),
    QDQ_UNARY(FP_OP_SIGMOID, "QLinearSigmoid"),
    QDQ_UNARY(FP_OP_SOFTMAX, "QLinearSoftmax"),
    QDQ_BINARY(FP_OP_ADD, "QLinearAdd"),
    QDQ_BINARY(FP_OP_MUL, "QLinearMul"),
    QDQ_RULE("qdq_conv", "DQ x, DQ w [, DQ bias] + Conv + Q -> QLinearConv", "ConvQDQRules",
             (ANCHOR("conv", FP_OP_CONV), Q_OUT, UP("dq_x", 0, false), UP("dq_w", 1, true), UP("dq_b", 2, true)), 5,
             "QLinearConv", FP_OP_QLINEAR_CONV, QDQ_Q_UNIT, CL(quant_dtypes, -1, 2, "bias_dtypes", "int32")),
    QDQ_RULE("qdq_matmul", "DQ a, DQ b + MatMul + Q -> QLinearMatMul", "MatMulQDQRules",
             (ANCHOR("matmul", FP_OP_MATMUL), Q_OUT, UP("dq_a", 0, false), UP("dq_b", 1, true)), 4, "QLinearMatMul",
             FP_OP_QLINEAR_MATMUL, QDQ_Q_UNIT),
    QDQ_RULE("qdq_matmul", "DQ a, DQ b + MatMul, a float output -> MatMulIntegerToFloat", "MatMulQDQRules",
             (ANCHOR("matmul", FP_OP_MATMUL), UP("dq_a", 0, false), UP("dq_b", 1, true)), 3, "MatMulIntegerToFloat",
             FP_OP_MATMUL_INTEGER_TO_FLOAT, QDQ_NO_Q_UNIT),
    QDQ_RULE("qdq_gemm", "DQ a, DQ b [, DQ c] + Gemm + Q -> QGemm", "GemmQDQRules",
             (ANCHOR("gemm", FP_OP_GEMM), Q_OUT, UP("dq_a", 0, false), UP("dq_b", 1, true), UP("dq_c", 2, true)), 5,
             "QGemm", FP_OP_GEMM, QDQ_Q_UNIT, CL(quant_dtypes, -1, 2, "bias_dtypes", "int32")),
    QDQ_RULE("qdq_gemm", "DQ a, DQ b [, DQ c] + Gemm, a float output -> QGemm", "GemmQDQRules",
             (ANCHOR("gemm", FP_OP_GEMM), UP("dq_a", 0, false), UP("dq_b", 1, true), UP("dq_c", 2, true)), 4,
             "QGemm", FP_OP_GEMM, QDQ_NO_Q_UNIT, CL(quant_dtypes, -1, 2, "bias_dtypes", "int32")),
    QDQ_RULE("qdq_matmul_nbits", "DQ of a block-quantized 4-bit weight + MatMul / Gemm -> MatMulNBits",
             "DQMatMulToMatMulNBitsRules",
             (ANCHOR("matmul", FP_OP_MATMUL, FP_OP_GEMM), UP("dq_w", 1, false)), 2, "MatMulNBits", FP_OP_MATMUL_NBITS,
             G(no_q_reader, 0, -1), CL(nbits_weight, -1, 1, "weight_dtypes", "int4,uint4"), C(no_clip_after, 0, -1)),

    /* ---- kernel fusions (ORT level 2, CPU EP unless a target says otherwise) ---- */
    {.id = "conv_activation", .title = "Conv + activation -> FusedConv", .source = ORT_CONV_ACT,
     .pattern = {ANCHOR("conv", FP_OP_CONV), NEXT_FLAGS("act", 0, FP_OPF_ACT)}, .n_pattern = 2,
     .constraints = {C(assigned, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1),
                     CL(activation_in, 1, -1, "activations", ORT_ACTS), C(clip_const_bounds, 1, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float32")},
     .n_constraints = 6, .rewrite = FP_RW_FUSE, .fused_op = "FusedConv", .fused_kind = FP_OP_FUSED_CONV, .act_node = 1},
    {.id = "gemm_activation", .title = "Gemm + activation -> FusedGemm",
     .source = "onnxruntime gemm_activation_fusion.cc (level 2, CPU)",
     .pattern = {ANCHOR("gemm", FP_OP_GEMM), NEXT_FLAGS("act", 0, FP_OPF_ACT)}, .n_pattern = 2,
     .constraints = {C(assigned, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1),
                     CL(activation_in, 1, -1, "activations", "Relu,Sigmoid,Tanh,LeakyRelu,Elu,HardSigmoid"),
                     CL(dtype_in, 0, 0, "dtypes", "float32"), CN(rank_is, 0, -1, "rank", 2)},
     .n_constraints = 6, .rewrite = FP_RW_FUSE, .fused_op = "FusedGemm", .fused_kind = FP_OP_FUSED_GEMM, .act_node = 1},
    /* Gelu, erf form: x * 0.5 * (1 + erf(x / sqrt(2))) in the three orders exporters emit */
    ORT_GELU_RULE(4, GELU_PATTERN),
    ORT_GELU_RULE(3, {ANCHOR("div", FP_OP_DIV), NEXT("erf", 0, 0, FP_OP_ERF), NEXT("add", 1, -1, FP_OP_ADD),
                      NEXT("mul", 2, -1, FP_OP_MUL), NEXT2("mul_x", 3, -1, FP_PAT_X, -1, FP_OP_MUL)}),
    /* (x * 0.5) * (1 + erf(x / sqrt2)): the half Mul on x, a branch of its own */
    ORT_GELU_RULE(3, {ANCHOR("div", FP_OP_DIV), NEXT("erf", 0, 0, FP_OP_ERF), NEXT("add", 1, -1, FP_OP_ADD),
                      NEXT("mul_half", FP_PAT_X, -1, FP_OP_MUL), NEXT2("mul", 2, -1, 3, -1, FP_OP_MUL)}),
    /* Gelu, tanh form: (x * 0.5) * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), the half Mul on x (the
     * only order ORT takes); FastGelu has a float kernel only on the CPU EP; ORT checks its last Mul
     * too for a graph output (the fused node writes a new value) */
    {.id = "fast_gelu", .title = "tanh-form Gelu -> FastGelu", .source = "onnxruntime fast_gelu_fusion.cc (level 2)",
     .pattern = {FAST_GELU_HEAD, NEXT("mul_half", FP_PAT_X, -1, FP_OP_MUL), NEXT2("mul", 5, -1, 6, -1, FP_OP_MUL)},
     .n_pattern = 8,
     .constraints = {C(assigned, -1, -1), FAST_GELU_CONSTS, GN(const_value, 6, -1, "half", 0.5), CL(dtype_in, 0, 0, "dtypes", "float32"),
                     C(not_graph_output, 7, -1)},
     .n_constraints = 10, .rewrite = FP_RW_FUSE, .fused_op = "FastGelu", .fused_kind = FP_OP_FAST_GELU, .act_node = -1,
     .operands = {FP_PAT_X}, .n_operands = 1},
    {.id = "bias_gelu", .title = "Add(bias) + Gelu -> BiasGelu", .source = "onnxruntime bias_gelu_fusion.cc (level 2)",
     .pattern = {ANCHOR("add", FP_OP_ADD), NEXT("gelu", 0, 0, FP_OP_GELU)}, .n_pattern = 2,
     .constraints = {C(assigned, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1), G(bias_last_dim, 0, -1)},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "BiasGelu", .fused_kind = FP_OP_BIAS_GELU, .act_node = -1},
    {.id = "bias_gelu", .title = "Add(bias) + FastGelu -> FastGelu(x, bias)", .source = "onnxruntime bias_gelu_fusion.cc (level 2)",
     .pattern = {ANCHOR("add", FP_OP_ADD), NEXT("gelu", 0, 0, FP_OP_FAST_GELU)}, .n_pattern = 2,
     .constraints = {C(assigned, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1), G(bias_last_dim, 0, -1)},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "FastGelu", .fused_kind = FP_OP_FAST_GELU, .act_node = -1},
    {.id = "quick_gelu", .title = "x * Sigmoid(x) -> QuickGelu", .source = "onnxruntime quick_gelu_fusion.cc (level 2)",
     .pattern = {ANCHOR("sigmoid", FP_OP_SIGMOID), NEXT2("mul", 0, -1, FP_PAT_X, -1, FP_OP_MUL)}, .n_pattern = 2,
     .constraints = {C(assigned, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1),
                     CL(dtype_in, 0, 0, "sigmoid_dtypes", "float32,float64")},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "QuickGelu", .fused_kind = FP_OP_QUICK_GELU, .act_node = -1},
    /* x * Sigmoid(alpha * x), alpha a constant scalar second (CLIP's and PP-OCR's 1.702) */
    {.id = "quick_gelu", .title = "x * Sigmoid(alpha * x) -> QuickGelu", .source = "onnxruntime quick_gelu_fusion.cc (level 2)",
     .pattern = {ANCHOR("mul_alpha", FP_OP_MUL), NEXT("sigmoid", 0, 0, FP_OP_SIGMOID),
                 NEXT2("mul", 1, -1, FP_PAT_X, -1, FP_OP_MUL)},
     .n_pattern = 3,
     .constraints = {C(assigned, -1, -1), G(const_scalar, 0, -1), C(single_consumer, -1, -1), C(not_graph_output, -1, -1)},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "QuickGelu", .fused_kind = FP_OP_QUICK_GELU, .act_node = -1},
    /* x * Sigmoid(alpha * x), alpha first (ORT looks for the scalar at either input of the Mul; the
     * body of a float16 QuickGelu, which ORT inlines, writes it so) */
    {.id = "quick_gelu", .title = "x * Sigmoid(alpha * x) -> QuickGelu", .source = "onnxruntime quick_gelu_fusion.cc (level 2)",
     .pattern = {ANCHOR("mul_alpha", FP_OP_MUL), NEXT("sigmoid", 0, 0, FP_OP_SIGMOID),
                 NEXT2("mul", 1, -1, FP_PAT_X, -1, FP_OP_MUL)},
     .n_pattern = 3,
     .constraints = {C(assigned, -1, -1), G(const_scalar, 0, -1), C(single_consumer, -1, -1), C(not_graph_output, -1, -1)},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "QuickGelu", .fused_kind = FP_OP_QUICK_GELU, .act_node = -1,
     .x_input = 1},
    /* LayerNorm decomposed as torch exports it before opset 17. ORT runs LayerNormFusion at level 1
     * from opset 17 on (before partitioning: float16 too), at level 2 below (level1_phase gives each
     * phase its nodes): ort-cpu-basic, which has no level 2, raises min_opset to 17. The fused node
     * reads x, gamma and beta (epsilon becomes its attribute) */
    {.id = "layer_norm", .title = "ReduceMean/Sub/Pow/Sqrt/Div form -> LayerNormalization",
     .source = "onnxruntime layer_norm_fusion.cc (level 1/2)",
     .pattern = LAYER_NORM_PATTERN,
     .n_pattern = 9,
     .constraints = {GN(level1_phase, 0, -1, "level1_opset", 17), CN(min_opset, 0, -1, "opset", 1),
                     CN(level2_assigned, -1, -1, "level1_opset", 17),
                     C(single_consumer, -1, -1), C(not_graph_output, -1, -1), G(const_other, 4, -1),
                     C(const_1d, 7, -1), C(const_1d, 8, -1), C(last_axis, 0, -1), C(last_axis, 3, -1),
                     CN(cpu_half_input, 0, -1, "level1_opset", 17)},
     .n_constraints = 11, .rewrite = FP_RW_FUSE, .fused_op = "LayerNormalization", .fused_kind = FP_OP_LAYER_NORM,
     .act_node = -1, .operands = {FP_PAT_X, 7, 8}, .n_operands = 3},
    /* RMSNorm from primitive ops: x / sqrt(mean(x^2) + eps) * scale; x may be centred (x - mean)
     * when no beta Add follows (a whole LayerNorm is the layer_norm rule's, maybe on a later sweep):
     * ORT's SimplifiedLayerNormFusion takes what LayerNormFusion left as it is */
    {.id = "simplified_layer_norm", .title = "Pow/ReduceMean/Add/Sqrt/Div/Mul (RMSNorm) -> SimplifiedLayerNormalization",
     .source = "onnxruntime layer_norm_fusion.cc, SimplifiedLayerNormFusion (level 2, CPU and CUDA EPs)",
     .pattern = RMS_NORM_PATTERN,
     .n_pattern = 6,
     .constraints = {C(assigned, -1, -1), GN(not_layer_norm, 5, -1, "level1_opset", 17), C(single_consumer, -1, -1), C(not_graph_output, -1, -1),
                     GN(const_value, 0, 1, "exponent", 2.0), G(const_other, 2, -1), C(const_1d, 5, -1),
                     C(last_axis, 1, -1), CL(dtype_in, 0, 0, "dtypes", "float32,float64")},
     .n_constraints = 9, .rewrite = FP_RW_FUSE, .fused_op = "SimplifiedLayerNormalization",
     .fused_kind = FP_OP_SIMPLIFIED_LAYER_NORM, .act_node = -1, .operands = {FP_PAT_X, 5}, .n_operands = 2},
    {.id = "matmul_scale", .title = "MatMul + scalar Mul/Div -> FusedMatMul",
     .source = "onnxruntime matmul_scale_fusion.cc (level 2)",
     .pattern = {ANCHOR("matmul", FP_OP_MATMUL), NEXT("scale", 0, -1, FP_OP_DIV, FP_OP_MUL)}, .n_pattern = 2,
     .constraints = {C(assigned, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1), G(const_scalar, 1, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float32,float16,bfloat16")},
     .n_constraints = 5, .rewrite = FP_RW_FUSE, .fused_op = "FusedMatMul", .fused_kind = FP_OP_FUSED_MATMUL,
     .act_node = -1},
    /* the leading form: a scalar Mul or Div on one of the MatMul's inputs (the Mul/Div stays while
     * something else reads it) */
    {.id = "matmul_scale", .title = "scalar Mul/Div on a MatMul input -> FusedMatMul (alpha)",
     .source = "onnxruntime matmul_scale_fusion.cc (level 2; leading scale)",
     .pattern = {ANCHOR("scale", FP_OP_DIV, FP_OP_MUL), NEXT("matmul", 0, -1, FP_OP_MATMUL, FP_OP_FUSED_MATMUL)},
     .n_pattern = 2,
     .constraints = {C(assigned, -1, -1), G(leading_scale, 0, -1), G(matmul_operand, 1, -1), C(not_graph_output, 0, -1),
                     CL(dtype_in, 1, 0, "dtypes", "float32,float16,bfloat16")},
     .n_constraints = 5, .rewrite = FP_RW_ABSORB, .fused_op = "FusedMatMul", .fused_kind = FP_OP_FUSED_MATMUL,
     .act_node = -1},
    /* Slices of one tensor that cut it into pieces: the anchor and its sibling readers (FP_RW_SPLIT) */
    {.id = "slice_split", .title = "Slices covering one axis -> Split",
     .source = "onnxruntime gather_fusion.cc, GatherSliceToSplitFusion (level 2, CPU and CUDA EPs)",
     .pattern = {ANCHOR("slice", FP_OP_SLICE, FP_OP_GATHER)}, .n_pattern = 1,
     .constraints = {C(assigned, -1, -1), G(split_source, 0, -1), CN(min_opset, 0, -1, "opset", 13), C(split_intervals, -1, -1)},
     .n_constraints = 4, .rewrite = FP_RW_SPLIT, .fused_op = "Split", .fused_kind = FP_OP_SPLIT, .act_node = -1},
    /* a Transpose of the matrix a MatMul reads; the Transpose stays while something else reads it */
    {.id = "matmul_transpose", .title = "Transpose + MatMul -> FusedMatMul (transA/transB)",
     .source = "onnxruntime matmul_transpose_fusion.cc, MatmulTransposeFusion (level 2, CPU, CUDA, DML EPs)",
     .pattern = {ANCHOR("transpose", FP_OP_TRANSPOSE), NEXT("matmul", 0, -1, FP_OP_MATMUL, FP_OP_FUSED_MATMUL)},
     .n_pattern = 2,
     .constraints = {C(assigned, -1, -1), G(matmul_operand, 1, -1), G(transpose_perm, 0, -1), C(not_graph_output, 0, -1),
                     C(batch_shapes, 0, -1), C(distinct_operands, 1, -1),
                     CL(dtype_in, 1, 0, "dtypes", "float32,float64")},
     .n_constraints = 7, .rewrite = FP_RW_ABSORB, .fused_op = "FusedMatMul", .fused_kind = FP_OP_FUSED_MATMUL,
     .act_node = -1},
    /* the bias Add of the preceding projection folds in too (SkipLayerNormalization's bias input) */
    {.id = "skip_layer_norm", .title = "Add(bias) + Add + LayerNormalization -> SkipLayerNormalization",
     .source = "onnxruntime skip_layer_norm_fusion.cc (level 2)",
     .pattern = {ANCHOR("bias", FP_OP_ADD), NEXT("add", 0, -1, FP_OP_ADD), NEXT("layer_norm", 1, 0, FP_OP_LAYER_NORM)},
     .n_pattern = 3,
     .constraints = {C(assigned, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, -1, -1), G(bias_1d, 0, -1),
                     G(activation_operands, 1, -1), CN(rank_is, 1, -1, "rank", 3)},
     .n_constraints = 6, .rewrite = FP_RW_FUSE, .fused_op = "SkipLayerNormalization",
     .fused_kind = FP_OP_SKIP_LAYER_NORM, .act_node = -1},
    {.id = "skip_layer_norm", .title = "Add + LayerNormalization -> SkipLayerNormalization",
     .source = "onnxruntime skip_layer_norm_fusion.cc (level 2)",
     .pattern = {ANCHOR("add", FP_OP_ADD), NEXT("layer_norm", 0, 0, FP_OP_LAYER_NORM)}, .n_pattern = 2,
     .constraints = {C(assigned, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1), G(activation_operands, 0, -1),
                     CN(rank_is, 0, -1, "rank", 3)},
     .n_constraints = 5, .rewrite = FP_RW_FUSE, .fused_op = "SkipLayerNormalization",
     .fused_kind = FP_OP_SKIP_LAYER_NORM, .act_node = -1},
    /* attention core with an additive mask: scores = Q K^T / scale + mask, softmax, context = P V.
     * ORT fuses attention only in the BERT-style subgraph that carries a mask, below a
     * LayerNormalization with a bias; elsewhere (models/transformer_block.onnx without a mask, Llama's
     * RMSNorm and rotary embeddings) the scale folds into FusedMatMul. */
    {.id = "attention", .title = "MatMul-Softmax-MatMul core -> Attention",
     .source = "onnxruntime attention_fusion.cc (level 2; full BERT pattern there, core only here)",
     .pattern = {ANCHOR("scores", FP_OP_MATMUL), NEXT("scale", 0, 0, FP_OP_DIV, FP_OP_MUL),
                 NEXT("mask", 1, -1, FP_OP_ADD), NEXT("softmax", 2, 0, FP_OP_SOFTMAX), NEXT("context", 3, 0, FP_OP_MATMUL)},
     .n_pattern = 5,
     .constraints = {C(assigned, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, -1, -1), G(const_other, 1, -1),
                     C(last_axis, 3, -1), C(qkv_from_layer_norm, 0, -1)},
     .n_constraints = 6, .rewrite = FP_RW_FUSE, .fused_op = "Attention", .fused_kind = FP_OP_ATTENTION, .act_node = -1},

    /* ---- Ascend GE (ATC) ---- */
    {.id = "ge_layer_norm", .title = "LayerNormONNXFusionPass: ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add -> LayerNorm",
     .source = "CANN GE LayerNormONNXFusionPass (layer_norm_onnx_fusion_pass.cc)",
     .pattern = LAYER_NORM_PATTERN,
     .n_pattern = 9,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, -1, -1), GN(const_value, 2, 1, "exponent", 2.0),
                     G(const_other, 4, -1), G(const_other, 7, -1), G(const_other, 8, -1),
                     CN(const_at_most, 4, -1, "max_epsilon", 0.1), C(static_input, 0, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float32,float16")},
     .n_constraints = 9, .rewrite = FP_RW_FUSE, .fused_op = "LayerNorm", .fused_kind = FP_OP_LAYER_NORM, .act_node = -1},
    {.id = "ge_gelu", .title = "GeluONNXFusionPass: Div/Erf/Add/Mul/Mul -> Gelu",
     .source = "CANN GE GeluONNXFusionPass (gelu_onnx_fusion_pass.cc)",
     .pattern = GELU_PATTERN,
     .n_pattern = 5,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, -1, -1),
                     GN(const_value, 0, 1, "sqrt2", 1.4142135), GN(const_value, 2, -1, "one", 1.0),
                     GN(const_value, 4, -1, "half", 0.5), CL(dtype_in, 0, 0, "dtypes", "float32,float16")},
     .n_constraints = 6, .rewrite = FP_RW_FUSE, .fused_op = "Gelu", .fused_kind = FP_OP_GELU, .act_node = -1},
    {.id = "ge_matmul_bias", .title = "MatMulBiasAddFusionPass: MatMul + 1-D bias Add -> MatMulV2 with bias",
     .source = "CANN GE MatMulBiasAddFusionPass (matmul_biasadd_fusion_pass.cpp)",
     .pattern = {ANCHOR("matmul", FP_OP_MATMUL), NEXT("add", 0, -1, FP_OP_ADD)}, .n_pattern = 2,
     .constraints = {G(bias_1d, 1, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1)},
     .n_constraints = 3, .rewrite = FP_RW_FUSE, .fused_op = "MatMulV2", .fused_kind = FP_OP_MATMUL, .act_node = -1},
    /* the sum stays an output of AddRmsNorm: the Add may have other readers */
    {.id = "ge_add_rms_norm", .title = "AddRmsNormFusionGraphPass: Add + RmsNorm -> AddRmsNorm",
     .source = "CANN GE AddRmsNormFusionGraphPass (fusion rule reference 0104; fact sheet B.3)",
     .pattern = {ANCHOR("add", FP_OP_ADD), NEXT("rms_norm", 0, 0, FP_OP_SIMPLIFIED_LAYER_NORM)}, .n_pattern = 2,
     .constraints = {G(activation_operands, 0, -1), CL(dtype_in, 0, 0, "dtypes", "float32,float16,bfloat16")},
     .n_constraints = 2, .rewrite = FP_RW_FUSE, .fused_op = "AddRmsNorm", .fused_kind = FP_OP_SKIP_SIMPLIFIED_LAYER_NORM,
     .act_node = -1},
    /* softmax from small ops; the pass is off by default in ATC, so `enabled` is 0 unless a target
     * that switches it on (atc --fusion_switch_file) sets it */
    {.id = "ge_softmax_small_op", .title = "SoftmaxSmallOpFusionPass: ReduceMax/Sub/Exp/ReduceSum/Div -> SoftmaxV2",
     .source = "CANN GE SoftmaxSmallOpFusionPass (fusion rule reference 0009; fact sheet B.3), off by default",
     .pattern = {ANCHOR("max", FP_OP_REDUCE_MAX), NEXT2("sub", 0, 1, FP_PAT_X, 0, FP_OP_SUB),
                 NEXT("exp", 1, 0, FP_OP_EXP), NEXT("sum", 2, 0, FP_OP_REDUCE_SUM), NEXT2("div", 3, 1, 2, 0, FP_OP_DIV)},
     .n_pattern = 5,
     .constraints = {CN(softmax_pass_on, -1, -1, "enabled", 0), C(single_consumer, -1, -1),
                     C(not_graph_output, -1, -1), C(static_input, 0, -1), C(same_reduce_axes, -1, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float32,float16,bfloat16")},
     .n_constraints = 6, .rewrite = FP_RW_FUSE, .fused_op = "SoftmaxV2", .fused_kind = FP_OP_SOFTMAX, .act_node = -1},
    /* patterns GE has no pass for: explain says so and names the op to export instead */
    {.id = "ge_rms_norm_gap", .title = "RMSNorm from primitive ops: no GE pass builds RmsNorm from them",
     .source = "CANN fusion rule reference: no RmsNorm-building pass (fact sheet B.3); OPSNN RmsNorm kernel",
     .pattern = RMS_NORM_PATTERN,
     .n_pattern = 6,
     .constraints = {GN(const_value, 0, 1, "exponent", 2.0), G(const_other, 2, -1), G(const_other, 5, -1),
                     G(not_centered, 0, -1), CL(no_pass, -1, -1, "instead", "RmsNorm (torch_npu.npu_rms_norm)")},
     .n_constraints = 5, .rewrite = FP_RW_FUSE, .fused_op = "RmsNorm", .fused_kind = FP_OP_SIMPLIFIED_LAYER_NORM,
     .act_node = -1},
    {.id = "ge_rms_norm_gap", .title = "RMSNorm (x * 1/sqrt form) from primitive ops: no GE pass builds RmsNorm from them",
     .source = "CANN fusion rule reference: no RmsNorm-building pass (fact sheet B.3); OPSNN RmsNorm kernel",
     .pattern = RMS_NORM_RECIP_PATTERN,
     .n_pattern = 7,
     .constraints = {GN(const_value, 0, 1, "exponent", 2.0), GN(const_value, 4, 0, "one", 1.0), G(const_other, 2, -1),
                     G(const_other, 6, -1), G(not_centered, 0, -1),
                     CL(no_pass, -1, -1, "instead", "RmsNorm (torch_npu.npu_rms_norm)")},
     .n_constraints = 6, .rewrite = FP_RW_FUSE, .fused_op = "RmsNorm", .fused_kind = FP_OP_SIMPLIFIED_LAYER_NORM,
     .act_node = -1},
    {.id = "ge_swiglu_gap", .title = "SwiGLU from primitive ops: no GE pass builds SwiGlu from them",
     .source = "CANN fusion rule reference: no SwiGlu-building pass (fact sheet B.3); OPSNN SwiGlu kernel",
     .pattern = {ANCHOR("sigmoid", FP_OP_SIGMOID), NEXT2("silu", 0, -1, FP_PAT_X, -1, FP_OP_MUL),
                 NEXT("mul_up", 1, -1, FP_OP_MUL)},
     .n_pattern = 3,
     .constraints = {CL(no_pass, -1, -1, "instead", "SwiGlu (torch_npu.npu_swiglu)")},
     .n_constraints = 1, .rewrite = FP_RW_FUSE, .fused_op = "SwiGlu", .fused_kind = FP_OP_MUL, .act_node = -1},
    /* rotary embedding, rotate-half form: x * cos + Concat(Neg(x[..., D/2:]), x[..., :D/2]) * sin; the
     * second Slice and x * cos are other readers of x (FP_PAT_X), the Muls and the Add either way round */
    {.id = "ge_rope_gap", .title = "rotary embedding from primitive ops: no GE pass builds RotaryMul or ApplyRotaryPosEmb from them",
     .source = GE_ROPE_SRC,
     .pattern = {ANCHOR("slice_hi", FP_OP_SLICE), NEXT("neg", 0, 0, FP_OP_NEG),
                 NEXT("slice_lo", FP_PAT_X, 0, FP_OP_SLICE), NEXT2("rotate", 1, 0, 2, 1, FP_OP_CONCAT),
                 NEXT("mul_sin", 3, -1, FP_OP_MUL), NEXT("mul_cos", FP_PAT_X, -1, FP_OP_MUL),
                 NEXT2("add", 4, -1, 5, -1, FP_OP_ADD)},
     .n_pattern = 7,
     .constraints = {G(rotate_half, 3, -1), CL(no_pass, -1, -1, "instead", GE_ROPE_OP),
                     CN(rotary_operands, -1, -1, "max_head_dim", 1024)},
     .n_constraints = 3, .rewrite = FP_RW_FUSE, .fused_op = "RotaryMul", .fused_kind = FP_OP_MUL, .act_node = -1},
    /* a decomposed attention core: no GE graph-fusion rule makes FlashAttentionScore / PFA / IFA /
     * FusedInferAttentionScore of it (fact sheet B.3, "Not found"); the variants: a scale, a mask */
    {.id = "ge_attention_gap", .title = "attention from primitive ops (MatMul, Softmax, MatMul): no GE pass fuses it",
     .source = GE_ATTN_SRC,
     .pattern = {ANCHOR("scores", FP_OP_MATMUL), NEXT("softmax", 0, 0, FP_OP_SOFTMAX), NEXT("context", 1, 0, FP_OP_MATMUL)},
     .n_pattern = 3,
     .constraints = {C(last_axis, 1, -1), CL(no_pass, -1, -1, "instead", GE_ATTN_OP)},
     .n_constraints = 2, .rewrite = FP_RW_FUSE, .fused_op = "FlashAttentionScore", .fused_kind = FP_OP_ATTENTION,
     .act_node = -1},
    {.id = "ge_attention_gap", .title = "attention from primitive ops (MatMul, scale or mask, Softmax, MatMul): no GE pass fuses it",
     .source = GE_ATTN_SRC,
     .pattern = {ANCHOR("scores", FP_OP_MATMUL), NEXT("scale", 0, 0, FP_OP_DIV, FP_OP_MUL, FP_OP_ADD),
                 NEXT("softmax", 1, 0, FP_OP_SOFTMAX), NEXT("context", 2, 0, FP_OP_MATMUL)},
     .n_pattern = 4,
     .constraints = {C(last_axis, 2, -1), CL(no_pass, -1, -1, "instead", GE_ATTN_OP)},
     .n_constraints = 2, .rewrite = FP_RW_FUSE, .fused_op = "FlashAttentionScore", .fused_kind = FP_OP_ATTENTION,
     .act_node = -1},
    {.id = "ge_attention_gap", .title = "attention from primitive ops (MatMul, scale, mask, Softmax, MatMul): no GE pass fuses it",
     .source = GE_ATTN_SRC,
     .pattern = {ANCHOR("scores", FP_OP_MATMUL), NEXT("scale", 0, 0, FP_OP_DIV, FP_OP_MUL), NEXT("mask", 1, -1, FP_OP_ADD),
                 NEXT("softmax", 2, 0, FP_OP_SOFTMAX), NEXT("context", 3, 0, FP_OP_MATMUL)},
     .n_pattern = 5,
     .constraints = {C(last_axis, 3, -1), CL(no_pass, -1, -1, "instead", GE_ATTN_OP)},
     .n_constraints = 2, .rewrite = FP_RW_FUSE, .fused_op = "FlashAttentionScore", .fused_kind = FP_OP_ATTENTION,
     .act_node = -1},
    {.id = "ge_conv_bn", .title = "ConvBatchnormFusionPass: fold BatchNorm into Conv2D",
     .source = "CANN ATC graph fusion: ConvBatchnormFusionPass restrictions (hiascend.com)",
     .pattern = {ANCHOR("conv", FP_OP_CONV), NEXT("bn", 0, 0, FP_OP_BATCH_NORM)}, .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(const_inputs, 0, -1), C(const_inputs, 1, -1),
                     C(bn_outputs_unused, 1, -1), C(static_weight, 0, 1), CN(max_epsilon, 1, -1, "max_epsilon", 1e-4)},
     .n_constraints = 6, .rewrite = FP_RW_FOLD, .act_node = -1},
    {.id = "ge_conv_ub", .title = "UB fusion: Conv2D + elementwise tail in one kernel",
     .source = "CANN buffer (UB) fusion of Conv with elementwise ops",
     .pattern = {ANCHOR("conv", FP_OP_CONV),
                 {.label = "eltwise", .ops = {END}, .flags = FP_OPF_EW | FP_OPF_UNARY | FP_OPF_ACT, .from = 0, .port = 0,
                  .from2 = -1, .port2 = -1, .repeat = 32}},
     .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, 0, -1), CN(max_chain, 1, -1, "max_elementwise", 5),
                     C(no_control_edges, -1, -1)},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "FusedConv2D", .fused_kind = FP_OP_FUSED_CONV, .act_node = 1},
    /* ---- TensorRT (8.x Developer Guide, "Types of Fusions"; fact sheet C) ---- */
    {.id = "trt_conv_scale", .title = "Convolution + Scale (BatchNormalization) folded into the weights",
     .source = TRT_FUSIONS ": Convolution and Scale",
     .pattern = {ANCHOR("conv", FP_OP_CONV), NEXT("bn", 0, 0, FP_OP_BATCH_NORM)}, .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, 0, -1), C(const_inputs, 0, -1),
                     C(const_inputs, 1, -1), C(bn_outputs_unused, 1, -1), C(bn_params_1d, 1, -1)},
     .n_constraints = 6, .rewrite = FP_RW_FOLD, .act_node = -1},
    {.id = "trt_conv_scale", .title = "Convolution + Scale (per-channel Mul) folded into the weights",
     .source = TRT_FUSIONS ": Convolution and Scale",
     .pattern = {ANCHOR("conv", FP_OP_CONV), NEXT("mul", 0, -1, FP_OP_MUL)}, .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, 0, -1), C(const_inputs, 0, -1),
                     G(const_other, 1, -1), C(per_channel, 1, -1)},
     .n_constraints = 5, .rewrite = FP_RW_FOLD, .act_node = -1},
    {.id = "trt_conv_scale", .title = "Convolution + Scale (per-channel Add) folded into the bias",
     .source = TRT_FUSIONS ": Convolution and Scale",
     .pattern = {ANCHOR("conv", FP_OP_CONV), NEXT("add", 0, -1, FP_OP_ADD)}, .n_pattern = 2,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, 0, -1), C(const_inputs, 0, -1),
                     G(const_other, 1, -1), C(per_channel, 1, -1)},
     .n_constraints = 5, .rewrite = FP_RW_FOLD, .act_node = -1},
    {.id = "trt_conv_eltwise", .title = "Convolution + ElementWise (sum, min, max) in one kernel",
     .source = TRT_FUSIONS ": Convolution and ElementWise Operation",
     .pattern = {ANCHOR("conv", FP_OP_CONV), NEXT("eltwise", 0, -1, FP_OP_ADD, FP_OP_MIN, FP_OP_MAX)}, .n_pattern = 2,
     .constraints = {G(other_activation, 1, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1),
                     C(no_broadcast, 1, -1)},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "FusedConv", .fused_kind = FP_OP_FUSED_CONV,
     .act_node = -1},
    {.id = "trt_conv_act", .title = "Convolution + ReLU / Clip in one kernel",
     .source = TRT_FUSIONS ": Convolution and ReLU Activation, Convolution and Clip",
     .pattern = {ANCHOR("conv", FP_OP_CONV, FP_OP_FUSED_CONV), NEXT("act", 0, 0, FP_OP_RELU, FP_OP_CLIP)},
     .n_pattern = 2,
     .constraints = {G(no_activation, 0, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1)},
     .n_constraints = 3, .rewrite = FP_RW_FUSE, .fused_op = "FusedConv", .fused_kind = FP_OP_FUSED_CONV, .act_node = 1},
    {.id = "trt_conv_act", .title = "Convolution + GELU in one kernel",
     .source = TRT_FUSIONS ": Convolution and GELU Activation (FP16 or INT8 in and out, Turing or newer)",
     .pattern = {ANCHOR("conv", FP_OP_CONV, FP_OP_FUSED_CONV), NEXT("gelu", 0, 0, FP_OP_GELU)}, .n_pattern = 2,
     .constraints = {G(no_activation, 0, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1),
                     CL(dtype_in, 0, 0, "gelu_dtypes", "float16,int8")},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "FusedConv", .fused_kind = FP_OP_FUSED_CONV, .act_node = 1},
    /* the attention core as TensorRT fuses it (one MHA kernel): no scale between the MatMuls' scores
     * and the Softmax, an optional additive mask */
    {.id = "trt_mha", .title = "MatMul-Softmax-MatMul -> fused MHA kernel",
     .source = TRT_MHA,
     .pattern = {ANCHOR("bmm1", FP_OP_MATMUL), NEXT("softmax", 0, 0, FP_OP_SOFTMAX), NEXT("bmm2", 1, 0, FP_OP_MATMUL)},
     .n_pattern = 3,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, -1, -1), C(last_axis, 1, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float16,bfloat16,int8"),
                     CL(dtype_in, 0, 1, "dtypes", "float16,bfloat16,int8"), CL(head_dim, 0, 0, "head_dim", "16,256,8")},
     .n_constraints = 6, .rewrite = FP_RW_FUSE, .fused_op = "FusedMHA", .fused_kind = FP_OP_ATTENTION, .act_node = -1},
    {.id = "trt_mha", .title = "MatMul-Add(mask)-Softmax-MatMul -> fused MHA kernel",
     .source = TRT_MHA,
     .pattern = {ANCHOR("bmm1", FP_OP_MATMUL), NEXT("mask", 0, -1, FP_OP_ADD), NEXT("softmax", 1, 0, FP_OP_SOFTMAX),
                 NEXT("bmm2", 2, 0, FP_OP_MATMUL)},
     .n_pattern = 4,
     .constraints = {C(single_consumer, -1, -1), C(not_graph_output, -1, -1), C(last_axis, 2, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float16,bfloat16,int8"),
                     CL(dtype_in, 0, 1, "dtypes", "float16,bfloat16,int8"), CL(head_dim, 0, 0, "head_dim", "16,256,8")},
     .n_constraints = 6, .rewrite = FP_RW_FUSE, .fused_op = "FusedMHA", .fused_kind = FP_OP_ATTENTION, .act_node = -1},
    {.id = "trt_mha", .title = "MatMul-scale-[Add(mask)]-Softmax-MatMul: scaled after the first MatMul",
     .source = TRT_MHA,
     .pattern = {ANCHOR("bmm1", FP_OP_MATMUL), NEXT("scale", 0, 0, FP_OP_DIV, FP_OP_MUL),
                 NEXT("softmax", 1, 0, FP_OP_SOFTMAX), NEXT("bmm2", 2, 0, FP_OP_MATMUL)},
     .n_pattern = 4,
     .constraints = {G(const_scalar, 1, -1), C(scale_before_bmm1, 1, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float16,bfloat16,int8"), CL(head_dim, 0, 0, "head_dim", "16,256,8")},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "FusedMHA", .fused_kind = FP_OP_ATTENTION, .act_node = -1},
    {.id = "trt_mha", .title = "MatMul-scale-Add(mask)-Softmax-MatMul: scaled after the first MatMul",
     .source = TRT_MHA,
     .pattern = {ANCHOR("bmm1", FP_OP_MATMUL), NEXT("scale", 0, 0, FP_OP_DIV, FP_OP_MUL), NEXT("mask", 1, -1, FP_OP_ADD),
                 NEXT("softmax", 2, 0, FP_OP_SOFTMAX), NEXT("bmm2", 3, 0, FP_OP_MATMUL)},
     .n_pattern = 5,
     .constraints = {G(const_scalar, 1, -1), C(scale_before_bmm1, 1, -1),
                     CL(dtype_in, 0, 0, "dtypes", "float16,bfloat16,int8"), CL(head_dim, 0, 0, "head_dim", "16,256,8")},
     .n_constraints = 4, .rewrite = FP_RW_FUSE, .fused_op = "FusedMHA", .fused_kind = FP_OP_ATTENTION, .act_node = -1},
    /* adjacent pointwise layers merge into one; TensorRT does not document the bound on their number */
    {.id = "trt_pointwise", .title = "adjacent pointwise layers -> one PointWise kernel",
     .source = TRT_FUSIONS ": PointWise Fusion",
     .pattern = {{.label = "first", .ops = {END}, .flags = FP_OPF_EW | FP_OPF_UNARY | FP_OPF_ACT, .from = -1, .port = -1,
                  .from2 = -1, .port2 = -1},
                 {.label = "next", .ops = {END}, .flags = FP_OPF_EW | FP_OPF_UNARY | FP_OPF_ACT, .from = 0, .port = -1,
                  .from2 = -1, .port2 = -1, .repeat = 32}},
     .n_pattern = 2,
     .constraints = {G(pointwise_kind, -1, -1), C(single_consumer, -1, -1), C(not_graph_output, 0, -1)},
     .n_constraints = 3, .rewrite = FP_RW_FUSE, .fused_op = "PointWise", .fused_kind = FP_OP_SUM, .act_node = -1},
};
/* clang-format on */

const size_t fp_n_rules = G_N_ELEMENTS(fp_rules);
