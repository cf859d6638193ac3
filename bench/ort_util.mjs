// ort_util.mjs - helpers shared by the ONNX Runtime bench scripts (ort_*.mjs, peer_ort.mjs).

// The value after `name` on the command line, or dflt.
export function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}

// Deterministic pseudo-random fill (LCG), so reruns feed the same data.
export function fill(n, seed) {
  const a = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = s / 4294967296 - 0.5;
  }
  return a;
}
