#!/usr/bin/env python3
"""Reads `shardc explain --auto-shard`'s totals (the plan and the standard
hand-written layouts, all simulated) and prints the auto plan's est_time
against the fastest layout's; exits 1 if the plan is slower than any of
them (as printed, to three significant digits) or a line is missing."""

import re
import sys

totals = {}
for line in open(sys.argv[1]):
    m = re.match(r"  ([a-z0-9 -]+?):\s+est_time=([0-9.e+-]+)s", line)
    if m:
        totals[m.group(1)] = float(m.group(2))
auto = totals.pop("auto-shard", None)
totals.pop("annotated", None)
if auto is None or not totals:
    print("no totals in %s" % sys.argv[1])
    sys.exit(1)
name, best = min(totals.items(), key=lambda kv: kv[1])
slower = [n for n, t in sorted(totals.items()) if auto > t]
print("auto-shard est_time=%.3g; fastest standard layout %s est_time=%.3g" %
      (auto, name, best))
if slower:
    print("auto-shard is slower than: " + ", ".join(slower))
    sys.exit(1)
print("auto-shard is at least as fast as every standard layout (%d)" %
      len(totals))
