#!/usr/bin/env python3
"""Compares `shardc simulate --report-json` reports: the first is the
auto-sharded plan, the others hand-written layouts of the same model. Prints
the auto plan's est_time_s against the best hand-written layout that fits
--budget (peak bytes per device), and exits 1 if the auto plan is more than
1% slower, does not fit the budget, or a report's numerics failed."""

import argparse
import json
import sys

p = argparse.ArgumentParser()
p.add_argument("auto")
p.add_argument("hand", nargs="+")
p.add_argument("--budget", type=int, default=None)
args = p.parse_args()


def load(path):
    with open(path) as f:
        r = json.load(f)
    return r["est_time_s"], max(r["peak_bytes_per_device"])


auto_time, auto_peak = load(args.auto)
ok = True
if args.budget is not None and auto_peak > args.budget:
    print("auto plan peak %d exceeds the budget %d" % (auto_peak, args.budget))
    ok = False
best = None
for path in args.hand:
    t, peak = load(path)
    fits = args.budget is None or peak <= args.budget
    name = path.rsplit("/", 1)[-1]
    print("hand-written %s: est_time_s=%.6g peak=%d%s" %
          (name, t, peak, "" if fits else " (over budget)"))
    if fits and (best is None or t < best[0]):
        best = (t, name)
if best is None:
    print("auto est_time_s=%.6g peak=%d; no hand-written layout fits" %
          (auto_time, auto_peak))
elif auto_time <= 1.01 * best[0]:
    print("auto est_time_s=%.6g <= 1.01 x best hand-written (%s)" %
          (auto_time, best[1]))
else:
    print("auto est_time_s=%.6g > 1.01 x best hand-written %.6g (%s)" %
          (auto_time, best[0], best[1]))
    ok = False
sys.exit(0 if ok else 1)
