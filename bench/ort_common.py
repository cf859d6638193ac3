"""Shared by the ONNX Runtime benchmarks (bench/latency_vs_ort.py, bench/ort_calibrate.py,
bench/runtime_calibration.py, bench/ort_memory.py): running bench/ort_time.mjs on a quiet core, the
sizes PaddleOCR's exports are run at, and reading a bench/ort_run.c spec's inputs.

A shared machine has other processes on its cores. The timing process runs at nice -20 when
allowed (a nice-0 neighbour on the same core then gets about 1% of it) and pinned (taskset) to the
core that was idlest over the half second before the measurement starts, unless a core is given.
That does not stop a neighbour on the other core: on a VM whose two vCPUs share a physical core
(SMT) or its caches, a busy neighbour halves an L2-resident kernel's speed for as long as it runs
(minutes). time_models(repeat=R) therefore measures R times, a pause apart, each time on the then
idlest core, and keeps each model's fastest: the minimum over repetitions of the min of medians.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# PaddleOCR's exports at the sizes they read (its tools' defaults: the recognizer a text line 48 x
# 320, the direction classifier a 48 x 192 crop; the detector a 320 x 320 image), as bound_dims
# specs: paddle2onnx names the recognizer's width and the detector's height alike.
PADDLE_DIMS = ["p2o.DynamicDimension.1=320",
               "ch_PP-OCRv4_det_infer:p2o.DynamicDimension.1=320", "ch_PP-OCRv4_det_infer:p2o.DynamicDimension.2=320",
               "ch_ppocr_mobile_v2.0_cls_infer:p2o.DynamicDimension.1=48",
               "ch_ppocr_mobile_v2.0_cls_infer:p2o.DynamicDimension.2=192"]


def spec_inputs(lines):
    """[(name, dims)] of the input lines of a bench/ort_run.c spec ("input NAME ELEM RANK DIMS... FILE"),
    dims as the strings the spec writes."""
    out = []
    for ln in lines:
        if ln.startswith("input "):
            f = ln.split()
            out.append((f[1], f[4:4 + int(f[3])]))
    return out


def bound_dims(specs, key):
    """{dim name: value} of the specs that bind network `key`'s dims: NAME=VALUE binds it in every
    network, NETWORK:NAME=VALUE only in that one (and wins)."""
    out, own = {}, {}
    for x in specs:
        name, value = x.split("=", 1)
        net, _, name = name.rpartition(":")
        if not net or net == key:
            (own if net else out)[name] = int(value)
    return {**out, **own}


def _cpu_busy():
    """Busy jiffies per cpu from /proc/stat."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            parts = line.split()
            if parts[0].startswith("cpu") and parts[0] != "cpu":
                v = [int(x) for x in parts[1:]]
                out[int(parts[0][3:])] = (sum(v) - v[3] - v[4], sum(v))
    return out


def idlest_cpu():
    """The cpu with the least busy time over half a second (None when /proc/stat is unreadable)."""
    try:
        a = _cpu_busy()
        time.sleep(0.5)
        b = _cpu_busy()
    except OSError:
        return None
    allowed = os.sched_getaffinity(0)
    load = {c: (b[c][0] - a[c][0]) / max(b[c][1] - a[c][1], 1) for c in b if c in a and c in allowed}
    return min(load, key=load.get) if load else None


def pinned(cmd, cpu=None, pin=True):
    """cmd at nice -20 (when allowed) on `cpu` (default: the idlest one; pin False: on every CPU, for a
    run on more than one thread). Returns (argv, cpu)."""
    cpu = None if not pin else idlest_cpu() if cpu is None else cpu
    pre = []
    if cpu is not None and shutil.which("taskset"):
        pre += ["taskset", "-c", str(cpu)]
    if subprocess.run(["nice", "-n", "-20", "true"], capture_output=True).returncode == 0:
        pre += ["nice", "-n", "-20"]
    return pre + cmd, cpu


def ort_run_tool(ort, out):
    """(fp_bench_ort_run, libonnxruntime.so): bench/ort_run.c built under out with the product's ONNX
    Runtime loader runtime/ort.c (again when a source is newer), and the library onnxruntime-node
    ships under ort/node_modules. SystemExit naming the folder when there is none."""
    import glob
    libs = sorted(glob.glob(os.path.join(ort, "node_modules/onnxruntime-node/bin/napi-v*/linux/x64/libonnxruntime.so*")))
    if not libs:
        raise SystemExit(f"no libonnxruntime.so under {ort}/node_modules/onnxruntime-node (npm install it there)")
    root = os.path.dirname(HERE)
    srcs = [os.path.join(root, p) for p in ("bench/ort_run.c", "runtime/ort.c", "runtime/ort.h")]
    exe = os.path.join(out, "fp_bench_ort_run")
    if not os.path.exists(exe) or os.path.getmtime(exe) < max(os.path.getmtime(p) for p in srcs):
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "json-glib-1.0"], capture_output=True, text=True,
                               check=True).stdout.split()
        subprocess.run(["gcc", "-O2", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I", root, "-o", exe] + srcs[:2] +
                       flags + ["-ldl"], check=True)
    return exe, libs[-1]


def upgraded(model, outdir):
    """model, or when its opset is one ONNX Runtime no longer implements (< 7) its conversion to opset
    13 (onnx.version_converter), written once to outdir as <test folder name>.onnx; model itself
    when the conversion fails (ORT then refuses it and the tables say why)."""
    import onnx
    from onnx import version_converter
    mp = onnx.load(model, load_external_data=False)
    opset = max((o.version for o in mp.opset_import if o.domain in ("", "ai.onnx")), default=0)
    if opset >= 7:
        return model
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, os.path.basename(os.path.dirname(model)) + ".onnx")
    try:
        if not os.path.exists(out):
            up = version_converter.convert_version(mp, 13)
            up.ir_version = max(up.ir_version, 7)  # opset 13 needs IR version 7
            onnx.save(up, out)
        return out
    except Exception:  # noqa: BLE001 - see the docstring
        return model


def time_models(ort, items, levels=("disabled", "extended"), cpu=None, rounds=7, runs=40, round_ms=1000, repeat=1,
                pause=20, each=None):
    """{(model, level): seconds} for items [{"model", "inputs"}] (bench/ort_time.mjs, min of medians;
    the minimum over `repeat` measurements `pause` seconds apart), errors {(model, level): message},
    and the cpus used. `each` (a dict), when given, receives every repetition's time per key, in
    order (how well the measurement repeats)."""
    best, errors, cpus = {}, {}, []
    for r in range(repeat):
        if r:
            time.sleep(pause)
        t, e, c = _time_once(ort, items, levels, cpu, rounds, runs, round_ms)
        cpus.append(c)
        errors.update(e)
        for k, v in t.items():
            best[k] = min(v, best.get(k, v))
            if each is not None:
                each.setdefault(k, []).append(v)
    return best, {k: v for k, v in errors.items() if k not in best}, cpus


def _time_once(ort, items, levels, cpu, rounds, runs, round_ms):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(items, f)
    cmd = ["node", os.path.join(HERE, "ort_time.mjs"), "--ort", ort, "--spec", f.name, "--levels", ",".join(levels),
           "--rounds", str(rounds), "--runs", str(runs), "--round-ms", str(round_ms)]
    argv, cpu = pinned(cmd, cpu)
    r = subprocess.run(argv, capture_output=True, text=True)
    os.unlink(f.name)
    if r.returncode:
        raise RuntimeError(r.stderr.strip()[-2000:])
    times, errors = {}, {}
    for line in r.stdout.splitlines():
        d = json.loads(line)
        if "ms" in d:
            times[(d["model"], d["level"])] = d["ms"] * 1e-3
        else:
            errors[(d["model"], d["level"])] = d.get("error")
    return times, errors, cpu
