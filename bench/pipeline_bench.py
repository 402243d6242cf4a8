#!/usr/bin/env python3
"""Pipeline benchmark: a deep, compute-heavy MLP on the threads backend, p=2
stages on two cores against the same model on one device (p=1), one SGD step
of m micro-batches each. Prints the measured speedup and the bubble it
implies, 1 - speedup / p, beside the formula (p-1)/(m+p-1), and the
simulator's bubble for the same step.

usage: python3 bench/pipeline_bench.py [--shardc build/bin/shardc]
       [--layers 8] [--width 512] [--batch 512] [--microbatches 4,8]
       [--repeat 3]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def model(path, pipe, layers, width, batch):
    inputs = [{"name": "x", "shape": [batch, width], "dtype": "f32"},
              {"name": "y", "shape": [batch, width], "dtype": "f32"}]
    inputs += [{"name": f"w{i}", "shape": [width, width], "dtype": "f32",
                "param": True} for i in range(layers)]
    ops, prev = [], "x"
    for i in range(layers):
        ops.append({"op": "matmul", "inputs": [prev, f"w{i}"], "output": f"h{i}"})
        ops.append({"op": "tanh", "inputs": [f"h{i}"], "output": f"a{i}"})
        prev = f"a{i}"
    ops += [{"op": "sub", "inputs": [prev, "y"], "output": "err"},
            {"op": "mul", "inputs": ["err", "err"], "output": "sq"},
            {"op": "reduce_sum", "inputs": ["sq"], "dims": [0, 1], "output": "sse"},
            {"op": "constant", "output": "inv_n", "shape": [], "dtype": "f32",
             "value": 1.0 / (batch * width)},
            {"op": "mul", "inputs": ["sse", "inv_n"], "output": "loss"}]
    json.dump({"mesh": {"name": "mesh", "axes": [["pipe", pipe]]},
               "inputs": inputs, "ops": ops, "outputs": [{"name": "loss"}]},
              open(path, "w"))


def run(shardc, path, m, backend):
    out = subprocess.run([shardc, "pipeline", path, "--microbatches", str(m),
                          "--schedule", "1f1b", "--backend", backend,
                          "--seed", "0"],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    if "OK" not in out:
        sys.exit("the pipelined step does not match the full-batch step:\n" + out)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shardc", default="build/bin/shardc")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--microbatches", default="4,8")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    p = 2
    with tempfile.TemporaryDirectory() as tmp:
        one, two = os.path.join(tmp, "p1.json"), os.path.join(tmp, "p2.json")
        model(one, 1, args.layers, args.width, args.batch)
        model(two, p, args.layers, args.width, args.batch)
        print(f"MLP {args.layers} x [{args.width}, {args.width}], batch "
              f"{args.batch}, threads backend, 1F1B, best of {args.repeat}")
        print(f"{'m':>3} {'1 device s':>11} {'p=2 s':>8} {'speedup':>8} "
              f"{'bubble (measured)':>18} {'(p-1)/(m+p-1)':>14} {'sim bubble':>11}")
        for m in [int(v) for v in args.microbatches.split(",")]:
            wall = lambda path: min(
                float(re.search(r"wall time of the step: ([0-9.]+) s",
                                run(args.shardc, path, m, "threads")).group(1))
                for _ in range(args.repeat))
            t1, t2 = wall(one), wall(two)
            sim = run(args.shardc, two, m, "sim")
            simBubble = float(re.search(r"bubble ([0-9.]+)%", sim).group(1))
            speedup = t1 / t2
            print(f"{m:>3} {t1:>11.3f} {t2:>8.3f} {speedup:>8.2f} "
                  f"{100 * (1 - speedup / p):>17.1f}% "
                  f"{100 * (p - 1) / (m + p - 1):>13.1f}% {simBubble:>10.1f}%")


if __name__ == "__main__":
    main()
