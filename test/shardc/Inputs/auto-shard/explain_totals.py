#!/usr/bin/env python3
"""Reads `shardc explain --auto-shard`'s totals (the plan and the standard
hand-written layouts, all simulated) and prints the auto plan's est_time
against the fastest layout's; exits 1 if the plan is slower than any of
them (as printed, to three significant digits) or a line is missing.
bench/auto_shard_bench.py reads the totals with read_totals too."""

import re
import sys


def read_totals(lines):
    """(the auto plan's est_time or None, {layout: est_time}) from explain's
    totals lines; the model's own annotations are left out."""
    totals = {}
    for line in lines:
        m = re.match(r"  ([a-z0-9 -]+?):\s+est_time=([0-9.e+-]+)s", line)
        if m:
            totals[m.group(1)] = float(m.group(2))
    auto = totals.pop("auto-shard", None)
    totals.pop("annotated", None)
    return auto, totals


def main(path):
    with open(path) as f:
        auto, totals = read_totals(f)
    if auto is None or not totals:
        print("no totals in %s" % path)
        return 1
    name, best = min(totals.items(), key=lambda kv: kv[1])
    slower = [n for n, t in sorted(totals.items()) if auto > t]
    print("auto-shard est_time=%.3g; fastest standard layout %s est_time=%.3g"
          % (auto, name, best))
    if slower:
        print("auto-shard is slower than: " + ", ".join(slower))
        return 1
    print("auto-shard is at least as fast as every standard layout (%d)" %
          len(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
