#!/usr/bin/python3
"""train_planner.py - the recompute planner of `make bench`: how long fp_rc_plan_best (what `fuseplan
train MODEL --budget P%` plans with) takes on every torch export of the fidelity corpus and on two
32-layer decoders, at 30%, 50% and 70% of the unplanned saved activations and at the least budget any
plan fits, whether the plan is proven optimal (exact) and its gap to the lower bound otherwise.

  /usr/bin/python3 bench/train_planner.py --tool build/bench/fp_bench_train_planner \\
      [--torch-dir bench/out/fidelity/torch] [--corpus-dir DIR ...] [--out bench/out/train_planner]
      [--doc docs/benchmarks.md]

Models: every pt_*.onnx in --torch-dir (bench/gen_torch_models.py makes them there when none is
found), and in --out, exported once: dec_gpt32 (a GPT-style decoder: nn.TransformerEncoder, 32
pre-norm layers, d 256, 4 heads, a causal mask, sequence 128) and dec_llama32 (bench/gen_torch_models.py's
Llama-style decoder with 32 layers), and every *.onnx in each --corpus-dir (the broad corpus of
bench/gen_torch_corpus.py: every torchvision classifier and segmentation model, torch.nn transformers),
summarized one line per model (made there by bench/gen_torch_corpus.py when it holds none). Each is planned in-process by bench/train_planner.c at batch 8
(a static export keeps its own batch): median wall milliseconds of one plan over the runs made, and
of fp_rc_min_budget once. The table goes to --doc between <!-- train-planner:begin --> and
<!-- train-planner:end --> (added at the end when missing) and to OUT/train_planner.json. Exit 0
when every plan stayed within its budget, 1 when one did not, 2 when the tool or torch is missing.
"""
import argparse
import datetime
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench import write_section  # noqa: E402
BEGIN, END = "<!-- train-planner:begin -->", "<!-- train-planner:end -->"
TITLE = "## Training: the recompute planner"
SHARES = ("0.3", "0.5", "0.7")


def export_decoders(out):
    """dec_gpt32.onnx and dec_llama32.onnx in out, exported when missing; their paths."""
    import torch
    import gen_torch_models
    nn = torch.nn

    class GPT(nn.Module):
        def __init__(self, layers=32, d=256, heads=4, t=128):
            super().__init__()
            layer = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, activation="gelu",
                                               norm_first=True)
            self.stack = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.register_buffer("mask", torch.triu(torch.full((t, t), float("-inf")), 1))

        def forward(self, x):
            return self.stack(x, mask=self.mask)

    makers = {"dec_gpt32": lambda: (GPT(), (torch.randn(1, 128, 256),)),
              "dec_llama32": lambda: gen_torch_models.llama(torch, layers=32)}
    paths = []
    for name, make in makers.items():
        path = os.path.join(out, name + ".onnx")
        if not os.path.exists(path):
            torch.manual_seed(0)
            model, x = make()
            model.eval()
            torch.onnx.export(model, x, path + ".tmp", opset_version=17, do_constant_folding=True)
            os.replace(path + ".tmp", path)
        paths.append(path)
    return paths


def plan(tool, path, batch):
    """The tool's lines for the model at path, parsed; or an error string."""
    r = subprocess.run([tool, path, "--batch", str(batch), *SHARES], capture_output=True, text=True)
    if r.returncode != 0:
        return r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
    rows = []
    for line in r.stdout.splitlines():
        kv = dict(f.split("=", 1) for f in line.split())
        rows.append({k: (float(v) if k in ("share", "ms", "least_ms") else int(v)) for k, v in kv.items()})
    return rows


def corpus_table(results):
    """One line per corpus model: its stage count, least budget and each share's time and answer;
    the text and the count of plans over their budget."""
    out = ["", "Broad corpus (`--corpus-dir`): per budget, the plan's time and whether it fits (*no*: below "
           "the least budget), stays within its budget and is exact.", "",
           "| model | stages | least | 30% | 50% | 70% |", "|---|---|---|---|---|---|"]
    worst, over, plans, exact, failed = 0.0, 0, 0, 0, 0
    for name, rows in results:
        if isinstance(rows, str):
            failed += 1
            out.append(f"| {name} | failed: {rows} | | | | |")
            continue
        cells = {}
        for r in rows:
            worst = max(worst, r["ms"])
            if not r["share"]:
                continue
            if not r["feasible"]:
                cells[r["share"]] = f"{r['ms']:.1f} ms, no"
                continue
            plans += 1
            over += r["peak"] > r["budget"]
            exact += bool(r["exact"])
            cells[r["share"]] = (f"{r['ms']:.1f} ms, {'within' if r['peak'] <= r['budget'] else 'OVER'}, "
                                 f"{'exact' if r['exact'] else 'approx'}")
        r0 = rows[0]
        out.append(f"| {name} | {r0['stages']} | {100 * r0['least'] / r0['saved']:.1f}% | " +
                   " | ".join(cells.get(float(s), "") for s in SHARES) + " |")
    out += ["", f"Broad corpus: {len(results)} models ({failed} failed), {plans} fitting plans, {over} over their "
            f"budget, {exact} exact; slowest plan or least-budget search {worst:.1f} ms."]
    return out, over


def table(results, batch):
    out = [f"Measured {datetime.date.today().isoformat()} by `make bench` (bench/train_planner.py, "
           f"bench/train_planner.c): `fp_rc_plan_best` in-process at batch {batch} (static exports keep "
           "batch 1), budgets a share of the unplanned saved activations; median wall time of one plan. "
           "*exact*: proven optimal (no plan within the budget recomputes fewer FLOPs); *gap*: "
           "(FLOPs - lower bound) / FLOPs otherwise. *least*: the least budget any plan fits "
           "(fp_rc_min_budget, exact), as a share of the saved activations, and its time.", "",
           "| model | stages | saved | least | budget | fits | plan time | saved under the plan | within budget "
           "| recomputed | exact | gap |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    worst, over, widest, unfit = 0.0, 0, 0.0, 0
    for name, rows in results:
        if isinstance(rows, str):
            out.append(f"| {name} | failed: {rows} | | | | | | | | | | |")
            continue
        for r in rows:
            least = f"{100 * r['least'] / r['saved']:.1f}% ({r['least_ms']:.1f} ms)"
            within = r["peak"] <= r["budget"] if r["feasible"] else None
            over += within is False
            worst = max(worst, r["ms"])
            gap = 0 if r["exact"] or not r["flops"] else (r["flops"] - r["lower"]) / r["flops"]
            widest = max(widest, gap) if r["feasible"] else widest
            unfit += not r["feasible"]
            share = f"{100 * r['share']:.0f}%" if r["share"] else "least"
            if not r["feasible"]:
                out.append(f"| {name} | {r['stages']} | {r['saved'] / 1e6:,.2f} MB | {least} | {share} "
                           f"({r['budget'] / 1e6:,.2f} MB) | no | {r['ms']:.2f} ms | | | | | |")
                continue
            out.append(f"| {name} | {r['stages']} | {r['saved'] / 1e6:,.2f} MB | {least} | "
                       f"{share} ({r['budget'] / 1e6:,.2f} MB) | yes | {r['ms']:.2f} ms | {r['peak'] / 1e6:,.2f} MB | "
                       f"{'yes' if within else 'NO'} | {r['flops'] / 1e9:,.3f} GFLOP | "
                       f"{'yes' if r['exact'] else 'approx'} | {100 * gap:.2f}% |")
    out += ["", f"Slowest plan: {worst:.1f} ms; plans over their budget: {over}; largest gap to the lower "
            f"bound: {100 * widest:.2f}%; budgets below the least any plan fits (no plan, as fp_rc_min_budget "
            f"says): {unfit}. Tensors held for the whole step (graph inputs, values no parameter flows into, "
            "such as dec_llama32's rotary tables) do not stop a cut between layers (docs/training.md, "
            "\"Recompute\")."]
    return "\n".join(out), over


def plan_all(tool, paths, batch):
    """[(model name, plan rows or an error string)] for every path, each logged to stderr."""
    results = []
    for path in paths:
        name = os.path.basename(path)[:-len(".onnx")]
        rows = plan(tool, path, batch)
        results.append((name, rows))
        sys.stderr.write(f"train_planner: {name}: " + (rows if isinstance(rows, str) else
                         " ".join(f"{r['share']:.0%} {r['ms']:.1f} ms" for r in rows)) + "\n")
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "bench", "fp_bench_train_planner"))
    ap.add_argument("--torch-dir", default=os.path.join(ROOT, "bench", "out", "fidelity", "torch"))
    ap.add_argument("--corpus-dir", action="append", default=[])
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "train_planner"))
    ap.add_argument("--doc", default=None)
    ap.add_argument("--batch", type=int, default=8)
    a = ap.parse_args()
    if not os.access(a.tool, os.X_OK):
        sys.stderr.write(f"train_planner: {a.tool}: not built (bench/run.sh builds it)\n")
        return 2
    try:
        import torch  # noqa: F401
    except ImportError as e:
        sys.stderr.write(f"train_planner: {e} (apt-get install python3-torch python3-torchvision)\n")
        return 2
    os.makedirs(a.out, exist_ok=True)
    if not glob.glob(os.path.join(a.torch_dir, "pt_*.onnx")):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_torch_models.py"), a.torch_dir], check=True)
    models = sorted(glob.glob(os.path.join(a.torch_dir, "pt_*.onnx"))) + export_decoders(a.out)
    for d in a.corpus_dir:
        if not glob.glob(os.path.join(d, "*.onnx")):
            subprocess.run([sys.executable, os.path.join(HERE, "gen_torch_corpus.py"), d], check=True)
    results = plan_all(a.tool, models, a.batch)
    corpus = plan_all(a.tool, sorted(p for d in a.corpus_dir for p in glob.glob(os.path.join(d, "*.onnx"))),
                      a.batch)
    with open(os.path.join(a.out, "train_planner.json"), "w") as f:
        json.dump([{"model": n, "plans": r} for n, r in results + corpus], f, indent=1)
    text, over = table(results, a.batch)
    if corpus:
        lines, corpus_over = corpus_table(corpus)
        text, over = text + "\n".join(lines), over + corpus_over
    if a.doc:
        write_section(a.doc, TITLE, BEGIN, END, text)
    return 1 if over else 0


if __name__ == "__main__":
    import warnings
    warnings.filterwarnings("ignore")
    sys.exit(main())
