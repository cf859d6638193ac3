#!/usr/bin/python3
"""difftest.py - differential test of fuseplan's ort-cpu-* targets against ONNX Runtime 1.30 (CPU EP):
random small variants of every rewrite fuseplan models (bench/difftest/gen.py), each optimized by ORT
at levels basic, extended and all (bench/difftest/ort_batch.mjs, one node process per batch) and
compared with fuseplan's `report` on the target of that level: the kernel histogram of the final
graph, views aside (Reshape, Flatten, Squeeze, Unsqueeze, Identity); which nodes of the variant are
left as they were (same name and op; both keep the names of the nodes they leave); and node by node,
each runtime node's op and the original nodes it came from, derived from tensor names the same way
in both graphs (bench/provenance.py: runtime nodes matched by the original tensors they write, a
chain joined by generated tensors compared as one cluster).

  /usr/bin/python3 bench/difftest/difftest.py [--count N] [--seed S] [--jobs J] [--fuseplan build/fuseplan]
      [--ort DIR] [--out bench/out/difftest] [--doc docs/benchmarks.md] [--minimize K] [--keep KEEP] [--data DIR]

With --data DIR, the first K kinds of disagreement (family, level, ops only ORT runs, ops only
fuseplan predicts), one variant each, are minimized (features reset to gen.MINIMAL and float32 while
it still disagrees at that level); one per kind after minimization, KEEP (--keep) at most, the
families in turn, is written to DIR: DIR/NAME.onnx, its lines "NAME.onnx LEVEL OP=N..." (ORT's kernels at
each level) in DIR/difftest.ort, and "NAME.onnx LEVEL reason" in DIR/known_differ.txt for the levels
fuseplan still predicts otherwise (tests/test_fuse.c reads both without ORT). The table by family
goes into --doc between <!-- difftest:begin --> and <!-- difftest:end -->; every node-by-node
disagreement, and every node whose own provenance (fuseplan's `from`) is not the one derived from
tensors, one line each (KIND, family, level, variant, both sides), into OUT/provenance.txt.
"""
import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import shutil
import subprocess
import sys
import time

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import gen  # noqa: E402
from bench import write_section  # noqa: E402
from fusion_vs_ort import VIEWS  # noqa: E402
import provenance  # noqa: E402

LEVELS = ("basic", "extended", "all")
BEGIN, END = "<!-- difftest:begin -->", "<!-- difftest:end -->"
TITLE = "## Differential test against ONNX Runtime: random variants of each rewrite"


def ort_batch(a, paths, out):
    """ORT's optimized model of each path at each level, in a.jobs node processes:
    {(path, level): saved path or None when ORT rejects the model}."""
    chunks = [paths[i::a.jobs] for i in range(a.jobs)]
    procs = []
    for i, chunk in enumerate(chunks):
        lst = os.path.join(out, f"list{i}.txt")
        open(lst, "w").write("\n".join(os.path.abspath(p) for p in chunk) + "\n")
        procs.append(subprocess.Popen(["node", os.path.join(HERE, "ort_batch.mjs"), "--ort", os.path.abspath(a.ort),
                                       "--out", os.path.join(out, "ort"), "--levels", ",".join(LEVELS), lst],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
    res = {}
    for p in procs:
        for line in p.communicate()[0].splitlines():
            w = line.split("\t")
            if len(w) >= 3:
                res[(w[0], w[1])] = None if w[2] == "ERROR" else w[2]
    return res


def kept(pairs, original):
    """Of (op, name) pairs, the names of the nodes of the original model left as they were (the same
    name and op): the node-by-node part of the comparison; fused nodes are compared by op alone."""
    return frozenset(name for op, name in pairs if original.get(name) == op)


def ort_graph(saved, original):
    """(kernel Counter, kept nodes, ops of NCHWc nodes, runtime nodes) of ORT's saved model, views aside
    but in the runtime nodes (provenance.ort_nodes). The NCHWc transformer names its nodes after their
    outputs, so the nodes of those ops are not compared by name."""
    model = onnx.load(saved)
    nodes = [n for n in model.graph.node if n.op_type not in VIEWS]
    nchwc = {n.op_type for n in nodes if n.domain == "com.microsoft.nchwc"}
    pairs = [(n.op_type, n.name) for n in nodes if n.op_type not in nchwc]
    return collections.Counter(n.op_type for n in nodes), kept(pairs, original), nchwc, provenance.ort_nodes(model)


def fuseplan_graph(a, path, level, original):
    """(kernel Counter, kept nodes, runtime nodes, eliminated nodes) of fuseplan's final graph of path on
    ort-cpu-LEVEL (the runtime nodes with fuseplan's own provenance: provenance.fuseplan_nodes), or the
    error text."""
    dev = ["--device", a.device] if level == "all" and a.device else []
    r = subprocess.run([a.fuseplan, "report", "-f", "json", "--no-headroom", "--target", "ort-cpu-" + level] + dev +
                       [path], capture_output=True, text=True)
    if r.returncode != 0:
        return "fuseplan: " + (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0], frozenset(), [], set()
    doc = json.loads(r.stdout)
    pairs = [(o["op"], o["name"]) for o in doc["ops"] if o["op"] not in VIEWS]
    return (collections.Counter(op for op, _ in pairs), kept(pairs, original), provenance.fuseplan_nodes(doc),
            provenance.eliminated(doc))


def fmt(c):
    return " ".join(f"{k}={v}" for k, v in sorted(c.items()))


def compare(a, items, out):
    """items [(key, family, feat, seed, path)] -> {(key, level): (ORT's kernels, fuseplan's kernels or
    error, ORT's kept nodes, fuseplan's, the node-by-node components [(kind, line)] of
    provenance.compare, fuseplan's own provenance where it is not the derived one
    (provenance.own_mismatches))}, pairs ORT rejected left out."""
    saved = ort_batch(a, [it[4] for it in items], out)
    jobs, originals, graphs = {}, {}, {}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for key, _, _, _, path in items:
            g = onnx.load(path).graph
            original = originals[key] = {n.name: n.op_type for n in g.node}
            graphs[key] = (provenance.Original(g), [t.name for t in g.input])
            for level in LEVELS:
                s = saved.get((os.path.abspath(path), level))
                if s:
                    jobs[(key, level)] = (ort_graph(s, original), ex.submit(fuseplan_graph, a, path, level, original))
    res = {}
    for k, ((o, ok, nchwc, onodes), fut) in jobs.items():
        f, fk, fnodes, gone = fut.result()
        orig, inputs = graphs[k[0]]
        comps = provenance.compare(orig, onodes, fnodes, inputs) if fnodes else []
        own = provenance.own_mismatches(orig, fnodes, inputs, gone)
        res[k] = (o, f, ok, frozenset(n for n in fk if originals[k[0]][n] not in nchwc), comps, own)
    return res


def kind(family, level, o, f):
    if isinstance(f, str):
        return (family, level, fmt(o), f)
    return (family, level, fmt(o - f), fmt(f - o))


VERDICTS = ("equal", "differ", "nodes", "provenance")


class Provenance:
    """The node-by-node comparison of the variants of the same histogram and nodes left: the
    components by level and kind (provenance.verdict), an example of each disagreeing kind by family
    and level, and fuseplan's own provenance ("from") where it is not the one derived from tensors."""

    def __init__(self):
        self.kinds = {lv: collections.Counter() for lv in LEVELS}
        self.agree = {lv: 0 for lv in LEVELS}
        self.examples, self.own, self.own_examples = {}, {lv: 0 for lv in LEVELS}, {}
        self.all = []  # every disagreement and own-from difference, one line each

    def add(self, name, fam, lv, comps, own):
        """Counts one variant's components; its verdict: equal or provenance."""
        bad = [(k, line) for k, line in comps if k not in provenance.AGREE]
        self.kinds[lv].update(k for k, _ in comps)
        self.agree[lv] += not bad
        for k, line in bad:
            self.examples.setdefault((fam, lv, k), f"{name}: {line}")
            self.all.append(f"{k}\t{fam}\t{lv}\t{name}\t{line}")
        self.own[lv] += len(own)
        for node, mine, cone in own:
            self.own_examples.setdefault((fam, lv), f"{name} {node}: from {mine}, derived {cone}")
            self.all.append(f"own\t{fam}\t{lv}\t{name}\t{node}: from {mine}, derived {cone}")
        return "provenance" if bad else "equal"

    def lines(self):
        out = []
        for lv in LEVELS:
            out.append(f"provenance {lv}: {self.agree[lv]} variants agree node by node; components " +
                       " ".join(f"{k}={v}" for k, v in sorted(self.kinds[lv].items())) +
                       f"; fuseplan's own from differs from the derived cone at {self.own[lv]} nodes")
        out += [f"provenance: {f} {lv} {k} (ORT | fuseplan) {e}" for (f, lv, k), e in sorted(self.examples.items())]
        out += [f"own from: {f} {lv} {e}" for (f, lv), e in sorted(self.own_examples.items())]
        return out


def shrink_candidates(feat):
    """Features one step smaller than feat: one of gen.MINIMAL's reset, or float32."""
    out = [dict(feat, **{k: v}) for k, v in gen.MINIMAL.items() if feat.get(k) != v]
    if feat.get("dt") not in (None, "f32"):
        out.append(dict(feat, dt="f32"))
    return out


def minimize(a, cases, out):
    """cases {kind: (name, family, feat, seed)} differing at kind's level -> {kind: (name, family, feat,
    seed, kind after)}: each round, for each case, the first feature reset (shrink_candidates) that
    keeps a disagreement at that level applied, until none does."""
    now = {k: v + (k,) for k, v in cases.items()}
    for rnd in range(8):
        d = os.path.join(out, f"min{rnd}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        items = []
        for k, (name, fam, feat, seed, _) in now.items():
            for j, cand in enumerate(shrink_candidates(feat)):
                items.append(((k, j), fam, cand, seed, gen.write(d, f"{name}_m{j}", fam, cand, seed)))
        if not items:
            break
        res = compare(a, items, d)
        taken = set()
        for (k, j), fam, cand, seed, _ in items:
            r = res.get(((k, j), k[1]))
            if k not in taken and r and r[0] != r[1]:
                now[k] = (now[k][0], fam, cand, seed, kind(fam, k[1], r[0], r[1]))
                taken.add(k)
        if not taken:
            break
    return now


def distinct(cases, keep):
    """Of the minimized cases, one per kind after minimization and per model, the families in turn,
    keep at most: {kind: (name, family, feat, seed)}."""
    seen, by_family = set(), collections.defaultdict(list)
    for k, (name, fam, feat, seed, after) in sorted(cases.items()):
        model = (fam, json.dumps(feat, sort_keys=True))
        if after in seen or model in seen:
            continue
        seen.update((after, model))
        by_family[fam].append((k, (name, fam, feat, seed)))
    out = {}
    while len(out) < keep and any(by_family.values()):
        for fam in sorted(by_family):
            if by_family[fam] and len(out) < keep:
                k, v = by_family[fam].pop(0)
                out[k] = v
    return out


def write_data(a, cases, out):
    """The minimized cases as regression data in a.data (see the module comment)."""
    os.makedirs(a.data, exist_ok=True)
    models = {}
    for k, (name, fam, feat, seed) in sorted(cases.items()):
        models[f"difftest_{fam}_{len(models):02d}"] = (fam, feat, seed)
    d = os.path.join(out, "data")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    items = [(n, fam, feat, seed, gen.write(d, n, fam, feat, seed)) for n, (fam, feat, seed) in models.items()]
    res = compare(a, items, d)
    ort_lines, known = [], []
    for n, fam, feat, _, path in items:
        shutil.copy(path, os.path.join(a.data, n + ".onnx"))
        for level in LEVELS:
            if (n, level) not in res:
                continue
            o, f = res[(n, level)][:2]
            ort_lines.append(f"{n}.onnx {level} {fmt(o)}")
            if o != f:
                why = f if isinstance(f, str) else f"ORT only: {fmt(o - f) or '-'}; fuseplan only: {fmt(f - o) or '-'}"
                known.append(f"{n}.onnx {level} {why} (features {json.dumps(feat, sort_keys=True)})")
    head = ("# ONNX Runtime 1.30's kernels (CPU EP, views aside) of the minimized disagreements of "
            "bench/difftest/difftest.py: MODEL LEVEL OP=COUNT...; level all on an AVX-512F host\n")
    open(os.path.join(a.data, "difftest.ort"), "w").write(head + "\n".join(ort_lines) + "\n")
    open(os.path.join(a.data, "known_differ.txt"), "w").write(
        "# MODEL LEVEL: where fuseplan still predicts other kernels than ORT runs (tests/test_fuse.c checks that "
        "they still differ; a fix that makes one agree removes its line)\n" + "\n".join(known) + "\n")


def table(stats, n, secs, seed):
    lines = [f"{n} variants (seed {seed}), each optimized by ONNX Runtime 1.30 (CPU EP, onnxruntime-node) at "
             f"levels basic, extended and all and compared with fuseplan's ort-cpu-LEVEL target (level all on "
             f"`--device cpu-avx512`, an AVX-512F host). Equal: the same kernel histogram of the final graph, "
             f"views aside, the same nodes of the model left as they were (name and op), and node by node the "
             f"same runtime nodes: each the same op (domain-qualified) from the same original nodes, derived "
             f"from tensor names in both graphs alike (`bench/provenance.py`; a chain joined by generated "
             f"tensors, as ORT's NCHWc chains, compared as one); differ: another histogram; nodes: the same "
             f"histogram but other nodes left; provenance: the same histogram and nodes left, but a runtime "
             f"node covers other original nodes (or the nodes are grouped otherwise). Variants ORT rejects are "
             f"left out. {secs:.0f} s in all, {datetime.date.today()}; `bench/difftest/difftest.py`.", "",
             "| family | " + " | ".join(f"{lv}: variants | equal | differ | nodes | provenance" for lv in LEVELS) +
             " |", "|---|" + "---:|---:|---:|---:|---:|" * len(LEVELS)]
    tot = {lv: [0] * len(VERDICTS) for lv in LEVELS}
    for fam in sorted(stats):
        cells = []
        for lv in LEVELS:
            c = stats[fam][lv]
            tot[lv] = [t + x for t, x in zip(tot[lv], c)]
            cells.append(f"{sum(c)} | " + " | ".join(map(str, c)))
        lines.append(f"| {fam} | " + " | ".join(cells) + " |")
    lines.append("| **all** | " + " | ".join(f"{sum(c)} | " + " | ".join(map(str, c)) for c in tot.values()) + " |")
    return "\n".join(lines) + "\n"


def run(a):
    t0 = time.time()
    out = os.path.abspath(a.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "models"))
    vs = [v for v in gen.variants(a.seed, a.count) if not a.family or v[1] in a.family.split(",")]
    items = [(name, fam, feat, a.seed * 100003 + i, gen.write(os.path.join(out, "models"), name, fam, feat,
                                                               a.seed * 100003 + i))
             for i, (name, fam, feat) in enumerate(vs)]
    res = compare(a, items, out)
    stats = collections.defaultdict(lambda: {lv: [0] * len(VERDICTS) for lv in LEVELS})
    kinds, nodes, prov = {}, [], Provenance()
    for name, fam, feat, seed, _ in items:
        for lv in LEVELS:
            if (name, lv) in res:
                o, f, ok, fk, comps, own = res[(name, lv)]
                v = "differ" if o != f else "nodes" if ok != fk else prov.add(name, fam, lv, comps, own)
                stats[fam][lv][VERDICTS.index(v)] += 1
                if o != f:
                    kinds.setdefault(kind(fam, lv, o, f), (name, fam, feat, seed))
                elif ok != fk:
                    nodes.append(f"nodes: {name} {lv} ORT keeps {sorted(ok - fk)} fuseplan keeps {sorted(fk - ok)}")
    return t0, items, stats, kinds, nodes, prov


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=int(os.environ.get("BENCH_DIFFTEST_COUNT", "2000")))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--fuseplan", default="build/fuseplan")
    ap.add_argument("--ort", default=os.path.dirname(HERE))
    ap.add_argument("--device", default="cpu-avx512" if "avx512f" in open("/proc/cpuinfo").read() else "cpu-avx2")
    ap.add_argument("--out", default="bench/out/difftest")
    ap.add_argument("--doc")
    ap.add_argument("--minimize", type=int, default=400)
    ap.add_argument("--keep", type=int, default=80)
    ap.add_argument("--data")
    ap.add_argument("--family", help="comma-separated families to run (the same variants as in the full run)")
    a = ap.parse_args()
    t0, items, stats, kinds, nodes, prov = run(a)
    secs = time.time() - t0
    print(table(stats, len(items), secs, a.seed))
    for k in sorted(kinds):
        print("differ: %s %s ORT only [%s] fuseplan only [%s] e.g. %s" % (k[0], k[1], k[2], k[3], kinds[k][0]))
    print("\n".join(nodes))
    print("\n".join(prov.lines()))
    open(os.path.join(a.out, "provenance.txt"), "w").write("".join(line + "\n" for line in prov.all))
    if a.doc:
        write_section(a.doc, TITLE, BEGIN, END, table(stats, len(items), secs, a.seed))
    if a.data and kinds:
        cases = minimize(a, dict(sorted(kinds.items())[: a.minimize]), os.path.abspath(a.out))
        write_data(a, distinct(cases, a.keep), os.path.abspath(a.out))


if __name__ == "__main__":
    main()
