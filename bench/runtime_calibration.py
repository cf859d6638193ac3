#!/usr/bin/python3
"""runtime_calibration.py - `fuseplan calibrate --runtime onnxruntime` judged on networks that took
no part in it (issue 38): the command is timed (it must take under two minutes), then ONNX
Runtime's measured latency of every network at ORT_DISABLE_ALL and ORT_ENABLE_ALL (on --threads
intra-op threads: 1, or 0 / all for all cores) is compared with fuseplan's estimates on the runtime-calibrated profile (stage "original" against
level disabled, the final stage of target ort-cpu-all against level all) and on the profile of
fuseplan's own kernels (`calibrate --threads N --seconds 3`, as bench/speedup_vs_ort.py makes it),
and so is the speedup disabled -> all. Each thread count has its own table, work folder and section.

  /usr/bin/python3 bench/runtime_calibration.py [--fuseplan build/fuseplan] [--ort bench]
        [--threads 1|all] [--out bench/out/runtime_calibration[_all]] [--passes 3] [--budget-ms 300] [--reuse]
        [--dims [NETWORK:]NAME=VALUE...] [-o bench/results/runtime_calibration[_all].md] [--doc docs/benchmarks.md]
        [--genai] MODEL.onnx...

Measurement: bench/latency_vs_ort.py's (bench/ort_run.c through onnxruntime-node's
libonnxruntime.so: --threads intra-op threads, all cores being as many as the profile's [device]
threads, no profiler; inputs: the model's dims, symbolic ones 1, a fixed pattern; on one thread
each of --passes passes pinned to the idlest CPU, on more not pinned). --dims binds a symbolic dim
by name in every network that has it (PP-OCR's recognizer reads text lines 48 pixels high and of
any width: bound to 1 its width pools to 0), or, prefixed NETWORK:, in one network only: PaddleOCR's
exports name their dims alike (p2o.DynamicDimension.1 is the recognizer's width but the detector's
and the classifier's height, which a bare binding left at an image 1 pixel wide). A level's time is a run's in its
fastest 10 ms stretch of runs over the passes (bench/ort_run.c's window_us), the statistic
`calibrate --runtime` times its micro-models by: on a machine shared with other work noise only
adds time, but a run of milliseconds bears it averaged while one of 100 us slips between the
bursts. After --passes passes, the networks and levels whose fastest stretch no second pass came
within 3% of are timed again, pass after pass, for up to --confirm-s seconds, and so are those never
timed in the host's fast phase: resnet_tiny's fastest 10 ms stretch (of 60 ms of runs) is timed
between the timings, and a timing is in the fast phase when the probe right before and right after
it ran within 20% of the probe's fastest (a shared host alternates within seconds between phases
whose paces differ by 1.5x and more, and three passes of one network can all fall in slow ones,
which confirms them).
Host pace: resnet_tiny (else the first network) is timed at level disabled right before and right
after the calibration, and its times in the network passes are set against those: this VM's pace
moves by up to 1.8x within minutes, and a calibration made in a fast phase puts every estimate of
networks timed in a slow one low by as much; the table's header says by how much. Profile check: right
after the passes, `calibrate --runtime --check` times a sample of the micro-models again and says how
far the profile's estimates of them are now (the product's own word on that drift).
Repeatability: the previous run's timings (--out's runs.json) are kept as runs_previous.json, and
the header counts the networks whose time in this run is within +-10% of that run's at each level:
no estimate can be shown closer than the measurement repeats.
--genai adds third-party decoders: onnxruntime-genai's test models that read a past (a KV cache),
from the repository's snapshot (bench/fidelity.py's genai_models, GENAI_GIT; none without it),
each file once, fixed at fidelity.py's decode step (one new token after 127) under the names that
model builder gives the dims, as genai_NAME_static under --out/genai.
The calibration's measurements are kept as --out's host_runtime_1t.timings (or _all): `fuseplan
calibrate --from-timings` fits them again under another cost model, for the same network timings.
Estimates: `fuseplan report --device P --target T` with the same input shapes. The table goes to
-o and into --doc between <!-- runtime-calibration:begin --> and <!-- runtime-calibration:end -->
(one thread; all cores: <!-- runtime-calibration-all-cores:begin --> and
<!-- runtime-calibration-all-cores:end -->; a section added at its end when missing).
"""
import argparse
import configparser
import datetime
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

import onnx

import fidelity
import latency_vs_ort as lvo
from bench import write_section
from ort_common import PADDLE_DIMS, bound_dims, pinned

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOL = 0.10
TITLE = "## Runtime calibration: `calibrate --runtime onnxruntime` on networks it never saw (issue 38)"
BEGIN, END = "<!-- runtime-calibration:begin -->", "<!-- runtime-calibration:end -->"
TITLE_ALL = "## Runtime calibration at all cores: `calibrate --runtime onnxruntime --threads all`"
BEGIN_ALL, END_ALL = "<!-- runtime-calibration-all-cores:begin -->", "<!-- runtime-calibration-all-cores:end -->"


def all_cores(a):
    """Whether --threads asks for all cores."""
    return a.threads in ("0", "all")


def threads_text(a):
    """How the tables name the threads: "one thread" or "N threads (all cores)"."""
    return "one thread" if not all_cores(a) else f"{a.ort_threads} threads (all cores)"


PACE_PROBE = "resnet_tiny"  # the network timed right before and after the calibration


def pace_time(a, exe, lib, entry):
    """entry's time at level disabled now (its fastest 10 ms stretch, us), None when it fails."""
    runs, errors = {}, {}
    lvo.timing_pass(a, exe, lib, [(entry, "disabled")], runs, errors, None, "pace", gate=False)
    v = runs.get(f"{entry['key']}|disabled")
    return v["window_passes"][0] if v else None


# `calibrate --runtime` warns when the host was busy through it (calibration/calibrate_runtime.h,
# fp_rt_set_busy); as its warning says, the bench then calibrates again, after a pause, at most
# this many times in all, and keeps the last
CALIBRATE_ATTEMPTS = 3
CALIBRATE_PAUSE_S = 30


def calibrate(a, exe, lib, probe):
    """Writes both profiles under --out; returns the seconds `calibrate --runtime` took, its stdout
    (the fitted classes) and probe's times right before and right after it (the host's pace while it
    ran, which the network passes' times of probe are set against), and sets a.ort_threads to the
    threads the profile records and a.busy_calibrations to the calibrations it did again (when, how
    long, calibrate's warning). It runs as the networks are timed: nice -20, on one thread on the
    idlest CPU."""
    tag = "all" if all_cores(a) else "1t"
    a.rt_profile = os.path.join(a.out, f"host_runtime_{tag}.ini")
    a.native_profile = os.path.join(a.out, f"host_native_{tag}.ini")
    threads = "all" if all_cores(a) else a.threads
    if not (a.reuse and os.path.exists(a.rt_profile) and os.path.exists(os.path.join(a.out, "calibrate.json"))):
        a.ort_threads = os.cpu_count() if all_cores(a) else int(a.threads)
        timings = os.path.join(a.out, f"host_runtime_{tag}.timings")  # for `calibrate --from-timings`
        cmd = [a.fuseplan, "calibrate", "--runtime", f"onnxruntime={lib}", "--threads", threads, "-o", a.rt_profile,
               "--save-timings", timings]
        busy = []
        for attempt in range(CALIBRATE_ATTEMPTS):
            if attempt:
                time.sleep(CALIBRATE_PAUSE_S)
            before = pace_time(a, exe, lib, probe)
            stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M UTC")
            t0 = time.monotonic()
            r = subprocess.run(pinned(cmd, pin=not all_cores(a))[0], capture_output=True, text=True)
            if r.returncode:
                raise SystemExit(f"calibrate --runtime failed: {r.stderr.strip()[-500:]}")
            out, seconds = r.stdout, time.monotonic() - t0
            after = pace_time(a, exe, lib, probe)
            warning = next((ln for ln in r.stderr.splitlines() if "warning:" in ln), None)
            if not warning:
                break
            busy.append(f"{stamp} ({seconds:.1f} s, {warning.split('warning: ')[1].split(':')[0]})")
            print(f"runtime_calibration: calibration of {stamp} on a busy host, "
                  f"{'again' if attempt + 1 < CALIBRATE_ATTEMPTS else 'kept'}: {warning}", file=sys.stderr)
        lvo.sh([a.fuseplan, "calibrate", "--threads", threads, "--seconds", "3", "-o", a.native_profile])
        with open(os.path.join(a.out, "calibrate.json"), "w") as f:
            json.dump({"seconds": seconds, "stdout": out, "pace": [probe["key"], before, after], "busy": busy,
                       "attempts": attempt + 1}, f)
    with open(os.path.join(a.out, "calibrate.json")) as f:
        d = json.load(f)
    cp = configparser.ConfigParser()
    cp.read(a.rt_profile)
    a.ort_threads = int(cp["device"].get("threads", "1"))
    a.busy_calibrations, a.calibrations = d.get("busy", []), d.get("attempts", 1)
    return d["seconds"], d["stdout"], d.get("pace")


def profile_check(a, lib):
    """`calibrate --runtime --check` of the runtime-calibrated profile right after the network passes,
    as a sentence: its estimates over ONNX Runtime's times of a sample of the micro-models now (the
    calibration's own statistic, so 1 while the host runs as it did when calibrated). Not with
    --reuse (the timings it would be set beside are older)."""
    if a.reuse:
        return "Profile check after the passes: not run (--reuse)."
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M UTC")
    cmd = [a.fuseplan, "calibrate", "--runtime", f"onnxruntime={lib}", "--check", a.rt_profile]
    r = subprocess.run(pinned(cmd, pin=not all_cores(a))[0], capture_output=True, text=True)
    m = re.search(r"median ([0-9.]+) over (\d+) points \(([0-9.]+) over the (\d+) launch-bound, ([0-9.]+) over the "
                  r"(\d+) others\)", r.stdout)
    if r.returncode or not m:
        return f"Profile check after the passes: failed ({(r.stderr or r.stdout).strip()[-300:]})."
    med = float(m.group(1))
    return (f"Profile check after the passes (`calibrate --runtime --check`, {stamp}): the profile's estimates "
            f"over ONNX Runtime's times of {m.group(2)} micro-models now, median {med:.2f} ({m.group(3)} over "
            f"{m.group(4)} launch-bound ones, {m.group(5)} over {m.group(6)} others): the runtime's kernels took "
            f"{1 / med:.2f}x the time they took while calibrated.")


def pace_text(pace, runs):
    """One line: the probe's time around the calibration and in each network pass, and the ratio of
    the passes' median to the calibration's (above 1: the networks ran slower than the host did while
    it was calibrated, so every estimate reads low by about that much)."""
    if not pace or None in pace[1:]:
        return "Host pace: not measured (a reused calibration, or the probe failed)."
    key, before, after = pace
    passes = runs.get(f"{key}|disabled", {}).get("window_passes", [])
    if not passes:
        return f"Host pace: {key} at level disabled {before:.1f} us before the calibration, {after:.1f} us after."
    mid = sorted(passes)[len(passes) // 2]
    return (f"Host pace ({key} at level disabled, its fastest 10 ms stretch): {before:.1f} us right before the "
            f"calibration, {after:.1f} us right after; in the network passes " +
            ", ".join(f"{x:.1f}" for x in passes) + f" us: the passes' median {mid / ((before + after) / 2):.3f} "
            "times the calibration's (above 1: the networks ran slower than the host did while calibrated).")


def keep_previous(a):
    """Copies the previous run's timings (--out's runs.json) to runs_previous.json, stamped with the
    time they were written, before this run's replace them (not with --reuse, which keeps them)."""
    path = os.path.join(a.out, "runs.json")
    if a.reuse or not os.path.exists(path):
        return
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as err:
        print(f"runtime_calibration: {path}: {err} (no repeatability this run)", file=sys.stderr)
        return
    d["written"] = datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    with open(os.path.join(a.out, "runs_previous.json"), "w") as f:
        json.dump(d, f, indent=1)


def repeat_text(a, runs):
    """One line: how many of this run's ONNX Runtime times (per level) are within +-10% of the previous
    run's on this host (runs_previous.json), the bound on how close any estimate can be shown to be."""
    path = os.path.join(a.out, "runs_previous.json")
    if not os.path.exists(path):
        return "Repeatability: no previous run's timings under --out to compare with."
    try:
        with open(path) as f:
            prev = json.load(f)
    except (OSError, ValueError) as err:
        return f"Repeatability: {path} unreadable ({err})."
    before = prev.get("runs") if isinstance(prev, dict) else None
    if not isinstance(before, dict):
        return f"Repeatability: {path} has no timings (no \"runs\" object)."
    parts = []
    for level in ("disabled", "all"):
        pairs = [(v["window_us"], before[k]["window_us"]) for k, v in runs.items()
                 if k.endswith("|" + level) and isinstance(before.get(k), dict) and "window_us" in before[k]]
        if pairs:
            ratios = sorted(x / y for x, y in pairs)
            parts.append(f"level {level} {sum(within(r) for r in ratios)} of {len(ratios)} (median ratio "
                         f"{ratios[len(ratios) // 2]:.3f}, range {ratios[0]:.2f}-{ratios[-1]:.2f})")
    if not parts:
        return f"Repeatability: no network timed both in this run and in {path}."
    return (f"Repeatability: ONNX Runtime's times in this run within +-10% of the previous run's on this host "
            f"(written {prev.get('written', 'earlier')}): " + "; ".join(parts) + ". A network whose own time moves "
            "further between runs cannot be shown within +-10% by any estimate.")


def check_micro(a):
    """(passed, total, failures) of onnx.checker (full_check: shape inference too) on every micro-model
    `calibrate --runtime` runs, as `calibrate --micro-models` writes them."""
    d = os.path.join(a.out, "micro")
    shutil.rmtree(d, ignore_errors=True)  # a case an earlier build wrote is no case of this one
    os.makedirs(d)
    lvo.sh([a.fuseplan, "calibrate", "--micro-models", d])
    names = sorted(f for f in os.listdir(d) if f.endswith(".onnx"))
    bad = []
    for f in names:
        try:
            onnx.checker.check_model(os.path.join(d, f), full_check=True)
        except Exception as err:  # noqa: BLE001 - any checker failure is a finding
            bad.append(f"{f}: {str(err).splitlines()[0][:160]}")
    return len(names) - len(bad), len(names), bad


def native_checks(a):
    """Lines on how the profile of fuseplan's own kernels ranks what it measured (the timing checks
    the unit test `device/cli_calibrate` leaves to this longer calibration), and whether all hold:
    every cache level streams faster than memory; the convolution expanded per group is slower
    than the dense one; the blocked depthwise kernel is faster than the expansion per channel."""
    cp = configparser.ConfigParser()
    cp.read(a.native_profile)
    eff = cp["efficiency"]
    mem = float(cp["device"]["bandwidth"])
    checks = [(f"cache level {k[:2]} ({float(cp['cache'][k]) / 1e9:.1f} GB/s) faster than memory "
               f"({mem / 1e9:.1f} GB/s)", float(cp["cache"][k]) > mem)
              for k in (cp["cache"] if cp.has_section("cache") else []) if k.endswith("_bandwidth")]
    g, c, n = float(eff["grouped_conv"]), float(eff["conv"]), float(eff["nchwc_depthwise"])
    checks += [(f"efficiency grouped_conv {g:.3g} below conv {c:.3g}", g < c),
               (f"efficiency nchwc_depthwise {n:.3g} above grouped_conv {g:.3g}", n > g)]
    return [f"{'holds' if ok else 'FAILS'}: {what}" for what, ok in checks], all(ok for _, ok in checks)


def estimate(a, entry, profile, target):
    """(original, final) estimated seconds of entry on profile with target (its input shapes: entry's
    "args", else lvo.input_args)."""
    args = entry["args"] if "args" in entry else lvo.input_args(entry)
    out = lvo.sh([a.fuseplan, "report", "-f", "json", "--no-headroom", "--device", profile, "--target", target] +
                 args + [entry["model"]])
    st = json.loads(out)["stages"]
    return st[0]["est_latency_s"], st[-1]["est_latency_s"]


# onnxruntime-genai's model builder names the decode step's dims so
GENAI_STEP = {**fidelity.DECODE_STEP, "seq_len": 1, "past_seq_len": 127, "total_seq_len": 128}


def genai_decoders(a):
    """The static copies (--out/genai/NAME_static.onnx) of onnxruntime-genai's test models that read
    a past, each distinct file once (under a name without "cuda" where it has one); [] without the
    repository's snapshot."""
    src, out = os.path.join(a.out, "genai", "src"), os.path.join(a.out, "genai")
    seen, res = set(), []
    for m in sorted(fidelity.genai_models(src), key=lambda m: ("cuda" in m, m)):  # a copy for CUDA: the other name
        with open(m, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        g = onnx.load(m, load_external_data=False).graph
        if digest in seen or not any("past" in i.name for i in g.input):
            continue
        seen.add(digest)
        res.append(fidelity.static_copy(m, os.path.join(out, os.path.basename(m)[:-5] + "_static.onnx"), GENAI_STEP))
    return res


def within(x):
    return abs(x - 1) <= TOL


def rows(a, entries, runs):
    """Per network: measured and estimated (both profiles) times in ms and their ratios."""
    out = []
    for e in entries:
        kd, ka = f"{e['key']}|disabled", f"{e['key']}|all"
        if kd not in runs or ka not in runs:
            continue
        md, ma = (runs[k].get("window_us", runs[k]["min_us"]) / 1e3 for k in (kd, ka))
        r = {"key": e["key"], "md": md, "ma": ma}
        try:
            for tag, prof in (("rt", a.rt_profile), ("nat", a.native_profile)):
                orig, _ = estimate(a, e, prof, "ort-cpu-extended")
                _, full = estimate(a, e, prof, "ort-cpu-all")
                r[tag] = (orig * 1e3, full * 1e3)
        except RuntimeError as err:
            print(f"runtime_calibration: {e['key']}: {err}", file=sys.stderr)
            continue
        out.append(r)
    return out


def summary(rs, tag):
    n = len(rs)
    d = sum(within(r[tag][0] / r["md"]) for r in rs)
    al = sum(within(r[tag][1] / r["ma"]) for r in rs)
    sp = sum(within((r[tag][0] / r[tag][1]) / (r["md"] / r["ma"])) for r in rs)
    d30 = sum(abs(r[tag][0] / r["md"] - 1) <= 0.3 for r in rs)
    a30 = sum(abs(r[tag][1] / r["ma"] - 1) <= 0.3 for r in rs)
    return (f"level disabled within +-10%: {d} of {n} ({100 * d / n:.0f}%), level all: {al} of {n} "
            f"({100 * al / n:.0f}%), speedup disabled -> all: {sp} of {n} ({100 * sp / n:.0f}%); within +-30%: "
            f"{d30} and {a30} of {n}")


def level_text(rs, tag):
    """The profile's level (geometric mean of estimate / measured at each level) and the counts
    within +-10% once each level's estimates are divided by it: what the shape of the estimates
    gets right, apart from a level the host's pace between calibration and timing moves."""
    n = len(rs)
    gm = [math.exp(sum(math.log(r[tag][i] / r[m]) for r in rs) / n) for i, m in ((0, "md"), (1, "ma"))]
    d = sum(within(r[tag][0] / r["md"] / gm[0]) for r in rs)
    al = sum(within(r[tag][1] / r["ma"] / gm[1]) for r in rs)
    return (f"geometric mean estimate / measured {gm[0]:.3f} at level disabled and {gm[1]:.3f} at level all; "
            f"with each level's estimates divided by it (not the acceptance: the level is), {d} and {al} of {n} "
            "within +-10%")


def confirmed_text(runs):
    n = sum(1 for v in runs.values() if v.get("confirmed"))
    fast = sum(1 for v in runs.values() if v.get("fast_phase"))
    return (f"{n} of {len(runs)} confirmed by a second pass within {lvo.CONFIRM:.0%}, {fast} timed in the host's "
            f"fast phase (the probe's fastest 10 ms stretch within {lvo.PHASE_TOL:.0%} of its fastest right before "
            "and after the timing)")


def busy_text(a):
    """The calibrations done again because calibrate warned of a busy host, as a sentence (or '')."""
    busy = getattr(a, "busy_calibrations", [])
    if not busy:
        return ""
    return (f" Calibrated {a.calibrations} times: `calibrate` warned of a busy host after the one of " +
            ", ".join(busy) + "; the profile kept is the last one's.")


def report(a, seconds, cal_out, rs, errors, log, micro, native, runs):
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    fitted = [ln for ln in cal_out.splitlines() if ln.startswith("runtime") or ln.startswith("  ")]
    lines = [f"Written {stamp} by `bench/runtime_calibration.py` ({a.passes} passes of {a.budget_ms} ms per network "
             f"and level, then up to {a.confirm_s} s of passes over the unconfirmed and those never timed in the "
             f"host's fast phase; a level's time a run's in its fastest 10 ms stretch; {confirmed_text(runs)}; "
             f"{threads_text(a)}).", "",
             f"**`fuseplan calibrate --runtime onnxruntime --threads {a.threads}` took {seconds:.1f} s** "
             "(asked: under 120 s)." + busy_text(a),
             "", f"Its micro-models (`calibrate --micro-models DIR`): {micro[0]} of {micro[1]} pass `onnx.checker` "
             f"(onnx {onnx.__version__}, full_check)" + (": " + "; ".join(micro[2]) if micro[2] else "."), "", "Load while measuring:", ""] + [f"- {x}" for x in log] + [""]
    lines += [f"- runtime-calibrated profile: {summary(rs, 'rt')}",
              f"- runtime-calibrated profile's level: {level_text(rs, 'rt')}",
              f"- profile of fuseplan's own kernels (`calibrate --threads {a.threads} --seconds 3`): "
              f"{summary(rs, 'nat')}", ""]
    lines += ["The own-kernel profile's ranking of what it measured:", ""] + [f"- {x}" for x in native] + [""]
    if errors:
        lines += ["Not run by ONNX Runtime: " + "; ".join(f"{k} ({v[:120]})" for k, v in sorted(errors.items())), ""]
    lines += ["| network | ORT disabled (ms) | est. (runtime) | ratio | ORT all (ms) | est. (runtime) | ratio | "
              "ORT speedup | est. speedup (runtime) | own-kernel profile: ratio disabled | ratio all | est. speedup |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rs:
        (od, oa), (nd, na) = r["rt"], r["nat"]
        lines.append(f"| {r['key']} | {r['md']:.2f} | {od:.2f} | {od / r['md']:.2f} | {r['ma']:.2f} | {oa:.2f} | "
                     f"{oa / r['ma']:.2f} | {r['md'] / r['ma']:.2f}x | {od / oa:.2f}x | {nd / r['md']:.2f} | "
                     f"{na / r['ma']:.2f} | {nd / na:.2f}x |")
    lines += ["", "The runtime-calibrated profile's fit (stdout of `calibrate --runtime`):", "", "```"] + fitted + ["```"]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuseplan", default=os.path.join(ROOT, "build/fuseplan"), help="the executable judged")
    ap.add_argument("--ort", default=os.path.join(ROOT, "bench"), help="folder of node_modules/onnxruntime-node")
    ap.add_argument("--threads", default="1", help="ONNX Runtime's intra-op threads: a count, or 0 or 'all' for all "
                    "cores (the profile's [device] threads; default 1)")
    ap.add_argument("--out", default=None, help="work folder (default bench/out/runtime_calibration, with _all at "
                    "all cores)")
    ap.add_argument("--passes", type=int, default=3, help="timing passes; a level's time is its fastest 10 ms stretch")
    ap.add_argument("--confirm-s", type=int, default=240, help="then passes over the networks and levels whose fastest "
                    f"stretch no second pass came within {lvo.CONFIRM * 100:.0f}%% of, for up to this many seconds")
    ap.add_argument("--budget-ms", type=int, default=300, help="ORT's timing budget per network and level")
    ap.add_argument("--reuse", action="store_true", help="keep the profiles and timings --out holds")
    ap.add_argument("--dims", action="append", default=[], metavar="NAME=VALUE",
                    help="bind the symbolic dim NAME to VALUE in every network that has it; "
                         "NETWORK:NAME=VALUE in that network only (its file name without .onnx); "
                         "after PaddleOCR's sizes (ort_common.PADDLE_DIMS), which it overrides")
    ap.add_argument("-o", "--output", default=None,
                    help="the table as Markdown (default bench/results/runtime_calibration.md, with _all at all cores)")
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs/benchmarks.md"), help="the document it goes into")
    ap.add_argument("--genai", action="store_true", help="also onnxruntime-genai's test decoders, fixed at one "
                    "decode step (from the repository's snapshot; none without it)")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    if not (all_cores(a) or a.threads.isdigit()):
        sys.stderr.write(f"runtime_calibration: --threads {a.threads}: a count, or 0 or all\n")
        sys.exit(2)
    suffix = "_all" if all_cores(a) else ("" if a.threads == "1" else f"_{a.threads}t")
    a.out = a.out or os.path.join(ROOT, f"bench/out/runtime_calibration{suffix}")
    a.output = a.output or os.path.join(ROOT, f"bench/results/runtime_calibration{suffix}.md")
    os.makedirs(a.out, exist_ok=True)
    a.fuseplan = os.path.abspath(a.fuseplan)
    exe, lib = lvo.harness(a)
    models = a.models + (genai_decoders(a) if a.genai else [])
    entries = [{"key": os.path.basename(m)[:-5], "model": os.path.abspath(m)} for m in models]
    for e in entries:
        e["dims"] = bound_dims(PADDLE_DIMS + a.dims, e["key"])
    probe = next((e for e in entries if e["key"] == PACE_PROBE), entries[0])
    keep_previous(a)
    seconds, cal_out, pace = calibrate(a, exe, lib, probe)
    print(f"runtime_calibration: calibrate --runtime took {seconds:.1f} s", file=sys.stderr)
    lvo.LEVELS = ("disabled", "all")
    a.phase_probe = probe
    runs, errors, log = lvo.measure(a, entries)
    log.append(profile_check(a, lib))
    native, native_ok = native_checks(a)
    log.append(pace_text(pace, runs))
    log.append(repeat_text(a, runs))
    text = report(a, seconds, cal_out, rows(a, entries, runs), errors, log, check_micro(a), native, runs)
    os.makedirs(os.path.dirname(a.output), exist_ok=True)
    with open(a.output, "w") as f:
        f.write(text)
    if all_cores(a):
        write_section(a.doc, TITLE_ALL, BEGIN_ALL, END_ALL, text)
    else:
        write_section(a.doc, TITLE, BEGIN, END, text)
    sys.stdout.write(text)
    if not native_ok:
        sys.exit("runtime_calibration: the own-kernel profile ranks its classes wrongly: " +
                 "; ".join(x for x in native if x.startswith("FAILS")))


if __name__ == "__main__":
    main()
