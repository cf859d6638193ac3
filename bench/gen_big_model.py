#!/usr/bin/python3
"""Generate a ResNet-50-class ONNX model with random weights (not committed: ~100 MB).

  /usr/bin/python3 bench/gen_big_model.py OUT.onnx [--width W] [--external]

--width multiplies every channel count (1 = torchvision ResNet-50, 25.6 M parameters, ~102 MB;
3.2 gives ~1 GB). --external writes the weights to OUT.onnx.data (ONNX external data) instead of
raw_data inside the model. Weights are random normal (seeded): only sizes matter to fuseplan.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(width):
    rng = np.random.default_rng(0)
    nodes, inits = [], []

    def w(name, shape):
        inits.append(numpy_helper.from_array(rng.standard_normal(shape, dtype=np.float32) * 0.01, name))
        return name

    def conv_bn(x, cin, cout, k, stride, name, relu=True):
        y = name + ".conv"
        nodes.append(helper.make_node("Conv", [x, w(name + ".w", (cout, cin, k, k))], [y], name=y,
                                      kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4))
        bn = [w(f"{name}.bn.{s}", (cout,)) for s in ("scale", "bias", "mean")]
        inits.append(numpy_helper.from_array(np.ones(cout, dtype=np.float32), name + ".bn.var"))
        z = name + ".bn"
        nodes.append(helper.make_node("BatchNormalization", [y] + bn + [name + ".bn.var"], [z], name=z))
        if not relu:
            return z
        r = name + ".relu"
        nodes.append(helper.make_node("Relu", [z], [r], name=r))
        return r

    c = lambda n: max(1, int(round(n * width)))
    x = conv_bn("input", 3, c(64), 7, 2, "stem")
    nodes.append(helper.make_node("MaxPool", [x], ["stem.pool"], name="stem.pool", kernel_shape=[3, 3],
                                  strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = "stem.pool", c(64)
    for li, (planes, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]):
        for bi in range(blocks):
            s = stride if bi == 0 else 1
            p = f"layer{li + 1}.{bi}"
            y = conv_bn(x, cin, c(planes), 1, 1, p + ".c1")
            y = conv_bn(y, c(planes), c(planes), 3, s, p + ".c2")
            y = conv_bn(y, c(planes), c(planes * 4), 1, 1, p + ".c3", relu=False)
            sc = conv_bn(x, cin, c(planes * 4), 1, s, p + ".down", relu=False) if bi == 0 else x
            nodes.append(helper.make_node("Add", [y, sc], [p + ".add"], name=p + ".add"))
            nodes.append(helper.make_node("Relu", [p + ".add"], [p + ".out"], name=p + ".out"))
            x, cin = p + ".out", c(planes * 4)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"], name="pool"))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], name="flat", axis=1))
    nodes.append(helper.make_node("Gemm", ["flat", w("fc.w", (1000, cin)), w("fc.b", (1000,))], ["logits"],
                                  name="fc", transB=1))
    g = helper.make_graph(nodes, "resnet50", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                                            ["batch", 3, 224, 224])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1000])], inits)
    m = helper.make_model(g, producer_name="fuseplan-bench", opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--width", type=float, default=1.0)
    ap.add_argument("--external", action="store_true")
    a = ap.parse_args()
    m = build(a.width)
    if a.external:
        onnx.save_model(m, a.out, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=os.path.basename(a.out) + ".data", size_threshold=1024)
    else:
        onnx.save(m, a.out)
    print(f"{a.out}: {os.path.getsize(a.out)} bytes")


if __name__ == "__main__":
    main()
