#!/usr/bin/python3
"""train_memory.py - training memory of `make bench`: fuseplan's saved_activation_bytes at batch 8
against what PyTorch really saves for backward, on torchvision models exported to ONNX.

  /usr/bin/python3 bench/train_memory.py --fuseplan build/fuseplan --out bench/out/train \\
      [--doc docs/benchmarks.md] [--batch 8] [models...]

Per model (random weights, seed 0, model.train(), CPU, float32):
  PyTorch   one forward pass at --batch under torch.autograd.graph.saved_tensors_hooks: every
            tensor an op saves, counted once per storage (storage data pointer; its whole nbytes,
            as a saved view keeps its base alive), parameters and buffers left out
  export    torch.onnx.export(training=TrainingMode.PRESERVE: BatchNormalization in training
            mode, Dropout kept), opset 17, a symbolic batch; made once into --out
  fuseplan  `train MODEL --batch B --no-headroom -f json`: training.saved_activation_bytes
The table (error = fuseplan / PyTorch - 1; the target is within +-5% on each model) is written to
--doc between <!-- train:begin --> and <!-- train:end --> (added at the end when missing) and to
OUT/train_memory.json. Exit status 0 when the document is written, 2 when torch or fuseplan is
missing.
"""
import argparse
import datetime
import importlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench import write_section  # noqa: E402
BEGIN, END = "<!-- train:begin -->", "<!-- train:end -->"
TITLE = "## Training memory: saved activations against PyTorch"
# stochastic depth draws its noise with an in-place bernoulli_, which torch.onnx cannot export in
# training mode: those models are built with it off (identity in training too), here and in PyTorch
KWARGS = {"efficientnet_b0": {"stochastic_depth_prob": 0.0}, "convnext_tiny": {"stochastic_depth_prob": 0.0}}
MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "densenet121",
          "shufflenet_v2_x1_0", "squeezenet1_0", "regnet_y_400mf", "convnext_tiny", "vit_b_16"]


def bench_args(ap):
    """The options every training bench takes: the fuseplan executable and the output folder."""
    ap.add_argument("--fuseplan", default=os.path.join(ROOT, "build", "fuseplan"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "train"))


def start(name, modules, *options):
    """The bench `name`'s arguments (bench_args, --doc, and each (flags, keywords) of options) and its
    modules imported (tools), or None after saying why it cannot run."""
    ap = argparse.ArgumentParser()
    bench_args(ap)
    ap.add_argument("--doc", default=None)
    for flags, kw in options:
        ap.add_argument(*flags, **kw)
    a = ap.parse_args()
    mods = tools(name, a.fuseplan, *modules)
    return (a, mods) if mods else None


def run_all(name, names, run, line):
    """run(model) for each model, a line on stderr each (line(row)); the rows."""
    rows = []
    for model in names:
        rows.append(run(model))
        sys.stderr.write(f"{name}: {model}: {line(rows[-1])}\n")
    return rows


def finish(a, rows, json_name, section):
    """The rows into OUT/json_name; with --doc, section (title, begin, end, text) into the document."""
    with open(os.path.join(a.out, json_name), "w") as f:
        json.dump(rows, f, indent=1)
    if a.doc:
        write_section(a.doc, *section)


def tools(name, exe, *modules):
    """The modules imported, or None after saying on stderr why the bench `name` cannot run (a
    module missing, no fuseplan build)."""
    try:
        mods = [importlib.import_module(m) for m in modules]
    except ImportError as e:
        sys.stderr.write(f"{name}: {e} (apt-get install {' '.join('python3-' + m for m in modules)})\n")
        return None
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"{name}: {exe}: no fuseplan build\n")
        return None
    return mods


def storage_of(t):
    s = t.storage()
    nbytes = s.nbytes() if hasattr(s, "nbytes") else s.size() * t.element_size()
    return s.data_ptr(), nbytes


def measure(torch, model, x):
    """Bytes of the distinct storages one forward pass saves for backward (no parameters, buffers)."""
    skip = {storage_of(p)[0] for p in model.parameters()} | {storage_of(b)[0] for b in model.buffers()}
    seen = {}

    def pack(t):
        ptr, nbytes = storage_of(t)
        if ptr not in skip:
            seen[ptr] = max(seen.get(ptr, 0), nbytes)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x)
    return sum(seen.values()), len(seen)


def export(torch, model, x, path):
    if os.path.exists(path):
        return
    tmp = path + ".tmp"
    torch.onnx.export(model, x, tmp, opset_version=17, training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    os.replace(tmp, path)


def fuseplan_saved(exe, path, batch, *extra):
    """`train PATH --batch B EXTRA... --no-headroom -f json`: its "training" object and None, or
    None and the error."""
    r = subprocess.run([exe, "train", path, "--batch", str(batch), *extra, "--no-headroom", "-f", "json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
    return json.loads(r.stdout)["training"], None


def run_model(torch, torchvision, name, a):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(**KWARGS.get(name, {}))
    model.train()
    size = 224
    x = torch.randn(a.batch, 3, size, size)
    saved, tensors = measure(torch, model, x)
    path = os.path.join(a.out, name + ".onnx")
    export(torch, model, torch.randn(1, 3, size, size), path)
    fp, err = fuseplan_saved(a.fuseplan, path, a.batch)
    row = {"model": name, "torch_bytes": saved, "torch_storages": tensors, "fuseplan_bytes": None, "error": err}
    if fp:
        row["fuseplan_bytes"] = fp["saved_activation_bytes"]
        row["fuseplan_peak_bytes"] = fp["peak_bytes"]
        row["error_pct"] = 100.0 * (fp["saved_activation_bytes"] / saved - 1.0)
    return row


def table(rows, batch):
    out = [f"Measured {datetime.date.today().isoformat()} by `make bench` (bench/train_memory.py): batch {batch}, "
           "float32, CPU, random weights. PyTorch: the distinct storages one forward pass saves for backward "
           "(`saved_tensors_hooks`), parameters and buffers left out; efficientnet_b0 and convnext_tiny with "
           "stochastic depth off (torch.onnx cannot export its in-place bernoulli_ in training mode). fuseplan: `train MODEL --batch "
           f"{batch}` on the model exported with TrainingMode.PRESERVE, opset 17.", "",
           "| model | PyTorch saved | fuseplan saved | error | within +-5% | fuseplan step peak (adam) |",
           "|---|---|---|---|---|---|"]
    ok = 0
    for r in rows:
        if r["fuseplan_bytes"] is None:
            out.append(f"| {r['model']} | {r['torch_bytes']:,} | failed: {r['error']} | | no | |")
            continue
        within = abs(r["error_pct"]) <= 5.0
        ok += within
        out.append(f"| {r['model']} | {r['torch_bytes']:,} | {r['fuseplan_bytes']:,} | {r['error_pct']:+.2f}% | "
                   f"{'yes' if within else 'no'} | {r['fuseplan_peak_bytes'] / 1e6:,.1f} MB |")
    out += ["", f"Within +-5%: {ok} of {len(rows)} models."]
    return "\n".join(out)


def main():
    got = start("train_memory", ["torch", "torchvision"], (["--batch"], {"type": int, "default": 8}),
                (["models"], {"nargs": "*"}))
    if not got:
        return 2
    a, (torch, torchvision) = got
    torch.set_num_threads(os.cpu_count() or 1)
    os.makedirs(a.out, exist_ok=True)
    rows = run_all("train_memory", a.models or MODELS, lambda name: run_model(torch, torchvision, name, a),
                   lambda r: f"torch {r['torch_bytes']:,} fuseplan {r['fuseplan_bytes']} "
                             f"{r.get('error_pct', float('nan')):+.2f}%")
    finish(a, rows, "train_memory.json", (TITLE, BEGIN, END, table(rows, a.batch)))
    return 0


if __name__ == "__main__":
    import warnings
    warnings.filterwarnings("ignore")
    sys.exit(main())
