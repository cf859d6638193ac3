#!/usr/bin/python3
"""Peer timing for bench/run.sh: onnx.load + onnx.shape_inference.infer_shapes (Debian python3-onnx).

  /usr/bin/python3 bench/peer_onnx.py MODEL.onnx

Prints one JSON line: load_ms (onnx.load, external data included), infer_ms, total_ms and the
node count, measured in-process with time.perf_counter (interpreter start-up and `import onnx`
excluded). Peak RSS is measured from outside (/usr/bin/time).
"""
import json
import sys
import time

import onnx
from onnx import shape_inference


def main():
    path = sys.argv[1]
    t0 = time.perf_counter()
    model = onnx.load(path)
    t1 = time.perf_counter()
    inferred = shape_inference.infer_shapes(model)
    t2 = time.perf_counter()
    print(json.dumps({"load_ms": (t1 - t0) * 1e3, "infer_ms": (t2 - t1) * 1e3, "total_ms": (t2 - t0) * 1e3,
                      "nodes": len(inferred.graph.node)}))


if __name__ == "__main__":
    main()
