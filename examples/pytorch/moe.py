"""A small transformer with a top-2 Mixture-of-Experts layer, as GShard and
Mixtral write one, exported to ONNX for shardc.

usage: python3 examples/pytorch/moe.py OUT.onnx [--fold]
       python3 examples/pytorch/moe.py inputs DIR
       python3 examples/pytorch/moe.py compare DIR LOG NPZ [NAME...]

One causal self-attention block, then an MoE feed-forward layer: a linear
router, softmax, top-2 (torch.topk), and four experts whose weights are
stacked, w1 [E, d, ff] and w2 [E, ff, d]. Tokens reach the experts by
GShard's dense dispatch: each batch row is a group of S tokens; a token's
first and second choices take the next free slot of their expert's
capacity C = ceil(capacity_factor * 2 * S / E) slots (Switch Transformer's
capacity factor; first choices are placed before second ones, in token
order, as GShard does), and a token past its expert's capacity is dropped
by that expert (its residual carries it). The slots are a one-hot dispatch
tensor [G, S, E, C] (one_hot of cumsum positions); einsums move the tokens
into [E, G, C, d], through the experts, and back, weighted by the two
gates renormalised to sum to 1. No auxiliary load-balancing loss. The
gradient reaches the router through TopK's values only (its indices, the
cumsums and one-hots are integers and constants of the routing).

Seeded weights, batch 4 x 8 tokens, vocabulary 32, opset 17. `inputs`
writes the batch as .npy and torch's state_dict as .npz; `compare` checks
shardc's losses (LOG) and saved parameters (NPZ; all, or those NAMEd)
against three steps of torch.optim.SGD at lr 0.5.
examples/plans/moe_expert_parallel.json splits the batch over all four
devices of data=2 x expert=2 and the experts over "expert";
test/shardc/onnx-moe.test runs it.
"""
import math
import re
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, DIM, HEADS, FF, EXPERTS, BATCH, SEQ = 32, 16, 2, 32, 4, 4, 8
CAPACITY_FACTOR = 1.0
# Slots per expert in a group of SEQ tokens, each routed to 2 experts.
CAPACITY = math.ceil(CAPACITY_FACTOR * 2 * SEQ / EXPERTS)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(DIM, DIM, bias=False)
        self.k = nn.Linear(DIM, DIM, bias=False)
        self.v = nn.Linear(DIM, DIM, bias=False)
        self.o = nn.Linear(DIM, DIM, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        hd = DIM // HEADS
        q, k, v = (p(x).view(b, t, HEADS, hd).transpose(1, 2)
                   for p in (self.q, self.k, self.v))
        mask = torch.full((t, t), float("-inf")).triu(1)
        y = F.softmax(q @ k.transpose(2, 3) / hd ** 0.5 + mask, dim=-1) @ v
        return self.o(y.transpose(1, 2).reshape(b, t, DIM))


class MoE(nn.Module):
    """Top-2 experts with GShard's dense dispatch, groups = batch rows."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(DIM, EXPERTS, bias=False)
        self.w1 = nn.Parameter(torch.randn(EXPERTS, DIM, FF) / DIM ** 0.5)
        self.w2 = nn.Parameter(torch.randn(EXPERTS, FF, DIM) / FF ** 0.5)

    def forward(self, x):
        probs = F.softmax(self.gate(x), dim=-1)
        gates, choice = torch.topk(probs, 2, dim=-1)
        gates = gates / gates.sum(-1, keepdim=True)
        mask1 = F.one_hot(choice[..., 0], EXPERTS).float()
        mask2 = F.one_hot(choice[..., 1], EXPERTS).float()
        # Each token's slot in its expert: first choices in token order,
        # then second choices after all first ones.
        pos1 = torch.cumsum(mask1, dim=1) - 1
        pos2 = torch.cumsum(mask2, dim=1) - 1 + mask1.sum(1, keepdim=True)
        mask1 = mask1 * (pos1 < CAPACITY).float()
        mask2 = mask2 * (pos2 < CAPACITY).float()
        slot1 = F.one_hot((pos1 * mask1).sum(-1).long(), CAPACITY).float()
        slot2 = F.one_hot((pos2 * mask2).sum(-1).long(), CAPACITY).float()
        # [G, S, E, C]
        dispatch1 = mask1[..., None] * slot1[..., None, :]
        dispatch2 = mask2[..., None] * slot2[..., None, :]
        combine = (gates[..., 0, None, None] * dispatch1 +
                   gates[..., 1, None, None] * dispatch2)
        dispatch = dispatch1 + dispatch2
        tokens = torch.einsum("gsec,gsd->egcd", dispatch, x)
        h = F.relu(torch.einsum("egcd,edf->egcf", tokens, self.w1))
        out = torch.einsum("egcf,efd->egcd", h, self.w2)
        return torch.einsum("gsec,egcd->gsd", combine, out)


class Transformer(nn.Module):
    def __init__(self, moe_layer):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.attn_norm = nn.LayerNorm(DIM)
        self.attn = Attention()
        self.moe_norm = nn.LayerNorm(DIM)
        self.moe = moe_layer()
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens, targets):
        h = self.embed(tokens)
        h = h + self.attn(self.attn_norm(h))
        h = h + self.moe(self.moe_norm(h))
        logits = self.head(self.norm(h))
        return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))


def model(moe_layer=MoE):
    torch.manual_seed(0)
    return Transformer(moe_layer)


def batch():
    g = torch.Generator().manual_seed(1)
    return (torch.randint(0, VOCAB, (BATCH, SEQ), generator=g),
            torch.randint(0, VOCAB, (BATCH, SEQ), generator=g))


def rel_err(got, want):
    return float(np.abs(got - want).max() / np.abs(want).max())


def main(moe_layer=MoE):
    """The command line above, for a transformer whose MoE layer is
    `moe_layer` (examples/pytorch/moe_gather.py passes its own)."""
    if sys.argv[1] == "inputs":
        tokens, targets = batch()
        np.save(f"{sys.argv[2]}/tokens.npy", tokens.numpy())
        np.save(f"{sys.argv[2]}/targets.npy", targets.numpy())
        np.savez(f"{sys.argv[2]}/state_dict.npz",
                 **{k: v.numpy()
                    for k, v in model(moe_layer).state_dict().items()})
    elif sys.argv[1] == "compare":
        m = model(moe_layer)
        opt = torch.optim.SGD(m.parameters(), lr=0.5)
        want = []
        for _ in range(3):
            opt.zero_grad()
            loss = m(*batch())
            loss.backward()
            opt.step()
            want.append(loss.item())
        # Under mpirun the progress is one line of bars.
        got = [float(v) for v in re.findall(
            r"step \d+/\d+ loss ([0-9.eE+-]+)", open(sys.argv[3]).read())]
        saved = np.load(sys.argv[4])
        params = dict(m.named_parameters())
        names = sys.argv[5:] or list(params)
        loss_err = rel_err(np.array(got), np.array(want))
        param_err = max(rel_err(saved[n], params[n].detach().numpy())
                        for n in names)
        ok = len(got) == 3 and loss_err <= 1e-5 and param_err <= 1e-5
        print(f"{len(got)} losses and {len(names)} parameters "
              f"{'equal' if ok else 'DIFFER FROM'} torch's "
              f"(losses {loss_err:.2g}, parameters {param_err:.2g})")
    else:
        torch.onnx.export(model(moe_layer), batch(), sys.argv[1],
                          input_names=["tokens", "targets"], opset_version=17,
                          do_constant_folding="--fold" in sys.argv[2:])


if __name__ == "__main__":
    main()
