#!/usr/bin/python3
"""memory_table.py - helpers of bench/memory_table.sh (Debian's python3 and python3-onnx).

  memory_table.py bfs IN.onnx OUT.onnx   rewrite IN with its nodes in breadth-first (level) order,
                                         a valid topological order that interleaves branches
  memory_table.py gen DIR                write larger networks with the layer structure of
                                         well-known ones (zero weights; widths reduced where the
                                         name says so): DenseNet-121 at half width, an
                                         Inception-style net (file order and breadth-first),
                                         U-Net, MobileNetV2, a 12-layer GPT-style decoder
  memory_table.py table LIST             print the table from LIST: lines "NAME JSON-FILE" or
                                         "NAME FAILED message" (fuseplan memory --format json)
"""
import json
import os
import sys


def level_order(nodes):
    """Nodes (topologically sorted, as ONNX stores them) sorted by depth, then file order."""
    produced = {o: i for i, n in enumerate(nodes) for o in n.output}
    level = {}
    for i, n in enumerate(nodes):
        level[i] = 1 + max([level[produced[x]] for x in n.input if x in produced] or [-1])
    return [nodes[i] for i in sorted(range(len(nodes)), key=lambda i: (level[i], i))]


def bfs(src, dst):
    import onnx
    m = onnx.load(src)
    nodes = level_order(list(m.graph.node))
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    onnx.save(m, dst)


# ---------------------------------------------------------------- generated networks

class Net:
    """A graph under construction: nodes, zero initializers, unique names."""

    def __init__(self, name):
        import numpy
        from onnx import helper, numpy_helper
        self.np, self.helper, self.numpy_helper = numpy, helper, numpy_helper
        self.name, self.nodes, self.inits, self.count = name, [], [], 0

    def uid(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def weight(self, shape):
        name = self.uid("w")
        self.inits.append(self.numpy_helper.from_array(self.np.zeros(shape, self.np.float32), name))
        return name

    def ints(self, values):
        name = self.uid("c")
        self.inits.append(self.numpy_helper.from_array(self.np.array(values, self.np.int64), name))
        return name

    def op(self, op_type, inputs, **attrs):
        out = self.uid(op_type.lower() + "_")
        self.nodes.append(self.helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def conv_bn(self, x, cin, cout, k=3, stride=1, relu=True, group=1):
        y = self.op("Conv", [x, self.weight((cout, cin // group, k, k))], kernel_shape=[k, k],
                    strides=[stride, stride], pads=[k // 2] * 4, group=group)
        y = self.op("BatchNormalization", [y] + [self.weight((cout,)) for _ in range(4)])
        return self.op("Relu", [y]) if relu else y

    def head(self, x, c):
        x = self.op("Flatten", [self.op("GlobalAveragePool", [x])])
        return self.op("Gemm", [x, self.weight((10, c)), self.weight((10,))], transB=1)

    def save(self, path, inputs, outputs, breadth_first=False):
        from onnx import TensorProto
        import onnx
        h = self.helper
        vi = [h.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs + outputs]
        nodes = level_order(self.nodes) if breadth_first else self.nodes
        g = h.make_graph(nodes, self.name, vi[:len(inputs)], vi[len(inputs):], self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save(m, path)


def densenet(path, blocks=(6, 12, 24, 16), growth=16, stem=32):
    """DenseNet-121 (Huang et al. 2017) at half width: growth 16 instead of 32."""
    n = Net("densenet121_half")
    x = n.conv_bn("input", 3, stem, k=7, stride=2)
    x = n.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = stem
    for bi, layers in enumerate(blocks):
        feats = [x]
        for i in range(layers):
            inp = feats[0] if len(feats) == 1 else n.op("Concat", feats, axis=1)
            y = n.conv_bn(inp, c + growth * i, 4 * growth, k=1)
            feats.append(n.conv_bn(y, 4 * growth, growth))
        x = n.op("Concat", feats, axis=1)
        c += growth * layers
        if bi + 1 < len(blocks):
            x = n.conv_bn(x, c, c // 2, k=1)
            c //= 2
            x = n.op("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])
    y = n.head(x, c)
    n.save(path, [("input", ["N", 3, 224, 224])], [(y, ["N", 10])])


def inception(path, breadth_first, modules=6):
    """Inception-style modules of four branches (1x1; 1x1-3x3; 1x1-3x3-3x3; pool-1x1)."""
    n = Net("inception")
    x = n.conv_bn("input", 3, 64, stride=2)
    c = 64
    for m in range(modules):
        b1 = n.conv_bn(x, c, 32, k=1)
        b2 = n.conv_bn(n.conv_bn(x, c, 96, k=1), 96, 48)
        b3 = n.conv_bn(n.conv_bn(n.conv_bn(x, c, 96, k=1), 96, 96), 96, 32)
        b4 = n.conv_bn(n.op("MaxPool", [x], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), c, 16, k=1)
        x = n.op("Concat", [b1, b2, b3, b4], axis=1)
        c = 128
        if m % 2:
            x = n.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = n.head(x, c)
    n.save(path, [("input", ["N", 3, 128, 128])], [(y, ["N", 10])], breadth_first)


def unet(path, depth=4, base=16):
    """U-Net (Ronneberger et al. 2015) with base width 16 instead of 64: long skip connections."""
    n = Net("unet")
    x = n.conv_bn(n.conv_bn("input", 3, base), base, base)
    c, skips = base, []
    for _ in range(depth):
        skips.append(x)
        x = n.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
        x = n.conv_bn(n.conv_bn(x, c, 2 * c), 2 * c, 2 * c)
        c *= 2
    for d in reversed(range(depth)):
        x = n.op("ConvTranspose", [x, n.weight((c, c // 2, 2, 2))], kernel_shape=[2, 2], strides=[2, 2])
        c //= 2
        x = n.op("Concat", [skips[d], x], axis=1)
        x = n.conv_bn(n.conv_bn(x, 2 * c, c), c, c)
    y = n.op("Conv", [x, n.weight((2, c, 1, 1))], kernel_shape=[1, 1])
    n.save(path, [("input", ["N", 3, 256, 256])], [(y, ["N", 2, 256, 256])])


def mobilenetv2(path):
    """MobileNetV2 (Sandler et al. 2018): inverted residuals, depthwise convolutions."""
    n = Net("mobilenetv2")
    x = n.conv_bn("input", 3, 32, stride=2)
    c = 32
    for t, cout, repeat, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                               (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(repeat):
            stride, hidden = (s if i == 0 else 1), c * t
            y = n.conv_bn(x, c, hidden, k=1) if t != 1 else x
            y = n.conv_bn(y, hidden, hidden, stride=stride, group=hidden)
            y = n.conv_bn(y, hidden, cout, k=1, relu=False)
            x = n.op("Add", [x, y]) if stride == 1 and c == cout else y
            c = cout
    y = n.head(n.conv_bn(x, c, 1280, k=1), 1280)
    n.save(path, [("input", ["N", 3, 224, 224])], [(y, ["N", 10])])


def gpt(path, layers=12, d=256, heads=4, seq=256):
    """A GPT-style decoder (pre-norm, decomposed LayerNorm, SiLU MLP), width 256 instead of 768."""
    n = Net("gpt12")
    hd, x = d // heads, "input"

    def norm(x):
        s = n.op("Sub", [x, n.op("ReduceMean", [x], axes=[-1])])
        v = n.op("ReduceMean", [n.op("Mul", [s, s])], axes=[-1])
        y = n.op("Mul", [n.op("Div", [s, n.op("Sqrt", [v])]), n.weight((d,))])
        return n.op("Add", [y, n.weight((d,))])

    def linear(x, din, dout):
        return n.op("Add", [n.op("MatMul", [x, n.weight((din, dout))]), n.weight((dout,))])

    for _ in range(layers):
        h = norm(x)
        split = n.ints([0, 0, heads, hd])
        q, k, v = (n.op("Reshape", [linear(h, d, d), split]) for _ in range(3))
        q = n.op("Transpose", [q], perm=[0, 2, 1, 3])
        k = n.op("Transpose", [k], perm=[0, 2, 3, 1])
        v = n.op("Transpose", [v], perm=[0, 2, 1, 3])
        p = n.op("Softmax", [n.op("MatMul", [q, k])], axis=-1)
        o = n.op("Transpose", [n.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
        x = n.op("Add", [x, linear(n.op("Reshape", [o, n.ints([0, 0, d])]), d, d)])
        f = linear(norm(x), d, 4 * d)
        x = n.op("Add", [x, linear(n.op("Mul", [f, n.op("Sigmoid", [f])]), 4 * d, d)])
    n.save(path, [("input", ["N", seq, d])], [(x, ["N", seq, d])])


def gen(out):
    os.makedirs(out, exist_ok=True)
    densenet(f"{out}/densenet121_half.onnx")
    inception(f"{out}/inception.onnx", False)
    inception(f"{out}/inception_bfs.onnx", True)
    unet(f"{out}/unet16.onnx")
    mobilenetv2(f"{out}/mobilenetv2.onnx")
    gpt(f"{out}/gpt12_d256.onnx")


# ---------------------------------------------------------------- table

def mib(b):
    return f"{b / 1048576:.3f}"


def table(listing):
    rows, failed = [], []
    for line in open(listing):
        name, rest = line.rstrip("\n").split(" ", 1)
        if rest.startswith("FAILED"):
            failed.append((name, rest))
            continue
        rows.append((name, json.load(open(rest))["memory"]))
    hdr = ("model", "naive", "greedy", "best_fit", "best", "LOAD", "best/LOAD", "LOAD opt", "opt/given", "method")
    print("%-40s %10s %10s %10s %10s %10s %9s %10s %9s  %s" % hdr)
    print("(MiB; LOAD = floor of the given order; LOAD opt = floor of the memory-aware order)")
    exact = within = above_greedy = 0
    worst = (1.0, "")
    for name, m in rows:
        s, load = m["strategies"], m["lower_bound_bytes"]
        ratio = m["arena_bytes"] / load if load else 1.0
        opt = m["schedules"]["optimized_lower_bound_bytes"]
        exact += ratio <= 1.001
        within += ratio <= 1.02
        above_greedy += s["best"] > s["greedy_by_size"]
        worst = max(worst, (ratio, name))
        print("%-40s %10s %10s %10s %10s %10s %9.4f %10s %9.4f  %s" % (
            name[:40], mib(s["naive"]), mib(s["greedy_by_size"]), mib(s["best_fit"]), mib(s["best"]), mib(load),
            ratio, mib(opt), opt / load if load else 1.0, m["method"]))
    n = len(rows)
    print(f"\n{n} models planned, {len(failed)} failed")
    for name, msg in failed:
        print(f"  {name}: {msg}")
    if not n:
        return
    print(f"best == LOAD (ratio <= 1.001): {exact}/{n} = {100.0 * exact / n:.1f}%")
    print(f"best <= 1.02 x LOAD: {within}/{n}; worst {worst[0]:.4f} ({worst[1]})")
    print(f"best above greedy_by_size: {above_greedy}")
    better = [(name, m) for name, m in rows if m["schedules"]["optimized_lower_bound_bytes"] < m["lower_bound_bytes"]]
    print(f"memory-aware order lowers LOAD on {len(better)} models:")
    for name, m in better:
        g, o = m["lower_bound_bytes"], m["schedules"]["optimized_lower_bound_bytes"]
        proven = ", proven minimal" if m["schedules"]["proven_minimal"] else ""
        print(f"  {name}: {mib(g)} -> {mib(o)} MiB (-{100.0 * (g - o) / g:.1f}%), {m['schedules']['method']}{proven}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "bfs":
        bfs(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "gen":
        gen(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        sys.exit(__doc__)
