#!/usr/bin/python3
"""genai_models.py - onnxruntime-genai's test models through fuseplan: opaque ops, values of unknown
size and weight bytes against the bytes the initializers store, before and after a change.

  /usr/bin/python3 bench/genai_models.py --models DIR --fuseplan build/fuseplan \\
      [--before OTHER/fuseplan] [--commit SHA]

DIR holds the repository's test/models tree (extracted from a snapshot with `git show`). Every
.onnx under it whose external data is present is run through `report -f json`, `shapes` and
`memory` (`report` of the models exported for CUDA on --device a100) with each symbolic input dim bound: a decode step of 1 new token after 7 (batch 1,
`batch_plus_1` 2, past 7, total and past-plus-new 8, every other dim 4). Per model: the op types
fuseplan analyses as opaque (from its warning), the model's values of unknown size (the report's
`unknown_values`), without and with the binding, and `memory`'s stored_weight_bytes (the model as
loaded, before a target's rewrites; folded constants apart) against the sum
of the initializers' stored bytes (raw bytes, 4-bit types packed two a byte) and the Constant
nodes' tensors; for a model named by the genai_config.json beside it, the KV cache's bytes per
token from the config's arithmetic (the attention layers, i.e. num_hidden_layers or, with
layer_types, those that are full_attention, x 2 x num_key_value_heads x head_size x the bytes of
the dtype of its first past input, found by the config's name templates) against the report's
`kv_cache.bytes_per_token`, and a hybrid's state per sequence (each input its past_conv_names
names, its axes after the batch) against `kv_cache.state.bytes_per_sequence`. Prints a markdown
table (docs/benchmarks.md); exit 1 when a command fails.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

import onnx
from onnx import TensorProto, mapping

FOUR_BIT = {21, 22, 23}  # TensorProto UINT4, INT4, FLOAT4E2M1 (newer than Debian's onnx 1.12)


def stored_bytes(t):
    """Bytes tensor t holds: its raw data, else its element count at the dtype's size."""
    if t.data_location == TensorProto.EXTERNAL:
        return int(next((e.value for e in t.external_data if e.key == "length"), 0))
    if t.raw_data:
        return len(t.raw_data)
    n = 1
    for d in t.dims:
        n *= d
    if t.data_type in FOUR_BIT:
        return (n + 1) // 2
    if t.data_type == TensorProto.STRING:
        return 0
    return n * mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type].itemsize


def model_facts(path):
    """(stored weight bytes, symbolic dims of the inputs, external data present) of the model."""
    m = onnx.load(path, load_external_data=False)
    total = sum(stored_bytes(t) for t in m.graph.initializer)
    for n in m.graph.node:
        if n.op_type == "Constant" and not n.domain:
            total += sum(stored_bytes(a.t) for a in n.attribute if a.name == "value")
    syms = sorted({d.dim_param for v in m.graph.input for d in v.type.tensor_type.shape.dim if d.dim_param})
    ext = [t for t in m.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    here = all(os.path.exists(os.path.join(os.path.dirname(path), e.value))
               for t in ext for e in t.external_data if e.key == "location")
    return total, syms, here


def config_kv_bytes(path):
    """(KV bytes per token by the config's arithmetic, the config's relative name) of the
    genai_config.json beside model `path` that names it; (None, None) without one."""
    cfg_path = os.path.join(os.path.dirname(path), "genai_config.json")
    if not os.path.exists(cfg_path):
        return None, None
    with open(cfg_path) as f:
        dec = json.load(f)["model"]["decoder"]
    if dec.get("filename", os.path.basename(path)) != os.path.basename(path):
        return None, None
    names = dec.get("inputs", {})
    templates = [names.get("past_names"), names.get("past_key_names", "past_key_values.%d.key")]
    pattern = [re.compile("^" + re.escape(t).replace("%d", r"\d+") + "$") for t in templates if t]
    m = onnx.load(path, load_external_data=False)
    past = next((v for v in m.graph.input if any(p.match(v.name) for p in pattern)), None)
    if past is None:
        return None, "genai_config.json"
    size = mapping.TENSOR_TYPE_TO_NP_TYPE[past.type.tensor_type.elem_type].itemsize
    kinds = dec.get("layer_types")
    layers = sum(k == "full_attention" for k in kinds) if kinds else dec["num_hidden_layers"]
    return layers * 2 * dec["num_key_value_heads"] * dec["head_size"] * size, "genai_config.json"


def state_bytes(path):
    """A hybrid's state bytes per sequence by hand: the inputs the config beside the model names by
    past_conv_names (default past_conv.%d) when it has layer_types, each its declared axes after the
    batch x its dtype's bytes; None without one."""
    cfg_path = os.path.join(os.path.dirname(path), "genai_config.json")
    if not os.path.exists(cfg_path):
        return None
    with open(cfg_path) as f:
        dec = json.load(f)["model"]["decoder"]
    if not dec.get("layer_types"):
        return None
    tmpl = dec.get("inputs", {}).get("past_conv_names", "past_conv.%d")
    pattern = re.compile("^" + re.escape(tmpl).replace("%d", r"\d+") + "$")
    total = 0
    for v in onnx.load(path, load_external_data=False).graph.input:
        if pattern.match(v.name):
            n = mapping.TENSOR_TYPE_TO_NP_TYPE[v.type.tensor_type.elem_type].itemsize
            for d in v.type.tensor_type.shape.dim[1:]:
                n *= d.dim_value
            total += n
    return total or None


def cross_bytes(path):
    """Cross-attention K and V bytes per sequence by hand: every rank-4 float input that the config
    beside the model names by cross_past_key_names / cross_past_value_names (else named
    past_key_values.N.encoder.* or past_*_cross_N), heads x encoder tokens x head size x dtype as
    declared (fixed numbers); None when there are none."""
    cfg_path = os.path.join(os.path.dirname(path), "genai_config.json")
    names = {}
    if os.path.exists(cfg_path):
        with open(cfg_path) as f:
            names = json.load(f)["model"]["decoder"].get("inputs", {})
    templates = [names.get(k) for k in ("cross_past_key_names", "cross_past_value_names") if names.get(k)]
    pattern = [re.compile("^" + re.escape(t).replace("%d", r"\d+") + "$") for t in templates]
    if not pattern:
        pattern = [re.compile(r"\.encoder\.(key|value)$"), re.compile(r"_cross")]
    m = onnx.load(path, load_external_data=False)
    total = 0
    for v in m.graph.input:
        dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
        if len(dims) == 4 and any(p.search(v.name) for p in pattern) and all(dims[1:]):
            total += dims[1] * dims[2] * dims[3] * mapping.TENSOR_TYPE_TO_NP_TYPE[v.type.tensor_type.elem_type].itemsize
    return total or None


def binding(sym):
    """The value a decode step of 1 token after 7 gives symbolic dim `sym`."""
    s = sym.lower()
    if "plus_1" in s:
        return 2
    if "batch" in s:
        return 1
    if "past" in s and "plus" in s or "total" in s:
        return 8
    if "past" in s:
        return 7
    if "seq" in s or s == "num_tokens":
        return 1
    return 4


def run(fuseplan, args):
    r = subprocess.run([fuseplan] + args, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def opaque(stderr):
    """Opaque ops named by fuseplan's warning: 'op type unknown ...: dom.Op (n), ...'."""
    m = re.search(r"unknown to fuseplan, analyzed as opaque[^:]*: (.*?)(; --strict|$)", stderr, re.M)
    if not m:
        return 0, ""
    found = re.findall(r"([\w.]+) \((\d+)\)", m.group(1))
    return sum(int(c) for _, c in found), ", ".join(f"{t} ({c})" for t, c in found)


def measure(fuseplan, path, dims):
    """(ok, opaque count, opaque names, unknown values, weight bytes, KV bytes per token, cross KV
    bytes per sequence, state bytes per sequence; None where absent) of `report` (with dims bound)."""
    rc, out, err = run(fuseplan, ["report", "-f", "json", path] + dims)
    if rc != 0:
        return False, 0, err.strip(), None, None, None, None, None
    d = json.loads(out)
    n, names = opaque(err)
    kv = (d.get("kv_cache") or {}).get("bytes_per_token")
    cross = ((d.get("kv_cache") or {}).get("cross") or {}).get("bytes_per_sequence")
    state = ((d.get("kv_cache") or {}).get("state") or {}).get("bytes_per_sequence")
    return True, n, names, d.get("unknown_values"), d["memory"]["stored_weight_bytes"], kv, cross, state


def kv_cell(hand, fuseplan):
    """The KV bytes per token column: config / fuseplan, or '-' without a config."""
    if hand is None:
        return "-"
    return f"{hand} / {'none' if fuseplan is None else fuseplan}{'' if hand == fuseplan else ' (differ)'}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True)
    ap.add_argument("--fuseplan", required=True)
    ap.add_argument("--before")
    ap.add_argument("--commit", default="?")
    a = ap.parse_args()
    failed = False
    rows = []
    for path in sorted(glob.glob(os.path.join(a.models, "**", "*.onnx"), recursive=True)):
        stored, syms, here = model_facts(path)
        rel = os.path.relpath(path, a.models)
        if not here:
            rows.append(f"| {rel} | external data absent: not run | | | | | | | |")
            continue
        dims = [x for s in syms for x in ("--dim", f"{s}={binding(s)}")]
        # exported for the CUDA EP: float16 kernels, no float32 copies of the weights
        device = ["--device", "a100"] if "cuda" in rel else []
        before = measure(a.before, path, dims + device) if a.before else None
        ok, n_opaque, names, unknown, weights, kv, cross, state = measure(a.fuseplan, path, dims + device)
        hand_kv, _ = config_kv_bytes(path)
        hand_cross = cross_bytes(path)
        hand_state = state_bytes(path)
        free = measure(a.fuseplan, path, device)
        for cmd in ("shapes", "memory"):
            rc, out, err = run(a.fuseplan, [cmd, path] + dims + (["-f", "json"] if cmd == "memory" else []))
            if rc != 0:
                ok, names = False, f"{cmd}: {err.strip()}"
            elif cmd == "memory":  # the weights of the model as the file holds it, before any target's rewrite
                weights = json.loads(out)["memory"]["stored_weight_bytes"]
        failed |= not ok
        b = f"{before[1]} ({before[2]})" if before and before[1] else "0" if before else "-"
        bu = str(before[3]) if before and before[0] else "-"
        rows.append(f"| {rel} | {b} | {n_opaque}{f' ({names})' if names else ''} | {bu} | {free[3]} / {unknown} | "
                    f"{weights} / {stored}{'' if weights == stored else ' (differ)'} | {kv_cell(hand_kv, kv)} | "
                    f"{kv_cell(hand_cross, cross) if hand_cross else '-'} | "
                    f"{kv_cell(hand_state, state) if hand_state else '-'} |")
    print(f"onnxruntime-genai test models (microsoft/onnxruntime-genai at {a.commit}), bound: "
          "batch 1, 1 new token after 7 past (8 total), other dims 4\n")
    print("| model | opaque ops before | opaque ops after | unknown sizes before (bound) | unknown sizes after "
          "(free / bound) | stored weight bytes: fuseplan / file | KV bytes per token: config / fuseplan | "
          "cross KV bytes per sequence: by hand / fuseplan | state bytes per sequence: by hand / fuseplan |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
