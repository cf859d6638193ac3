// ort_profile.mjs - regenerate the ONNX Runtime profiles under tests/data/profiles/ort/.
//
// Runs each sample model with onnxruntime-node (CPU execution provider, one intra-op thread,
// profiling on) at graph optimization levels 'disabled' and 'extended': one warm-up run and
// RUNS measured runs on deterministic inputs (batch 1). ORT writes its profile (a JSON array
// of trace events) when the session ends; it is copied unchanged to
// tests/data/profiles/ort/<model>.<level>.json.
//
// onnxruntime-node is not a dependency of fuseplan: install it outside the repository, e.g.
//   mkdir -p /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node
//   node /path/to/fuseplan/bench/ort_profile.mjs --ort /tmp/ort
// (without --ort it is looked up from bench/, whose node_modules/ git ignores).
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arg, fill } from "./ort_util.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "..");
const OUT = path.join(ROOT, "tests", "data", "profiles", "ort");
const RUNS = 2; // measured runs after the warm-up run

// model file -> symbolic dimension values used to build the inputs
const MODELS = {
  "eps_story.onnx": { batch: 1 },
  "resnet_tiny.onnx": { batch: 1 },
  "transformer_block.onnx": { batch: 1, seq: 8 },
  "if_subgraph.onnx": { batch: 1 },
};
const LEVELS = ["disabled", "extended"];

function feeds(ort, session, dims) {
  const out = {};
  session.inputNames.forEach((name, k) => {
    const meta = session.inputMetadata ? session.inputMetadata[k] : undefined;
    const shape = (meta && meta.shape ? meta.shape : []).map((d) => (typeof d === "number" ? d : dims[d] ?? 1));
    const type = meta && meta.type ? meta.type : "float32";
    const n = shape.reduce((x, y) => x * y, 1);
    if (type === "bool")
      out[name] = new ort.Tensor("bool", new Uint8Array(n).fill(1), shape);
    else
      out[name] = new ort.Tensor("float32", fill(n, 7 + k), shape);
  });
  return out;
}

async function profile(ort, model, level, dims) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "fp-ort-"));
  const prefix = path.join(work, "ort");
  const session = await ort.InferenceSession.create(path.join(ROOT, "models", model), {
    executionProviders: ["cpu"],
    graphOptimizationLevel: level,
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
    enableProfiling: true,
    profileFilePrefix: prefix,
  });
  const inputs = feeds(ort, session, dims);
  for (let r = 0; r < 1 + RUNS; r++)
    await session.run(inputs);
  session.endProfiling();
  await session.release();
  const made = fs.readdirSync(work).filter((f) => f.endsWith(".json"));
  if (made.length !== 1)
    throw new Error(`${model} ${level}: expected one profile in ${work}, found ${made.length}`);
  const dest = path.join(OUT, `${path.basename(model, ".onnx")}.${level}.json`);
  fs.copyFileSync(path.join(work, made[0]), dest);
  fs.rmSync(work, { recursive: true });
  const events = JSON.parse(fs.readFileSync(dest, "utf8"));
  const kernels = events.filter((e) => e.cat === "Node" && e.name.endsWith("_kernel_time")).length;
  console.log(`${path.relative(ROOT, dest)}: ${events.length} events, ${kernels} kernel events`);
}

const ortDir = path.resolve(arg("--ort", HERE)); // a folder whose node_modules holds onnxruntime-node
const require = createRequire(path.join(ortDir, "package.json"));
const ort = require("onnxruntime-node");
fs.mkdirSync(OUT, { recursive: true });
for (const [model, dims] of Object.entries(MODELS))
  for (const level of LEVELS)
    await profile(ort, model, level, dims);
