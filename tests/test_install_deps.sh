#!/bin/sh
# test_install_deps.sh - scripts/install-deps.sh against stubs of dpkg-query, apt-get and sudo on
# PATH (nothing is installed or queried for real): `run` asks for what building and running need
# and for no package only the tests use; `test` asks for all of run's and every package the tests
# use; `format` asks for clang-format and git alone; packages already installed are not asked for;
# with none missing it prints one line and calls no apt-get. Run by make test; exit 1 on the first
# failed check.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
stubs=$(mktemp -d)
trap 'rm -rf "$stubs"' EXIT

# dpkg-query -W -f=... PKG: "install ok installed" when PKG is in $FAKE_INSTALLED, else exit 1.
cat >"$stubs/dpkg-query" <<'EOF'
#!/bin/sh
for p; do :; done
case " $FAKE_INSTALLED " in *" $p "*) printf 'install ok installed'; exit 0 ;; esac
exit 1
EOF
# apt-get ARGS: one line per call in $APT_LOG.
cat >"$stubs/apt-get" <<'EOF'
#!/bin/sh
echo "$*" >>"$APT_LOG"
EOF
printf '#!/bin/sh\nexec "$@"\n' >"$stubs/sudo"
chmod +x "$stubs/dpkg-query" "$stubs/apt-get" "$stubs/sudo"
export APT_LOG="$stubs/apt.log"

# Packages the tests use and building or running does not (see the comments in install-deps.sh).
TEST_ONLY="libcunit1-dev libxml2-utils protobuf-compiler libonnx-testdata chromium prometheus
           python3-onnx python3-pytest time clang-format git"
# Packages without which fuseplan does not build.
BUILD_NEEDS="build-essential cmake pkg-config libprotobuf-c-dev protobuf-c-compiler libonnx-dev
             libglib2.0-dev zlib1g-dev libxml2-dev libjson-glib-dev"

fail() {
    echo "test_install_deps: $*" >&2
    exit 1
}

# deps INSTALLED ARGS...: runs the script with FAKE_INSTALLED=INSTALLED; its stdout in $out, its
# exit status in $rc, the packages it asked apt-get to install in $asked (" a b c ").
deps() {
    installed=$1
    shift
    : >"$APT_LOG"
    rc=0
    out=$(FAKE_INSTALLED=$installed PATH="$stubs:$PATH" "$root/scripts/install-deps.sh" "$@" 2>&1) || rc=$?
    asked=" $(sed -n 's/^install -y -qq --no-install-recommends //p' "$APT_LOG" | tr '\n' ' ')"
}
asks() { case "$asked" in *" $1 "*) return 0 ;; esac; return 1; }

# run, nothing installed: the build's packages, none of the tests'.
deps "" run
[ "$rc" = 0 ] || fail "run: exit $rc: $out"
for p in $BUILD_NEEDS; do asks "$p" || fail "run does not ask for $p (asked:$asked)"; done
for p in $TEST_ONLY; do ! asks "$p" || fail "run asks for $p, which only the tests use"; done
head -n 1 "$APT_LOG" | grep -qx "update -qq" || fail "run: apt-get install without update first"
run_asked=$asked

# test, nothing installed: all of run's and every package the tests use.
deps "" test
[ "$rc" = 0 ] || fail "test: exit $rc: $out"
for p in $run_asked $TEST_ONLY; do asks "$p" || fail "test does not ask for $p (asked:$asked)"; done

# test with run's packages installed: only the tests' are asked for.
deps "$run_asked" test
for p in $run_asked; do ! asks "$p" || fail "test asks for $p, which is installed"; done
for p in $TEST_ONLY; do asks "$p" || fail "test does not ask for missing $p"; done

# Everything installed: one line, no apt-get.
all=$(echo "$run_asked $TEST_ONLY" | tr -s ' \n' '  ')
deps "$all" test
[ "$rc" = 0 ] || fail "test, all installed: exit $rc"
[ "$out" = "install-deps: all packages for test present" ] || fail "test, all installed, printed: $out"
[ ! -s "$APT_LOG" ] || fail "test, all installed, called apt-get: $(cat "$APT_LOG")"

# format: clang-format and git, nothing to build with.
deps "" format
[ "$asked" = " clang-format git " ] || fail "format asked for:$asked"

# Extra packages after the set are asked for too.
deps "$all" run clang
[ "$asked" = " clang " ] || fail "run clang asked for:$asked"

# No set, or an unknown one: usage, exit 2, no apt-get.
for set in "" everything; do
    deps "" $set
    [ "$rc" = 2 ] || fail "set '$set': exit $rc, expected 2"
    case "$out" in usage:*) ;; *) fail "set '$set' printed: $out" ;; esac
    [ ! -s "$APT_LOG" ] || fail "set '$set' called apt-get"
done
echo "test_install_deps: all checks passed"
