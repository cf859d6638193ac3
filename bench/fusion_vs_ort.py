#!/usr/bin/python3
"""Side by side with ONNX Runtime: what ORT (CPU EP, extended level) really fused vs fuseplan's
ort-cpu-extended target.

  /usr/bin/python3 bench/fusion_vs_ort.py --ort /tmp/ort [--fuseplan build/fuseplan] MODEL.onnx...

For each model: ORT's optimized model is saved (bench/ort_optimize.mjs) and counted with
python3-onnx; fuseplan's `explain --format json` is counted the same way. Compared:
  - BatchNormalization nodes ORT removed  vs  conv_bn and conv_transpose_bn fusions fuseplan applied;
  - FusedConv nodes per `activation`      vs  conv_activation fusions per activation.
  - the op histogram of the final graph, views aside (Reshape, Flatten, Squeeze, Unsqueeze,
    Identity, which launch no kernel): ORT's optimized model vs fuseplan's `report` ops.
  - node by node, where the histograms are equal: each runtime node's op and the original nodes it
    came from, derived from tensor names in both graphs alike (bench/provenance.py).
At levels basic and all, or with --histogram, only the histograms (and node by node), each differing
model listed with the first op type (by name) whose count differs.
Prints a Markdown table (for docs/benchmarks.md) and exits 1 if any count differs.
"""
import argparse
import collections
import contextlib
import json
import os
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import provenance  # noqa: E402


def all_nodes(g):
    for n in g.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(a.g)
            for sub in a.graphs:
                yield from all_nodes(sub)


def ort_counts(orig, opt):
    before = sum(1 for n in all_nodes(onnx.load(orig).graph) if n.op_type == "BatchNormalization")
    after_model = onnx.load(opt)
    after = sum(1 for n in all_nodes(after_model.graph) if n.op_type == "BatchNormalization")
    acts = collections.Counter()
    for n in all_nodes(after_model.graph):
        if n.op_type == "FusedConv":
            act = next((a.s.decode() for a in n.attribute if a.name == "activation"), "")
            acts[act] += 1
    return before - after, acts


VIEWS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}


def ort_kernels(opt):
    return collections.Counter(n.op_type for n in onnx.load(opt).graph.node if n.op_type not in VIEWS)


def fuseplan_report(exe, model, target="ort-cpu-extended", device=None):
    """fuseplan's `report -f json` document of model on target."""
    dev = ["--device", device] if device else []
    r = subprocess.run([exe, "report", "-f", "json", "--no-headroom", "--target", target] + dev + [model],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout)


def fuseplan_kernels(doc):
    return collections.Counter(o["op"] for o in doc["ops"] if o["op"] not in VIEWS)


def node_by_node(model, opt, doc):
    """The node-by-node cell of model: ORT's optimized model opt against fuseplan's report doc
    (bench/provenance.py), and whether they agree."""
    orig = onnx.load(model).graph
    comps = provenance.compare(provenance.Original(orig), provenance.ort_nodes(onnx.load(opt)),
                               provenance.fuseplan_nodes(doc), [t.name for t in orig.input])
    kinds = collections.Counter(k for k, _ in comps)
    bad = [line for k, line in comps if k not in provenance.AGREE]
    if not bad:
        return "yes (%d nodes, %d clusters)" % (kinds["node"], kinds["cluster"]), True
    return "no: %s; e.g. %s" % (", ".join(f"{k} {v}" for k, v in sorted(kinds.items()) if k not in provenance.AGREE),
                                bad[0].replace("|", "vs")), False


def fuseplan_counts(exe, model, args):
    r = subprocess.run([exe, "explain", "-f", "json", "--target", "ort-cpu-extended"] + args + [model],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    doc = json.loads(r.stdout)
    bn = sum(1 for f in doc["fusions"] if f["rule"] in ("conv_bn", "conv_transpose_bn") and f["applied"])
    acts = collections.Counter(f["activation"] for f in doc["fusions"]
                               if f["rule"] == "conv_activation" and f["applied"])
    return bn, acts


# The differences of the kernel histogram understood so far, by model file name (what fuseplan does
# not model, or models otherwise); a differing model not listed here is printed as not explained.
HISTOGRAM_DIFFERENCES = {}


def optimize(a, out):
    """ORT's optimized models at a.level: {model: saved path}, and [(model, error)] of the others."""
    r = subprocess.run(["node", os.path.join(HERE, "ort_optimize.mjs"), "--ort", os.path.abspath(a.ort), "--out", out,
                        "--level", a.level] + a.models, capture_output=True, text=True)
    optimized = dict(line.split("\t")[:2] for line in r.stdout.splitlines() if "\t" in line)
    failed = [(l.split("\t")[0], l.split("\t")[2]) for l in r.stderr.splitlines() if "\tERROR\t" in l]
    return optimized, failed


@contextlib.contextmanager
def saved_graphs(a, prefix="fp-ort-"):
    """The folder for ORT's saved graphs: a.out, else a temporary one removed afterwards (the graphs
    hold the weights: some GB for a corpus)."""
    if a.out:
        yield a.out
    else:
        with tempfile.TemporaryDirectory(prefix=prefix) as d:
            yield d


def histogram_only(a, out):
    """The kernel histograms of ORT at a.level (its graphs saved under out) and of fuseplan's
    a.target: a Markdown table; exit 1 when one differs that HISTOGRAM_DIFFERENCES does not explain."""
    optimized, failed = optimize(a, out)
    fmt = lambda c: ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"
    rows, skipped, first, agree = [], list(failed), {}, 0
    for m in a.models:
        if m not in optimized:
            continue
        try:
            doc = fuseplan_report(a.fuseplan, m, a.target, a.device)
            ort_k, fp_k = ort_kernels(optimized[m]), fuseplan_kernels(doc)
            nodes = node_by_node(m, optimized[m], doc) if ort_k == fp_k else ("-", False)
        except Exception as e:  # noqa: BLE001 - report and go on
            skipped.append((m, str(e)))
            continue
        only_ort, only_fp = ort_k - fp_k, fp_k - ort_k
        op = min(set(only_ort) | set(only_fp), default=None)
        first[os.path.relpath(m)] = f"{op} (ORT {ort_k[op]}, fuseplan {fp_k[op]})" if op else ""
        cell = "yes (%d)" % sum(ort_k.values()) if not only_ort and not only_fp else \
            "ORT only: %s; fuseplan only: %s" % (fmt(only_ort), fmt(only_fp))
        rows.append((os.path.relpath(m), cell, nodes[0]))
        agree += nodes[1]
    print("| model | kernel histogram equal (views aside) | node by node (op and original nodes) |")
    print("|---|---|---|")
    for row in rows:
        print("| `%s` | %s | %s |" % row)
    differing = [m for m, c, _ in rows if not c.startswith("yes")]
    print(f"\n{len(rows)} models compared: kernel histogram equal on {len(rows) - len(differing)}, node by node "
          f"on {agree}; {len(skipped)} not run")
    unexplained = 0
    if differing:
        print("\nWhy the kernel histograms differ:")
    for m in differing:
        extra = HISTOGRAM_DIFFERENCES_ALL.get(os.path.basename(m)) if a.level == "all" else None
        why = extra or HISTOGRAM_DIFFERENCES.get(os.path.basename(m))
        unexplained += why is None
        print(f"- `{m}`: first difference {first[m]}; {why or '**not explained yet**'}")
    for m, why in skipped:
        print(f"- `{m}`: {why}")
    sys.exit(1 if unexplained or not rows else 0)


# Differences at level all beyond those of HISTOGRAM_DIFFERENCES, by model file name.
HISTOGRAM_DIFFERENCES_ALL = {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ort", default=os.path.join(HERE))
    ap.add_argument("--fuseplan", default="build/fuseplan")
    ap.add_argument("--out", default=None)
    ap.add_argument("--level", default="extended", choices=["basic", "extended", "all"],
                    help="ORT's graph optimization level (all: compare the kernel histogram only)")
    ap.add_argument("--target", default="ort-cpu-extended", help="fuseplan's target for the histogram")
    ap.add_argument("--histogram", action="store_true",
                    help="at level extended too, only the kernel histograms (and each difference's first op type)")
    ap.add_argument("--device", default=None, help="fuseplan's device (name or .ini: its nchwc_block)")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    with saved_graphs(a) as out:
        return histogram_only(a, out) if a.level != "extended" or a.histogram else counts(a, out)


def counts(a, out):
    """BN folds, FusedConv activations and kernel histograms of ORT at level extended (its graphs
    saved under out) and of fuseplan: a Markdown table; exit 1 when a count differs."""
    optimized, failed = optimize(a, out)
    rows, bad, skipped, khist_bad, agree = [], 0, [], 0, 0
    for m in a.models:
        if m not in optimized:
            skipped.append((m, dict(failed).get(m, "not optimized")))
            continue
        try:
            ort_bn, ort_act = ort_counts(m, optimized[m])
            fp_bn, fp_act = fuseplan_counts(a.fuseplan, m, [])
            doc = fuseplan_report(a.fuseplan, m)
            ort_k, fp_k = ort_kernels(optimized[m]), fuseplan_kernels(doc)
            nodes = node_by_node(m, optimized[m], doc) if ort_k == fp_k else ("-", False)
        except Exception as e:  # noqa: BLE001 - report and go on
            skipped.append((m, str(e)))
            continue
        same = ort_bn == fp_bn and ort_act == fp_act
        bad += not same
        fmt = lambda c: ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"
        kdiff = ort_k - fp_k, fp_k - ort_k
        kernels_equal = not kdiff[0] and not kdiff[1]
        khist_bad += not kernels_equal
        kcell = "yes (%d)" % sum(ort_k.values()) if kernels_equal else "ORT only: %s; fuseplan only: %s" % (
            fmt(kdiff[0]), fmt(kdiff[1]))
        rows.append((os.path.relpath(m), ort_bn, fp_bn, fmt(ort_act), fmt(fp_act), "yes" if same else "**no**", kcell,
                     nodes[0]))
        agree += nodes[1]
    print("| model | BN folded by ORT | conv_bn and conv_transpose_bn by fuseplan | ORT FusedConv by activation | fuseplan conv_activation | "
          "equal | kernel histogram equal (views aside) | node by node (op and original nodes) |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| `%s` | %d | %d | %s | %s | %s | %s | %s |" % row)
    print(f"\n{len(rows)} models compared: BN folds and FusedConv activations equal on {len(rows) - bad}, different on "
          f"{bad}; whole kernel histogram equal on {len(rows) - khist_bad}, node by node on {agree}; "
          f"{len(skipped)} not run")
    differing = [r[0] for r in rows if not r[6].startswith("yes")]
    if differing:
        print("\nWhy the kernel histograms differ:")
    for m in differing:
        why = HISTOGRAM_DIFFERENCES.get(os.path.basename(m), "**not explained yet**")
        print(f"- `{m}`: {why}")
    for m, why in skipped:
        print(f"- `{m}`: {why}")
    sys.exit(1 if bad or not rows else 0)


if __name__ == "__main__":
    main()
