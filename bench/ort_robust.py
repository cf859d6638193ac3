#!/usr/bin/python3
"""Merge the ONNX Runtime profiles of several profiling passes into one robust profile per model
(bench/ort_fit.sh).

  /usr/bin/python3 bench/ort_robust.py OUT_DIR OUT_PAIRS [--extra-warmup 2] DIR1 DIR2 ...

Each DIR holds one pass of bench/ort_profiles.mjs (pairs.txt and <key>.<level>.raw.json). For every
model profiled in at least one pass, every kernel (a node name and its occurrence within a run) gets
one time: its runs of every pass are pooled (each pass's first run, the warm-up fuseplan skips, and
the --extra-warmup runs after it left out), and the time is the mean of the runs within 1.5x (or
2 us) of the fastest. On a shared machine a run of a kernel is either undisturbed or hit by a
preemption (a scheduler slice of milliseconds: a 1.3 ms convolution measures 5.5 ms) or by a
neighbour competing for the caches; noise only adds time, so the fastest runs are the machine's own
speed (Chen and Revels, "Robust benchmarking in noisy environments", arXiv:1608.04295, 2016), and
the mean of those near the fastest removes the microsecond rounding of ORT's timestamps that a
plain minimum would keep. Whole runs are not dropped: on a 100 ms network nearly every run has a
preempted kernel somewhere.

Writes OUT_DIR/<key>.<level>.json: an ORT profile of two runs (a warm-up copy and the robust run)
whose kernels keep ORT's names and arguments, laid end to end (kernels nested in a control-flow
kernel stay inside it); OUT_PAIRS gets "MODEL PROFILE" per model. Prints, per model, the robust
total of each pass alone (for the repeatability table of bench/fit_report.py) to
OUT_DIR/passes.json.
"""
import json
import os
import sys


def runs_of(events, extra):
    """Measured runs of one raw profile: lists of its Node events (in time order), warm-up left out."""
    runs = sorted((e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"),
                  key=lambda e: e["ts"])
    nodes = sorted((e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")),
                   key=lambda e: (e["ts"], -e["dur"]))
    out = []
    for r in runs:
        out.append([e for e in nodes if r["ts"] <= e["ts"] <= r["ts"] + r["dur"]])
    measured = out[1:]
    return measured[extra:] if len(measured) > extra + 2 else measured


def robust(values):
    lo = min(values)
    keep = [v for v in values if v <= max(1.5 * lo, lo + 2)]
    return sum(keep) / len(keep)


def parents(run):
    """Index of the innermost kernel each kernel of the run lies within (same thread), or None."""
    par = [None] * len(run)
    for i, e in enumerate(run):
        for j in range(i - 1, -1, -1):
            p = run[j]
            if p.get("tid") == e.get("tid") and p["ts"] <= e["ts"] and e["ts"] + e["dur"] <= p["ts"] + p["dur"]:
                par[i] = j
                break
    return par


def build(template, times):
    """Two runs (warm-up copy, robust run) of the template run's kernels with the robust times."""
    items = keyed_list(template)
    par = parents(template)
    dur = [times[k] for k, _ in items]
    for i in reversed(range(len(items))):  # a control-flow kernel holds its children end to end
        kids = [j for j in range(len(items)) if par[j] == i]
        if kids:
            dur[i] = max(dur[i], sum(dur[j] + 1 for j in kids) + 1)
    out, t = [], 0.0
    for _ in range(2):
        start = t
        t += 1
        ts = [0.0] * len(items)
        cursor = {}
        for i, (_, e) in enumerate(items):
            ev = dict(e)
            if par[i] is None:
                ts[i] = t
                t += dur[i] + 1
            else:
                ts[i] = cursor.get(par[i], ts[par[i]] + 1)
                cursor[par[i]] = ts[i] + dur[i] + 1
            ev["ts"], ev["dur"] = ts[i], dur[i]
            out.append(ev)
        out.append({"cat": "Session", "name": "model_run", "ph": "X", "pid": 1, "tid": 1, "ts": start,
                    "dur": t - start + 1, "args": {}})
        t += 10
    return out


def keyed_list(run):
    """[((name, occurrence), event)] in the run's order."""
    seen, out = {}, []
    for e in run:
        k = seen.get(e["name"], 0)
        seen[e["name"]] = k + 1
        out.append(((e["name"], k), e))
    return out


def main():
    args = sys.argv[1:]
    extra = 2
    if "--extra-warmup" in args:
        i = args.index("--extra-warmup")
        extra = int(args[i + 1])
        del args[i:i + 2]
    out_dir, out_pairs, dirs = args[0], args[1], args[2:]
    os.makedirs(out_dir, exist_ok=True)
    models = {}  # raw file name -> model path
    order = []
    for d in dirs:
        with open(os.path.join(d, "pairs.txt")) as f:
            for line in f:
                if not line.strip():
                    continue
                model, prof = line.split()
                raw = os.path.basename(prof)[:-len(".json")] + ".raw.json"
                if raw not in models:
                    order.append(raw)
                models.setdefault(raw, model)
    lines, per_pass = [], {}
    for raw in order:
        pooled, template, totals = {}, None, []
        for d in dirs:
            path = os.path.join(d, raw)
            if not os.path.exists(path):
                continue
            with open(path) as f:
                runs = runs_of(json.load(f), extra)
            if not runs:
                continue
            mine = {}
            for run in runs:
                for k, e in keyed_list(run):
                    mine.setdefault(k, []).append(e["dur"])
            template = template or runs[0]
            for k, v in mine.items():
                pooled.setdefault(k, []).extend(v)
            totals.append(sum(robust(v) for v in mine.values()))
        if template is None:
            continue
        times = {k: robust(v) for k, v in pooled.items()}
        dest = os.path.join(out_dir, raw.replace(".raw.json", ".json"))
        with open(dest, "w") as f:
            json.dump(build(template, times), f)
        lines.append(f"{models[raw]} {dest}")
        per_pass[os.path.abspath(models[raw])] = totals
    with open(out_pairs, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out_dir, "passes.json"), "w") as f:
        json.dump(per_pass, f, indent=1)
    print(f"{out_pairs}: {len(lines)} models, kernels pooled over {len(dirs)} passes")


if __name__ == "__main__":
    main()
