#!/usr/bin/python3
"""Measures this machine's figures for a shardc machine file (docs/machines.md).

A device of the threads backend is one worker thread on one core, so the
figures are one core's: f32 GEMM rate at a few sizes with one BLAS thread
(NumPy's BLAS, OpenBLAS on Debian, as shardc's kernels), and the copy
bandwidth of a large array. The link between devices is shared memory:
its bandwidth is that copy's, its latency is not measured (the alpha-beta
preset's 5 us). Every device shares one node.

usage: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/measure-machine.py -o machines/this-cpu.json
"""
import argparse
import json
import os
import platform
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402  (after the thread count is set)


def best_seconds(fn, repeats=20):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def gemm_rates():
    rates = []
    for n in (64, 256, 1024):
        a = np.random.default_rng(0).standard_normal((n, n), np.float32)
        b = np.random.default_rng(1).standard_normal((n, n), np.float32)
        seconds = best_seconds(lambda: a @ b)
        flops = 2.0 * n ** 3
        rates.append((flops, flops / seconds))
    return rates


def copy_bandwidth():
    src = np.ones(64 << 20, np.uint8)
    dst = np.empty_like(src)
    seconds = best_seconds(lambda: np.copyto(dst, src))
    return 2.0 * src.nbytes / seconds  # read and written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    rates = gemm_rates()
    peak = max(r for _, r in rates)
    bandwidth = copy_bandwidth()
    machine = {
        "name": "this-cpu",
        "description": (
            f"{platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} cores, measured by scripts/measure-machine.py: "
            "one core per device, f32 GEMM rates with one BLAS thread, copy "
            "bandwidth; link latency not measured; load average "
            f"{os.getloadavg()[0]:.1f} while measuring (other work on the "
            "cores lowers the figures: measure on an idle machine)"),
        "device": {
            "memory_bytes_per_s": float(f"{bandwidth:.3g}"),
            "peak_flops_per_s": {"f32": float(f"{peak:.3g}")},
            "gemm_efficiency": [[f, round(r / peak, 3)] for f, r in rates],
        },
        "intra_node_link": {"latency_s": 5e-6,
                            "bytes_per_s": float(f"{bandwidth / 2:.3g}")},
    }
    text = json.dumps(machine, indent=2) + "\n"
    # The [flops, efficiency] pairs on one line each, as the presets have them.
    import re
    text = re.sub(r"\[\s+([-0-9.e+]+),\s+([-0-9.e+]+)\s+\]", r"[\1, \2]", text)
    if args.output == "-":
        print(text, end="")
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
