#!/usr/bin/python3
"""speedup_vs_ort.py - the stage table's speedups against ONNX Runtime's, on whole networks: ORT's
CPU EP on one thread at levels disabled, extended and all, measured in the same run as fuseplan's
estimates from a profile that `fuseplan calibrate --threads 1 --seconds 3` wrote (no fitting).

  /usr/bin/python3 bench/speedup_vs_ort.py [--fuseplan build/fuseplan] [--ort bench]
        [--out bench/out/speedup] [--passes 3] [--budget-ms 400] [-o bench/results/speedup.md] MODEL.onnx...

Measurement: bench/ort_run.c (ONNX Runtime's libonnxruntime.so through its C API: one intra-op and
one inter-op thread, no profiler), each level of each model once per pass, the passes one after the
other on the CPU that was idlest when the pass began, a level's time its fastest pass (noise on a
shared machine only adds time). Estimate: `fuseplan report --device PROFILE` with target
ort-cpu-extended (its stage "original" against level disabled, "final" against extended) and
ort-cpu-all ("final" against all). Judged against the targets: the estimated speedup disabled -> all
within +-20% of ORT's on >= 80% of the networks, disabled -> extended within +-10%, and the original
stage within +-30% of level disabled on >= 90%.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

import numpy as np
import onnx

from ort_common import ort_run_tool, pinned

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEVELS = ("disabled", "extended", "all")


def sh(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd[:3])}...: {(r.stderr or r.stdout).strip()[-400:]}")
    return r.stdout


def harness(a):
    """(compiled bench/ort_run.c, onnxruntime-node's libonnxruntime.so)."""
    return ort_run_tool(a.ort, a.out)


def spec(a, model, level):
    """The bench/ort_run.c spec of model at level: its float inputs (symbolic dims 1) filled with a
    fixed pattern."""
    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    key = os.path.basename(model)[:-5]
    lines = [f"level {level}", f"budget_ms {a.budget_ms}", f"model {model}"]
    for k, vi in enumerate(v for v in m.graph.input if v.name not in inits):
        dims = [d.dim_value or 1 for d in vi.type.tensor_type.shape.dim]
        path = os.path.join(a.out, f"{key}.in{k}")
        if not os.path.exists(path):
            ((np.arange(int(np.prod(dims))) % 97) / 97 - 0.5).astype(np.float32).tofile(path)
        lines.append(" ".join(["input", vi.name, "1", str(len(dims))] + [str(d) for d in dims] + [path]))
    lines += [f"output {o.name}" for o in m.graph.output]
    path = os.path.join(a.out, f"{key}.{level}.spec")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def measure(a, exe, lib):
    """{(model, level): fastest pass's robust time in us}, and the passes' CPUs."""
    best, cpus = {}, []
    for _ in range(a.passes):
        cpu = None
        for m in a.models:
            for level in LEVELS:
                cmd, cpu = pinned([exe, lib, spec(a, m, level)], cpu)
                r = json.loads(sh(cmd).strip().splitlines()[-1])
                us = r["robust_us"]
                best[(m, level)] = min(best.get((m, level), us), us)
        cpus.append(cpu)
    return best, cpus


def estimate(a, model, target):
    """(original, final) stage latencies in us of fuseplan's report on the calibrated profile."""
    doc = json.loads(sh([a.fuseplan, "report", "-f", "json", "--no-headroom", "--device", a.profile, "--target", target,
                         model]))
    st = doc["stages"]
    return st[0]["est_latency_s"] * 1e6, st[-1]["est_latency_s"] * 1e6


def within(est, meas, tol):
    return abs(est / meas - 1) <= tol


def report(a, times, cpus):
    rows, ok = [], {"da": 0, "de": 0, "orig": 0}
    for m in a.models:
        t = {lv: times[(m, lv)] for lv in LEVELS}
        orig, ext = estimate(a, m, "ort-cpu-extended")
        _, full = estimate(a, m, "ort-cpu-all")
        da, de = t["disabled"] / t["all"], t["disabled"] / t["extended"]
        eda, ede = orig / full, orig / ext
        ok["da"] += within(eda, da, 0.20)
        ok["de"] += within(ede, de, 0.10)
        ok["orig"] += within(orig, t["disabled"], 0.30)
        rows.append(f"| {os.path.basename(m)[:-5]} | {t['disabled'] / 1e3:.2f} | {t['extended'] / 1e3:.2f} | "
                    f"{t['all'] / 1e3:.2f} | {orig / 1e3:.2f} | {ext / 1e3:.2f} | {full / 1e3:.2f} | {de:.2f}x | "
                    f"{ede:.2f}x | {da:.2f}x | {eda:.2f}x | {orig / t['disabled']:.2f} |")
    n = len(a.models)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = (f"#### Speedups against ONNX Runtime: levels disabled, extended, all (bench/speedup_vs_ort.py)\n\n"
            f"Written {stamp}. ONNX Runtime (onnxruntime-node's libonnxruntime.so, bench/ort_run.c) on one thread, "
            f"{a.passes} passes of {a.budget_ms} ms per model and level (CPUs {', '.join(str(c) for c in cpus)}), a "
            f"level's time its fastest pass; fuseplan's estimates on `{os.path.basename(a.profile)}`, written by "
            f"`fuseplan calibrate --threads 1 --seconds 3` in this run, no fitting.\n\n"
            f"- speedup disabled -> all within +-20%: {ok['da']} of {n} ({100 * ok['da'] / n:.0f}%; asked: 80%)\n"
            f"- speedup disabled -> extended within +-10%: {ok['de']} of {n} ({100 * ok['de'] / n:.0f}%)\n"
            f"- original stage within +-30% of level disabled: {ok['orig']} of {n} ({100 * ok['orig'] / n:.0f}%; "
            f"asked: 90%)\n\n"
            "| network | ORT disabled (ms) | extended | all | est. original (ms) | est. final extended | "
            "est. final all | ORT d->e | est. d->e | ORT d->a | est. d->a | original / disabled |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    return head + "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuseplan", default=os.path.join(ROOT, "build/fuseplan"))
    ap.add_argument("--ort", default=os.path.join(ROOT, "bench"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/speedup"))
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--budget-ms", type=int, default=400)
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "bench/results/speedup.md"))
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    a.models = [os.path.abspath(m) for m in a.models]
    os.makedirs(a.out, exist_ok=True)
    a.profile = os.path.join(a.out, "host_1t.ini")
    sh([a.fuseplan, "calibrate", "--threads", "1", "--seconds", "3", "-o", a.profile])
    exe, lib = harness(a)
    times, cpus = measure(a, exe, lib)
    text = report(a, times, cpus)
    with open(a.output, "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
