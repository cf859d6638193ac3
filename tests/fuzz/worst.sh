#!/bin/sh
# worst.sh FUSEPLAN DIR [TIMEOUT [SUBCOMMAND...]] - runs `FUSEPLAN SUBCOMMAND FILE` (default: report)
# on every file of DIR (gen_worst.py's cases) and prints wall time, peak RSS, exit status and the
# first line of stderr. `memory` runs the memory-aware schedule search too (search by default).
# cpu (user + sys seconds) is the time on a quiet machine; wall grows with the machine's load.
# The limits of docs/robustness.md: under 10 s and 1 GiB for any file under 10 MB, exit 0 or 2.
set -u
bin=$1
dir=$2
limit=${3:-60}
shift 2
[ $# -gt 0 ] && shift
cmds=${*:-report}
printf '%-20s %-7s %9s %7s %7s %8s %4s  %s\n' case command bytes wall cpu "RSS MiB" exit "stderr (first line, cut)"
for f in "$dir"/*; do
    for cmd in $cmds; do
        err=$(mktemp)
        stats=$(mktemp)
        /usr/bin/time -f '%e %U %S %M' -o "$stats" timeout "$limit" "$bin" "$cmd" "$f" >/dev/null 2>"$err"
        rc=$?
        set -- $(tail -n 1 "$stats")
        printf '%-20s %-7s %9s %7s %7s %8s %4s  %.110s\n' "$(basename "${f%.*}")" "$cmd" "$(stat -c %s "$f")" "$1" \
            "$(echo "$2 $3" | awk '{printf "%.2f", $1 + $2}')" "$(($4 / 1024))" "$rc" "$(grep -v '^Command exited' "$err" | head -n 1)"
        rm -f "$err" "$stats"
    done
done
