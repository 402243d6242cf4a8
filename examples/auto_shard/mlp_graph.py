#!/usr/bin/env python3
"""Writes an L-layer ReLU MLP with a mean-squared-error loss as a shardc JSON
graph, unannotated or laid out by hand, for auto-sharding
(docs/auto-sharding.md): the rediscovery tests and bench/auto_shard_bench.py
compare `--auto-shard` on the unannotated graph with the hand-written layouts
of the same model under the same cost model.

  mlp_graph.py --layers 4 --batch 8 --hidden 1024 --mesh model=4
  mlp_graph.py --layers 4 --batch 8 --hidden 1024 --mesh model=4 --layout megatron

Layouts (on the first mesh axis, or as named below):
  none      only the loss is annotated (a scalar, replicated)
  dp        data parallel: x, y split by rows, weights replicated
  fsdp      data parallel with every weight split by rows (ZeRO-3)
  megatron  tensor parallel: even layers split by columns, odd by rows
  2d        (two axes, data x model) dp over the first, megatron over the
            second
"""

import argparse
import json
import sys


def parse_mesh(text):
    axes = []
    for part in text.split(","):
        name, size = part.split("=")
        axes.append([name, int(size)])
    return axes


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--mesh", default="model=4")
    p.add_argument("--layout", default="none",
                   choices=["none", "dp", "fsdp", "megatron", "2d"])
    p.add_argument("--forward", action="store_true",
                   help="no loss: the output is the last layer's activation")
    args = p.parse_args()

    axes = parse_mesh(args.mesh)
    first = axes[0][0]
    second = axes[1][0] if len(axes) > 1 else None
    if args.layout == "2d" and second is None:
        sys.exit("mlp_graph.py: --layout 2d needs two mesh axes")
    b, d = args.batch, args.hidden

    def weight_sharding(i):
        if args.layout == "dp":
            return [None, None]
        if args.layout == "fsdp":
            return [first, None]
        if args.layout == "megatron":
            return [None, first] if i % 2 == 0 else [first, None]
        if args.layout == "2d":
            return [None, second] if i % 2 == 0 else [second, None]
        return None

    def data_sharding():
        if args.layout in ("dp", "fsdp", "2d"):
            return [first, None]
        if args.layout == "megatron":
            return [None, None]
        return None

    inputs = [{"name": "x", "shape": [b, d], "dtype": "f32"}]
    if not args.forward:
        inputs.append({"name": "y", "shape": [b, d], "dtype": "f32"})
    for i in range(args.layers):
        inputs.append({"name": "w%d" % i, "shape": [d, d], "dtype": "f32",
                       "param": True})
    for t in inputs:
        s = data_sharding() if t["name"] in ("x", "y") else weight_sharding(
            int(t["name"][1:]))
        if s is not None:
            t["sharding"] = s

    ops = []
    cur = "x"
    for i in range(args.layers):
        ops.append({"op": "matmul", "inputs": [cur, "w%d" % i],
                    "output": "h%d" % i})
        cur = "h%d" % i
        if i + 1 < args.layers:
            ops.append({"op": "relu", "inputs": [cur], "output": "a%d" % i})
            cur = "a%d" % i
    if args.forward:
        outputs = [{"name": cur}]
    else:
        ops += [
            {"op": "sub", "inputs": [cur, "y"], "output": "err"},
            {"op": "mul", "inputs": ["err", "err"], "output": "sq"},
            {"op": "reduce_sum", "inputs": ["sq"], "dims": [0, 1],
             "output": "sse"},
            {"op": "constant", "output": "inv_n", "shape": [], "dtype": "f32",
             "value": 1.0 / (b * d)},
            {"op": "mul", "inputs": ["sse", "inv_n"], "output": "loss"},
        ]
        outputs = [{"name": "loss", "sharding": []}]
    graph = {"mesh": {"name": "mesh", "axes": axes}, "inputs": inputs,
             "ops": ops, "outputs": outputs}
    json.dump(graph, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
