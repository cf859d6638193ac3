#!/usr/bin/python3
"""Generate the bundled sample models that come from PyTorch's exporter itself (deterministic: fixed
seed, fixed names), as a user's export writes them.

Run with Debian's python3 (python3-torch, python3-torchvision):  /usr/bin/python3 models/gen_torch_samples.py
The files are committed; this script is how they were made (torch 1.13, torchvision 0.14 on Debian 12).

  vit_tiny.onnx   torchvision's VisionTransformer (2 layers, 2 heads, width 32, 8x8 patches of a 32x32
                  image, 10 classes) exported at opset 17 with a dynamic batch: the class token's
                  Expand through Where(Equal(shape, -1)), nn.MultiheadAttention's Shape/Gather/Slice
                  arithmetic on the batch, LayerNormalization, erf-form GELU. ONNX Runtime keeps those
                  shape computations (their dims are symbolic in the file); every size is still known
                  once the input is bound.
"""
import os

import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


def vit_tiny():
    torch.manual_seed(0)
    m = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                             hidden_dim=32, mlp_dim=64, num_classes=10).eval()
    x = torch.randn(1, 3, 32, 32)
    torch.onnx.export(m, x, os.path.join(HERE, "vit_tiny.onnx"), opset_version=17, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})


if __name__ == "__main__":
    vit_tiny()
