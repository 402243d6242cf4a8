"""A Llama-style decoder as Meta's reference code writes it, exported to
ONNX for shardc.

usage: python3 examples/pytorch/llama.py OUT.onnx [--fold]

RMSNorm, rotary position embeddings (the cos/sin tables registered once per
layer, applied by rotating halves), grouped-query attention (4 query heads
sharing 2 key/value heads, repeated by expand and reshape as Meta's
repeat_kv does), a SwiGLU MLP, no biases, and Meta's causal mask built in
the forward pass: `torch.full((T, T), -inf).triu(1)`, which torch exports
as a Trilu node. Seeded weights, batch 4 x 8 tokens, vocabulary 64, opset
17. Without --fold (do_constant_folding=False) every weight keeps its
state_dict name, which examples/plans/llama_megatron.json shards; the RoPE
tables are buffers, declared with `--buffers 'layers.*.attn.cos,
layers.*.attn.sin'` (docs/onnx.md#buffers). The test
(test/shardc/onnx-llama.test) imports this module.
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, dim, heads, kv_heads, seq):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.wq = nn.Linear(dim, heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(heads * self.head_dim, dim, bias=False)
        inv = 1.0 / (10000.0 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(seq).float(), inv)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())

    def forward(self, x, mask):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.heads, self.head_dim)
        k = self.wk(x).view(b, t, self.kv_heads, self.head_dim)
        v = self.wv(x).view(b, t, self.kv_heads, self.head_dim)
        cos, sin = self.cos[:t, None, :], self.sin[:t, None, :]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        k = k[:, :, :, None, :].expand(b, t, self.kv_heads, rep, self.head_dim)
        v = v[:, :, :, None, :].expand(b, t, self.kv_heads, rep, self.head_dim)
        k = k.reshape(b, t, self.heads, self.head_dim)
        v = v.reshape(b, t, self.heads, self.head_dim)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        scores = q @ k.transpose(2, 3) / self.head_dim ** 0.5 + mask
        y = F.softmax(scores.float(), dim=-1) @ v
        return self.wo(y.transpose(1, 2).reshape(b, t, -1))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim, heads, kv_heads, seq):
        super().__init__()
        self.attn = Attention(dim, heads, kv_heads, seq)
        self.ffn = FeedForward(dim, 4 * dim)
        self.attn_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)

    def forward(self, x, mask):
        h = x + self.attn(self.attn_norm(x), mask)
        return h + self.ffn(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, vocab=64, dim=32, heads=4, kv_heads=2, seq=8, layers=2):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim, heads, kv_heads, seq)
                                    for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens, targets):
        t = tokens.shape[1]
        # Meta's mask: -inf above the diagonal.
        mask = torch.full((t, t), float("-inf")).triu(1)
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, mask)
        logits = self.output(self.norm(h))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def example_batch(vocab=64, batch=4, seq=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, vocab, (batch, seq), generator=g),
            torch.randint(0, vocab, (batch, seq), generator=g))


def model():
    torch.manual_seed(0)
    return Llama()


def main():
    torch.onnx.export(model(), example_batch(), sys.argv[1],
                      input_names=["tokens", "targets"], opset_version=17,
                      do_constant_folding="--fold" in sys.argv[2:])


if __name__ == "__main__":
    main()
