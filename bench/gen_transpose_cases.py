#!/usr/bin/python3
"""Small ONNX models of ONNX Runtime's transpose optimizer on the grid attention of torchvision's
MaxViT, for tests/test_fuse.c:

  transpose_grid.onnx  x [1, 16, 8, 8]: MaxViT's grid partition (Reshape to [1, 16, 2, 4, 2, 4],
                       Transpose, Reshape to [1, 4, 16, 16], the swap Transpose(0, 2, 1, 3)), a
                       residual MatMul, and the departition (the swap back, Reshape to
                       [1, 2, 2, 4, 4, 16], Transpose(0, 5, 1, 3, 2, 4), Reshape to [1, 16, 8, 8]).
                       ORT 1.30's HandleReshape splits: the swap back goes after the Reshape, which
                       now splits x's dims, and meets the departition's Transpose.
  transpose_last_stage.onnx  x [1, 1, 16, 16]: MaxViT's last stage, whose window is the whole map
                       (4 x 4): the window departition (Reshape to [1, 1, 1, 4, 4, 16], Transpose,
                       Reshape to [1, 16, 4, 4]) then the grid partition (Reshape to
                       [1, 16, 4, 1, 4, 1], Transpose, Reshape, the swap) and a MatMul. ORT's
                       ReshapeFusion joins the two Reshapes between the Transposes into one, which
                       then only moves dims of 1 (HandleReshape), and the Transposes compose.

  /usr/bin/python3 bench/gen_transpose_cases.py [--expect] [--ort DIR] [OUTDIR]   (default tests/data/fuse)

With --expect it also writes OUTDIR/transpose_cases.ort, ONNX Runtime's kernels of each model at
levels basic, extended and all (bench/gen_paddle_like.py's expect).
"""
import numpy as np

from gen_corpus_cases import model as corpus_model
from gen_ort_shape_cases import Graph
from gen_paddle_like import cli

rng = np.random.default_rng(36)


def model(g, inputs, *ys):
    return corpus_model(g, inputs, *ys, producer="gen_transpose_cases")


def shape(g, dims):
    return g.const(dims, np.int64)


def grid():
    """x [1, C, H, W], grid of G x G cells of P x P: partition, a residual MatMul, departition."""
    c, g_, p = 16, 2, 4
    g = Graph()
    r = g.op("Reshape", ["x", shape(g, [1, c, p, g_, p, g_])])
    t = g.op("Transpose", [r], perm=[0, 2, 4, 3, 5, 1])
    part = g.op("Transpose", [g.op("Reshape", [t, shape(g, [1, p * p, g_ * g_, c])])], perm=[0, 2, 1, 3])
    y = g.op("Add", [part, g.op("MatMul", [part, g.const(rng.standard_normal((c, c)) * 0.2)])])
    back = g.op("Reshape", [g.op("Transpose", [y], perm=[0, 2, 1, 3]), shape(g, [1, p, p, g_, g_, c])])
    t = g.op("Transpose", [back], perm=[0, 5, 1, 3, 2, 4])
    return model(g, [("x", [1, c, p * g_, p * g_])], g.op("Reshape", [t, shape(g, [1, c, p * g_, p * g_])]))


def last_stage():
    """x [1, 1, P * P, C] a window of the whole map: departition, grid partition, a MatMul."""
    c, p = 16, 4
    g = Graph()
    r = g.op("Reshape", ["x", shape(g, [1, 1, 1, p, p, c])])
    t = g.op("Transpose", [r], perm=[0, 5, 1, 3, 2, 4])
    back = g.op("Reshape", [t, shape(g, [1, c, p, p])])
    r = g.op("Reshape", [back, shape(g, [1, c, p, 1, p, 1])])
    t = g.op("Transpose", [r], perm=[0, 2, 4, 3, 5, 1])
    part = g.op("Transpose", [g.op("Reshape", [t, shape(g, [1, p * p, 1, c])])], perm=[0, 2, 1, 3])
    return model(g, [("x", [1, 1, p * p, c])], g.op("MatMul", [part, g.const(rng.standard_normal((c, c)) * 0.2)]))


def main():
    cli(__doc__, (("transpose_grid.onnx", grid), ("transpose_last_stage.onnx", last_stage)), "transpose_cases.ort",
        "bench/gen_transpose_cases.py's models")


if __name__ == "__main__":
    main()
