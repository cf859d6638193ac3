#!/usr/bin/python3
"""Write bench/results/fit.md from the outputs of bench/ort_fit.sh.

  /usr/bin/python3 bench/fit_report.py [--fuseplan BIN] [--host BASE.ini] [--passes PASSES.json]
                                       [--load LOAD.txt] [--alt FIT.json] FIT_ALL.json [FIT_NETWORKS.json]

FIT_*.json are `fuseplan fit -f json` outputs. Models are split into networks (5 measured rows or
more) and small models (fewer: libonnx-testdata's single-op models, eps_story, if_subgraph). For the
base profile, the profile fitted on every model (in sample) and leave-one-model-out (cv): models
within the tolerance end to end, the median |end-to-end error|, the median per-network Spearman.
--passes (bench/ort_robust.py's passes.json: each model's robust total in each pass alone) gives the
repeatability table; --load (bench/ort_fit.sh's load.txt: one line per profiling pass) says how busy
the machine was; --alt (another objective's fit on the same data) adds its leave-one-model-out count;
the per-op-type table of the small models reads the profiles with
`fuseplan profile`.
"""
import configparser
import json
import math
import os
import re
import statistics
import subprocess
import sys


def name_of(path):
    base = os.path.basename(path)
    return os.path.basename(os.path.dirname(path)) if base == "model.onnx" else base.rsplit(".", 1)[0]


def load_json(path):
    """A `fuseplan ... -f json` output. json-glib 1.6 writes a double whose shortest form has no '.'
    but an exponent (1e-08) as "1e-08.0", which is not JSON; read it as the number it means."""
    with open(path) as f:
        return json.loads(re.sub(r"(\d[eE][-+]?\d+)\.0\b", r"\1", f.read()))


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def is_network(m):
    return m["fit"]["rows"] >= 5


def group_stats(models, key, tol):
    ratios = [m[key]["ratio"] for m in models if m.get(key) and m[key]["ratio"] is not None]
    within = sum(abs(r - 1) <= tol for r in ratios)
    err = statistics.median(abs(r - 1) * 100 for r in ratios) if ratios else None
    sp = [m[key]["spearman"] for m in models if m.get(key) and m[key]["spearman"] is not None and m[key]["rows"] >= 5]
    return within, len(ratios), err, statistics.median(sp) if sp else None


def profile_json(fp, path):
    out = subprocess.run([fp, "profile", "-f", "json", "--top", "0", path], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def summary(d, title):
    tol = d["summary"]["tolerance"]
    nets = [m for m in d["models"] if is_network(m)]
    small = [m for m in d["models"] if not is_network(m)]
    out = [f"### {title}", ""]
    out.append(f"{d['summary']['models']} models ({len(nets)} networks with 5 measured rows or more, {len(small)} "
               f"smaller), {d['summary']['rows']} rows, {d['rows_used']} used by the fit (weights: {d['objective']}); "
               f"rms log error {d['rms_log_error']['base']:.3f} with the base profile, "
               f"{d['rms_log_error']['fitted']:.3f} fitted.")
    out.append("")
    out.append(f"| models | profile | within +-{tol * 100:.0f}% end to end | median abs. end-to-end error | "
               "median Spearman per network |")
    out.append("|---|---|---|---|---|")
    groups = [("all", d["models"]), ("networks", nets), ("small", small)] if small and nets else [("all", d["models"])]
    for label, group in groups:
        for key, kname in (("base", "base"), ("fit", "fitted (in sample)"), ("cv", "leave-one-model-out")):
            w, n, err, sp = group_stats(group, key, tol)
            out.append(f"| {label} | {kname} | {w} / {n} | {fmt(err, '.1f')}% | {fmt(sp)} |")
    out.append("")
    out.append(f"Spearman over every row of every model: fitted {fmt(d['summary']['spearman_fit'])}, "
               f"leave-one-model-out {fmt(d['summary']['spearman_cv'])}.")
    out.append("")
    out.append("| parameter | base | fitted | rows informing it |")
    out.append("|---|---|---|---|")
    for p in d["parameters"]:
        scale, unit = (1e6, " us") if p["name"].startswith("launch") else (1, "")
        out.append(f"| {p['name']} | {p['base'] * scale:.4g}{unit} | {p['fitted'] * scale:.4g}{unit} | "
                   f"{p['informed_rows']} |")
    out.append("")
    return out


def per_model(d):
    out = ["| model | stage | kernels matched | measured us | base est/meas | fitted | leave-one-out | "
           "l-o-o median abs. error per op | l-o-o Spearman |", "|---|---|---|---|---|---|---|---|---|"]
    for m in sorted(d["models"], key=lambda m: (not is_network(m), name_of(m["model"]))):
        cv = m["cv"] or {}
        out.append(f"| {name_of(m['model'])} | {m['stage']} | {m['matched']} / {m['kernels']} | "
                   f"{m['measured_us']:.1f} | {fmt(m['base']['ratio'])} | {fmt(m['fit']['ratio'])} | "
                   f"{fmt(cv.get('ratio'))} | {fmt(cv.get('median_abs_pct_error'), '.1f')}% | "
                   f"{fmt(cv.get('spearman'))} |")
    out.append("")
    return out


def noise(d, passes):
    rows = []
    for m in d["models"]:
        totals = passes.get(os.path.abspath(m["model"]))
        if totals and len(totals) > 1 and min(totals) > 0:
            rows.append((name_of(m["model"]), is_network(m), max(totals) / min(totals) - 1))
    n = max((len(v) for v in passes.values()), default=0)
    out = ["### Repeatability", "",
           f"Each model was profiled in {n} passes over the list, one after the other. The fit uses one time per kernel, "
           "its runs of every pass pooled (the mean of the runs within 1.5x of its fastest, bench/ort_robust.py); "
           "here, the same robust total of each pass alone, slowest / fastest - 1:", "",
           "| models | spread <= 5% | spread <= 15% | median spread | worst |", "|---|---|---|---|---|"]
    for label, sel in (("networks", [r for r in rows if r[1]]), ("small", [r for r in rows if not r[1]])):
        if not sel:
            continue
        worst = max(sel, key=lambda r: r[2])
        out.append(f"| {label} | {sum(r[2] <= 0.05 for r in sel)} / {len(sel)} | {sum(r[2] <= 0.15 for r in sel)} / "
                   f"{len(sel)} | {statistics.median(r[2] for r in sel) * 100:.1f}% | {worst[0]} "
                   f"{worst[2] * 100:.0f}% |")
    out.append("")
    return out


def small_by_type(fp, d):
    """Measured time of the small models' kernels by op type: the per-kernel cost ORT pays."""
    by = {}
    for m in d["models"]:
        if is_network(m):
            continue
        p = profile_json(fp, m["profile"])
        for g in p["by_type"]:
            by.setdefault(g["op_type"] or "?", []).append(g["total_us"] / max(g["kernels"], 1))
    out = ["### Per-kernel cost of the small models", "",
           "Mean measured time of one kernel, by op type, over the small models (tensors of a few hundred "
           "elements: compute and traffic are negligible, so this is what ORT pays per kernel):", "",
           "| op type | kernels | median us | min us | max us |", "|---|---|---|---|---|"]
    for t, v in sorted(by.items(), key=lambda kv: statistics.median(kv[1])):
        out.append(f"| {t} | {len(v)} | {statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} |")
    out.append("")
    return out


def findings(d):
    """Where the fit falls short of the target, with this run's numbers."""
    tol = d["summary"]["tolerance"]
    n = d["summary"]["models"]
    cv = d["summary"]["within_cv"]
    nets = [m for m in d["models"] if is_network(m)]
    small = [m for m in d["models"] if not is_network(m)]
    miss = sorted(((name_of(m["model"]), m["cv"]["ratio"]) for m in d["models"]
                   if m["cv"] and m["cv"]["ratio"] is not None and abs(m["cv"]["ratio"] - 1) > tol),
                  key=lambda x: abs(math.log(x[1])), reverse=True)
    nw = sum(1 for m in nets if m["cv"] and abs(m["cv"]["ratio"] - 1) <= tol)
    ns = sum(1 for m in small if m["cv"] and abs(m["cv"]["ratio"] - 1) <= tol)
    out = ["### Result", ""]
    out.append(f"- Target: leave-one-model-out within +-{tol * 100:.0f}% end to end on 80% of the models. Reached: "
               f"{cv} of {n} ({100 * cv / n:.0f}%): {nw} of {len(nets)} networks, {ns} of {len(small)} small models; "
               f"per-op ranking: Spearman {fmt(d['summary']['spearman_cv'])} over every row, leave-one-model-out.")
    out.append("- Outside the tolerance, leave-one-model-out (estimate / measured): " +
               ", ".join(f"{k} {r:.2f}" for k, r in miss) + ".")
    out.append("")
    return out


def host(path):
    c = configparser.ConfigParser(interpolation=None)
    c.optionxform = str
    c.read(path)
    cal = c["calibration"] if "calibration" in c else {}
    levels = ", ".join(f"L{i} {int(c['cache'][f'l{i}_bytes']) / 1048576:.3g} MiB at "
                       f"{float(c['cache'][f'l{i}_bandwidth']) / 1e9:.0f} GB/s" for i in (1, 2, 3)
                       if "cache" in c and f"l{i}_bytes" in c["cache"])
    ort = "description" in c["device"] and "ort_calibrate" in c["device"]["description"]
    return (f"Base profile `{os.path.basename(path)}`: `fuseplan calibrate --threads 1` on this machine "
            f"({cal.get('cpu', '?')}, {cal.get('kernel', '?')} SGEMM): fp32 peak "
            f"{float(c['peak']['fp32']) / 1e9:.1f} GFLOP/s, triad bandwidth {float(c['device']['bandwidth']) / 1e9:.1f} "
            f"GB/s, cache levels {levels or 'none'}, one thread"
            + ("; ONNX Runtime's launch overheads and convolution/matmul parameters from synthetic kernels "
               "(bench/ort_calibrate.py)." if ort else "; the other parameters at calibrate's defaults."))


def arg(name, n=1):
    """The value after `name` (n > 1: a list of n; n == 0: every value up to the next option)."""
    if name not in sys.argv:
        return None
    i = sys.argv.index(name)
    j = i + 1 + n if n > 0 else next((k for k in range(i + 1, len(sys.argv)) if sys.argv[k].startswith("--")),
                                     len(sys.argv))
    vals = sys.argv[i + 1:j]
    del sys.argv[i:j]
    return vals if n != 1 else vals[0]


def main():
    fp = arg("--fuseplan") or "build-fit/fuseplan"
    hostini = arg("--host")
    passes_path = arg("--passes")
    passes = json.load(open(passes_path)) if passes_path else {}
    load_path = arg("--load")
    alt_path = arg("--alt")
    fits = [load_json(p) for p in sys.argv[1:]]
    out = ["## Fitting the device profile to ONNX Runtime (bench/ort_fit.sh)", ""]
    if hostini:
        out += [host(hostini), ""]
    if load_path and os.path.exists(load_path):
        with open(load_path) as f:
            lines = [x.strip() for x in f if x.strip()]
        out += ["Load while measuring (a shared 2-vCPU VM; each profiling pass pinned at nice -20 to the core that "
                "was idlest when it started; load average over 1, 5, 15 minutes, from /proc/loadavg):", ""]
        out += [f"- {x}" for x in lines] + [""]
    out += findings(fits[0])
    if alt_path:
        alt = load_json(alt_path)
        tol = alt["summary"]["tolerance"]
        w, n, _, _ = group_stats(alt["models"], "cv", tol)
        out += [f"- The same data fitted with objective `{alt['objective']}` (instead of `{fits[0]['objective']}`): "
                f"{w} of {n} leave-one-model-out within +-{tol * 100:.0f}%, Spearman "
                f"{fmt(alt['summary']['spearman_cv'])}.", ""]
    out += summary(fits[0], "Fitted on every model")
    if len(fits) > 1:
        out += summary(fits[1], "Fitted on the networks alone")
    if passes:
        out += noise(fits[0], passes)
    out += small_by_type(fp, fits[0])
    out += ["### Per model (fitted on every model)", ""] + per_model(fits[0])
    print("\n".join(out))


if __name__ == "__main__":
    main()
