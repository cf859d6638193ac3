#!/usr/bin/python3
"""Build the models bench/ort_fit.sh measures besides the samples and libonnx-testdata:
common architectures with random weights (only shapes matter to the timings), batch 1, fp32,
opset 13, with the decomposed LayerNorm / erf-Gelu a PyTorch export writes (so ONNX Runtime's
fusions have something to do).

  /usr/bin/python3 bench/fit_models.py OUTDIR

Writes OUTDIR/<name>.onnx for: resnet18, mobilenet_v2, vgg11_112, squeezenet, unet_small,
conv1d_audio, mlp, bert_mini (4 layers, d=256, seq 128), gpt_tiny (2 layers, d=384, seq 64).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class B:
    def __init__(self, name, seed=0):
        self.name, self.nodes, self.inits, self.rng, self.n = name, [], [], np.random.default_rng(seed), {}

    def uid(self, p):
        self.n[p] = self.n.get(p, 0) + 1
        return f"{p}{self.n[p]}"

    def w(self, name, shape, scale=0.05, positive=False):
        a = self.rng.standard_normal(shape).astype(np.float32) * scale
        if positive:
            a = np.abs(a) + 0.5
        self.inits.append(numpy_helper.from_array(a, name))
        return name

    def c(self, name, value, dtype=np.float32):
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def op(self, op, inputs, name=None, **attrs):
        name = name or self.uid(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [name + "_out"], name=name, **attrs))
        return name + "_out"

    def conv(self, x, cin, cout, k, s=1, g=1, p=None, bn=True, act="Relu", dims=2):
        p = p or self.uid("conv")
        ks = [k] * dims
        y = self.op("Conv", [x, self.w(p + ".w", (cout, cin // g, *ks))] + ([] if bn else [self.w(p + ".b", (cout,))]),
                    p + ".conv", kernel_shape=ks, strides=[s] * dims, pads=[k // 2] * (2 * dims), group=g)
        if bn:
            y = self.op("BatchNormalization", [y] + [self.w(f"{p}.bn.{n}", (cout,), positive=n in ("s", "v"))
                                                     for n in ("s", "b", "m", "v")], p + ".bn")
        if act == "Relu":
            y = self.op("Relu", [y], p + ".relu")
        elif act == "Relu6":
            y = self.op("Clip", [y, self.c(p + ".lo", 0.0), self.c(p + ".hi", 6.0)], p + ".relu6")
        return y

    def save(self, out, inputs, outputs):
        g = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = helper.make_model(g, producer_name="fuseplan-bench", opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        path = os.path.join(out, self.name + ".onnx")
        onnx.save(m, path)
        print(f"{path}: {len(self.nodes)} nodes")


def fv(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def head(b, x, cin, classes=1000):
    x = b.op("GlobalAveragePool", [x], "head.pool")
    x = b.op("Flatten", [x], "head.flatten", axis=1)
    return b.op("Gemm", [x, b.w("fc.w", (classes, cin)), b.w("fc.b", (classes,))], "head.fc", transB=1)


def resnet18(out):
    b = B("resnet18", 1)
    x = b.conv("input", 3, 64, 7, 2, p="stem")
    x = b.op("MaxPool", [x], "stem.pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for li, (c, s0) in enumerate([(64, 1), (128, 2), (256, 2), (512, 2)]):
        for bi in range(2):
            s, p = (s0 if bi == 0 else 1), f"l{li + 1}.{bi}"
            y = b.conv(x, cin, c, 3, s, p=p + ".c1")
            y = b.conv(y, c, c, 3, 1, p=p + ".c2", act=None)
            sc = b.conv(x, cin, c, 1, s, p=p + ".down", act=None) if (s != 1 or cin != c) else x
            x = b.op("Relu", [b.op("Add", [y, sc], p + ".add")], p + ".relu")
            cin = c
    b.save(out, [fv("input", [1, 3, 224, 224])], [fv(head(b, x, cin), [1, 1000])])


def mobilenet_v2(out):
    b = B("mobilenet_v2", 2)
    x = b.conv("input", 3, 32, 3, 2, p="stem", act="Relu6")
    cin = 32
    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    for si, (t, c, n, s0) in enumerate(cfg):
        for i in range(n):
            s, p, hid = (s0 if i == 0 else 1), f"b{si}.{i}", cin * t
            y = b.conv(x, cin, hid, 1, p=p + ".expand", act="Relu6") if t != 1 else x
            y = b.conv(y, hid, hid, 3, s, g=hid, p=p + ".dw", act="Relu6")
            y = b.conv(y, hid, c, 1, p=p + ".project", act=None)
            x = b.op("Add", [y, x], p + ".add") if s == 1 and cin == c else y
            cin = c
    x = b.conv(x, cin, 1280, 1, p="last", act="Relu6")
    b.save(out, [fv("input", [1, 3, 224, 224])], [fv(head(b, x, 1280), [1, 1000])])


def vgg11_112(out):
    b = B("vgg11_112", 3)
    x, cin = "input", 3
    for i, c in enumerate([64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]):
        if c == "M":
            x = b.op("MaxPool", [x], f"pool{i}", kernel_shape=[2, 2], strides=[2, 2])
        else:
            x, cin = b.conv(x, cin, c, 3, p=f"c{i}", bn=False), c
    x = b.op("Flatten", [x], "flatten", axis=1)
    x = b.op("Relu", [b.op("Gemm", [x, b.w("fc1.w", (1024, 512 * 9)), b.w("fc1.b", (1024,))], "fc1", transB=1)], "fc1.relu")
    y = b.op("Gemm", [x, b.w("fc2.w", (1000, 1024)), b.w("fc2.b", (1000,))], "fc2", transB=1)
    b.save(out, [fv("input", [1, 3, 112, 112])], [fv(y, [1, 1000])])


def squeezenet(out):
    b = B("squeezenet", 4)
    x = b.conv("input", 3, 96, 7, 2, p="stem", bn=False)
    x = b.op("MaxPool", [x], "pool1", kernel_shape=[3, 3], strides=[2, 2])
    cin = 96
    for i, (sq, ex) in enumerate([(16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192), (64, 256), (64, 256)]):
        s = b.conv(x, cin, sq, 1, p=f"fire{i}.squeeze", bn=False)
        e1 = b.conv(s, sq, ex, 1, p=f"fire{i}.e1", bn=False)
        e3 = b.conv(s, sq, ex, 3, p=f"fire{i}.e3", bn=False)
        x, cin = b.op("Concat", [e1, e3], f"fire{i}.cat", axis=1), 2 * ex
        if i in (2, 6):
            x = b.op("MaxPool", [x], f"pool{i}", kernel_shape=[3, 3], strides=[2, 2])
    x = b.conv(x, cin, 1000, 1, p="classifier", bn=False)
    y = b.op("Flatten", [b.op("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    b.save(out, [fv("input", [1, 3, 224, 224])], [fv(y, [1, 1000])])


def unet_small(out):
    b = B("unet_small", 5)
    x, cin, skips = "input", 3, []
    for i, c in enumerate([32, 64, 128]):
        x = b.conv(b.conv(x, cin, c, 3, p=f"enc{i}.a"), c, c, 3, p=f"enc{i}.b")
        skips.append((x, c))
        x, cin = b.op("MaxPool", [x], f"enc{i}.pool", kernel_shape=[2, 2], strides=[2, 2]), c
    x = b.conv(x, cin, 256, 3, p="mid")
    cin = 256
    for i, (s, c) in enumerate(reversed(skips)):
        up = b.op("ConvTranspose", [x, b.w(f"dec{i}.up.w", (cin, c, 2, 2))], f"dec{i}.up", kernel_shape=[2, 2],
                  strides=[2, 2])
        x = b.op("Concat", [up, s], f"dec{i}.cat", axis=1)
        x, cin = b.conv(b.conv(x, 2 * c, c, 3, p=f"dec{i}.a"), c, c, 3, p=f"dec{i}.b"), c
    y = b.op("Sigmoid", [b.conv(x, cin, 1, 1, p="out", bn=False, act=None)], "out.sigmoid")
    b.save(out, [fv("input", [1, 3, 128, 128])], [fv(y, [1, 1, 128, 128])])


def conv1d_audio(out):
    b = B("conv1d_audio", 6)
    x, cin = "input", 1
    for i, (c, k, s) in enumerate([(32, 9, 4), (64, 9, 4), (128, 9, 4), (128, 3, 1), (256, 3, 2)]):
        x, cin = b.conv(x, cin, c, k, s, p=f"c{i}", dims=1), c
    x = b.op("GlobalAveragePool", [x], "gap")
    x = b.op("Flatten", [x], "flatten", axis=1)
    y = b.op("Gemm", [x, b.w("fc.w", (35, cin)), b.w("fc.b", (35,))], "fc", transB=1)
    b.save(out, [fv("input", [1, 1, 16000])], [fv(y, [1, 35])])


def mlp(out):
    b = B("mlp", 7)
    x, cin = "input", 784
    for i, c in enumerate([1024, 1024, 512]):
        x = b.op("Relu", [b.op("Gemm", [x, b.w(f"fc{i}.w", (c, cin)), b.w(f"fc{i}.b", (c,))], f"fc{i}", transB=1)],
                 f"fc{i}.relu")
        cin = c
    y = b.op("Softmax", [b.op("Gemm", [x, b.w("out.w", (10, cin)), b.w("out.b", (10,))], "out", transB=1)], "softmax",
             axis=1)
    b.save(out, [fv("input", [32, 784])], [fv(y, [32, 10])])


def layer_norm(b, x, d, p):
    mean = b.op("ReduceMean", [x], p + ".mean", axes=[-1])
    sub = b.op("Sub", [x, mean], p + ".sub")
    var = b.op("ReduceMean", [b.op("Pow", [sub, b.c(p + ".two", 2.0)], p + ".pow")], p + ".var", axes=[-1])
    std = b.op("Sqrt", [b.op("Add", [var, b.c(p + ".eps", 1e-12)], p + ".addeps")], p + ".sqrt")
    y = b.op("Mul", [b.op("Div", [sub, std], p + ".div"), b.w(p + ".gamma", (d,), positive=True)], p + ".mul")
    return b.op("Add", [y, b.w(p + ".beta", (d,))], p + ".add")


def linear(b, x, din, dout, p):
    return b.op("Add", [b.op("MatMul", [x, b.w(p + ".w", (din, dout))], p + ".matmul"), b.w(p + ".b", (dout,))], p + ".add")


def encoder(b, x, d, heads, ff, p):
    hd = d // heads
    split = b.c(p + ".split", [0, 0, heads, hd], np.int64)

    def heads_of(t, n, perm):
        return b.op("Transpose", [b.op("Reshape", [t, split], f"{p}.{n}.reshape")], f"{p}.{n}.transpose", perm=perm)

    q, k, v = (linear(b, x, d, d, f"{p}.{n}") for n in "qkv")
    s = b.op("MatMul", [heads_of(q, "q", [0, 2, 1, 3]), heads_of(k, "k", [0, 2, 3, 1])], p + ".scores")
    s = b.op("Softmax", [b.op("Div", [s, b.c(p + ".scale", hd ** 0.5)], p + ".scale_div")], p + ".softmax", axis=-1)
    ctx = b.op("MatMul", [s, heads_of(v, "v", [0, 2, 1, 3])], p + ".context")
    ctx = b.op("Reshape", [b.op("Transpose", [ctx], p + ".merge.transpose", perm=[0, 2, 1, 3]),
                           b.c(p + ".merge", [0, 0, d], np.int64)], p + ".merge.reshape")
    x1 = layer_norm(b, b.op("Add", [linear(b, ctx, d, d, p + ".out"), x], p + ".res1"), d, p + ".ln1")
    h = linear(b, x1, d, ff, p + ".fc1")
    e = b.op("Erf", [b.op("Div", [h, b.c(p + ".sqrt2", 2 ** 0.5)], p + ".gelu.div")], p + ".gelu.erf")
    g = b.op("Mul", [b.op("Mul", [h, b.op("Add", [e, b.c(p + ".one", 1.0)], p + ".gelu.add")], p + ".gelu.mul"),
                     b.c(p + ".half", 0.5)], p + ".gelu.mul_half")
    return layer_norm(b, b.op("Add", [linear(b, g, ff, d, p + ".fc2"), x1], p + ".res2"), d, p + ".ln2")


def transformer(out, name, layers, d, heads, seq, seed):
    b = B(name, seed)
    x = "input"
    for i in range(layers):
        x = encoder(b, x, d, heads, 4 * d, f"l{i}")
    b.save(out, [fv("input", [1, seq, d])], [fv(x, [1, seq, d])])


def vit_tiny(out):
    """A ViT as torchvision writes one, small: 16x16 patches of a 64x64 image by a strided Conv, the
    tokens with a class token and position embeddings, 2 encoder layers, LayerNorm on the class token,
    a Gemm head."""
    b = B("vit_tiny", 10)
    d, tokens = 192, 16
    x = b.op("Conv", ["input", b.w("patch.w", (d, 3, 16, 16)), b.w("patch.b", (d,))], "patch", kernel_shape=[16, 16],
             strides=[16, 16])
    x = b.op("Reshape", [x, b.c("flat", [1, d, tokens], np.int64)], "patch.flatten")
    x = b.op("Transpose", [x], "patch.tokens", perm=[0, 2, 1])
    x = b.op("Concat", [b.w("cls", (1, 1, d)), x], "cls.concat", axis=1)
    x = b.op("Add", [x, b.w("pos", (1, tokens + 1, d))], "pos.add")
    for i in range(2):
        x = encoder(b, x, d, 3, 4 * d, f"l{i}")
    x = layer_norm(b, x, d, "ln")
    x = b.op("Gather", [x, b.c("first", 0, np.int64)], "cls.take", axis=1)
    y = b.op("Gemm", [x, b.w("head.w", (10, d)), b.w("head.b", (10,))], "head", transB=1)
    b.save(out, [fv("input", [1, 3, 64, 64])], [fv(y, [1, 10])])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench/out/fit/models"
    os.makedirs(out, exist_ok=True)
    resnet18(out)
    mobilenet_v2(out)
    vgg11_112(out)
    squeezenet(out)
    unet_small(out)
    conv1d_audio(out)
    mlp(out)
    transformer(out, "bert_mini", 4, 256, 4, 128, 8)
    transformer(out, "gpt_tiny", 2, 384, 6, 64, 9)
    vit_tiny(out)


if __name__ == "__main__":
    main()
