#!/bin/sh
# Lists the product functions (not tests/ nor bench/) longer than N lines (default 80), longest
# first, as "LINES FILE:LINE NAME". Exit 1 when there is one. Needs universal-ctags.
set -eu
cd "$(dirname "$0")/.."
max=${1:-80}
command -v ctags >/dev/null 2>&1 && ctags --version 2>/dev/null | grep -q "Universal Ctags" || {
    echo "long-functions: needs universal-ctags (apt-get install universal-ctags)" >&2
    exit 2
}
git ls-files '*.c' | grep -v '^tests/\|^bench/' |
  xargs ctags -f - --kinds-c=f --fields=+ne |
  awk -F'\t' -v max="$max" '{
      line = 0; end = 0
      for (i = 4; i <= NF; i++) {
          if ($i ~ /^line:/) line = substr($i, 6)
          if ($i ~ /^end:/) end = substr($i, 5)
      }
      n = end - line + 1
      if (n > max) printf "%d %s:%d %s\n", n, $2, line, $1
  }' | sort -rn > /tmp/fp-long.$$ || true
cat /tmp/fp-long.$$
test ! -s /tmp/fp-long.$$; rc=$?; rm -f /tmp/fp-long.$$; exit $rc
