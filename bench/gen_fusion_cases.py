#!/usr/bin/python3
"""Generate small ONNX models that probe Conv+BN and Conv+activation fusion conditions, for the
side-by-side comparison with ONNX Runtime (bench/fusion_vs_ort.py). Not committed: written to
the directory given (default bench/out/fusion_cases).

  /usr/bin/python3 bench/gen_fusion_cases.py [OUTDIR]
"""
import os
import sys

import numpy as np
import onnx
import onnx.shape_inference
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def w(name, shape, dtype=np.float32, positive=False):
    a = rng.standard_normal(shape).astype(dtype) * 0.1
    if positive:
        a = np.abs(a) + 0.5
    return numpy_helper.from_array(a, name)


def out_info(name, dtype):
    """An output with an element type and no shape (ORT infers it)."""
    vi = onnx.ValueInfoProto()
    vi.name = name
    vi.type.tensor_type.elem_type = dtype
    return vi


def model(nodes, inits, inputs, outputs, opset=13):
    g = helper.make_graph(nodes, "case", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)
    return m


def conv_bn(act=None, eps=1e-5, dims=2, group=1, c=8, shared=False, conv_out_graph_output=False,
            bn_input_param=False, bias=False, dtype=TensorProto.FLOAT, clip_dynamic=False, act_attrs=None,
            opset=13, transpose=False):
    np_t = np.float16 if dtype == TensorProto.FLOAT16 else np.float32
    spatial = [8] * dims
    x = helper.make_tensor_value_info("x", dtype, [1, c] + spatial)
    k = [3] * dims
    inits = [w("W", [c, c // group] + k, np_t)]
    conv_in = ["x", "W"]
    if bias:
        inits.append(w("B", [c], np_t))
        conv_in.append("B")
    op = "ConvTranspose" if transpose else "Conv"
    nodes = [helper.make_node(op, conv_in, ["c"], name="conv", pads=[1] * (2 * dims), group=group)]
    inputs = [x]
    bn_names = ["s", "b", "mean", "var"]
    for i, n in enumerate(bn_names):
        if bn_input_param and n == "mean":
            inputs.append(helper.make_tensor_value_info(n, dtype, [c]))
        else:
            inits.append(w(n, [c], np_t, positive=(n in ("s", "var"))))
    nodes.append(helper.make_node("BatchNormalization", ["c"] + bn_names, ["y"], name="bn", epsilon=eps))
    out = "y"
    if act:
        ins = [out]
        if act == "Clip" and opset >= 11:
            if clip_dynamic:
                inputs.append(helper.make_tensor_value_info("lo", dtype, []))
            else:
                inits.append(numpy_helper.from_array(np.array(0, dtype=np_t), "lo"))
            inits.append(numpy_helper.from_array(np.array(6, dtype=np_t), "hi"))
            ins += ["lo", "hi"]
        nodes.append(helper.make_node(act, ins, ["z"], name="act", **(act_attrs or {})))
        out = "z"
    outputs = [out_info(out, dtype)]
    if shared:
        nodes.append(helper.make_node("Sigmoid", ["c"], ["side"], name="side"))
        outputs.append(out_info("side", dtype))
    if conv_out_graph_output:
        outputs.append(out_info("c", dtype))
    return model(nodes, inits, inputs, outputs, opset)


def bn_after_concat():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])
    inits = [w("W1", [4, 4, 3, 3]), w("W2", [4, 4, 3, 3])] + [w(n, [8], positive=n in ("s", "var"))
                                                                for n in ("s", "b", "mean", "var")]
    nodes = [helper.make_node("Conv", ["x", "W1"], ["c1"], name="c1", pads=[1] * 4),
             helper.make_node("Conv", ["x", "W2"], ["c2"], name="c2", pads=[1] * 4),
             helper.make_node("Concat", ["c1", "c2"], ["cat"], name="cat", axis=1),
             helper.make_node("BatchNormalization", ["cat", "s", "b", "mean", "var"], ["y"], name="bn"),
             helper.make_node("Relu", ["y"], ["z"], name="relu")]
    return model(nodes, inits, [x], [out_info("z", TensorProto.FLOAT)])


def conv_mul_add_relu():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])
    inits = [w("W", [8, 8, 3, 3]), w("k", [8, 1, 1]), w("a", [8, 1, 1])]
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1] * 4),
             helper.make_node("Mul", ["c", "k"], ["m"], name="mul"),
             helper.make_node("Add", ["m", "a"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["z"], name="relu")]
    return model(nodes, inits, [x], [out_info("z", TensorProto.FLOAT)])


def const_node_weights():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])
    nodes = [helper.make_node("Constant", [], ["W"], name="wconst", value=w("Wv", [8, 8, 3, 3])),
             helper.make_node("Constant", [], ["mean"], name="mconst", value=w("mv", [8]))]
    inits = [w(n, [8], positive=n in ("s", "var")) for n in ("s", "b", "var")]
    nodes += [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1] * 4),
              helper.make_node("BatchNormalization", ["c", "s", "b", "mean", "var"], ["y"], name="bn"),
              helper.make_node("LeakyRelu", ["y"], ["z"], name="act", alpha=0.2)]
    return model(nodes, inits, [x], [out_info("z", TensorProto.FLOAT)])


def two_convs_one_relu_each():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])
    inits = [w("W", [8, 8, 3, 3])]
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1] * 4),
             helper.make_node("Relu", ["c"], ["r1"], name="r1"),
             helper.make_node("Tanh", ["c"], ["r2"], name="r2")]
    return model(nodes, inits, [x], [out_info("r1", TensorProto.FLOAT),
                                      out_info("r2", TensorProto.FLOAT)])


def mobile_net(kind, blocks=4, c=16):
    """MobileNet/EfficientNet-style stacks: Conv+BN+act, depthwise Conv+BN+act, linear projection
    Conv+BN, residual Add. kind: relu6 (Clip 0..6), silu (x*Sigmoid(x)), hardswish."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 16, 16])
    nodes, inits, cur, n = [], [], "x", [0]

    def cbn(inp, cin, cout, k, group, act):
        n[0] += 1
        p = f"b{n[0]}"
        inits.append(w(p + "W", [cout, cin // group, k, k]))
        inits.extend(w(p + s, [cout], positive=s in ("s", "var")) for s in ("s", "b", "m", "v"))
        nodes.append(helper.make_node("Conv", [inp, p + "W"], [p + "c"], name=p + "conv", pads=[k // 2] * 4,
                                      group=group))
        nodes.append(helper.make_node("BatchNormalization", [p + "c", p + "s", p + "b", p + "m", p + "v"], [p + "y"],
                                      name=p + "bn"))
        if not act:
            return p + "y"
        if kind == "relu6":
            if "lo" not in [i.name for i in inits]:
                inits.append(numpy_helper.from_array(np.array(0, dtype=np.float32), "lo"))
                inits.append(numpy_helper.from_array(np.array(6, dtype=np.float32), "hi"))
            nodes.append(helper.make_node("Clip", [p + "y", "lo", "hi"], [p + "a"], name=p + "act"))
        elif kind == "silu":
            nodes.append(helper.make_node("Sigmoid", [p + "y"], [p + "sg"], name=p + "sig"))
            nodes.append(helper.make_node("Mul", [p + "y", p + "sg"], [p + "a"], name=p + "mul"))
        else:
            nodes.append(helper.make_node("HardSwish", [p + "y"], [p + "a"], name=p + "act"))
        return p + "a"

    for i in range(blocks):
        h = cbn(cur, c, 4 * c, 1, 1, True)
        h = cbn(h, 4 * c, 4 * c, 3, 4 * c, True)
        h = cbn(h, 4 * c, c, 1, 1, False)
        nodes.append(helper.make_node("Add", [cur, h], [f"r{i}"], name=f"res{i}"))
        cur = f"r{i}"
    return model(nodes, inits, [x], [out_info(cur, TensorProto.FLOAT)], opset=14)


def qdq_weight():
    """A QDQ-quantized weight (DequantizeLinear of an int8 initializer): ORT keeps Q/DQ for its
    QDQ kernels, so the weight is not a constant initializer and Conv+BN does not fold."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])
    inits = [numpy_helper.from_array(rng.integers(-8, 8, (8, 8, 3, 3)).astype(np.int8), "Wq"),
             numpy_helper.from_array(np.array(0.02, np.float32), "ws"), numpy_helper.from_array(np.array(0, np.int8), "wz")]
    inits += [w(n, [8], positive=n in ("s", "v")) for n in ("s", "b", "m", "v")]
    nodes = [helper.make_node("DequantizeLinear", ["Wq", "ws", "wz"], ["W"], name="dq"),
             helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1] * 4),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"], name="bn"),
             helper.make_node("Relu", ["y"], ["z"], name="relu")]
    return model(nodes, inits, [x], [out_info("z", TensorProto.FLOAT)])


def transformer_static():
    """models/transformer_block.onnx with static input shapes (1x16x64): ORT then turns its 3-D
    MatMul+Add projections into Gemms (with Reshapes around them)."""
    m = onnx.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "transformer_block.onnx"))
    for vi in list(m.graph.input) + list(m.graph.output):
        for d, v in zip(vi.type.tensor_type.shape.dim, [1, 16, 64]):
            d.ClearField("dim_param")
            d.dim_value = v
    return m


CASES = {
    "transformer_static": transformer_static,
    "qdq_weight": qdq_weight,
    "mobilenet_relu6": lambda: mobile_net("relu6"),
    "efficientnet_silu": lambda: mobile_net("silu"),
    "mobilenetv3_hardswish": lambda: mobile_net("hardswish"),
    "relu": lambda: conv_bn("Relu"),
    "sigmoid": lambda: conv_bn("Sigmoid"),
    "tanh": lambda: conv_bn("Tanh"),
    "leakyrelu": lambda: conv_bn("LeakyRelu", act_attrs={"alpha": 0.1}),
    "hardsigmoid": lambda: conv_bn("HardSigmoid"),
    "clip_const": lambda: conv_bn("Clip"),
    "clip_dynamic": lambda: conv_bn("Clip", clip_dynamic=True),
    "clip_opset10_attrs": lambda: conv_bn("Clip", opset=10, act_attrs={"min": 0.0, "max": 6.0}),
    "elu": lambda: conv_bn("Elu"),
    "selu": lambda: conv_bn("Selu"),
    "softplus": lambda: conv_bn("Softplus"),
    "hardswish": lambda: conv_bn("HardSwish", opset=14),
    "hardswish_c32": lambda: conv_bn("HardSwish", c=32, opset=14),
    "relu_c32": lambda: conv_bn("Relu", c=32),
    "eps_large": lambda: conv_bn("Relu", eps=1e-3),
    "shared_conv_out": lambda: conv_bn("Relu", shared=True),
    "conv_out_is_output": lambda: conv_bn("Relu", conv_out_graph_output=True),
    "bn_param_input": lambda: conv_bn("Relu", bn_input_param=True),
    "conv_bias": lambda: conv_bn("Relu", bias=True),
    "fp16": lambda: conv_bn("Relu", dtype=TensorProto.FLOAT16),
    "fp16_no_act": lambda: conv_bn(None, dtype=TensorProto.FLOAT16),
    "conv1d": lambda: conv_bn("Relu", dims=1),
    "conv3d": lambda: conv_bn("Relu", dims=3),
    "depthwise": lambda: conv_bn("Relu", group=8),
    "conv_transpose_bn": lambda: conv_bn("Relu", transpose=True),
    "conv_transpose_bn_bias": lambda: conv_bn("Relu", transpose=True, bias=True),
    "conv_transpose_bn_group2": lambda: conv_bn("Relu", transpose=True, group=2),
    "bn_after_concat": bn_after_concat,
    "conv_mul_add_relu": conv_mul_add_relu,
    "const_node_weights": const_node_weights,
    "two_consumers": two_convs_one_relu_each,
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "out", "fusion_cases")
    os.makedirs(out, exist_ok=True)
    for name, make in CASES.items():
        onnx.save(make(), os.path.join(out, f"{name}.onnx"))
    print(f"{len(CASES)} models in {out}")


if __name__ == "__main__":
    main()
