#!/usr/bin/python3
"""train_replay.py - fuseplan's recompute plan replayed in PyTorch: each recomputed segment of
`fuseplan train MODEL --batch B --budget P -f json` checkpointed with torch.utils.checkpoint on the
torch module the export came from, and the saved bytes of the step measured against the plan's.

  /usr/bin/python3 bench/train_replay.py --fuseplan build/fuseplan [--out bench/out/train] \\
      [--doc docs/benchmarks.md] [--budget 50%] [models...]

Per network (random weights, seed 0, model.train(), CPU, float32; bench/train_memory.py's export):
  sequence  the module as a list of items run one after the other: nn.Sequential containers
            flattened, a block without its residual (use_res_connect false) opened into its body,
            a ResNet block and ViT's layers cut at their residual adds; each item ends at an ONNX
            node (the last whose name is under the item's module scope, as torch.onnx names nodes
            after module paths, or a node named outright)
  plan      `train MODEL --batch B --budget P --autograd 1.13 --no-headroom -f json`: recompute.recomputed, each
            segment's `from` and `to` tensors; a segment runs from the item after the one that makes
            `from` (the first item when null) to the item that makes `to` (the last when null); a
            tensor no item ends at is a boundary the sequence cannot express, and the network is
            reported so, not replayed
  PyTorch   one forward and backward (the loss: the output's sum, which saves nothing), each
            segment run as torch.utils.checkpoint.checkpoint(..., use_reentrant=False). Measured:
            the most saved bytes live at once over the step, storages once, parameters and buffers
            left out. Live saved bytes are (1) the tensors autograd saves outside checkpoints
            (saved_tensors_hooks; each held until autograd frees the saved variable), (2) each live
            checkpoint's inputs (the tensors it keeps to run again) and (3) the tensors its
            recomputation saved for backward (checkpoint's own storage). Counted after every save
            and after every recomputation; the live set only grows there.
The table (diff = measured / predicted - 1; the goal: measured <= budget and within +-5% of the
prediction) is written to --doc between <!-- train-replay:begin --> and <!-- train-replay:end -->
and to OUT/train_replay.json. Exit status 0, 2 when torch or fuseplan is missing.
"""
import datetime
import json
import os
import subprocess
import sys
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from train_memory import KWARGS, export, finish, run_all, start, storage_of  # noqa: E402

BEGIN, END = "<!-- train-replay:begin -->", "<!-- train-replay:end -->"
TITLE = "## Training: the recompute plan replayed in PyTorch"
# network: image size, batch (small: the bench runs on 2 shared cores)
NETWORKS = {"resnet18": (64, 4), "resnet50": (64, 4), "mobilenet_v2": (64, 4), "efficientnet_b0": (64, 4),
            "vit_b_16": (112, 2), "llama_decoder": (256, 2), "llama_decoder_32": (256, 2)}
# budgets per network (the others: 50%)
BUDGETS = {"llama_decoder": ("30%", "50%", "70%"), "llama_decoder_32": ("30%", "50%", "70%")}
# the PyTorch release measured: the machine's Debian torch (its mean(dim) keeps its input)
AUTOGRAD = ("--autograd", "1.13")


class Item:
    """One step of the sequence: fn(x) -> y, ending at the ONNX node named `end` or, with a trailing
    slash, at the last node under that scope."""

    def __init__(self, label, fn, end):
        self.label, self.fn, self.end = label, fn, end


def scope(path):
    """The ONNX scope torch.onnx gives the module at dotted path: a child of a container named after
    its parent (layer1/layer1.0), any other after its attribute (layer1.0/conv1)."""
    out, prev = [], ""
    for part in path.split("."):
        prev = f"{prev}.{part}" if part.isdigit() and prev else part
        out.append(prev)
    return "/" + "/".join(out) + "/"


def module_items(torch, module, path):
    """The module as items: Sequentials flattened, a block without its residual opened."""
    nn = torch.nn
    if isinstance(module, nn.Sequential):
        return [it for name, child in module.named_children()
                for it in module_items(torch, child, f"{path}.{name}" if path else name)]
    if hasattr(module, "conv1") and hasattr(module, "downsample"):
        return residual_items(module, path)
    body = getattr(module, "conv", None) or getattr(module, "block", None)
    if getattr(module, "use_res_connect", True) is False and isinstance(body, nn.Sequential):
        return module_items(torch, body, f"{path}.{'conv' if hasattr(module, 'conv') else 'block'}")
    return [Item(path, module, scope(path))]


def residual_items(block, path):
    """A torchvision ResNet block (BasicBlock, Bottleneck) cut at its residual add: the body and the
    add, then the last ReLU."""
    convs = [getattr(block, f"conv{i}") for i in (1, 2, 3) if hasattr(block, f"conv{i}")]
    norms = [getattr(block, f"bn{i}") for i in (1, 2, 3) if hasattr(block, f"bn{i}")]

    def body(x):
        y = x
        for i, (conv, norm) in enumerate(zip(convs, norms)):
            y = norm(conv(y))
            y = block.relu(y) if i + 1 < len(convs) else y
        y += block.downsample(x) if block.downsample is not None else x
        return y
    return [Item(f"{path}.add", body, scope(path) + "Add"), Item(f"{path}.relu", block.relu, scope(path))]


def cnn_items(torch, model, name):
    """A torchvision CNN as its forward runs it: the feature modules, the pooling, flatten, the head."""
    nn = torch.nn
    if name.startswith("resnet"):
        body = [(n, c) for n, c in model.named_children() if n != "fc"]
        head = [Item("flatten", lambda x: torch.flatten(x, 1), "/Flatten"), *module_items(torch, model.fc, "fc")]
    else:
        body = [("features", model.features)]
        pool = (Item("avgpool", model.avgpool, "/avgpool/") if hasattr(model, "avgpool") else
                Item("pool", lambda x: nn.functional.adaptive_avg_pool2d(x, (1, 1)), "/GlobalAveragePool"))
        head = [pool, Item("flatten", lambda x: torch.flatten(x, 1), "/Flatten"),
                *module_items(torch, model.classifier, "classifier")]
    return [it for n, c in body for it in module_items(torch, c, n)] + head


def vit_items(torch, model):
    """torchvision's VisionTransformer: the patch embedding with the class token, position embedding
    and dropout; each encoder layer as its attention half and its MLP half; the final norm; the head."""
    enc = model.encoder

    def stem(x):
        x = model._process_input(x)
        x = torch.cat([model.class_token.expand(x.shape[0], -1, -1), x], dim=1)
        return enc.dropout(x + enc.pos_embedding)

    def attention(layer):
        def run(x):
            y = layer.ln_1(x)
            y, _ = layer.self_attention(y, y, y, need_weights=False)
            return x + layer.dropout(y)
        return run

    def mlp(layer):
        return lambda x: x + layer.mlp(layer.ln_2(x))

    items = [Item("stem", stem, "/encoder/dropout/Dropout")]
    for name, layer in enc.layers.named_children():
        items += [Item(f"{name}.attention", attention(layer), f"/encoder/layers/{name}/Add"),
                  Item(f"{name}.mlp", mlp(layer), f"/encoder/layers/{name}/Add_1")]
    return items + [Item("ln", enc.ln, "/encoder/ln/"),
                    Item("heads", lambda x: model.heads(x[:, 0]), "/heads/")]


class Box:
    """A tensor autograd saved outside any checkpoint; it lives as long as the saved variable."""

    def __init__(self, t):
        self.t = t


class Monitor:
    """The saved bytes live over one step and their peak (module docstring: what counts)."""

    def __init__(self, torch, model):
        self.torch = torch
        self.skip = {storage_of(p)[0] for p in model.parameters()} | {storage_of(b)[0] for b in model.buffers()}
        self.boxes, self.checkpoints, self.peak = weakref.WeakSet(), [], 0

    def pack(self, t):
        box = Box(t)
        self.boxes.add(box)
        self.sample()
        return box

    def live(self):
        seen = {}

        def add(t):
            if isinstance(t, self.torch.Tensor):
                ptr, nbytes = storage_of(t)
                if ptr not in self.skip:
                    seen[ptr] = max(seen.get(ptr, 0), nbytes)
        for box in list(self.boxes):
            add(box.t)
        for ref in self.checkpoints:
            unpack = ref()
            if unpack is None:
                continue
            cells = dict(zip(unpack.__code__.co_freevars, unpack.__closure__))
            for t in list(cells["storage"].cell_contents.values()) + list(cells["args"].cell_contents):
                add(t)
        return sum(seen.values())

    def sample(self):
        self.peak = max(self.peak, self.live())

    def hooks_class(self, original):
        """torch.autograd.graph.saved_tensors_hooks as checkpoint calls it, which also registers each
        checkpoint's unpack function (its closure holds the checkpoint's inputs and storage) and
        counts after its first save and after its recomputation."""
        monitor = self

        class Hooks(original):
            def __init__(self, pack, unpack):
                if unpack.__qualname__ == "_checkpoint_without_reentrant.<locals>.unpack":
                    monitor.checkpoints.append(weakref.ref(unpack))

                    def counted_pack(x):
                        r = pack(x)
                        monitor.sample()
                        return r

                    def counted_unpack(x):
                        r = unpack(x)
                        monitor.sample()
                        return r
                    super().__init__(counted_pack, counted_unpack)
                else:
                    super().__init__(pack, unpack)
        return Hooks


def segment_items(model_path, items, recomputed):
    """The recomputed segments as half-open item ranges [a, b), or None and the first boundary no
    item ends at."""
    import onnx
    nodes = onnx.load(model_path, load_external_data=False).graph.node
    made = {}
    for k, it in enumerate(items):
        hits = [n for n in nodes if n.name == it.end or (it.end.endswith("/") and n.name.startswith(it.end))]
        if not hits:
            return None, f"no ONNX node for item {it.label} ({it.end})"
        made[hits[-1].output[0]] = k
    inputs = {i.name for i in onnx.load(model_path, load_external_data=False).graph.input}
    ranges = []
    for seg in recomputed:
        ends = []
        for name, default in ((seg["from"], -1), (seg["to"], len(items) - 1)):
            if name is None or name in inputs:
                ends.append(default if name is None else -1)
            elif name in made:
                ends.append(made[name])
            else:
                return None, f"boundary {name} inside an item"
        if ends[1] > ends[0]:
            ranges.append((ends[0] + 1, ends[1] + 1))
    return ranges, None


def run_planned(torch, items, ranges, x):
    """The forward through items, each range run under torch.utils.checkpoint (non-reentrant)."""
    from torch.utils.checkpoint import checkpoint
    starts = {a: b for a, b in ranges}
    k = 0
    while k < len(items):
        if k in starts:
            seg = items[k:starts[k]]

            def run(y, seg=seg):
                for it in seg:
                    y = it.fn(y)
                return y
            x = checkpoint(run, x, use_reentrant=False)
            k = starts[k]
        else:
            x = items[k].fn(x)
            k += 1
    return x


def measure_step(torch, model, items, ranges, x, loss):
    """The peak saved bytes of one forward and backward with the plan's checkpoints, and the bytes
    live at the end of forward."""
    import torch.autograd.graph as graph
    monitor = Monitor(torch, model)
    original = graph.saved_tensors_hooks
    graph.saved_tensors_hooks = monitor.hooks_class(original)
    try:
        with original(monitor.pack, lambda box: box.t):
            out = loss(run_planned(torch, items, ranges, x))
        monitor.sample()
        end = monitor.live()
        out.backward()
    finally:
        graph.saved_tensors_hooks = original
    return monitor.peak, end


def decoder_items(torch, dec, labels, vocab):
    """bench/train_decoder.py's decoder trained on a full sequence, as its WithLoss runs it: the
    embedding with the rotary tables and the mask (kept aside for the layers), each layer's attention
    half and MLP half, the final norm, lm_head, the cross-entropy."""
    ctx = {}

    def stem(ids):
        x, ctx["cos"], ctx["sin"], ctx["mask"] = dec.prepare(ids, torch.ones_like(ids))
        return x

    def attend(layer):
        return lambda x: layer.attend(x, ctx["cos"], ctx["sin"], ctx["mask"], None)[0]

    items = [Item("stem", stem, "/embed/Gather")]
    for n, layer in enumerate(dec.layers):
        items += [Item(f"layers.{n}.attention", attend(layer), f"/layers.{n}/Add_3"),
                  Item(f"layers.{n}.mlp", layer.mlp, f"/layers.{n}/Add_4")]
    loss = torch.nn.functional.cross_entropy
    return items + [Item("norm", dec.norm, "/norm/"), Item("lm_head", dec.lm_head, "/lm_head/"),
                    Item("loss", lambda y: loss(y.float().view(-1, vocab), labels.view(-1)), "/Cast_4")]


def decoder_network(torch, out, batch, seq, layers):
    """(model, items, input, loss, export path, extra fuseplan options) for the decoder of `layers`
    layers at seq."""
    import train_decoder
    Decoder, _ = train_decoder.build(torch, layers)
    dec = Decoder()
    dec.train()
    path = os.path.join(out, "llama_kv_decoder.onnx" if layers == train_decoder.LAYERS else
                        f"llama_kv_decoder_{layers}.onnx")
    train_decoder.export(torch, dec, path)
    ids = torch.randint(0, train_decoder.VOCAB, (batch, seq))
    labels = torch.randint(0, train_decoder.VOCAB, (batch, seq))
    items = decoder_items(torch, dec, labels, train_decoder.VOCAB)
    return dec, items, ids, lambda y: y, path, ["--seq", str(seq)]


def plan_of(exe, path, batch, budget, *extra):
    """`train PATH --batch B --budget P --autograd 1.13 EXTRA... --no-headroom -f json`: (training,
    recompute), or an error."""
    r = subprocess.run([exe, "train", path, "--batch", str(batch), "--budget", budget, *AUTOGRAD, *extra,
                        "--no-headroom", "-f", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
    d = json.loads(r.stdout)
    return (d["training"], d["recompute"]), None


def network(torch, torchvision, name, a):
    """(model, items, input, loss, export path, extra fuseplan options) for one network: the
    torchvision model, exported once into --out at its image size with a symbolic batch."""
    size, batch = NETWORKS[name]
    torch.manual_seed(0)
    if name.startswith("llama_decoder"):
        return decoder_network(torch, a.out, batch, size, 32 if name.endswith("_32") else 2)
    kwargs = dict(KWARGS.get(name, {}), **({"image_size": size} if name.startswith("vit") else {}))
    model = getattr(torchvision.models, name)(**kwargs)
    model.train()
    path = os.path.join(a.out, f"{name}_{size}.onnx")
    export(torch, model, torch.randn(1, 3, size, size), path)
    items = vit_items(torch, model) if name.startswith("vit") else cnn_items(torch, model, name)
    return model, items, torch.randn(batch, 3, size, size), lambda y: y.sum(), path, []


def run_network(torch, torchvision, name, a):
    """One row per budget of the network (--budget, else BUDGETS', else 50%)."""
    made = network(torch, torchvision, name, a)
    budgets = (a.budget,) if a.budget else BUDGETS.get(name, ("50%",))
    return [run_budget(torch, name, made, budget, a) for budget in budgets]


def run_budget(torch, name, made, budget, a):
    """The plan at `budget` for the network `made` (network's tuple), replayed: its table row."""
    model, items, x, loss, path, extra = made
    batch = x.shape[0]
    row = {"network": name, "batch": batch, "size": NETWORKS[name][0], "budget": budget, "error": None}
    got, err = plan_of(a.fuseplan, path, batch, budget, *extra)
    if err:
        row["error"] = err
        return row
    training, rc = got
    row.update(unplanned=training["saved_activation_bytes"], budget_bytes=rc["budget_bytes"],
               predicted=rc["saved_activation_bytes"], predicted_end=rc["end_of_forward_bytes"],
               segments=len(rc["recomputed"]))
    if not rc["feasible"]:
        row["error"] = "no plan fits the budget"
        return row
    ranges, err = segment_items(path, items, rc["recomputed"])
    if err:
        row["error"] = err
        return row
    row["checkpointed"] = [f"{items[p].label}..{items[q - 1].label}" for p, q in ranges]
    row["measured"], row["measured_end"] = measure_step(torch, model, items, ranges, x, loss)
    row["diff_pct"] = 100.0 * (row["measured"] / row["predicted"] - 1.0)
    return row


def table(rows):
    out = [f"Measured {datetime.date.today().isoformat()} by `make bench` (bench/train_replay.py): float32, CPU, "
           "random weights, `train MODEL --batch B --budget P --autograd 1.13` on the export (TrainingMode.PRESERVE, "
           "opset 17) and "
           "each of its recomputed segments run in PyTorch 1.13 as `torch.utils.checkpoint(..., "
           "use_reentrant=False)` on the module the export came from. Predicted: the plan's "
           "saved_activation_bytes (the most saved bytes live at once over the step); measured: the same over "
           "one forward and backward (what autograd saves outside checkpoints, each live checkpoint's inputs "
           "and the tensors its recomputation saved; storages once, parameters and buffers left out). "
           "docs/training.md, \"Replayed in PyTorch\".", "",
           "| network | image / seq | batch | unplanned | budget | predicted | measured | diff | <= budget | "
           "end of forward (predicted / measured) | checkpointed |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        head = f"| {r['network']} | {r['size']} | {r['batch']} | "
        if r.get("measured") is None:
            out.append(head + f"{r.get('unplanned', 0):,} | {r['budget']} | {r.get('predicted', 0):,} | not "
                       f"replayed: {r['error']} | | | | |")
            continue
        ok = r["measured"] <= r["budget_bytes"]
        out.append(head + f"{r['unplanned']:,} | {r['budget']} = {r['budget_bytes']:,} | {r['predicted']:,} | "
                   f"{r['measured']:,} | {r['diff_pct']:+.2f}% | {'yes' if ok else 'no'} | "
                   f"{r['predicted_end']:,} / {r['measured_end']:,} | {len(r['checkpointed'])}: "
                   f"{', '.join(r['checkpointed'])} |")
    return "\n".join(out)


def main():
    got = start("train_replay", ["torch", "torchvision", "onnx"],
                (["--budget"], {"default": None, "help": "for every network (default 50%%, the decoder 30%%, 50%% "
                                                         "and 70%%)"}),
                (["models"], {"nargs": "*"}))
    if not got:
        return 2
    a, (torch, torchvision, _) = got
    os.makedirs(a.out, exist_ok=True)
    runs = run_all("train_replay", a.models or list(NETWORKS), lambda name: run_network(torch, torchvision, name, a),
                   lambda rs: "; ".join(f"{r['budget']}: predicted {r.get('predicted')} measured {r.get('measured')} "
                                        f"{r.get('diff_pct', float('nan')):+.2f}% {r['error'] or ''}" for r in rs))
    rows = [r for rs in runs for r in rs]
    finish(a, rows, "train_replay.json", (TITLE, BEGIN, END, table(rows)))
    return 0


if __name__ == "__main__":
    import warnings
    warnings.filterwarnings("ignore")
    sys.exit(main())
