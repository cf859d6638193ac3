// peer_ort.mjs - peer timing for bench/run.sh: ONNX Runtime session creation (onnxruntime-node,
// CPU execution provider, graph optimization level 'extended', one thread).
//
//   node bench/peer_ort.mjs MODEL.onnx [--ort DIR]
//
// Prints one JSON line: create_ms, the time InferenceSession.create takes in-process (model
// load, graph optimizations, kernel selection; node start-up and the module load excluded).
// onnxruntime-node is looked up from DIR (default: bench/, whose node_modules/ git ignores);
// bench/run.sh installs it there with `npm install --ignore-scripts onnxruntime-node`.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arg } from "./ort_util.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));

const model = process.argv[2];
const require = createRequire(path.join(path.resolve(arg("--ort", HERE)), "package.json"));
const ort = require("onnxruntime-node");
const t0 = performance.now();
const session = await ort.InferenceSession.create(model, {
  executionProviders: ["cpu"],
  graphOptimizationLevel: "extended",
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
});
const createMs = performance.now() - t0;
await session.release();
console.log(JSON.stringify({ create_ms: createMs }));
