"""examples/pytorch/moe.py's transformer with its MoE layer written as
gpt-fast writes one: each token's top-2 experts' weights are gathered by
index (`w1[expert_indices]`, an ONNX Gather of the stacked weights) and
contracted with the token, with no dispatch tensor and no capacity (no
token is dropped).

usage: python3 examples/pytorch/moe_gather.py OUT.onnx [--fold]
       python3 examples/pytorch/moe_gather.py inputs DIR
       python3 examples/pytorch/moe_gather.py compare DIR LOG NPZ [NAME...]

(the commands of moe.py). The experts are SwiGLU feed-forwards, as in
Mixtral and gpt-fast: w1 and w3 [E, ff, d], w2 [E, d, ff], stacked over
the E = 4 experts; the two chosen experts' outputs are weighted by their
gates renormalised to sum to 1. No auxiliary load-balancing loss.
examples/plans/moe_gather_expert_parallel.json splits the batch over all
four devices of data=2 x expert=2 and the experts over "expert";
test/shardc/onnx-moe-gather.test runs it. The gather needs every expert's
weights on every device, so that plan all-gathers them (docs/onnx.md).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import moe
from moe import DIM, EXPERTS

# Wider experts than moe.py's (FF 32): with a device's two experts at
# 128 KB a weight, moving the weights takes longer than moving the tokens
# (docs/onnx.md).
FF = 1024


class GatherMoE(nn.Module):
    """Top-2 experts, their weights gathered per token (gpt-fast's
    ConditionalFeedForward)."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(DIM, EXPERTS, bias=False)
        self.w1 = nn.Parameter(torch.randn(EXPERTS, FF, DIM) / DIM ** 0.5)
        self.w2 = nn.Parameter(torch.randn(EXPERTS, DIM, FF) / FF ** 0.5)
        self.w3 = nn.Parameter(torch.randn(EXPERTS, FF, DIM) / DIM ** 0.5)

    def forward(self, x):
        b, t, d = x.shape
        x = x.reshape(-1, d)
        gates, experts = torch.topk(F.softmax(self.gate(x), dim=-1), 2, dim=-1)
        gates = gates / gates.sum(-1, keepdim=True)
        # [T, 2, ff, d]: each token's two experts' weights.
        h = F.silu(torch.einsum("ti,taoi->tao", x, self.w1[experts]))
        h = h * torch.einsum("ti,taoi->tao", x, self.w3[experts])
        out = torch.einsum("tao,taio->tai", h, self.w2[experts])
        return torch.einsum("tai,ta->ti", out, gates).reshape(b, t, d)


if __name__ == "__main__":
    moe.main(GatherMoE)
