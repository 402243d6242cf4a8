"""Runs `shardc pipeline` on a model of uniform stages for each schedule and
(p, m) and checks the simulated bubble against (p-1)/(m+p-1) (within 2
percentage points) and the peak activations per stage: 1F1B holds at most
p micro-batches' worth on every stage, GPipe m on the first.

usage: check_pipeline_bubble.py SHARDC P2_MODEL P4_MODEL OUT_DIR
"""
import json
import os
import subprocess
import sys

shardc, p2, p4, out = sys.argv[1:5]
failures = []
for p, m, model in [(2, 4, p2), (4, 8, p4), (4, 16, p4)]:
    for schedule in ["gpipe", "1f1b"]:
        report = os.path.join(out, f"{schedule}-{p}-{m}.json")
        # Free links: the formula counts compute alone.
        subprocess.run([shardc, "pipeline", model, "--microbatches", str(m),
                        "--schedule", schedule, "--seed", "0",
                        "--link-latency", "0", "--link-bandwidth", "1e18",
                        "--report-json", report],
                       check=True, stdout=subprocess.DEVNULL)
        pipe = json.load(open(report))["pipeline"]
        ideal = (p - 1) / (m + p - 1)
        got = pipe["bubble_fraction"]
        line = (f"{schedule} p={p} m={m}: bubble {100 * got:.2f}% "
                f"ideal {100 * ideal:.2f}%")
        assert pipe["stages"] == p and pipe["microbatches"] == m
        assert abs(pipe["ideal_bubble_fraction"] - ideal) < 1e-12
        if abs(got - ideal) > 0.02:
            failures.append(line)
        peaks = pipe["peak_activation_bytes_per_stage"]
        each = pipe["activation_bytes_per_microbatch"]
        held = [peak / per for peak, per in zip(peaks, each)]
        line += " held " + " ".join(f"{h:g}" for h in held)
        if schedule == "1f1b" and any(h > p for h in held):
            failures.append(line + f": 1F1B holds more than p={p}")
        if schedule == "gpipe" and held[0] != m:
            failures.append(line + f": GPipe's first stage holds not m={m}")
        if schedule == "1f1b" and held[0] != min(p, m):
            failures.append(line + f": 1F1B's first stage holds not p={p}")
        print(line)
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
