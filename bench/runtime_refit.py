#!/usr/bin/python3
"""runtime_refit.py - the cost model as it is now, judged on runtime-calibration runs kept from before:
their micro-model timings fitted again and their networks' ONNX Runtime times, no new timing.

  /usr/bin/python3 bench/runtime_refit.py [--fuseplan build/fuseplan] [--runs bench/results/runtime_runs]
        [--models DIR...] [--networks] [NAME...]
  /usr/bin/python3 bench/runtime_refit.py --record NAME [--out bench/out/runtime_calibration] [--runs ...]

A run of bench/runtime_calibration.py times the micro-models once (its --out's host_runtime_1t.timings)
and the networks once (its runs.json), minutes apart on a host whose pace moves: two runs of the same
code differ by a few networks within +-10%. A change to the cost model is judged fairly on the same
measurements: each kept run is fitted again by `fuseplan calibrate --from-timings` (the same points
under this fuseplan's cost model and fit), every network of the run estimated on that profile
(`fuseplan report` with the run's input shapes, as the bench does) and set against the run's
measured times. One line per run: within +-10% at level disabled / level all / in the speedup,
the level (geometric mean estimate / measured) and the counts with it divided out; then the
networks outside +-10%. --networks adds a table of each network's geometric mean ratio over the
runs and its range at level disabled.

--record NAME keeps the run in --out (the last one bench/runtime_calibration.py made) as
--runs/NAME.timings and --runs/NAME.json: each network's model (its path in the repository, or its
file name when outside), input shapes and fastest-10-ms-stretch times at both levels. A model not at
its path is looked up by file name under --models (held-out networks: bench/gen_torch_models.py --held-out DIR);
a run's networks that cannot be found are named and left out of its counts. Not part of the tests.
"""
import argparse
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

from ort_common import spec_inputs
from runtime_calibration import ROOT, estimate, level_text, summary, within

TIMINGS = "host_runtime_1t.timings"


def spec_of(folder):
    """(model path, --input args) of the bench/ort_run.c spec in one network's inputs folder."""
    spec = next(os.path.join(folder, f) for f in sorted(os.listdir(folder)) if not f.endswith(".bin"))
    with open(spec) as f:
        lines = f.read().splitlines()
    model = next(ln.split(" ", 1)[1] for ln in lines if ln.startswith("model "))
    args = []
    for name, dims in spec_inputs(lines):
        if dims:  # a scalar's shape is its declaration (latency_vs_ort.input_args)
            args += ["--input", f"{name}:" + "x".join(dims)]
    return model, args


def record(a):
    """Keeps --out's run as --runs/NAME.{json,timings}."""
    with open(os.path.join(a.out, "runs.json")) as f:
        runs = json.load(f)["runs"]
    nets = {}
    for key in sorted({k.split("|")[0] for k in runs}):
        if f"{key}|disabled" not in runs or f"{key}|all" not in runs:
            continue
        model, args = spec_of(os.path.join(a.out, "inputs", key))
        rel = os.path.relpath(model, ROOT)
        nets[key] = {"model": os.path.basename(model) if rel.startswith("..") else rel, "args": args,
                     "disabled_us": runs[f"{key}|disabled"]["window_us"], "all_us": runs[f"{key}|all"]["window_us"]}
    os.makedirs(a.runs, exist_ok=True)
    shutil.copyfile(os.path.join(a.out, TIMINGS), os.path.join(a.runs, a.record + ".timings"))
    with open(os.path.join(a.runs, a.record + ".json"), "w") as f:
        json.dump({"networks": nets}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"runtime_refit: kept {len(nets)} networks as {os.path.join(a.runs, a.record)}.json and .timings")


def find_model(a, path):
    """path (relative to the repository), else the same file name under a --models folder."""
    full = path if os.path.isabs(path) else os.path.join(ROOT, path)
    if os.path.exists(full):
        return full
    for d in a.models:
        for base, _, files in os.walk(d):
            if os.path.basename(path) in files:
                return os.path.join(base, os.path.basename(path))
    return None


def judge(a, name, tmp):
    """Rows of run NAME (bench/runtime_calibration.py's "rt" rows) and the networks left out."""
    profile = os.path.join(tmp, name + ".ini")
    subprocess.run([a.fuseplan, "calibrate", "--from-timings", os.path.join(a.runs, name + ".timings"), "-o",
                    profile], check=True, capture_output=True, text=True)
    with open(os.path.join(a.runs, name + ".json")) as f:
        nets = json.load(f)["networks"]
    rs, missing = [], []
    for key, n in sorted(nets.items()):
        model = find_model(a, n["model"])
        if not model:
            missing.append(key)
            continue
        entry = {"key": key, "model": model, "args": n["args"]}
        orig, _ = estimate(a, entry, profile, "ort-cpu-extended")
        _, full = estimate(a, entry, profile, "ort-cpu-all")
        rs.append({"key": key, "md": n["disabled_us"] / 1e3, "ma": n["all_us"] / 1e3, "rt": (orig * 1e3, full * 1e3)})
    return rs, missing


def ratios(r):
    """(disabled, all, speedup) estimate / measured of one row."""
    d, al = r["rt"][0] / r["md"], r["rt"][1] / r["ma"]
    return d, al, d / al


def outside(rs):
    """The networks outside +-10% at a level or in the speedup, with their ratios."""
    text = []
    for r in rs:
        d, al, sp = ratios(r)
        if not (within(d) and within(al) and within(sp)):
            text.append(f"{r['key']} {d:.3f} / {al:.3f} / {sp:.3f}")
    return text


def network_table(per):
    """Markdown rows: each network's geometric mean ratios over the runs, and its range at level disabled."""
    lines = ["| network | runs | disabled | all | speedup | disabled: range |", "|---|---|---|---|---|---|"]
    for key, rows in sorted(per.items(), key=lambda kv: sum(math.log(ratios(r)[0]) for r in kv[1]) / len(kv[1])):
        gm = [math.exp(sum(math.log(ratios(r)[i]) for r in rows) / len(rows)) for i in range(3)]
        ds = [ratios(r)[0] for r in rows]
        lines.append(f"| {key} | {len(rows)} | {gm[0]:.3f} | {gm[1]:.3f} | {gm[2]:.3f} | {min(ds):.2f}-{max(ds):.2f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fuseplan", default=os.path.join(ROOT, "build/fuseplan"), help="the executable judged")
    ap.add_argument("--runs", default=os.path.join(ROOT, "bench/results/runtime_runs"), help="the kept runs")
    ap.add_argument("--models", action="append", default=[], help="folder to look for models not at their path")
    ap.add_argument("--networks", action="store_true", help="also each network's ratios over the runs")
    ap.add_argument("--record", metavar="NAME", help="keep --out's run as NAME instead of judging")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/runtime_calibration"),
                    help="bench/runtime_calibration.py's work folder, for --record")
    ap.add_argument("-o", "--output", help="also write what it prints to this file")
    ap.add_argument("names", nargs="*", help="runs to judge (default: every kept run)")
    a = ap.parse_args()
    try:
        return record(a) if a.record else judge_all(a)
    except (OSError, ValueError, KeyError, RuntimeError, StopIteration, subprocess.CalledProcessError) as err:
        detail = err.stderr.strip() if isinstance(err, subprocess.CalledProcessError) else err
        sys.stderr.write(f"runtime_refit: {detail!s}\n")
        return 2


def judge_all(a):
    """Judges the runs named (default: every one under --runs) and prints what it found."""
    a.fuseplan = os.path.abspath(a.fuseplan)
    names = a.names or sorted(f[:-5] for f in os.listdir(a.runs) if f.endswith(".json"))
    lines, per = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            rs, missing = judge(a, name, tmp)
            if not rs:
                lines.append(f"- {name}: no network found ({len(missing)} missing)")
                continue
            lines += [f"- {name}: {summary(rs, 'rt')}", f"  - level: {level_text(rs, 'rt')}",
                      "  - outside +-10% (disabled / all / speedup): " + ("; ".join(outside(rs)) or "none")]
            if missing:
                lines.append(f"  - left out, model not found: {', '.join(missing)}")
            for r in rs:
                per.setdefault(r["key"], []).append(r)
    if a.networks:
        lines += ["", network_table(per)]
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    text = f"Written {stamp} UTC by `bench/runtime_refit.py`.\n\n" + "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    sys.exit(main())
