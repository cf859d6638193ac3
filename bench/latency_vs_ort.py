#!/usr/bin/python3
"""Estimated vs measured latency: fuseplan's roofline estimate on a device profile (normally the
host's, from `fuseplan calibrate`) next to ONNX Runtime's measured CPU latency (1 thread, profiling
off) with optimizations disabled (vs the "original" stage) and extended (vs the "final" stage), and
the speedup of fusion, estimated vs measured.

  /usr/bin/python3 bench/latency_vs_ort.py --ort DIR --device host.ini [--device other.ini ...]
        [--fuseplan build/fuseplan] [--cpu N] [--rounds 7] [--runs 40] [--repeat 3]
        [--save M.json | --measurements M.json] [--title T] MODEL...

Measurement (bench/ort_time.mjs via bench/ort_common.py): every session first, then interleaved
rounds; per model and level the minimum over rounds of the round's median ("min of medians"), at
nice -20 pinned to the idlest core (--cpu N to choose); the whole measurement is repeated --repeat
times a pause apart and each model's fastest kept. The harness (node binding, promise,
session.run's own work, and allocating the graph outputs, whose pages fault in again on every run
on this VM) costs time no model of the graph's kernels contains: each model gets a twin with the
same inputs and outputs whose only work is one Expand per output, measured in the same rounds,
and the tables compare fuseplan's estimate with the measurement net of its twin (the raw numbers
are listed too). Symbolic input dims are bound to 1 (a dim named like a sequence length to 16).

Prints Markdown: per device a table (measured net ms, estimate, ratio, for both levels; measured and
estimated speedup) and the share of estimates within +-30%. --save writes the measurements as JSON;
--measurements reuses them (no ORT run).
"""
import argparse
import configparser
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ort_common import time_models

DTYPES = {1: "float32", 11: "float64", 7: "int64", 6: "int32", 3: "int8", 2: "uint8", 9: "bool", 10: "float16"}
NP_TYPES = {1: np.float32, 11: np.float64, 7: np.int64, 6: np.int32, 3: np.int8, 2: np.uint8, 9: np.bool_,
            10: np.float16}
TOL = 0.30


def input_spec(path):
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    spec = {}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or t.elem_type not in DTYPES:
            return None
        dims = []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            else:
                dims.append(16 if "seq" in d.dim_param.lower() else 1)
        spec[vi.name] = {"dtype": DTYPES[t.elem_type], "dims": dims}
    return spec


def twin_model(path, spec, out):
    """The harness twin of model `path`: its inputs (unused) and outputs, each output an Expand of a
    zero to its shape (symbolic dims as the inputs bind them, else 1)."""
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    bound = {}
    for vi in m.graph.input:
        if vi.name in spec:
            for d, v in zip(vi.type.tensor_type.shape.dim, spec[vi.name]["dims"]):
                if d.dim_param:
                    bound[d.dim_param] = v
    nodes, consts = [], []
    for k, o in enumerate(m.graph.output):
        t = o.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else bound.get(d.dim_param, 1) for d in t.shape.dim]
        consts.append(numpy_helper.from_array(np.zeros([], NP_TYPES.get(t.elem_type, np.float32)), f"zero{k}"))
        consts.append(numpy_helper.from_array(np.array(dims, np.int64), f"shape{k}"))
        nodes.append(helper.make_node("Expand", [f"zero{k}", f"shape{k}"], [o.name], name=f"expand{k}"))
    inputs = [vi for vi in m.graph.input if vi.name not in inits]
    g = helper.make_graph(nodes, "twin", inputs, list(m.graph.output), consts)
    t = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    t.ir_version = 8
    onnx.save(t, out)


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def ort_version(ort):
    try:
        with open(os.path.join(ort, "node_modules", "onnxruntime-node", "package.json")) as f:
            return json.load(f).get("version", "unknown")
    except (OSError, ValueError):
        return "unknown"


def measure(ort, items, cpu, rounds, runs, repeat):
    """{"model|level": seconds} for every item and its harness twin ("model#twin|level"), with
    "model|level@repeats": the time of each repetition; "@errors": models ORT could not run;
    "@meta": when, where and under what load it was measured."""
    meta = {"start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_start": loadavg(),
            "ort": ort_version(ort), "rounds": rounds, "runs": runs, "repeat": repeat}
    each = {}
    with tempfile.TemporaryDirectory() as tmp:
        spec, twins = list(items), {}
        for k, it in enumerate(items):
            tp = os.path.join(tmp, f"twin{k}.onnx")
            twin_model(it["model"], it["inputs"], tp)
            twins[tp] = it["model"] + "#twin"
            spec.append({"model": tp, "inputs": it["inputs"]})
        times, errors, cpu = time_models(ort, spec, ("disabled", "extended"), cpu, rounds, runs, 1000, repeat,
                                         each=each)
    meta.update({"end": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_end": loadavg(), "cpus": cpu})
    errs = {}
    for (m, level), e in errors.items():
        errs.setdefault(twins.get(m, m), e)
    out = {f"{twins.get(m, m)}|{level}": v for (m, level), v in times.items()}
    out.update({f"{twins.get(m, m)}|{level}@repeats": v for (m, level), v in each.items()})
    out["@errors"] = errs
    out["@meta"] = meta
    return out


def fuseplan(exe, device, model, spec):
    args = [exe, "report", "-f", "json", "--no-headroom", "--device", device, "--target", "ort-cpu"]
    for name, t in spec.items():
        args += ["--input", f"{name}:" + "x".join(str(d) for d in t["dims"])]
    r = subprocess.run(args + [model], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip())
    st = json.loads(r.stdout)["stages"]
    return st[0]["est_latency_s"] * 1e3, st[2]["est_latency_s"] * 1e3


def name_of(path):
    """The model's name: its file name, or its folder's for the test suites' `<name>/model.onnx`."""
    base = os.path.basename(path).rsplit(".", 1)[0]
    return os.path.basename(os.path.dirname(path)) if base == "model" else base


def is_small(path):
    """libonnx-testdata's single-op models (a kernel of a few hundred elements)."""
    return "libonnx-testdata" in path


def spread(meas, m, level):
    """How well the net time (model - twin) repeats: (slowest - fastest) / fastest over the
    repetitions, or None without per-repetition data."""
    a, b = meas.get(f"{m}|{level}@repeats"), meas.get(f"{m}#twin|{level}@repeats")
    if not a or not b or len(a) != len(b):
        return None
    net = [x - y for x, y in zip(a, b)]
    lo = min(net)
    return (max(net) - lo) / lo if lo > 0 else math.inf


def device_description(path):
    c = configparser.ConfigParser(interpolation=None)
    try:
        c.read(path)
        when = c["calibration"].get("date", "") if "calibration" in c else ""
        return c["device"].get("description", "") + (f"; `fuseplan calibrate` run {when}" if when else "")
    except (configparser.Error, KeyError):
        return ""


def table(exe, device, items, meas, title):
    rows, outliers = [], []
    count = {g: [0, 0, 0, 0] for g in ("all", "networks", "small")}  # within, total, within repeatable, repeatable
    for it in items:
        m = it["model"]
        keys = [f"{m}{t}|{lv}" for t in ("", "#twin") for lv in ("disabled", "extended")]
        if not all(k in meas for k in keys):
            continue
        try:
            est0, est2 = fuseplan(exe, device, m, it["inputs"])
        except RuntimeError as e:
            print(f"- `{m}`: {e}", file=sys.stderr)
            continue
        est0, est2 = est0 * 1e-3, est2 * 1e-3
        raw0, raw2, f0, f2 = (meas[k] for k in keys)
        m0, m2 = max(raw0 - f0, 1e-9), max(raw2 - f2, 1e-9)
        r0, r2 = est0 / m0, est2 / m2
        sp0, sp2 = spread(meas, m, "disabled"), spread(meas, m, "extended")
        for ratio, sp, level in ((r0, sp0, "disabled"), (r2, sp2, "extended")):
            ok, rep = abs(ratio - 1) <= TOL, sp is not None and sp <= TOL
            for g in ("all", "small" if is_small(m) else "networks"):
                c = count[g]
                c[0] += ok
                c[1] += 1
                c[2] += ok and rep
                c[3] += rep
            if not ok:
                outliers.append((abs(math.log(ratio)), name_of(m), level, ratio, rep))
        rows.append((name_of(m), raw0 * 1e3, m0 * 1e3, "-" if sp0 is None else f"{sp0 * 100:.0f}%", est0 * 1e3, r0,
                     raw2 * 1e3, m2 * 1e3, "-" if sp2 is None else f"{sp2 * 100:.0f}%", est2 * 1e3, r2, m0 / m2,
                     est0 / est2, (f0 + f2) * 5e5))
    out = [f"### {title}: `{os.path.basename(device)}`", "", f"Profile: {device_description(device)}.", "",
           "| model | ORT disabled raw / net (ms) | repeats | est. original (ms) | ratio | ORT extended raw / net (ms) | "
           "repeats | est. final (ms) | ratio | measured speedup | est. speedup | harness (us) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s | %.3f / %.3f | %s | %.3f | %.2f | %.3f / %.3f | %s | %.3f | %.2f | %.2fx | %.2fx | %.0f |" % r)
    if not rows:
        return out
    c = count["all"]
    out += ["", f"**{c[0]} of {c[1]} estimates within +-{TOL * 100:.0f}%** of the measurement net of its harness twin "
            f"({len(rows)} models, 2 levels each; {100.0 * c[0] / c[1]:.0f}%).", ""]
    for g, what in (("networks", "networks and sample models"), ("small", "libonnx-testdata single-op models")):
        w, n, wr, nr = count[g]
        if n:
            out.append(f"- {what}: {w} of {n} within +-{TOL * 100:.0f}%; of the {nr} whose net time repeats within "
                       f"+-{TOL * 100:.0f}% over the repetitions, {wr} within.")
    w, n, wr, nr = count["all"]
    out.append(f"- every model whose net time repeats within +-{TOL * 100:.0f}%: {wr} of {nr} within.")
    sp = [abs(r[12] / r[11] - 1) for r in rows]
    out.append(f"- estimated speedup of fusion within +-10% of the measured one: {sum(e <= 0.10 for e in sp)} of "
               f"{len(rows)} models.")
    if outliers:
        outliers.sort(reverse=True)
        more = f", and {len(outliers) - 30} more" if len(outliers) > 30 else ""
        out += ["", "Outside +-30%, worst first (estimate / measured; * = the net time does not repeat within "
                "+-30%): " + ", ".join(f"{n} {lv} {r:.2f}{'' if rep else '*'}" for _, n, lv, r, rep in outliers[:30]) +
                more + "."]
    return out


def header(meas, a, n_items):
    meta = meas.get("@meta", {})
    errs = meas.get("@errors", {})
    out = ["## Estimated vs measured latency: ONNX Runtime CPU, one thread (bench/latency_vs_ort.py)", "",
           f"onnxruntime-node {meta.get('ort', 'unknown')}, CPU EP, 1 intra-op thread, sequential, profiling off, "
           f"graph optimization levels `disabled` (against fuseplan's original stage) and `extended` (against its "
           f"final stage). Measured {meta.get('start', '?')} to {meta.get('end', '?')} on cpu(s) "
           f"{meta.get('cpus', '?')}, pinned, nice -20; load average (1, 5, 15 min) {meta.get('load_start', '?')} at "
           f"the start, {meta.get('load_end', '?')} at the end (a shared 2-vCPU VM: other jobs ran on the other "
           f"core). {meta.get('repeat', '?')} repetitions a pause apart of {meta.get('rounds', '?')} rounds of up to "
           f"{meta.get('runs', '?')} runs; per model and level the minimum over repetitions of the min of round "
           f"medians. Net = raw - the model's harness twin (same inputs and outputs, one Expand per output). "
           f"`repeats`: (slowest - fastest) / fastest of the net time over the repetitions.", "",
           f"Models: {n_items} given, {n_items - len(errs)} run by ONNX Runtime."]
    if errs:
        by = {}
        for m, e in errs.items():
            by.setdefault(e, []).append(name_of(m))
        out.append("Not run (ONNX Runtime refuses them): " + "; ".join(
            f"{', '.join(sorted(v))} ({k})" for k, v in sorted(by.items())) + ".")
    return out + [""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ort", default="/tmp/ort")
    ap.add_argument("--device", action="append", required=True)
    ap.add_argument("--fuseplan", default="build/fuseplan")
    ap.add_argument("--cpu", type=int, help="core to pin to (default: the idlest)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--save")
    ap.add_argument("--measurements")
    ap.add_argument("-o", "--output", help="write the Markdown here (default: stdout)")
    ap.add_argument("--title", default="Estimated vs measured")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    items = []
    for m in a.models:
        s = input_spec(m)
        if s is not None:
            items.append({"model": os.path.abspath(m), "inputs": s})
    if a.measurements:
        with open(a.measurements) as f:
            meas = json.load(f)
    else:
        meas = measure(a.ort, items, a.cpu, a.rounds, a.runs, a.repeat)
    if a.save:
        with open(a.save, "w") as f:
            json.dump(meas, f, indent=1)
    out = header(meas, a, len(items))
    for dev in a.device:
        out += table(a.fuseplan, dev, items, meas, a.title) + [""]
    text = "\n".join(out)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
