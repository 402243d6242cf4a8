"""Timing a `shardc train --backend threads` step, and its estimate: shared
by scripts/measure-machine.py (which fits overheads on calibration
workloads) and bench/estimate_bench.py (which validates on others)."""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def thread_env():
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    return env


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_seconds(shardc, model, steps, devices):
    """(wall, CPU) seconds of one `shardc train` run of `steps` steps."""
    cores = min(devices, os.cpu_count())
    cmd = ["taskset", "-c", f"0-{cores - 1}", shardc, "train", model,
           "--backend", "threads", "--steps", str(steps), "--seed", "0",
           "--check=false"]
    start, cpu = time.perf_counter(), _children_cpu()
    proc = subprocess.run(cmd, env=thread_env(), capture_output=True,
                          text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return time.perf_counter() - start, _children_cpu() - cpu


def measure_step(shardc, model, devices, steps=20, repeats=3):
    """(wall, busy) seconds per step: (run of steps+1) - (run of 1), each
    the best of `repeats`, pinned to as many cores as devices (at most
    all). `busy` is the CPU time divided by the cores the devices use:
    what the step takes when no other process shares those cores (on a
    loaded machine the wall time mostly measures the other processes)."""
    cores = min(devices, os.cpu_count())
    runs = {}
    for n in (steps + 1, 1):
        timed = [_run_seconds(shardc, model, n, devices)
                 for _ in range(repeats)]
        runs[n] = (min(w for w, _ in timed), min(c for _, c in timed))
    wall = max(runs[steps + 1][0] - runs[1][0], 0.0) / steps
    busy = max(runs[steps + 1][1] - runs[1][1], 0.0) / steps / cores
    return wall, busy


def measure_step_median(shardc, model, devices, steps, repeats):
    """Per-step (wall, busy) of `repeats` pairs of runs, each pair a run of
    1 step and one of steps+1 back to back (a drift in the machine's state
    hits both), as measure_step computes them: the medians, and the
    (lowest, highest) of each. For steps of a few milliseconds on more
    device threads than cores, whose runs are not alike: the best of the
    long runs minus the best of the short ones pairs a lucky long run with
    an unrelated short one; the median of pairs is the typical step."""
    cores = min(devices, os.cpu_count())
    walls, busies = [], []
    for _ in range(repeats):
        w1, c1 = _run_seconds(shardc, model, 1, devices)
        wn, cn = _run_seconds(shardc, model, steps + 1, devices)
        walls.append(max(wn - w1, 0.0) / steps)
        busies.append(max(cn - c1, 0.0) / steps / cores)
    return {"wall": statistics.median(walls),
            "busy": statistics.median(busies),
            "wall_range": (min(walls), max(walls)),
            "busy_range": (min(busies), max(busies))}


def estimate(shardc, model, machine):
    """The `shardc estimate` report (a dict) of the Adam step."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        cmd = [shardc, "estimate", model, "--machine", machine,
               "--train-step=adam", "--report-json", report]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
        with open(report) as f:
            return json.load(f)
