// ort_time.mjs - measure ONNX Runtime's inference latency (CPU EP, 1 intra-op thread, profiling
// off) at graph optimization levels "disabled" and "extended", for bench/latency_vs_ort.py and
// bench/ort_calibrate.py.
//
//   node bench/ort_time.mjs --ort DIR --spec SPEC.json [--levels disabled,extended]
//        [--rounds 7] [--runs 40] [--round-ms 1000] [--warmup 10]
//
// SPEC.json: [{"model": path, "inputs": {name: {"dtype": "float32", "dims": [1, 3, 224, 224]}}}, ...]
// Prints one JSON line per model and level: {"model", "level", "ms", "round_medians_ms", "runs"} or
// {"model", "level", "error"}.
//
// Noise (a shared machine: another process takes the core for a scheduler slice now and then, or
// competes for the caches for seconds): every session is created first, then `rounds` rounds run
// over all of them in turn, each session `runs` times per round after `warmup` runs; a round's
// median (over `runs` runs, fewer when they would take more than --round-ms, at least 5) discards
// the runs a preemption hit, and the minimum over rounds ("min of medians") the
// rounds a busy neighbour slowed down. Noise on a timing only ever adds time, so the lowest
// robust statistic is the closest to the machine's own speed (Chen and Revels, "Robust
// benchmarking in noisy environments", arXiv:1608.04295, 2016). Pin the process to one core
// (taskset) to keep the scheduler from moving it.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { arg } from "./ort_util.mjs";

const require = createRequire(path.join(arg("--ort", "."), "package.json"));
const ort = require("onnxruntime-node");
const spec = JSON.parse(fs.readFileSync(arg("--spec"), "utf8"));
const LEVELS = arg("--levels", "disabled,extended").split(",");
const ROUNDS = Number(arg("--rounds", "7"));
const RUNS = Number(arg("--runs", "40"));
const WARMUP = Number(arg("--warmup", "10"));
const ROUND_MS = Number(arg("--round-ms", "1000"));

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
    const real = A === Float32Array || A === Float64Array;
    for (let i = 0; i < n; i++) data[i] = A === BigInt64Array ? 0n : real ? ((i * 7919) % 97) / 97 - 0.5 : 0;
    f[name] = new ort.Tensor(t.dtype, data, t.dims);
  }
  return f;
}

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const jobs = [];
for (const item of spec) {
  for (const level of LEVELS) {
    try {
      const session = await ort.InferenceSession.create(item.model, {
        executionProviders: ["cpu"], graphOptimizationLevel: level, intraOpNumThreads: 1, interOpNumThreads: 1,
        executionMode: "sequential",
      });
      const f = feeds(item.inputs);
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < WARMUP; i++) await session.run(f);
      const once = Number(process.hrtime.bigint() - t0) / 1e6 / WARMUP;
      const runs = Math.max(5, Math.min(RUNS, Math.round(ROUND_MS / Math.max(once, 1e-3))));
      jobs.push({ item, level, session, f, runs, medians: [] });
    } catch (e) {
      console.log(JSON.stringify({ model: item.model, level, error: String(e.message || e).split("\n")[0] }));
    }
  }
}
for (let r = 0; r < ROUNDS; r++) {
  for (const job of jobs) {
    if (job.error) continue;
    try {
      for (let i = 0; i < 2; i++) await job.session.run(job.f); // back in cache after the other sessions
      const times = [];
      for (let i = 0; i < job.runs; i++) {
        const t0 = process.hrtime.bigint();
        await job.session.run(job.f);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      job.medians.push(median(times));
    } catch (e) {
      job.error = String(e.message || e).split("\n")[0];
    }
  }
}
for (const job of jobs) {
  const { item, level } = job;
  if (job.error) console.log(JSON.stringify({ model: item.model, level, error: job.error }));
  else console.log(JSON.stringify({ model: item.model, level, ms: Math.min(...job.medians),
                                    round_medians_ms: job.medians, runs: job.runs }));
  await job.session.release?.();
}
