#!/usr/bin/python3
"""gen_torch_corpus.py - the broad PyTorch corpus of the fidelity bench (bench/fidelity.py): every
image classifier Debian's torchvision 0.14 builds (its builder functions, enumerated), its semantic
segmentation models and torch.nn.TransformerEncoder/Decoder variants, exported in eval mode, batch 1,
static shapes, opset 17, constants folded, random weights (weights=None; torch.manual_seed of the
name's CRC-32, so one model exported alone is the same):

  tv_<builder>    a classifier on 1x3x64x64 (ViTs built with image_size=64; inception_v3 at 1x3x96x96,
                  the smallest its stem takes; maxvit_t at 1x3x224x224, its partitions need it;
                  alexnet at 1x3x224x224, torch exports its adaptive pool only to a divisor of
                  the map's size)
  seg_<builder>   fcn_*, deeplabv3_*, lraspp_* on 1x3x64x64 (aux_loss off, no backbone weights),
                  the "out" map only
  nn_<variant>    torch.nn.TransformerEncoder / TransformerDecoder / Transformer, d 128, 4 heads,
                  2 layers, 32 positions (post- and pre-norm, ReLU and GELU, with causal masks)

Classifiers of over 100 M parameters are left out (SKIPPED, with their size): their exports take
minutes and 0.4 to 2.5 GB each on the 2 shared cores, and add no operator the others lack.

  /usr/bin/python3 bench/gen_torch_corpus.py OUT_DIR [NAME...]

A model OUT_DIR already holds is not exported again; a builder that fails to export is named on
stderr and skipped (exit 0 still). Needs Debian's python3-torch and python3-torchvision; exit 2
without them.
"""
import inspect
import os
import sys
import warnings
import zlib

# Builders left out, with their parameter count (millions).
SKIPPED = {"vgg11": 133, "vgg11_bn": 133, "vgg13": 133, "vgg13_bn": 133, "vgg16": 138, "vgg16_bn": 138,
           "vgg19": 144, "vgg19_bn": 144, "vit_l_16": 304, "vit_l_32": 306, "vit_h_14": 632,
           "regnet_y_32gf": 145, "regnet_y_128gf": 645, "regnet_x_32gf": 108, "wide_resnet101_2": 127,
           "efficientnet_v2_l": 118, "convnext_large": 198}

# Input side per builder where 64 does not work.
SIDE = {"inception_v3": 96, "maxvit_t": 224, "alexnet": 224}


def classifiers(models):
    """The image-classifier builders of torchvision.models (functions taking `weights`), sorted."""
    return sorted(n for n, f in vars(models).items()
                  if inspect.isfunction(f) and "weights" in inspect.signature(f).parameters)


def transformers(torch):
    """{name: (module, inputs)} of the torch.nn transformer variants."""
    nn, d, h, ff, t = torch.nn, 128, 4, 256, 32
    causal = nn.Transformer.generate_square_subsequent_mask(t)

    def enc(**kw):
        return nn.TransformerEncoder(nn.TransformerEncoderLayer(d, h, ff, batch_first=True, **kw), 2,
                                     enable_nested_tensor=False)

    def dec(**kw):
        return nn.TransformerDecoder(nn.TransformerDecoderLayer(d, h, ff, batch_first=True, **kw), 2)

    class Masked(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *x):
            return self.inner(*x, causal)

    x, mem = torch.randn(1, t, d), torch.randn(1, t, d)
    return {"nn_encoder_relu_post": lambda: (enc(), (x,)),
            "nn_encoder_gelu_pre": lambda: (enc(activation="gelu", norm_first=True), (x,)),
            "nn_encoder_causal": lambda: (Masked(enc()), (x,)),
            "nn_decoder_post": lambda: (dec(), (x, mem)),
            "nn_decoder_gelu_pre": lambda: (dec(activation="gelu", norm_first=True), (x, mem)),
            "nn_transformer": lambda: (nn.Transformer(d, h, 2, 2, ff, batch_first=True), (x, mem))}


def builders(torch, tv):
    """{name: thunk returning (module, inputs)} of every model this script exports."""
    res = {}
    for b in classifiers(tv.models):
        if b in SKIPPED:
            continue
        side = SIDE.get(b, 64)
        kw = {"image_size": side} if b.startswith("vit_") else {}
        res["tv_" + b] = lambda b=b, side=side, kw=kw: (getattr(tv.models, b)(weights=None, **kw),
                                                        (torch.randn(1, 3, side, side),))

    class Out(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)["out"]

    seg = tv.models.segmentation
    for b in sorted(n for n, f in vars(seg).items() if inspect.isfunction(f) and "weights" in
                    inspect.signature(f).parameters):
        res["seg_" + b] = lambda b=b: (Out(getattr(seg, b)(weights=None, weights_backbone=None)),
                                       (torch.randn(1, 3, 64, 64),))
    res.update(transformers(torch))
    return res


def export(torch, name, make, path):
    torch.manual_seed(zlib.crc32(name.encode()))
    model, x = make()
    model.eval()
    # not under torch.no_grad(): there nn.MultiheadAttention takes its fused fast path, which has
    # no ONNX export
    torch.onnx.export(model, x, path + ".tmp", opset_version=17, do_constant_folding=True)
    os.replace(path + ".tmp", path)


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    try:
        import torch
        import torchvision
    except ImportError as e:
        sys.stderr.write(f"gen_torch_corpus: {e} (apt-get install python3-torch python3-torchvision)\n")
        return 2
    warnings.filterwarnings("ignore")
    out, only = sys.argv[1], set(sys.argv[2:])
    os.makedirs(out, exist_ok=True)
    for name, make in builders(torch, torchvision).items():
        path = os.path.join(out, name + ".onnx")
        if (only and name not in only) or os.path.exists(path):
            continue
        try:
            export(torch, name, make, path)
            print(path, flush=True)
        except Exception as e:  # noqa: BLE001 - name the model and go on with the others
            sys.stderr.write(f"gen_torch_corpus: {name}: {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}\n")
            if os.path.exists(path + ".tmp"):
                os.remove(path + ".tmp")
    return 0


if __name__ == "__main__":
    sys.exit(main())
