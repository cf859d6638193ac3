#!/usr/bin/python3
"""same_graph.py - every command sees the same graph, on exports we did not write by hand: torchvision
networks exported by torch.onnx with a dynamic batch (opset 17, eval mode), each analyzed by
`shapes`, `memory`, `report` and `train` with the same binding (--input input:1x3x224x224).

  /usr/bin/python3 bench/same_graph.py --fuseplan build/fuseplan --out bench/out/same_graph \\
      [--doc docs/benchmarks.md] [models...]

Per model: the values of unknown size each command reports (`unknown_values` of its JSON), the
activation bytes of report's graph before fusion (stage "original", ONNX Runtime's target, which
keeps the shape computations of a dynamic export as runtime ops; and on tensorrt, which folds them)
against the activations memory plans (`memory.naive_bytes`: every activation in its own buffer),
report's estimated latency, and the bytes train says backward saves against PyTorch's own count
(saved_tensors_hooks, one forward pass at batch 1, distinct storages, parameters aside:
bench/train_memory.py's measure). The table goes into --doc between <!-- same-graph:begin --> and
<!-- same-graph:end -->. Exit status 0 when written, 2 when torch or fuseplan is missing.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench import write_section  # noqa: E402
from train_memory import measure  # noqa: E402

BEGIN, END = "<!-- same-graph:begin -->", "<!-- same-graph:end -->"
TITLE = "## Every command sees the same graph: torchvision exports with a dynamic batch"
MODELS = ["vit_b_16", "swin_t", "convnext_tiny"]
BIND = ["--input", "input:1x3x224x224"]


def export(torch, model, path):
    if os.path.exists(path):
        return
    tmp = path + ".tmp"
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), tmp, opset_version=17, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    os.replace(tmp, path)


def fuseplan_json(exe, *args):
    r = subprocess.run([exe, *args, "-f", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}")
    return json.loads(r.stdout)


def run_model(torch, torchvision, name, a):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    path = os.path.join(a.out, name + ".onnx")
    export(torch, model, path)
    saved, _ = measure(torch, model, torch.randn(1, 3, 224, 224))
    sh = fuseplan_json(a.fuseplan, "shapes", path, *BIND)
    mem = fuseplan_json(a.fuseplan, "memory", path, *BIND)
    rep = fuseplan_json(a.fuseplan, "report", path, *BIND, "--no-headroom")
    trt = fuseplan_json(a.fuseplan, "report", path, *BIND, "--no-headroom", "--target", "tensorrt")
    tr = fuseplan_json(a.fuseplan, "train", path, *BIND, "--no-headroom")["training"]
    return {"model": name, "unknown": [sh["unknown_values"], mem["unknown_values"], rep["unknown_values"],
                                       tr["unknown_values"]],
            "memory_bytes": mem["memory"]["naive_bytes"], "report_bytes": rep["stages"][0]["activation_bytes"],
            "trt_bytes": trt["stages"][0]["activation_bytes"], "latency_ms": rep["stages"][0]["est_latency_s"] * 1e3,
            "torch_saved": saved, "train_saved": tr["saved_activation_bytes"]}


def table(rows):
    out = [f"Measured {datetime.date.today().isoformat()} by `make bench` (bench/same_graph.py): torchvision "
           "networks exported by torch.onnx (opset 17, eval mode, dynamic batch), every command with "
           "`--input input:1x3x224x224`. Unknown: the values of unknown size that `shapes`, `memory`, `report` and "
           "`train` report. Activations: every activation in its own buffer, as `memory` plans them and in "
           "`report`'s graph before fusion on ONNX Runtime (which keeps the dynamic export's shape computations "
           "as ops, their small int64 tensors included) and on tensorrt (which folds them). Saved: what `train` "
           "says backward keeps, and PyTorch's count (saved_tensors_hooks, batch 1).", "",
           "| model | unknown (shapes / memory / report / train) | memory activations | report (ORT) | "
           "report (tensorrt) | est. latency | train saved | PyTorch saved | error |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['model']} | failed: {r['error']} | | | | | | | |")
            continue
        err = 100.0 * (r["train_saved"] / r["torch_saved"] - 1.0)
        out.append(f"| {r['model']} | {' / '.join(str(u) for u in r['unknown'])} | {r['memory_bytes']:,} | "
                   f"{r['report_bytes']:,} | {r['trt_bytes']:,} | {r['latency_ms']:.2f} ms | {r['train_saved']:,} | "
                   f"{r['torch_saved']:,} | {err:+.4f}% |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fuseplan", default=os.path.join(ROOT, "build", "fuseplan"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "same_graph"))
    ap.add_argument("--doc", default=None)
    ap.add_argument("models", nargs="*", default=MODELS)
    a = ap.parse_args()
    try:
        import torch
        import torchvision
    except ImportError:
        sys.stderr.write("same_graph: needs Debian's python3-torch and python3-torchvision: skipped\n")
        return 2
    if not os.path.exists(a.fuseplan):
        sys.stderr.write(f"same_graph: no {a.fuseplan}\n")
        return 2
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for name in a.models:
        try:
            rows.append(run_model(torch, torchvision, name, a))
        except RuntimeError as e:
            rows.append({"model": name, "error": str(e)})
        sys.stderr.write(f"same_graph: {name} done\n")
    block = table(rows)
    print(block)
    if a.doc:
        write_section(a.doc, TITLE, BEGIN, END, block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
