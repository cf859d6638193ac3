#!/bin/sh
# ort_fit.sh - measure ONNX Runtime (CPU, one thread) on every model we can run, fit this machine's
# device profile to the measurements with `fuseplan fit`, and write bench/results/fit.md.
# Not part of the tests (minutes, and the numbers are this machine's).
#
#   bench/ort_fit.sh [--ort DIR] [--build DIR] [--out DIR] [--passes N]
#
#   --ort    a folder whose node_modules holds onnxruntime-node (default /tmp/ort), made with
#            mkdir -p /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node
#   --build  a Release build of fuseplan (default build-fit, configured and built here)
#   --out    where models, profiles and fits go (default bench/out/fit; git ignores bench/out)
#   --passes profiling passes over the model list (default 3); each model's fastest pass is fitted
#
# Steps: `fuseplan calibrate --threads 1` (the profiles run one thread) gives the base profile;
# bench/fit_models.py and bench/gen_big_model.py build the networks; bench/fit_manifest.py lists
# them with the samples and libonnx-testdata's pytorch-converted models (with their
# test_data_set_0 inputs); bench/ort_profiles.mjs profiles each at level extended, in --passes
# passes; bench/fit_best.py keeps each model's fastest pass (the spread between passes is reported:
# the repeatability floor); `fuseplan fit` fits on every model and on the networks alone, with
# leave-one-model-out cross-validation; bench/fit_report.py writes the markdown. The profiling
# runs at nice -20 when allowed: the machine may be shared, and a preempted run turns a 3 us kernel
# into milliseconds (ort_profiles.mjs also drops disturbed runs).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ORT=/tmp/ort
BUILD=$ROOT/build-fit
OUT=$ROOT/bench/out/fit
PASSES=3
while [ $# -gt 0 ]; do
    case $1 in
    --passes) PASSES=$2; shift 2 ;;
    --ort) ORT=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--ort DIR] [--build DIR] [--out DIR] [--passes N]" >&2; exit 2 ;;
    esac
done
PY=/usr/bin/python3
FP=$BUILD/fuseplan
mkdir -p "$OUT/models" "$ROOT/bench/results"

if [ ! -x "$FP" ]; then
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$BUILD" -j"$(nproc)" >/dev/null
fi
"$FP" calibrate --threads 1 --seconds 2 -o "$OUT/host.ini"

$PY "$ROOT/bench/fit_models.py" "$OUT/models"
[ -f "$OUT/models/resnet50.onnx" ] || $PY "$ROOT/bench/gen_big_model.py" "$OUT/models/resnet50.onnx"
$PY "$ROOT/bench/fit_manifest.py" "$OUT/manifest.json" "$OUT/models"

NICE=
if nice -n -20 true 2>/dev/null; then NICE="nice -n -20"; fi
DIRS=
for pass in $(seq 1 "$PASSES"); do
    $NICE node "$ROOT/bench/ort_profiles.mjs" --ort "$ORT" --manifest "$OUT/manifest.json" \
        --out "$OUT/profiles$pass" >"$OUT/profiles$pass.log" 2>&1
    DIRS="$DIRS $OUT/profiles$pass"
done
# shellcheck disable=SC2086 # DIRS is a list of paths without spaces
$PY "$ROOT/bench/fit_best.py" "$FP" "$OUT/pairs_all.txt" $DIRS
grep -v pytorch-converted "$OUT/pairs_all.txt" >"$OUT/pairs_networks.txt"

"$FP" fit -d "$OUT/host.ini" -o "$OUT/fitted_all.ini" --pairs "$OUT/pairs_all.txt" -f json >"$OUT/fit_all.json"
"$FP" fit -d "$OUT/host.ini" -o "$OUT/fitted_networks.ini" --pairs "$OUT/pairs_networks.txt" -f json \
    >"$OUT/fit_networks.json"
# shellcheck disable=SC2086
$PY "$ROOT/bench/fit_report.py" --fuseplan "$FP" --host "$OUT/host.ini" "$OUT/fit_all.json" \
    "$OUT/fit_networks.json" --noise $DIRS >"$ROOT/bench/results/fit.md"
echo "wrote $ROOT/bench/results/fit.md"
