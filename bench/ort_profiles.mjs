// ort_profiles.mjs - ONNX Runtime CPU profiles of every model of a manifest (bench/fit_manifest.py),
// for `fuseplan fit` (bench/ort_fit.sh). Not part of the tests.
//
//   node bench/ort_profiles.mjs --ort DIR --manifest M.json --out OUTDIR [--level extended]
//        [--budget-ms 2000] [--min-runs 10] [--max-runs 100] [--extra-warmup 2] [--keep 1.25]
//
// Each model runs on the CPU execution provider with one intra-op and one inter-op thread,
// sequential execution, profiling on: one warm-up run (the reader skips it), then as many runs as
// fit in the budget (at least --min-runs, at most --max-runs) so short models are averaged over
// more runs. ORT's profile is kept unchanged as OUTDIR/<key>.<level>.raw.json; OUTDIR/<key>.<level>.json
// is the same profile with the disturbed runs taken out (below), and a line "MODEL PROFILE" naming
// it is appended to OUTDIR/pairs.txt. Models ORT rejects are reported and skipped.
//
// Disturbed runs: on a shared machine another process takes the core now and then, and one
// preempted run adds milliseconds to a microsecond kernel's mean. The filtered profile keeps the
// first run (fuseplan skips it as warm-up), drops the next --extra-warmup runs (first-touch
// effects last a few runs) and, of the rest, keeps the runs whose model_run span is within
// --keep of the fastest (at least 3): their model_run events and every kernel event inside them.
// Inputs: the manifest's tensors, or a deterministic pseudo-random fill of the dims it names.
//
// onnxruntime-node is installed outside the repository, e.g.
//   mkdir -p /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { arg, fill } from "./ort_util.mjs";

function fromBase64(ort, e) {
  const buf = Buffer.from(e.data, "base64");
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const views = { float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float16: Uint16Array };
  return new ort.Tensor(e.dtype, new views[e.dtype](ab), e.dims);
}

function feeds(ort, session, entry) {
  const out = {};
  session.inputNames.forEach((name, k) => {
    if (entry.inputs && entry.inputs[name]) {
      out[name] = fromBase64(ort, entry.inputs[name]);
      return;
    }
    const meta = session.inputMetadata ? session.inputMetadata[k] : undefined;
    const dims = entry.dims || {};
    const shape = (meta && meta.shape ? meta.shape : []).map((d) => (typeof d === "number" ? d : dims[d] ?? 1));
    const type = meta && meta.type ? meta.type : "float32";
    const n = shape.reduce((x, y) => x * y, 1);
    if (type === "bool") out[name] = new ort.Tensor("bool", new Uint8Array(n).fill(1), shape);
    else if (type === "int64") out[name] = new ort.Tensor("int64", new BigInt64Array(n).fill(1n), shape);
    else if (type === "int32") out[name] = new ort.Tensor("int32", new Int32Array(n).fill(1), shape);
    else if (type === "float16") out[name] = new ort.Tensor("float16", new Uint16Array(n).fill(0x3c00), shape);
    else out[name] = new ort.Tensor("float32", fill(n, 7 + k), shape);
  });
  return out;
}

// The events without the disturbed runs (see the header); runs: measured runs kept.
function undisturbed(events, opts) {
  const runs = events.filter((e) => e.cat === "Session" && e.name === "model_run").sort((a, b) => a.ts - b.ts);
  let measured = runs.slice(1);
  if (measured.length >= opts.extraWarmup + 3) measured = measured.slice(opts.extraWarmup);
  const fastest = [...measured].sort((a, b) => a.dur - b.dur);
  const limit = Math.max(fastest.length ? fastest[0].dur * opts.keep : 0, fastest.length >= 3 ? fastest[2].dur : Infinity);
  const keep = new Set([runs[0], ...measured.filter((r) => r.dur <= limit)]);
  const dropped = runs.filter((r) => !keep.has(r));
  const inside = (e) => dropped.some((r) => e.ts >= r.ts && e.ts <= r.ts + r.dur);
  return {
    events: events.filter((e) => !dropped.includes(e) && !(e.cat === "Node" && inside(e))),
    runs: keep.size - 1,
  };
}

async function profile(ort, entry, opts) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "fp-ortfit-"));
  try {
    const session = await ort.InferenceSession.create(entry.model, {
      executionProviders: ["cpu"],
      graphOptimizationLevel: opts.level,
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: "sequential",
      enableProfiling: true,
      profileFilePrefix: path.join(work, "ort"),
    });
    const inputs = feeds(ort, session, entry);
    const t0 = performance.now();
    await session.run(inputs); // warm-up
    const once = Math.max(performance.now() - t0, 0.01);
    const runs = Math.min(opts.maxRuns, Math.max(opts.minRuns, Math.round(opts.budget / once)));
    for (let r = 0; r < runs; r++) await session.run(inputs);
    session.endProfiling();
    await session.release();
    const made = fs.readdirSync(work).filter((f) => f.endsWith(".json"));
    if (made.length !== 1) throw new Error(`expected one profile, found ${made.length}`);
    const raw = path.join(opts.out, `${entry.key}.${opts.level}.raw.json`);
    const dest = path.join(opts.out, `${entry.key}.${opts.level}.json`);
    fs.copyFileSync(path.join(work, made[0]), raw);
    const kept = undisturbed(JSON.parse(fs.readFileSync(raw, "utf8")), opts);
    fs.writeFileSync(dest, JSON.stringify(kept.events));
    fs.appendFileSync(path.join(opts.out, "pairs.txt"), `${entry.model} ${dest}\n`);
    console.log(`${entry.key}: ${runs} runs, ${kept.runs} kept, ${once.toFixed(2)} ms warm-up`);
  } catch (e) {
    console.error(`${entry.key}: skipped: ${String(e.message || e).split("\n")[0]}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

const opts = {
  level: arg("--level", "extended"),
  out: path.resolve(arg("--out", "bench/out/fit/profiles")),
  budget: Number(arg("--budget-ms", "2000")),
  minRuns: Number(arg("--min-runs", "10")),
  maxRuns: Number(arg("--max-runs", "100")),
  extraWarmup: Number(arg("--extra-warmup", "2")),
  keep: Number(arg("--keep", "1.25")),
};
const require = createRequire(path.join(path.resolve(arg("--ort", "bench")), "package.json"));
const ort = require("onnxruntime-node");
const manifest = JSON.parse(fs.readFileSync(arg("--manifest", "bench/out/fit/manifest.json"), "utf8"));
fs.mkdirSync(opts.out, { recursive: true });
fs.rmSync(path.join(opts.out, "pairs.txt"), { force: true });
for (const entry of manifest.models) await profile(ort, entry, opts);
