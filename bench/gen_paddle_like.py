#!/usr/bin/python3
"""Small ONNX models written the way paddle2onnx writes PaddleOCR's networks (opset 11, every
constant a Constant node, names p2o.*), for tests/test_fuse.c and the comparison with ONNX Runtime:

  paddle_lcnet.onnx       PP-LCNetV3 blocks: Conv + BatchNorm + hard-swish as paddle2onnx writes
                          it, x * Clip(x + 3, 0, 6) / 6 (the Conv's output read twice); a depthwise
                          Conv and its learnable affine, Mul(k[1], conv) + Add(., b[1]) (the
                          constant first and of shape [1]); a Conv and a per-channel [C,1,1] Mul
                          (the constant second), then Relu.
  paddle_quick_gelu.onnx  the SVTR neck of PP-OCRv4's recognizer: Conv + BatchNorm + swish written
                          x * Sigmoid(1.702 x), x * Sigmoid(x), and x * Sigmoid(1 * x).

  /usr/bin/python3 bench/gen_paddle_like.py [--expect] [--ort DIR] [OUTDIR]   (default tests/data/fuse)

The committed copies in tests/data/fuse are what this writes (seeded). With --expect it also writes
OUTDIR/paddle_like.ort, the kernels (views aside) of the model ONNX Runtime optimizes at levels
basic, extended and all (bench/ort_optimize.mjs; DIR holds node_modules/onnxruntime-node, default
bench/), which tests/test_fuse.c holds fuseplan's ort-cpu-* targets to; level all on an AVX-512F
host, where ORT blocks NCHWc by 16 (the test uses devices/cpu-avx512.ini).
"""
import argparse
import collections
import subprocess
import tempfile
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(36)
count = {}


def name(op):
    k = count.get(op, 0)
    count[op] = k + 1
    return f"p2o.{op}.{k}"


def out_info(y):
    """An output with an element type and no shape (ONNX Runtime infers it)."""
    vi = onnx.ValueInfoProto()
    vi.name = y
    vi.type.tensor_type.elem_type = TensorProto.FLOAT
    return vi


class Graph:
    """Nodes in the order they are added; constants as Constant nodes, as paddle2onnx writes them."""

    def __init__(self):
        self.nodes = []

    def const(self, value):
        out = name("helper.constant")
        a = np.asarray(value, dtype=np.float32)
        self.nodes.append(helper.make_node("Constant", [], [out], name=out,
                                           value=numpy_helper.from_array(a, out)))
        return out

    def op(self, op, inputs, **attrs):
        n = name(op)
        self.nodes.append(helper.make_node(op, inputs, [n + ".out"], name=n, **attrs))
        return n + ".out"

    def conv_bn(self, x, cin, cout, k=3, stride=1, group=1):
        w = self.const(rng.standard_normal((cout, cin // group, k, k)) * 0.2)
        c = self.op("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=group,
                    dilations=[1, 1])
        scale, bias = self.const(rng.random(cout) + 0.5), self.const(rng.standard_normal(cout) * 0.1)
        mean, var = self.const(rng.standard_normal(cout) * 0.1), self.const(rng.random(cout) + 0.5)
        return self.op("BatchNormalization", [c, scale, bias, mean, var], epsilon=1e-5)

    def hard_swish(self, x):
        """paddle2onnx's HardSwishMapper below opset 14: x * Clip(x + 3, 0, 6) / 6."""
        a = self.op("Add", [x, self.const(3.0)])
        c = self.op("Clip", [a, self.const(0.0), self.const(6.0)])
        return self.op("Div", [self.op("Mul", [x, c]), self.const(6.0)])

    def swish(self, x, alpha):
        """x * Sigmoid(alpha * x) (alpha None: x * Sigmoid(x))."""
        s = self.op("Sigmoid", [x if alpha is None else self.op("Mul", [x, self.const(alpha)])])
        return self.op("Mul", [x, s])

    def model(self, x_shape, y, opset):
        g = helper.make_graph(self.nodes, "paddle_like",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [out_info(y)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="gen_paddle_like")
        m.ir_version = 7
        return m


def lcnet():
    g = Graph()
    h = g.hard_swish(g.conv_bn("x", 3, 16, stride=2))
    w = g.const(rng.standard_normal((16, 1, 3, 3)) * 0.2)
    d = g.op("Conv", [h, w], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16)
    a = g.op("Add", [g.op("Mul", [g.const([1.1]), d]), g.const([0.1])])
    w2 = g.const(rng.standard_normal((32, 16, 1, 1)) * 0.2)
    p = g.op("Conv", [a, w2], kernel_shape=[1, 1])
    s = g.op("Mul", [p, g.const(rng.random((32, 1, 1)) + 0.5)])
    return g.model([1, 3, 32, 32], g.op("Relu", [s]), 11)


def quick_gelu():
    g = Graph()
    h = g.swish(g.conv_bn("x", 16, 16, k=1), 1.702)
    h = g.swish(g.conv_bn(h, 16, 16, k=1), None)
    h = g.swish(g.conv_bn(h, 16, 16, k=1), 1.0)
    return g.model([1, 16, 8, 8], h, 9)


LEVELS = ("basic", "extended", "all")
VIEWS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}


def ort_saved(paths, ort_dir, level, tmp):
    """ORT's optimized models of paths at level, saved under tmp: {absolute model path: saved path}."""
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run(["node", os.path.join(here, "ort_optimize.mjs"), "--ort", os.path.abspath(ort_dir), "--out",
                        tmp, "--level", level] + [os.path.abspath(p) for p in paths],
                       capture_output=True, text=True, check=True)
    return dict(line.split("\t")[:2] for line in r.stdout.splitlines() if "\t" in line)


def expect(paths, ort_dir, out, what="bench/gen_paddle_like.py's models"):
    """Writes out: per model and level, ORT's kernels as `MODEL LEVEL OP=N ...` lines."""
    lines = [f"# ONNX Runtime's optimized models of {what} (CPU EP, onnxruntime-node),",
             "# their kernels (views aside): MODEL LEVEL OP=COUNT...; level all on an AVX-512F host (NCHWc block 16)"]
    with tempfile.TemporaryDirectory() as tmp:
        for level in LEVELS:
            saved = ort_saved(paths, ort_dir, level, tmp)
            for p in paths:
                ops = collections.Counter(n.op_type for n in onnx.load(saved[os.path.abspath(p)]).graph.node
                                          if n.op_type not in VIEWS)
                lines.append(" ".join([os.path.basename(p), level] + [f"{k}={v}" for k, v in sorted(ops.items())]))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def cli(doc, models, listing, what="bench/gen_paddle_like.py's models"):
    """The command line of a generator of models: writes each (file name, maker) of models to OUTDIR
    (default tests/data/fuse), and with --expect ORT's op lists of them to OUTDIR/listing. Returns
    the parsed arguments."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--expect", action="store_true", help=f"also write ORT's op lists ({listing})")
    ap.add_argument("--ort", default=os.path.join(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("out", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data", "fuse"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    paths = []
    for fname, make in models:
        paths.append(os.path.join(a.out, fname))
        onnx.save(make(), paths[-1])
        print(paths[-1])
    if a.expect:
        expect(paths, a.ort, os.path.join(a.out, listing), what)
        print(os.path.join(a.out, listing))
    return a


def main():
    cli(__doc__, (("paddle_lcnet.onnx", lcnet), ("paddle_quick_gelu.onnx", quick_gelu)), "paddle_like.ort")


if __name__ == "__main__":
    main()
