#!/usr/bin/python3
"""What one op of a network costs in ONNX Runtime, measured without its profiler.

  /usr/bin/python3 bench/ort_op_cost.py [--ort bench] [--out bench/out/op_cost] [--rounds 3] SPEC OP_TYPE[:NAME_PART]...

SPEC is a bench/ort_run.c spec (level, threads, model, inputs, outputs), e.g. one that
bench/runtime_calibration.py wrote under bench/out/runtime_calibration/inputs/NETWORK/. For each
OP_TYPE the model is copied with a second copy of every node of that type (whose name contains
NAME_PART, when given) (same inputs, outputs
renamed and made graph outputs, so that nothing prunes them) and both models are timed by
fp_bench_ort_run (fastest run of --rounds timings each, the original's and the copies' taken in
turn so that both see the host's same phases, pinned to the idlest CPU); the difference over
the number of copies is one such op's time in the network, its inputs as warm as the network
leaves them. Each extra graph output adds its own fetch: about 0.1-0.2 us each on this host (a
model of 8 inputs and outputs runs 0.2 us per pair slower than a chain of 8 ops). Meant for ops
with small outputs (a decoder's step): with outputs of megabytes the copies cost more than the ops
(MobileNetV2's 16 depthwise convolutions doubled add 8.5 ms to a 15.1 ms run whose profile gives
them 6.5 ms; a graph output is allocated for every run outside the arena's plan, likely with its
page faults).

Why not ONNX Runtime's profiler: at one thread it adds several microseconds to every node (a
decoder of 35 nodes measured 219 us profiled, 34 us not), so the per-node times of small ops in
its profile say little about their cost.

Only at level disabled: from level basic on, ONNX Runtime's common-subexpression elimination
merges each copy with its original (same op, same inputs), and what is left is the graph outputs'
fetch (a one-row MatMul's copies measured 0.28 us each at level all, 0.85 at level disabled).

Prints one line per op type: copies, added us, us per op. Not part of the tests.
"""
import argparse
import copy
import json
import os
import subprocess
import sys

import onnx
from onnx import helper

from ort_common import ort_run_tool, pinned

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.basename(sys.argv[0]).removesuffix(".py")  # the tool that names itself in an error


def disabled_spec(path, why):
    """(lines, model path) of a bench/ort_run.c spec at level disabled (without a level line it is
    at ort_run.c's default, extended); SystemExit naming the spec, and `why` for another level."""
    with open(path) as f:
        lines = f.read().splitlines()
    model = next((ln.split(None, 1)[1] for ln in lines if ln.startswith("model ")), None)
    if not model:
        raise SystemExit(f"{TOOL}: {path}: no 'model' line")
    level = next((ln.split(None, 1)[1].strip() for ln in lines if ln.startswith("level ")), "extended")
    if level != "disabled":
        raise SystemExit(f"{TOOL}: {path}: level {level}: {why}")
    return lines, model


def run_us(tool, lib, spec):
    """The fastest run of one timing of spec (us); SystemExit naming the spec on an error."""
    cmd, _ = pinned([tool, lib, spec])
    out = subprocess.run(cmd, capture_output=True, text=True)
    try:
        d = json.loads(out.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"{TOOL}: {spec}: no result ({out.stderr.strip()[:200]})")
    if d.get("error"):
        raise SystemExit(f"{TOOL}: {spec}: {d['error']}")
    return d["min_us"]


def paired_us(tool, lib, base_spec, spec, rounds):
    """(fastest of base_spec, fastest of spec) over `rounds` timings of each, taken in turn."""
    pairs = [(run_us(tool, lib, base_spec), run_us(tool, lib, spec)) for _ in range(rounds)]
    return min(b for b, _ in pairs), min(c for _, c in pairs)


def with_copies(model_path, op, out_dir):
    """(model path, spec output lines, copies): the model with every node op names doubled."""
    op_type, _, part = op.partition(":")
    m = onnx.load(model_path)
    g = m.graph
    copies, outs = [], []
    for n in list(g.node):
        if n.op_type != op_type or part not in n.name:
            continue
        d = copy.deepcopy(n)
        d.name = n.name + "_copy"
        del d.output[:]
        d.output.extend([o + "_copy" if o else "" for o in n.output])
        copies.append(d)
        outs += [o for o in d.output if o]
    g.node.extend(copies)
    for o in outs:
        g.output.append(helper.make_empty_tensor_value_info(o))
    path = os.path.join(out_dir, "copies.onnx")
    onnx.save(m, path)
    return path, [f"output {o}" for o in outs], len(copies)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ort", default=HERE, help="folder whose node_modules holds onnxruntime-node")
    ap.add_argument("--out", default=os.path.join(HERE, "out", "op_cost"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("spec")
    ap.add_argument("ops", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tool, lib = ort_run_tool(a.ort, a.out)
    lines, model = disabled_spec(a.spec, "copies are measured at level disabled only (from level basic on, "
                                 "common-subexpression elimination merges them)")
    for op in a.ops:
        path, outs, n = with_copies(model, op, a.out)
        if not n:
            print(f"{op:36s} none in the model", file=sys.stderr)
            continue
        spec = os.path.join(a.out, "copies.spec")
        with open(spec, "w") as f:
            f.write("\n".join([ln for ln in lines if not ln.startswith("model ")] + [f"model {path}"] + outs) + "\n")
        base, with_them = paired_us(tool, lib, a.spec, spec, a.rounds)
        added = with_them - base
        print(f"{op:36s} {n:3d} copies  +{added:8.2f} us  {added / n:7.2f} us each  ({os.path.basename(model)}: "
              f"{base:.2f} us)")


if __name__ == "__main__":
    main()
