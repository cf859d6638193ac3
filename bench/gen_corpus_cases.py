#!/usr/bin/python3
"""Small ONNX models, each the smallest form of a difference from ONNX Runtime found on the broad
corpus (bench/fidelity.py's "corpus" section), for tests/test_fuse.c:

  corpus_cse_identity.onnx  x [batch, 8, 16]; Relu(x @ W) and Relu(x @ Identity(W)), added:
                            ORT's EliminateIdentity makes both MatMuls read W before its common
                            subexpression elimination, which then merges them (torch's
                            nn.TransformerDecoder: every layer's cross-attention K/V projection of
                            the shared memory reads the first layer's weights through an Identity).
  corpus_gemm_load.onnx     x [1, 4, 16] and q [batch, 4, 16]: x @ W + b and q @ W + b. ORT's
                            MatMulAddFusion reshapes a 3-D A around a Gemm when it knows all of A's
                            dims: x's, not q's (a symbolic model input does not stop the first).
  corpus_scale_reshape13.onnx  Reshape(x [batch, 4, 8], Shape(y [batch, 8, 4])) * 0.5 @ W at
  corpus_scale_reshape14.onnx  opsets 13 and 14: ONNX's inference of Reshape-13 gives a Reshape
                            whose target is no constant no shape, that of Reshape-14 its rank, and
                            ORT's MatMulScaleFusion takes a scale only on an input of known rank:
                            FusedMatMul at 14 alone (PaddleOCR's PP-OCRv4 recognizer, opset 9: its
                            attention's q scale stays a Mul).
  corpus_cse_order.onnx     Sigmoid(x), Tanh(x), Sigmoid(x), Tanh(x), Mul(1st, 4th), Mul(3rd, 2nd),
                            their Add: ORT's elimination keeps the first node of each class in its
                            graph's topological order (a walk up from the last leaf, the highest
                            producer first), the 3rd, the 2nd and the 2nd Mul, not the first in the
                            file (torch's nn.TransformerDecoder: the last layer's cross-attention K/V
                            projection of the shared memory is the one kept).
  corpus_ppocr_block.onnx   PP-OCRv4 recognizer's transformer block as paddle2onnx writes it (opset
                            9, x [batch, 12, 1, width]): swishes x * Sigmoid(x * 1), the feature map
                            flattened by a Reshape to Concat(Shape[0:2], [-1]) (no rank in ORT's
                            graph), a LayerNorm after a Transpose, attention whose q, k, v Reshape and
                            Transpose read a length sliced from a Shape, and the Reshape back to
                            [0, 1, width, 12] that ORT's ReshapeFusion makes [0, 1, -1, 12]. ORT
                            removes the * 1 where the rank is known (before the flatten and after
                            the fused Reshape), keeps the Transpose before the LayerNorm (its
                            estimate reads a rank it does not know) and pushes the attention's
                            Transpose into k's alone.

  /usr/bin/python3 bench/gen_corpus_cases.py [--expect] [--ort DIR] [OUTDIR]   (default tests/data/fuse)

With --expect it also writes OUTDIR/corpus_cases.ort, ONNX Runtime's kernels of each model at levels
basic, extended and all (bench/gen_paddle_like.py's expect), and OUTDIR/corpus_nodes.ort, the
runtime nodes of the models whose nodes ORT names as the original ones (NODES), by op and name.
"""
import os
import tempfile

import onnx
import numpy as np
from onnx import TensorProto, helper

from gen_ort_shape_cases import Graph
from gen_paddle_like import LEVELS, VIEWS, cli, ort_saved

rng = np.random.default_rng(36)


def model(g, inputs, *ys, opset=17, producer="gen_corpus_cases"):
    """g's nodes as a model of `opset` with inputs [(name, dims)] and outputs ys."""
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, dims) for n, dims in inputs]
    outs = [helper.make_tensor_value_info(y, TensorProto.FLOAT, None) for y in ys]
    m = helper.make_model(helper.make_graph(g.nodes, "corpus_case", ins, outs, g.inits),
                          opset_imports=[helper.make_opsetid("", opset)], producer_name=producer)
    m.ir_version = 8
    return m


def cse_identity():
    g = Graph()
    w = g.const(rng.standard_normal((16, 16)) * 0.2)
    a = g.op("Relu", [g.op("MatMul", ["x", w])])
    b = g.op("Relu", [g.op("MatMul", ["x", g.op("Identity", [w])])])
    return model(g, [("x", ["batch", 8, 16])], g.op("Add", [a, b]))


def gemm_load():
    g = Graph()
    w, b = g.const(rng.standard_normal((16, 8)) * 0.2), g.const(rng.standard_normal(8) * 0.1)
    y1 = g.op("Add", [g.op("MatMul", ["x", w]), b])
    y2 = g.op("Add", [g.op("MatMul", ["q", w]), b])
    return model(g, [("x", [1, 4, 16]), ("q", ["batch", 4, 16])], y1, y2)


def scale_reshape(opset):
    g = Graph()
    r = g.op("Reshape", ["x", g.op("Shape", ["y"])])
    y = g.op("MatMul", [g.op("Mul", [r, g.const(0.5)]), g.const(rng.standard_normal((4, 4)) * 0.2)])
    return model(g, [("x", ["batch", 4, 8]), ("y", ["batch", 8, 4])], y, opset=opset)


def cse_order():
    g = Graph()
    s1, t1, s2, t2 = (g.op(op, ["x"]) for op in ("Sigmoid", "Tanh", "Sigmoid", "Tanh"))
    return model(g, [("x", ["batch", 8])], g.op("Add", [g.op("Mul", [s1, t2]), g.op("Mul", [s2, t1])]))


NODES = ("corpus_cse_order.onnx",)


def expect_nodes(out_dir, ort_dir):
    """Writes out_dir/corpus_nodes.ort: per model of NODES and level, ORT's runtime nodes (views
    aside) as `MODEL LEVEL OP:NAME ...` lines, sorted."""
    paths = [os.path.join(out_dir, m) for m in NODES]
    lines = ["# ONNX Runtime's optimized models of bench/gen_corpus_cases.py's NODES (CPU EP, onnxruntime-node),",
             "# their nodes (views aside) by op and name: MODEL LEVEL OP:NAME...; level all on an AVX-512F host"]
    with tempfile.TemporaryDirectory() as tmp:
        for level in LEVELS:
            saved = ort_saved(paths, ort_dir, level, tmp)
            for p in paths:
                nodes = sorted(f"{n.op_type}:{n.name}" for n in onnx.load(saved[os.path.abspath(p)]).graph.node
                               if n.op_type not in VIEWS)
                lines.append(" ".join([os.path.basename(p), level] + nodes))
    with open(os.path.join(out_dir, "corpus_nodes.ort"), "w") as f:
        f.write("\n".join(lines) + "\n")


def swish(g, x):
    """x * Sigmoid(x * 1), as paddle2onnx writes a swish."""
    return g.op("Mul", [x, g.op("Sigmoid", [g.op("Mul", [x, g.const(1.0)])])])


def layer_norm(g, x, width):
    """LayerNorm over the last axis written out (ReduceMean, Sub, Pow, ..., Add), as paddle2onnx does."""
    d = g.op("Sub", [x, g.op("ReduceMean", [x], axes=[-1])])
    var = g.op("ReduceMean", [g.op("Pow", [d, g.const(2.0)])], axes=[-1])
    y = g.op("Div", [d, g.op("Sqrt", [g.op("Add", [var, g.const(1e-5)])])])
    return g.op("Add", [g.op("Mul", [y, g.const(rng.random(width) + 0.5)]), g.const(rng.standard_normal(width) * 0.1)])


def dim_of(g, x, i):
    """Cast(Slice(Cast(Shape(x)), [i:i+1])): dim i of x as a 1-element int64 tensor (opset 9 Slice)."""
    s = g.op("Slice", [g.op("Cast", [g.op("Shape", [x])], to=TensorProto.INT64)], starts=[i], ends=[i + 1], axes=[0])
    return g.op("Cast", [s], to=TensorProto.INT64)


def ints(g, *v):
    return g.const(list(v), np.int64)


def attention(g, x, c=12, heads=2):
    """Self-attention of x [batch, n, c]: q, k, v by one MatMul, a Reshape to [0, n, 3, heads, c/heads]
    and a Transpose, sliced; out by a Reshape to [0, n, c] and a MatMul."""
    n, hd = dim_of(g, x, 1), c // heads
    qkv = g.op("Add", [g.op("MatMul", [x, g.const(rng.standard_normal((c, 3 * c)) * 0.2)]),
                       g.const(rng.standard_normal(3 * c) * 0.1)])
    t = g.op("Transpose", [g.op("Reshape", [qkv, g.op("Concat", [ints(g, 0), n, ints(g, 3), ints(g, heads), ints(g, hd)],
                                                      axis=0)])], perm=[2, 0, 3, 1, 4])
    q, k, v = (g.op("Squeeze", [g.op("Slice", [t], starts=[i], ends=[i + 1], axes=[0])], axes=[0]) for i in range(3))
    s = g.op("MatMul", [g.op("Mul", [q, g.const(hd ** -0.5)]), g.op("Transpose", [k], perm=[0, 1, 3, 2])])
    o = g.op("Transpose", [g.op("MatMul", [g.op("Softmax", [s], axis=3), v])], perm=[0, 2, 1, 3])
    o = g.op("Reshape", [o, g.op("Concat", [ints(g, 0), n, ints(g, c)], axis=0)])
    return g.op("Add", [g.op("MatMul", [o, g.const(rng.standard_normal((c, c)) * 0.2)]), g.const(rng.standard_normal(c) * 0.1)])


def ppocr_block(c=12):
    g = Graph()
    h = swish(g, "x")
    width = dim_of(g, h, 3)
    shape = g.op("Shape", [h])
    flat = g.op("Reshape", [h, g.op("Concat", [g.op("Slice", [shape], starts=[0], ends=[2], axes=[0]), ints(g, -1)],
                                    axis=0)])
    t = g.op("Transpose", [flat], perm=[0, 2, 1])
    z = g.op("Add", [t, attention(g, layer_norm(g, t, c))])
    mlp = swish(g, g.op("Add", [g.op("MatMul", [layer_norm(g, z, c), g.const(rng.standard_normal((c, c)) * 0.2)]),
                                g.const(rng.standard_normal(c) * 0.1)]))
    back = g.op("Reshape", [mlp, g.op("Concat", [ints(g, 0), ints(g, 1), width, ints(g, c)], axis=0)])
    y = swish(g, g.op("Transpose", [back], perm=[0, 3, 1, 2]))
    return model(g, [("x", ["batch", c, 1, "width"])], y, opset=9)


def main():
    a = cli(__doc__, (("corpus_cse_identity.onnx", cse_identity), ("corpus_gemm_load.onnx", gemm_load),
                      ("corpus_scale_reshape13.onnx", lambda: scale_reshape(13)),
                      ("corpus_scale_reshape14.onnx", lambda: scale_reshape(14)),
                      ("corpus_cse_order.onnx", cse_order),
                      ("corpus_ppocr_block.onnx", ppocr_block)),
            "corpus_cases.ort", "bench/gen_corpus_cases.py's models")
    if a.expect:
        expect_nodes(a.out, a.ort)
        print(os.path.join(a.out, "corpus_nodes.ort"))


if __name__ == "__main__":
    main()
