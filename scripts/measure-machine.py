#!/usr/bin/python3
"""Measures this machine's figures for a shardc machine file (docs/machines.md).

A device of the threads backend is one worker thread on one core, so the
figures are one core's: f32 GEMM rate at a few sizes with one BLAS thread
(NumPy's BLAS, OpenBLAS on Debian, as shardc's kernels), and the copy
bandwidth of a large array. The link between devices is shared memory:
its bandwidth is that copy's, its latency is not measured (the alpha-beta
preset's 5 us). Every device shares one node; the devices are threads
sharing the host's cores ("host_cores").

With --shardc, two more figures are fitted on calibration workloads that
are nothing but overhead, each trained by `shardc train --backend threads`
and priced by `shardc estimate` with the figures above:
  op_overhead_s  a 1-device chain of tiny elementwise ops: (measured step -
                 estimate without overhead) / kernels per step;
  sync_s         2 x cores devices, data-parallel tiny parameters, one
                 gradient all-reduce each: (measured step - estimate with
                 the op overhead) / collectives per step / (devices /
                 cores), the estimate's time-sharing factor;
  host_wait_s    2 x cores devices, a Megatron MLP chain on [data=cores,
                 model=2] (compute between its collectives, as a real
                 step has): (wall step - CPU per core) / collectives per
                 step, the median of 7 runs, the wall time the cores idle
                 per collective while waiting devices sleep (the estimate
                 adds it to each collective where devices outnumber the
                 cores). The wall time is only meaningful on an otherwise
                 idle machine: on a loaded one it is mostly the other
                 processes.
A step is timed as the difference of a run of N+1 steps and one of 1 step
(cancelling compilation and start-up), the best of several repeats, pinned
with taskset to as many cores as devices, in CPU seconds per core used:
what the step costs with the cores to itself (the machine this was written
on is shared, and wall time there measures the other processes' load). The workloads the estimate is
validated on (bench/estimate_bench.py) are not among these.

With --refit-overheads FILE, only the three overheads are fitted again, into
FILE's other figures (after a change to shardc's interpreter or runtime,
whose costs they are; the GEMM rates and bandwidth stay as measured).

usage: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/measure-machine.py \\
           --shardc build/bin/shardc -o machines/this-cpu.json
       OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/measure-machine.py \\
           --shardc build/bin/shardc --refit-overheads machines/this-cpu.json \\
           -o machines/this-cpu.json
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402  (after the thread count is set)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bench"))
import step_timing  # noqa: E402


def best_seconds(fn, repeats=20):
    # CPU time of this (one-BLAS-thread) process: other processes taking
    # the core in between do not count, as they would in wall time.
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        fn()
        best = min(best, time.thread_time() - start)
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


def chain_model(devices, params):
    """A loss over `params` tiny [8, 8] parameters, broadcast over the batch and one multiply each: with
    one device pure kernel overhead; with a data-parallel mesh, one
    gradient all-reduce per parameter."""
    inputs = [{"name": "x", "shape": [8 * devices, 8], "dtype": "f32",
               "sharding": ["data", None]}]
    ops = []
    prev = "x"
    for i in range(params):
        inputs.append({"name": f"p{i}", "shape": [8], "dtype": "f32",
                       "sharding": [None], "param": True})
        ops.append({"op": "broadcast_in_dim", "inputs": [f"p{i}"],
                    "output": f"b{i}", "dims": [1],
                    "shape": [8 * devices, 8]})
        ops.append({"op": "mul", "inputs": [prev, f"b{i}"],
                    "output": f"h{i}"})
        prev = f"h{i}"
    ops.append({"op": "reduce_sum", "inputs": [prev], "dims": [0, 1],
                "output": "loss"})
    return {"mesh": {"name": "mesh", "axes": [["data", devices]]},
            "inputs": inputs, "ops": ops, "outputs": [{"name": "loss"}]}


def compute_chain_model(cores, layers=16, width=64, rows=16):
    """A Megatron MLP chain on a [data=cores, model=2] mesh (twice as many
    devices as cores): per layer a column-parallel matrix multiply, a relu
    and a row-parallel one, whose partial sums are all-reduced over
    "model" in the forward and backward passes, and each weight's gradient
    all-reduced over "data". Unlike the tiny chain, every collective
    follows some compute (about 30 us of GEMMs and elementwise ops per
    device at width 64 here), as in a real step: a device that waits can
    be woken while another still computes."""
    inputs = [{"name": "x", "shape": [cores * rows, width], "dtype": "f32",
               "sharding": ["data", None]}]
    ops = []
    prev = "x"
    for i in range(layers):
        inputs.append({"name": f"a{i}", "shape": [width, 2 * width],
                       "dtype": "f32", "sharding": [None, "model"],
                       "param": True})
        inputs.append({"name": f"b{i}", "shape": [2 * width, width],
                       "dtype": "f32", "sharding": ["model", None],
                       "param": True})
        ops.append({"op": "matmul", "inputs": [prev, f"a{i}"],
                    "output": f"u{i}"})
        ops.append({"op": "relu", "inputs": [f"u{i}"], "output": f"r{i}"})
        ops.append({"op": "matmul", "inputs": [f"r{i}", f"b{i}"],
                    "output": f"h{i}"})
        prev = f"h{i}"
    ops.append({"op": "reduce_sum", "inputs": [prev], "dims": [0, 1],
                "output": "loss"})
    return {"mesh": {"name": "mesh",
                     "axes": [["data", cores], ["model", 2]]},
            "inputs": inputs, "ops": ops, "outputs": [{"name": "loss"}]}


def fit_host_wait(shardc, machine, tmp):
    """host_wait_s on the compute chain: (wall - CPU per core) / collectives
    per step, the median of 7 pairs of runs. Fitted where devices wait
    between compute, as in a real step (on the tiny chain, whose
    collectives follow one another with nothing between, each costs about
    three times as much idle and overprices real steps)."""
    cores = os.cpu_count()
    model = os.path.join(tmp, "compute_chain.json")
    with open(model, "w") as f:
        json.dump(compute_chain_model(cores), f)
    machine_path = os.path.join(tmp, "machine.json")
    with open(machine_path, "w") as f:
        json.dump(machine, f)
    report = step_timing.estimate(shardc, model, machine_path)
    step = step_timing.measure_step_median(shardc, model, 2 * cores,
                                           steps=200, repeats=7)
    count = report["collectives_per_device"]
    wait = max((step["wall"] - step["busy"]) / count, 1e-9)
    machine["host_wait_s"] = float(f"{wait:.3g}")
    low, high = step["wall_range"]
    return (f"host_wait_s fitted on a {2 * cores}-device Megatron MLP chain "
            f"of 16 layers at width 64 ({step['wall'] * 1e3:.2f} ms/step "
            f"wall, {low * 1e3:.2f} to {high * 1e3:.2f} in 7 runs; "
            f"{step['busy'] * 1e3:.2f} ms CPU per core; {count:.0f} "
            f"collectives/step)")


def fit_overheads(shardc, machine, tmp):
    """Fits op_overhead_s, sync_s and host_wait_s into `machine` on the
    calibration chains; returns the notes saying on what."""
    notes = []
    figures = {}
    # The rendezvous is fitted with twice as many device threads as cores
    # (as gpt_tiny's 2 x 2 mesh runs here): waking a thread that waits for
    # a core is what it costs most where devices time-share the cores.
    sync_devices = 2 * os.cpu_count()
    for devices, what in ((1, "op_overhead_s"), (sync_devices, "sync_s")):
        model = os.path.join(tmp, f"chain{devices}.json")
        with open(model, "w") as f:
            json.dump(chain_model(devices, 64), f)
        machine_path = os.path.join(tmp, "machine.json")
        with open(machine_path, "w") as f:
            json.dump(machine, f)
        report = step_timing.estimate(shardc, model, machine_path)
        # Steps of a fraction of a millisecond: enough of them, and enough
        # repeats, that the difference of the two runs is not start-up
        # noise (with 3 repeats, refits of sync_s ranged over 8x).
        wall, measured = step_timing.measure_step(shardc, model, devices,
                                                  steps=400, repeats=7)
        if what == "op_overhead_s":
            count = report["kernels_per_device"]
        else:
            count = report["collectives_per_device"]
        # The estimate stretches collectives by devices / cores.
        share = max(devices / os.cpu_count(), 1.0)
        value = max((measured - report["step_time_s"]) / count / share, 1e-9)
        figures[what] = float(f"{value:.3g}")
        if what == "op_overhead_s":
            machine["device"]["op_overhead_s"] = figures[what]
        else:
            machine["intra_node_link"]["sync_s"] = figures[what]
        notes.append(f"{what} fitted on a {devices}-device chain of 64 tiny "
                     f"parameters ({measured * 1e3:.2f} ms/step measured, "
                     f"{count:.0f} {'kernels' if devices == 1 else 'collectives'}"
                     f"/step)")
    notes.append(fit_host_wait(shardc, machine, tmp))
    return notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--shardc", help="fit the per-op and per-collective "
                    "overheads with this shardc binary")
    ap.add_argument("--refit-overheads", metavar="FILE",
                    help="keep FILE's figures, fit only the overheads "
                    "(needs --shardc)")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    if args.refit_overheads:
        if not args.shardc:
            sys.exit("measure-machine.py: --refit-overheads needs --shardc")
        return refit_overheads(args, load)
    rates = gemm_rates()
    peak = max(r for _, r in rates)
    bandwidth = copy_bandwidth()
    machine = {
        "name": "this-cpu",
        "description": "",
        "host_cores": os.cpu_count(),
        "device": {
            "memory_bytes_per_s": float(f"{bandwidth:.3g}"),
            "peak_flops_per_s": {"f32": float(f"{peak:.3g}")},
            "gemm_efficiency": [[f, round(r / peak, 3)] for f, r in rates],
            "fuses_elementwise": False,
        },
        "intra_node_link": {"latency_s": 5e-6,
                            "bytes_per_s": float(f"{bandwidth / 2:.3g}")},
    }
    notes = []
    if args.shardc:
        with tempfile.TemporaryDirectory() as tmp:
            notes = fit_overheads(args.shardc, machine, tmp)
    machine["description"] = (
        f"{platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, measured by scripts/measure-machine.py on "
        f"{time.strftime('%Y-%m-%d')}: one core per device, f32 GEMM rates "
        "with one BLAS thread, copy bandwidth; link latency not measured; "
        + "".join(n + "; " for n in notes) +
        f"load average {load:.1f} while measuring (other work on the cores "
        "lowers the figures: measure on an idle machine)")
    write_machine(machine, args.output)


def refit_overheads(args, load):
    with open(args.refit_overheads) as f:
        machine = json.load(f)
    machine["device"].pop("op_overhead_s", None)
    machine["intra_node_link"].pop("sync_s", None)
    machine.pop("host_wait_s", None)
    with tempfile.TemporaryDirectory() as tmp:
        notes = fit_overheads(args.shardc, machine, tmp)
    # The old overheads' notes go; the rest of the description stays true.
    kept = [part for part in machine["description"].split("; ")
            if not part.startswith(("op_overhead_s fitted", "sync_s fitted",
                                    "host_wait_s fitted",
                                    "overheads refitted"))]
    kept.insert(-1, f"overheads refitted on {time.strftime('%Y-%m-%d')} "
                f"at load average {load:.1f}: " + "; ".join(notes))
    machine["description"] = "; ".join(kept)
    write_machine(machine, args.output)


def write_machine(machine, output):
    text = json.dumps(machine, indent=2) + "\n"
    # The [flops, efficiency] pairs on one line each, as the presets have them.
    text = re.sub(r"\[\s+([-0-9.e+]+),\s+([-0-9.e+]+)\s+\]", r"[\1, \2]", text)
    if output == "-":
        print(text, end="")
    else:
        with open(output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
