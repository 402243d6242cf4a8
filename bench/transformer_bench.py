#!/usr/bin/env python3
"""Transformer training-step benchmark: shardc's threads backend against
PyTorch eager, on a GPT-2-shaped stack.

The model of examples/gpt/gpt_graph.py at d_model 768, 12 heads, seq 256,
batch 4, 2 layers, vocab 8192 (27M parameters): one training step is
forward, backward and Adam, 1024 tokens. Variants, each in its own process
with its thread count fixed before any library loads:

  - PyTorch 1.13 eager (Debian python3-torch), the same math
    (gpt_graph.torch_loss, torch.optim.Adam), torch.set_num_threads(1) and 2;
  - shardc train --backend threads on a 1-D mesh "model" of 1 and 2 devices
    (Megatron layout, one BLAS thread per device, so 1 and 2 cores): a step
    is timed as the difference between a run of --steps N+1 and one of 1
    step, which cancels compilation, start-up and the first step.

    make bench-transformer                   # builds, then runs this
    python3 bench/transformer_bench.py       # with an already-built build/

Prints seconds per step, tokens/s and the ratios the issue asks for:
shardc / PyTorch at equal cores, and shardc's 2 devices / its 1 device.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples", "gpt"))
import gpt_graph  # noqa: E402


def config(devices):
    return gpt_graph.Config(vocab=8192, d_model=768, heads=12, seq=256,
                            batch=4, layers=2, data=1, model=devices)


TOKENS = config(1).batch * config(1).seq


def thread_env(threads):
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    return env


def torch_worker(threads, steps):
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    c = config(1)
    values = gpt_graph.initial_values(c, seed=0)
    params = {n: torch.from_numpy(v).requires_grad_()
              for n, v in values.items() if v.dtype == np.float32}
    tokens = torch.from_numpy(values["tokens"])
    targets = torch.from_numpy(values["targets"])
    opt = torch.optim.Adam(params.values(), lr=1e-2)

    def step():
        opt.zero_grad()
        gpt_graph.torch_loss(c, params, tokens, targets).backward()
        opt.step()

    step()  # warm-up: allocations, the first Adam state
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    print((time.perf_counter() - start) / steps,
          (time.process_time() - cpu) / steps)


def torch_seconds(python, threads, steps):
    proc = subprocess.run(
        [python, os.path.abspath(__file__), "--worker-torch", str(threads),
         "--steps", str(steps)],
        env=thread_env(threads), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"torch at {threads} threads failed:\n{proc.stderr}")
    wall, cpu = proc.stdout.split()[-2:]
    return float(wall), float(cpu)


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def shardc_seconds(shardc, model, steps):
    """(wall, CPU) seconds per step."""
    def run(n):
        start, cpu = time.perf_counter(), children_cpu()
        proc = subprocess.run(
            [shardc, "train", model, "--backend", "threads", "--steps",
             str(n), "--seed", "0", "--check=false"],
            env=thread_env(1), capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"shardc train failed:\n{proc.stderr}")
        return time.perf_counter() - start, children_cpu() - cpu
    (long_wall, long_cpu), (short_wall, short_cpu) = run(steps + 1), run(1)
    return (long_wall - short_wall) / steps, (long_cpu - short_cpu) / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shardc", default=os.path.join(ROOT, "build/bin/shardc"))
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="the Python with torch (Debian's)")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--worker-torch", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker_torch:
        return torch_worker(args.worker_torch, args.steps)

    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for devices in (1, 2):
            model = os.path.join(tmp, f"gpt_{devices}.json")
            with open(model, "w") as f:
                f.write(gpt_graph.to_text(gpt_graph.graph(config(devices))))
            rows[f"shardc threads, {devices} device(s)"] = shardc_seconds(
                args.shardc, model, args.steps)
    for threads in (1, 2):
        rows[f"PyTorch eager, {threads} thread(s)"] = torch_seconds(
            args.python, threads, args.steps)

    print(f"GPT-2-shaped step (d768, 12 heads, seq 256, batch 4, 2 layers, "
          f"vocab 8192): forward, backward, Adam; {TOKENS} tokens/step")
    for name, (s, cpu) in rows.items():
        print(f"  {name:32s} {s:7.3f} s/step  {TOKENS / s:8.0f} tokens/s"
              f"  (CPU {cpu:.3f} s/step)")
    s1, c1 = rows["shardc threads, 1 device(s)"]
    s2, _ = rows["shardc threads, 2 device(s)"]
    t1, u1 = rows["PyTorch eager, 1 thread(s)"]
    t2, _ = rows["PyTorch eager, 2 thread(s)"]
    print(f"shardc / PyTorch, 1 core:  {t1 / s1:.2f}x (target >= 1.0x)")
    print(f"shardc / PyTorch, 2 cores: {t2 / s2:.2f}x (target >= 1.0x)")
    print(f"shardc 2 devices / 1 device: {s1 / s2:.2f}x (target >= 1.6x)")
    # On a machine shared with other jobs the wall times above include
    # waiting for a core; CPU seconds of the one-core variants do not.
    print(f"shardc / PyTorch, 1 core, by CPU time: {u1 / c1:.2f}x; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
