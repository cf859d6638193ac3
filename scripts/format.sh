#!/bin/sh
# format.sh - clang-format, in the style of .clang-format, over the C sources git tracks (generated
# sources live in build directories and are not tracked; there is no third-party C code).
# Usage: scripts/format.sh          rewrites the files clang-format would change, naming each
#        scripts/format.sh --check  changes nothing: names them and exits 1 if there are any
# Exit 2 (nothing changed) on a G_DEFINE_QUARK(...) at file scope without a ';' after it:
# clang-format 14 reads it as code and spaces out the quark's name, whose spelling the macro
# turns into the quark's string (fp-x-error-quark would become "fp - x - error - quark").
set -eu
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}

case "${1:-}" in
--check) check=1 ;;
"") check=0 ;;
*)
    echo "usage: scripts/format.sh [--check]" >&2
    exit 2
    ;;
esac

command -v "$CLANG_FORMAT" >/dev/null || {
    echo "format: $CLANG_FORMAT not found (scripts/install-deps.sh format installs it)" >&2
    exit 2
}
# An option clang-format does not know would otherwise read as every file needing a change.
"$CLANG_FORMAT" --style=file --dump-config >/dev/null || exit 2
files=$(git ls-files '*.c' '*.h')
[ -n "$files" ] || exit 0

# shellcheck disable=SC2086
quarks=$(grep -n -E '^[[:space:]]*G_DEFINE_QUARK[[:space:]]*\(.*\)[[:space:]]*$' $files || true)
if [ -n "$quarks" ]; then
    echo "format: G_DEFINE_QUARK needs a ';' after it before clang-format runs (its name would be spaced out):" >&2
    echo "$quarks" | sed 's/^/  /' >&2
    exit 2
fi

changed=0
for f in $files; do
    if ! "$CLANG_FORMAT" --dry-run --Werror "$f" >/dev/null 2>&1; then
        changed=$((changed + 1))
        echo "  $f"
        [ "$check" = 1 ] || "$CLANG_FORMAT" -i "$f"
    fi
done
n=$(echo "$files" | wc -l)
if [ "$check" = 0 ]; then
    echo "format: $changed of $n files rewritten"
elif [ "$changed" -gt 0 ]; then
    echo "format-check: clang-format would change the $changed files above, of $n (make format)"
    exit 1
else
    echo "format-check: all $n files formatted"
fi
