// ort_time.mjs - measure ONNX Runtime's inference latency (CPU EP, 1 intra-op thread) at graph
// optimization levels "disabled" and "extended", for bench/latency_vs_ort.py.
//
//   node bench/ort_time.mjs --ort DIR --spec SPEC.json
//
// SPEC.json: [{"model": path, "inputs": {name: {"dtype": "float32", "dims": [1, 3, 224, 224]}}}, ...]
// Prints one JSON line per model and level: {"model", "level", "median_ms", "runs"} or {"error"}.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}

const require = createRequire(path.join(arg("--ort", "."), "package.json"));
const ort = require("onnxruntime-node");
const spec = JSON.parse(fs.readFileSync(arg("--spec"), "utf8"));
const WARMUP = 5, RUNS = Number(arg("--runs", "30"));

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
  int8: Int8Array, uint8: Uint8Array, bool: Uint8Array, float16: Uint16Array,
};

function feeds(inputs) {
  const f = {};
  for (const [name, t] of Object.entries(inputs)) {
    const n = t.dims.reduce((a, b) => a * b, 1);
    const A = ARRAYS[t.dtype] || Float32Array;
    const data = new A(n);
    for (let i = 0; i < n; i++) data[i] = A === BigInt64Array ? 0n : (A === Float32Array || A === Float64Array) ? ((i * 7919) % 97) / 97 - 0.5 : 0;
    f[name] = new ort.Tensor(t.dtype, data, t.dims);
  }
  return f;
}

for (const item of spec) {
  for (const level of ["disabled", "extended"]) {
    try {
      const s = await ort.InferenceSession.create(item.model, {
        executionProviders: ["cpu"], graphOptimizationLevel: level, intraOpNumThreads: 1, interOpNumThreads: 1,
        executionMode: "sequential",
      });
      const f = feeds(item.inputs);
      for (let i = 0; i < WARMUP; i++) await s.run(f);
      const times = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = process.hrtime.bigint();
        await s.run(f);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      times.sort((a, b) => a - b);
      console.log(JSON.stringify({ model: item.model, level, median_ms: times[times.length >> 1], runs: RUNS }));
      await s.release?.();
    } catch (e) {
      console.log(JSON.stringify({ model: item.model, level, error: String(e.message || e).split("\n")[0] }));
    }
  }
}
