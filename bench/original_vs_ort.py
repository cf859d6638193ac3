#!/usr/bin/python3
"""original_vs_ort.py - fuseplan's stage "original" against the graph ONNX Runtime runs with its
optimizations off (ORT_DISABLE_ALL): node counts, model by model.

  /usr/bin/python3 bench/original_vs_ort.py [--ort bench] [--fuseplan build/fuseplan]
        [--target ort-cpu-all] [--out DIR] MODEL.onnx...

ORT's graph at level disabled is saved by bench/ort_optimize.mjs (onnxruntime-node) and its nodes
counted, subgraphs included, Constant nodes aside (ORT makes the main graph's initializers when it
loads the model; the saved file keeps a subgraph's as nodes: Silero VAD's If branches). fuseplan's
side is `report -f json` of --target: stage original's ops plus its folded ones (shape computations
fuseplan folds and ORT runs at that level), less the model's Constant nodes. Even at level
disabled ORT rewrites some graphs: a float16 op without a CPU kernel runs between Casts, and each
DequantizeLinear gets a copy per reader (docs/rules.md, "Level disabled" and "QDQ at level
basic"); fuseplan's stage original has both. Prints one line per model whose counts differ, with
the op types only one side has (against the model as loaded), then the count of models that
agree; exit 1 when any differs. Not part of the tests (CI has no ONNX Runtime).
"""
import argparse
import collections
import json
import os
import subprocess
import sys

import onnx

import fusion_vs_ort as fv


def fuseplan_count(a, model):
    """Stage original's runtime ops of model on a.target, Constant nodes aside."""
    r = subprocess.run([a.fuseplan, "report", "-f", "json", "--no-headroom", "--target", a.target, model],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}")
    st = json.loads(r.stdout)["stages"][0]
    return st["ops"] + st["folded_ops"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ort", default=os.path.dirname(os.path.abspath(__file__)),
                    help="folder of node_modules/onnxruntime-node")
    ap.add_argument("--fuseplan", default="build/fuseplan")
    ap.add_argument("--target", default="ort-cpu-all", help="an ONNX Runtime target (its stage original)")
    ap.add_argument("--out", default=None, help="where ORT's saved graphs go (default: a temporary folder)")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    a.level = "disabled"
    with fv.saved_graphs(a, "fp-ort-disabled-") as out:
        compare(a, out)


def compare(a, out):
    """Prints each model whose counts differ (ORT's graphs saved under out) and the count that
    agree; exit 1 when any differs."""
    optimized, failed = fv.optimize(a, out)
    same, differ = 0, []
    for m in a.models:
        if m not in optimized:
            continue
        src = collections.Counter(n.op_type for n in fv.all_nodes(onnx.load(m, load_external_data=False).graph))
        ort = collections.Counter(n.op_type for n in fv.all_nodes(onnx.load(optimized[m], load_external_data=False).graph))
        try:
            fp = fuseplan_count(a, m) - src["Constant"]
        except RuntimeError as err:
            failed.append((m, str(err)))
            continue
        ort_n = sum(ort.values()) - ort["Constant"]  # a subgraph's Constant nodes stay nodes in ORT's file
        if fp == ort_n:
            same += 1
            continue
        fmt = lambda c: ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"
        differ.append(f"- `{m}`: ORT {ort_n}, fuseplan {fp}; only in the model: "
                      f"{fmt(src - ort - collections.Counter(Constant=src['Constant']))}; only in ORT's: {fmt(ort - src)}")
    print("\n".join(differ))
    print(f"{same + len(differ)} models: stage original's node count equals ORT's at level disabled on {same}"
          + (f"; not compared: {', '.join(f'{m} ({e[:80]})' for m, e in failed)}" if failed else ""))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
