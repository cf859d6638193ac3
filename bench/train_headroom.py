#!/usr/bin/python3
"""train_headroom.py - ResNet-50 training steps on 32 GiB and 64 GiB devices at fp32 and AMP: the
largest batch without a recompute plan, with the plan at a budget and with the most recomputation,
and what holds the memory at the peak (fuseplan train, its training headroom).

  /usr/bin/python3 bench/train_headroom.py --fuseplan build/fuseplan [--doc docs/benchmarks.md] \\
      [--model MODEL.onnx] [--budget 50%]

The model: --model (with a symbolic batch), by default OUT/resnet50.onnx, as
bench/train_memory.py exports it (training mode: BatchNormalization kept, a symbolic batch). Per
capacity and precision, `train MODEL --memory CAP --precision P --budget B -f json` (Adam)
(10% reserve); then `train` again at each answer's batch for the parts of its peak. Written to --doc
between <!-- train-headroom:begin --> and <!-- train-headroom:end -->. Exit status 0, 2 when torch or
fuseplan is missing.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import write_section  # noqa: E402
from train_memory import export, start  # noqa: E402

BEGIN, END = "<!-- train-headroom:begin -->", "<!-- train-headroom:end -->"
TITLE = "## Training headroom: ResNet-50 on 32 GiB and 64 GiB devices"
GIB = 1 << 30


def train(exe, model, *args):
    r = subprocess.run([exe, "train", model, *args, "-f", "json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def parts(t):
    """What holds the memory at the peak: the model state and the saved activations, in MB."""
    mb = lambda b: f"{b / 1e6:,.0f} MB"  # noqa: E731
    state = t["parameter_bytes"] + t["gradient_bytes"] + t["optimizer_bytes"] + t["amp_cache_bytes"]
    return (f"peak {t['peak_bytes'] / GIB:.1f} GiB at {t['peak_phase']}: saved {mb(t['saved_activation_bytes'])}, "
            f"params+grads+adam{'+fp16 weights' if t['amp_cache_bytes'] else ''} {mb(state)}")


def row(exe, model, cap, precision, budget):
    base = ["--memory", f"{cap}GiB", "--precision", precision]
    h = train(exe, model, *base, "--budget", budget)["headroom"]
    if h is None:
        sys.exit(f"train_headroom: {model}: no headroom searched (the model needs a symbolic batch)")
    cells = [f"{cap} GiB", precision, str(h["max_batch"]), str(h["max_batch_with_plan"]),
             str(h["max_batch_most_recompute"])]
    plain = train(exe, model, *base, "--batch", str(h["max_batch"]), "--no-headroom")["training"]
    planned = train(exe, model, *base, "--batch", str(h["max_batch_with_plan"]), "--budget", budget, "--no-headroom")
    rc, t = planned["recompute"], planned["training"]
    held = t["peak_bytes"] - t["saved_activation_bytes"] + rc["saved_activation_bytes"]
    cells += [parts(plain), f"saved {rc['saved_activation_bytes'] / 1e6:,.0f} MB under the plan "
              f"({rc['segments']} segments, +{rc['recompute_flops'] / 1e12:.2f} TFLOP), step about "
              f"{held / GIB:.1f} GiB"]
    return "| " + " | ".join(cells) + " |"


def main():
    got = start("train_headroom", ["torch", "torchvision"], (["--model"], {"default": None}),
                (["--budget"], {"default": "50%"}))
    if not got:
        return 2
    a, (torch, torchvision) = got
    model = a.model
    if not model:
        os.makedirs(a.out, exist_ok=True)
        model = os.path.join(a.out, "resnet50.onnx")
        torch.manual_seed(0)
        net = torchvision.models.resnet50()
        net.train()
        export(torch, net, torch.randn(1, 3, 224, 224), model)
    lines = [f"`/usr/bin/python3 bench/train_headroom.py` (`make bench`): `fuseplan train` on ResNet-50 exported in "
             f"training mode ({os.path.basename(model)}, 224x224, float32 weights), Adam, 10% of the device reserved, "
             f"budget {a.budget} of the saved activations at each batch. Largest batch: without a plan, with the plan "
             "at the budget, with the most recomputation (the least budget any plan fits); then the step at those "
             "batches: what holds the peak.", "",
             "| device | precision | max batch, no plan | with the plan | most recomputation | at the largest "
             "batch without a plan | at the largest batch with the plan |", "|---|---|---|---|---|---|---|"]
    for cap in (32, 64):
        for precision in ("fp32", "amp-fp16"):
            lines.append(row(a.fuseplan, model, cap, precision, a.budget))
            sys.stderr.write(lines[-1] + "\n")
    if a.doc:
        write_section(a.doc, TITLE, BEGIN, END, "\n".join(lines))
    return 0


if __name__ == "__main__":
    import warnings
    warnings.filterwarnings("ignore")
    sys.exit(main())
