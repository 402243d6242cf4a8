#!/usr/bin/env python3
"""Writes examples/attention.json (one multi-head attention block) at a
larger size, with its annotations (the hand-written heads-over-model layout)
or without them (--layout none), for auto-sharding's rediscovery test.

  attention_graph.py --layout none > attention_big.json
"""

import argparse
import json
import os
import sys

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--layout", default="heads", choices=["heads", "none"])
p.add_argument("--batch", type=int, default=2)
p.add_argument("--seq", type=int, default=64)
p.add_argument("--d-model", type=int, default=512)
p.add_argument("--heads", type=int, default=8)
args = p.parse_args()

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "attention.json")) as f:
    g = json.load(f)
b, s, d, h = args.batch, args.seq, args.d_model, args.heads
dh = d // h
shapes = {"x": [b, s, d], "wq": [d, h, dh], "wk": [d, h, dh],
          "wv": [d, h, dh], "wo": [h, dh, d]}
strip = args.layout == "none"
for t in g["inputs"]:
    t["shape"] = shapes[t["name"]]
    # The projections are the block's parameters: --seed then draws them by
    # their fan-in, as a real model's, and the scores stay small enough for
    # softmax not to saturate (with U(-1, 1) weights at d_model 512 the
    # scores reached thousands and the check measured softmax's rounding).
    if t["name"] != "x":
        t["param"] = True
for o in g["ops"]:
    if "shape" in o:
        o["shape"] = [b, h, s, s]
for t in g["inputs"] + g["ops"] + g["outputs"]:
    if strip:
        t.pop("sharding", None)
json.dump(g, sys.stdout, indent=1)
sys.stdout.write("\n")
