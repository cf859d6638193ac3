#!/bin/sh
# worst.sh FUSEPLAN DIR [TIMEOUT] - runs `FUSEPLAN report` on every file of DIR (gen_worst.py's
# cases) and prints wall time, peak RSS, exit status and the first line of stderr. The limits of
# docs/robustness.md: under 10 s and 1 GiB for any file under 10 MB, exit 0 or 2.
set -u
bin=$1
dir=$2
limit=${3:-60}
printf '%-20s %9s %8s %9s %4s  %s\n' case bytes seconds "RSS MiB" exit "stderr (first line, cut)"
for f in "$dir"/*; do
    err=$(mktemp)
    stats=$(mktemp)
    /usr/bin/time -f '%e %M' -o "$stats" timeout "$limit" "$bin" report "$f" >/dev/null 2>"$err"
    rc=$?
    set -- $(tail -n 1 "$stats")
    printf '%-20s %9s %8s %9s %4s  %.110s\n' "$(basename "${f%.*}")" "$(stat -c %s "$f")" "$1" \
        "$(($2 / 1024))" "$rc" "$(grep -v '^Command exited' "$err" | head -n 1)"
    rm -f "$err" "$stats"
done
