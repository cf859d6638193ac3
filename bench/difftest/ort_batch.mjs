// ort_batch.mjs - ONNX Runtime's optimized graph of many models at several levels in one process
// (the differential test, bench/difftest/difftest.py): for each model in the list file and each
// level, a CPU session is created (no inference) with optimizedModelFilePath OUT/LEVEL/NAME.
//
//   node bench/difftest/ort_batch.mjs --ort DIR_WITH_node_modules --out OUT --levels basic,extended,all LIST
//
// LIST holds one absolute model path a line. Prints "MODEL<TAB>LEVEL<TAB>SAVED" per success and
// "MODEL<TAB>LEVEL<TAB>ERROR<TAB>message" per model ORT rejects.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { arg } from "../ort_util.mjs";

const ortDir = arg("--ort", path.join(path.dirname(new URL(import.meta.url).pathname), ".."));
const outDir = arg("--out", "/tmp/ort-difftest");
const levels = arg("--levels", "basic,extended,all").split(",");
const list = process.argv[process.argv.length - 1];
const require = createRequire(path.join(ortDir, "package.json"));
const ort = require("onnxruntime-node");
ort.env.logLevel = "fatal";

const models = fs.readFileSync(list, "utf8").split("\n").filter((l) => l);
const lines = [];
for (const level of levels) fs.mkdirSync(path.join(outDir, level), { recursive: true });
for (const m of models) {
  for (const level of levels) {
    const out = path.join(outDir, level, path.basename(m));
    try {
      const s = await ort.InferenceSession.create(m, {
        executionProviders: ["cpu"],
        graphOptimizationLevel: level,
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        logSeverityLevel: 4,
        optimizedModelFilePath: out,
      });
      await s.release?.();
      lines.push(`${m}\t${level}\t${out}`);
    } catch (e) {
      lines.push(`${m}\t${level}\tERROR\t${String(e.message || e).split("\n")[0]}`);
    }
  }
}
process.stdout.write(lines.join("\n") + "\n");
