"""A GPT-style decoder in PyTorch, exported to ONNX for shardc.

usage: python3 examples/pytorch/gpt.py OUT.onnx [--fold]

Writes the model (seeded weights, batch 4 x 8 tokens, vocabulary 64) with
torch.onnx.export at opset 17. Without --fold the export keeps the
state_dict names of every weight (`blocks.0.q.weight`), which
examples/plans/gpt_megatron.json shards; with --fold (torch's default,
do_constant_folding=True) the transposed weights become `onnx::MatMul_N`
and examples/plans/gpt_megatron_folded.json names activations instead.
The tests (python/tests/test_onnx.py) import this module.
"""
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """Pre-LN block: causal attention (separate q, k, v projections, so
    that Megatron's column split keeps each head on one device) and a GELU
    MLP."""

    def __init__(self, d, heads, seq):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.proj = nn.Linear(d, d)
        self.fc, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads
        mask = torch.ones(seq, seq, dtype=torch.bool).tril()
        self.register_buffer("mask", mask.view(1, 1, seq, seq))

    def forward(self, x):
        B, T, C = x.shape
        h = self.ln1(x)

        def heads(t):
            return t.view(B, T, self.heads, C // self.heads).transpose(1, 2)

        q, k, v = heads(self.q(h)), heads(self.k(h)), heads(self.v(h))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.heads)
        att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous()
        x = x + self.proj(y.view(B, T, C))
        return x + self.down(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=64, d=16, heads=2, seq=8, layers=2):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads, seq) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets):
        B, T = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(T))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               targets.view(-1))


def example_batch(vocab=64, batch=4, seq=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, vocab, (batch, seq), generator=g),
            torch.randint(0, vocab, (batch, seq), generator=g))


def export(model, args, path, names, fold):
    torch.onnx.export(model, args, path, input_names=names, opset_version=17,
                      do_constant_folding=fold)


def main():
    torch.manual_seed(0)
    export(GPT(), example_batch(), sys.argv[1], ["idx", "targets"],
           fold="--fold" in sys.argv[2:])


if __name__ == "__main__":
    main()
