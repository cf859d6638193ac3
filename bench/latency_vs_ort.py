#!/usr/bin/python3
"""Estimated vs measured latency: fuseplan's roofline estimate on a device profile (normally the
host's, from `fuseplan calibrate`, or one fitted by `fuseplan fit`) next to ONNX Runtime's measured
CPU latency (1 thread) with optimizations disabled (vs the "original" stage) and extended (vs the
"final" stage), and the speedup of fusion, estimated vs measured.

  /usr/bin/python3 bench/latency_vs_ort.py --ort DIR --device host.ini [--fuseplan build/fuseplan] MODEL...

Symbolic input dims are bound to 1 (a dim named like a sequence length to 16). Prints a Markdown
table and the share of models within +-30%.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {1: "float32", 11: "float64", 7: "int64", 6: "int32", 3: "int8", 2: "uint8", 9: "bool", 10: "float16"}


def input_spec(path):
    m = onnx.load(path)
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


def fuseplan(exe, device, model, spec):
    args = [exe, "report", "-f", "json", "--no-headroom", "--device", device, "--target", "ort-cpu"]
    for name, t in spec.items():
        args += ["--input", f"{name}:" + "x".join(str(d) for d in t["dims"])]
    r = subprocess.run(args + [model], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip())
    st = json.loads(r.stdout)["stages"]
    return st[0]["est_latency_s"] * 1e3, st[2]["est_latency_s"] * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ort", required=True)
    ap.add_argument("--device", required=True)
    ap.add_argument("--fuseplan", default="build/fuseplan")
    ap.add_argument("--runs", default="30")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    items = []
    for m in a.models:
        s = input_spec(m)
        if s is not None:
            items.append({"model": m, "inputs": s})
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(items, f)
    r = subprocess.run(["node", os.path.join(HERE, "ort_time.mjs"), "--ort", a.ort, "--spec", f.name, "--runs", a.runs],
                       capture_output=True, text=True)
    os.unlink(f.name)
    meas = {}
    for line in r.stdout.splitlines():
        d = json.loads(line)
        if "median_ms" in d:
            meas[(d["model"], d["level"])] = d["median_ms"]
    rows, within, total = [], 0, 0
    for it in items:
        m = it["model"]
        if (m, "disabled") not in meas or (m, "extended") not in meas:
            continue
        try:
            est0, est2 = fuseplan(a.fuseplan, a.device, m, it["inputs"])
        except RuntimeError as e:
            print(f"- `{m}`: {e}", file=sys.stderr)
            continue
        m0, m2 = meas[(m, "disabled")], meas[(m, "extended")]
        r0, r2 = est0 / m0, est2 / m2
        for ratio in (r0, r2):
            total += 1
            within += 0.7 <= ratio <= 1.3
        rows.append((os.path.relpath(m), m0, est0, r0, m2, est2, r2, m0 / m2, est0 / est2))
    print("| model | ORT disabled (ms) | est. original (ms) | ratio | ORT extended (ms) | est. final (ms) | ratio | "
          "measured speedup | est. speedup |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| `%s` | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f | %.2fx | %.2fx |" % row)
    if total:
        print(f"\n{within} of {total} estimates ({100.0 * within / total:.0f}%) within +-30% of the measurement "
              f"({len(rows)} models, 2 levels each)")


if __name__ == "__main__":
    main()
