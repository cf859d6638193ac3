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


def main():
    a = cli(__doc__, (("corpus_cse_identity.onnx", cse_identity), ("corpus_gemm_load.onnx", gemm_load),
                      ("corpus_scale_reshape13.onnx", lambda: scale_reshape(13)),
                      ("corpus_scale_reshape14.onnx", lambda: scale_reshape(14)),
                      ("corpus_cse_order.onnx", cse_order)),
            "corpus_cases.ort", "bench/gen_corpus_cases.py's models")
    if a.expect:
        expect_nodes(a.out, a.ort)
        print(os.path.join(a.out, "corpus_nodes.ort"))


if __name__ == "__main__":
    main()
