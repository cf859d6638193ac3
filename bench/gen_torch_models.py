#!/usr/bin/python3
"""gen_torch_models.py - models exported from PyTorch for the fidelity bench (bench/fidelity.py), in
eval mode, batch 1, static shapes, opset 17, constants folded, random weights
(torch.manual_seed of the model's index in NAMES):

  pt_vit_b_16            torchvision's ViT-B/16 (nn.MultiheadAttention, LayerNorm, GELU)
  pt_bert_encoder        a BERT-like nn.TransformerEncoder: 2 layers, d 256, 4 heads, GELU
  pt_mobilenet_v3_small  torchvision's MobileNetV3-Small (HardSwish, HardSigmoid, SE blocks)
  pt_llama_decoder       a Llama-style decoder, 2 layers: RMSNorm (torch.rsqrt), rotary
                         embeddings (rotate-half), grouped-query attention (8 heads, 2 KV heads,
                         repeat_interleave), SwiGLU MLP

and these torchvision image classifiers on a 1x3x224x224 input:

  pt_resnet18            basic residual blocks (Conv, BN, ReLU, Add, MaxPool, global AveragePool)
  pt_resnet50            bottleneck residual blocks
  pt_densenet121         dense blocks (Concat of every earlier layer's output, BN-ReLU-Conv order)
  pt_mobilenet_v2        inverted residuals, depthwise Conv, ReLU6 (Clip)
  pt_mnasnet1_0          inverted residuals, depthwise 3x3 and 5x5 Conv
  pt_efficientnet_b0     MBConv with SiLU (Sigmoid, Mul) and squeeze-excitation
  pt_shufflenet_v2_x1_0  channel split (Split), channel shuffle (Reshape, Transpose), Concat
  pt_regnet_y_400mf      grouped Conv, squeeze-excitation
  pt_convnext_tiny       depthwise 7x7 Conv, channels-last LayerNorm and Linear (Transposes), GELU
  pt_swin_t              Swin-T: shifted windows (Roll as Slice/Concat), window attention, LayerNorm

  /usr/bin/python3 bench/gen_torch_models.py [--dynamic-batch | --batch N] OUT_DIR [NAME ...]
  /usr/bin/python3 bench/gen_torch_models.py --held-out OUT_DIR [NAME ...]

--held-out writes instead torchvision classifiers in no corpus of the bench (HELD_OUT, as
OUT_DIR/ho_<name>.onnx, 1x3x224x224, seeded 100 + the index in HELD_OUT), to check the runtime
calibration on networks nobody tuned it on: bench/runtime_calibration.py --out DIR --doc COPY -o
TABLE.md OUT_DIR/*.onnx (docs/benchmarks.md, "Runtime calibration: reuse by distinct bytes, the
last level's loss measured (stop 72)"); about 20 s, 0.75 GB (ViT-B/32 0.35 GB).

--dynamic-batch exports with the first axis of every input and output named "batch" (for
bench/ort_memory.py, which binds it to 1 and 8); --batch N exports static shapes with every input's
first axis N instead of 1 (the same weights); NAMEs restrict the export to those models.

A model whose file OUT_DIR already holds is not exported again (delete it to redo it). All
fourteen: 70 to 95 s on 2 cores, 2.2 GB of memory at most, 0.8 GB in OUT_DIR (ViT-B/16 0.35 GB;
resnet50, convnext_tiny and swin_t 0.1 GB each). Needs Debian's python3-torch and
python3-torchvision; exit 2 without them.
"""
import math
import os
import sys
import warnings


def llama(torch, layers=2):
    nn = torch.nn

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w

    class Block(nn.Module):
        def __init__(self, d=256, heads=8, kv=2, ffn=512):
            super().__init__()
            self.h, self.kv, self.dh = heads, kv, d // heads
            self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
            self.q = nn.Linear(d, d, bias=False)
            self.k = nn.Linear(d, kv * self.dh, bias=False)
            self.v = nn.Linear(d, kv * self.dh, bias=False)
            self.o = nn.Linear(d, d, bias=False)
            self.gate = nn.Linear(d, ffn, bias=False)
            self.up = nn.Linear(d, ffn, bias=False)
            self.down = nn.Linear(ffn, d, bias=False)

        def rope(self, x, cos, sin):
            half = self.dh // 2
            return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin

        def forward(self, x, cos, sin):
            b, t, d = x.shape
            y = self.n1(x)
            q = self.q(y).view(b, t, self.h, self.dh).transpose(1, 2)
            k = self.k(y).view(b, t, self.kv, self.dh).transpose(1, 2)
            v = self.v(y).view(b, t, self.kv, self.dh).transpose(1, 2)
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
            k = k.repeat_interleave(self.h // self.kv, 1)
            v = v.repeat_interleave(self.h // self.kv, 1)
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dh), -1) @ v
            x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
            y = self.n2(x)
            return x + self.down(nn.functional.silu(self.gate(y)) * self.up(y))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Block() for _ in range(layers)])

        def forward(self, x, cos, sin):
            for layer in self.layers:
                x = layer(x, cos, sin)
            return x

    return Decoder(), (torch.randn(1, 64, 256), torch.randn(1, 1, 64, 32), torch.randn(1, 1, 64, 32))


# torchvision's image classifiers exported on a 1x3x224x224 input, each as pt_<name>.
VISION = ("resnet18", "resnet50", "densenet121", "mobilenet_v2", "mnasnet1_0", "efficientnet_b0",
          "shufflenet_v2_x1_0", "regnet_y_400mf", "convnext_tiny", "swin_t")

# Every model this script writes (OUT_DIR/<name>.onnx), for bench/fidelity.py to see which are missing.
NAMES = ("pt_vit_b_16", "pt_bert_encoder", "pt_mobilenet_v3_small", "pt_llama_decoder") + \
    tuple("pt_" + v for v in VISION)


# Classifiers of torchvision in no corpus of the bench (--held-out).
HELD_OUT = ("mobilenet_v3_large", "googlenet", "regnet_x_400mf", "squeezenet1_1", "shufflenet_v2_x0_5",
            "efficientnet_b1", "densenet169", "resnet34", "vit_b_32", "mnasnet0_5", "resnext50_32x4d")


def held_out(torch, torchvision):
    """{name: make} of the --held-out models, make() giving (module, input)."""
    def make(v):
        kw = {"aux_logits": False, "init_weights": True} if v == "googlenet" else {}
        return getattr(torchvision.models, v)(**kw), torch.randn(1, 3, 224, 224)
    return {"ho_" + v: lambda v=v: make(v) for v in HELD_OUT}


def main():
    args = sys.argv[1:]
    dynamic, held = "--dynamic-batch" in args, "--held-out" in args
    args = [a for a in args if a not in ("--dynamic-batch", "--held-out")]
    known = tuple("ho_" + v for v in HELD_OUT) if held else NAMES
    batch = 1
    if args[:1] == ["--batch"] and len(args) > 1 and args[1].isdigit() and int(args[1]) > 0 and not dynamic:
        batch, args = int(args[1]), args[2:]
    if not args or args[0].startswith("-") or any(n not in known for n in args[1:]) or (held and (dynamic or batch > 1)):
        sys.stderr.write(__doc__)
        return 2
    try:
        import torch
        import torchvision
    except ImportError as e:
        sys.stderr.write(f"gen_torch_models: {e} (apt-get install python3-torch python3-torchvision)\n")
        return 2
    warnings.filterwarnings("ignore")
    out, only = args[0], set(args[1:]) or set(known)
    os.makedirs(out, exist_ok=True)
    models = {"pt_vit_b_16": lambda: (torchvision.models.vit_b_16(), torch.randn(1, 3, 224, 224)),
              "pt_bert_encoder": lambda: (torch.nn.TransformerEncoder(
                  torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True, activation="gelu"), 2,
                  enable_nested_tensor=False), torch.randn(1, 128, 256)),
              "pt_mobilenet_v3_small": lambda: (torchvision.models.mobilenet_v3_small(), torch.randn(1, 3, 224, 224)),
              "pt_llama_decoder": lambda: llama(torch)}
    for v in VISION:
        models["pt_" + v] = lambda v=v: (getattr(torchvision.models, v)(), torch.randn(1, 3, 224, 224))
    assert tuple(models) == NAMES
    if held:
        models = held_out(torch, torchvision)
    for name, make in models.items():
        path = os.path.join(out, name + ".onnx")
        if os.path.exists(path) or name not in only:
            continue
        # each model seeded by itself, so one exported alone (the others present) is the same
        torch.manual_seed(100 + known.index(name) if held else NAMES.index(name))
        model, x = make()
        model.eval()
        xs = tuple(t.repeat(batch, *[1] * (t.dim() - 1)) for t in (x if isinstance(x, tuple) else (x,)))
        x = xs if isinstance(x, tuple) else xs[0]
        names = [f"input{i}" for i in range(len(xs))] if dynamic else None
        axes = {n: {0: "batch"} for n in names + ["output"]} if dynamic else None
        torch.onnx.export(model, x, path + ".tmp", opset_version=17, do_constant_folding=True, input_names=names,
                          output_names=["output"] if dynamic else None, dynamic_axes=axes)
        os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
