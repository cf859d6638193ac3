#!/usr/bin/python3
"""Where in a network the estimate and ONNX Runtime part: both timed segment by segment.

  /usr/bin/python3 bench/ort_segments.py --device PROFILE.ini [--fuseplan build/fuseplan] [--ort bench]
        [--out bench/out/segments] [--rounds 4] SPEC CUT...

SPEC is a bench/ort_run.c spec at level disabled (e.g. one bench/runtime_calibration.py wrote under
bench/out/runtime_calibration/inputs/NETWORK/). Each CUT is a count of nodes: the network's first
CUT nodes in file order (ONNX keeps them topologically sorted, so every prefix is a graph) and every
Constant node of the network (ONNX Runtime makes them initializers when it loads a graph: they cost
nothing and their values need not cross a cut); a prefix's outputs are the values the rest of the
network or its caller reads. Every prefix and the whole network are timed by fp_bench_ort_run (the
fastest run of --rounds timings each, all of them in turn in every round, so that all see the
host's same phases, pinned to the idlest CPU) and estimated by `fuseplan report` on --device at
stage original (the spec's input shapes bound). One line per segment: its nodes, the measured and
estimated microseconds it adds, and their ratio; the first segment holds the run's own overhead.

Unlike bench/ort_op_cost.py's copies, which run right after their original with its inputs hot, a
segment's kernels run after what precedes them in the network. But a prefix moves less data a run
than the whole network: what stays in a cache from one run of a prefix to the next may not from one
run of the network to the next, and that difference lands in the later segments. A prefix adds a
graph output for each value it hands on: about 0.2 us for a small one, 2.4 us for one of 384 KB on
this host (allocated outside the arena on every run), so cut where few and small values cross
(torch exports that compute their shapes up front cannot be cut: Swin-T hands on 89 values after
its first 260 nodes). Not part of the tests.
"""
import argparse
import json
import os
import subprocess
import sys

import onnx
from onnx import helper

from ort_common import ort_run_tool, spec_inputs
from ort_op_cost import disabled_spec, run_us

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_IO = 64  # runtime/ort.h FP_ORT_MAX_IO: the outputs bench/ort_run.c fetches


def prefix(m, count, lines, out_dir):
    """(spec path, model path) of m's first `count` nodes and all its Constant nodes, whose inputs
    are the network's inputs they read and whose outputs are the values later nodes or the
    network's caller read; SystemExit when no value or more than bench/ort_run.c fetches cross."""
    nodes = list(m.graph.node)
    consts = [n for n in nodes if n.op_type == "Constant"]
    head = [n for n in nodes[:count] if n.op_type != "Constant"]
    later = {i for n in nodes[count:] for i in n.input} | {o.name for o in m.graph.output}
    outs = [o for n in head for o in n.output if o in later]
    if not outs:
        raise SystemExit(f"ort_segments: {m.graph.name}: the first {count} nodes hand on no value: cut later")
    if len(outs) > MAX_IO:
        raise SystemExit(f"ort_segments: {m.graph.name}: the first {count} nodes hand on {len(outs)} values, "
                         f"bench/ort_run.c fetches at most {MAX_IO}: cut elsewhere")
    read = {i for n in head for i in n.input}
    ins = [v for v in m.graph.input if v.name in read]
    g = helper.make_graph(consts + head, f"{m.graph.name}_{count}", ins,
                          [helper.make_empty_tensor_value_info(o) for o in outs], list(m.graph.initializer))
    p = helper.make_model(g, opset_imports=m.opset_import, ir_version=m.ir_version)
    path = os.path.join(out_dir, f"prefix{count}.onnx")
    onnx.save(p, path)
    spec = os.path.join(out_dir, f"prefix{count}.spec")
    fed = {v.name for v in ins}
    kept = [ln for ln in lines if not ln.startswith(("model ", "output ", "input ")) or
            (ln.startswith("input ") and ln.split()[1] in fed)]
    with open(spec, "w") as f:
        f.write("\n".join(kept + [f"model {path}"] + [f"output {o}" for o in outs]) + "\n")
    return spec, path


def estimate_us(a, spec, model):
    """fuseplan's stage-original estimate of model (us), the input shapes of its spec bound."""
    binds = []
    with open(spec) as f:
        for name, dims in spec_inputs(f.read().splitlines()):
            binds += ["-i", f"{name}:{'x'.join(dims) or '1'}"]
    out = subprocess.run([a.fuseplan, "report", "-f", "json", "--no-headroom", "--device", a.device, "--target",
                          a.target] + binds + [model], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"ort_segments: {model}: fuseplan report: {out.stderr.strip()[:200]}")
    return json.loads(out.stdout)["stages"][0]["est_latency_s"] * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", required=True, help="the device profile to estimate with (.ini)")
    ap.add_argument("--fuseplan", default=os.path.join(os.path.dirname(HERE), "build", "fuseplan"))
    ap.add_argument("--target", default="ort-cpu-all", help="fusion target (stage original does not fuse)")
    ap.add_argument("--ort", default=HERE, help="folder whose node_modules holds onnxruntime-node")
    ap.add_argument("--out", default=os.path.join(HERE, "out", "segments"))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("spec")
    ap.add_argument("cuts", nargs="+", type=int)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    lines, model = disabled_spec(a.spec, "segments are compared with stage original, which is level disabled")
    m = onnx.load(model)
    nodes = list(m.graph.node)
    cuts = sorted({c for c in a.cuts if 0 < c < len(nodes)})
    if len(cuts) != len(set(a.cuts)):
        raise SystemExit(f"ort_segments: {a.spec}: a cut must lie between 1 and {len(nodes) - 1} nodes")
    tool, lib = ort_run_tool(a.ort, a.out)
    specs = [prefix(m, c, lines, a.out) for c in cuts] + [(a.spec, model)]
    est = [estimate_us(a, spec, path) for spec, path in specs]
    best = [float("inf")] * len(specs)
    for _ in range(a.rounds):
        for k, (spec, _) in enumerate(specs):
            best[k] = min(best[k], run_us(tool, lib, spec))
    print(f"{'nodes':>9s}  {'first .. last node':60s} {'measured us':>11s} {'estimated us':>12s} {'est/meas':>8s}")
    start, prev_m, prev_e = 0, 0.0, 0.0
    for k, end in enumerate(cuts + [len(nodes)]):
        dm, de = best[k] - prev_m, est[k] - prev_e
        names = " .. ".join((n.name or n.op_type)[-29:] for n in (nodes[start], nodes[end - 1]))
        ratio = f"{de / dm:8.2f}" if dm > 0 else "       -"
        print(f"{start:4d}-{end - 1:<4d}  {names:60s} {dm:11.2f} {de:12.2f} {ratio}")
        start, prev_m, prev_e = end, best[k], est[k]
    print(f"{'whole':>9s}  {os.path.basename(model):60s} {best[-1]:11.2f} {est[-1]:12.2f} {est[-1] / best[-1]:8.2f}")


if __name__ == "__main__":
    sys.exit(main())
