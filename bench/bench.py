#!/usr/bin/python3
"""Benchmark driver of `make bench` (bench/run.sh builds the tools and models, then runs this).

  /usr/bin/python3 bench/bench.py --fuseplan build/fuseplan --phases build/bench/fp_bench_phases \\
      --models-dir bench/out [--runs 5] [--peer-runs 3] [--peer-timeout 600] [--doc docs/benchmarks.md]

Measures every model with fuseplan (`fuseplan report MODEL`, all passes, text to stdout, and
`fuseplan info`: wall time, CPU time and peak RSS of the process, median of --runs runs), the
phases of `report` in-process (fp_bench_phases: load, pass pipeline, headroom, text), and the
peers: onnx.load + onnx.shape_inference.infer_shapes (bench/peer_onnx.py) and ONNX Runtime
session creation at the 'extended' level (bench/peer_ort.mjs). Rewrites the part of --doc between
the markers <!-- bench:begin --> and <!-- bench:end -->; the rest of the file is kept.
"""
import argparse
import datetime
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

# The analysis that is timed (issue 9): `fuseplan report MODEL`, every pass and the batch headroom,
# its text report on stdout (redirected to a file: never `-o /dev/null`, which g_file_set_contents
# replaces by a regular file as root). BENCH_ANALYZE="shapes --batch 1 -f json" times another command.
ANALYZE = os.environ.get("BENCH_ANALYZE", "report").split()
# In-process phases of fp_bench_phases, in order.
PHASES = ("load", "pipeline", "headroom", "report")


def run_timed(cmd, timeout=None):
    """Runs cmd; returns (wall_s, cpu_s, maxrss_kib, stdout), "timeout", or None on failure.

    The command runs under fp_bench_spawn (bench/spawn.c), which forks it from a small process: a
    process started directly from this Python would inherit Python's peak RSS (Linux keeps the
    high-water mark across exec). Wall time (fork to wait4), CPU time (user + system) and peak RSS
    are the command's own, as fp_bench_spawn measured them: nothing of the spawner's start-up is
    in them (/usr/bin/time, used before, added its own exec and ~5 ms of start-up here)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        child = subprocess.Popen([run_timed.spawn, tf.name] + cmd, stdout=out, stderr=err, start_new_session=True)
        deadline = None if timeout is None else t0 + timeout
        while True:
            pid, status, _ = os.wait4(child.pid, os.WNOHANG if deadline else 0)
            if pid:
                break
            if time.perf_counter() > deadline:
                os.killpg(child.pid, signal.SIGKILL)  # the command and the spawner: their own group
                os.wait4(child.pid, 0)
                return "timeout"
            time.sleep(0.005)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            msg = err.read().decode().strip()
            sys.stderr.write(f"bench: {' '.join(cmd)}: exit {child.returncode}: {msg[-500:]}\n")
            run_timed.last_error = msg.splitlines()[-1] if msg else f"exit {child.returncode}"
            return None
        v = dict(kv.split("=") for kv in tf.read().split())
        return float(v["wall_us"]) * 1e-6, float(v["cpu_us"]) * 1e-6, int(v["maxrss_kib"]), out.read().decode()


def measure(cmd, runs, timeout=None):
    """Median wall (ms), CPU (ms), peak RSS (KiB) over runs, and the JSON of the last run's stdout."""
    results = []
    for _ in range(runs):
        r = run_timed(cmd, timeout)
        if r is None or r == "timeout":
            return {"error": r or "failed"}
        results.append(r)
    out = {"wall_ms": statistics.median(x[0] for x in results) * 1e3,
           "cpu_ms": statistics.median(x[1] for x in results) * 1e3,
           "rss_kib": statistics.median(x[2] for x in results), "runs": runs,
           "wall_ms_each": [x[0] * 1e3 for x in results]}
    last = results[-1][3].strip().splitlines()
    if last and last[-1].startswith("{"):
        out["json"] = json.loads(last[-1])
    return out


def measure_phases(exe, model, runs, big_runs=5):
    """Median of every key=value that fp_bench_phases prints, over runs (big_runs from 1M nodes on;
    run as run_timed does, so that its own peak RSS figures do not inherit this process's)."""
    rows = []
    while len(rows) < (runs if not rows or float(rows[0]["nodes"]) < 1e6 else min(runs, big_runs)):
        r = run_timed([exe, model])
        if not isinstance(r, tuple):
            return None
        rows.append(dict(kv.split("=") for kv in r[3].split()))
    out = {k: statistics.median(float(row[k]) for row in rows) for k in rows[0]}
    out["runs"] = len(rows)
    out["total_ms_each"] = [float(row["total_ms"]) for row in rows]
    out["total_sys_ms_each"] = [float(row.get("total_sys_ms", "nan")) for row in rows]
    return out


def cpu_speeds(phases, model, rounds=3):
    """Per CPU the process may use: the median total_ms of fp_bench_phases on model, pinned to that
    CPU (the CPUs take turns, rounds times). A virtual machine's vCPUs need not run at one speed, nor
    at the same speed from one minute to the next: a process the scheduler starts on a slow one takes
    longer, which makes the runs of one model bimodal. Returns {cpu: ms}, {} when not measurable."""
    cpus = sorted(os.sched_getaffinity(0))
    times = {c: [] for c in cpus}
    if len(cpus) < 2 or not os.path.exists(model):
        return {}
    for _ in range(rounds):
        for c in cpus:
            r = subprocess.run([phases, model], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               preexec_fn=lambda c=c: os.sched_setaffinity(0, {c}), timeout=600)
            v = dict(kv.split("=") for kv in r.stdout.split()) if r.returncode == 0 else {}
            if "total_ms" not in v:
                return {}
            times[c].append(float(v["total_ms"]))
    return {c: statistics.median(t) for c, t in times.items()}


def speeds_text(sp):
    if not sp:
        return "not measured"
    fast = min(sp.values())
    return ", ".join(f"CPU {c} {t:.1f} ms ({t / fast:.2f}x)" for c, t in sorted(sp.items(), key=lambda kv: int(kv[0])))


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              timeout=60).stdout.strip()
    except subprocess.TimeoutExpired:
        return "?"


def machine_info(fuseplan, ort_dir):
    cpu = sh("lscpu | sed -n 's/^Model name: *//p' | head -1")
    cores = os.cpu_count()
    mem = sh("awk '/MemTotal/ {printf \"%.0f GiB\", $2/1048576}' /proc/meminfo")
    ort = "not installed"
    pj = os.path.join(ort_dir, "node_modules", "onnxruntime-node", "package.json")
    if os.path.exists(pj):
        ort = json.load(open(pj))["version"]
    return {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": f"{cpu}, {cores} cores, {mem} RAM",
        "os": f"Debian {sh('cat /etc/debian_version')}, Linux {platform.release()}",
        "fuseplan": sh(f"{fuseplan} --version"),
        "gcc": sh("gcc --version | head -1"),
        "onnx": sh("/usr/bin/python3 -c 'import onnx; print(onnx.__version__)'"),
        "onnxruntime": f"onnxruntime-node {ort} (node {sh('node --version')})",
        "load": sh("cut -d' ' -f1-3 /proc/loadavg"),
        "libs": sh(f"ldd {fuseplan} | wc -l"),
    }


def mib(kib):
    return f"{kib / 1024:.1f}"


def ms(x):
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def cell(m, key="wall_ms"):
    if "error" in m:
        return m["error"]
    return ms(m[key])


def ratio(peer_ms, fp_ms):
    if fp_ms <= 0:
        return "-"
    x = peer_ms / fp_ms
    return f"{x:.0f}x" if x >= 10 else f"{x:.1f}x"


def file_size(path):
    size = os.path.getsize(path)
    data = path + ".data"
    if os.path.exists(data):
        size += os.path.getsize(data)
    return size


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fuseplan", required=True)
    ap.add_argument("--tools", required=True, help="folder of fp_bench_phases, fp_bench_pagefault, fp_bench_spawn")
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 5)))
    ap.add_argument("--peer-runs", type=int, default=int(os.environ.get("BENCH_PEER_RUNS", 3)))
    ap.add_argument("--peer-timeout", type=int, default=int(os.environ.get("BENCH_PEER_TIMEOUT", 600)))
    ap.add_argument("--peer-max-nodes", type=int, default=int(os.environ.get("BENCH_PEER_MAX_NODES", 1000000)))
    ap.add_argument("--big-runs", type=int, default=int(os.environ.get("BENCH_BIG_RUNS", 5)),
                    help="in-process phase runs from 1M nodes on (the process is always measured --runs times)")
    ap.add_argument("--ort-max-nodes", type=int, default=int(os.environ.get("BENCH_ORT_MAX_NODES", 100000)),
                    help="ORT takes ~40 s and 1.3 GB at 100k nodes; larger graphs are skipped")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000, 1000000],
                    help="synthetic graph sizes (models-dir/synth_N.onnx)")
    ap.add_argument("--curve-sizes", type=int, nargs="*", default=[2000, 5000, 20000, 50000],
                    help="more synthetic sizes (models-dir/synth_N.onnx), timed in-process only, for the curve of "
                    "time per node against size (not judged)")
    ap.add_argument("--big", action="store_true", help="also the ~1 GB model (models-dir/resnet50_w3.2.onnx)")
    ap.add_argument("--ort-dir", default=HERE)
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--render-only", action="store_true",
                    help="rewrite --doc from the last run's models-dir/bench_results.json, measuring nothing")
    a = ap.parse_args()
    saved = os.path.join(a.models_dir, "bench_results.json")
    if a.render_only:
        state = json.load(open(saved))
        for k in ("runs", "peer_runs", "big_runs"):
            setattr(a, k, state["args"].get(k, 3))
        write_doc(a.doc, render_all(state["info"], state["results"], state["paths"], state["failed"], a))
        return

    info = machine_info(a.fuseplan, a.ort_dir)
    run_timed.spawn = os.path.join(a.tools, "fp_bench_spawn")
    info["fault_us"] = sh(os.path.join(a.tools, "fp_bench_pagefault")).partition("=")[2]
    calib = os.path.join(a.models_dir, "synth_10000.onnx")
    info["calib_model"] = os.path.relpath(calib, ROOT)
    info["cpu_speed"] = cpu_speeds(os.path.join(a.tools, "fp_bench_phases"), calib)
    info["startup"] = measure([a.fuseplan, "--version"], a.runs)
    samples = sorted(os.path.join(ROOT, "models", f) for f in os.listdir(os.path.join(ROOT, "models"))
                     if f.endswith(".onnx"))
    d = a.models_dir
    big = [os.path.join(d, f) for f in ("resnet50.onnx", "resnet50_ext.onnx") + (("resnet50_w3.2.onnx",) if a.big else ())
           if os.path.exists(os.path.join(d, f))]
    synth = [os.path.join(d, f"synth_{n}.onnx") for n in sorted(a.sizes)]
    have_ort = os.path.exists(os.path.join(a.ort_dir, "node_modules", "onnxruntime-node"))

    results, failed = {}, {}
    info["cpu_speed_at"] = {}
    for path in samples + big + synth:
        name = os.path.relpath(path, ROOT)
        sys.stderr.write(f"bench: {name}\n")
        if path in synth:  # the vCPUs' speeds change within a run: measured again before each size
            info["cpu_speed_at"][name] = cpu_speeds(os.path.join(a.tools, "fp_bench_phases"), calib)
        r = {"size": file_size(path)}
        r["phases"] = measure_phases(os.path.join(a.tools, "fp_bench_phases"), path, a.runs, a.big_runs)
        if r["phases"] is None:  # fuseplan refuses the model (e.g. a node limit): say so, measure the rest
            failed[name] = getattr(run_timed, "last_error", "failed")
            continue
        nodes = int(r["phases"]["nodes"])
        r["nodes"] = nodes
        r["analyze"] = measure([a.fuseplan] + ANALYZE + [path], a.runs)
        r["info"] = measure([a.fuseplan, "info", path], a.runs)
        if path in synth:  # the JSON document lists every op and fusion: to a file, as a pipeline writes it
            with tempfile.TemporaryDirectory() as tmp:
                r["analyze_json"] = measure([a.fuseplan] + ANALYZE + ["-f", "json", "-o", os.path.join(tmp, "r.json"),
                                            path], a.runs if nodes < 1000000 else min(a.runs, a.big_runs))
        peer_runs = a.peer_runs if nodes < 100000 else 1
        if nodes <= a.peer_max_nodes:
            r["onnx"] = measure(["/usr/bin/python3", os.path.join(HERE, "peer_onnx.py"), path], peer_runs,
                                a.peer_timeout)
            r["ort"] = {"error": "not installed"} if not have_ort else {"error": "skipped"} \
                if nodes > a.ort_max_nodes else \
                measure(["node", os.path.join(HERE, "peer_ort.mjs"), path, "--ort", a.ort_dir], peer_runs, a.peer_timeout)
        else:
            r["onnx"] = r["ort"] = {"error": "skipped"}
        results[name] = r
    # the curve: the sizes in between, in-process only, after the others (they do not disturb them)
    curve = {}
    for n in sorted(set(a.curve_sizes) - set(a.sizes)):
        path = os.path.join(d, f"synth_{n}.onnx")
        if os.path.exists(path):
            sys.stderr.write(f"bench: {os.path.relpath(path, ROOT)} (curve)\n")
            ph = measure_phases(os.path.join(a.tools, "fp_bench_phases"), path, a.runs, a.big_runs)
            if ph is not None:
                curve[str(n)] = ph
    results["curve"] = curve
    info["load_end"] = sh("cut -d' ' -f1-3 /proc/loadavg")
    info["cpu_speed_end"] = cpu_speeds(os.path.join(a.tools, "fp_bench_phases"), calib)
    results["startup"] = info["startup"]
    keep = lambda paths: [p for p in paths if os.path.relpath(p, ROOT) in results]
    paths = {"samples": keep(samples), "big": keep(big), "synth": keep(synth)}
    with open(saved, "w") as f:
        json.dump({"info": info, "results": results, "paths": paths, "failed": failed,
                   "args": {"runs": a.runs, "peer_runs": a.peer_runs, "big_runs": a.big_runs}}, f)
    write_doc(a.doc, render_all(info, results, paths, failed, a))


def render_all(info, results, paths, failed, a):
    block = render(info, results, paths["samples"], paths["big"], paths["synth"], a)
    if failed:
        block += "\nNot measured: fuseplan refused " + "; ".join(f"{k} ({v})" for k, v in failed.items()) + ".\n"
    return block


def peer_cell(p, fp_ms, key):
    if "error" in p:
        return p["error"], "-", "-"
    t = p["json"][key]
    return ms(t), mib(p["rss_kib"]), ratio(t, fp_ms)


def render(info, res, samples, big, synth, a):
    rel = lambda p: os.path.relpath(p, ROOT)
    cmd = " ".join(ANALYZE)
    L = []
    L.append(f"Measured {info['date']} by `make bench` (bench/run.sh, bench/bench.py).\n")
    L.append(f"- machine: {info['machine']}; {info['os']}")
    L.append(f"- load average (1, 5, 15 min) at start {info['load']}, at end {info['load_end']}: other work on "
             "the machine inflates wall times; CPU time (user + system) is less sensitive to it")
    if "cpu_speed" in info:
        L.append(f"- speed of each CPU: `fp_bench_phases {info['calib_model']}` pinned to it (taskset-like), "
                 f"median of 3, at start {speeds_text(info['cpu_speed'])}; at end "
                 f"{speeds_text(info.get('cpu_speed_end'))}" + "".join(
                     f"; before {k} {speeds_text(v)}" for k, v in info.get("cpu_speed_at", {}).items()) +
                 ". The measured processes run where the scheduler puts "
                 "them: when one vCPU is slower (the host shares its core), the runs that land on it are slower by "
                 f"as much, and a median of 5 runs can fall on either side: the time targets below are not judged "
                 f"when the CPUs ran more than {MAX_CPU_SPREAD}x apart at any of these measurements")
    L.append(f"- {info['fuseplan']}, {info['gcc']}, Release build (-O2)")
    st = info["startup"]
    L.append(f"- this machine: a page fault (first touch of a 4 KiB page) costs {info['fault_us']} us "
             "(bench/pagefault.c; well under 1 us on bare metal); `fuseplan --version`, i.e. process start-up "
             f"(dynamic loading of {info.get('libs', '?')} libraries, GLib/GObject set-up) takes "
             f"{cell(st)} ms wall, {cell(st, 'cpu_ms')} ms CPU, {mib(st['rss_kib']) if 'rss_kib' in st else '-'} MiB")
    L.append(f"- peers: python3-onnx {info['onnx']} (`onnx.load` + `onnx.shape_inference.infer_shapes`), "
             f"{info['onnxruntime']} (`InferenceSession.create`, CPU, level `extended`, 1 thread)")
    L.append(f"- fuseplan: `fuseplan {cmd} MODEL > FILE` (every pass, the batch headroom on cpu-avx2, the text "
             f"report) and `fuseplan info MODEL`, median of {a.runs} runs (wall time from fork to exit; CPU = user + system and "
             "peak RSS from the process's rusage: bench/spawn.c), process start-up included. "
             f"Peers: median of {a.peer_runs} runs (1 from 100k nodes on), time measured inside the peer's process "
             "(interpreter start-up and module import excluded), peak RSS of the whole process; "
             "\"x\" = peer time / fuseplan wall time.")
    L.append("")
    L.append("### Models\n")
    L.append(f"| model | nodes | file | `{ANALYZE[0]}` wall ms | CPU ms | peak RSS MiB | `info` wall ms | RSS MiB "
             "| onnx load+infer ms | RSS MiB | x | ORT create ms | RSS MiB | x |")
    L.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for p in samples + big + synth:
        r = res[rel(p)]
        an, inf = r["analyze"], r["info"]
        fp_ms = an.get("wall_ms", 0)
        o = peer_cell(r["onnx"], fp_ms, "total_ms")
        t = peer_cell(r["ort"], fp_ms, "create_ms")
        L.append(f"| {rel(p)} | {r['nodes']:,} | {human(r['size'])} | {cell(an)} | {cell(an, 'cpu_ms')} | "
                 f"{mib(an['rss_kib']) if 'rss_kib' in an else '-'} | {cell(inf)} | "
                 f"{mib(inf['rss_kib']) if 'rss_kib' in inf else '-'} | {o[0]} | {o[1]} | {o[2]} | {t[0]} | {t[1]} | "
                 f"{t[2]} |")
    L.append("")
    L.append("### Phases of `report`, in-process\n")
    L.append("bench/phases.c (`fp_bench_phases MODEL`) runs what `fuseplan report MODEL` runs, in one process, "
             "timing each phase: load (`fp_load_model`), the pass pipeline (shapes, metrics, fuse, layout, memory, "
             "cost, with the three stage snapshots), the batch headroom (plans: the batches planned besides the "
             "pipeline's), the text report; peak RSS after each phase. "
             f"Median of {a.runs} runs" + (f" ({a.big_runs} from 1M nodes on)" if a.big_runs != a.runs else "") + ".\n")
    L.append("| model | load ms | pipeline ms | headroom ms | plans | text ms | total ms | total CPU ms | "
             "peak RSS MiB after load | after pipeline | after headroom |")
    L.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for p in samples + big + synth:
        ph = res[rel(p)]["phases"]
        L.append(f"| {rel(p)} | {ms(ph['load_ms'])} | {ms(ph['pipeline_ms'])} | {ms(ph['headroom_ms'])} | "
                 f"{ph['evaluations']:.0f} | {ms(ph['report_ms'])} | {ms(ph['total_ms'])} | {ms(ph['total_cpu_ms'])} | "
                 f"{mib(ph['peak_kib_load'])} | {mib(ph['peak_kib_pipeline'])} | {mib(ph['peak_kib_headroom'])} |")
    L.append("")
    L.append("### Scaling (synthetic graphs, bench/gen_graph.c)\n")
    L.append("In-process = `report`'s phases in fp_bench_phases (load + pipeline + headroom + text); bytes/node = "
             "its peak RSS over the process's RSS before the model, per node. Process = `fuseplan report`.\n")
    L.append("| nodes | file | in-process us/node | CPU us/node | peak RSS MiB | bytes/node | "
             f"`{ANALYZE[0]}` wall ms | CPU ms | CPU us/node | peak RSS MiB | `-f json -o FILE` wall ms | "
             "peak RSS MiB |")
    L.append("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for p in synth:
        r = res[rel(p)]
        ph, an = r["phases"], r["analyze"]
        n = r["nodes"]
        L.append(f"| {n:,} | {human(r['size'])} | {ph['total_ms'] * 1e3 / n:.2f} | {ph['total_cpu_ms'] * 1e3 / n:.2f} | "
                 f"{mib(ph['peak_kib_report'])} | {(ph['peak_kib_report'] - ph['peak_kib_start']) * 1024 / n:.0f} | "
                 f"{cell(an)} | {cell(an, 'cpu_ms')} | "
                 f"{an['cpu_ms'] * 1e3 / n if 'cpu_ms' in an else 0:.2f} | "
                 f"{mib(an['rss_kib']) if 'rss_kib' in an else '-'} | {cell(r['analyze_json']) if 'analyze_json' in r else '-'} | "
                 f"{mib(r['analyze_json']['rss_kib']) if 'rss_kib' in r.get('analyze_json', {}) else '-'} |")
    if all("total_ms_each" in res[rel(p)]["phases"] for p in synth):
        L.append("")
        L.append("Each run, in the order run (in-process total, ms; the medians above; in brackets the kernel CPU "
                 "time of the run's threads, mostly the clearing of pages touched for the first time, which on this "
                 "kind of virtual machine costs up to ~10x more when the host has taken the memory back: see "
                 "the notes on fresh memory after the eighth round of hot spots): " +
                 "; ".join(f"{res[rel(p)]['nodes']:,}: {each_run(res[rel(p)]['phases'])}" for p in synth) + ".")
    L.extend(curve_lines(res, synth, rel))
    L.append("")
    L.append("### Weight size does not matter\n")
    L.append("| model | model file | weights | `{}` wall ms | peak RSS MiB | `info` peak RSS MiB | onnx peak RSS MiB | "
             "ORT peak RSS MiB |".format(ANALYZE[0]))
    L.append("|---|--:|--:|--:|--:|--:|--:|--:|")
    for p in big:
        r = res[rel(p)]
        data = p + ".data"
        weights = os.path.getsize(data) if os.path.exists(data) else os.path.getsize(p)
        where = "external" if os.path.exists(data) else "inside"
        o, t = r["onnx"], r["ort"]
        L.append(f"| {rel(p)} | {human(os.path.getsize(p))} | {human(weights)} ({where}) | {cell(r['analyze'])} | "
                 f"{mib(r['analyze']['rss_kib']) if 'rss_kib' in r['analyze'] else '-'} | "
                 f"{mib(r['info']['rss_kib']) if 'rss_kib' in r['info'] else '-'} | "
                 f"{mib(o['rss_kib']) if 'rss_kib' in o else o.get('error')} | "
                 f"{mib(t['rss_kib']) if 'rss_kib' in t else t.get('error')} |")
    L.append("")
    L.append(targets(res, big, synth, rel, info))
    return "\n".join(L)


def each_run(ph):
    """The in-process total of each run, with its kernel CPU time in brackets when measured."""
    sys_each = ph.get("total_sys_ms_each") or [float("nan")] * len(ph["total_ms_each"])
    return ", ".join(ms(t) + (f" ({ms(k)})" if k == k else "") for t, k in zip(ph["total_ms_each"], sys_each))


def curve_lines(res, synth, rel):
    """Time per node against size: the synthetic graphs of the target and the sizes in between
    (--curve-sizes), in-process, per phase; none when the run measured no curve."""
    pts = {int(res[rel(p)]["nodes"]): res[rel(p)]["phases"] for p in synth}
    pts.update({int(ph["nodes"]): ph for ph in res.get("curve", {}).values()})
    if len(pts) <= len(synth):
        return []
    L = ["", "Time per node against size (in-process wall, median of the runs; the sizes besides 1k, 10k, 100k "
         "and 1M are not part of the target):", "",
         "| nodes | total us/node | load | pipeline | headroom | text | kernel CPU us/node | peak RSS MiB |",
         "|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for n in sorted(pts):
        ph = pts[n]
        kernel = f"{ph['total_sys_ms'] * 1e3 / n:.2f}" if "total_sys_ms" in ph else "-"
        L.append(f"| {n:,} | {ph['total_ms'] * 1e3 / n:.2f} | {ph['load_ms'] * 1e3 / n:.2f} | "
                 f"{ph['pipeline_ms'] * 1e3 / n:.2f} | {ph['headroom_ms'] * 1e3 / n:.2f} | "
                 f"{ph['report_ms'] * 1e3 / n:.3f} | {kernel} | {mib(ph['peak_kib_report'])} |")
    return L


# The time targets are not judged on a run whose CPUs were further apart than this at its start, its
# end or before one of the synthetic sizes (cpu_speeds): its runs landed on either, and a median of
# 5 can be the slow CPU's (one run had 1k and 10k 1.65x slow throughout, and so "passed" the
# flatness row; another had them slow between a start and an end 1.07x apart).
MAX_CPU_SPREAD = 1.25


def cpu_spread(info):
    """The largest ratio slowest / fastest CPU of the run's speed measurements; 1.0 when none."""
    sps = [info.get("cpu_speed"), info.get("cpu_speed_end")] + list(info.get("cpu_speed_at", {}).values())
    spreads = [max(sp.values()) / min(sp.values()) for sp in sps if sp]
    return max(spreads, default=1.0)


def targets(res, big, synth, rel, info):
    """The speed targets (ResNet-50 and the 1M-node graph, in wall time and memory), checked
    against this run."""
    rows = []
    spread = cpu_spread(info)

    def row(what, value, ok, timed=False):
        if timed and spread > MAX_CPU_SPREAD:
            met = f"not judged: the CPUs ran {spread:.2f}x apart in this run"
        else:
            met = "yes" if ok else "**no**"
        rows.append(f"| {what} | {value} | {met} |")

    st = res["startup"]
    r50 = res.get("bench/out/resnet50.onnx")
    if r50 and "wall_ms" in r50["analyze"]:
        an, ph = r50["analyze"], r50["phases"]
        w = an["wall_ms"]
        row(f"ResNet-50 (~100 MB): `{ANALYZE[0]}` <= 10 ms wall", f"{ms(w)} ms process wall ({ms(an['cpu_ms'])} ms "
            f"CPU), of which start-up (`fuseplan --version`) {cell(st)} ms wall, {cell(st, 'cpu_ms')} ms CPU; "
            f"in-process {ms(ph['total_ms'])} ms (load {ms(ph['load_ms'])}, pipeline {ms(ph['pipeline_ms'])}, "
            f"headroom {ms(ph['headroom_ms'])}, text {ms(ph['report_ms'])})", w <= 10, timed=True)
        if "json" in r50["onnx"]:
            x = r50["onnx"]["json"]["total_ms"] / w
            row("ResNet-50: >= 100x faster than onnx.load + infer_shapes", f"{x:.0f}x fuseplan's process wall; "
                f"{r50['onnx']['json']['total_ms'] / ph['total_ms']:.0f}x fuseplan in-process (onnx is always "
                "measured in-process)", x >= 100, timed=True)
        row("ResNet-50: peak RSS <= 16 MB", f"{mib(an['rss_kib'])} MiB", an["rss_kib"] <= 16 * 1024)
    one_m = [p for p in synth if res[rel(p)]["nodes"] >= 1000000]
    if one_m:
        r = res[rel(one_m[0])]
        an, ph = r["analyze"], r["phases"]
        row(f"1M-node graph: full `{ANALYZE[0]}` <= 3 s", f"{an.get('wall_ms', 0) / 1e3:.1f} s process wall, "
            f"{an.get('cpu_ms', 0) / 1e3:.1f} s CPU; in-process {ph['total_ms'] / 1e3:.1f} s (load "
            f"{ph['load_ms'] / 1e3:.1f}, pipeline {ph['pipeline_ms'] / 1e3:.1f}, headroom {ph['headroom_ms'] / 1e3:.1f})",
            an.get("wall_ms", 1e9) <= 3000, timed=True)
        row("1M-node graph: <= 1 GiB RSS", f"{mib(an.get('rss_kib', 0))} MiB (in-process: after load "
            f"{mib(ph['peak_kib_load'])}, after the pipeline {mib(ph['peak_kib_pipeline'])})",
            an.get("rss_kib", 1e12) <= 1 << 20)
    if len(synth) >= 2:
        sizes = [res[rel(p)]["nodes"] for p in synth]
        for what, val in (("in-process wall", lambda r: r["phases"]["total_ms"]),
                          ("in-process CPU", lambda r: r["phases"]["total_cpu_ms"]),
                          ("process CPU, start-up included", lambda r: r["analyze"].get("cpu_ms", 0))):
            per = [val(res[rel(p)]) / res[rel(p)]["nodes"] for p in synth]
            base = statistics.median(per)
            dev = max(abs(x / base - 1) for x in per)
            rows.append(f"| time per node from {sizes[0]:,} to {sizes[-1]:,} ({what}; shown, no longer a target) | "
                        + " / ".join(f"{x * 1e3:.2f}" for x in per)
                        + f" us/node (max {dev * 100:.0f}% from the median) | not a target |")
    gb = [p for p in big if "w3.2" in p]
    if gb:
        r = res[rel(gb[0])]
        row("1 GB model: peak RSS <= 64 MB", f"{mib(r['analyze']['rss_kib'])} MiB", r["analyze"]["rss_kib"] <= 64 * 1024)
    return "### Targets\n\n| target | measured | met |\n|---|---|---|\n" + "\n".join(rows) + "\n"


def write_between(path, text, begin, end, block):
    """Writes text (which holds the markers begin and end) to path, atomically, with block in
    place of what stood between the markers."""
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{head}{begin}\n{block}\n{end}{tail}")
    os.replace(tmp, path)


def write_section(path, title, begin, end, block):
    """Writes block between the markers begin and end of the document at path; when the document has
    no such markers, a section headed title holding them is added at its end first."""
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    if begin not in text or end not in text:
        text += f"\n{title}\n\n{begin}\n{end}\n"
    write_between(path, text, begin, end, block)


def write_doc(path, block):
    text = open(path).read() if os.path.exists(path) else f"# Benchmarks\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        text += f"\n{BEGIN}\n{END}\n"
    write_between(path, text, BEGIN, END, block)
    sys.stderr.write(f"bench: wrote {os.path.relpath(path, ROOT)}\n")


if __name__ == "__main__":
    main()
