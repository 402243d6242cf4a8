#!/usr/bin/env python3
"""The CPU preset's estimate against measured `shardc train` steps.

Re-measures, live, the workloads test/shardc/estimate-this-cpu.test checks
against recorded figures: gpt_tiny (examples/gpt_tiny.json, 2 x 2 mesh)
and bench/transformer_bench.py's GPT-2-shaped model on 1 and 2 devices,
each trained with `shardc train --backend threads` (Adam, one BLAS thread
per device, pinned with taskset) and estimated by `shardc estimate
--machine` on the CPU preset, whose overhead figures were fitted on other
workloads (scripts/measure-machine.py). Prints estimate / measured.

    python3 bench/estimate_bench.py --build build
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples", "gpt"))
import gpt_graph  # noqa: E402
import step_timing  # noqa: E402
import transformer_bench  # noqa: E402


def workloads(tmp):
    yield "gpt_tiny (2x2 mesh)", os.path.join(ROOT, "examples",
                                              "gpt_tiny.json"), 4
    for devices in (1, 2):
        path = os.path.join(tmp, f"transformer_{devices}.json")
        with open(path, "w") as f:
            f.write(gpt_graph.to_text(gpt_graph.graph(
                transformer_bench.config(devices))))
        yield f"transformer_bench, {devices} device(s)", path, devices


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--machine",
                    default=os.path.join(ROOT, "machines", "this-cpu.json"))
    ap.add_argument("--steps", type=int, default=5,
                    help="steps per timed run (the transformer's; gpt_tiny "
                    "runs 20)")
    args = ap.parse_args()
    shardc = os.path.join(args.build, "bin", "shardc")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"machine {args.machine}")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, devices in workloads(tmp):
            estimate = step_timing.estimate(shardc, model, args.machine)
            steps = 20 if "tiny" in name else args.steps
            wall, measured = step_timing.measure_step(shardc, model, devices,
                                                      steps=steps)
            ratio = estimate["step_time_s"] / measured
            worst = max(worst, abs(ratio - 1))
            print(f"  {name:36s} estimate {estimate['step_time_s']:.4g} s  "
                  f"measured {measured:.4g} s (CPU/core; wall {wall:.4g} s)"
                  f"  ratio {ratio:.2f}")
    print(f"largest deviation {100 * worst:.0f} % (target 25 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
