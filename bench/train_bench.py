#!/usr/bin/env python3
"""Training-step benchmark: shardc's threads backend against NumPy and PyTorch.

The seed MLP's forward and hand-written backward, batch 1024, model 1024,
hidden 4096, f32 (5 GEMMs, 42.95 GFLOP per step):

    z = x @ W0;  h = relu(z);  out = h @ W1
    dW1 = h^T @ dy;  dh = dy @ W1^T;  dz = dh * (z > 0);  dW0 = x^T @ dz

Every variant runs in its own process with its thread count fixed before the
library loads (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS, torch.set_num_threads):
NumPy `@` on OpenBLAS at 1 and 2 threads, the seed's own np.einsum code once
at 1 thread, PyTorch at 1 and 2 threads (skipped if torch is missing), and
shardc (bench/seed_mlp.mlir differentiated by --shardc-autodiff, partitioned
Megatron-style over a 1-D mesh)
on the threads backend with 1 device (1 BLAS thread) and 2 devices (1 BLAS
thread each). See bench/training-step.md.

    make bench-train                 # builds, then runs this
    python3 bench/train_bench.py     # with an already-built build/
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

B, D, H = 1024, 1024, 4096
GFLOP = 5 * 2 * B * D * H / 1e9
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- workers: run inside a subprocess whose thread count is already fixed ---

def make_inputs(np):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, D), dtype=np.float32)
    w0 = rng.standard_normal((D, H), dtype=np.float32) / np.float32(32)
    w1 = rng.standard_normal((H, D), dtype=np.float32) / np.float32(64)
    dy = rng.standard_normal((B, D), dtype=np.float32)
    return x, w0, w1, dy


def numpy_step(np, x, w0, w1, dy):
    z = x @ w0
    h = np.maximum(z, 0)
    out = h @ w1
    dw1 = h.T @ dy
    dh = dy @ w1.T
    dz = dh * (z > 0)
    dw0 = x.T @ dz
    return out, dw0, dw1


def einsum_step(np, x, w0, w1, dy):
    # The seed's SingleDevice.forward and .backward, as written there.
    def relu(v):
        return v * (v > 0)
    z = np.einsum('bd,df->bf', x, w0)
    out = np.einsum('bf,fd->bd', relu(z), w1)
    h_relu = relu(z)
    w1_grad = np.einsum('bf,bd->fd', h_relu, dy)
    grads = np.einsum('bd,fd->bf', dy, w1)
    grads = grads * (z > 0)
    w0_grad = np.einsum('bd,bf->df', x, grads)
    return out, w0_grad, w1_grad


def time_steps(step, steps, warmup):
    for _ in range(warmup):
        step()
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    return seconds


def run_worker(kind, threads, steps, warmup):
    import numpy as np
    x, w0, w1, dy = make_inputs(np)
    if kind == "numpy":
        seconds = time_steps(lambda: numpy_step(np, x, w0, w1, dy), steps,
                             warmup)
    elif kind == "einsum":
        seconds = time_steps(lambda: einsum_step(np, x, w0, w1, dy), steps,
                             warmup)
    elif kind == "torch":
        import torch
        torch.set_num_threads(threads)
        tx, tw0, tw1, tdy = (torch.from_numpy(a) for a in (x, w0, w1, dy))

        def step():
            with torch.no_grad():
                z = tx @ tw0
                h = torch.relu(z)
                out = h @ tw1
                dw1 = h.T @ tdy
                dh = tdy @ tw1.T
                dz = dh * (z > 0)
                dw0 = tx.T @ dz
                return out, dw0, dw1
        seconds = time_steps(step, steps, warmup)
    else:
        raise SystemExit(f"unknown worker {kind}")
    print(json.dumps({"seconds": seconds}))


# --- the driver ---

def thread_env(threads):
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    return env


def median(values):
    s = sorted(values)
    return s[len(s) // 2]


def python_variant(args, kind, threads, steps, warmup):
    cmd = [args.python, os.path.abspath(__file__), "--worker", kind,
           "--threads", str(threads), "--steps", str(steps),
           "--warmup", str(warmup)]
    proc = subprocess.run(cmd, env=thread_env(threads), capture_output=True,
                          text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1:] or ["failed"]
    return median(json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]), None


def shardc_variant(args, devices, blas_threads):
    cmd = [args.shardc_bench, args.program, "--autodiff=w0,w1",
           "--devices", str(devices),
           "--blas-threads", str(blas_threads), "--steps", str(args.steps),
           "--warmup", str(args.warmup)]
    if args.check:
        cmd.append("--check")
    proc = subprocess.run(cmd, env=thread_env(blas_threads),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"train_bench: {' '.join(cmd)} failed")
    line = proc.stdout.strip().splitlines()[-1]
    fields = dict(re.findall(r"(\w+)=(\S+)", line))
    if args.check:
        for l in proc.stdout.splitlines():
            if l.startswith("output #"):
                print(f"  shardc {devices} dev check: {l}")
    return float(fields["median_s"]), int(fields["collectives"])


def torch_available(python):
    proc = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10,
                        help="timed steps per variant (median reported)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds over all variants; each keeps its best")
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="interpreter with numpy (and torch)")
    parser.add_argument("--shardc-bench",
                        default=os.path.join(ROOT, "build", "bin",
                                             "shardc-train-bench"))
    parser.add_argument("--program",
                        default=os.path.join(ROOT, "bench",
                                             "seed_mlp.mlir"))
    parser.add_argument("--skip-einsum", action="store_true",
                        help="skip the slow seed einsum variant")
    parser.add_argument("--check", action="store_true",
                        help="shardc runs also compare with the reference "
                             "interpreter (slow)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1,
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        run_worker(args.worker, args.threads, args.steps, args.warmup)
        return 0
    if not os.path.exists(args.shardc_bench):
        raise SystemExit(f"train_bench: {args.shardc_bench} not found; "
                         "build first (make build)")

    print(f"seed MLP forward+backward: batch {B}, model {D}, hidden {H}, f32,"
          f" {GFLOP:.2f} GFLOP/step; median of {args.steps} steps "
          f"after {args.warmup} warm-up, best of {args.rounds} rounds "
          f"(every variant once per round, interleaved); {os.cpu_count()} "
          f"cores, load average {os.getloadavg()[0]:.1f}")
    # name -> seconds per round (None: skipped). On a shared machine the
    # speed available drifts over minutes; interleaving the variants and
    # keeping each one's best round compares them under the same
    # conditions, and the spread shows how much the machine moved.
    rounds = {}
    notes = {}

    def record(name, seconds, note=None):
        rounds.setdefault(name, []).append(seconds)
        if note:
            notes[name] = note

    version = torch_available(args.python)
    for r in range(args.rounds):
        for t in (1, 2):
            s, err = python_variant(args, "numpy", t, args.steps, args.warmup)
            record(f"numpy @ ({t} thread{'s' * (t > 1)})", s, err and err[0])
        if not args.skip_einsum and r == 0:
            s, err = python_variant(args, "einsum", 1, 1, 0)
            record("numpy einsum, seed (1 thread)", s, err and err[0])
        for t in (1, 2):
            name = f"torch {version or ''} ({t} thread{'s' * (t > 1)})"
            if version:
                s, err = python_variant(args, "torch", t, args.steps,
                                        args.warmup)
                record(name, s, err and err[0])
            else:
                record(name, None, "python3-torch is not installed")
        s1, c1 = shardc_variant(args, 1, 1)
        record("shardc threads, 1 device", s1)
        s2, c2 = shardc_variant(args, 2, 1)
        record("shardc threads, 2 devices", s2,
               f"{c2} collective(s) in the partitioned program")
        print(f"  round {r + 1}/{args.rounds} done", flush=True)

    rows = {}
    for name, times in rounds.items():
        done = [t for t in times if t]
        rows[name] = min(done) if done else None
        if not done:
            print(f"  {name:<34}   skipped")
            continue
        spread = (f"  (rounds: {GFLOP / max(done):.1f} .. "
                  f"{GFLOP / min(done):.1f})" if len(done) > 1 else "")
        print(f"  {name:<34} {GFLOP / rows[name]:8.1f} GFLOP/s{spread}")

    def ratio(a, b):
        if rows.get(a) and rows.get(b):
            return rows[b] / rows[a]  # throughput ratio = inverse time ratio
        return None

    print("\nratios (throughput):")
    checks = [
        ("shardc 1 device / numpy 1 thread", "shardc threads, 1 device",
         "numpy @ (1 thread)", 1.0),
        ("shardc 2 devices / shardc 1 device", "shardc threads, 2 devices",
         "shardc threads, 1 device", 1.7),
        ("shardc 2 devices / numpy 2 threads", "shardc threads, 2 devices",
         "numpy @ (2 threads)", None),
        ("shardc 1 device / torch 1 thread", "shardc threads, 1 device",
         f"torch {version or ''} (1 thread)", None),
        ("shardc 2 devices / torch 2 threads", "shardc threads, 2 devices",
         f"torch {version or ''} (2 threads)", None),
    ]
    for label, a, b, target in checks:
        r = ratio(a, b)
        if r is None:
            print(f"  {label:<36}      n/a")
            continue
        verdict = ""
        if target is not None:
            verdict = f"  (target >= {target}: {'met' if r >= target else 'NOT met'})"
        print(f"  {label:<36} {r:6.2f}x{verdict}")
    for name, note in notes.items():
        print(f"note: {name}: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
