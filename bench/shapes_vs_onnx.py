#!/usr/bin/python3
"""Compare fuseplan's inferred shapes with onnx.shape_inference.infer_shapes (Debian python3-onnx).

  /usr/bin/python3 bench/shapes_vs_onnx.py [--fuseplan build/fuseplan] MODEL.onnx...

For every value both infer (every node output), the shapes must agree: same rank, and every dim
both know is equal (a symbol equals the same symbol). Dims only one side knows are counted. Prints one line per model and every mismatch; exit 1 on
a mismatch.
"""
import argparse
import json
import subprocess
import sys

import onnx
from onnx import shape_inference


def onnx_shapes(path):
    m = shape_inference.infer_shapes(onnx.load(path))
    out = {}
    for vi in list(m.graph.value_info) + list(m.graph.output):
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        dims = []
        for d in t.shape.dim:
            p = d.dim_param if not d.HasField("dim_value") else None
            # onnx invents "unk__N" names for unknown dims: the same as fuseplan's null
            dims.append(d.dim_value if d.HasField("dim_value") else (None if not p or p.startswith("unk__") else p))
        out[vi.name] = dims
    return out


def fuseplan_shapes(exe, path):
    r = subprocess.run([exe, "shapes", "-f", "json", path], capture_output=True, text=True, check=True)
    doc = json.loads(r.stdout)
    out = {}
    for n in doc["nodes"]:
        if "graph" in n:
            continue
        for o in n["outputs"]:
            out[o["name"]] = o["shape"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fuseplan", default="build/fuseplan")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    bad = 0
    for path in a.models:
        ref, ours = onnx_shapes(path), fuseplan_shapes(a.fuseplan, path)
        both = [k for k in ours if k in ref and ours[k] is not None]
        def differ(a, b):
            return len(a) != len(b) or any(x is not None and y is not None and x != y for x, y in zip(a, b))
        mism = [(k, ours[k], ref[k]) for k in both if differ(ours[k], ref[k])]
        finer = [k for k in both if not differ(ours[k], ref[k]) and ours[k] != ref[k]]
        only_ours = [k for k in ours if ours[k] is not None and k not in ref]
        print(f"{path}: {len(both)} values compared, {len(mism)} mismatches, "
              f"{len(finer)} with dims only fuseplan knows, {len(only_ours)} inferred by fuseplan only")
        for k, o, r in mism:
            print(f"  {k}: fuseplan {o}, onnx {r}")
        bad += len(mism)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
