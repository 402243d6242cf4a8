"""A tiny causal decoder whose buffers are float tensors, exported to ONNX.

usage: python3 examples/pytorch/buffers.py OUT.onnx [--fold]

torch.onnx.export writes registered buffers as initializers, as it writes
parameters; shardc must not train them (docs/onnx.md#buffers). The model
has three float buffers:

  causal  an additive causal mask (0 on and below the diagonal, -inf
          above), added to the attention scores: a gradient reaches it,
          so only the user can say it is a buffer (--buffers causal);
  pe      a sinusoidal positional-encoding table added to the embeddings:
          likewise (--buffers pe);
  tril    nanoGPT's float lower-triangular mask, used only through
          `tril == 0` as masked_fill's condition: no gradient reaches it,
          and shardc finds it is a buffer by itself.

Seeded weights, batch 4 x 8 tokens, vocabulary 32, opset 17. Without
--fold (do_constant_folding=False) every initializer keeps its state_dict
name. The tests (test/shardc/onnx-buffers.test, python/tests/test_onnx.py)
import this module.
"""
import math
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


class Decoder(nn.Module):
    def __init__(self, vocab=32, d=16, seq=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        self.register_buffer(
            "causal", torch.full((seq, seq), float("-inf")).triu(1))
        self.register_buffer("tril", torch.tril(torch.ones(seq, seq)))
        pos = torch.arange(seq).unsqueeze(1)
        freq = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(seq, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
        self.register_buffer("pe", pe)

    def forward(self, idx, targets):
        B, T = idx.shape
        x = self.tok(idx) + self.pe[:T]
        q, k, v = self.q(x), self.k(x), self.v(x)
        att = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
        att = att + self.causal[:T, :T]
        att = att.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        x = self.ln(x + F.softmax(att, dim=-1) @ v)
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               targets.view(-1))


def example_batch(vocab=32, batch=4, seq=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, vocab, (batch, seq), generator=g),
            torch.randint(0, vocab, (batch, seq), generator=g))


def export(model, path, fold=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, example_batch(), path,
                          input_names=["idx", "targets"], opset_version=17,
                          do_constant_folding=fold)


def main():
    torch.manual_seed(0)
    export(Decoder(), sys.argv[1], fold="--fold" in sys.argv[2:])


if __name__ == "__main__":
    main()
