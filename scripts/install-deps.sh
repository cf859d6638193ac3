#!/bin/sh
# install-deps.sh - install the Debian packages fuseplan needs, only those missing.
# Idempotent: a second run installs nothing and prints nothing but a one-line summary.
# Usage: scripts/install-deps.sh [extra-package ...]
set -eu

PKGS="build-essential cmake pkg-config
      libprotobuf-c-dev protobuf-c-compiler protobuf-compiler libonnx-dev
      libglib2.0-dev zlib1g-dev libxml2-dev libxml2-utils libjson-glib-dev libcunit1-dev
      libonnx-testdata python3-onnx python3-pytest time
      chromium prometheus $*"
# chromium: tests/test_reports.c renders the HTML report in headless Chromium (make test, CI).
# prometheus: its promtool checks the OpenMetrics output; python3-pytest runs python/tests.

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
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
