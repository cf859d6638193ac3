#!/usr/bin/python3
"""Small ONNX models on which fuseplan's NCHWc layout (passes/nchwc.c) once disagreed with ONNX
Runtime 1.30 at level all on an AVX-512F host (NCHWc block 16), for tests/test_fuse.c:

  nchwc_resize.onnx    x [1, 16, 8, 8] -> Conv (16 channels, blocked) read by six Resizes, each a
                       graph output (opset 17): linear half_pixel to sizes computed as torch
                       exports them (Concat of Shape's N, C and constant H, W), linear align_corners
                       by scales 2, nearest asymmetric floor by scales 2 - these three run as the
                       blocked Upsample (NchwcTransformerImpl::TransformResize) - and nearest with
                       the default round_prefer_floor, linear pytorch_half_pixel, and linear by
                       scales 1.5, which stay Resize; a Resize of the NCHW input x stays too
                       (torchvision's segmentation models: DeepLabV3, FCN, LRASPP).
  nchwc_resize10.onnx  the same Conv then Resize-10 (opset 10: scales its second input) nearest by 2:
                       blocked Upsample.
  nchwc_half_pool.onnx       float16 x [1, 32, 6, 6] and weights w (a graph input) -> Conv ->
  nchwc_half_pool_init.onnx  MaxPool 2x2 -> Relu; in the second w is a float16 initializer. ORT runs
                       its level-3 NchwcTransformer before InsertCastTransformer puts the float16
                       ops in float32 between Casts, so the pool it sees is float16 and stays NCHW;
                       only when its level 4 folds an initializer's Cast does it run levels 1-3
                       again, on float32 ops, and the Conv and the pool run blocked.

  /usr/bin/python3 bench/gen_nchwc_cases.py [--expect] [--ort DIR] [OUTDIR]   (default tests/data/fuse)

With --expect it also writes OUTDIR/nchwc_cases.ort, ONNX Runtime's kernels of each model at levels
basic, extended and all (bench/gen_paddle_like.py's expect; level all needs an AVX-512F host).
"""
import numpy as np
from onnx import TensorProto, helper

from gen_ort_shape_cases import Graph
from gen_paddle_like import cli

rng = np.random.default_rng(36)


def model(g, x, ys, opset):
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)]
    outs = [helper.make_tensor_value_info(y, TensorProto.FLOAT, None) for y in ys]
    m = helper.make_model(helper.make_graph(g.nodes, "nchwc_case", ins, outs, g.inits),
                          opset_imports=[helper.make_opsetid("", opset)], producer_name="gen_nchwc_cases")
    m.ir_version = 7
    return m


def conv16(g, x):
    w, b = g.const(rng.standard_normal((16, 16, 3, 3)) * 0.1), g.const(rng.standard_normal(16) * 0.1)
    return g.op("Conv", [x, w, b], pads=[1, 1, 1, 1])


def resize():
    g = Graph()
    c = conv16(g, "x")
    nc = g.op("Slice", [g.op("Shape", [c]), g.const([0], np.int64), g.const([2], np.int64)])
    sizes = g.op("Concat", [nc, g.const([16, 16], np.int64)], axis=0)
    two, frac = g.const([1, 1, 2, 2]), g.const([1, 1, 1.5, 1.5])
    ys = [g.op("Resize", [c, "", "", sizes], mode="linear", coordinate_transformation_mode="half_pixel"),
          g.op("Resize", [c, "", two], mode="linear", coordinate_transformation_mode="align_corners"),
          g.op("Resize", [c, "", two], mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor"),
          g.op("Resize", [c, "", two], mode="nearest", coordinate_transformation_mode="asymmetric"),
          g.op("Resize", [c, "", two], mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
          g.op("Resize", [c, "", frac], mode="linear", coordinate_transformation_mode="half_pixel"),
          g.op("Resize", ["x", "", two], mode="linear", coordinate_transformation_mode="half_pixel")]
    return model(g, [1, 16, 8, 8], ys, 17)


def resize10():
    g = Graph()
    y = g.op("Resize", [conv16(g, "x"), g.const([1, 1, 2, 2])], mode="nearest")
    return model(g, [1, 16, 8, 8], [y], 10)


def half_pool(init):
    g = Graph()
    w = g.const(rng.standard_normal((32, 32, 3, 3)) * 0.1, np.float16) if init else "w"
    c = g.op("Conv", ["x", w], pads=[1, 1, 1, 1])
    y = g.op("Relu", [g.op("MaxPool", [c], kernel_shape=[2, 2], strides=[2, 2])])
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 32, 6, 6])]
    if not init:
        ins.append(helper.make_tensor_value_info("w", TensorProto.FLOAT16, [32, 32, 3, 3]))
    outs = [helper.make_tensor_value_info(y, TensorProto.FLOAT16, None)]
    m = helper.make_model(helper.make_graph(g.nodes, "nchwc_case", ins, outs, g.inits),
                          opset_imports=[helper.make_opsetid("", 17)], producer_name="gen_nchwc_cases")
    m.ir_version = 8
    return m


def main():
    cli(__doc__, (("nchwc_resize.onnx", resize), ("nchwc_resize10.onnx", resize10),
                  ("nchwc_half_pool.onnx", lambda: half_pool(False)),
                  ("nchwc_half_pool_init.onnx", lambda: half_pool(True))),
        "nchwc_cases.ort", "bench/gen_nchwc_cases.py's models")


if __name__ == "__main__":
    main()
