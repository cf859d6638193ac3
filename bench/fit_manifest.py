#!/usr/bin/python3
"""Write the list of models bench/ort_profiles.mjs profiles, with their inputs, as JSON.

  /usr/bin/python3 bench/fit_manifest.py [--upgrade DIR] OUT.json [MODEL_DIR...]

Models: the samples in models/ (symbolic dims: batch 1, seq 8), every libonnx-testdata
pytorch-converted model with the tensors of its test_data_set_0 (so Embedding gets valid
indices), and every .onnx of the MODEL_DIRs given (bench/fit_models.py output; static shapes).
Input tensors are stored as base64 of their raw little-endian bytes. --upgrade DIR: testdata models
of an opset ONNX Runtime no longer implements (< 7) are listed as their conversion to opset 13,
written to DIR (ort_common.upgraded); without it they are listed as they are (ORT skips them).
"""
import base64
import glob
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

from ort_common import upgraded

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = "/usr/share/libonnx-testdata/data/pytorch-converted"
DIMS = {"batch": 1, "seq": 8}
DTYPES = {np.float32: "float32", np.int64: "int64", np.int32: "int32", np.bool_: "bool", np.float64: "float64"}


def graph_inputs(path):
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in inits]


def tensor_entry(arr):
    dtype = DTYPES.get(arr.dtype.type)
    if dtype is None:
        return None
    return {"dtype": dtype, "dims": list(arr.shape), "data": base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode()}


def testdata_models(upgrade=None):
    out = []
    for d in sorted(glob.glob(os.path.join(TESTDATA, "*"))):
        model = os.path.join(d, "model.onnx")
        pbs = sorted(glob.glob(os.path.join(d, "test_data_set_0", "input_*.pb")),
                     key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
        if not os.path.exists(model) or not pbs:
            continue
        names = graph_inputs(model)
        if len(names) != len(pbs):
            print(f"skip {model}: {len(names)} inputs, {len(pbs)} tensors", file=sys.stderr)
            continue
        inputs, ok = {}, True
        for name, pb in zip(names, pbs):
            t = onnx.TensorProto()
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            e = tensor_entry(numpy_helper.to_array(t))
            ok = ok and e is not None
            inputs[name] = e
        if ok:
            if upgrade:
                model = upgraded(model, upgrade)
            out.append({"key": "pt_" + os.path.basename(d)[5:], "model": model, "inputs": inputs})
    return out


def main():
    args = sys.argv[1:]
    upgrade = None
    if args and args[0] == "--upgrade":
        upgrade, args = os.path.abspath(args[1]), args[2:]
    out = args[0]
    models = [{"key": os.path.basename(p)[:-5], "model": p, "dims": DIMS}
              for p in sorted(glob.glob(os.path.join(ROOT, "models", "*.onnx")))]
    models += testdata_models(upgrade)
    for d in args[1:]:
        models += [{"key": os.path.basename(p)[:-5], "model": os.path.abspath(p), "dims": DIMS}
                   for p in sorted(glob.glob(os.path.join(d, "*.onnx")))]
    with open(out, "w") as f:
        json.dump({"models": models}, f)
    print(f"{out}: {len(models)} models")


if __name__ == "__main__":
    main()
