#!/bin/sh
# ort_fit.sh - measure ONNX Runtime (CPU, one thread) on every model we can run, fit this machine's
# device profile to the measurements with `fuseplan fit`, and write bench/results/fit.md.
# Not part of the tests (tens of minutes, and the numbers are this machine's).
#
#   bench/ort_fit.sh [--ort DIR] [--build DIR] [--out DIR] [--passes N] [--base host|host_ort]
#                    [--reuse-profiles | --refit] [--latency | --reuse-latency] [--objective OBJ]
#
#   --ort    a folder whose node_modules holds onnxruntime-node (default /tmp/ort), made with
#            mkdir -p /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node
#   --build  a Release build of fuseplan (default build-fit, configured and built here)
#   --out    where models, profiles and fits go (default bench/out/fit; git ignores bench/out)
#   --passes profiling passes over the model list (default 5); each kernel's runs of every pass are
#            pooled (bench/ort_robust.py)
#   --base   the profile the fit starts from and is pulled toward: host_ort (default: `fuseplan
#            calibrate` + bench/ort_calibrate.py's synthetic ONNX Runtime kernels) or host
#            (`fuseplan calibrate` alone)
#   --reuse-profiles  keep the profiling passes already in --out (calibrate and fit again)
#   --refit  keep the profiling passes and the calibration (host.ini, host_ort.ini) in --out: fit
#            and write the reports again (with --latency: time again; else the timings in --out are
#            reused when there are some)
#   --objective OBJ  the fit's row weights (fuseplan fit --objective; default models)
#   --latency         also time every model without a profiler at levels disabled and extended
#            (bench/ort_run.c through ORT's C API) and compare with the stage estimates on the
#            calibrated profile (host_ort.ini) and on cross-validated fits of it to those runs
#            (bench/latency_vs_ort.py): bench/results/latency.md
#   --reuse-latency   the same from the timings and fits already in --out/latency
#
# Steps: `fuseplan calibrate --threads 1` (the profiles run one thread), three times a pause apart
# (a busy neighbour core slows the SGEMM too), the run with the highest peak kept, gives host.ini;
# bench/ort_calibrate.py adds ONNX Runtime's launch overheads and convolution efficiencies measured
# on synthetic kernels (host_ort.ini); bench/fit_models.py and bench/gen_big_model.py build the
# networks; bench/fit_manifest.py lists them with the samples and libonnx-testdata's
# pytorch-converted models (with their test_data_set_0 inputs); bench/ort_profiles.mjs profiles
# each at level extended, in --passes passes, at nice -20 pinned to the core that was idlest when
# the pass started; bench/ort_robust.py pools every kernel's runs over the passes into one robust
# time per kernel (the mean of the runs within 1.5x of its fastest: preemptions and a busy
# neighbour core only add time); `fuseplan fit` fits on every model and on the networks alone, with
# leave-one-model-out cross-validation; bench/fit_report.py writes the markdown.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ORT=/tmp/ort
BUILD=$ROOT/build-fit
OUT=$ROOT/bench/out/fit
PASSES=5
BASE=host_ort
REUSE=
LATENCY=
REFIT=
OBJECTIVE=models
while [ $# -gt 0 ]; do
    case $1 in
    --passes) PASSES=$2; shift 2 ;;
    --ort) ORT=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --base) BASE=$2; shift 2 ;;
    --reuse-profiles) REUSE=1; shift ;;
    --refit) REUSE=1; REFIT=1; shift ;;
    --objective) OBJECTIVE=$2; shift 2 ;;
    --latency) LATENCY=measure; shift ;;
    --reuse-latency) LATENCY=reuse; shift ;;
    *) echo "usage: $0 [--ort DIR] [--build DIR] [--out DIR] [--passes N] [--base host|host_ort]" >&2; exit 2 ;;
    esac
done
PY=/usr/bin/python3
FP=$BUILD/fuseplan
mkdir -p "$OUT/models" "$ROOT/bench/results"

if [ ! -x "$FP" ]; then
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$BUILD" -j"$(nproc)" >/dev/null
fi
NICE=
if nice -n -20 true 2>/dev/null; then NICE="nice -n -20"; fi
idlest() { $PY -c "import sys; sys.path.insert(0, '$ROOT/bench'); import ort_common; print(ort_common.idlest_cpu())"; }

if [ -z "$REFIT" ]; then
    for try in 1 2 3; do
        [ "$try" = 1 ] || sleep 20
        # shellcheck disable=SC2086 # NICE is a command prefix or nothing
        taskset -c "$(idlest)" $NICE "$FP" calibrate --threads 1 --seconds 2 -o "$OUT/host$try.ini" >/dev/null
    done
    $PY - "$OUT" <<'EOF'
import configparser, shutil, sys
def peak(p):
    c = configparser.ConfigParser(interpolation=None)
    c.read(p)
    return float(c["peak"]["fp32"])
best = max((f"{sys.argv[1]}/host{i}.ini" for i in (1, 2, 3)), key=peak)
shutil.copy(best, f"{sys.argv[1]}/host.ini")
print(f"host.ini: {best}, {peak(best) / 1e9:.1f} GFLOP/s")
EOF
    $PY "$ROOT/bench/ort_calibrate.py" --ort "$ORT" --device "$OUT/host.ini" -o "$OUT/host_ort.ini" \
        >"$OUT/ort_calibrate.md"
fi

$PY "$ROOT/bench/fit_models.py" "$OUT/models"
[ -f "$OUT/models/resnet50.onnx" ] || $PY "$ROOT/bench/gen_big_model.py" "$OUT/models/resnet50.onnx"
$PY "$ROOT/bench/fit_manifest.py" "$OUT/manifest.json" "$OUT/models"

DIRS=
load() { cut -d' ' -f1-3 /proc/loadavg; }
[ -n "$REUSE" ] || : >"$OUT/load.txt"
for pass in $(seq 1 "$PASSES"); do
    if [ -z "$REUSE" ]; then
        cpu=$(idlest)
        start="$(date -u +%FT%TZ), load $(load)"
        # shellcheck disable=SC2086
        taskset -c "$cpu" $NICE node "$ROOT/bench/ort_profiles.mjs" --ort "$ORT" --manifest "$OUT/manifest.json" \
            --out "$OUT/profiles$pass" >"$OUT/profiles$pass.log" 2>&1
        echo "pass $pass on cpu $cpu: $start; end $(date -u +%FT%TZ), load $(load)" >>"$OUT/load.txt"
    fi
    DIRS="$DIRS $OUT/profiles$pass"
done
# shellcheck disable=SC2086 # DIRS is a list of paths without spaces
$PY "$ROOT/bench/ort_robust.py" "$OUT/robust" "$OUT/pairs_all.txt" $DIRS
grep -v pytorch-converted "$OUT/pairs_all.txt" >"$OUT/pairs_networks.txt"

"$FP" fit -d "$OUT/$BASE.ini" -o "$OUT/fitted_all.ini" --pairs "$OUT/pairs_all.txt" --objective "$OBJECTIVE" -f json \
    >"$OUT/fit_all.json"
"$FP" fit -d "$OUT/$BASE.ini" -o "$OUT/fitted_networks.ini" --pairs "$OUT/pairs_networks.txt" --objective "$OBJECTIVE" -f json \
    >"$OUT/fit_networks.json"
# the same data with another objective (e2e: the end-to-end criterion itself; or the default), for comparison
ALTOBJ=models
[ "$OBJECTIVE" != models ] || ALTOBJ=e2e
"$FP" fit -d "$OUT/$BASE.ini" -o "$OUT/fitted_all_$ALTOBJ.ini" --pairs "$OUT/pairs_all.txt" --objective "$ALTOBJ" \
    -f json >"$OUT/fit_all_$ALTOBJ.json"
ALT="--alt $OUT/fit_all_$ALTOBJ.json"
# shellcheck disable=SC2086 # ALT is two words or none
$PY "$ROOT/bench/fit_report.py" --fuseplan "$FP" --host "$OUT/$BASE.ini" --passes "$OUT/robust/passes.json" \
    --load "$OUT/load.txt" $ALT "$OUT/fit_all.json" "$OUT/fit_networks.json" >"$ROOT/bench/results/fit.md"
echo "wrote $ROOT/bench/results/fit.md"

[ -n "$LATENCY" ] || [ -z "$REFIT" ] || [ ! -d "$OUT/latency/folds" ] || LATENCY=reuse
if [ -n "$LATENCY" ]; then
    # each model's unprofiled ORT run at both levels against the stage estimates on the calibrated
    # profile and on cross-validated fits of it (bench/latency_vs_ort.py)
    REUSE_LAT=
    [ "$LATENCY" = measure ] || REUSE_LAT=--reuse
    # shellcheck disable=SC2086 # REUSE_LAT is one word or none
    $PY "$ROOT/bench/latency_vs_ort.py" --ort "$ORT" --fuseplan "$FP" --base "$OUT/host_ort.ini" \
        --out "$OUT/latency" --passes "$PASSES" $REUSE_LAT -o "$ROOT/bench/results/latency.md"
    echo "wrote $ROOT/bench/results/latency.md"
fi
