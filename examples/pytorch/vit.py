"""A small ViT as timm writes its stem, exported to ONNX for shardc.

usage: python3 examples/pytorch/vit.py OUT.onnx [--fold]
       python3 examples/pytorch/vit.py inputs DIR
       python3 examples/pytorch/vit.py compare DIR LOG NPZ [NAME...]

The patch embedding is nn.Conv2d with kernel = stride (shardc reads its
columns as a reshape: an image split by rows needs no halo), then a class
token and learned positions; beside it a 1-D convolution with stride,
padding, dilation and groups and a depthwise 3x3 (read as im2col slices),
a LayerNorm and a linear head. Seeded weights, batch 4 of 3x8x8 images, 10
classes, opset 17. `inputs` writes the batch as .npy; `compare` checks
shardc's losses (LOG) and saved parameters (NPZ; all, or those NAMEd)
against three steps of torch.optim.SGD at lr 0.5.
examples/plans/vit_data_model.json splits the batch over "data" and the
patch embedding's output channels over "model";
test/shardc/onnx-conv.test runs it.
"""
import re
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

B, C, HW, P, D, CLASSES = 4, 3, 8, 4, 16, 10


class ViT(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Conv2d(C, D, kernel_size=P, stride=P)
        self.cls_token = nn.Parameter(torch.randn(1, 1, D) * 0.1)
        self.pos_embed = nn.Parameter(torch.randn(1, (HW // P) ** 2 + 1, D) * 0.1)
        # Overlapping windows: stride, padding, dilation and groups.
        self.mix = nn.Conv1d(D, D, kernel_size=3, stride=2, padding=2,
                             dilation=2, groups=2)
        self.depthwise = nn.Conv2d(C, C, kernel_size=3, padding=1, groups=C,
                                   bias=False)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, images, labels):
        x = self.patch_embed(images + self.depthwise(images))
        x = x.flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = x + self.pos_embed
        x = x + F.gelu(self.mix(x.transpose(1, 2))).mean(-1)[:, None, :]
        return F.cross_entropy(self.head(self.norm(x[:, 0])), labels)


def model():
    torch.manual_seed(0)
    return ViT()


def batch():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(B, C, HW, HW, generator=g),
            torch.randint(0, CLASSES, (B,), generator=g))


def rel_err(got, want):
    return float(np.abs(got - want).max() / np.abs(want).max())


if sys.argv[1] == "inputs":
    images, labels = batch()
    np.save(f"{sys.argv[2]}/images.npy", images.numpy())
    np.save(f"{sys.argv[2]}/labels.npy", labels.numpy())
elif sys.argv[1] == "compare":
    m = model()
    opt = torch.optim.SGD(m.parameters(), lr=0.5)
    want = []
    for _ in range(3):
        opt.zero_grad()
        loss = m(*batch())
        loss.backward()
        opt.step()
        want.append(loss.item())
    got = [float(v) for v in re.findall(r"step \d+/\d+ loss ([0-9.eE+-]+)",
                                        open(sys.argv[3]).read())]
    saved = np.load(sys.argv[4])
    params = dict(m.named_parameters())
    names = sys.argv[5:] or list(params)
    loss_err = rel_err(np.array(got), np.array(want))
    param_err = max(rel_err(saved[n], params[n].detach().numpy()) for n in names)
    ok = loss_err <= 1e-5 and param_err <= 1e-5
    print(f"{len(got)} losses and {len(names)} parameters "
          f"{'equal' if ok else 'DIFFER FROM'} torch's (losses {loss_err:.2g}, "
          f"parameters {param_err:.2g})")
else:
    torch.onnx.export(model(), batch(), sys.argv[1],
                      input_names=["images", "labels"], opset_version=17,
                      do_constant_folding="--fold" in sys.argv[2:])
