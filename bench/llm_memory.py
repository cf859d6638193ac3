#!/usr/bin/python3
"""llm_memory.py - LLM inference memory of `make bench`: fuseplan's KV cache, weight bytes and batch
headroom on weight-free skeletons of three published decoders, held against hand arithmetic from
each model's config.

  /usr/bin/python3 bench/llm_memory.py --fuseplan build/fuseplan --models-dir bench/out \\
      [--doc docs/benchmarks.md] [--spawn build/bench/fp_bench_spawn] [--runs 5] [--context 4096]

The models are bench/gen_llm_skeleton.py's (llama2_7b.onnx, llama3_8b.onnx, qwen2_7b.onnx in
--models-dir; its configs are imported from there, so both scripts use the same numbers).

Hand arithmetic (no fuseplan), per model:
  KV bytes per token  2 * L * Hkv * d * kv_bytes (fp16 2, fp8 1)
  fp16 weights        params * 2 + the rotary cos/sin tables the skeleton stores as initializers
                      (2 * max_position_embeddings * d * 2: a runtime keeps them resident too)
  int4 weights        every MatMul weight [K, N] of the layers (q, k, v, o, gate, up, down) in ONNX
                      Runtime's MatMulNBits layout, block G = 128: N*ceil(K/G)*G/2 bytes of 4-bit
                      values + N*ceil(K/G)*2 of fp16 scales + N*ceil(ceil(K/G)/2) of packed 4-bit zero
                      points; the embedding, lm_head, norms, biases and cos/sin stay fp16
  int8 weights        (reference) K*N + 2*N per layer MatMul, the rest fp16
  max batch           at --context tokens per sequence, usable = device memory * 0.9 (a 10% reserve):
                      KV only floor((usable - weights) / kv_per_seq), and with fuseplan's activation
                      figure floor((usable - weights) / (kv_per_seq + act_per_seq)), act_per_seq =
                      fuseplan's headroom.activation_bytes / headroom.max_batch
Then fuseplan: `headroom MODEL --device D --reserve 10% --context S [--weight-dtype int4]
[--kv-dtype fp8] -f json` (headroom.max_batch, weight_bytes, kv_cache_bytes, activation_bytes,
usable_bytes, kv_bytes_per_token) and `report MODEL -f json` (kv_cache.bytes_per_token). A member
that fuseplan does not write, or an option it refuses, is said so in its cell and in a note: the
script never stops on it. `fuseplan report MODEL` (text, no flags) is timed on each model (median
of --runs process wall times; the target, <= 50 ms, is judged on llama2_7b).

Rewrites the part of --doc between <!-- llm:begin --> and <!-- llm:end --> (markers added after
<!-- bench:end --> when missing); the rest of the file is kept. The numbers also go to
MODELS_DIR/llm_memory.json. Exit status 0 once the document is written (mismatches included: they
are marked in the tables and listed on stderr), 2 when fuseplan or a model is missing.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench import write_between  # noqa: E402
from gen_llm_skeleton import CONFIGS, HEAD_DIM, param_count  # noqa: E402

BEGIN, END = "<!-- llm:begin -->", "<!-- llm:end -->"
BENCH_END = "<!-- bench:end -->"
TITLE = "## LLM inference memory: skeletons of published configs"
GROUP = 128                 # MatMulNBits block size of the int4 rule
RESERVE = 0.10
DEVICES = {"h100": 80e9, "ascend910b": 68.72e9}   # fallback when `fuseplan devices D -f json` fails
CASES = [  # (label, weights, kv, extra flags)
    ("fp16 weights, fp16 KV", "fp16", "fp16", []),
    ("int4 weights, fp16 KV", "int4", "fp16", ["--weight-dtype", "int4"]),
    ("fp16 weights, fp8 KV", "fp16", "fp8", ["--kv-dtype", "fp8"]),
    ("int4 weights, fp8 KV", "int4", "fp8", ["--weight-dtype", "int4", "--kv-dtype", "fp8"]),
]
KV_BYTES = {"fp16": 2, "fp8": 1}
NAMES = {"llama2_7b": "Llama-2-7B", "llama3_8b": "Llama-3-8B", "qwen2_7b": "Qwen2-7B"}
WEIGHT_SLACK = 1024   # the skeleton's inline shape constants and scalars (~240 B), not in the config
TARGET_MS = 50.0


# ---- hand arithmetic

def layer_matmuls(c):
    """(K, N) of each MatMul weight of one layer: q, k, v, o, gate, up, down."""
    h, d, ff = c["hidden"], HEAD_DIM, c["ffn"]
    q, kv = c["heads"] * d, c["kv_heads"] * d
    return [(h, q), (h, kv), (h, kv), (q, h), (h, ff), (h, ff), (ff, h)]


def int4_bytes(k, n, g=GROUP):
    blocks = -(-k // g)
    return n * blocks * g // 2 + n * blocks * 2 + n * -(-blocks // 2)


def hand(c):
    L, Hkv, d = c["layers"], c["kv_heads"], HEAD_DIM
    params = param_count(c)
    rotary = 2 * c["max_pos"] * d * 2
    mats = layer_matmuls(c)
    mat_params = L * sum(k * n for k, n in mats)
    rest16 = (params - mat_params) * 2 + rotary        # embedding, lm_head, norms, biases, cos/sin
    return {
        "params": params,
        "kv_per_token": {kv: 2 * L * Hkv * d * b for kv, b in KV_BYTES.items()},
        "params_x2": params * 2,
        "rotary_bytes": rotary,
        "weights": {
            "fp16": params * 2 + rotary,
            "int4": L * sum(int4_bytes(k, n) for k, n in mats) + rest16,
            "int8": L * sum(k * n + 2 * n for k, n in mats) + rest16,
        },
        "fp16_rest_bytes": rest16,
    }


def max_batch(usable, weights, kv_seq, act_seq=0.0):
    room = usable - weights
    return max(0, math.floor(room / (kv_seq + act_seq))) if room > 0 else 0


# ---- fuseplan

class Fuseplan:
    def __init__(self, exe):
        self.exe = exe
        self.missing = {}    # "member" -> command that lacked it
        self.refused = {}    # short command -> error line

    def json(self, args):
        """Runs fuseplan ARGS -f json; returns (dict or None, error line or None)."""
        p = subprocess.run([self.exe] + args + ["-f", "json"], capture_output=True, text=True)
        if p.returncode != 0:
            err = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
            return None, err
        try:
            return json.loads(p.stdout), None
        except ValueError as e:
            return None, f"output is not JSON ({e})"

    def member(self, obj, path, cmd):
        """obj's member at dotted path, or None (noted once per member as missing)."""
        cur = obj
        for key in path.split("."):
            if not isinstance(cur, dict) or key not in cur:
                self.missing.setdefault(path, cmd)
                return None
            cur = cur[key]
        return cur

    def device_memory(self, dev):
        d, _ = self.json(["devices", dev])
        v = d.get("memory_bytes") if isinstance(d, dict) else None
        return (float(v), "fuseplan devices") if isinstance(v, (int, float)) else (DEVICES[dev], "fallback")


def time_report(exe, model, runs, spawn):
    """Median process wall time (ms) of `fuseplan report MODEL`, stdout to a file; None on failure."""
    walls = []
    for _ in range(runs):
        with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
            if spawn:
                rc = subprocess.run([spawn, tf.name, exe, "report", model], stdout=out,
                                    stderr=subprocess.DEVNULL).returncode
                if rc != 0:
                    return None
                v = dict(kv.split("=") for kv in tf.read().split())
                walls.append(float(v["wall_us"]) * 1e-3)
            else:
                t0 = time.perf_counter()
                rc = subprocess.run([exe, "report", model], stdout=out, stderr=subprocess.DEVNULL).returncode
                walls.append((time.perf_counter() - t0) * 1e3)
                if rc != 0:
                    return None
    return statistics.median(walls)


# ---- measuring

def measure(a):
    fp = Fuseplan(a.fuseplan)
    res = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "context": a.context,
           "reserve": RESERVE, "devices": {}, "models": {}}
    for dev in DEVICES:
        mem, src = fp.device_memory(dev)
        res["devices"][dev] = {"memory_bytes": mem, "source": src, "usable": mem * (1 - RESERVE)}
    for name, c in CONFIGS.items():
        path = os.path.join(a.models_dir, name + ".onnx")
        h = hand(c)
        m = {"config": c, "hand": h, "path": path, "cases": {}}
        rep, err = fp.json(["report", path])
        if err:
            fp.refused.setdefault("report -f json", err)
        m["report_kv_per_token"] = fp.member(rep, "kv_cache.bytes_per_token", "report MODEL -f json") if rep else None
        for dev, dv in res["devices"].items():
            for label, wdt, kvdt, flags in CASES:
                args = ["headroom", path, "--device", dev, "--reserve", "10%", "--context", str(a.context)] + flags
                out, err = fp.json(args)
                row = {"flags": flags, "error": err}
                if err:
                    fp.refused.setdefault(" ".join(["headroom"] + flags) or "headroom", err)
                else:
                    for k in ("max_batch", "weight_bytes", "kv_cache_bytes", "activation_bytes", "usable_bytes",
                              "kv_bytes_per_token"):
                        row[k] = fp.member(out, "headroom." + k, "headroom MODEL ... -f json")
                kv_seq = h["kv_per_token"][kvdt] * a.context
                w = h["weights"][wdt]
                row["hand_kv_only"] = max_batch(dv["usable"], w, kv_seq)
                act, mb = row.get("activation_bytes"), row.get("max_batch")
                arena = (out or {}).get("headroom", {}).get("arena_bytes_at_max") if not err else None
                if act is None and isinstance(arena, int) and isinstance(mb, int):
                    # fallback until activation_bytes exists: the arena at max batch less its KV cache
                    kv_at_max = row.get("kv_cache_bytes")
                    act = arena - (kv_at_max if isinstance(kv_at_max, int) else mb * kv_seq)
                    row["act_from_arena"] = True
                row["arena_bytes_at_max"] = arena
                row["act_per_seq"] = act / mb if isinstance(act, (int, float)) and isinstance(mb, int) and mb > 0 else None
                row["hand_with_act"] = (max_batch(dv["usable"], w, kv_seq, row["act_per_seq"])
                                        if row["act_per_seq"] is not None else None)
                m["cases"][f"{dev}/{label}"] = row
        m["report_ms"] = time_report(a.fuseplan, path, a.runs, a.spawn)
        res["models"][name] = m
    res["missing"], res["refused"] = fp.missing, fp.refused
    return res


# ---- rendering

def n(x):
    return f"{x:,}" if isinstance(x, int) else f"{x:,.0f}"


def gib(x):
    return f"{x / 2**30:.3f} GiB"


class Cells:
    """Formats fuseplan's cell against the hand value and keeps the list of mismatches."""

    def __init__(self):
        self.mismatches = []

    def cmp(self, what, hand_v, fp_v, err=None, slack=0):
        if err:
            return "refused (note 2)"
        if fp_v is None:
            return "n/a (note 1)"
        if hand_v is None:
            return n(fp_v)
        delta = fp_v - hand_v
        if abs(delta) <= slack:
            return n(fp_v) + (f" ({delta:+,} B)" if delta else "")
        self.mismatches.append(f"{what}: hand {n(hand_v)}, fuseplan {n(fp_v)} ({delta:+,})")
        return f"**{n(fp_v)} ≠** ({delta:+,})"


def render(res):
    ctx = res["context"]
    cells = Cells()
    L = []
    devs = ", ".join(f"{d} {n(int(v['memory_bytes']))} B" for d, v in res["devices"].items())
    L.append(f"Measured {res['date']} by `make bench` (bench/run.sh, bench/llm_memory.py) on weight-free ONNX "
             "skeletons of three published decoders (bench/gen_llm_skeleton.py: the Hugging Face config of each, in "
             "the layout of an Optimum decoder-with-past export, float16, every weight declared as external data "
             "that is never written; the parameter counts are asserted against the published ones). The hand "
             "columns are arithmetic from the config alone: KV bytes per token 2·L·Hkv·d·bytes; fp16 weights "
             "params·2 plus the rotary cos/sin tables [max_position_embeddings, 128] that the skeleton keeps as "
             f"initializers; int4 weights with every layer MatMul [K, N] in ONNX Runtime's MatMulNBits layout "
             f"(G = {GROUP}: N·⌈K/G⌉·G/2 B of 4-bit values + N·⌈K/G⌉·2 B of fp16 scales + N·⌈⌈K/G⌉/2⌉ B of packed "
             "zero points), the embedding, lm_head, norms, biases and cos/sin in fp16. The fuseplan columns are "
             "`fuseplan report MODEL -f json` (`kv_cache.bytes_per_token`) and `fuseplan headroom MODEL --device D "
             f"--reserve 10% --context {ctx} [--weight-dtype int4] [--kv-dtype fp8] -f json` (`headroom.*`). "
             f"A cell in **bold with ≠** differs from the hand value (weights: by more than {WEIGHT_SLACK} B, "
             "the skeleton's inline shape constants and scalars, shown as a signed difference).\n")
    # table 1: per model
    L.append("| model | params | KV B/token hand | fuseplan | fp16 weights hand | fuseplan | int4 weights hand | "
             "fuseplan | int8 weights hand (reference) |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for name, m in res["models"].items():
        h, disp = m["hand"], NAMES[name]
        c16 = m["cases"].get("h100/" + CASES[0][0], {})
        c4 = m["cases"].get("h100/" + CASES[1][0], {})
        L.append(f"| {disp} | {n(h['params'])} | {n(h['kv_per_token']['fp16'])} | "
                 f"{cells.cmp(disp + ' KV B/token (report)', h['kv_per_token']['fp16'], m['report_kv_per_token'])} | "
                 f"{n(h['weights']['fp16'])} ({gib(h['weights']['fp16'])}) | "
                 f"{cells.cmp(disp + ' fp16 weights', h['weights']['fp16'], c16.get('weight_bytes'), c16.get('error'), WEIGHT_SLACK)} | "
                 f"{n(h['weights']['int4'])} ({gib(h['weights']['int4'])}) | "
                 f"{cells.cmp(disp + ' int4 weights', h['weights']['int4'], c4.get('weight_bytes'), c4.get('error'), WEIGHT_SLACK)} | "
                 f"{n(h['weights']['int8'])} ({gib(h['weights']['int8'])}) |")
    L.append("")
    L.append("Of the fp16 weights, params·2 = " + "; ".join(
        f"{NAMES[k]} {n(m['hand']['params_x2'])} B ({gib(m['hand']['params_x2'])}) + cos/sin "
        f"{n(m['hand']['rotary_bytes'])} B (max_position_embeddings {n(m['config']['max_pos'])})"
        for k, m in res["models"].items()) + ". The fuseplan weight columns are the h100 runs (the device does "
        "not change them).\n")
    # table 2: max batch
    dv = res["devices"]
    L.append(f"Max batch at {ctx} tokens per sequence, usable = device memory × 0.9 ({devs}"
             f"{'' if all(v['source'] == 'fuseplan devices' for v in dv.values()) else '; some from the fallback table'}"
             "). Hand, KV only: ⌊(usable − weights) / KV per sequence⌋. Hand with fuseplan's activations: "
             "⌊(usable − weights) / (KV per sequence + act)⌋, act = fuseplan's `activation_bytes` at its max batch "
             "divided by that batch (the decode step's other activations, which grow with the batch). fuseplan's "
             "`max_batch` is compared with this column, which checks that its batch, weights and activations add up "
             "(act comes from fuseplan's own plan), and must not exceed the KV-only bound, the independent check. In "
             "these unfused graphs act is mostly one layer's transposed K and, with grouped-query attention, "
             "repeat_kv's copies of its K and V expanded to the query heads, live at the peak (3 × Hq/Hkv × the "
             "layer's K bytes per sequence): a runtime with a fused attention kernel does not make them, and its "
             "batch sits nearer the KV-only bound.\n")
    L.append("| model | weights, KV | device | KV B/token hand | fuseplan | weights hand | fuseplan | "
             "usable hand | fuseplan | max batch hand, KV only | fuseplan's act per sequence | hand with that act | "
             "fuseplan | fuseplan KV + act at max |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, m in res["models"].items():
        h, disp = m["hand"], NAMES[name]
        for dev, d in dv.items():
            for label, wdt, kvdt, _ in CASES:
                r = m["cases"][f"{dev}/{label}"]
                e = r.get("error")
                tag = f"{disp} {dev} {label}"
                withact = r["hand_with_act"]
                mb = cells.cmp(tag + " max batch", withact, r.get("max_batch"), e)
                if isinstance(r.get("max_batch"), int) and r["max_batch"] > r["hand_kv_only"] and "≠" not in mb:
                    # fuseplan holds the KV cache and more: above the KV-only bound is wrong whatever act is
                    cells.mismatches.append(f"{tag} max batch {r['max_batch']} above the KV-only bound {r['hand_kv_only']}")
                    mb = f"**{r['max_batch']} > KV-only bound**"
                act_cell = "n/a" if r.get("act_per_seq") is None else f"{r['act_per_seq'] / 2**20:.1f} MiB"
                parts = ("refused (note 2)" if e else
                         f"{gib(r['kv_cache_bytes'])} + {gib(r['activation_bytes'])}"
                         if r.get("kv_cache_bytes") is not None and r.get("activation_bytes") is not None else
                         f"arena {gib(r['arena_bytes_at_max'])} (note 1)" if isinstance(r.get("arena_bytes_at_max"), int)
                         else "n/a (note 1)")
                L.append(f"| {disp} | {label} | {dev} | {n(h['kv_per_token'][kvdt])} | "
                         f"{cells.cmp(tag + ' KV B/token', h['kv_per_token'][kvdt], r.get('kv_bytes_per_token'), e)} | "
                         f"{gib(h['weights'][wdt])} | "
                         f"{cells.cmp(tag + ' weights', h['weights'][wdt], r.get('weight_bytes'), e, WEIGHT_SLACK)} | "
                         f"{n(round(d['usable']))} | {cells.cmp(tag + ' usable', round(d['usable']), r.get('usable_bytes'), e, 1)} | "
                         f"{r['hand_kv_only']} | {act_cell} | {'n/a (note 1)' if withact is None else withact}"
                         f"{' (note 3)' if r.get('act_from_arena') and withact is not None else ''} | {mb} | {parts} |")
    L.append("")
    # timing
    t = res["models"]["llama2_7b"]["report_ms"]
    met = "no timing (fuseplan failed)" if t is None else ("met" if t <= TARGET_MS else "**not met**")
    times = "; ".join(f"{NAMES[k]} " + ("failed" if m["report_ms"] is None else f"{m['report_ms']:.1f} ms")
                      for k, m in res["models"].items())
    L.append(f"`fuseplan report MODEL` (text, no flags: batch 1, a decode step at 2048 tokens, cpu-avx2), median "
             f"process wall time of {res['runs']} runs ({res['timer']}): {times}. "
             f"Target on Llama-2-7B: <= {TARGET_MS:.0f} ms: {met}.\n")
    notes = []
    if res["missing"]:
        notes.append("1. Not in fuseplan's JSON yet: " + "; ".join(
            f"`{k}` (`fuseplan {v}`)" for k, v in sorted(res["missing"].items())) + ".")
    if res["refused"]:
        notes.append("2. fuseplan refused: " + "; ".join(
            f"`{k}`: {v}" for k, v in sorted(res["refused"].items())) + ".")
    if any(r.get("act_from_arena") for m in res["models"].values() for r in m["cases"].values()):
        notes.append("3. Without `headroom.activation_bytes`, act = `headroom.arena_bytes_at_max` − `max_batch` × the KV "
                     "per sequence (`kv_cache_bytes` when present, else the hand figure): the arena of the decode step "
                     "holds the KV cache and every other activation.")
    if notes:
        L.append("Notes:\n\n" + "\n".join(notes) + "\n")
    if cells.mismatches:
        L.append(f"Mismatches: {len(cells.mismatches)} (bold cells above).\n")
    else:
        L.append("Every fuseplan figure present equals the hand arithmetic.\n")
    return "\n".join(L), cells.mismatches


def write_doc(path, block):
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    if BEGIN not in text or END not in text:
        section = f"\n{TITLE}\n\n{BEGIN}\n{END}\n"
        if BENCH_END in text:
            i = text.index(BENCH_END) + len(BENCH_END)
            i = text.index("\n", i) + 1 if "\n" in text[i:] else len(text)
            text = text[:i] + section + text[i:]
        else:
            text = text.rstrip("\n") + "\n" + section
    write_between(path, text, BEGIN, END, block)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuseplan", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--doc", default="docs/benchmarks.md")
    ap.add_argument("--spawn", help="fp_bench_spawn (bench/spawn.c) for the wall times; else timed from Python")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--context", type=int, default=4096)
    ap.add_argument("--hand-only", action="store_true", help="print the hand arithmetic and stop")
    a = ap.parse_args()
    if a.hand_only:
        for name, c in CONFIGS.items():
            print(name, json.dumps(hand(c)))
        return 0
    if not os.access(a.fuseplan, os.X_OK):
        print(f"llm_memory: {a.fuseplan} not built", file=sys.stderr)
        return 2
    for name in CONFIGS:
        if not os.path.exists(os.path.join(a.models_dir, name + ".onnx")):
            print(f"llm_memory: {a.models_dir}/{name}.onnx missing (bench/gen_llm_skeleton.py {a.models_dir})",
                  file=sys.stderr)
            return 2
    if a.spawn and not os.access(a.spawn, os.X_OK):
        a.spawn = None
    res = measure(a)
    res["runs"] = a.runs
    res["timer"] = "fp_bench_spawn" if a.spawn else "timed from Python: fork and exec included"
    block, mismatches = render(res)
    res["mismatches"] = mismatches
    with open(os.path.join(a.models_dir, "llm_memory.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)
    write_doc(a.doc, block)
    for k, v in sorted(res["missing"].items()):
        print(f"llm_memory: fuseplan's JSON has no `{k}` yet (fuseplan {v}): its cells say n/a", file=sys.stderr)
    for k, v in sorted(res["refused"].items()):
        print(f"llm_memory: fuseplan refused `{k}`: {v}", file=sys.stderr)
    for mm in mismatches:
        print(f"llm_memory: mismatch: {mm}", file=sys.stderr)
    print(f"llm_memory: {a.doc} rewritten ({len(mismatches)} mismatches)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
