#!/bin/sh
# memory_table.sh - memory-planner benchmark (not part of make test).
#
#   bench/memory_table.sh [BUILD_DIR]      (default: build, a Release build of fuseplan)
#
# 1. A table over the sample models (models/*.onnx), models/branchy.onnx with its nodes in
#    breadth-first order, larger generated networks (bench/memory_table.py gen: DenseNet-121,
#    Inception-style in file and breadth-first order, U-Net, MobileNetV2, GPT-style), and Debian's
#    libonnx-testdata pytorch-converted models: arena of every strategy, LOAD (the floor of the
#    given order), best/LOAD, and LOAD under the memory-aware order. Every model at batch 1
#    (transformer_block: sequence 128).
# 2. Planner time on 1M buffers (bench/memory_table.c against BUILD_DIR/libfuseplan_core.a).
set -eu

BUILD=${1:-build}
FUSEPLAN=$BUILD/fuseplan
[ -x "$FUSEPLAN" ] || { echo "memory_table: $FUSEPLAN not built (make build)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

/usr/bin/python3 bench/memory_table.py bfs models/branchy.onnx "$TMP/branchy_bfs.onnx"
/usr/bin/python3 bench/memory_table.py gen "$TMP/gen"

for m in models/*.onnx "$TMP/branchy_bfs.onnx" "$TMP"/gen/*.onnx \
         /usr/share/libonnx-testdata/data/pytorch-converted/*/model.onnx; do
    [ -f "$m" ] || continue
    name=$(basename "$m" .onnx)
    [ "$name" = model ] && name=$(basename "$(dirname "$m")")
    extra=""
    [ "$name" = transformer_block ] && extra="--input input:1x128x64" # batch and sequence symbolic
    # shellcheck disable=SC2086
    if "$FUSEPLAN" memory --batch 1 $extra --format json "$m" >"$TMP/$name.json" 2>"$TMP/$name.err"; then
        echo "$name $TMP/$name.json"
    else
        echo "$name FAILED $(head -c 200 "$TMP/$name.err")"
    fi
done >"$TMP/list"
/usr/bin/python3 bench/memory_table.py table "$TMP/list"

echo
echo "planner time, 1M buffers, alignment 64 (columns: naive greedy_by_size best_fit best LOAD best/LOAD):"
gcc -O2 -I. bench/memory_table.c "$BUILD/libfuseplan_core.a" $(pkg-config --cflags --libs glib-2.0) -lm \
    -o "$TMP/memory_table"
"$TMP/memory_table" random 1000000
"$TMP/memory_table" random-heavy 1000000
