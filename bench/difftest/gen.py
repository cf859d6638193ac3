#!/usr/bin/python3
"""gen.py - random small ONNX variants of each ONNX Runtime rewrite fuseplan models, for the
differential test against ORT (bench/difftest/difftest.py). Seeded: the same seed and count write
the same models.

Each variant is a family (the rewrite it probes) and a feature dict drawn from a seeded generator:
operand order, where an operand comes from (initializer, graph input, a folded constant, a computed
value), broadcast shapes (scalar, per-channel, full, wrong axis), dtypes, attribute values at and
beyond each condition's edge, an extra consumer of the intermediate, the intermediate as a graph
output, the opset (13-18) and neighbouring ops before and after. build(family, feat) makes the model
from the features alone, so a disagreement can be minimized by resetting features (MINIMAL).

  /usr/bin/python3 bench/difftest/gen.py --seed S --count N OUT_DIR   (writes OUT_DIR/manifest.json)
"""
import argparse
import json
import os
import random

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DT = {"f32": (TensorProto.FLOAT, np.float32), "f16": (TensorProto.FLOAT16, np.float16),
      "i32": (TensorProto.INT32, np.int32), "i64": (TensorProto.INT64, np.int64)}

# The features every family has, and the values minimization resets them to.
MINIMAL = {"pre": None, "post": None, "extra": False, "graph_out": False, "opset": 13}


class Builder:
    """One graph under construction: nodes named nK_OP, initializers, inputs and outputs."""

    def __init__(self, opset, seed):
        self.opset, self.nodes, self.inits, self.inputs, self.outputs = opset, [], [], [], []
        self.rng = np.random.default_rng(seed)
        self.k = 0

    def fresh(self, stem):
        self.k += 1
        return f"{stem}{self.k}"

    def inp(self, shape, dt="f32"):
        name = self.fresh("in")
        self.inputs.append(helper.make_tensor_value_info(name, DT[dt][0], shape))
        return name

    def const(self, arr, stem="c"):
        name = self.fresh(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def rand(self, shape, dt="f32", positive=False):
        a = self.rng.standard_normal(shape) * 0.5
        if positive:
            a = np.abs(a) + (1.0 if dt in ("i32", "i64") else 0.5)
        return a.astype(DT[dt][1])

    def node(self, op, ins, n_out=1, domain=None, **attrs):
        name = self.fresh("n") + "_" + op
        outs = [f"{name}_o{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name=name, domain=domain, **attrs))
        return outs[0] if n_out == 1 else outs

    def out(self, name, dt="f32"):
        vi = onnx.ValueInfoProto()
        vi.name = name
        vi.type.tensor_type.elem_type = DT[dt][0]
        self.outputs.append(vi)

    def operand(self, src, shape, dt="f32", value=None, positive=False):
        """An operand of the given shape from src: const, input, folded (Add of two initializers, a
        constant once folded) or computed (Abs of a graph input: known only at run time)."""
        arr = self.rand(shape, dt, positive) if value is None else np.full(shape, value, DT[dt][1])
        if src == "const":
            return self.const(arr)
        if src == "folded":
            return self.node("Add", [self.const(arr), self.const(np.zeros(shape, DT[dt][1]))])
        x = self.inp(list(shape), dt)
        return x if src == "input" else self.node("Abs", [x])

    def model(self):
        g = helper.make_graph(self.nodes, "difftest", self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset),
                                                helper.make_opsetid("com.microsoft", 1)])
        m.ir_version = 8
        return m


def wrap(b, f, dt, shape, pattern):
    """x (a graph input of shape, after the neighbour f["pre"]), pattern(x) -> (y, mid), then the
    extra consumer of mid, mid as a graph output and the neighbour f["post"] after y as f asks."""
    x = b.inp(shape, dt)
    if f["pre"]:
        x = b.node(f["pre"], [x])
    y, mid = pattern(x)
    if f["extra"] and mid:
        b.out(b.node("Neg", [mid]), dt)
    if f["graph_out"] and mid:
        b.out(mid, dt)
    if f["post"]:
        y = b.node(f["post"], [y])
    b.out(y, f.get("out_dt", dt))
    return b.model()


def pick(r, *choices):
    return r.choice(choices)


def common(r, dts=("f32",), pre=("Relu", "Sigmoid"), post=("Relu", "Tanh", "Softmax")):
    return {"opset": r.randint(13, 18), "dt": pick(r, *dts), "pre": pick(r, None, None, *pre),
            "post": pick(r, None, None, *post), "extra": r.random() < 0.2, "graph_out": r.random() < 0.15}


# ------------------------------------------------------------------------------------------- Conv


def draw_conv(r):
    f = common(r, dts=("f32", "f32", "f32", "f16"))
    f.update(rank=pick(r, 4, 4, 4, 3), cin=pick(r, 3, 4, 8), cout=pick(r, 4, 8, 16, 6), group=pick(r, 1, 1, 2),
             bias=r.random() < 0.5, w_src=pick(r, "const", "const", "const", "input"), k=pick(r, 1, 3))
    return fix_group(f)


def conv(b, f, x):
    shape = [f["cout"], f["cin"] // f["group"]] + [f["k"]] * (f["rank"] - 2)
    ins = [x, b.operand(f["w_src"], shape, f["dt"])]
    if f["bias"]:
        ins.append(b.const(b.rand([f["cout"]], f["dt"])))
    pad = (f["k"] // 2,) * (2 * (f["rank"] - 2))
    return b.node("Conv", ins, group=f["group"], pads=list(pad))


def xshape(f):
    return [1, f["cin"]] + [6] * (f["rank"] - 2)


def draw_conv_bn(r):
    f = draw_conv(r)
    f.update(bn_src=pick(r, "const", "const", "const", "input", "folded"), eps=pick(r, 1e-5, 1e-3, 0.0, 0.5))
    return f


def build_conv_bn(b, f):
    def pat(x):
        c = conv(b, f, x)
        p = [b.operand(f["bn_src"] if i == 0 else "const", [f["cout"]], f["dt"], positive=i == 3) for i in range(4)]
        return b.node("BatchNormalization", [c] + p, epsilon=f["eps"]), c

    return wrap(b, f, f["dt"], xshape(f), pat)


BCAST = {"scalar": lambda f: [], "one": lambda f: [1], "chan": lambda f: [f["cout"]] + [1] * (f["rank"] - 2),
         "chan4": lambda f: [1, f["cout"]] + [1] * (f["rank"] - 2), "wrong": lambda f: [1] * (f["rank"] - 1) + [6],
         "full": lambda f: [1, f["cout"]] + [6] * (f["rank"] - 2), "lastc": lambda f: [f["cout"]]}


def draw_conv_binary(r, op):
    f = draw_conv(r)
    f.update(op=op, bcast=pick(r, *BCAST), src=pick(r, "const", "const", "input", "folded", "computed"),
             swap=r.random() < 0.5)
    return f


def build_conv_binary(b, f):
    def pat(x):
        c = conv(b, f, x)
        k = b.operand(f["src"], BCAST[f["bcast"]](f), f["dt"])
        return b.node(f["op"], [k, c] if f["swap"] else [c, k]), c

    return wrap(b, f, f["dt"], xshape(f), pat)


ACTS = ("Relu", "Clip", "HardSigmoid", "LeakyRelu", "Sigmoid", "Tanh")


def draw_conv_act(r):
    f = draw_conv(r)
    f.update(act=pick(r, *ACTS), clip=pick(r, "both", "min", "none", "input", "max_only"),
             alpha=pick(r, 0.01, 0.2, 1.0, 0.0), beta=pick(r, 0.5, 0.0))
    return f


def clip_inputs(b, f, y):
    lo, hi = np.array(0.0, DT[f["dt"]][1]), np.array(6.0, DT[f["dt"]][1])
    return {"both": [y, b.const(lo), b.const(hi)], "min": [y, b.const(lo)], "none": [y],
            "input": [y, b.inp([], f["dt"]), b.const(hi)], "max_only": [y, "", b.const(hi)]}[f["clip"]]


def build_conv_act(b, f):
    def pat(x):
        c = conv(b, f, x)
        a = f["act"]
        if a == "Clip":
            return b.node("Clip", clip_inputs(b, f, c)), c
        if a == "HardSigmoid":
            return b.node(a, [c], alpha=f["alpha"] or 0.2, beta=f["beta"]), c
        if a == "LeakyRelu":
            return b.node(a, [c], alpha=f["alpha"]), c
        return b.node(a, [c]), c

    return wrap(b, f, f["dt"], xshape(f), pat)


def draw_nchwc(r):
    f = draw_conv(r)
    f.update(cin=pick(r, 3, 8, 16, 32), cout=pick(r, 8, 16, 32, 24, 6), group=1, rank=4,
             tail=pick(r, "MaxPool", "GlobalAveragePool", "Add", "Relu", "Concat", None))
    if r.random() < 0.2:
        f["group"] = f["cin"] = f["cout"] = pick(r, 16, 32)
    return f


def fix_group(f):
    if f["cin"] % f["group"] or f["cout"] % f["group"]:
        f["group"] = 1
    return f


def build_nchwc(b, f):
    def pat(x):
        c = conv(b, f, x)
        t = f["tail"]
        if t == "MaxPool":
            return b.node(t, [c], kernel_shape=[2, 2], strides=[2, 2]), c
        if t in ("Add", "Concat"):
            c2 = conv(b, f, x)
            return (b.node(t, [c, c2]) if t == "Add" else b.node(t, [c, c2], axis=1)), c
        return (b.node(t, [c]) if t else c), c

    return wrap(b, f, f["dt"], xshape(f), pat)


# ----------------------------------------------------------------------------------------- MatMul


def draw_mm(r):
    f = common(r, dts=("f32", "f32", "f32", "f16"))
    f.update(rank=pick(r, 2, 2, 3, 4), m=pick(r, 1, 4), k=pick(r, 8, 16), n=pick(r, 8, 12),
             w_src=pick(r, "const", "const", "input"), w_rank=pick(r, 2, 2, 3))
    return f


def a_shape(f):
    return [2] * (f["rank"] - 2) + [f["m"], f["k"]]


def w_shape(f):
    return ([2] * (f["rank"] - 2) if f["w_rank"] == 3 and f["rank"] > 2 else []) + [f["k"], f["n"]]


def draw_gemm(r):
    f = draw_mm(r)
    f.update(bias=pick(r, "n", "1n", "mn", "m1", "scalar", "bmn"), b_src=pick(r, "const", "const", "input", "folded"),
             swap=r.random() < 0.5)
    return f


def build_gemm(b, f):
    def pat(x):
        mm = b.node("MatMul", [x, b.operand(f["w_src"], w_shape(f), f["dt"])])
        shape = {"n": [f["n"]], "1n": [1, f["n"]], "mn": [f["m"], f["n"]], "m1": [f["m"], 1], "scalar": [],
                 "bmn": [2] * (f["rank"] - 2) + [f["m"], f["n"]]}[f["bias"]]
        k = b.operand(f["b_src"], shape, f["dt"])
        return b.node("Add", [k, mm] if f["swap"] else [mm, k]), mm

    return wrap(b, f, f["dt"], a_shape(f), pat)


def draw_mm_scale(r):
    f = draw_mm(r)
    f.update(op=pick(r, "Mul", "Div"), where=pick(r, "out", "in_a", "in_b"), value=pick(r, 0.125, 2.0, 1.0),
             s_shape=pick(r, [], [], [1], [f["n"]]), s_src=pick(r, "const", "const", "input", "folded"),
             swap=r.random() < 0.5)
    return f


def build_mm_scale(b, f):
    def scaled(v):
        s = b.operand(f["s_src"], f["s_shape"], f["dt"], value=f["value"])
        return b.node(f["op"], [s, v] if f["swap"] and f["op"] == "Mul" else [v, s])

    def pat(x):
        w = b.operand(f["w_src"], w_shape(f), f["dt"])
        a = scaled(x) if f["where"] == "in_a" else x
        w = scaled(w) if f["where"] == "in_b" else w
        mm = b.node("MatMul", [a, w])
        return (scaled(mm) if f["where"] == "out" else mm), mm

    return wrap(b, f, f["dt"], a_shape(f), pat)


def draw_mm_transpose(r):
    f = draw_mm(r)
    f.update(side=pick(r, "a", "b", "both"), perm=pick(r, "last2", "last2", "first2", "identity"), w_rank=f["rank"])
    return f


def tperm(f, rank):
    p = list(range(rank))
    if f["perm"] == "last2":
        p[-1], p[-2] = p[-2], p[-1]
    elif f["perm"] == "first2" and rank > 2:
        p[0], p[1] = p[1], p[0]
    return p


def build_mm_transpose(b, f):
    def pat(x):
        r = f["rank"]
        wshape = [2] * (r - 2) + [f["k"], f["n"]]
        a, w = x, b.operand(f["w_src"], wshape, f["dt"])
        if f["side"] in ("a", "both"):
            a = b.node("Transpose", [b.node("Transpose", [a], perm=tperm(f, r))], perm=tperm(f, r))
        if f["side"] in ("b", "both"):
            w = b.node("Transpose", [b.node("Transpose", [w], perm=tperm(f, r))], perm=tperm(f, r))
        mm = b.node("MatMul", [a, w])
        return mm, a if a != x else None

    return wrap(b, f, f["dt"], a_shape(f), pat)


# ------------------------------------------------------------------------------------------ Gelu


def draw_gelu(r, kind):
    f = common(r, dts=("f32", "f32", "f32", "f16"), post=("Relu", "Tanh"))
    f.update(kind=kind, bias=kind == "bias_gelu" or r.random() < 0.2, b_shape=pick(r, "last", "last", "full", "scalar"),
             b_src=pick(r, "const", "const", "input"), order=pick(r, 0, 1, 2), half=pick(r, 0.5, 0.5, 0.25),
             root=pick(r, 1.4142135, 1.4142135, 2.0), alpha=pick(r, 1.702, 1.702, 1.0, 2.5), rank=pick(r, 2, 3))
    return f


def gelu_erf(b, f, x, dt):
    cst = lambda v: b.const(np.array(v, DT[dt][1]))  # noqa: E731
    e = b.node("Erf", [b.node("Div", [x, cst(f["root"])])])
    one = b.node("Add", [e, cst(1.0)] if f["order"] != 1 else [cst(1.0), e])
    if f["order"] == 2:
        return b.node("Mul", [b.node("Mul", [x, cst(f["half"])]), one])
    return b.node("Mul", [b.node("Mul", [x, one]), cst(f["half"])])


def gelu_tanh(b, f, x, dt):
    cst = lambda v: b.const(np.array(v, DT[dt][1]))  # noqa: E731
    cube = b.node("Pow", [x, cst(3.0)])
    inner = b.node("Add", [x, b.node("Mul", [cube, cst(0.044715)])])
    t = b.node("Tanh", [b.node("Mul", [inner, cst(0.7978845608)])])
    one = b.node("Add", [t, cst(1.0)])
    return b.node("Mul", [b.node("Mul", [x, cst(f["half"])]), one])


def build_gelu(b, f):
    dt, shape = f["dt"], [2, 8] if f["rank"] == 2 else [1, 2, 8]

    def pat(x):
        v = x
        if f["bias"]:
            bs = {"last": [8], "full": shape, "scalar": []}[f["b_shape"]]
            v = b.node("Add", [v, b.operand(f["b_src"], bs, dt)])
        if f["kind"] == "quick_gelu":
            s = b.node("Sigmoid", [b.node("Mul", [v, b.const(np.array(f["alpha"], DT[dt][1]))])
                                   if f["alpha"] != 1.0 else v])
            return b.node("Mul", [v, s] if f["order"] else [s, v]), (v if v != x else None)
        g = gelu_tanh(b, f, v, dt) if f["kind"] == "fast_gelu" else gelu_erf(b, f, v, dt)
        return g, (v if v != x else None)

    return wrap(b, f, dt, shape, pat)


# ------------------------------------------------------------------------------------- LayerNorm


def reduce_mean(b, f, x, axes):
    if f["opset"] >= 18:
        return b.node("ReduceMean", [x, b.const(np.array(axes, np.int64), "axes")], keepdims=1)
    return b.node("ReduceMean", [x], axes=axes, keepdims=1)


def draw_ln(r, kind):
    f = common(r, dts=("f32", "f32", "f32", "f16"), pre=("Relu",), post=("Relu", "MatMul"))
    f.update(kind=kind, axes=pick(r, [-1], [-1], [-1], [2], [1], [1, 2]), exp=pick(r, 2.0, 2.0, 2.0, 3.0),
             eps=pick(r, 1e-5, 1e-6, 1e-12, 0.1), gamma=pick(r, "const", "const", "input", None),
             beta=pick(r, "const", "const", "input", None), sq=pick(r, "pow", "pow", "mul"),
             div=pick(r, "div", "div", "rsqrt"), skip=pick(r, "add", "add", "add_bias", "none"),
             skip_shape=pick(r, "full", "full", "last"), native=r.random() < 0.4)
    return f


def ln_core(b, f, x, dt):
    cst = lambda v: b.const(np.array(v, DT[dt][1]))  # noqa: E731
    simplified = f["kind"] == "simplified_layer_norm"
    d = x if simplified else b.node("Sub", [x, reduce_mean(b, f, x, f["axes"])])
    sq = b.node("Pow", [d, cst(f["exp"])]) if f["sq"] == "pow" else b.node("Mul", [d, d])
    std = b.node("Sqrt", [b.node("Add", [reduce_mean(b, f, sq, f["axes"]), cst(f["eps"])])])
    y = b.node("Div", [d, std]) if f["div"] == "div" else b.node("Mul", [d, b.node("Reciprocal", [std])])
    if f["gamma"]:
        y = b.node("Mul", [y, b.operand(f["gamma"], [8], dt)])
    if f["beta"] and not simplified:
        y = b.node("Add", [y, b.operand(f["beta"], [8], dt)])
    return y


def build_ln(b, f):
    dt, shape = f["dt"], [1, 3, 8]

    def pat(x):
        v = x
        if f["kind"] == "skip_layer_norm" and f["skip"] != "none":
            skip = b.inp(shape if f["skip_shape"] == "full" else [8], dt)
            v = b.node("Add", [x, skip])
            if f["skip"] == "add_bias":
                v = b.node("Add", [v, b.const(b.rand([8], dt))])
        if f["native"] and f["opset"] >= 17 and f["kind"] != "simplified_layer_norm":
            ins = [v, b.const(b.rand([8], dt)), b.const(b.rand([8], dt))]
            y = b.node("LayerNormalization", ins, axis=f["axes"][0], epsilon=f["eps"])
        else:
            y = ln_core(b, f, v, dt)
        if f["post"] == "MatMul":
            y = b.node("MatMul", [y, b.const(b.rand([8, 4], dt))])
        return y, (v if v != x else None)

    f = dict(f, post=None if f["post"] == "MatMul" else f["post"])
    return wrap(b, f, dt, shape, pat)


# ------------------------------------------------------------------------------- level-1 rewrites


def draw_div_mul(r):
    f = common(r, dts=("f32", "f32", "f16", "i32", "i64"), pre=(), post=())
    f.update(num=pick(r, 1.0, 1.0, 2.0), num_shape=pick(r, [], [], [1], [4]), swap=r.random() < 0.5,
             y_src=pick(r, "input", "computed", "const"))
    return f


def build_div_mul(b, f):
    dt = f["dt"]

    def pat(x):
        y = b.operand(f["y_src"], [4], dt, positive=True)
        d = b.node("Div", [b.const(np.full(f["num_shape"], f["num"], DT[dt][1])), y])
        return b.node("Mul", [d, x] if f["swap"] else [x, d]), d

    return wrap(b, f, dt, [2, 4], pat)


def draw_elim(r):
    f = common(r, dts=("f32", "f32", "f16", "i64"), pre=("Relu",), post=("Relu",))
    f.update(op=pick(r, "Identity", "Dropout", "Cast", "Expand", "Add", "Sub", "Mul", "Div", "Pow"),
             ratio=pick(r, None, 0.0, 0.5), training=pick(r, None, False, True), mask=r.random() < 0.3,
             to=pick(r, "same", "same", "f32", "f16", "i64"), eshape=pick(r, "same", "ones", "bigger", "scalar1"),
             value=pick(r, 0.0, 1.0, 1.0, 2.0), k_shape=pick(r, [], [1], [4], [2, 4], [3, 2, 4]),
             k_src=pick(r, "const", "const", "input", "folded"), swap=r.random() < 0.5)
    if f["dt"] == "i64":
        f["pre"] = f["post"] = None
        f["op"] = pick(r, "Identity", "Cast", "Expand", "Add", "Mul")
    return f


def elim_node(b, f, x):
    op, dt = f["op"], f["dt"]
    if op == "Identity":
        return b.node(op, [x])
    if op == "Dropout":
        ins = [x] + ([b.const(np.array(f["ratio"], np.float32))] if f["ratio"] is not None else [])
        if f["training"] is not None:
            ins += [""] * (2 - len(ins)) + [b.const(np.array(f["training"]))]
        return b.node(op, ins, n_out=2)[0] if f["mask"] else b.node(op, ins)
    if op == "Cast":
        return b.node(op, [x], to=DT[dt if f["to"] == "same" else f["to"]][0])
    if op == "Expand":
        shape = {"same": [2, 4], "ones": [1, 1], "bigger": [3, 2, 4], "scalar1": [1]}[f["eshape"]]
        return b.node(op, [x, b.const(np.array(shape, np.int64))])
    k = b.operand(f["k_src"], f["k_shape"], dt, value=f["value"])
    return b.node(op, [k, x] if f["swap"] and op in ("Add", "Mul") else [x, k])


def build_elim(b, f):
    out_dt = f["dt"] if f["op"] != "Cast" or f["to"] == "same" else f["to"]
    return wrap(b, dict(f, out_dt=out_dt), f["dt"], [2, 4], lambda x: (elim_node(b, f, x), x if f["pre"] else None))


def draw_fold(r):
    f = common(r, dts=("f32", "f32", "f16", "i64"), pre=(), post=())
    f.update(chain=r.randint(1, 4), ops=[pick(r, "Add", "Mul", "Sub", "Neg", "Sqrt", "Transpose", "Shape", "Cast",
                                              "Unsqueeze", "Concat") for _ in range(4)])
    if f["dt"] == "i64":
        f["ops"] = [o if o not in ("Sqrt",) else "Neg" for o in f["ops"]]
    return f


def fold_step(b, f, op, c, dt):
    if op in ("Add", "Mul", "Sub"):
        return b.node(op, [c, b.const(b.rand([2, 4], dt, positive=True))])
    if op == "Transpose":
        return b.node("Transpose", [b.node("Transpose", [c], perm=[1, 0])], perm=[1, 0])
    if op == "Shape":
        dim = b.node("Gather", [b.node("Shape", [c]), b.const(np.array(1, np.int64))])
        return b.node("Mul", [c, b.node("Cast", [dim], to=DT[dt][0])])
    if op == "Cast":
        return b.node("Cast", [b.node("Cast", [c], to=TensorProto.FLOAT)], to=DT[dt][0])
    if op == "Unsqueeze":
        return b.node("Squeeze", [b.node("Unsqueeze", [c, b.const(np.array([0], np.int64))]),
                                  b.const(np.array([0], np.int64))])
    if op == "Concat":
        return b.node("Slice", [b.node("Concat", [c, c], axis=0), b.const(np.array([0], np.int64)),
                                b.const(np.array([2], np.int64))])
    return b.node(op, [c])


def build_fold(b, f):
    dt = f["dt"]

    def pat(x):
        c = b.const(b.rand([2, 4], dt, positive=True))
        for op in f["ops"][: f["chain"]]:
            c = fold_step(b, f, op, c, dt)
        return b.node("Add", [x, c]), None

    return wrap(b, f, dt, [2, 4], pat)


FAMILIES = {
    "conv_bn": (draw_conv_bn, build_conv_bn),
    "conv_mul": (lambda r: draw_conv_binary(r, "Mul"), build_conv_binary),
    "conv_add": (lambda r: draw_conv_binary(r, "Add"), build_conv_binary),
    "conv_activation": (draw_conv_act, build_conv_act),
    "nchwc": (draw_nchwc, build_nchwc),
    "matmul_add_gemm": (draw_gemm, build_gemm),
    "matmul_scale": (draw_mm_scale, build_mm_scale),
    "matmul_transpose": (draw_mm_transpose, build_mm_transpose),
    "gelu": (lambda r: draw_gelu(r, "gelu"), build_gelu),
    "bias_gelu": (lambda r: draw_gelu(r, "bias_gelu"), build_gelu),
    "fast_gelu": (lambda r: draw_gelu(r, "fast_gelu"), build_gelu),
    "quick_gelu": (lambda r: draw_gelu(r, "quick_gelu"), build_gelu),
    "layer_norm": (lambda r: draw_ln(r, "layer_norm"), build_ln),
    "simplified_layer_norm": (lambda r: draw_ln(r, "simplified_layer_norm"), build_ln),
    "skip_layer_norm": (lambda r: draw_ln(r, "skip_layer_norm"), build_ln),
    "div_mul": (draw_div_mul, build_div_mul),
    "elimination": (draw_elim, build_elim),
    "constant_folding": (draw_fold, build_fold),
}


def build(family, feat, seed):
    """The model of family with features feat; seed fixes the initializers' values."""
    return FAMILIES[family][1](Builder(feat["opset"], seed), feat)


def variants(seed, count):
    """[(name, family, feat)] of count variants, the families in turn."""
    r = random.Random(seed)
    fams = sorted(FAMILIES)
    return [(f"v{seed}_{i:05d}_{fams[i % len(fams)]}", fams[i % len(fams)], FAMILIES[fams[i % len(fams)]][0](r))
            for i in range(count)]


def write(out_dir, name, family, feat, seed):
    path = os.path.join(out_dir, name + ".onnx")
    onnx.save(build(family, feat, seed), path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("out")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    man = []
    for i, (name, fam, feat) in enumerate(variants(a.seed, a.count)):
        man.append({"name": name, "family": fam, "feat": feat, "seed": a.seed * 100003 + i,
                    "path": write(a.out, name, fam, feat, a.seed * 100003 + i)})
    json.dump(man, open(os.path.join(a.out, "manifest.json"), "w"), indent=0)


if __name__ == "__main__":
    main()
