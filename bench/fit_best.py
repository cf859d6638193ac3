#!/usr/bin/python3
"""Pick, per model, the fastest of several profiling passes (bench/ort_fit.sh).

  /usr/bin/python3 bench/fit_best.py FUSEPLAN OUT_PAIRS DIR1 DIR2 ...

Each DIR holds the profiles and pairs.txt of one pass of bench/ort_profiles.mjs. For every model
profiled in all passes, the profile with the smallest measured total (`fuseplan profile`: kernel
time per run) goes to OUT_PAIRS as "MODEL PROFILE". On a shared machine a whole pass can run slower
(another process on the other core competes for cache and memory bandwidth); the fastest pass is
the closest to the machine's own speed. Models missing from a pass are left out.
"""
import json
import os
import subprocess
import sys


def total_us(fp, path):
    out = subprocess.run([fp, "profile", "-f", "json", "--top", "0", path], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["total_us"]


def main():
    fp, out, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    passes = []
    for d in dirs:
        with open(os.path.join(d, "pairs.txt")) as f:
            passes.append(dict((os.path.basename(p), (m, p)) for m, p in (line.split() for line in f if line.strip())))
    lines = []
    for key, (model, _) in passes[0].items():
        cands = [p[key][1] for p in passes if key in p]
        if len(cands) == len(passes):
            lines.append(f"{model} {min(cands, key=lambda p: total_us(fp, p))}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{out}: {len(lines)} models, fastest of {len(passes)} passes")


if __name__ == "__main__":
    main()
