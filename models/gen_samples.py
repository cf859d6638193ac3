#!/usr/bin/python3
"""Generate fuseplan's bundled sample models (deterministic: fixed seed, fixed names).

Run with Debian's python3 (python3-onnx, python3-numpy):  /usr/bin/python3 models/gen_samples.py
Each model stays well under 1 MB. The files are committed; this script is how they were made.

  resnet_tiny.onnx        ResNet-style CNN: Conv+BN+Relu stems, residual blocks, a torch-style
                          Shape->Gather->Unsqueeze->Concat->Reshape flatten, Gemm head; symbolic batch.
  eps_story.onnx          two Conv+BN+Relu blocks, BN epsilon 1e-5 and 1e-3 (the second exceeds
                          the Ascend ConvBatchnormFusionPass threshold of 1e-4 modelled by ascend910b).
  eps_story_tap.onnx      eps_story with a second consumer (a ReduceMean tap) on block2's conv output:
                          Conv+BN is lost there (the `fuseplan diff` example).
  branchy.onnx            DenseNet/Inception-style branches and concats (memory scheduling).
  inception_bfs.onnx      Inception-style modules exported breadth-first (every branch's first layer,
                          then every second layer, ...): the order a memory-aware schedule improves.
  transformer_block.onnx  one BERT-style encoder layer: decomposed LayerNorm, attention core,
                          erf-form Gelu, residual adds; symbolic batch and sequence.
  if_subgraph.onnx        an If whose branches read an outer-scope value.
  decoder_tiny.onnx       a Llama-style decoder with past: 2 layers of RMSNorm, rotary embeddings,
                          grouped-query attention (4 query heads, 2 KV heads of 16), SwiGLU MLP;
                          inputs input_ids and past_key_values.N.key/value, outputs logits and
                          present.N.key/value concatenated on the sequence axis; dims batch_size,
                          sequence_length, past_sequence_length (Hugging Face Optimum's names).
  decoder_gqa.onnx        decoder_tiny's configuration in onnxruntime-genai's builder layout (CPU fp32):
                          SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization (the residual
                          adds), q/k/v MatMuls, com.microsoft GroupQueryAttention (4 query heads, 2 KV
                          heads of 16, do_rotary with cos_cache/sin_cache of 2048 positions) fed
                          seqlens_k and total_sequence_length from attention_mask; inputs input_ids,
                          attention_mask [batch_size, total_sequence_length], past_key_values.N.key/value;
                          outputs logits and present.N.key/value [.., total_sequence_length, ..].
  decoder_int4.onnx       decoder_gqa as onnxruntime-genai's int4 builder writes it for CPU: each projection
                          and the LM head a com.microsoft MatMulNBits (bits 4, block_size 32, B
                          [N, K / 32, 16] uint8, scales [N, K / 32], packed zero points), the embedding a
                          GatherBlockQuantized (uint8 [vocab, d / 2], scales [vocab, d / 32]).
  decoder_whisper.onnx    a Whisper-style decoder with past in Hugging Face Optimum's encoder-decoder layout:
                          2 layers of LayerNormalization, self-attention (4 heads of 16) whose
                          past_key_values.N.decoder.key/value a Concat on the sequence axis extends into
                          present.N.decoder.key/value, cross-attention reading the encoder's K and V
                          past_key_values.N.encoder.key/value [batch_size, 4, 1500, 16] (Whisper's 1500
                          encoder frames, fixed whatever the context) as they are, a Relu MLP; inputs
                          input_ids [batch_size, sequence_length]; no positional embedding.
  genai_config.json       onnxruntime-genai's config of decoder_int4.onnx (model.decoder.filename names it):
                          its layers, KV heads, head size and KV names, search.max_length 4096 and
                          past_present_share_buffer true (as the builder writes it for CUDA), which
                          fuseplan reads beside the model (the other samples here are not named by it).
  qdq_cnn.onnx            a residual CNN in QDQ form (uint8 activations, int8 weights per channel and per
                          tensor, int32 biases): Conv, MaxPool, Add, GlobalAveragePool, Flatten and a Gemm
                          head between QuantizeLinear / DequantizeLinear; the units ONNX Runtime turns into
                          QLinearConv, QLinearAdd, QLinearGlobalAveragePool, QGemm and one that stays.
  qdq_cnn_branches.onnx   two QDQ Convs and a MaxPool whose int8 tensors also leave for float readers and
                          graph outputs: where ONNX Runtime's channels-last region puts its Transposes.
  qdq_matmul.onnx         a Transformer-style block in QDQ form: QLinearMatMul, QLinearSoftmax,
                          QLinearSigmoid, QLinearMul, MatMulIntegerToFloat units and a MatMul that stays.
  qdq_int4.onnx           weight-only int4/uint4 DequantizeLinear + MatMul (opset 21): one becomes
                          MatMulNBits, three stay (a Relu after, blocks of 8, blocks along N).
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
HERE = os.path.dirname(os.path.abspath(__file__))


class Builder:
    def __init__(self, name, seed):
        self.name = name
        self.nodes, self.inits = [], []
        self.rng = np.random.default_rng(seed)
        self.counter = {}

    def uid(self, prefix):
        self.counter[prefix] = self.counter.get(prefix, 0) + 1
        return f"{prefix}{self.counter[prefix]}"

    def weight(self, name, shape, scale=0.1, positive=False):
        a = self.rng.standard_normal(shape).astype(np.float32) * scale
        if positive:
            a = np.abs(a) + 0.5
        self.inits.append(numpy_helper.from_array(a, name))
        return name

    def const_i64(self, name, values):
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def node(self, op, inputs, name=None, n_out=1, **attrs):
        name = name or self.uid(op.lower() + "_")
        outs = [name + ("" if n_out == 1 else f"_{i}") + "_out" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def conv_bn_relu(self, x, cin, cout, k=3, stride=1, eps=1e-5, relu=True, prefix=None):
        p = prefix or self.uid("block")
        w = self.weight(f"{p}.conv.weight", (cout, cin, k, k), scale=(2.0 / (cin * k * k)) ** 0.5)
        y = self.node("Conv", [x, w], name=f"{p}.conv", kernel_shape=[k, k], strides=[stride, stride],
                      pads=[k // 2] * 4)
        bn = [self.weight(f"{p}.bn.{s}", (cout,), positive=(s in ("scale", "var")))
              for s in ("scale", "bias", "mean", "var")]
        y = self.node("BatchNormalization", [y] + bn, name=f"{p}.bn", epsilon=eps)
        if relu:
            y = self.node("Relu", [y], name=f"{p}.relu")
        return y

    def save(self, inputs, outputs, filename, opsets=(("", OPSET),)):
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        model = helper.make_model(graph, producer_name="fuseplan-samples", producer_version="1",
                                  opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
        model.ir_version = 8
        onnx.checker.check_model(checkable(model))
        path = os.path.join(HERE, filename)
        onnx.save(model, path)
        size = os.path.getsize(path)
        assert size < 1 << 20, f"{filename} is {size} bytes"
        print(f"{filename}: {len(self.nodes)} nodes, {size} bytes")


def checkable(model):
    """The model as onnx.checker can check it: ONNX Runtime registers SimplifiedLayerNormalization in
    the ONNX domain, which ONNX does not define; a copy moves it to com.microsoft, whose ops the
    checker does not look up."""
    if not any(n.op_type == "SimplifiedLayerNormalization" and not n.domain for n in model.graph.node):
        return model
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for n in copy.graph.node:
        if n.op_type == "SimplifiedLayerNormalization" and not n.domain:
            n.domain = "com.microsoft"
    return copy


def torch_flatten(b, x):
    """The Shape->Gather->Unsqueeze->Concat->Reshape chain torch.onnx emits for x.view(x.size(0), -1)."""
    s = b.node("Shape", [x], name="flatten.shape")
    i0 = b.const_i64("flatten.idx0", 0)
    d0 = b.node("Gather", [s, i0], name="flatten.gather", axis=0)
    u0 = b.node("Unsqueeze", [d0, b.const_i64("flatten.axes", [0])], name="flatten.unsqueeze")
    c = b.node("Concat", [u0, b.const_i64("flatten.minus1", [-1])], name="flatten.concat", axis=0)
    return b.node("Reshape", [x, c], name="flatten.reshape")


def resnet_tiny():
    b = Builder("resnet_tiny", 1)
    x = b.conv_bn_relu("input", 3, 16, prefix="stem")
    x = b.node("MaxPool", [x], name="stem.pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 16
    for i, (cout, stride) in enumerate([(16, 1), (32, 2), (64, 2)]):
        p = f"layer{i + 1}"
        y = b.conv_bn_relu(x, cin, cout, stride=stride, prefix=f"{p}.a")
        y = b.conv_bn_relu(y, cout, cout, relu=False, prefix=f"{p}.b")
        sc = x if (stride == 1 and cin == cout) else b.conv_bn_relu(x, cin, cout, k=1, stride=stride,
                                                                     relu=False, prefix=f"{p}.down")
        x = b.node("Relu", [b.node("Add", [y, sc], name=f"{p}.add")], name=f"{p}.relu")
        cin = cout
    x = b.node("GlobalAveragePool", [x], name="head.pool")
    x = torch_flatten(b, x)
    w = b.weight("head.fc.weight", (10, 64))
    bias = b.weight("head.fc.bias", (10,))
    y = b.node("Gemm", [x, w, bias], name="head.fc", transB=1)
    b.save([helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 64, 64])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["batch", 10])], "resnet_tiny.onnx")


def eps_story():
    b = Builder("eps_story", 2)
    x = b.conv_bn_relu("input", 3, 16, eps=1e-5, prefix="block1")
    x = b.conv_bn_relu(x, 16, 16, eps=1e-3, prefix="block2")
    b.save([helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 32, 32])],
           [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", 16, 32, 32])], "eps_story.onnx")


def eps_story_tap():
    """eps_story with a debugging tap on block2's conv output: the conv now has two consumers, so
    Conv+BN (and then Conv+Relu) can no longer fuse there. The pair for `fuseplan diff`."""
    b = Builder("eps_story", 2)
    x = b.conv_bn_relu("input", 3, 16, eps=1e-5, prefix="block1")
    x = b.conv_bn_relu(x, 16, 16, eps=1e-3, prefix="block2")
    tap = b.node("ReduceMean", ["block2.conv_out"], name="block2.tap", axes=[2, 3], keepdims=0)
    b.save([helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 32, 32])],
           [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", 16, 32, 32]),
            helper.make_tensor_value_info(tap, TensorProto.FLOAT, ["batch", 16])], "eps_story_tap.onnx")


def branchy():
    b = Builder("branchy", 3)
    x = b.conv_bn_relu("input", 3, 32, prefix="stem")
    # two inception-style modules: 4 branches each, concatenated
    cin = 32
    for m in range(2):
        p = f"inc{m + 1}"
        br1 = b.conv_bn_relu(x, cin, 16, k=1, prefix=f"{p}.b1")
        br2 = b.conv_bn_relu(b.conv_bn_relu(x, cin, 16, k=1, prefix=f"{p}.b2a"), 16, 24, prefix=f"{p}.b2b")
        br3 = b.conv_bn_relu(b.conv_bn_relu(b.conv_bn_relu(x, cin, 8, k=1, prefix=f"{p}.b3a"), 8, 12,
                                            prefix=f"{p}.b3b"), 12, 12, prefix=f"{p}.b3c")
        pool = b.node("MaxPool", [x], name=f"{p}.pool", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
        br4 = b.conv_bn_relu(pool, cin, 12, k=1, prefix=f"{p}.b4")
        x = b.node("Concat", [br1, br2, br3, br4], name=f"{p}.concat", axis=1)
        cin = 16 + 24 + 12 + 12
    # a dense block: each layer sees the concat of all previous outputs
    feats = [x]
    for i in range(4):
        inp = feats[0] if len(feats) == 1 else b.node("Concat", feats, name=f"dense.concat{i}", axis=1)
        c = cin + 16 * i
        y = b.conv_bn_relu(inp, c, 16, prefix=f"dense.l{i}")
        feats.append(y)
    x = b.node("Concat", feats, name="dense.out", axis=1)
    x = b.node("GlobalAveragePool", [x], name="head.pool")
    x = b.node("Flatten", [x], name="head.flatten", axis=1)
    y = b.node("Gemm", [x, b.weight("head.fc.weight", (10, cin + 64)), b.weight("head.fc.bias", (10,))],
               name="head.fc", transB=1)
    b.save([helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 32, 32])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["batch", 10])], "branchy.onnx")


def inception_bfs():
    """Six Inception-style modules (1x1; 1x1-3x3; 1x1-3x3-3x3; pool-1x1) with the nodes of the four
    branches interleaved level by level, as some exporters order them: every branch's first output
    is alive while the others are computed, so the file order needs more memory than a depth-first
    one (fuseplan memory --schedule optimized finds it)."""
    b = Builder("inception_bfs", 6)
    x = b.conv_bn_relu("input", 3, 16, prefix="stem")
    c = 16
    for m in range(6):
        p = f"m{m}"
        # level 1 of every branch
        b1 = b.conv_bn_relu(x, c, 8, k=1, prefix=f"{p}.b1")
        b2 = b.conv_bn_relu(x, c, 24, k=1, prefix=f"{p}.b2a")
        b3 = b.conv_bn_relu(x, c, 24, k=1, prefix=f"{p}.b3a")
        b4 = b.node("MaxPool", [x], name=f"{p}.pool", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
        # level 2
        b2 = b.conv_bn_relu(b2, 24, 12, prefix=f"{p}.b2b")
        b3 = b.conv_bn_relu(b3, 24, 24, prefix=f"{p}.b3b")
        b4 = b.conv_bn_relu(b4, c, 4, k=1, prefix=f"{p}.b4")
        # level 3
        b3 = b.conv_bn_relu(b3, 24, 8, prefix=f"{p}.b3c")
        x = b.node("Concat", [b1, b2, b3, b4], name=f"{p}.concat", axis=1)
        c = 32
        if m % 2:
            x = b.node("MaxPool", [x], name=f"{p}.down", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    x = b.node("GlobalAveragePool", [x], name="head.pool")
    x = b.node("Flatten", [x], name="head.flatten", axis=1)
    y = b.node("Gemm", [x, b.weight("head.fc.weight", (10, c)), b.weight("head.fc.bias", (10,))], name="head.fc",
               transB=1)
    b.save([helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 64, 64])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["batch", 10])], "inception_bfs.onnx")


def layer_norm(b, x, d, p):
    """The decomposed LayerNorm torch exports before opset 17."""
    mean = b.node("ReduceMean", [x], name=f"{p}.mean", axes=[-1])
    sub = b.node("Sub", [x, mean], name=f"{p}.sub")
    two = p + ".two"
    b.inits.append(numpy_helper.from_array(np.array(2.0, dtype=np.float32), two))
    pw = b.node("Pow", [sub, two], name=f"{p}.pow")
    var = b.node("ReduceMean", [pw], name=f"{p}.var", axes=[-1])
    eps = p + ".eps"
    b.inits.append(numpy_helper.from_array(np.array(1e-12, dtype=np.float32), eps))
    std = b.node("Sqrt", [b.node("Add", [var, eps], name=f"{p}.addeps")], name=f"{p}.sqrt")
    y = b.node("Div", [sub, std], name=f"{p}.div")
    y = b.node("Mul", [y, b.weight(f"{p}.gamma", (d,), positive=True)], name=f"{p}.mul")
    return b.node("Add", [y, b.weight(f"{p}.beta", (d,))], name=f"{p}.add")


def linear(b, x, din, dout, p):
    y = b.node("MatMul", [x, b.weight(f"{p}.weight", (din, dout), scale=din ** -0.5)], name=f"{p}.matmul")
    return b.node("Add", [y, b.weight(f"{p}.bias", (dout,))], name=f"{p}.add")


def transformer_block():
    b = Builder("transformer_block", 4)
    d, heads, ff = 64, 4, 256
    hd = d // heads
    x = "input"
    q, k, v = (linear(b, x, d, d, f"attn.{n}") for n in "qkv")
    split = b.const_i64("attn.split_shape", [0, 0, heads, hd])
    def heads_of(t, n, perm):
        r = b.node("Reshape", [t, split], name=f"attn.{n}.reshape")
        return b.node("Transpose", [r], name=f"attn.{n}.transpose", perm=perm)
    qh, kh, vh = heads_of(q, "q", [0, 2, 1, 3]), heads_of(k, "k", [0, 2, 3, 1]), heads_of(v, "v", [0, 2, 1, 3])
    s = b.node("MatMul", [qh, kh], name="attn.scores")
    scale = "attn.scale"
    b.inits.append(numpy_helper.from_array(np.array(hd ** 0.5, dtype=np.float32), scale))
    s = b.node("Div", [s, scale], name="attn.scale_div")
    p_ = b.node("Softmax", [s], name="attn.softmax", axis=-1)
    ctx = b.node("MatMul", [p_, vh], name="attn.context")
    ctx = b.node("Transpose", [ctx], name="attn.merge.transpose", perm=[0, 2, 1, 3])
    ctx = b.node("Reshape", [ctx, b.const_i64("attn.merge_shape", [0, 0, d])], name="attn.merge.reshape")
    o = linear(b, ctx, d, d, "attn.out")
    x1 = layer_norm(b, b.node("Add", [o, x], name="attn.residual"), d, "ln1")
    h = linear(b, x1, d, ff, "ffn.fc1")
    # erf-form Gelu: x * 0.5 * (1 + erf(x / sqrt(2)))
    for n, val in (("sqrt2", 2 ** 0.5), ("one", 1.0), ("half", 0.5)):
        b.inits.append(numpy_helper.from_array(np.array(val, dtype=np.float32), f"gelu.{n}"))
    e = b.node("Erf", [b.node("Div", [h, "gelu.sqrt2"], name="gelu.div")], name="gelu.erf")
    g = b.node("Mul", [b.node("Mul", [h, b.node("Add", [e, "gelu.one"], name="gelu.add")], name="gelu.mul"),
                       "gelu.half"], name="gelu.mul_half")
    h2 = linear(b, g, ff, d, "ffn.fc2")
    y = layer_norm(b, b.node("Add", [h2, x1], name="ffn.residual"), d, "ln2")
    b.save([helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", "seq", d])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["batch", "seq", d])], "transformer_block.onnx")


def if_subgraph():
    b = Builder("if_subgraph", 5)
    x = b.node("Relu", ["input"], name="pre")
    then_g = helper.make_graph([helper.make_node("Neg", [x], ["then_out"], name="then.neg")], "then_branch", [],
                               [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, ["batch", 8])])
    else_g = helper.make_graph([helper.make_node("Abs", [x], ["else_out"], name="else.abs")], "else_branch", [],
                               [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, ["batch", 8])])
    y = b.node("If", ["flag"], name="choose", then_branch=then_g, else_branch=else_g)
    b.save([helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 8]),
            helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["batch", 8])], "if_subgraph.onnx")


def rms_norm(b, x, d, p):
    """RMSNorm as exports write it from primitive ops: x / sqrt(mean(x^2) + eps) * gamma."""
    two, eps = p + ".two", p + ".eps"
    b.inits.append(numpy_helper.from_array(np.array(2.0, dtype=np.float32), two))
    b.inits.append(numpy_helper.from_array(np.array(1e-6, dtype=np.float32), eps))
    ms = b.node("ReduceMean", [b.node("Pow", [x, two], name=f"{p}.pow")], name=f"{p}.mean", axes=[-1])
    rms = b.node("Sqrt", [b.node("Add", [ms, eps], name=f"{p}.addeps")], name=f"{p}.sqrt")
    y = b.node("Div", [x, rms], name=f"{p}.div")
    return b.node("Mul", [y, b.weight(f"{p}.weight", (d,), positive=True)], name=f"{p}.mul")


def rotary(b, x, hd, p):
    """x * cos + rotate_half(x) * sin over the head dim (cos and sin as constants of one position)."""
    half = hd // 2
    lo = b.node("Slice", [x, b.const_i64(f"{p}.s0", [0]), b.const_i64(f"{p}.e0", [half]),
                          b.const_i64(f"{p}.ax0", [-1])], name=f"{p}.lo")
    hi = b.node("Slice", [x, b.const_i64(f"{p}.s1", [half]), b.const_i64(f"{p}.e1", [hd]),
                          b.const_i64(f"{p}.ax1", [-1])], name=f"{p}.hi")
    rot = b.node("Concat", [b.node("Neg", [hi], name=f"{p}.neg"), lo], name=f"{p}.rotate", axis=-1)
    cos = b.weight(f"{p}.cos", (1, 1, 1, hd))
    sin = b.weight(f"{p}.sin", (1, 1, 1, hd))
    return b.node("Add", [b.node("Mul", [x, cos], name=f"{p}.mulcos"), b.node("Mul", [rot, sin], name=f"{p}.mulsin")],
                  name=f"{p}.add")


def decoder_layer(b, x, i, d, heads, kv_heads, hd, ff, presents):
    p = f"model.layers.{i}"
    h = rms_norm(b, x, d, f"{p}.input_layernorm")
    def proj(n, dout):
        return b.node("MatMul", [h, b.weight(f"{p}.self_attn.{n}_proj.weight", (d, dout), scale=d ** -0.5)],
                      name=f"{p}.self_attn.{n}_proj")
    def split(t, n, nh):
        r = b.node("Reshape", [t, b.const_i64(f"{p}.{n}.split", [0, 0, nh, hd])], name=f"{p}.self_attn.{n}.reshape")
        return b.node("Transpose", [r], name=f"{p}.self_attn.{n}.transpose", perm=[0, 2, 1, 3])
    q = rotary(b, split(proj("q", heads * hd), "q", heads), hd, f"{p}.self_attn.q_rot")
    k = rotary(b, split(proj("k", kv_heads * hd), "k", kv_heads), hd, f"{p}.self_attn.k_rot")
    v = split(proj("v", kv_heads * hd), "v", kv_heads)
    kv = []
    for n, t in (("key", k), ("value", v)):
        present = f"present.{i}.{n}"
        b.nodes.append(helper.make_node("Concat", [f"past_key_values.{i}.{n}", t], [present],
                                        name=f"{p}.self_attn.{n}_cache", axis=2))
        presents.append(present)
        # grouped-query attention: each KV head serves heads / kv_heads query heads
        u = b.node("Unsqueeze", [present, b.const_i64(f"{p}.{n}.unsq", [2])], name=f"{p}.self_attn.{n}.unsqueeze")
        rep = b.node("Tile", [u, b.const_i64(f"{p}.{n}.reps", [1, 1, heads // kv_heads, 1, 1])],
                     name=f"{p}.self_attn.{n}.repeat")
        kv.append(b.node("Reshape", [rep, b.const_i64(f"{p}.{n}.merge", [0, heads, -1, hd])],
                         name=f"{p}.self_attn.{n}.heads"))
    kt = b.node("Transpose", [kv[0]], name=f"{p}.self_attn.k.t", perm=[0, 1, 3, 2])
    scale = f"{p}.self_attn.scale"
    b.inits.append(numpy_helper.from_array(np.array(hd ** 0.5, dtype=np.float32), scale))
    s = b.node("Div", [b.node("MatMul", [q, kt], name=f"{p}.self_attn.scores"), scale], name=f"{p}.self_attn.scale_div")
    ctx = b.node("MatMul", [b.node("Softmax", [s], name=f"{p}.self_attn.softmax", axis=-1), kv[1]],
                 name=f"{p}.self_attn.context")
    ctx = b.node("Transpose", [ctx], name=f"{p}.self_attn.merge.transpose", perm=[0, 2, 1, 3])
    ctx = b.node("Reshape", [ctx, b.const_i64(f"{p}.merge_shape", [0, 0, heads * hd])], name=f"{p}.self_attn.merge")
    o = b.node("MatMul", [ctx, b.weight(f"{p}.self_attn.o_proj.weight", (heads * hd, d), scale=d ** -0.5)],
               name=f"{p}.self_attn.o_proj")
    x = b.node("Add", [x, o], name=f"{p}.attn_residual")
    h = rms_norm(b, x, d, f"{p}.post_attention_layernorm")
    gate = b.node("MatMul", [h, b.weight(f"{p}.mlp.gate_proj.weight", (d, ff), scale=d ** -0.5)], name=f"{p}.mlp.gate_proj")
    up = b.node("MatMul", [h, b.weight(f"{p}.mlp.up_proj.weight", (d, ff), scale=d ** -0.5)], name=f"{p}.mlp.up_proj")
    silu = b.node("Mul", [gate, b.node("Sigmoid", [gate], name=f"{p}.mlp.sigmoid")], name=f"{p}.mlp.silu")
    down = b.node("MatMul", [b.node("Mul", [silu, up], name=f"{p}.mlp.mul"),
                             b.weight(f"{p}.mlp.down_proj.weight", (ff, d), scale=ff ** -0.5)], name=f"{p}.mlp.down_proj")
    return b.node("Add", [x, down], name=f"{p}.mlp_residual")


def decoder_tiny():
    b = Builder("decoder_tiny", 6)
    vocab, d, heads, kv_heads, hd, ff, layers = 128, 64, 4, 2, 16, 128, 2
    x = b.node("Gather", [b.weight("model.embed_tokens.weight", (vocab, d)), "input_ids"], name="model.embed_tokens")
    presents = []
    for i in range(layers):
        x = decoder_layer(b, x, i, d, heads, kv_heads, hd, ff, presents)
    x = rms_norm(b, x, d, "model.norm")
    logits = b.node("MatMul", [x, b.weight("lm_head.weight", (d, vocab), scale=d ** -0.5)], name="lm_head")
    kv_in, kv_out = [], []
    for name in presents:
        past = name.replace("present.", "past_key_values.")
        kv_in.append(helper.make_tensor_value_info(past, TensorProto.FLOAT,
                                                   ["batch_size", kv_heads, "past_sequence_length", hd]))
        kv_out.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                    ["batch_size", kv_heads, "past_sequence_length + sequence_length", hd]))
    b.save([helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"])] + kv_in,
           [helper.make_tensor_value_info(logits, TensorProto.FLOAT, ["batch_size", "sequence_length", vocab])] + kv_out,
           "decoder_tiny.onnx")


def genai_norm(b, root, skip, d, name, weight, last=False):
    """RMSNorm as onnxruntime-genai's builder writes it for CPU fp32: SimplifiedLayerNormalization
    (ONNX domain) first, then SkipSimplifiedLayerNormalization (com.microsoft), which adds the
    residual `skip` to `root` and returns the sum as output 3 for the next one (the last returns
    output 0 only). Returns (normalized, residual sum)."""
    w = b.weight(weight, (d,), positive=True)
    eps = 9.999999747378752e-06
    if skip is None:
        return b.node("SimplifiedLayerNormalization", [root, w], name=name, axis=-1, epsilon=eps, stash_type=1), root
    out, total = f"{name}/output_0", f"{name}/output_3"
    b.nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [root, skip, w],
                                    [out] if last else [out, "", "", total], name=name, domain="com.microsoft",
                                    epsilon=eps))
    return out, None if last else total


def genai_mask(b):
    """seqlens_k = Cast(ReduceSum(attention_mask, 1) - 1, int32) and total_sequence_length =
    Cast(Gather(Shape(attention_mask), 1), int32), the builder's attention-mask subgraph for GQA."""
    p = "/model/attn_mask_reformat/attn_mask_subgraph"
    one = b.const_i64(f"{p}/one", [1])
    s = b.node("ReduceSum", ["attention_mask", one], name=f"{p}/ReduceSum")
    s = b.node("Sub", [s, one], name=f"{p}/Sub")
    seqlens = b.node("Cast", [s], name=f"{p}/Sub/Cast", to=TensorProto.INT32)
    shape = b.node("Shape", ["attention_mask"], name=f"{p}/Shape")
    total = b.node("Gather", [shape, b.const_i64(f"{p}/idx1", 1)], name=f"{p}/Gather", axis=0)
    return seqlens, b.node("Cast", [total], name=f"{p}/Gather/Cast", to=TensorProto.INT32)


def rotary_caches(b, hd, positions, theta=10000.0):
    """GQA's cos_cache and sin_cache [positions, hd / 2] (do_rotary, not interleaved)."""
    inv_freq = 1.0 / theta ** (np.arange(0, hd, 2, dtype=np.float32) / hd)
    freqs = np.outer(np.arange(positions, dtype=np.float32), inv_freq)
    for name, a in (("cos_cache", np.cos(freqs)), ("sin_cache", np.sin(freqs))):
        b.inits.append(numpy_helper.from_array(a.astype(np.float32), name))
    return "cos_cache", "sin_cache"


def genai_matmul(b, x, din, dout, weight, name, scale):
    """A float32 projection as the builder writes it for CPU fp32: MatMul(x, W [din, dout])."""
    return b.node("MatMul", [x, b.weight(weight, (din, dout), scale=scale)], name=name)


def genai_embedding(b, vocab, d):
    """The token embedding of the fp32 builder: Gather from model.embed_tokens.weight [vocab, d]."""
    return b.node("Gather", [b.weight("model.embed_tokens.weight", (vocab, d)), "input_ids"], name="/model/embed_tokens/Gather")


def pack4(q):
    """uint4 values (last axis even) packed two a byte, the first in the low nibble (MatMulNBits'
    and GatherBlockQuantized's order)."""
    q = q.astype(np.uint8)
    return (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)


def quantize4(w, block):
    """w [rows, cols] in blocks of `block` along cols, asymmetric 4 bits: (q [rows, cols], scales
    [rows, blocks], zero points [rows, blocks]) with w ~ (q - zp) x scale."""
    rows, cols = w.shape
    blocks = -(-cols // block)
    wb = np.zeros((rows, blocks * block), np.float32)
    wb[:, :cols] = w
    wb = wb.reshape(rows, blocks, block)
    lo, hi = np.minimum(wb.min(axis=2), 0), np.maximum(wb.max(axis=2), 0)
    scales = np.maximum(hi - lo, 1e-8) / 15
    zp = np.clip(np.round(-lo / scales), 0, 15)
    q = np.clip(np.round(wb / scales[..., None]) + zp[..., None], 0, 15)
    return q.reshape(rows, blocks * block), scales.astype(np.float32), zp.astype(np.uint8)


def nbits_matmul(b, x, din, dout, weight, name, scale, block=32):
    """MatMulNBits of onnxruntime-genai's int4 builder (docs/ContribOperators.md): W^T [dout, din]
    quantized in blocks of 32 along din, B [N, k_blocks, 16] uint8, scales [N, k_blocks], zero
    points packed [N, ceil(k_blocks / 2)]."""
    w = b.rng.standard_normal((din, dout)).astype(np.float32) * scale
    q, scales, zp = quantize4(w.T, block)
    blocks = scales.shape[1]
    if blocks % 2:
        zp = np.concatenate([zp, np.zeros((dout, 1), np.uint8)], axis=1)
    stem = (weight if ".MatMul." in weight else weight.replace(".weight", ".MatMul.weight")) + "_Q4"
    b.inits += [numpy_helper.from_array(pack4(q).reshape(dout, blocks, block // 2), stem),
                numpy_helper.from_array(scales, stem.replace("_Q4", "_scale")),
                numpy_helper.from_array(pack4(zp), stem.replace("_Q4", "_zp"))]
    return b.node("MatMulNBits", [x, stem, stem.replace("_Q4", "_scale"), stem.replace("_Q4", "_zp")],
                  name=name.replace("MatMul", "MatMul_Q4"), domain="com.microsoft", K=din, N=dout, bits=4,
                  block_size=block, accuracy_level=4)


def quantized_embedding(b, vocab, d, block=32):
    """The token embedding as GatherBlockQuantized: the table quantized symmetrically to 4 bits in
    blocks of 32 along d (default zero point 8), data [vocab, d / 2] uint8, scales [vocab, d / 32]."""
    w = b.rng.standard_normal((vocab, d)).astype(np.float32) * 0.1
    wb = w.reshape(vocab, d // block, block)
    scales = np.maximum(np.abs(wb).max(axis=2), 1e-8) / 7
    q = np.clip(np.round(wb / scales[..., None]) + 8, 0, 15).reshape(vocab, d)
    b.inits += [numpy_helper.from_array(pack4(q), "model.embed_tokens.weight_Q4"),
                numpy_helper.from_array(scales.astype(np.float32), "model.embed_tokens.weight_scale")]
    return b.node("GatherBlockQuantized", ["model.embed_tokens.weight_Q4", "input_ids", "model.embed_tokens.weight_scale"],
                  name="/model/embed_tokens/GatherBlockQuantized", domain="com.microsoft", bits=4, block_size=block,
                  gather_axis=0, quantize_axis=1)


def decoder_gqa():
    """decoder_tiny's configuration in onnxruntime-genai's layout: GroupQueryAttention owns the KV
    cache (present = past + new tokens) and applies the rotary embeddings itself."""
    genai_decoder(Builder("decoder_gqa", 7), "decoder_gqa.onnx", genai_matmul, genai_embedding)


def decoder_int4():
    """decoder_gqa as onnxruntime-genai's int4 builder writes it for CPU: every projection and the
    LM head a MatMulNBits (4 bits, blocks of 32, packed zero points), the embedding a
    GatherBlockQuantized."""
    genai_decoder(Builder("decoder_int4", 11), "decoder_int4.onnx", nbits_matmul, quantized_embedding)


def genai_config():
    """onnxruntime-genai's genai_config.json of decoder_int4.onnx, in the builder's layout (the
    members fuseplan reads and a few of the rest)."""
    vocab, d, heads, kv_heads, hd, layers = 128, 64, 4, 2, 16, 2
    config = {
        "model": {
            "type": "llama", "context_length": 2048, "vocab_size": vocab, "bos_token_id": 1, "eos_token_id": 2,
            "pad_token_id": 0,
            "decoder": {
                "filename": "decoder_int4.onnx", "head_size": hd, "hidden_size": d, "num_attention_heads": heads,
                "num_hidden_layers": layers, "num_key_value_heads": kv_heads,
                "session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
                "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask",
                           "past_key_names": "past_key_values.%d.key", "past_value_names": "past_key_values.%d.value"},
                "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                            "present_value_names": "present.%d.value"},
            },
        },
        "search": {"do_sample": False, "max_length": 4096, "min_length": 0, "num_beams": 1,
                   "num_return_sequences": 1, "past_present_share_buffer": True, "top_k": 1},
    }
    with open(os.path.join(HERE, "genai_config.json"), "w") as f:
        json.dump(config, f, indent=4)
        f.write("\n")


def attend(b, q, k, v, hd, p):
    """softmax(q k^T / sqrt(hd)) v over [batch, heads, tokens, hd] tensors."""
    kt = b.node("Transpose", [k], name=f"{p}/k_t", perm=[0, 1, 3, 2])
    b.inits.append(numpy_helper.from_array(np.array(hd ** -0.5, dtype=np.float32), f"{p}.scale"))
    scores = b.node("Mul", [b.node("MatMul", [q, kt], name=f"{p}/qk"), f"{p}.scale"], name=f"{p}/scale")
    return b.node("MatMul", [b.node("Softmax", [scores], name=f"{p}/softmax", axis=-1), v], name=f"{p}/av")


def heads_of(b, x, heads, hd, p):
    """[batch, tokens, heads x hd] into [batch, heads, tokens, hd]."""
    r = b.node("Reshape", [x, b.const_i64(f"{p}.split_shape", [0, 0, heads, hd])], name=f"{p}/split")
    return b.node("Transpose", [r], name=f"{p}/to_bhsd", perm=[0, 2, 1, 3])


def merge_heads(b, x, heads, hd, p):
    """[batch, heads, tokens, hd] into [batch, tokens, heads x hd]."""
    t = b.node("Transpose", [x], name=f"{p}/to_bshd", perm=[0, 2, 1, 3])
    return b.node("Reshape", [t, b.const_i64(f"{p}.merge_shape", [0, 0, heads * hd])], name=f"{p}/merge")


def whisper_norm(b, x, d, p):
    return b.node("LayerNormalization", [x, b.weight(f"{p}.weight", (d,), positive=True), b.weight(f"{p}.bias", (d,))],
                  name=p, axis=-1, epsilon=1e-5)


def decoder_whisper():
    """A Whisper-style decoder with past in Optimum's layout: self-attention K and V extended by a
    Concat on the sequence axis, cross-attention reading the encoder's K and V (1500 frames)."""
    b = Builder("decoder_whisper", 13)
    vocab, d, heads, hd, ff, layers, frames = 128, 64, 4, 16, 128, 2, 1500
    x = b.node("Gather", [b.weight("model.decoder.embed_tokens.weight", (vocab, d)), "input_ids"], name="/embed")
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"])]
    outputs = []
    for i in range(layers):
        p = f"/model/decoder/layers.{i}"
        h = whisper_norm(b, x, d, f"{p}/self_attn_layer_norm")
        q, k, v = (heads_of(b, linear(b, h, d, heads * hd, f"{p}/self_attn/{n}_proj"), heads, hd, f"{p}/self_attn/{n}")
                   for n in ("q", "k", "v"))
        kv = []
        for n, t in (("key", k), ("value", v)):
            past, present = f"past_key_values.{i}.decoder.{n}", f"present.{i}.decoder.{n}"
            b.nodes.append(helper.make_node("Concat", [past, t], [present], name=f"{p}/self_attn/concat_{n}", axis=2))
            inputs.append(helper.make_tensor_value_info(past, TensorProto.FLOAT,
                                                        ["batch_size", heads, "past_decoder_sequence_length", hd]))
            outputs.append(helper.make_tensor_value_info(present, TensorProto.FLOAT,
                                                         ["batch_size", heads, "past_decoder_sequence_length + 1", hd]))
            kv.append(present)
        a = merge_heads(b, attend(b, q, kv[0], kv[1], hd, f"{p}/self_attn"), heads, hd, f"{p}/self_attn")
        x = b.node("Add", [x, linear(b, a, heads * hd, d, f"{p}/self_attn/out_proj")], name=f"{p}/self_attn/residual")
        h = whisper_norm(b, x, d, f"{p}/encoder_attn_layer_norm")
        q = heads_of(b, linear(b, h, d, heads * hd, f"{p}/encoder_attn/q_proj"), heads, hd, f"{p}/encoder_attn/q")
        cross = [f"past_key_values.{i}.encoder.{n}" for n in ("key", "value")]
        for n in cross:
            inputs.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch_size", heads, frames, hd]))
        a = merge_heads(b, attend(b, q, cross[0], cross[1], hd, f"{p}/encoder_attn"), heads, hd, f"{p}/encoder_attn")
        x = b.node("Add", [x, linear(b, a, heads * hd, d, f"{p}/encoder_attn/out_proj")],
                   name=f"{p}/encoder_attn/residual")
        h = whisper_norm(b, x, d, f"{p}/final_layer_norm")
        h = b.node("Relu", [linear(b, h, d, ff, f"{p}/fc1")], name=f"{p}/act")
        x = b.node("Add", [x, linear(b, h, ff, d, f"{p}/fc2")], name=f"{p}/mlp/residual")
    h = whisper_norm(b, x, d, "/model/decoder/layer_norm")
    b.nodes.append(helper.make_node("MatMul", [h, b.weight("proj_out.weight", (d, vocab))], ["logits"], name="/proj_out"))
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", vocab])
    b.save(inputs, [logits] + outputs, "decoder_whisper.onnx", opsets=(("", 17),))


def genai_decoder(b, filename, proj, embed):
    """The decoder of decoder_gqa and decoder_int4: `proj` writes its projections, `embed` its token
    embedding."""
    vocab, d, heads, kv_heads, hd, ff, layers, positions = 128, 64, 4, 2, 16, 128, 2, 2048
    x = embed(b, vocab, d)
    seqlens, total = genai_mask(b)
    cos, sin = rotary_caches(b, hd, positions)
    residual, skip = x, None
    kv_in, kv_out = [], []
    for i in range(layers):
        p = f"/model/layers.{i}"
        h, residual = genai_norm(b, residual, skip, d, f"{p}/input_layernorm/LayerNorm",
                                 f"model.layers.{i}.input_layernorm.weight")
        q, k, v = (proj(b, h, d, nh * hd, f"model.layers.{i}.attn.{n}_proj.weight", f"{p}/attn/{n}_proj/MatMul", d ** -0.5)
                   for n, nh in (("q", heads), ("k", kv_heads), ("v", kv_heads)))
        past = [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        present = [f"present.{i}.key", f"present.{i}.value"]
        attn = f"{p}/attn/GroupQueryAttention"
        b.nodes.append(helper.make_node("GroupQueryAttention", [q, k, v] + past + [seqlens, total, cos, sin],
                                        [f"{attn}/output_0"] + present, name=attn, domain="com.microsoft",
                                        num_heads=heads, kv_num_heads=kv_heads, scale=float(hd ** -0.5), do_rotary=1,
                                        rotary_interleaved=0))
        for n in past:
            kv_in.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch_size", kv_heads, "past_sequence_length", hd]))
        for n in present:
            kv_out.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch_size", kv_heads, "total_sequence_length", hd]))
        o = proj(b, f"{attn}/output_0", heads * hd, d, f"model.layers.{i}.attn.o_proj.weight", f"{p}/attn/o_proj/MatMul",
                 d ** -0.5)
        h, residual = genai_norm(b, residual, o, d, f"{p}/post_attention_layernorm/SkipLayerNorm",
                                 f"model.layers.{i}.post_attention_layernorm.weight")
        gate = proj(b, h, d, ff, f"model.layers.{i}.mlp.gate_proj.weight", f"{p}/mlp/gate_proj/MatMul", d ** -0.5)
        up = proj(b, h, d, ff, f"model.layers.{i}.mlp.up_proj.weight", f"{p}/mlp/up_proj/MatMul", d ** -0.5)
        act = b.node("Mul", [gate, b.node("Sigmoid", [gate], name=f"{p}/mlp/act_fn/Sigmoid")], name=f"{p}/mlp/act_fn/Mul")
        skip = proj(b, b.node("Mul", [act, up], name=f"{p}/mlp/Mul"), ff, d, f"model.layers.{i}.mlp.down_proj.weight",
                    f"{p}/mlp/down_proj/MatMul", ff ** -0.5)
    h, _ = genai_norm(b, residual, skip, d, f"/model/layers.{layers}/final_norm_layernorm/SkipLayerNorm",
                      f"model.layers.{layers}.final_norm_layernorm.weight", last=True)
    logits = proj(b, h, d, vocab, "lm_head.MatMul.weight", "/lm_head/MatMul", d ** -0.5)
    b.nodes[-1].output[0] = "logits"
    ids = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
           helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"])]
    b.save(ids + kv_in, [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", vocab])]
           + kv_out, filename, opsets=(("", 14), ("com.microsoft", 1)))


# ---------------------------------------------------------------- QDQ models (quantized, as the ONNX
# Runtime quantizer writes them: QuantizeLinear / DequantizeLinear around each float op)

U8, I8, I32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
UINT4, INT4 = 21, 22  # TensorProto.UINT4 and INT4 (ONNX 1.16), which Debian's onnx 1.12 lacks
QDQ_NP = {U8: np.uint8, I8: np.int8, I32: np.int32}


class QdqBuilder(Builder):
    """A Builder that writes QDQ node units: activations quantized per tensor (uint8 unless told),
    weights int8 per tensor or per channel, biases int32 with scale = input scale x weight scale."""

    def scalar(self, name, value, dtype=np.float32):
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def q(self, x, scale, zp, dtype=U8, name=None):
        """QuantizeLinear(x) with a per-tensor scale and zero point of `dtype`."""
        p = name or self.uid("q_")
        s = self.scalar(f"{p}.scale", scale)
        z = self.scalar(f"{p}.zp", zp, QDQ_NP[dtype])
        return self.node("QuantizeLinear", [x, s, z], name=p), s, z

    def dq(self, xq, s, z, name=None, **attrs):
        return self.node("DequantizeLinear", [xq, s, z] if z else [xq, s], name=name or self.uid("dq_"), **attrs)

    def qdq_weight(self, p, shape, per_channel_axis=None, dtype=I8):
        """A float weight quantized symmetrically to int8 (zero point 0): DQ of it, its scale."""
        w = self.rng.standard_normal(shape).astype(np.float32) * 0.2
        if per_channel_axis is None:
            s = np.float32(np.abs(w).max() / 127)
            q = np.clip(np.round(w / s), -127, 127)
            sz = (np.array(s, np.float32), np.array(0, QDQ_NP[dtype]))
            attrs = {}
        else:
            red = tuple(i for i in range(len(shape)) if i != per_channel_axis)
            s = (np.abs(w).max(axis=red) / 127).astype(np.float32)
            bshape = [1] * len(shape)
            bshape[per_channel_axis] = shape[per_channel_axis]
            q = np.clip(np.round(w / s.reshape(bshape)), -127, 127)
            sz = (s, np.zeros(shape[per_channel_axis], QDQ_NP[dtype]))
            attrs = {"axis": per_channel_axis}
        if dtype == U8:
            q = q + 128
            sz = (sz[0], sz[1] + 128)
        self.inits += [numpy_helper.from_array(q.astype(QDQ_NP[dtype]), f"{p}.weight_q"),
                       numpy_helper.from_array(sz[0], f"{p}.weight_scale"),
                       numpy_helper.from_array(sz[1], f"{p}.weight_zp")]
        return self.dq(f"{p}.weight_q", f"{p}.weight_scale", f"{p}.weight_zp", name=f"{p}.weight_dq", **attrs), sz[0]

    def qdq_bias(self, p, n, x_scale, w_scale):
        """An int32 bias of n values, scale x_scale x w_scale (per channel when w_scale is), zero point 0."""
        s = (np.float32(x_scale) * np.asarray(w_scale, np.float32)).astype(np.float32)
        s = s if s.ndim else np.array(s, np.float32)
        self.inits += [numpy_helper.from_array(self.rng.integers(-500, 500, n).astype(np.int32), f"{p}.bias_q"),
                       numpy_helper.from_array(s, f"{p}.bias_scale")]
        return self.dq(f"{p}.bias_q", f"{p}.bias_scale", None, name=f"{p}.bias_dq", **({"axis": 0} if s.ndim else {}))

    def qconv(self, x, xs, p, cin, cout, per_channel, out_scale, out_dtype=U8, k=3, float_bias=False):
        """DQ(w) + DQ(bias) -> Conv(x) -> Q: one QLinearConv node unit (a float bias: no DQ)."""
        w, ws = self.qdq_weight(p, (cout, cin, k, k), 0 if per_channel else None)
        bias = self.weight(f"{p}.bias", (cout,)) if float_bias else self.qdq_bias(p, cout, xs, ws)
        ins = [x, w, bias]
        y = self.node("Conv", ins, name=f"{p}.conv", kernel_shape=[k, k], pads=[k // 2] * 4)
        return self.q(y, out_scale, 0 if out_dtype == I8 else 128, out_dtype, name=f"{p}.q")

    def save_unchecked(self, inputs, outputs, filename, opsets):
        """save() for opsets newer than Debian's onnx 1.12 checks (int4 DequantizeLinear, opset 21)."""
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        model = helper.make_model(graph, producer_name="fuseplan-samples", producer_version="1",
                                  opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
        model.ir_version = 10
        path = os.path.join(HERE, filename)
        onnx.save(model, path)
        size = os.path.getsize(path)
        assert size < 1 << 20, f"{filename} is {size} bytes"
        print(f"{filename}: {len(self.nodes)} nodes, {size} bytes")


def qdq_cnn():
    """A small residual CNN in QDQ form (uint8 activations, int8 weights): per-channel and per-tensor
    Conv units, a MaxPool and a Flatten between Q/DQ, a residual Add and a GlobalAveragePool in QDQ,
    a Gemm head without an output Q, int8 activations from conv4 on. conv4's bias is float (no DQ),
    which ONNX Runtime quantizes at load; the Flatten's Q has another scale than the DQ before it, so
    that unit stays a DQ, a Flatten and a Q."""
    b = QdqBuilder("qdq_cnn", 41)
    x0, s0, z0 = b.q("input", 0.02, 128, name="input.q")
    x = b.dq(x0, s0, z0, name="input.dq")
    c1, s1, z1 = b.qconv(x, 0.02, "conv1", 3, 8, per_channel=True, out_scale=0.05)
    p1 = b.node("MaxPool", [b.dq(c1, s1, z1, name="conv1.out_dq")], name="pool1", kernel_shape=[2, 2], strides=[2, 2])
    p1, sp, zp = b.q(p1, 0.05, 128, name="pool1.q")
    shared = b.dq(p1, sp, zp, name="pool1.out_dq")  # read by conv2 and by the residual Add
    c2, s2, z2 = b.qconv(shared, 0.05, "conv2", 8, 8, per_channel=False, out_scale=0.05)
    c3, s3, z3 = b.qconv(b.dq(c2, s2, z2, name="conv2.out_dq"), 0.05, "conv3", 8, 8, per_channel=True,
                         out_scale=0.05)
    a = b.node("Add", [b.dq(c3, s3, z3, name="conv3.out_dq"), shared], name="residual.add")
    a, sa, za = b.q(a, 0.08, 128, name="residual.q")
    c4, s4, z4 = b.qconv(b.dq(a, sa, za, name="residual.out_dq"), 0.08, "conv4", 8, 16, per_channel=True,
                         out_scale=0.05, out_dtype=I8, float_bias=True)
    g = b.node("GlobalAveragePool", [b.dq(c4, s4, z4, name="conv4.out_dq")], name="gap")
    g, sg, zg = b.q(g, 0.05, 0, I8, name="gap.q")
    f = b.node("Flatten", [b.dq(g, sg, zg, name="gap.out_dq")], name="flatten", axis=1)
    f, sf, zf = b.q(f, 0.04, 0, I8, name="flatten.q")  # not gap's scale: the Flatten stays in float
    w, ws = b.qdq_weight("fc", (16, 10))
    b.node("Gemm", [b.dq(f, sf, zf, name="flatten.out_dq"), w, b.qdq_bias("fc", 10, 0.05, ws)], name="fc.gemm")
    b.nodes[-1].output[0] = "logits"
    b.save([helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
           [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], "qdq_cnn.onnx")


def qdq_cnn_branches():
    """Two QDQ Convs with a MaxPool between them whose tensors also leave the int8 region: conv1's
    quantized output is read by a DQ and a float Relu (a graph output) as well as by the pool, conv2's
    is a graph output and is dequantized into another. At level all ONNX Runtime runs both Convs and
    the pool channels-last, with one Transpose in and one out of each tensor that leaves."""
    b = QdqBuilder("qdq_cnn_branches", 5)
    x0, s0, z0 = b.q("input", 0.02, 128, name="input.q")
    c1, s1, z1 = b.qconv(b.dq(x0, s0, z0, name="input.dq"), 0.02, "conv1", 3, 8, per_channel=True, out_scale=0.05)
    b.node("Relu", [b.dq(c1, s1, z1, name="conv1.dq_relu")], name="relu")
    b.nodes[-1].output[0] = "relu_out"
    p = b.node("MaxPool", [b.dq(c1, s1, z1, name="conv1.dq_pool")], name="pool", kernel_shape=[2, 2], strides=[2, 2])
    p, sp, zp = b.q(p, 0.05, 128, name="pool.q")
    c2, s2, z2 = b.qconv(b.dq(p, sp, zp, name="pool.dq"), 0.05, "conv2", 8, 8, per_channel=False, out_scale=0.05)
    b.node("DequantizeLinear", [c2, s2, z2], name="conv2.out_dq")
    b.nodes[-1].output[0] = "output"
    f32 = TensorProto.FLOAT
    b.save([helper.make_tensor_value_info("input", f32, [1, 3, 16, 16])],
           [helper.make_tensor_value_info("relu_out", f32, [1, 8, 16, 16]),
            helper.make_tensor_value_info("output", f32, [1, 8, 8, 8]),
            helper.make_tensor_value_info(c2, TensorProto.UINT8, [1, 8, 8, 8])], "qdq_cnn_branches.onnx")


def qdq_matmul():
    """A small Transformer-style block in QDQ form: uint8 activations, int8 weights per tensor (q) and
    per column (k); scores through a QDQ Softmax, a QDQ Transpose and Reshape, a gated QDQ Sigmoid
    and Mul, a MatMul with no output Q (MatMulIntegerToFloat) whose weight DQ also feeds a graph
    output, v's output Q int8 while its input is uint8; final's weight is float (no DQ): it stays."""
    b = QdqBuilder("qdq_matmul", 43)
    d = 32
    x0, s0, z0 = b.q("input", 0.03, 128, name="input.q")
    x = b.dq(x0, s0, z0, name="input.dq")
    q = b.node("MatMul", [x, b.qdq_weight("wq", (d, d))[0]], name="q.matmul")
    q, sq, zq = b.q(q, 0.04, 128, name="q.q")
    k = b.node("MatMul", [b.dq(x0, s0, z0, name="input.dq_k"), b.qdq_weight("wk", (d, d), per_channel_axis=1)[0]],
               name="k.matmul")
    k, sk, zk = b.q(k, 0.04, 128, name="k.q")
    kt = b.node("Transpose", [b.dq(k, sk, zk, name="k.out_dq")], name="k.transpose", perm=[0, 2, 1])
    kt, st, zt = b.q(kt, 0.04, 128, name="k.transpose.q")
    sc = b.node("MatMul", [b.dq(q, sq, zq, name="q.out_dq"), b.dq(kt, st, zt, name="kt.out_dq")], name="scores.matmul")
    sc, ss, zs = b.q(sc, 0.1, 128, name="scores.q")
    p = b.node("Softmax", [b.dq(sc, ss, zs, name="scores.out_dq")], name="softmax", axis=-1)
    p, sp, zp = b.q(p, 1.0 / 255, 0, name="softmax.q")
    v = b.node("MatMul", [b.dq(x0, s0, z0, name="input.dq_v"), b.qdq_weight("wv", (d, d))[0]], name="v.matmul")
    v, sv, zv = b.q(v, 0.04, 0, I8, name="v.q")
    ctx = b.node("MatMul", [b.dq(p, sp, zp, name="softmax.out_dq"), b.dq(v, sv, zv, name="v.out_dq")],
                 name="context.matmul")
    ctx, sc2, zc2 = b.q(ctx, 0.04, 128, name="context.q")
    r = b.node("Reshape", [b.dq(ctx, sc2, zc2, name="context.out_dq"), b.const_i64("reshape.shape", [8, d])],
               name="context.reshape")
    r, sr, zr = b.q(r, 0.04, 128, name="reshape.q")
    gate = b.node("Sigmoid", [b.dq(r, sr, zr, name="reshape.out_dq_sig")], name="gate.sigmoid")
    gate, sg, zg = b.q(gate, 1.0 / 255, 0, name="gate.q")
    m = b.node("Mul", [b.dq(gate, sg, zg, name="gate.out_dq"), b.dq(r, sr, zr, name="reshape.out_dq_mul")],
               name="gate.mul")
    m, sm, zm = b.q(m, 0.04, 128, name="gate.mul.q")
    wo, _ = b.qdq_weight("wo", (d, 16))
    b.node("MatMul", [b.dq(m, sm, zm, name="gate.mul.out_dq"), wo], name="out.matmul")
    b.nodes[-1].output[0] = "output"
    b.node("MatMul", [b.dq(m, sm, zm, name="gate.mul.out_dq2"), b.weight("wf.weight", (d, 16))], name="final.matmul")
    b.nodes[-1].output[0] = "final"
    f32 = TensorProto.FLOAT
    b.save([helper.make_tensor_value_info("input", f32, [1, 8, d])],
           [helper.make_tensor_value_info("output", f32, [8, 16]), helper.make_tensor_value_info("final", f32, [8, 16]),
            helper.make_tensor_value_info(wo, f32, [d, 16])], "qdq_matmul.onnx")


def qdq_int4():
    """Weight-only quantized MatMuls in QDQ form (opset 21): DequantizeLinear of a 4-bit weight [K, N]
    quantized in blocks along K, then MatMul. fc0 (int4, blocks of 32) becomes MatMulNBits; fc1 (uint4,
    blocks of 16) stays because a Relu reads it (ONNX Runtime then looks for a Q after the Relu);
    fc2's blocks of 8 are under 16, fc3's run along N (axis 1): those stay a DQ and a MatMul too."""
    b = QdqBuilder("qdq_int4", 47)
    k = n = 64
    x = "input"
    for i, (block, axis, dtype) in enumerate([(32, 0, INT4), (16, 0, UINT4), (8, 0, INT4), (16, 1, INT4)]):
        p = f"fc{i}"
        shape = (k // block, n) if axis == 0 else (k, n // block)
        lo = -8 if dtype == INT4 else 0
        q = b.rng.integers(lo, lo + 16, (k, n)).astype(np.int8)
        packed = ((q.reshape(-1)[0::2] & 15) | ((q.reshape(-1)[1::2] & 15) << 4)).astype(np.uint8)
        b.inits.append(TensorProto(name=f"{p}.weight_q", data_type=dtype, dims=(k, n), raw_data=packed.tobytes()))
        b.inits.append(numpy_helper.from_array((b.rng.random(shape) * 0.02 + 0.01).astype(np.float32), f"{p}.scale"))
        w = b.dq(f"{p}.weight_q", f"{p}.scale", None, name=f"{p}.weight_dq", axis=axis, block_size=block)
        x = b.node("MatMul", [x, w], name=f"{p}.matmul")
        if i == 0:
            x = b.node("Add", [x, b.weight(f"{p}.bias", (n,))], name=f"{p}.bias_add")
        elif i == 1:
            x = b.node("Relu", [x], name=f"{p}.relu")
    b.nodes[-1].output[0] = "output"
    f32 = TensorProto.FLOAT
    b.save_unchecked([helper.make_tensor_value_info("input", f32, [2, k])],
                     [helper.make_tensor_value_info("output", f32, [2, n])], "qdq_int4.onnx",
                     opsets=(("", 21),))


if __name__ == "__main__":
    if not hasattr(onnx, "helper"):
        sys.exit("needs Debian's python3-onnx: run with /usr/bin/python3")
    resnet_tiny()
    eps_story()
    eps_story_tap()
    branchy()
    inception_bfs()
    transformer_block()
    if_subgraph()
    decoder_tiny()
    decoder_gqa()
    decoder_int4()
    genai_config()
    decoder_whisper()
    qdq_cnn()
    qdq_cnn_branches()
    qdq_matmul()
    qdq_int4()
