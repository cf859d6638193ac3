#!/usr/bin/python3
"""Estimated vs measured latency: fuseplan's stage estimates next to ONNX Runtime's measured CPU
latency (one thread), with graph optimizations disabled (against fuseplan's "original" stage) and
extended (against its "final" stage), and the speedup of fusion, estimated vs measured (issue 6).

  /usr/bin/python3 bench/latency_vs_ort.py --ort DIR --base host_ort.ini [--fuseplan build/fuseplan]
        [--out bench/out/latency] [--passes 3] [--folds 8] [--reuse] [-o bench/results/latency.md]

Models (bench/fit_manifest.py): the samples in models/, every libonnx-testdata pytorch-converted
model with its test_data_set_0 inputs (those of opset < 7, which ONNX Runtime no longer runs,
converted to opset 13 first), the networks of bench/fit_models.py and the ResNet-50 of
bench/gen_big_model.py.

Measurement: bench/ort_run.c, ONNX Runtime's own libonnxruntime.so (the one onnxruntime-node
ships) driven through its C API: CPU EP, one intra-op and one inter-op thread, sequential; one
session per model and level, 10 warm-up runs, then OrtApi::Run timed alone with CLOCK_MONOTONIC
until --budget-ms is spent (at least 20 runs); per run the robust time is the mean of the runs
within 1.5x (or 2 us) of the fastest. Each process is pinned at nice -20 to the core that was
idlest when the pass started; --passes passes, and a model's time is its fastest pass (noise on a
shared machine only adds time). Neither a profiler nor a language binding is in the timing: the
JavaScript binding costs ~12 us per call, more than a one-op model runs (1.3 us), and ORT's
profiler adds its events to every kernel (a profiled one-op run takes 12 us). A light profile of
every model at both levels (bench/ort_profiles.mjs, 10 runs) tells `fuseplan fit` which graph ran
(the stage, the input shapes); its times are not used, and are listed next to the unprofiled ones
for the networks.

Estimate: `fuseplan report --device P` on each model with its measured input shapes, stage
"original" vs level disabled and stage "final" vs level extended, on two profiles:
- base: the calibrated host profile given by --base (`fuseplan calibrate` plus ONNX Runtime's
  launch costs from synthetic kernels, bench/ort_calibrate.py), never fitted to these models;
- cross-validated fit: the models fall into --folds groups (every --folds-th in name order; 0 =
  one per model, leave-one-model-out); each group is estimated on a profile that
  `fuseplan fit --no-cv` fitted, from the base, to the whole runs (the --pairs third column, both
  levels) of every other group, so that no model's estimate has seen its own measurement. Runs
  whose profile matches no node of the model (ORT fused it in a way fuseplan does not model and
  named the kernel after nothing in the model) are left out of the fits and listed.

Writes the Markdown (-o): the tables, the share of estimates within +-30%, the outliers with the
reasons known for them. --reuse keeps what --out already holds (measurements, profiles, fits).
"""
import argparse
import base64
import glob
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import onnx

from ort_common import idlest_cpu, ort_run_tool, pinned

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
TOL = 0.30
SPEEDUP_TOL = 0.10
LEVELS = ("disabled", "extended")
ELEM = {"float32": 1, "uint8": 2, "int8": 3, "int32": 6, "int64": 7, "bool": 9, "float64": 11}
NP_OF = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 9: np.bool_, 11: np.float64}


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd[:3])}...: {(r.stderr or r.stdout).strip()[-400:]}")
    return r.stdout


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def prepare(a):
    """The manifest (bench/fit_manifest.py) of every model; builds the networks once."""
    nets = os.path.join(a.out, "models")
    if not glob.glob(os.path.join(nets, "*.onnx")):
        sh([PY, os.path.join(ROOT, "bench/fit_models.py"), nets])
    if not os.path.exists(os.path.join(nets, "resnet50.onnx")):
        sh([PY, os.path.join(ROOT, "bench/gen_big_model.py"), os.path.join(nets, "resnet50.onnx")])
    manifest = os.path.join(a.out, "manifest.json")
    if not (a.reuse and os.path.exists(manifest)):
        sh([PY, os.path.join(ROOT, "bench/fit_manifest.py"), "--upgrade", os.path.join(a.out, "upgraded"), manifest,
            nets])
    with open(manifest) as f:
        return json.load(f)["models"]


def input_spec(entry):
    """{name: (elem type, dims, raw bytes)} of the graph inputs as measured: the manifest's tensors,
    or the model's dims with its symbolic ones bound as the manifest says (unbound: 1), filled with a
    fixed pattern (floats in [-0.5, 0.5), integers 0, booleans true; an attention mask ones: every
    position attended, as a decoder's caller passes it; a mask of zeros gives GroupQueryAttention
    a total length of -1, which ONNX Runtime refuses)."""
    m = onnx.load(entry["model"], load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    out = {}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        t = (entry.get("inputs") or {}).get(vi.name)
        if t:
            out[vi.name] = (ELEM[t["dtype"]], t["dims"], base64.b64decode(t["data"]))
            continue
        bind = entry.get("dims", {})
        dims = [bind.get(d.dim_param, 1) if d.dim_param else d.dim_value for d in vi.type.tensor_type.shape.dim]
        code = vi.type.tensor_type.elem_type
        n = int(np.prod(dims)) if dims else 1
        if code in (1, 11):
            arr = (np.arange(n) % 97) / 97 - 0.5
        else:
            arr = np.ones(n) if code == 9 or vi.name.endswith("attention_mask") else np.zeros(n)
        out[vi.name] = (code, dims, arr.astype(NP_OF.get(code, np.float32)).tobytes())
    return out


def input_args(entry):
    """--input NAME:DIMS for every graph input of rank > 0 (a scalar's shape is its declaration)."""
    args = []
    for name, (_, dims, _) in input_spec(entry).items():
        if dims:
            args += ["--input", f"{name}:" + "x".join(str(d) for d in dims)]
    return args


def harness(a):
    """(path of the compiled bench/ort_run.c, path of onnxruntime-node's libonnxruntime.so)."""
    return ort_run_tool(a.ort, a.out)


def spec_file(a, entry, level, budget_ms=None, name=None):
    """The bench/ort_run.c spec of one model at one level (inputs written once under --out), timed for
    budget_ms (default --budget-ms), written as name (default LEVEL.spec)."""
    d = os.path.join(a.out, "inputs", entry["key"])
    os.makedirs(d, exist_ok=True)
    lines = [f"level {level}", f"budget_ms {budget_ms or a.budget_ms}", f"model {entry['model']}",
             f"threads {getattr(a, 'ort_threads', 1)}"]
    for k, (value, (code, dims, raw)) in enumerate(input_spec(entry).items()):
        p = os.path.join(d, f"in{k}.bin")
        if not os.path.exists(p):
            with open(p, "wb") as f:
                f.write(raw)
        lines.append(" ".join(["input", value, str(code), str(len(dims))] + [str(x) for x in dims] + [p]))
    m = onnx.load(entry["model"], load_external_data=False)
    lines += [f"output {o.name}" for o in m.graph.output]
    path = os.path.join(d, name or f"{level}.spec")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


CONFIRM = 0.03  # a fastest pass is trusted once a second comes within 3% of it (calibration/calibrate_runtime.h)
# The host's phase: a timing is in its fast phase when the phase probe (a.phase_probe, a short network
# at level disabled) ran within PHASE_TOL of its fastest time right before and right after it
PHASE_TOL = 0.20
PHASE_PROBE_MS = 60


def confirmed(passes):
    """Whether the two fastest of passes are within CONFIRM of each other."""
    best = sorted(passes)[:2]
    return len(best) == 2 and best[1] <= best[0] * (1 + CONFIRM)


def fast_phase(a, v):
    """Whether one of the passes of v (a runs entry) was timed in the host's fast phase; True when no
    phase probe ran."""
    phases = v.get("phase_passes")
    best = getattr(a, "phase_best", None)
    return not phases or best is None or min(phases) <= best * (1 + PHASE_TOL)


def settled(a, v):
    """Whether v (a runs entry) needs no more passes: confirmed, and timed in the host's fast phase."""
    return confirmed(v.get("window_passes", [])) and fast_phase(a, v)


def run_spec(exe, lib, spec, cpu, pin):
    """bench/ort_run.c's JSON result for spec (pinned as `pinned` pins), or {"error": its stderr}."""
    r = subprocess.run(pinned([exe, lib, spec], cpu, pin)[0], capture_output=True, text=True)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": (r.stderr.strip() or "no output")[:300]}


def probe_us(a, exe, lib, cpu, pin):
    """a.phase_probe's fastest 10 ms stretch at level disabled now (us; PHASE_PROBE_MS of runs), kept
    in a.phase_best when the fastest yet; None when it fails."""
    us = run_spec(exe, lib, spec_file(a, a.phase_probe, "disabled", PHASE_PROBE_MS, "phase.spec"), cpu,
                  pin).get("window_us")
    if us:
        a.phase_best = min(us, getattr(a, "phase_best", None) or us)
    return us


def timing_pass(a, exe, lib, keys, runs, errors, log, what, end=None, gate=True):
    """Times every (entry, level) of keys once (until time.monotonic() passes end, when given), adding
    each result's statistics to runs (a list per statistic) or its error to errors; logs the pass
    (unless log is None). With a.phase_probe set (and gate), the probe is timed between the timings
    and each timing's phase_passes gets the slower of the probe's times right before and after it."""
    pin = getattr(a, "ort_threads", 1) == 1  # more threads: on every CPU
    cpu = idlest_cpu() if pin else None
    start, l0 = time.strftime("%H:%M:%S", time.gmtime()), loadavg()
    gate = gate and getattr(a, "phase_probe", None) is not None
    before = probe_us(a, exe, lib, cpu, pin) if gate else None
    for e, level in keys:
        k = f"{e['key']}|{level}"
        if k in errors or (end is not None and time.monotonic() > end):
            continue
        res = run_spec(exe, lib, spec_file(a, e, level), cpu, pin)
        if res.get("error"):
            errors[k] = res["error"].splitlines()[0][:300]
            continue
        runs.setdefault(k, {"passes": [], "runs": 0, "version": res.get("version")})
        runs[k]["passes"].append(res["robust_us"])
        runs[k].setdefault("min_passes", []).append(res["min_us"])
        runs[k].setdefault("window_passes", []).append(res.get("window_us", res["min_us"]))
        runs[k]["runs"] += res["runs"]
        if gate:
            after = probe_us(a, exe, lib, cpu, pin)
            runs[k].setdefault("phase_passes", []).append(max(before or math.inf, after or math.inf))
            before = after
    if log is not None:
        log.append(f"{what} on {'cpu ' + str(cpu) if pin else 'every cpu'}: {start} to "
                   f"{time.strftime('%H:%M:%S', time.gmtime())} UTC, load {l0} -> {loadavg()}")
        print(log[-1], file=sys.stderr)


def confirm(a, exe, lib, keys, runs, errors, log):
    """Times again, pass after pass for up to a.confirm_s seconds (0 when unset), the keys whose fastest
    stretch no second pass came within CONFIRM of; one line in log for all of it."""
    end = time.monotonic() + getattr(a, "confirm_s", 0)
    start, l0, passes, timings = time.strftime("%H:%M:%S", time.gmtime()), loadavg(), 0, 0
    while time.monotonic() < end:
        left = [(e, level) for e, level in keys if f"{e['key']}|{level}" in runs and
                not settled(a, runs[f"{e['key']}|{level}"])]
        if not left:
            break
        timing_pass(a, exe, lib, left, runs, errors, None, "confirmation", end)
        passes, timings = passes + 1, timings + len(left)
    if passes:
        unconfirmed = sum(1 for v in runs.values() if not confirmed(v.get("window_passes", [])))
        slow = sum(1 for v in runs.values() if not fast_phase(a, v))
        log.append(f"confirmation: {passes} passes, {timings} timings: {start} to "
                   f"{time.strftime('%H:%M:%S', time.gmtime())} UTC, load {l0} -> {loadavg()}; "
                   f"{unconfirmed} left unconfirmed" +
                   (f", {slow} never timed in the host's fast phase" if getattr(a, "phase_probe", None) else ""))
        print(log[-1], file=sys.stderr)


def measure(a, entries):
    """{"key|level": {"us": fastest pass's robust time, "passes": [...], ...}} and {"key|level": error}."""
    path = os.path.join(a.out, "runs.json")
    if a.reuse and os.path.exists(path):
        with open(path) as f:
            d = json.load(f)
        return d["runs"], d["errors"], d["log"]
    exe, lib = harness(a)
    runs, errors, log = {}, {}, []
    keys = [(e, level) for e in entries for level in LEVELS]
    for p in range(a.passes):
        timing_pass(a, exe, lib, keys, runs, errors, log, f"pass {p + 1}")
    confirm(a, exe, lib, keys, runs, errors, log)
    for v in runs.values():
        v["us"] = min(v["passes"])
        v["min_us"] = min(v["min_passes"])  # the fastest single run
        v["window_us"] = min(v["window_passes"])  # the fastest 10 ms stretch (bench/runtime_calibration.py)
        v["confirmed"] = confirmed(v["window_passes"])
        v["fast_phase"] = fast_phase(a, v)
        v["spread"] = max(v["passes"]) / v["us"] - 1
    with open(path, "w") as f:
        json.dump({"runs": runs, "errors": errors, "log": log}, f, indent=1)
    return runs, errors, log


def profiles(a):
    """Light profiles of every model at both levels (which graph ran); {(key, level): profile}."""
    out = {}
    for level in LEVELS:
        d = os.path.join(a.out, f"profiles_{level}")
        if not (a.reuse and os.path.exists(os.path.join(d, "pairs.txt"))):
            cmd, _ = pinned(["node", os.path.join(ROOT, "bench/ort_profiles.mjs"), "--ort", a.ort, "--manifest",
                             os.path.join(a.out, "manifest.json"), "--out", d, "--level", level, "--budget-ms", "1",
                             "--min-runs", "10", "--max-runs", "10", "--extra-warmup", "0"])
            with open(d + ".log", "w") as f:
                subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=False)
        with open(os.path.join(d, "pairs.txt")) as f:
            for line in f:
                if line.strip():
                    m, p = line.split()
                    out[(os.path.basename(p)[:-len(f".{level}.json")], level)] = (m, p)
    return out


def profiled_run_us(prof):
    """Median model_run span of a light profile's runs after the first (us)."""
    try:
        with open(prof.replace(".json", ".raw.json")) as f:
            ev = json.load(f)
    except (OSError, ValueError):
        return None
    runs = sorted((e for e in ev if e.get("name") == "model_run"), key=lambda e: e["ts"])[1:]
    return float(np.median([e["dur"] for e in runs])) if runs else None


def whole_runs(a, runs, profs):
    """[(key, level, model, profile, run_us)] that `fuseplan fit` can use, and {"key level": why not}."""
    ok, bad = [], {}
    for (key, level), (m, p) in sorted(profs.items()):
        r = runs.get(f"{key}|{level}")
        if not r:
            continue
        c = subprocess.run([a.fuseplan, "compare", m, "--profile", p, "-d", a.base, "-f", "json"], capture_output=True,
                           text=True)
        if c.returncode == 0:
            ok.append((key, level, m, p, r["us"]))
        else:
            bad[f"{key} {level}"] = (c.stderr.strip().splitlines() or ["?"])[-1].split(": ", 1)[-1][:160]
    return ok, bad


def fold_fits(a, entries, usable):
    """{key: profile}: each --folds group's profile fitted on the base to every other group's runs."""
    folds = os.path.join(a.out, "folds")
    os.makedirs(folds, exist_ok=True)
    keys = sorted(e["key"] for e in entries)
    k = a.folds if 0 < a.folds < len(keys) else len(keys)
    group = {key: i % k for i, key in enumerate(keys)}
    for j in range(k):
        out = os.path.join(folds, f"fold{j}.ini")
        if a.reuse and os.path.exists(out):
            continue
        lst = os.path.join(folds, f"fold{j}.pairs")
        with open(lst, "w") as f:
            f.write("".join(f"{m} {p} {us:.4f}\n" for key, _, m, p, us in usable if group[key] != j))
        sh([a.fuseplan, "fit", "--no-cv", "-d", a.base, "-o", out, "--pairs", lst])
        print(f"fold {j + 1}/{k} fitted", file=sys.stderr)
    return {key: os.path.join(folds, f"fold{group[key]}.ini") for key in keys}, k


def estimate(a, entry, device):
    """(original, final) estimated seconds."""
    out = sh([a.fuseplan, "report", "-f", "json", "--no-headroom", "--device", device, "--target", "ort-cpu-extended"] +
             input_args(entry) + [entry["model"]])
    st = json.loads(out)["stages"]
    return st[0]["est_latency_s"], st[2]["est_latency_s"]


def is_small(entry):
    return entry["key"].startswith("pt_")


REASONS = [("mobilenet_v2", "ORT's depthwise convolution is im2col + a one-row GEMM per channel (fit.md)"),
           ("Conv3d", "ORT's 3-D convolution path is slower than the 2-D one the conv class is fitted to"),
           ("Softplus", "ORT computes Softplus without vectorization"),
           ("if_subgraph", "the If's subgraph set-up (the only control-flow model)")]


def table(entries, runs, est, title):
    rows, count, outliers, sp_ok, n_sp, both = [], {}, [], 0, 0, 0
    for e in entries:
        key = e["key"]
        if key not in est or not all(f"{key}|{lv}" in runs for lv in LEVELS):
            continue
        e0, e2 = est[key]
        m0, m2 = runs[f"{key}|disabled"]["us"] * 1e-6, runs[f"{key}|extended"]["us"] * 1e-6
        r0, r2 = e0 / m0, e2 / m2
        group = "small" if is_small(e) else "networks"
        for r, lv in ((r0, "disabled"), (r2, "extended")):
            ok = abs(r - 1) <= TOL
            for g in ("all", group):
                c = count.setdefault(g, [0, 0])
                c[0] += ok
                c[1] += 1
            if not ok:
                outliers.append((abs(math.log(r)), key, lv, r))
        both += abs(r0 - 1) <= TOL and abs(r2 - 1) <= TOL
        msp, esp = m0 / m2, e0 / e2
        n_sp += 1
        sp_ok += abs(esp / msp - 1) <= SPEEDUP_TOL
        rows.append(f"| {key} | {m0 * 1e3:.4f} | {e0 * 1e3:.4f} | {r0:.2f} | {m2 * 1e3:.4f} | {e2 * 1e3:.4f} | "
                    f"{r2:.2f} | {msp:.2f}x | {esp:.2f}x |")
    out = [f"#### {title}", "",
           "| model | ORT disabled (ms) | est. original (ms) | ratio | ORT extended (ms) | est. final (ms) | ratio | "
           "measured speedup | est. speedup |", "|---|---|---|---|---|---|---|---|---|"] + rows + [""]
    c = count.get("all", [0, 0])
    if not c[1]:
        return out, (0, 0)
    out.append(f"**{c[0]} of {c[1]} estimates within +-{TOL * 100:.0f}% ({100.0 * c[0] / c[1]:.0f}%)**, "
               f"{len(rows)} models at 2 levels; {both} of {len(rows)} models ({100.0 * both / len(rows):.0f}%) within at "
               f"both levels.")
    for g, what in (("networks", "networks and sample models"), ("small", "libonnx-testdata single-op models")):
        if g in count:
            w, n = count[g]
            out.append(f"- {what}: {w} of {n} ({100.0 * w / n:.0f}%)")
    out.append(f"- estimated speedup of fusion within +-{SPEEDUP_TOL * 100:.0f}% of the measured one: {sp_ok} of "
               f"{n_sp} models")
    if outliers:
        outliers.sort(reverse=True)
        out += ["", "Outside +-30%, worst first (estimate / measured; the reason where one is known):", ""]
        for _, k, lv, r in outliers[:25]:
            why = next((w for name, w in REASONS if name in k), "")
            out.append(f"- {k} {lv} {r:.2f}" + (f": {why}" if why else ""))
        if len(outliers) > 25:
            out.append(f"- and {len(outliers) - 25} more")
    return out + [""], (c[0], c[1])


def profiler_table(entries, runs, profs):
    out = ["#### Why not time with the profiler", "",
           "The unprofiled run (the measurement above) next to ORT's own `model_run` span with profiling on "
           "(median of the light profile's runs): the profiler's events cost more than small kernels.", "",
           "| model | level | unprofiled (ms) | profiled model_run (ms) | profiled / unprofiled |", "|---|---|---|---|---|"]
    for e in entries:
        if is_small(e) and e["key"] not in ("pt_ELU", "pt_Conv2d", "pt_Linear_no_bias"):
            continue
        for lv in LEVELS:
            r, p = runs.get(f"{e['key']}|{lv}"), profs.get((e["key"], lv))
            pr = profiled_run_us(p[1]) if p else None
            if r and pr:
                out.append(f"| {e['key']} | {lv} | {r['us'] * 1e-3:.4f} | {pr * 1e-3:.4f} | {pr / r['us']:.2f} |")
    return out + [""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ort", default="/tmp/ort")
    ap.add_argument("--base", required=True, help="the calibrated host profile (.ini)")
    ap.add_argument("--fuseplan", default=os.path.join(ROOT, "build/fuseplan"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/latency"))
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--budget-ms", type=int, default=300, help="timed runs per model, level and pass")
    ap.add_argument("--folds", type=int, default=8, help="cross-validation groups (0: leave one model out)")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    a.out, a.base, a.ort = os.path.abspath(a.out), os.path.abspath(a.base), os.path.abspath(a.ort)
    os.makedirs(a.out, exist_ok=True)
    t0 = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    entries = prepare(a)
    runs, errors, log = measure(a, entries)
    profs = profiles(a)
    usable, unmatched = whole_runs(a, runs, profs)
    folds, nfolds = fold_fits(a, entries, usable)
    est_base, est_cv, failed = {}, {}, []
    for e in entries:
        if not all(f"{e['key']}|{lv}" in runs for lv in LEVELS):
            continue
        try:
            est_base[e["key"]] = estimate(a, e, a.base)
            est_cv[e["key"]] = estimate(a, e, folds[e["key"]])
        except RuntimeError as err:
            failed.append(f"{e['key']}: {err}")
    version = next((v.get("version") for v in runs.values()), "?")
    out = ["## Estimated vs measured latency: ONNX Runtime CPU, one thread (bench/latency_vs_ort.py)", "",
           f"Written {t0} UTC. ONNX Runtime {version} (onnxruntime-node's libonnxruntime.so through its C API, "
           f"bench/ort_run.c: no profiler, no language binding; how it is measured and estimated: the script's "
           f"header). {len(entries)} models given, {len(est_cv)} measured at both levels and estimated; "
           f"{a.passes} passes of at least {a.budget_ms} ms per model and level, each model's fastest pass kept:", ""]
    out += [f"- {line}" for line in log] + [""]
    if errors:
        by = {}
        for k, v in errors.items():
            by.setdefault(v, []).append(k.replace("|", " "))
        out += ["Not run by ONNX Runtime: " + "; ".join(f"{', '.join(sorted(v))} ({k})" for k, v in sorted(by.items()))
                + ".", ""]
    if failed:
        out += ["fuseplan failed on: " + "; ".join(failed), ""]
    if unmatched:
        out += ["Left out of the fits (their profile matches no node of the model: ORT fused it in a way fuseplan "
                "does not model; still compared below): " +
                "; ".join(f"{k} ({v})" for k, v in sorted(unmatched.items())) + ".", ""]
    cv = "leave-one-model-out" if nfolds == len(entries) else f"{nfolds}-fold cross-validated"
    lo, (wl, nl) = table(entries, runs, est_cv, f"Fitted profile, {cv} (`fuseplan fit` from `{os.path.basename(a.base)}` "
                         f"to the other groups' whole runs)")
    bo, (wb, nb) = table(entries, runs, est_base, f"Calibrated host profile `{os.path.basename(a.base)}` alone (no fit)")
    out += [f"**Result: {wl} of {nl} estimates ({100.0 * wl / max(nl, 1):.0f}%) within +-30% of the measured latency "
            f"with the {cv} fitted profile; {wb} of {nb} ({100.0 * wb / max(nb, 1):.0f}%) with the calibrated profile "
            f"alone.**", ""]
    out += lo + bo + profiler_table(entries, runs, profs)
    text = "\n".join(out)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
