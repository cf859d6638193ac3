// ort_samples.mjs - loads each model with onnxruntime-node (CPU) and runs it once, each symbolic
// input dim bound by --dim NAME=N (others 1), floats filled deterministically, integers 0 (token
// ids, masks of 1 where the name says mask); prints one line per model with its output shapes, and
// exits 1 when a model does not load or run.
//
//   node bench/ort_samples.mjs --ort bench [--dim NAME=N]... /abs/model.onnx...
import { createRequire } from "module";
import path from "path";
import { arg, fill } from "./ort_util.mjs";

const require = createRequire(import.meta.url);
const ort = require(path.resolve(arg("--ort", "bench"), "node_modules/onnxruntime-node"));

const dims = {};
const models = [];
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === "--dim") {
    const [k, v] = process.argv[++i].split("=");
    dims[k] = Number(v);
  } else if (a === "--ort") {
    i++;
  } else {
    models.push(a);
  }
}

// The tensor fed to input `meta` (name, type, shape) of a session.
function feed(meta, seed) {
  const shape = meta.shape.map((d) => (typeof d === "number" && d >= 0 ? d : (dims[d] ?? 1)));
  const n = shape.reduce((a, b) => a * b, 1);
  if (meta.type === "float32") return new ort.Tensor("float32", fill(n, seed), shape);
  const one = meta.name.includes("mask") ? 1 : 0;
  if (meta.type === "int64") return new ort.Tensor("int64", BigInt64Array.from({ length: n }, () => BigInt(one)), shape);
  if (meta.type === "int32") return new ort.Tensor("int32", Int32Array.from({ length: n }, () => one), shape);
  throw new Error(`input ${meta.name}: type ${meta.type} not fed`);
}

let failed = false;
for (const m of models) {
  try {
    const s = await ort.InferenceSession.create(m);
    const feeds = {};
    s.inputMetadata.forEach((meta, i) => (feeds[meta.name] = feed(meta, i + 1)));
    const out = await s.run(feeds);
    const shapes = Object.entries(out).map(([k, v]) => `${k} ${v.dims.join("x")}`);
    console.log(`${path.basename(m)}: ran: ${shapes.join(", ")}`);
  } catch (e) {
    console.log(`${path.basename(m)}: FAILED: ${e.message.split("\n")[0]}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
