#!/usr/bin/python3
"""Small float16 models, each a cut of an onnxruntime-genai test decoder where ONNX Runtime's CPU EP
runs contrib ops otherwise than float32 between Casts (passes/float16.c), for tests/test_fuse.c:

  float16_gpt2_mlp.onnx     GPT-2's MLP as onnxruntime-genai's tiny-random-gpt2 fp16 decoder writes it:
                            x [batch, 4, 32] @ W1, FastGelu(., bias) (com.microsoft), @ W2, then
                            SkipLayerNormalization with x. The CPU EP has no float16 FastGelu: ORT
                            inlines its function body (3 Adds, 5 Muls, a Tanh) in float32 between
                            Casts, its scale `a` into the second MatMul at level all (FusedMatMul);
                            SkipLayerNormalization has a float16 kernel and keeps its Casts apart.
  float16_gelus.onnx        x [2, 8]: FastGelu without a bias (its body's Identity), com.microsoft's
                            Gelu and QuickGelu, one after another: each inlined; at level all the
                            QuickGelu body, its alpha first, is QuickGelu again.
  float16_gelu20.onnx       x [2, 8] at opset 20: ONNX's Gelu, then its tanh form. The CPU EP has a
                            float Gelu-20 only: ORT inlines the ONNX function body of each, its
                            constants float32 (the CastLike pairs cancel), Sqrt(2) unfolded.
  float16_qwen_block.onnx   a decoder layer as onnxruntime-genai's tiny-qwen35 CUDA decoder writes
                            it: LayerNormalization, the q/k/v MatMuls, GroupQueryAttention with its
                            past, the output MatMul, SkipLayerNormalization, the MLP (Relu), then
                            SkipSimplifiedLayerNormalization and a 4-bit MatMulNBits head. The
                            contrib ops have float16 kernels: only the MatMuls and the Relu run in
                            float32, between Casts.

  /usr/bin/python3 bench/gen_float16_cases.py [--expect] [--ort DIR] [OUTDIR]   (default tests/data/fuse)

With --expect it also writes OUTDIR/float16_cases.ort, ONNX Runtime's kernels of each model at levels
basic, extended and all (bench/gen_paddle_like.py's expect).
"""
import numpy as np
from onnx import TensorProto, helper

import gen_ort_shape_cases
from gen_paddle_like import cli

rng = np.random.default_rng(16)
F16 = TensorProto.FLOAT16
MS = "com.microsoft"


class Graph(gen_ort_shape_cases.Graph):
    """gen_ort_shape_cases' graph with float16 constants, nodes of any domain and outputs, and a model
    of any inputs and outputs."""

    def const(self, value, dtype=np.float16):
        return super().const(value, dtype)

    def weight(self, *shape, scale=0.2):
        return self.const(rng.standard_normal(shape) * scale)

    def op(self, op, inputs, outputs=1, domain="", **attrs):
        n = super().op(op, inputs, **attrs)
        node = self.nodes[-1]
        node.domain = domain
        node.output.extend(f"{n}_{i}" for i in range(1, outputs))
        return list(node.output) if outputs > 1 else n

    def model(self, inputs, outputs, opset=17):
        """The model of opset `opset` (and com.microsoft 1) with inputs and outputs [(name, dtype, dims)]."""
        vi = lambda n, t, d: helper.make_tensor_value_info(n, t, d)  # noqa: E731
        g = helper.make_graph(self.nodes, "float16_case", [vi(*i) for i in inputs], [vi(*o) for o in outputs],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)],
                              producer_name="gen_float16_cases")
        m.ir_version = 8
        return m


def gpt2_mlp():
    g = Graph()
    h = g.op("MatMul", ["x", g.weight(32, 128)])
    h = g.op("FastGelu", [h, g.weight(128, scale=0.1)], domain=MS)
    h = g.op("MatMul", [h, g.weight(128, 32)])
    y = g.op("SkipLayerNormalization", [h, "x", g.const(rng.random(32) + 0.5), g.weight(32, scale=0.1)],
             domain=MS, epsilon=1e-5)
    return g.model([("x", F16, ["batch", 4, 32])], [(y, F16, None)])


def gelus():
    g = Graph()
    h = g.op("FastGelu", ["x"], domain=MS)
    h = g.op("Gelu", [h], domain=MS)
    y = g.op("QuickGelu", [h], domain=MS, alpha=1.702)
    return g.model([("x", F16, [2, 8])], [(y, F16, None)])


def gelu20():
    g = Graph()
    y = g.op("Gelu", [g.op("Gelu", ["x"])], approximate="tanh")
    return g.model([("x", F16, [2, 8])], [(y, F16, None)], opset=20)


def qwen_block():
    g = Graph()
    ln = g.op("LayerNormalization", ["x", g.const(rng.random(64) + 0.5), g.weight(64, scale=0.1)], axis=-1)
    q, k, v = (g.op("MatMul", [ln, g.weight(64, n)]) for n in (64, 32, 32))
    attn, present_k, present_v = g.op("GroupQueryAttention", [q, k, v, "past_key", "past_value", "seqlens_k",
                                                              "total_sequence_length"],
                                      outputs=3, domain=MS, num_heads=4, kv_num_heads=2)
    o = g.op("MatMul", [attn, g.weight(64, 64)])
    ln2, _, _, r1 = g.op("SkipLayerNormalization", ["x", o, g.const(rng.random(64) + 0.5), g.weight(64, scale=0.1)],
                         outputs=4, domain=MS, epsilon=1e-5)
    dn = g.op("MatMul", [g.op("Relu", [g.op("MatMul", [ln2, g.weight(64, 128)])]), g.weight(128, 64)])
    fin = g.op("SkipSimplifiedLayerNormalization", [r1, dn, g.const(rng.random(64) + 0.5)], domain=MS,
               epsilon=1e-5)
    packed = g.const(rng.integers(0, 256, (16, 4, 8)), np.uint8)  # N 16, K 64 in blocks of 16, 4 bits
    logits = g.op("MatMulNBits", [fin, packed, g.weight(64, scale=0.05)], domain=MS, K=64, N=16, bits=4,
                  block_size=16)
    past = [("past_key", F16, [1, 2, "past", 16]), ("past_value", F16, [1, 2, "past", 16])]
    return g.model([("x", F16, [1, "seq", 64])] + past + [("seqlens_k", TensorProto.INT32, [1]),
                                                          ("total_sequence_length", TensorProto.INT32, [])],
                   [(logits, F16, None), (present_k, F16, None), (present_v, F16, None)])


def main():
    cli(__doc__, (("float16_gpt2_mlp.onnx", gpt2_mlp), ("float16_gelus.onnx", gelus),
                  ("float16_gelu20.onnx", gelu20), ("float16_qwen_block.onnx", qwen_block)),
        "float16_cases.ort", "bench/gen_float16_cases.py's models")


if __name__ == "__main__":
    main()
