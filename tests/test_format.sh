#!/bin/sh
# test_format.sh - scripts/format.sh on a scratch git repository with the project's .clang-format:
# --check names the tracked files clang-format would change, changes nothing and exits 1; without
# it they are rewritten (untracked files are left alone) and a second --check passes; a file-scope
# G_DEFINE_QUARK without ';' stops both (exit 2, nothing changed) and one with ';' keeps its name.
# Run by make test; exit 1 on the first failed check.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT

fail() {
    echo "test_format: $*" >&2
    exit 1
}

mkdir "$repo/scripts"
cp "$root/scripts/format.sh" "$repo/scripts/"
cp "$root/.clang-format" "$repo/"
printf 'int f(void) { return 0; }\n' >"$repo/good.c"
printf 'int  g( void ){return 1;}\n' >"$repo/bad.c"
printf 'int  h( void ){return 2;}\n' >"$repo/untracked.c"
git -C "$repo" init -q
git -C "$repo" add scripts .clang-format good.c bad.c
snapshot() { cat "$repo/good.c" "$repo/bad.c" "$repo/untracked.c"; }

# fmt ARGS...: runs format.sh; its stdout and stderr in $out, its exit status in $rc.
fmt() {
    rc=0
    out=$("$repo/scripts/format.sh" "$@" 2>&1) || rc=$?
}

before=$(snapshot)
fmt --check
[ "$rc" = 1 ] || fail "--check on a misformatted file: exit $rc, expected 1: $out"
echo "$out" | grep -qx "  bad.c" || fail "--check does not name bad.c: $out"
! echo "$out" | grep -q "good.c\|untracked.c" || fail "--check names a file it would not change: $out"
[ "$(snapshot)" = "$before" ] || fail "--check changed a file"

fmt
[ "$rc" = 0 ] || fail "format: exit $rc: $out"
[ "$(cat "$repo/bad.c")" = "int g(void) { return 1; }" ] || fail "bad.c not formatted: $(cat "$repo/bad.c")"
[ "$(cat "$repo/good.c")" = "int f(void) { return 0; }" ] || fail "good.c changed"
[ "$(cat "$repo/untracked.c")" = "int  h( void ){return 2;}" ] || fail "an untracked file was formatted"
fmt --check
[ "$rc" = 0 ] || fail "--check after format: exit $rc: $out"

# The quark's name is stringified by the macro: clang-format must not space it out.
printf '#include <glib.h>\nG_DEFINE_QUARK(fp-x-error-quark, fp_x_error)\nint  k;\n' >"$repo/quark.c"
git -C "$repo" add quark.c
before=$(snapshot; cat "$repo/quark.c")
for mode in --check ""; do
    fmt $mode
    [ "$rc" = 2 ] || fail "G_DEFINE_QUARK without ';', mode '$mode': exit $rc, expected 2: $out"
    echo "$out" | grep -q "quark.c:2:" || fail "G_DEFINE_QUARK without ';' not named: $out"
    [ "$(snapshot; cat "$repo/quark.c")" = "$before" ] || fail "a file changed although format.sh stopped"
done
sed -i 's/fp_x_error)$/fp_x_error);/' "$repo/quark.c"
fmt
[ "$rc" = 0 ] || fail "format with G_DEFINE_QUARK(...);: exit $rc: $out"
grep -qx "G_DEFINE_QUARK(fp-x-error-quark, fp_x_error);" "$repo/quark.c" ||
    fail "the quark's name changed: $(cat "$repo/quark.c")"
grep -qx "int k;" "$repo/quark.c" || fail "quark.c not formatted: $(cat "$repo/quark.c")"

fmt --bogus
[ "$rc" = 2 ] || fail "an unknown option: exit $rc, expected 2"
echo "test_format: all checks passed"
