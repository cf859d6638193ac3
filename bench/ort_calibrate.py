#!/usr/bin/python3
"""Calibrate a host profile's ONNX Runtime parameters on synthetic kernels: the launch overhead of
each op class, the efficiency and half work (docs/devices.md, [saturation]) of dense convolutions,
grouped (depthwise) convolutions and matmuls, and the bandwidth efficiency of elementwise kernels
against the cache sweep of `fuseplan calibrate`. Never runs a model it is later compared with.

  /usr/bin/python3 bench/ort_calibrate.py --device host.ini -o host_ort.ini [--ort DIR] [--cpu N]
        [--rounds 5] [--repeat 3] [--keep DIR]

Parameters written: [launch] per class (`view` too: ORT dispatches Reshape & co. as kernels) and
`group`, [efficiency] conv, grouped_conv, matmul, dilated_pool and bandwidth, [saturation] conv and
matmul, [device] launch_overhead (the median of the classes', views left out).

Method. For each case a chain of K identical ops (each consuming the previous one's output) and a
chain of one op, both ending in a ReduceMax to one element (a large graph output costs the harness
an allocation that faults its pages in again on every run), are timed with bench/ort_time.mjs (CPU
EP, one thread, level disabled, profiling off, min of medians, nice -20 on the idlest core); their
difference / (K - 1) is the time of one kernel, free of the per-run harness. The tiny cases (a few elements) give each class's launch overhead. The work cases
give, per class, times t_i of kernels of work W_i = 2 M N K and GEMM operands D_i = M K + K N + M N;
with the launch L known,
  t_i - L = W_i / (peak * e) * (1 + (h / 2)^(1/3) / 1.5 * D_i / W_i)
is fitted for the efficiency e (<= 1) and half work h (docs/devices.md) by least squares on log time
(a grid over both). The timings are the fastest of --repeat measurements a pause apart (see
bench/ort_common.py: a busy neighbour core halves the speed of cache-resident kernels). Depthwise convolutions cost per group, not per unit of work (ORT runs a grouped
convolution one group at a time: 0.25 us a channel at 7x7, 1.2 us at 28x28, whatever the channel
count): for them
  t_i = L + groups_i * g + W_i / (peak * e)
is fitted over the tiny case and the work cases for the per-group overhead g ([launch] group) and e,
with L the dense convolution's launch (the same kernel's dispatch; fitting it too leaves it
undetermined against g). Dilated MaxPools (5x5 and 9x9 windows, dilation 2) give the efficiency of
ORT's generic pooling loop, W / (peak (t - L_pool)), geometric mean. Elementwise Add at working sets inside the L2, the L3 and beyond
gives achieved / triad bandwidth at each; their geometric mean is the bandwidth efficiency. Every
other number of the profile (peak, bandwidths, cache levels) stays the base's.
"""
import argparse
import configparser
import json
import math
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_common import time_models

K = 9  # ops per long chain
GROUPS = {}  # case name -> group count of its convolution
OPERANDS = {}  # case name -> GEMM operand elements (M K + K N + M N)
FLOPS_PER_OUT = {}  # pooling case name -> window elements (docs/metrics.md: out_elems x prod(kernel))


def chain(path, n, make, x_shape, inits):
    """A chain of n ops (make(i, src, dst) -> node) and a ReduceMax of the last one to a scalar."""
    nodes = [make(i, f"x{i}", f"x{i + 1}") for i in range(n)]
    nodes.append(helper.make_node("ReduceMax", [f"x{n}"], ["y"], name="out", keepdims=0))
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def w(name, shape, scale=0.01):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def cases():
    """(class, name, flops per op, bytes per op, x_shape, make, inits, is_tiny)."""
    out = []

    def conv(name, c, hw, k, group, tiny=False):
        shape = [1, c, hw, hw]
        init = [w("w", [c, c // group, k, k])]
        flops = 2 * c * hw * hw * (c // group) * k * k
        nbytes = 4 * (2 * c * hw * hw + c * (c // group) * k * k)
        cls = "grouped_conv" if group > 1 else "conv"
        GROUPS[name] = group
        mm, kk, nn = c // group, (c // group) * k * k, hw * hw
        OPERANDS[name] = group * (mm * kk + kk * nn + mm * nn)
        out.append((cls, name, flops, nbytes, shape,
                    lambda i, s, d: helper.make_node("Conv", [s, "w"], [d], name=f"n{i}", pads=[k // 2] * 4,
                                                     group=group), init, tiny))

    def matmul(name, m, kk, tiny=False):
        init = [w("w", [kk, kk])]
        OPERANDS[name] = m * kk + kk * kk + m * kk
        out.append(("matmul", name, 2 * m * kk * kk, 4 * (2 * m * kk + kk * kk), [m, kk],
                    lambda i, s, d: helper.make_node("MatMul", [s, "w"], [d], name=f"n{i}"), init, tiny))

    def unary(cls, name, op, shape, tiny=True, **attrs):
        n = int(np.prod(shape))
        out.append((cls, name, n * FLOPS_PER_OUT.get(name, 1), 8 * n, shape, lambda i, s, d: helper.make_node(op, [s], [d], name=f"n{i}", **attrs),
                    [], tiny))

    conv("conv_tiny", 4, 2, 1, 1, tiny=True)
    conv("gconv_tiny", 4, 2, 3, 4, tiny=True)
    matmul("matmul_tiny", 1, 8, tiny=True)
    n8 = [1, 8]
    out.append(("elementwise", "add_tiny", 8, 96, n8,
                lambda i, s, d: helper.make_node("Add", [s, "x0"], [d], name=f"n{i}"), [], True))
    bn = [numpy_helper.from_array(np.full([4], v, np.float32), n) for n, v in (("s", 1), ("b", 0), ("m", 0), ("v", 1))]
    out.append(("norm", "bn_tiny", 32, 128, [1, 4, 2, 2],
                lambda i, s, d: helper.make_node("BatchNormalization", [s, "s", "b", "m", "v"], [d], name=f"n{i}"),
                bn, True))
    unary("pool", "maxpool_tiny", "MaxPool", [1, 4, 2, 2], kernel_shape=[1, 1])
    unary("reduce", "reduce_tiny", "ReduceMean", n8, axes=[0])
    unary("softmax", "softmax_tiny", "Softmax", n8)
    unary("data", "transpose_tiny", "Transpose", [1, 4, 2, 2], perm=[0, 1, 3, 2])
    # a view: ORT dispatches Reshape as a kernel (aliasing its input), fuseplan's class `view`
    shape = [numpy_helper.from_array(np.array([1, 8], np.int64), "shape")]
    out.append(("view", "reshape_tiny", 0, 0, n8,
                lambda i, s, d: helper.make_node("Reshape", [s, "shape"], [d], name=f"n{i}"), shape, True))
    # dilated pooling (class dilated_pool): MLAS pools have no dilation; ORT's generic loop runs it
    for c, hw, k, dil in ((4, 64, 5, 2), (1, 256, 9, 2)):  # ORT: pads < kernel; same size out
        pad = dil * (k - 1) // 2
        FLOPS_PER_OUT[f"maxpool_k{k}_d{dil}_c{c}_{hw}"] = k * k
        unary("dilated_pool", f"maxpool_k{k}_d{dil}_c{c}_{hw}", "MaxPool", [1, c, hw, hw], tiny=False,
              kernel_shape=[k, k], dilations=[dil, dil], pads=[pad] * 4)
    # work: dense 3x3 convolutions, depthwise 3x3, matmuls
    # 3x3: up to the sizes of real networks' convolutions (an im2col matrix of several MiB, past the
    # L2: 64 channels at 56x56 is 7 MiB), not only cache-resident ones
    for c, hw in ((16, 16), (32, 28), (64, 28), (128, 28), (64, 56), (256, 14), (512, 7)):
        conv(f"conv3x3_c{c}_{hw}", c, hw, 3, 1)
    for c, hw in ((32, 28), (64, 56), (256, 14)):  # pointwise: no im2col, other operand shapes
        conv(f"conv1x1_c{c}_{hw}", c, hw, 1, 1)
    for c, hw in ((16, 14), (64, 28), (256, 7), (512, 14), (32, 112)):
        conv(f"dwconv_c{c}_{hw}", c, hw, 3, c)
    for m, kk in ((16, 64), (64, 256), (128, 512)):
        matmul(f"matmul_{m}x{kk}", m, kk)
    # elementwise bandwidth: Add (x + x0: two reads, one write)
    for n in (16384, 262144, 4194304):
        out.append(("bandwidth", f"add_{n}", n, 12 * n, [1, n],
                    lambda i, s, d: helper.make_node("Add", [s, "x0"], [d], name=f"n{i}"), [], False))
    return out


def fit_saturation(points, peak, launch):
    """(e, h) minimizing sum (log(L + W/(peak e) (1 + (h/2)^(1/3)/1.5 D/W)) - log t)^2; e <= 1."""
    best = None
    for h in [0.0] + list(np.geomspace(1e2, 1e9, 141)):
        for e in np.geomspace(1e-3, 1.0, 301):
            err = sum((math.log(launch + W / (peak * e) * (1 + (h / 2) ** (1 / 3) / 1.5 * D / W)) - math.log(t)) ** 2
                      for W, D, t in points)
            if best is None or err < best[0]:
                best = (err, e, h)
    return best[1], best[2], math.sqrt(best[0] / len(points))


def fit_grouped(points, peak, L):
    """(g, e) minimizing sum (log(L + groups g + W/(peak e)) - log t)^2 over (groups, W, t)."""
    best = None
    for g in np.geomspace(1e-9, 1e-5, 201):
        for e in np.geomspace(1e-3, 1.0, 201):
            err = sum((math.log(L + n * g + W / (peak * e)) - math.log(t)) ** 2 for n, W, t in points)
            if best is None or err < best[0]:
                best = (err, g, e)
    return best[1], best[2], math.sqrt(best[0] / len(points))


def level_bandwidth(cfg, nbytes):
    for i in (1, 2, 3):
        if cfg.has_option("cache", f"l{i}_bytes") and nbytes <= float(cfg["cache"][f"l{i}_bytes"]):
            return float(cfg["cache"][f"l{i}_bandwidth"]), f"L{i}"
    return float(cfg["device"]["bandwidth"]), "memory"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", required=True)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--ort", default="/tmp/ort")
    ap.add_argument("--cpu", type=int, help="core to pin to (default: the idlest)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3, help="measurements a pause apart; the fastest is kept")
    ap.add_argument("--keep")
    a = ap.parse_args()
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.optionxform = str
    cfg.read(a.device)
    peak = float(cfg["peak"]["fp32"])
    work = a.keep or tempfile.mkdtemp(prefix="fp-ortcal-")
    os.makedirs(work, exist_ok=True)
    cs = cases()
    paths, shapes = [], []
    for cls, name, flops, nbytes, shape, make, inits, tiny in cs:
        for n in (1, K):
            p = os.path.join(work, f"{name}_{n}.onnx")
            chain(p, n, make, shape, inits)
            paths.append(p)
            shapes.append(shape)
    items = [{"model": p, "inputs": {"x0": {"dtype": "float32", "dims": s}}} for p, s in zip(paths, shapes)]
    t, errors, cpu = time_models(a.ort, items, ("disabled",), a.cpu, a.rounds, 40, 400, a.repeat)
    if errors:
        sys.exit(f"ort_calibrate: {errors}")
    per = {}
    for cls, name, flops, nbytes, shape, make, inits, tiny in cs:
        one = t[(os.path.join(work, f"{name}_1.onnx"), "disabled")]
        many = t[(os.path.join(work, f"{name}_{K}.onnx"), "disabled")]
        per[name] = max((many - one) / (K - 1), 1e-9)
    report = ["| case | class | work (FLOP) | traffic (B) | time per kernel (us) |", "|---|---|---|---|---|"]
    for cls, name, flops, nbytes, *_ in cs:
        report.append(f"| {name} | {cls} | {flops} | {nbytes} | {per[name] * 1e6:.3f} |")
    launch = {cls: per[name] for cls, name, _, _, _, _, _, tiny in cs if tiny and cls != "grouped_conv"}
    if not cfg.has_section("launch"):
        cfg.add_section("launch")
    for cls, v in launch.items():
        cfg["launch"][cls] = f"{v:.4g}"
    # the device's: the median kernel's (a view is no kernel in fuseplan's count)
    cfg["device"]["launch_overhead"] = f"{float(np.median([v for c, v in launch.items() if c != 'view'])):.4g}"
    if not cfg.has_section("saturation"):
        cfg.add_section("saturation")
    notes = []
    pts = [(GROUPS[name], flops, per[name]) for c, name, flops, *_ in cs if c == "grouped_conv"]
    L = launch["conv"]
    g, e, rms = fit_grouped(pts, peak, L)
    cfg.remove_option("launch", "grouped_conv")  # takes conv's (fp_device_launch)
    cfg["launch"]["group"] = f"{g:.4g}"
    cfg["efficiency"]["grouped_conv"] = f"{e:.4g}"
    notes.append(f"grouped_conv: launch {L * 1e6:.3g} us + {g * 1e6:.3g} us per group, efficiency {e:.3g} "
                 f"(rms log error {rms:.3f} over {len(pts)} cases)")
    for cls in ("conv", "matmul"):
        pts = [(flops, OPERANDS[name], per[name]) for c, name, flops, _, _, _, _, tiny in cs if c == cls and not tiny]
        e, h, rms = fit_saturation(pts, peak, launch[cls])
        cfg["efficiency"][cls] = f"{e:.4g}"
        if h > 0:
            cfg["saturation"][cls] = f"{h:.4g}"
        notes.append(f"{cls}: efficiency {e:.3g}, half work {h:.3g} FLOP (rms log error {rms:.3f} over {len(pts)} sizes)")
    # dilated pooling: its efficiency, the geometric mean over the cases of W / (peak (t - L_pool))
    effs = [flops / (peak * max(per[name] - launch["pool"], 1e-9)) for c, name, flops, *_ in cs if c == "dilated_pool"]
    e = min(float(np.exp(np.mean(np.log(effs)))), 1.0)
    cfg["efficiency"]["dilated_pool"] = f"{e:.4g}"
    notes.append(f"dilated_pool: efficiency {e:.3g} ({', '.join(f'{x:.3g}' for x in effs)}; launch: pool's)")
    ratios = []
    for c, name, flops, nbytes, *_ in cs:
        if c != "bandwidth":
            continue
        bw, lvl = level_bandwidth(cfg, nbytes)
        got = nbytes / max(per[name] - launch["elementwise"], 1e-9)
        ratios.append(got / bw)
        notes.append(f"Add {nbytes} B ({lvl}): {got / 1e9:.1f} GB/s, {got / bw:.2f} of the triad's {bw / 1e9:.1f}")
    eff = min(float(np.exp(np.mean(np.log(ratios)))), 1.0)
    cfg["efficiency"]["bandwidth"] = f"{eff:.4g}"
    notes.append(f"bandwidth efficiency {eff:.3g} (geometric mean)")
    cfg["device"]["description"] = cfg["device"]["description"] + ", ONNX Runtime parameters (bench/ort_calibrate.py)"
    with open(a.output, "w") as f:
        f.write("# `fuseplan calibrate` with ONNX Runtime's launch overheads, convolution/matmul efficiencies and\n"
                "# half works, and bandwidth efficiency measured on synthetic kernels by bench/ort_calibrate.py.\n\n")
        cfg.write(f, space_around_delimiters=False)
    print(f"Measured on cpus {cpu}: {a.repeat} repetitions of {a.rounds} rounds, the fastest kept.\n")
    print("\n".join(report))
    print()
    for n in notes:
        print(f"- {n}")
    print(f"\nwrote {a.output}")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
