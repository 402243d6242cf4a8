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
the E = 8 experts (ff = 4096); the two chosen experts' outputs are
weighted by their gates renormalised to sum to 1. No auxiliary load-balancing loss.
examples/plans/moe_gather_expert_parallel.json splits the batch over all
four devices of data=2 x expert=2 and the experts over "expert";
test/shardc/onnx-moe-gather.test runs it. Each device gathers only its
own experts' rows (zeros for the others) and the products with the
tokens are linear in them, so the plan moves tokens and partial products,
not the weights (docs/onnx.md).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import moe
from moe import DIM

# More and wider experts than moe.py's (4 of FF 32), Mixtral's top-2 of 8:
# a device's four experts' weights then outweigh the tokens it exchanges
# for them (docs/onnx.md).
EXPERTS, FF = 8, 4096


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
