#!/usr/bin/env python3
"""Every shipped example with a mesh, stripped of its annotations, against
the hand-written layouts of the same model (docs/auto-sharding.md).

  examples_vs_hand.py SHARDC EXAMPLES_DIR [--only NAME ...]
                      [--train-step [--max-ops N]]

For each examples/*.json with a mesh: strips every user sharding (inputs,
outputs, ops; a `sharding_constraint` is the program itself and stays),
keeps the mesh, and runs `shardc simulate --auto-shard` on it. Then the
hand-written layouts, each by `shardc simulate` of the example rewritten:

  own   the example as shipped (its own annotations);
  repl  everything replicated (the stripped example, propagated);
  dp    data parallel: every data input (not a parameter) split on dim 0
        over the data axis ("data", else the mesh's first axis), weights
        replicated;
  fsdp  dp, and every weight split on dim 0 over the data axis too.

A weight is an input marked "param", or, in an example marking none, an
input whose name starts with "w" or "table" (megatron_mlp's w0, w1). A
layout whose dim 0 the axis does not divide leaves that input as it is.

Prints one line per example and exits 1 if, for any, the auto plan's
simulation fails (numerics, or any error) or its est_time_s is more than
1.01x the best hand-written layout that simulates. With --train-step the
examples with parameters and a scalar output are planned as SGD training
steps instead (--train-step=sgd on every run), but for those with more than
--max-ops ops."""

import argparse
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile


def is_weight(inp, any_param):
    if any_param:
        return bool(inp.get("param"))
    return inp["name"].startswith("w") or inp["name"].startswith("table")


def strip(model):
    m = copy.deepcopy(model)
    for inp in m["inputs"]:
        inp.pop("sharding", None)
    for out in m["outputs"]:
        out.pop("sharding", None)
    for op in m["ops"]:
        if op["op"] != "sharding_constraint":
            op.pop("sharding", None)
    return m


def data_axis(model):
    axes = model["mesh"]["axes"]
    for name, size in axes:
        if name == "data":
            return name, size
    return axes[0][0], axes[0][1]


def split_dim0(inp, axis, size):
    shape = inp["shape"]
    if not shape or shape[0] % size != 0:
        return
    inp["sharding"] = [axis] + [None] * (len(shape) - 1)


def layout(model, name):
    if name == "own":
        return copy.deepcopy(model)
    m = strip(model)
    if name == "repl":
        return m
    axis, size = data_axis(model)
    any_param = any(i.get("param") for i in model["inputs"])
    for inp in m["inputs"]:
        if not is_weight(inp, any_param) or name == "fsdp":
            split_dim0(inp, axis, size)
    return m


def simulate(shardc, path, extra, report):
    p = subprocess.run([shardc, "simulate", path, "--seed", "0", "--quiet",
                        "--report-json", report] + extra,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        return None, p.stdout.strip().splitlines()[-1:]
    with open(report) as f:
        r = json.load(f)
    return (r["est_time_s"], max(r["peak_bytes_per_device"])), None


def trainable(model):
    return any(i.get("param") for i in model["inputs"])


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("shardc")
    p.add_argument("examples")
    p.add_argument("--only", nargs="*")
    p.add_argument("--skip", nargs="*", default=[],
                   help="examples to leave out")
    p.add_argument("--max-ops", type=int, default=None,
                   help="with --train-step, skip examples with more ops")
    p.add_argument("--train-step", action="store_true")
    args = p.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(glob.glob(os.path.join(args.examples, "*.json"))):
            name = os.path.basename(path)[:-5]
            if (args.only and name not in args.only) or name in args.skip:
                continue
            with open(path) as f:
                model = json.load(f)
            if "mesh" not in model:
                continue
            extra = []
            if args.train_step:
                if not trainable(model) or (
                        args.max_ops is not None and
                        len(model["ops"]) > args.max_ops):
                    continue
                extra = ["--train-step=sgd"]
            auto_path = os.path.join(tmp, name + ".auto.json")
            with open(auto_path, "w") as f:
                json.dump(strip(model), f)
            auto, err = simulate(args.shardc, auto_path, extra + ["--auto-shard"],
                                 os.path.join(tmp, name + ".auto.report"))
            if auto is None:
                print("%s: auto plan FAILED: %s" % (name, " ".join(err)))
                ok = False
                continue
            best = None
            hands = []
            for lay in ["own", "repl", "dp", "fsdp"]:
                lp = os.path.join(tmp, "%s.%s.json" % (name, lay))
                with open(lp, "w") as f:
                    json.dump(layout(model, lay), f)
                r, _ = simulate(args.shardc, lp, extra,
                                os.path.join(tmp, name + "." + lay + ".report"))
                if r is None:
                    hands.append("%s=n/a" % lay)
                    continue
                hands.append("%s=%.4g" % (lay, r[0]))
                if best is None or r[0] < best[0]:
                    best = (r[0], lay)
            good = best is None or auto[0] <= 1.01 * best[0]
            ok &= good
            print("%s: auto=%.4g %s best %s (%s) ratio=%.3f %s" %
                  (name, auto[0], "<=" if good else ">", best[1],
                   " ".join(hands), auto[0] / best[0],
                   "OK" if good else "WORSE"))
            sys.stdout.flush()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
