#!/bin/sh
# run.sh BUILD SECONDS TARGET... - runs each libFuzzer target of BUILD (configured with -DFP_FUZZ=ON)
# for SECONDS, one after the other, on the corpus BUILD/corpus/<target> (kept between runs) seeded
# from BUILD/seeds/<target> (tests/fuzz/seeds.sh). Findings go to BUILD/artifacts/; each becomes a
# regression input under tests/fuzz-regressions/<target>/ once fixed. Prints libFuzzer's final
# stats per target; exits 1 when a target found something.
set -u
build=$1
seconds=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$build/artifacts"
status=0
for t in "$@"; do
    case "$t" in
    onnx | onnx_text) max_len=65536 ;;
    ge) max_len=131072 ;;
    ini | input_spec) max_len=4096 ;;
    *) echo "run.sh: unknown target $t" >&2; exit 2 ;;
    esac
    dict=""
    if [ -f "$build/seeds/$t.dict" ]; then dict="-dict=$build/seeds/$t.dict"; fi
    mkdir -p "$build/corpus/$t"
    log="$build/artifacts/$t.log"
    # -close_fd_mask=3: fuseplan's own messages stay out of the log; crash reports still reach it
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions="$root/tests/lsan.supp":print_suppressions=0 \
        "$build/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len \
        -close_fd_mask=3 -print_final_stats=1 $dict -artifact_prefix="$build/artifacts/$t-" \
        "$build/corpus/$t" "$build/seeds/$t" >"$log" 2>&1
    rc=$?
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    printf '%-11s exit %d  %s  corpus %s files\n' "$t" "$rc" "$last" "$(ls "$build/corpus/$t" | wc -l)"
    if [ "$rc" -ne 0 ]; then
        grep -E 'ERROR|runtime error|SUMMARY|fuzz:|Test unit written' "$log" | head -n 5
        status=1
    fi
done
exit $status
