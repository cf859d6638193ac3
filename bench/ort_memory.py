#!/usr/bin/python3
"""ort_memory.py - fuseplan's prediction of what ONNX Runtime's CPU arena holds (`memory --planner ort`)
against what ORT 1.30 reports running the model (bench/ort_run.c in memory mode: OrtApi::AllocatorGetStats
on the session's CPU allocator, one intra-op thread, sequential execution, the level given).

  /usr/bin/python3 bench/ort_memory.py --fuseplan build/fuseplan --ort bench --out bench/out/ort_memory \\
      [--models-dir bench/out/fidelity] [--level disabled|basic|extended|all] [--device cpu-avx512] \\
      [--doc docs/benchmarks.md] [--reuse] [--batches 1,8] [--only REGEX]

The corpus, at each batch of --batches: the PyTorch exports of MODELS-DIR/torch (at another batch
exported again by bench/gen_torch_models.py --batch, into OUT/torch_b<N>), the generated networks of
MODELS-DIR/networks (at another batch rebatched into OUT/networks_b<N>: first dims times N), the sample
decoders of models/ fixed at bench/fidelity.py's decode step (MODELS-DIR/static at batch 1, else
OUT/static_b<N> with batch_size N), the PaddleOCR models of MODELS-DIR/paddle (at PaddleOCR's image
sizes, ort_common.PADDLE_DIMS), and the same torch networks exported with a dynamic batch
(bench/gen_torch_models.py --dynamic-batch, into OUT/models; needs python3-torch) bound to it.
--only keeps the rows whose name matches (and the other rows of OUT/ort_memory.json). Per model and
batch:

  measured  the arena's MaxInUse after the first Run (bytes in use at the peak, the initializers
            ORT holds in it from session creation included) and after a second Run (the memory pattern the
            first one recorded is used from then on)
  predicted fuseplan's total_first_run_bytes and total_steady_bytes (its JSON "ort" object)

The level defaults to disabled, where ORT runs the graph as exported, the graph fuseplan plans. At
another level fuseplan plans the graph its target ort-cpu-LEVEL leaves on --device (default
cpu-avx512: the NCHWc block of 16 of an AVX-512 host; level all's blocked tensors are padded to it):
`memory --planner ort --target ort-cpu-LEVEL --device D`. The table goes into --doc between
<!-- ort-memory:begin --> and <!-- ort-memory:end --> (another level: <!-- ort-memory-LEVEL:begin -->
and <!-- ort-memory-LEVEL:end -->), the raw numbers into OUT/ort_memory.json (another level:
OUT/ort_memory_LEVEL.json; --reuse: the table again from that file, nothing measured). Exit status 0
when written, 2 when ORT or fuseplan is missing.
"""
import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench import write_section  # noqa: E402
from ort_common import PADDLE_DIMS, bound_dims, ort_run_tool  # noqa: E402

BEGIN, END = "<!-- ort-memory:begin -->", "<!-- ort-memory:end -->"
TITLE = "## Memory against ONNX Runtime's arena"
NP_OF = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64}
MIB = 1 << 20


def harness(a):
    """(path of the compiled bench/ort_run.c, path of onnxruntime-node's libonnxruntime.so)."""
    try:
        return ort_run_tool(a.ort, a.out)
    except SystemExit as e:
        sys.stderr.write(f"ort_memory: {e}\n")
        sys.exit(2)


def inputs_of(path, batch):
    """[(name, elem type, dims)] of the graph inputs, the first symbolic dim bound to batch, the others
    to ort_common.PADDLE_DIMS' value for the model, else 1."""
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    bind = bound_dims(PADDLE_DIMS, os.path.basename(path)[:-5])
    out = []
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        dims = [d.dim_value if not d.dim_param else (batch if k == 0 else bind.get(d.dim_param, 1))
                for k, d in enumerate(vi.type.tensor_type.shape.dim)]
        out.append((vi.name, vi.type.tensor_type.elem_type, dims))
    return out, [o.name for o in m.graph.output]


def spec_file(a, key, path, batch):
    """The bench/ort_run.c memory-mode spec of one model at one batch (float inputs 0, integer ones 1)."""
    d = os.path.join(a.out, "inputs", key)
    os.makedirs(d, exist_ok=True)
    ins, outs = inputs_of(path, batch)
    lines = ["mode memory", f"level {a.level}", f"model {os.path.abspath(path)}"]
    for k, (name, code, dims) in enumerate(ins):
        p = os.path.join(d, f"in{k}.bin")
        fill = np.zeros if code in (1, 10, 11) else np.ones  # ids and masks of 1: attention over every token
        fill(dims, NP_OF.get(code, np.float32)).tofile(p)
        lines.append(" ".join(["input", name, str(code), str(len(dims))] + [str(x) for x in dims] + [p]))
    lines += [f"output {o}" for o in outs]
    sp = os.path.join(d, "memory.spec")
    with open(sp, "w") as f:
        f.write("\n".join(lines) + "\n")
    return sp, ins


def measure(exe, lib, spec):
    r = subprocess.run([exe, lib, spec], capture_output=True, text=True)
    try:
        res = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": (r.stderr.strip() or "no output")[:200]}
    return res


def predict(a, path, ins):
    args = [a.fuseplan, "memory", "--planner", "ort", "--format", "json", path]
    if a.level != "disabled":
        args += ["--target", f"ort-cpu-{a.level}", "--device", a.device]
    for name, _, dims in ins:
        if dims:
            args += ["--input", f"{name}:" + "x".join(str(x) for x in dims)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1][:200]}
    return json.loads(r.stdout)["ort"]


def rebatched(path, out, batch):
    """A copy of batch-1 model path, written to out, at `batch` times its first axis: every graph input's
    and output's first dim multiplied, a Reshape's literal leading 1 made 0 (copy the input's first dim,
    the same at batch 1), value_info dropped for ORT to infer again; kept when out is newer than path. out."""
    if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(path):
        return out
    m = onnx.load(path)
    for vi in list(m.graph.input) + list(m.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if dims and dims[0].dim_value:
            dims[0].dim_value *= batch
    inits = {t.name: t for t in m.graph.initializer}
    for n in m.graph.node:
        t = inits.get(n.input[1]) if n.op_type == "Reshape" and len(n.input) > 1 else None
        if t is not None:
            shape = numpy_helper.to_array(t).copy()
            if shape.size and shape[0] == 1:
                shape[0] = 0
                t.CopyFrom(numpy_helper.from_array(shape, t.name))
    del m.graph.value_info[:]
    onnx.save(m, out)
    return out


def decoders_at(a, batch):
    """The sample decoders (ROOT/models/decoder_*.onnx) fixed at bench/fidelity.py's decode step with
    batch_size `batch`: their paths under OUT/static_b<batch>."""
    from fidelity import DECODE_STEP, static_copy
    d = os.path.join(a.out, f"static_b{batch}")
    os.makedirs(d, exist_ok=True)
    step = dict(DECODE_STEP, batch_size=batch)
    return [static_copy(p, os.path.join(d, os.path.basename(p)[:-5] + "_static.onnx"), step)
            for p in sorted(glob.glob(os.path.join(ROOT, "models", "decoder_*.onnx")))]


def torch_exports(a, batch):
    """[path] of bench/gen_torch_models.py's exports: the fidelity corpus's at batch 1, else exported at
    `batch` into OUT/torch_b<batch> (static shapes, the same weights)."""
    if batch == 1:
        return sorted(glob.glob(os.path.join(a.models_dir, "torch", "*.onnx")))
    d = os.path.join(a.out, f"torch_b{batch}")
    r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "gen_torch_models.py"), "--batch", str(batch), d],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"ort_memory: no batch-{batch} exports ({r.stderr.strip()[-200:]})\n")
    return sorted(glob.glob(os.path.join(d, "*.onnx")))


def corpus(a):
    """[(name, path, batch)] for each batch asked: the fidelity corpus's PyTorch exports, generated
    networks and static decoders (at batch 1 as they are; at another batch re-exported, rebatched
    and fixed again), its PaddleOCR models (their dynamic batch bound), and the same PyTorch networks
    exported with a dynamic batch, bound to it."""
    from gen_torch_models import NAMES
    wanted = {g: any(re.search(a.only, f"{g}/{n}") for n in NAMES) for g in ("torch", "dynamic")}
    rows = []
    for batch in a.batches:
        for p in torch_exports(a, batch) if wanted["torch"] else []:
            rows.append((f"torch/{os.path.basename(p)[:-5]}", p, batch))
        nets = sorted(glob.glob(os.path.join(a.models_dir, "networks", "*.onnx")))
        if batch != 1:
            d = os.path.join(a.out, f"networks_b{batch}")
            os.makedirs(d, exist_ok=True)
            nets = [rebatched(p, os.path.join(d, os.path.basename(p)), batch) for p in nets]
        rows += [(f"networks/{os.path.basename(p)[:-5]}", p, batch) for p in nets]
        dec = sorted(glob.glob(os.path.join(a.models_dir, "static", "*.onnx"))) if batch == 1 else decoders_at(a, batch)
        rows += [(f"static/{os.path.basename(p)[:-5]}", p, batch) for p in dec]
        rows += [(f"paddle/{os.path.basename(p)[:-5]}", p, batch)
                 for p in sorted(glob.glob(os.path.join(a.models_dir, "paddle", "*.onnx")))]
    dyn = os.path.join(a.out, "models")
    r = subprocess.run(["true"]) if not wanted["dynamic"] else subprocess.run(["/usr/bin/python3", os.path.join(HERE, "gen_torch_models.py"), "--dynamic-batch", dyn],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"ort_memory: no dynamic-batch exports ({r.stderr.strip()[-200:]})\n")
    for p in sorted(glob.glob(os.path.join(dyn, "*.onnx"))):
        rows += [(f"dynamic/{os.path.basename(p)[:-5]}", p, batch) for batch in a.batches]
    return [r for r in rows if re.search(a.only, r[0])]


def run(a):
    exe, lib = harness(a)
    results = []
    for name, path, batch in corpus(a):
        spec, ins = spec_file(a, f"{name.replace('/', '_')}_b{batch}", path, batch)
        m, p = measure(exe, lib, spec), predict(a, path, ins)
        results.append({"model": name, "batch": batch, "measured": m, "predicted": p})
        sys.stderr.write(f"ort_memory: {name} batch {batch} done\n")
    return results


def err(pred, meas):
    return pred / meas - 1 if meas else float("nan")


def table(results, level, version):
    lines = ["model                                  batch   ORT run 1  predicted   error    ORT run 2  predicted   "
             "error   init ORT/pred",
             f"(MiB; CPU arena MaxInUse, initializers in it included; ORT {version}, level {level}, 1 thread)"]
    within = {1: [0, 0], 8: [0, 0]}
    for r in results:
        m, p = r["measured"], r["predicted"]
        if m.get("error") or p.get("error"):
            why = m.get("error") or p.get("error")
            lines.append(f"{r['model'][:38]:38s} {r['batch']:5d}   failed: {why[:80]}")
            continue
        m1, m2, init = m["run1"]["MaxInUse"], m["run2"]["MaxInUse"], m["session"]["InUse"]
        p1 = p["total_first_run_bytes"]
        p2 = max(p1, p["total_steady_bytes"])  # MaxInUse after run 2 is the peak over both runs
        e1, e2 = err(p1, m1), err(p2, m2)
        w = within.setdefault(r["batch"], [0, 0])
        w[0] += abs(e1) <= 0.10
        w[1] += 1
        lines.append(f"{r['model'][:38]:38s} {r['batch']:5d} {m1 / MIB:10.2f} {p1 / MIB:10.2f} {e1:+7.1%} "
                     f"{m2 / MIB:11.2f} {p2 / MIB:10.2f} {e2:+7.1%} {init / MIB:8.2f}/{p['weight_arena_bytes'] / MIB:.2f}")
    summary = "; ".join(f"batch {b}: {w[0]} of {w[1]} within ±10%" for b, w in sorted(within.items()) if w[1])
    return lines, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fuseplan", default=os.path.join(ROOT, "build/fuseplan"))
    ap.add_argument("--ort", default=os.path.join(ROOT, "bench"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/ort_memory"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "bench/out/fidelity"))
    ap.add_argument("--level", default="disabled", choices=["disabled", "basic", "extended", "all"])
    ap.add_argument("--device", default="cpu-avx512", help="the device fuseplan plans for at a level other than "
                    "disabled (its NCHWc block)")
    ap.add_argument("--doc", default=None)
    ap.add_argument("--batches", default="1,8", help="the batches, comma-separated (default 1,8)")
    ap.add_argument("--only", default="", help="only the models whose name (torch/pt_resnet18, ...) matches this regex")
    ap.add_argument("--reuse", action="store_true", help="the table from OUT/ort_memory.json, nothing measured")
    a = ap.parse_args()
    a.batches = [int(b) for b in a.batches.split(",")]
    suffix = "" if a.level == "disabled" else f"_{a.level}"
    saved = os.path.join(a.out, f"ort_memory{suffix}.json")
    if not os.access(a.fuseplan, os.X_OK):
        sys.stderr.write(f"ort_memory: {a.fuseplan} not built\n")
        return 2
    os.makedirs(a.out, exist_ok=True)
    if a.reuse:
        with open(saved) as f:
            results = json.load(f)
    else:
        results = run(a)
        if a.only and os.path.exists(saved):  # the other rows kept from the last run
            with open(saved) as f:
                old = json.load(f)
            new = {(r["model"], r["batch"]): r for r in results}
            results = [new.pop((r["model"], r["batch"]), r) for r in old] + list(new.values())
        with open(saved, "w") as f:
            json.dump(results, f, indent=1)
    version = next((r["measured"].get("version") for r in results if r["measured"].get("version")), "1.30")
    lines, summary = table(results, a.level, version)
    print("\n".join(lines))
    print(summary)
    if a.doc:
        day = datetime.date.today().isoformat()
        block = (f"`bench/ort_memory.py` ({day}): the first run's and a later run's peak of ONNX Runtime's CPU arena "
                 "(`AllocatorGetStats` MaxInUse through bench/ort_run.c) against `fuseplan memory --planner ort`" +
                 ("" if a.level == "disabled" else f" --target ort-cpu-{a.level} --device {a.device}") + ". "
                 f"First run within ±10%: {summary}.\n\n```text\n" + "\n".join(lines) + "\n```\n")
        if a.level == "disabled":
            write_section(a.doc, TITLE, BEGIN, END, block)
        else:
            write_section(a.doc, f"{TITLE} at level {a.level}", f"<!-- ort-memory-{a.level}:begin -->",
                          f"<!-- ort-memory-{a.level}:end -->", block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
