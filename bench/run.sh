#!/bin/sh
# run.sh - `make bench`: builds the benchmark tools against a Release build, makes the benchmark
# models (bench/out/, ignored by git), installs onnxruntime-node for the ORT peer if missing
# (bench/node_modules/, ignored), then runs bench/bench.py, which rewrites the measured part of
# docs/benchmarks.md. Never part of make test.
#
# Environment:
#   BUILD_DIR=build          Release build to measure (make bench builds it first)
#   BENCH_BIG=1              also make and measure the ~1 GB model (gen_big_model.py --width 3.2;
#                            about 1 GB of disk in bench/out/, a minute to generate)
#   BENCH_SIZES="1000 ..."   synthetic graph sizes (default 1000 10000 100000 1000000)
#   BENCH_CURVE_SIZES="2000 ..."  sizes in between, timed in-process only for the curve of time per
#                            node against size (default 2000 5000 20000 50000; "" for none)
#   BENCH_RUNS=5, BENCH_PEER_RUNS=3, BENCH_PEER_TIMEOUT=600 (s), BENCH_PEER_MAX_NODES=1000000,
#   BENCH_ORT_MAX_NODES=100000 (ORT needs ~40 s and 1.3 GB for 100k nodes)
#   BENCH_BIG_RUNS=5                           in-process phase runs from 1M nodes on
#   BENCH_ANALYZE="report"                     the fuseplan command timed (ANALYZE in bench.py)
#   BENCH_DOC=docs/benchmarks.md               the file whose measured part is rewritten
#   BENCH_FIDELITY=0         skip bench/fidelity.py (the fusion, memory and cost fidelity tables)
#   BENCH_TRAIN=0            skip the training-memory comparison with PyTorch (bench/train_memory.py)
#   BENCH_TRAIN_PLANNER=0    skip the recompute planner's timings (bench/train_planner.py)
#   BENCH_TRAIN_REPLAY=0     skip the recompute plans replayed in PyTorch (bench/train_replay.py) and
#                            the ResNet-50 training headroom table (bench/train_headroom.py)
#   BENCH_SAME=0             skip the cross-command check on torchvision exports with a dynamic batch
#                            (bench/same_graph.py)
#   BENCH_SPEEDUP=0          skip the stage speedups against ONNX Runtime at levels disabled, extended
#                            and all on the networks (bench/speedup_vs_ort.py, ~5 min)
#   BENCH_RUNTIME_CAL=0      skip `calibrate --runtime onnxruntime` judged on 40 networks at levels disabled
#                            and all, on one thread and on all cores (bench/runtime_calibration.py, ~7 min
#                            each; its tables go into docs/benchmarks.md, "Runtime calibration" and
#                            "Runtime calibration at all cores"), then the kept one-thread runs judged
#                            again on the cost model as built (bench/runtime_refit.py, ~1 min)
#   BENCH_DIFFTEST=0         skip the differential test against ONNX Runtime (bench/difftest/difftest.py:
#                            random variants of each rewrite at levels basic, extended and all)
#   BENCH_DIFFTEST_COUNT=10200  variants of the differential test (each optimized at the three levels;
#                            10,200 leave more than 10,000 that ORT accepts, ~5 min)
#   BENCH_ORT_MEMORY=0       skip the memory comparison with ONNX Runtime's arena at levels disabled and all
#                            (bench/ort_memory.py)
#   BENCH_LLM=0              skip the LLM skeletons (bench/gen_llm_skeleton.py) and their KV cache, weight
#                            and batch-headroom table (bench/llm_memory.py)
# The measurements are also kept in bench/out/bench_results.json: after editing how they are shown,
#   /usr/bin/python3 bench/bench.py --render-only --fuseplan build/fuseplan --tools build/bench \
#       --models-dir bench/out
# rewrites the document without measuring again.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}
OUT=bench/out
SIZES=${BENCH_SIZES:-"1000 10000 100000 1000000"}
CURVE_SIZES=${BENCH_CURVE_SIZES-"2000 5000 20000 50000"}
TOOLS=$BUILD_DIR/bench

if [ ! -x "$BUILD_DIR/fuseplan" ] || [ ! -f "$BUILD_DIR/libfuseplan_core.a" ]; then
    echo "bench: no Release build in $BUILD_DIR (run 'make bench', or set BUILD_DIR)" >&2
    exit 2
fi

# ---- tools: compiled here, never part of the product build
mkdir -p "$TOOLS" "$OUT"
PKGS="libprotobuf-c glib-2.0 gthread-2.0 libxml-2.0 json-glib-1.0 zlib"
CFLAGS="-O2 -std=gnu11 -Wall -Wextra -Wno-missing-field-initializers -Werror"
# shellcheck disable=SC2046,SC2086
gcc $CFLAGS -I"$BUILD_DIR/gen" -o "$TOOLS/fp_gen_graph" bench/gen_graph.c \
    "$BUILD_DIR/libfuseplan_core.a" $(pkg-config --cflags --libs $PKGS)
# shellcheck disable=SC2046,SC2086
gcc $CFLAGS -I. -I"$BUILD_DIR/gen" -o "$TOOLS/fp_bench_phases" bench/phases.c cli/platform.c \
    "$BUILD_DIR/libfuseplan_core.a" $(pkg-config --cflags --libs $PKGS) -lm

# shellcheck disable=SC2046,SC2086
gcc $CFLAGS -I. -I"$BUILD_DIR/gen" -o "$TOOLS/fp_bench_train_planner" bench/train_planner.c \
    "$BUILD_DIR/libfuseplan_core.a" $(pkg-config --cflags --libs $PKGS) -lm

# shellcheck disable=SC2046,SC2086
gcc $CFLAGS -o "$TOOLS/fp_bench_pagefault" bench/pagefault.c $(pkg-config --cflags --libs glib-2.0)
gcc $CFLAGS -o "$TOOLS/fp_bench_spawn" bench/spawn.c

# ---- models (made once; delete bench/out/ to make them again)
for n in $SIZES $CURVE_SIZES; do
    [ -f "$OUT/synth_$n.onnx" ] || "$TOOLS/fp_gen_graph" -n "$n" -o "$OUT/synth_$n.onnx"
done
[ -f "$OUT/resnet50.onnx" ] || /usr/bin/python3 bench/gen_big_model.py "$OUT/resnet50.onnx"
[ -f "$OUT/resnet50_ext.onnx" ] || /usr/bin/python3 bench/gen_big_model.py "$OUT/resnet50_ext.onnx" --external
if [ "${BENCH_LLM:-1}" = 1 ] && { [ ! -f "$OUT/llama2_7b.onnx" ] || [ ! -f "$OUT/llama3_8b.onnx" ] ||
    [ ! -f "$OUT/qwen2_7b.onnx" ]; }; then
    /usr/bin/python3 bench/gen_llm_skeleton.py "$OUT"   # weight-free: ~0.4 MB each, no weights.bin
fi
if [ "${BENCH_BIG:-0}" = 1 ] && [ ! -f "$OUT/resnet50_w3.2.onnx" ]; then
    /usr/bin/python3 bench/gen_big_model.py "$OUT/resnet50_w3.2.onnx" --width 3.2
fi

# ---- ORT peer: onnxruntime-node in bench/node_modules (prebuilt CPU binaries; no install scripts)
if [ ! -d bench/node_modules/onnxruntime-node ]; then
    (cd bench && npm install --ignore-scripts --no-save --no-package-lock --no-audit --no-fund onnxruntime-node) ||
        echo "bench: onnxruntime-node not installed: the ORT column stays empty" >&2
fi

# ---- the committed decoder samples (models/decoder_*.onnx: Optimum, genai builder, int4, Whisper
# layouts) load and run in onnxruntime-node: a decode step of 1 token after 7
if [ -d bench/node_modules/onnxruntime-node ]; then
    node bench/ort_samples.mjs --ort bench --dim batch_size=1 --dim sequence_length=1 --dim past_sequence_length=7 \
        --dim past_decoder_sequence_length=7 --dim total_sequence_length=8 "$PWD"/models/decoder_*.onnx ||
        { echo "bench: a sample model does not run in onnxruntime-node" >&2; exit 1; }
fi

# ---- onnxruntime-genai's test models (GENAI_MODELS=DIR holding its test/models tree; docs/benchmarks.md
# says how to extract it): bench/genai_models.py prints the table of that section
if [ -n "${GENAI_MODELS:-}" ]; then
    /usr/bin/python3 bench/genai_models.py --models "$GENAI_MODELS" --fuseplan "$BUILD_DIR/fuseplan" \
        --commit "${GENAI_COMMIT:-?}" >"$OUT/genai_models.md" ||
        { echo "bench: bench/genai_models.py failed (see $OUT/genai_models.md)" >&2; exit 1; }
fi

BIG=""
[ "${BENCH_BIG:-0}" = 1 ] && BIG=--big
# shellcheck disable=SC2086
/usr/bin/python3 bench/bench.py --fuseplan "$BUILD_DIR/fuseplan" --tools "$TOOLS" \
    --models-dir "$OUT" --doc "${BENCH_DOC:-docs/benchmarks.md}" --sizes $SIZES --curve-sizes $CURVE_SIZES $BIG

# ---- LLM inference memory: fuseplan's KV cache, weights and batch headroom against hand arithmetic
# from the published configs (a failure is reported and does not stop the fidelity tables)
if [ "${BENCH_LLM:-1}" = 1 ]; then
    /usr/bin/python3 bench/llm_memory.py --fuseplan "$BUILD_DIR/fuseplan" --models-dir "$OUT" \
        --doc "${BENCH_DOC:-docs/benchmarks.md}" --spawn "$TOOLS/fp_bench_spawn" ||
        echo "bench: bench/llm_memory.py failed: the LLM section is not rewritten" >&2
fi

# ---- differential test: random variants of each ORT rewrite fuseplan models, ORT's kernels at each
# level against fuseplan's ort-cpu-LEVEL targets (a failure is reported and does not stop the rest)
if [ "${BENCH_DIFFTEST:-1}" = 1 ]; then
    /usr/bin/python3 bench/difftest/difftest.py --fuseplan "$BUILD_DIR/fuseplan" --ort bench --out "$OUT/difftest" \
        --count "${BENCH_DIFFTEST_COUNT:-10200}" --doc "${BENCH_DOC:-docs/benchmarks.md}" >/dev/null ||
        echo "bench: bench/difftest/difftest.py failed: its section is not rewritten" >&2
fi

# ---- training memory: fuseplan's saved activations against PyTorch's on torchvision models (needs
# Debian's python3-torch and python3-torchvision; skipped, said so, when they are missing)
if [ "${BENCH_TRAIN:-1}" = 1 ]; then
    /usr/bin/python3 bench/train_memory.py --fuseplan "$BUILD_DIR/fuseplan" --out "$OUT/train" \
        --doc "${BENCH_DOC:-docs/benchmarks.md}" ||
        echo "bench: bench/train_memory.py failed: the training section is not rewritten" >&2
fi

# ---- the recompute planner's time, exactness and gap on the torch exports of the fidelity corpus (made
# by bench/gen_torch_models.py when missing), two 32-layer decoders and the broad corpus of
# bench/gen_torch_corpus.py (made when missing; the fusion bench below uses the same files; needs python3-torch)
if [ "${BENCH_TRAIN_PLANNER:-1}" = 1 ]; then
    /usr/bin/python3 bench/train_planner.py --tool "$TOOLS/fp_bench_train_planner" --out "$OUT/train_planner" \
        --corpus-dir "$OUT/fidelity/torch_corpus" --doc "${BENCH_DOC:-docs/benchmarks.md}" ||
        echo "bench: bench/train_planner.py failed: its section is not rewritten" >&2
fi

# ---- the recompute plans replayed in PyTorch with torch.utils.checkpoint, and ResNet-50's largest
# training batch on 32 and 64 GiB at fp32 and AMP (need python3-torch, python3-torchvision, python3-onnx)
if [ "${BENCH_TRAIN_REPLAY:-1}" = 1 ]; then
    /usr/bin/python3 bench/train_replay.py --fuseplan "$BUILD_DIR/fuseplan" --out "$OUT/train_replay" \
        --doc "${BENCH_DOC:-docs/benchmarks.md}" ||
        echo "bench: bench/train_replay.py failed: its section is not rewritten" >&2
    /usr/bin/python3 bench/train_headroom.py --fuseplan "$BUILD_DIR/fuseplan" --out "$OUT/train" \
        --doc "${BENCH_DOC:-docs/benchmarks.md}" ||
        echo "bench: bench/train_headroom.py failed: its section is not rewritten" >&2
fi

# ---- every command sees the same graph: shapes, memory, report and train on torchvision exports with
# a dynamic batch (needs python3-torch and python3-torchvision; skipped, said so, when missing)
if [ "${BENCH_SAME:-1}" = 1 ]; then
    /usr/bin/python3 bench/same_graph.py --fuseplan "$BUILD_DIR/fuseplan" --out "$OUT/same_graph" \
        --doc "${BENCH_DOC:-docs/benchmarks.md}" >/dev/null ||
        echo "bench: bench/same_graph.py failed: its section is not rewritten" >&2
fi

# ---- speedups: ORT on one thread at levels disabled, extended, all against the stage table on a
# `calibrate --threads 1` profile, on the torchvision networks of the fidelity run and two of
# bench/fit_models.py's (made by bench/fidelity.py below when missing: this runs after it)
speedup() {
    T=bench/out/fidelity/torch N=bench/out/fidelity/networks
    /usr/bin/python3 bench/speedup_vs_ort.py --fuseplan "$BUILD_DIR/fuseplan" --ort bench \
        $T/pt_resnet18.onnx $T/pt_resnet50.onnx $T/pt_mobilenet_v2.onnx $T/pt_mnasnet1_0.onnx \
        $T/pt_efficientnet_b0.onnx $T/pt_mobilenet_v3_small.onnx $T/pt_shufflenet_v2_x1_0.onnx \
        $T/pt_regnet_y_400mf.onnx $T/pt_densenet121.onnx $T/pt_convnext_tiny.onnx $N/squeezenet.onnx \
        $N/vgg11_112.onnx >/dev/null ||
        echo "bench: bench/speedup_vs_ort.py failed: bench/results/speedup.md is not rewritten" >&2
}

# ---- `calibrate --runtime onnxruntime` (one thread, then all cores) judged on networks that took
# no part in it: the torchvision exports, the fidelity networks, PaddleOCR's, the static decoders,
# the generated ResNet-50 and four sample networks; PaddleOCR's at the sizes they read
# (bench/ort_common.py, PADDLE_DIMS)
runtime_cal() {
    F=bench/out/fidelity
    for threads in 1 all; do
        /usr/bin/python3 bench/runtime_calibration.py --fuseplan "$BUILD_DIR/fuseplan" --ort bench \
            --threads $threads --genai \
            $F/torch/*.onnx $F/networks/*.onnx $F/paddle/*.onnx $F/static/*.onnx "$OUT/resnet50.onnx" \
            models/resnet_tiny.onnx models/transformer_block.onnx models/inception_bfs.onnx models/branchy.onnx \
            >/dev/null ||
            echo "bench: bench/runtime_calibration.py --threads $threads failed: its table is not rewritten" >&2
    done
    # the cost model as built, judged on the one-thread runs kept in bench/results/runtime_runs (their
    # timings fitted again; the held-out networks generated once under $OUT/held_out)
    [ -e "$OUT/held_out/ho_resnet34.onnx" ] ||
        /usr/bin/python3 bench/gen_torch_models.py --held-out "$OUT/held_out" >/dev/null ||
        echo "bench: bench/gen_torch_models.py --held-out failed: the held-out runs are judged without them" >&2
    /usr/bin/python3 bench/runtime_refit.py --fuseplan "$BUILD_DIR/fuseplan" --models "$OUT/held_out" --networks \
        -o bench/results/runtime_refit.md >/dev/null ||
        echo "bench: bench/runtime_refit.py failed: bench/results/runtime_refit.md is not rewritten" >&2
}

# ---- fidelity: fusion vs ORT and memory plans are measured here; the cost tables come from the
# last runs of bench/latency_vs_ort.py and bench/ort_fit.sh (long ORT timings on a quiet machine)
[ "${BENCH_FIDELITY:-1}" = 1 ] || exit 0
/usr/bin/python3 bench/fidelity.py --build "$BUILD_DIR" --ort bench --doc "${BENCH_DOC:-docs/benchmarks.md}" --only fusion
[ "${BENCH_SPEEDUP:-1}" = 1 ] && speedup
# ---- memory against ONNX Runtime's arena: `memory --planner ort` against AllocatorGetStats on the
# fidelity corpus at batch 1 and on torch exports with a dynamic batch at 1 and 8 (bench/ort_memory.py)
if [ "${BENCH_ORT_MEMORY:-1}" = 1 ]; then
    for level in disabled all; do
        /usr/bin/python3 bench/ort_memory.py --fuseplan "$BUILD_DIR/fuseplan" --ort bench --out "$OUT/ort_memory" \
            --level $level --doc "${BENCH_DOC:-docs/benchmarks.md}" >/dev/null ||
            echo "bench: bench/ort_memory.py --level $level failed: its section is not rewritten" >&2
    done
fi
[ "${BENCH_RUNTIME_CAL:-1}" = 1 ] && runtime_cal
exec /usr/bin/python3 bench/fidelity.py --build "$BUILD_DIR" --ort bench --doc "${BENCH_DOC:-docs/benchmarks.md}" \
    --only memory --only cost
