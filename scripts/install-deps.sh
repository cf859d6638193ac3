#!/bin/sh
# install-deps.sh - install the Debian packages one make target needs, only those missing.
# Idempotent: a second run installs nothing and prints nothing but a one-line summary.
# Usage: scripts/install-deps.sh SET [extra-package ...]
#   run    building and running fuseplan (make build, make run, make python)
#   test   run's, and what make test uses besides (CUnit, the peers the suites check against)
#   fuzz   run's, and make fuzz's (clang with libFuzzer, the seed corpus's sources)
#   bench  run's, and make bench's (the Python generators of the benchmark models)
#   format make format's and make format-check's (clang-format, git) alone
# tests/test_install_deps.sh checks the sets (dpkg-query and apt-get stubbed).
set -eu

# protobuf-c-compiler's protoc-c compiles libonnx-dev's onnx.proto and frontends/ge/ge_ir.proto.
RUN_PKGS="build-essential cmake pkg-config
          libprotobuf-c-dev protobuf-c-compiler libonnx-dev
          libglib2.0-dev zlib1g-dev libxml2-dev libjson-glib-dev"
# libcunit1-dev: fuseplan_tests (FP_TESTS). libxml2-utils: xmllint validates the JUnit output.
# protobuf-compiler: protoc, the reference peer of the text-format and GE suites. libonnx-testdata:
# the testdata, shapes_testdata and pbtxt suites. chromium: the HTML report rendered headless.
# prometheus: promtool checks the OpenMetrics output. python3-onnx, python3-pytest: python/tests.
# time: /usr/bin/time in tests/fuzz/worst.sh (the measurements of docs/robustness.md).
# clang-format, git: tests/test_format.sh (scripts/format.sh on a scratch repository).
TEST_PKGS="libcunit1-dev libxml2-utils protobuf-compiler libonnx-testdata
           chromium prometheus python3-onnx python3-pytest time clang-format git"
# clang, libclang-rt-14-dev: libFuzzer. protobuf-compiler, libonnx-testdata: tests/fuzz/seeds.sh.
FUZZ_PKGS="clang libclang-rt-14-dev protobuf-compiler libonnx-testdata"
# python3-onnx: bench/gen_*.py write the models; bench/*.py read them. python3-torch,
# python3-torchvision: the exports and the PyTorch peer of bench/train_memory.py, same_graph.py and
# fidelity.py's torchvision networks.
BENCH_PKGS="python3-onnx python3-torch python3-torchvision"
# clang-format: Debian bookworm's is version 14, the one .clang-format is written for; git lists
# the files to format.
FORMAT_PKGS="clang-format git"

set_name=${1:-}
case "$set_name" in
run) PKGS=$RUN_PKGS ;;
test) PKGS="$RUN_PKGS $TEST_PKGS" ;;
fuzz) PKGS="$RUN_PKGS $FUZZ_PKGS" ;;
bench) PKGS="$RUN_PKGS $BENCH_PKGS" ;;
format) PKGS=$FORMAT_PKGS ;;
*)
    echo "usage: scripts/install-deps.sh run|test|fuzz|bench|format [extra-package ...]" >&2
    exit 2
    ;;
esac
shift
PKGS="$PKGS $*"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "install-deps: all packages for $set_name present"
    exit 0
fi

echo "install-deps: installing$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
# A stale package index makes apt-get fail to find packages: refresh it first.
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps: done"
