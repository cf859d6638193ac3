#!/usr/bin/python3
"""Small ONNX models whose fusions hinge on the shapes ONNX Runtime knows when it optimizes (symbolic
dims, no shape data propagated through Shape -> Gather -> Concat but constants), for tests/test_fuse.c:

  ort_shape_skip.onnx     x [batch, 8, 16]; two residual Adds, each before a LayerNormalization (two
                          outputs): x + Reshape(Transpose(x) [batch, 16, 8], Concat(its dims 0, 2
                          and 1)), whose shape ORT cannot know (two runtime elements:
                          ReshapeFusion leaves it), so SkipLayerNormFusion refuses it; and
                          x + x @ W, fused.
  ort_shape_reshape.onnx  a Reshape of x @ W [batch, 8, 32] to Concat(dim 0 of Shape(x), 16, dim 1
                          of Shape(x) * 2): ReshapeFusion makes it the constant [0, 16, -1], dim 0
                          copied from x, another tensor with the same symbolic dim 0 there.

  /usr/bin/python3 bench/gen_ort_shape_cases.py [--expect] [--ort DIR] [OUTDIR]   (default tests/data/fuse)

With --expect it also writes OUTDIR/ort_shapes.ort, ONNX Runtime's kernels of each model at levels
basic, extended and all (bench/gen_paddle_like.py's expect).
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from gen_paddle_like import cli

rng = np.random.default_rng(36)


class Graph:
    """Nodes in the order they are added, constants as initializers."""

    def __init__(self):
        self.nodes, self.inits = [], []

    def const(self, value, dtype=np.float32):
        n = f"c{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), n))
        return n

    def op(self, op, inputs, **attrs):
        n = f"{op.lower()}{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [n], name=n, **attrs))
        return n

    def dim(self, x, i):
        """Unsqueeze(Gather(Shape(x), i), [0]): dim i of x as a 1-element tensor."""
        g = self.op("Gather", [self.op("Shape", [x]), self.const(i, np.int64)], axis=0)
        return self.op("Unsqueeze", [g, self.const([0], np.int64)])

    def layer_norm(self, x, width):
        return self.op("LayerNormalization", [x, self.const(rng.random(width) + 0.5),
                                              self.const(rng.standard_normal(width) * 0.1)], axis=-1)

    def model(self, *ys):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 16])
        outs = []
        for y in ys:
            outs.append(onnx.ValueInfoProto())
            outs[-1].name = y
            outs[-1].type.tensor_type.elem_type = TensorProto.FLOAT
        g = helper.make_graph(self.nodes, "ort_shape", [x], outs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="gen_ort_shape_cases")
        m.ir_version = 8
        return m


def skip():
    g = Graph()
    t = g.op("Transpose", ["x"], perm=[0, 2, 1])
    r = g.op("Reshape", [t, g.op("Concat", [g.dim(t, 0), g.dim(t, 2), g.dim(t, 1)], axis=0)])
    m = g.op("MatMul", ["x", g.const(rng.standard_normal((16, 16)) * 0.2)])
    return g.model(g.layer_norm(g.op("Add", ["x", r]), 16), g.layer_norm(g.op("Add", ["x", m]), 16))


def reshape():
    g = Graph()
    m = g.op("MatMul", ["x", g.const(rng.standard_normal((16, 32)) * 0.2)])
    other = g.op("Unsqueeze", [g.op("Mul", [g.op("Gather", [g.op("Shape", ["x"]), g.const(1, np.int64)], axis=0),
                                             g.const(2, np.int64)]), g.const([0], np.int64)])
    shape = g.op("Concat", [g.dim("x", 0), g.const([16], np.int64), other], axis=0)
    return g.model(g.op("Relu", [g.op("Reshape", [m, shape])]))


def main():
    cli(__doc__, (("ort_shape_skip.onnx", skip), ("ort_shape_reshape.onnx", reshape)), "ort_shapes.ort",
        "bench/gen_ort_shape_cases.py's models")


if __name__ == "__main__":
    main()
