#!/usr/bin/python3
"""hf_decoders_vs_ort.py - the Hugging Face-like decoders of bench/gen_hf_decoders.py held against
ONNX Runtime 1.30 (CPU EP) at levels basic, extended and all: for each model and level, ORT's kernel
histogram (bench/ort_optimize.mjs, views aside) against fuseplan's `report` on the target of that
level (bench/fusion_vs_ort.py counts both). Each model is compared as exported (symbolic batch,
sequence and past) and as a static copy fixed at one decode step (the dims of
bench/fidelity.py's DECODE_STEP), where ORT's constant folding removes the shape computations.

  /usr/bin/python3 bench/hf_decoders_vs_ort.py [--ort DIR] [--fuseplan build/fuseplan] [--tiny]
                                               [--expected DIR] OUT_DIR [NAME...]

NAMEs pick writings (all when none). Prints a Markdown table and the count of (writing, level)
pairs equal. --expected DIR also writes each model as exported and its static copy to DIR
(NAME.onnx, NAME_static.onnx) and ORT's histogram of each at each level (NAME.LEVEL.txt,
NAME_static.LEVEL.txt, lines "OP COUNT"): the regression data tests/test_fuse.c reads without ORT.
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fidelity import static_copy  # noqa: E402
from fusion_vs_ort import fuseplan_kernels, fuseplan_report, ort_kernels  # noqa: E402

LEVELS = {"basic": "ort-cpu-basic", "extended": "ort-cpu-extended", "all": "ort-cpu-all"}


def optimized(ort, models, out, level):
    """ORT's optimized model of each of models at level: {model: path}."""
    r = subprocess.run(["node", os.path.join(HERE, "ort_optimize.mjs"), "--ort", ort, "--out", out, "--level", level] +
                       models, capture_output=True, text=True)
    return dict(line.split("\t")[:2] for line in r.stdout.splitlines() if "\t" in line)


def fmt(c):
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"


def compare(a, models):
    """Rows (model, level, cell) and the ORT histograms {(model, level): Counter}."""
    rows, hist = [], {}
    for level, target in LEVELS.items():
        opt = optimized(a.ort, models, os.path.join(a.out, "ort_" + level), level)
        for m in models:
            if m not in opt:
                rows.append((m, level, "ORT failed"))
                continue
            o, f = ort_kernels(opt[m]), fuseplan_kernels(fuseplan_report(a.fuseplan, m, target))
            hist[(m, level)] = o
            cell = "yes (%d)" % sum(o.values()) if o == f else f"ORT only: {fmt(o - f)}; fuseplan only: {fmt(f - o)}"
            rows.append((m, level, cell))
    return rows, hist


def write_expected(d, models, hist):
    os.makedirs(d, exist_ok=True)
    for m in models:
        name = os.path.basename(m)[:-len(".onnx")]
        shutil.copyfile(m, os.path.join(d, name + ".onnx"))
        for level in LEVELS:
            with open(os.path.join(d, f"{name}.{level}.txt"), "w") as f:
                f.writelines(f"{op} {n}\n" for op, n in sorted(hist[(m, level)].items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ort", default="/work/main/bench", help="folder holding node_modules/onnxruntime-node")
    ap.add_argument("--fuseplan", default="build/fuseplan")
    ap.add_argument("--tiny", action="store_true", help="the --tiny writings of gen_hf_decoders.py")
    ap.add_argument("--expected", help="write the static copies and ORT's histograms here")
    ap.add_argument("out")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    a.ort, a.out = os.path.abspath(a.ort), os.path.abspath(a.out)
    src, fixed = os.path.join(a.out, "models"), os.path.join(a.out, "static")
    os.makedirs(fixed, exist_ok=True)
    gen = [sys.executable, os.path.join(HERE, "gen_hf_decoders.py")] + (["--tiny"] if a.tiny else []) + [src]
    if subprocess.run(gen + a.names, stdout=subprocess.DEVNULL).returncode:
        sys.exit("hf_decoders_vs_ort: gen_hf_decoders.py failed")
    models = sorted(os.path.join(src, f) for f in os.listdir(src)
                    if f.endswith(".onnx") and (not a.names or f[:-len(".onnx")] in a.names))
    statics = [static_copy(m, os.path.join(fixed, os.path.basename(m).replace(".onnx", "_static.onnx")))
               for m in models]
    rows, hist = compare(a, models + statics)
    print("| model | level | kernel histogram equal (views aside) |\n|---|---|---|")
    for m, level, cell in sorted(rows):
        print(f"| `{os.path.basename(m)}` | {level} | {cell} |")
    for what, group in (("as exported", models), ("static", statics)):
        eq = sum(1 for m, _, c in rows if m in group and c.startswith("yes"))
        print(f"\n{what}: {eq} of {len(group) * len(LEVELS)} (writing, level) pairs equal")
    if a.expected:
        write_expected(a.expected, models + statics, hist)


if __name__ == "__main__":
    main()
