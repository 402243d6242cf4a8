#!/usr/bin/env python3
"""MPI backend benchmark: shardc's mpi backend against its threads backend
and against PyTorch's data-parallel step, on the same 2 cores.

The model of bench/transformer_bench.py (examples/gpt/gpt_graph.py at
d_model 768, 12 heads, seq 256, batch 4, 2 layers, vocab 8192; Adam), one
training step on 2 devices, one BLAS thread each, in one run:

  - shardc train --backend threads, mesh data=2 and mesh model=2 (Megatron);
  - the same under `scripts/mpirun-local.sh -n 2 ... --backend mpi` (the
    flags the tests launch MPI jobs with, docs/mpi.md);
  - PyTorch 1.13 (Debian python3-torch) data parallel over gloo, 2
    processes x 1 thread, each on half the batch: a real
    DistributedDataParallel (bucketed all-reduce overlapped with backward),
    or, with --torch-allreduce or where DDP does not run, the explicit
    per-parameter all-reduce after backward.

A shardc step is the difference between a run of --steps N+1 and one of 1
step (compilation, start-up, MPI's wiring and the first step cancel); its
user and system seconds are the same differences of the children's rusage
(for mpi: mpirun and both ranks). PyTorch's are timed around its steps
after a warm-up step, summed over its 2 processes.

    make bench-mpi                      # builds, then runs this
    python3 bench/mpi_bench.py          # with an already-built build/

The mpi runs use Cross Memory Attach (one copy per message) when a
2-rank job runs with it (--mpi-single-copy).

Every variant runs --rounds times (3 by default), interleaved: in each
round the two sides of a ratio run back to back, and odd rounds run the
variants in the reverse order, so a load that drifts weighs on both sides.

Prints s/step, user and system s/step of every variant (medians over the
rounds) and the ratios the issue asks for (mpi / threads per layout,
PyTorch DP / shardc mpi data=2, system time mpi / threads), each with the
median and range of its per-round ratios, and the load average and the CPU.
"""
import argparse
import datetime
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples", "gpt"))
import gpt_graph  # noqa: E402
from openblas_core import add_openblas_core_option, choose_openblas_core  # noqa: E402,E501

LAYOUTS = {"data=2": dict(data=2, model=1), "model=2": dict(data=1, model=2)}


def config(data, model, batch=4):
    return gpt_graph.Config(vocab=8192, d_model=768, heads=12, seq=256,
                            batch=batch, layers=2, data=data, model=model)


TOKENS = 4 * 256


def one_thread_env():
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    return env


def children_times():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime, usage.ru_stime


def timed(cmd, env):
    """(wall, user, system) seconds of one child run to completion."""
    u0, s0 = children_times()
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    u1, s1 = children_times()
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return wall, u1 - u0, s1 - s0


def mpi_env(single_copy):
    """The environment of an mpi run: one BLAS thread, and how Open MPI's
    shared-memory transport moves large messages (scripts/mpirun-local.sh)."""
    env = one_thread_env()
    env["SHARDC_MPI_SINGLE_COPY"] = single_copy
    return env


def cma_works(shardc, model):
    """Whether a 2-rank job runs with Cross Memory Attach (the gradients'
    all_reduce moves large messages, so it uses it)."""
    cmd = [os.path.join(ROOT, "scripts", "mpirun-local.sh"), "-n", "2",
           shardc, "train", model, "--backend", "mpi", "--steps", "1",
           "--seed", "0", "--check=false"]
    proc = subprocess.run(cmd, env=mpi_env("cma"), capture_output=True,
                          text=True)
    return proc.returncode == 0


def shardc_step(shardc, model, backend, steps, overlap=False,
                single_copy="none", zero=False):
    """(wall, user, system) seconds per step of `shardc train`, and the
    same seconds of the whole run of N+1 steps (start-up included)."""
    def run(n):
        cmd = [shardc, "train", model, "--backend", backend, "--steps",
               str(n), "--seed", "0", "--check=false"]
        if overlap:
            cmd.append("--mpi-overlap")
        if zero:
            cmd.append("--zero-axes=data")
        if backend == "mpi":
            cmd = [os.path.join(ROOT, "scripts", "mpirun-local.sh"), "-n",
                   "2"] + cmd
        return timed(cmd, mpi_env(single_copy))
    long, short = run(steps + 1), run(1)
    return tuple((a - b) / steps for a, b in zip(long, short)), long


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torch_worker(rank, port, steps, explicit, timeout):
    """One of PyTorch's 2 data-parallel processes; rank 0 prints
    "<wall> <user> <system> <how>" per step, user and system summed over
    both processes."""
    import numpy as np
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=timeout))
    c = config(1, 1)
    local = config(1, 1, batch=c.batch // 2)
    values = gpt_graph.initial_values(c, seed=0)
    rows = slice(rank * local.batch, (rank + 1) * local.batch)
    tokens = torch.from_numpy(values["tokens"][rows].copy())
    targets = torch.from_numpy(values["targets"][rows].copy())

    class Gpt(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.params = torch.nn.ParameterDict({
                n: torch.nn.Parameter(torch.from_numpy(v))
                for n, v in values.items() if v.dtype == np.float32})

        def forward(self, tokens, targets):
            return gpt_graph.torch_loss(local, self.params, tokens, targets)

    module = Gpt()
    how = "per-parameter all-reduce"
    model = module
    if not explicit:
        try:
            model = torch.nn.parallel.DistributedDataParallel(module)
            how = "DistributedDataParallel"
        except Exception as e:  # noqa: BLE001 - any failure: the fallback
            print(f"DDP does not run here ({e}); explicit all-reduce",
                  file=sys.stderr)
    opt = torch.optim.Adam(module.parameters(), lr=1e-2)

    def step():
        opt.zero_grad()
        model(tokens, targets).backward()
        if model is module:
            for p in module.parameters():
                dist.all_reduce(p.grad)
                p.grad /= 2
        opt.step()

    step()  # warm-up: allocations, the first Adam state, gloo's buffers
    dist.barrier()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    dist.barrier()
    wall = (time.perf_counter() - start) / steps
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    mine = torch.tensor([(r1.ru_utime - r0.ru_utime) / steps,
                         (r1.ru_stime - r0.ru_stime) / steps],
                        dtype=torch.float64)
    dist.all_reduce(mine)
    if rank == 0:
        print(wall, mine[0].item(), mine[1].item(), how, flush=True)
    # Both workers are past their last collective. Leave without tearing
    # gloo down: on a loaded machine a worker was seen to hang in the
    # teardown after its peer had exited, until the bench's timeout.
    dist.barrier()
    sys.stderr.flush()
    os._exit(0)


def torch_step(python, steps, explicit, timeout):
    """PyTorch's data-parallel step, or (None, why) when it did not run:
    when a worker fails, the other (which would wait for it in gloo) is
    killed at once, and both are when they have not finished after
    `timeout` seconds."""
    port = free_port()
    procs = [subprocess.Popen(
        [python, os.path.abspath(__file__), "--worker-torch", str(rank),
         "--port", str(port), "--steps", str(steps),
         "--torch-timeout", str(timeout)] +
        (["--torch-allreduce"] if explicit else []),
        env=one_thread_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True) for rank in (0, 1)]
    # The pipes are read by threads so that a worker writing much output
    # never blocks on a full pipe while the other is polled.
    outs = [None, None]

    def read(i):
        outs[i] = procs[i].communicate()
    readers = [threading.Thread(target=read, args=(i,)) for i in (0, 1)]
    for r in readers:
        r.start()
    deadline = time.monotonic() + timeout
    why = None
    grace = None
    while any(p.poll() is None for p in procs):
        failed = [i for i, p in enumerate(procs)
                  if p.poll() not in (None, 0)]
        # Worker 0 prints the figures after the last collective; once it
        # has ended well, the other has nothing left to do but exit.
        if procs[0].poll() == 0 and grace is None:
            grace = time.monotonic() + 10
        if grace is not None and time.monotonic() > grace:
            break
        if failed:
            why = f"PyTorch worker {failed[0]} failed (exit status " \
                  f"{procs[failed[0]].returncode})"
            break
        if time.monotonic() > deadline:
            why = (f"PyTorch data parallel did not finish within "
                   f"{timeout:g} s (--torch-timeout)")
            break
        time.sleep(0.2)
    for p in procs:
        if p.poll() is None:
            p.kill()
    for r in readers:
        r.join()
    if why is None:
        bad = [i for i, p in enumerate(procs)
               if p.returncode != 0 and not (i == 1 and grace is not None)]
        if bad:
            why = f"PyTorch worker {bad[0]} failed (exit status " \
                  f"{procs[bad[0]].returncode})"
    if why is not None:
        details = "".join(f"\n--- worker {i} stderr:\n{o[1][-2000:]}"
                          for i, o in enumerate(outs) if o and o[1])
        return None, why + "; both workers ended" + details
    wall, user, system, *how = outs[0][0].split()
    return (float(wall), float(user), float(system)), " ".join(how)


def cpu_name():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shardc", default=os.path.join(ROOT, "build/bin/shardc"))
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="the Python with torch (Debian's)")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3,
                    help="run every variant this many times, interleaved "
                         "(odd rounds in the reverse order); print the "
                         "medians and each ratio's per-round median and "
                         "range")
    ap.add_argument("--torch-allreduce", action="store_true",
                    help="PyTorch with explicit per-parameter all-reduce "
                         "instead of DistributedDataParallel")
    ap.add_argument("--compare-overlap", action=argparse.BooleanOptionalAction,
                    default=True,
                    help="also run the mpi variants with --mpi-overlap "
                         "(reductions travel while the next ops compute)")
    ap.add_argument("--zero", action=argparse.BooleanOptionalAction,
                    default=True,
                    help="also run mpi data=2 with the optimizer state and "
                    "update split over the data axis (--zero-axes=data, "
                    "ZeRO-1), reported on its own row; the issue's ratio "
                    "stays the plain data-parallel row's")
    ap.add_argument("--mpi-single-copy", choices=["auto", "cma", "none"],
                    default="auto",
                    help="how Open MPI moves large messages between the "
                         "ranks: cma (one copy, where the ranks may read "
                         "each other's memory), none (through shared "
                         "memory, two copies; what the tests use), or auto: "
                         "cma if a 2-rank job runs with it")
    add_openblas_core_option(ap)
    ap.add_argument("--torch-timeout", type=float, default=600,
                    help="seconds PyTorch's two workers may take in all "
                         "(and any one collective of theirs) before the "
                         "bench kills them and stops")
    ap.add_argument("--only", choices=["shardc", "torch"],
                    help=argparse.SUPPRESS)
    ap.add_argument("--worker-torch", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker_torch is not None:
        return torch_worker(args.worker_torch, args.port, args.steps,
                            args.torch_allreduce, args.torch_timeout)

    core_line = choose_openblas_core(args.shardc, args.openblas_core == "as-is")
    load = os.getloadavg()[0]
    variants = [("threads", False), ("mpi", False)]
    if args.compare_overlap:
        variants.append(("mpi", True))
    samples, whole, torch_how, torch_failures = {}, {}, "", []
    per_round = []  # per round: the variants' (wall, user, system) per step
    with tempfile.TemporaryDirectory() as tmp:
        models = {}
        for name, axes in LAYOUTS.items():
            models[name] = os.path.join(tmp, name.replace("=", "") + ".json")
            with open(models[name], "w") as f:
                f.write(gpt_graph.to_text(gpt_graph.graph(config(**axes))))
        single_copy = args.mpi_single_copy
        if single_copy == "auto" and args.only != "torch":
            single_copy = ("cma" if cma_works(args.shardc, models["data=2"])
                           else "none")
        for round_index in range(args.rounds):
            figures_of = {}
            per_round.append(figures_of)

            def run_shardc(name, backend, overlap=False, zero=False):
                step, run = shardc_step(args.shardc, models[name], backend,
                                        args.steps, overlap, single_copy,
                                        zero)
                variant = f"shardc {backend} {name}" + (
                    " overlap" if overlap else "") + (" zero" if zero else "")
                samples.setdefault(variant, []).append(step)
                whole.setdefault(variant, []).append(run)
                figures_of[variant] = step

            def run_torch():
                nonlocal torch_how
                figures, how = torch_step(args.python, args.steps,
                                          args.torch_allreduce,
                                          args.torch_timeout)
                if figures is None:
                    # The shardc rows measured so far are still printed.
                    torch_failures.append(how)
                    print(how, file=sys.stderr)
                else:
                    torch_how = how
                    samples.setdefault("PyTorch DP data=2",
                                       []).append(figures)
                    figures_of["PyTorch DP data=2"] = figures

            # The pairs a ratio compares run back to back (PyTorch and
            # shardc mpi data=2; threads and mpi of each layout), and odd
            # rounds run the even rounds' order backwards, so that a load
            # that drifts during the run weighs on both sides of a ratio
            # alike.
            order = []
            if args.only != "shardc":
                order.append(run_torch)
            if args.only != "torch":
                for name in models:
                    order.append(lambda n=name: run_shardc(n, "mpi"))
                    order.append(lambda n=name: run_shardc(n, "threads"))
                    if args.compare_overlap:
                        order.append(
                            lambda n=name: run_shardc(n, "mpi", overlap=True))
                if args.zero:
                    order.append(
                        lambda: run_shardc("data=2", "mpi", zero=True))
            if round_index % 2 == 1:
                order.reverse()
            for run in order:
                run()
    rows = {name: tuple(statistics.median(s[i] for s in runs)
                        for i in range(3))
            for name, runs in samples.items()}

    print(f"GPT-2-shaped step (d768, 12 heads, seq 256, batch 4, 2 layers, "
          f"vocab 8192; Adam) on 2 devices, 1 BLAS thread each; "
          f"{TOKENS} tokens/step")
    print(f"{'variant':28s} {'s/step':>8s} {'user':>8s} {'system':>8s}")
    for name, (wall, user, system) in rows.items():
        print(f"{name:28s} {wall:8.3f} {user:8.3f} {system:8.3f}")
    runs = {name: tuple(statistics.median(s[i] for s in r) for i in range(3))
            for name, r in whole.items()}
    if runs:
        print(f"whole runs of {args.steps + 1} steps (start-up included), "
              f"seconds:")
        for name, (wall, user, system) in runs.items():
            print(f"{name:28s} {wall:8.3f} {user:8.3f} {system:8.3f}")
    if args.only != "torch":
        print(f"mpi: Open MPI vader, single-copy mechanism {single_copy}" +
              (" (auto)" if args.mpi_single_copy == "auto" else ""))
    if torch_how:
        print(f"PyTorch DP: gloo, 2 processes x 1 thread, {torch_how}")
    for why in torch_failures:
        print(f"PyTorch DP: a round did not run: {why.splitlines()[0]}")

    def ratio(text, a, b, target):
        """The ratio of the medians, and of each round's pair (the two ran
        back to back): their median and range, the figure to judge a
        verdict by when the load moves."""
        if a in rows and b in rows:
            num, den = rows[a], rows[b]
            line = f"{text}: {target[0](num, den):.2f}x ({target[1]})"
            paired = [target[0](r[a], r[b]) for r in per_round
                      if a in r and b in r]
            if len(paired) > 1:
                line += (f"; per round: median {statistics.median(paired):.2f}x,"
                         f" {min(paired):.2f}-{max(paired):.2f}x over "
                         f"{len(paired)} rounds")
            print(line)

    wall = (lambda n, d: n[0] / d[0])
    for layout in LAYOUTS:
        ratio(f"mpi / threads, {layout}, s/step", f"shardc mpi {layout}",
              f"shardc threads {layout}", (wall, "target <= 1.10x"))
        ratio(f"mpi without / with --mpi-overlap, {layout}, s/step",
              f"shardc mpi {layout}", f"shardc mpi {layout} overlap",
              (wall, "> 1: overlap pays"))
    ratio("PyTorch DP / shardc mpi data=2, s/step", "PyTorch DP data=2",
          "shardc mpi data=2", (wall, "target >= 1.20x"))
    # On a loaded machine the wall times wait for a core; the CPU seconds
    # of both processes per step still compare the work.
    ratio("PyTorch DP / shardc mpi data=2, CPU s/step (user + system)",
          "PyTorch DP data=2", "shardc mpi data=2",
          (lambda n, d: (n[1] + n[2]) / (d[1] + d[2]),
           "informative: the work, whatever the load"))
    ratio("PyTorch DP / shardc mpi data=2 zero (--zero-axes=data), s/step",
          "PyTorch DP data=2", "shardc mpi data=2 zero",
          (wall, "informative: ZeRO-1, not plain data parallel"))
    # Per step the threads backend's system time is a few hundredths of a
    # second, the difference of two noisy totals: the ratio is taken of the
    # whole runs, as /usr/bin/time would show them.
    for layout in LAYOUTS:
        a, b = f"shardc mpi {layout}", f"shardc threads {layout}"
        if a in runs and b in runs:
            print(f"mpi / threads, {layout}, system time of the whole runs: "
                  f"{runs[a][2] / max(runs[b][2], 1e-9):.2f}x (target <= 2x)")
    print(core_line)
    print(f"{cpu_name()}, {os.cpu_count()} cores; load average "
          f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
          f"{args.steps} steps, median of {args.rounds} round(s)")
    return 1 if torch_failures else 0


if __name__ == "__main__":
    sys.exit(main())
