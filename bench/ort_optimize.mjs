// ort_optimize.mjs - save ONNX Runtime's optimized model (CPU EP, graph optimization level
// "extended", or --level basic|extended|all) for each model given, so bench/fusion_vs_ort.py can
// count what ORT really fused.
//
//   node bench/ort_optimize.mjs --ort DIR_WITH_node_modules --out OUTDIR [--level L] MODEL.onnx...
//
// A session is only created (no inference): ORT optimizes at session creation and writes the
// result to optimizedModelFilePath. Models ORT rejects are reported on stderr and skipped.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { arg } from "./ort_util.mjs";

const ortDir = arg("--ort", path.join(path.dirname(new URL(import.meta.url).pathname)));
const outDir = arg("--out", "/tmp/ort-opt");
const level = arg("--level", "extended");
const require = createRequire(path.join(ortDir, "package.json"));
const ort = require("onnxruntime-node");
fs.mkdirSync(outDir, { recursive: true });

const models = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--"));
let ok = 0;
for (const m of models) {
  const key = m.replace(/[^A-Za-z0-9._-]+/g, "_");
  const out = path.join(outDir, key);
  try {
    const s = await ort.InferenceSession.create(m, {
      executionProviders: ["cpu"],
      graphOptimizationLevel: level,
      intraOpNumThreads: 1,
      optimizedModelFilePath: out,
    });
    await s.release?.();
    console.log(`${m}\t${out}`);
    ok++;
  } catch (e) {
    console.error(`${m}\tERROR\t${String(e.message || e).split("\n")[0]}`);
  }
}
console.error(`optimized ${ok} of ${models.length}`);
