"""nn.TransformerEncoderLayer in PyTorch, exported to ONNX for shardc.

usage: python3 examples/pytorch/encoder.py OUT.onnx [--fold] [--norm-first]
                                           [--layers N] [--causal]

Writes a seeded layer (d_model 16, 2 heads, feed-forward 32, no dropout,
batch_first, input "x" of 4 x 8 x 16) with torch.onnx.export at opset 17.
Without --fold the export keeps every weight's state_dict name
(`self_attn.in_proj_weight`), which examples/plans/encoder_megatron.json
shards; with --fold (torch's default, do_constant_folding=True) the
transposed weights become `onnx::MatMul_N` and
examples/plans/encoder_megatron_folded.json names activations instead.
--norm-first exports the pre-LN layer (norm_first=True); --layers N an
nn.TransformerEncoder of N such layers; --causal passes a second input,
"mask" [8, 8], as the attention mask (src_mask).
"""
import sys

import torch
import torch.nn as nn


def layer(norm_first):
    return nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True,
                                      norm_first=norm_first)


def example_input(seed=1):
    return torch.randn(4, 8, 16, generator=torch.Generator().manual_seed(seed))


class Masked(nn.Module):
    """The encoder with its attention mask as an input."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, x, mask):
        return self.encoder(x, mask)


def causal_mask(length=8):
    return torch.triu(torch.full((length, length), float("-inf")), 1)


def export(model, args, path, names, fold):
    model.eval()
    torch.onnx.export(model, args, path, input_names=names, opset_version=17,
                      do_constant_folding=fold)


def main():
    torch.manual_seed(0)
    flags = sys.argv[2:]
    model = layer("--norm-first" in flags)
    if "--layers" in flags:
        count = int(flags[flags.index("--layers") + 1])
        model = nn.TransformerEncoder(model, count, enable_nested_tensor=False)
    args, names = (example_input(),), ["x"]
    if "--causal" in flags:
        model = Masked(model)
        args, names = (example_input(), causal_mask()), ["x", "mask"]
    export(model, args, sys.argv[1], names, fold="--fold" in flags)


if __name__ == "__main__":
    main()
