#!/usr/bin/env python3
"""Compile-time benchmark: shardc vs upstream MLIR's `shard` dialect.

The model is a chain of N Megatron MLP blocks

    X_{i+1} = ReLU(X_i A_i) B_i

with X [16,64] replicated, A_i [64,256] split on columns, B_i [256,64] split
on rows, on a 1-D mesh of 4 devices (axis "model"); every weight, the input
and the output are annotated.  The same program is written

  * as a shardc JSON graph, compiled with
        shardc compile model.json --partition -o out.mlir
    (sharding propagation + partitioning), and
  * as an upstream MLIR program (shard.grid, linalg.matmul on
    tensor.empty + linalg.fill, a linalg.generic ReLU, shard.sharding /
    shard.shard annotations), run through
        mlir-opt --pass-pipeline="builtin.module(func.func(
                  sharding-propagation,shard-partition))"

Each run is a fresh child process measured with `/usr/bin/time -f "%e %M"`
(wall seconds, peak RSS in KiB) when available, else with wall-clock time and
getrusage(RUSAGE_CHILDREN) max-RSS from a fresh Python wrapper process.  The
best (minimum) of --repeat runs is reported for time and for memory.  Both
outputs are checked to hold exactly N all_reduce ops.

Usage: python3 bench/compile_bench.py [--sizes 1000,5000] [--big 50000]
           [--repeat 3] [--shardc PATH] [--mlir-opt PATH] [--workdir DIR]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MLIR_PIPELINE = "builtin.module(func.func(sharding-propagation,shard-partition))"
TIME_BIN = "/usr/bin/time"


class ToolError(Exception):
    pass


# --------------------------------------------------------------------------
# Model generators


def shardc_json(n):
    inputs = [{"name": "x", "shape": [16, 64], "dtype": "f32",
               "sharding": [None, None]}]
    ops = []
    cur = "x"
    for i in range(n):
        inputs.append({"name": f"a{i}", "shape": [64, 256], "dtype": "f32",
                       "sharding": [None, "model"]})
        inputs.append({"name": f"b{i}", "shape": [256, 64], "dtype": "f32",
                       "sharding": ["model", None]})
        ops.append({"op": "matmul", "inputs": [cur, f"a{i}"], "output": f"h{i}"})
        ops.append({"op": "relu", "inputs": [f"h{i}"], "output": f"u{i}"})
        ops.append({"op": "matmul", "inputs": [f"u{i}", f"b{i}"], "output": f"z{i}"})
        cur = f"z{i}"
    return {
        "mesh": {"name": "mesh", "axes": [["model", 4]]},
        "inputs": inputs,
        "ops": ops,
        "outputs": [{"name": cur, "sharding": [None, None]}],
    }


def shardc_mlir(n):
    """The same program as shardc's own MLIR (what `shardc compile model.json`
    imports to), to time shardc without its JSON importer."""
    rep = '#shardc.sharding<@mesh, [{}, {}]>'
    col = '#shardc.sharding<@mesh, [{}, {"model"}]>'
    row = '#shardc.sharding<@mesh, [{"model"}, {}]>'
    args = [f'%arg0: tensor<16x64xf32> {{shardc.name = "x", shardc.sharding = {rep}}}']
    for i in range(n):
        args.append(f'%arg{2*i+1}: tensor<64x256xf32> {{shardc.name = "a{i}", shardc.sharding = {col}}}')
        args.append(f'%arg{2*i+2}: tensor<256x64xf32> {{shardc.name = "b{i}", shardc.sharding = {row}}}')
    out = ["module {", '  shardc.mesh @mesh ["model"=4]',
           f"  func.func @main({', '.join(args)}) -> (tensor<16x64xf32> {{shardc.sharding = {rep}}}) {{"]
    cur = "%arg0"
    for i in range(n):
        out.append(f"    %h{i} = shardc.matmul {cur}, %arg{2*i+1} : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>")
        out.append(f"    %u{i} = shardc.relu %h{i} : tensor<16x256xf32>")
        out.append(f"    %z{i} = shardc.matmul %u{i}, %arg{2*i+2} : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>")
        cur = f"%z{i}"
    out += [f"    return {cur} : tensor<16x64xf32>", "  }", "}"]
    return "\n".join(out) + "\n"


def upstream_mlir(n):
    """The same program for LLVM 22's `shard` dialect (mlir-opt input)."""
    args = ["%x: tensor<16x64xf32>"]
    for i in range(n):
        args.append(f"%a{i}: tensor<64x256xf32>")
        args.append(f"%b{i}: tensor<256x64xf32>")
    out = []
    w = out.append
    w("#id = affine_map<(d0, d1) -> (d0, d1)>")
    w("module {")
    w("  shard.grid @mesh(shape = 4)")
    w(f"  func.func @main({', '.join(args)}) -> tensor<16x64xf32> {{")
    w("    %cst = arith.constant 0.000000e+00 : f32")
    w("    %srep = shard.sharding @mesh split_axes = [[]] : !shard.sharding")
    w("    %scol = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding")
    w("    %srow = shard.sharding @mesh split_axes = [[0]] : !shard.sharding")
    w("    %x_0 = shard.shard %x to %srep annotate_for_users : tensor<16x64xf32>")
    cur = "%x_0"
    for i in range(n):
        w(f"    %as{i} = shard.shard %a{i} to %scol annotate_for_users : tensor<64x256xf32>")
        w(f"    %bs{i} = shard.shard %b{i} to %srow annotate_for_users : tensor<256x64xf32>")
        w(f"    %e{i} = tensor.empty() : tensor<16x256xf32>")
        w(f"    %f{i} = linalg.fill ins(%cst : f32) outs(%e{i} : tensor<16x256xf32>) -> tensor<16x256xf32>")
        w(f"    %h{i} = linalg.matmul ins({cur}, %as{i} : tensor<16x64xf32>, tensor<64x256xf32>) "
          f"outs(%f{i} : tensor<16x256xf32>) -> tensor<16x256xf32>")
        w(f"    %u{i} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = [\"parallel\", \"parallel\"]}} "
          f"ins(%h{i} : tensor<16x256xf32>) outs(%e{i} : tensor<16x256xf32>) {{")
        w("    ^bb0(%in: f32, %o: f32):")
        w("      %m = arith.maximumf %in, %cst : f32")
        w("      linalg.yield %m : f32")
        w("    } -> tensor<16x256xf32>")
        w(f"    %g{i} = tensor.empty() : tensor<16x64xf32>")
        w(f"    %gf{i} = linalg.fill ins(%cst : f32) outs(%g{i} : tensor<16x64xf32>) -> tensor<16x64xf32>")
        w(f"    %z{i} = linalg.matmul ins(%u{i}, %bs{i} : tensor<16x256xf32>, tensor<256x64xf32>) "
          f"outs(%gf{i} : tensor<16x64xf32>) -> tensor<16x64xf32>")
        cur = f"%z{i}"
    w(f"    %out = shard.shard {cur} to %srep : tensor<16x64xf32>")
    w("    return %out : tensor<16x64xf32>")
    w("  }")
    w("}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# Measurement


_WRAPPER = r"""
import resource, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
t = time.perf_counter() - t0
sys.stderr.buffer.write(p.stderr)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stderr.write("\n__BENCH__ %.3f %d\n" % (t, rss))
sys.exit(p.returncode)
"""


LIMITS = {"mem_mib": 0, "timeout": None}


def _limit_memory():
    mib = LIMITS["mem_mib"]
    if mib > 0:
        import resource
        b = mib * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (b, b))


def measure(cmd, label):
    """Run cmd once in a fresh process; return (seconds, peak MiB)."""
    if os.access(TIME_BIN, os.X_OK):
        full = [TIME_BIN, "-f", "__BENCH__ %e %M"] + cmd
    else:
        full = [sys.executable, "-c", _WRAPPER] + cmd
    t0 = time.perf_counter()
    try:
        p = subprocess.run(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           preexec_fn=_limit_memory, timeout=LIMITS["timeout"])
    except subprocess.TimeoutExpired:
        raise ToolError(f"{label} timed out after {LIMITS['timeout']} s: {' '.join(cmd)}")
    wall = time.perf_counter() - t0
    err = p.stderr.decode(errors="replace")
    m = re.search(r"__BENCH__ ([0-9.]+) ([0-9]+)\s*$", err)
    if p.returncode != 0 or not m:
        tail = "\n".join(err.strip().splitlines()[-15:])
        lim = (f" (address space capped at {LIMITS['mem_mib']} MiB, see --mem-limit-mib)"
               if LIMITS["mem_mib"] > 0 else "")
        raise ToolError(f"{label} failed (exit {p.returncode}){lim}: {' '.join(cmd)}\n{tail}")
    # Wall time from perf_counter around the child (finer than time's %e,
    # includes the ~1 ms of the /usr/bin/time wrapper); peak RSS from the tool.
    return wall, int(m.group(2)) / 1024.0


def best_of(cmd, label, repeat):
    runs = [measure(cmd, label) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def count(path, pattern):
    with open(path, errors="replace") as f:
        return len(re.findall(pattern, f.read()))


SHARDC_AR = r"\bshardc\.all_reduce\b"
UPSTREAM_AR = r"(?<![\w.])shard\.all_reduce\b"


def run_shardc(shardc, workdir, n, repeat):
    model = os.path.join(workdir, f"model_{n}.json")
    out = os.path.join(workdir, f"shardc_{n}.mlir")
    with open(model, "w") as f:
        json.dump(shardc_json(n), f)
    cmd = [shardc, "compile", model, "--partition", "-o", out]
    t, mib = best_of(cmd, f"shardc (N={n})", repeat)
    return t, mib, count(out, SHARDC_AR)


def run_shardc_mlir(shardc, workdir, n, repeat):
    model = os.path.join(workdir, f"model_{n}.shardc.mlir")
    out = os.path.join(workdir, f"shardc_{n}_from_mlir.mlir")
    with open(model, "w") as f:
        f.write(shardc_mlir(n))
    cmd = [shardc, "compile", model, "--partition", "-o", out]
    t, mib = best_of(cmd, f"shardc from .mlir (N={n})", repeat)
    return t, mib, count(out, SHARDC_AR)


def run_upstream(mlir_opt, workdir, n, repeat):
    model = os.path.join(workdir, f"model_{n}.mlir")
    out = os.path.join(workdir, f"upstream_{n}.mlir")
    with open(model, "w") as f:
        f.write(upstream_mlir(n))
    cmd = [mlir_opt, f"--pass-pipeline={MLIR_PIPELINE}", model, "-o", out]
    t, mib = best_of(cmd, f"mlir-opt (N={n})", repeat)
    return t, mib, count(out, UPSTREAM_AR)


# --------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,5000",
                    help="comma-separated N for shardc vs mlir-opt (default 1000,5000)")
    ap.add_argument("--big", type=int, default=50000,
                    help="N for a shardc-only run (0 to skip; default 50000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement, best kept")
    ap.add_argument("--shardc", default="build/bin/shardc")
    ap.add_argument("--mlir-opt", dest="mlir_opt", default="/usr/lib/llvm-22/bin/mlir-opt")
    ap.add_argument("--workdir", default=None,
                    help="where models/outputs go (default: a tempdir, removed at exit)")
    ap.add_argument("--mem-limit-mib", type=int, default=8192,
                    help="address-space cap per compiler run, so a blow-up fails instead of "
                         "swamping a shared machine (0: none; default 8192)")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds per compiler run (default 600)")
    a = ap.parse_args()

    try:
        sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    except ValueError:
        sys.exit(f"error: bad --sizes {a.sizes!r}")
    if a.repeat < 1 or any(n < 1 for n in sizes):
        sys.exit("error: --repeat and --sizes must be >= 1")
    for tool, opt in ((a.shardc, "--shardc"), (a.mlir_opt, "--mlir-opt")):
        if not (os.path.isfile(tool) and os.access(tool, os.X_OK)):
            sys.exit(f"error: {opt} {tool}: not an executable file")
    LIMITS["mem_mib"] = a.mem_limit_mib
    LIMITS["timeout"] = a.timeout if a.timeout > 0 else None

    tmp = None
    if a.workdir:
        os.makedirs(a.workdir, exist_ok=True)
        workdir = a.workdir
    else:
        tmp = tempfile.mkdtemp(prefix="shardc-bench-")
        workdir = tmp

    how = "/usr/bin/time" if os.access(TIME_BIN, os.X_OK) else "getrusage(RUSAGE_CHILDREN)"
    print(f"shardc:   {a.shardc} compile model.json --partition")
    print(f"mlir-opt: {a.mlir_opt} --pass-pipeline='{MLIR_PIPELINE}'")
    print(f"best of {a.repeat} runs; wall time (perf_counter), peak RSS via {how}; "
          f"workdir {workdir}")
    print("'shardc .mlir s' = shardc compile on the same program as shardc MLIR "
          "(no JSON import), for information")
    print(flush=True)

    ok = True
    try:
        rows = []
        for n in sizes:
            s = run_shardc(a.shardc, workdir, n, a.repeat)
            sm = run_shardc_mlir(a.shardc, workdir, n, a.repeat)
            u = run_upstream(a.mlir_opt, workdir, n, a.repeat)
            rows.append((n, s, sm, u))

        hdr = (f"{'N':>7} | {'shardc s':>9} | {'shardc MiB':>10} | {'mlir-opt s':>10} | "
               f"{'mlir-opt MiB':>12} | {'speedup':>8} | {'shardc .mlir s':>14}")
        print(hdr)
        print("-" * len(hdr))
        for n, s, sm, u in rows:
            ratio = u[0] / s[0] if s[0] > 0 else float("inf")
            print(f"{n:>7} | {s[0]:>9.3f} | {s[1]:>10.1f} | {u[0]:>10.3f} | {u[1]:>12.1f} | "
                  f"{ratio:>7.1f}x | {sm[0]:>14.3f}")
        print()
        print("time per block (linear growth => roughly constant):")
        for n, s, sm, u in rows:
            print(f"  N={n:>6}: shardc {s[0] / n * 1e6:8.1f} us/block, "
                  f"mlir-opt {u[0] / n * 1e6:8.1f} us/block, "
                  f"shardc .mlir {sm[0] / n * 1e6:8.1f} us/block")
        print()
        print("all_reduce count check (expected N):")
        for n, s, sm, u in rows:
            for name, c in (("shardc", s[2]), ("shardc .mlir", sm[2]), ("mlir-opt", u[2])):
                good = c == n
                ok &= good
                print(f"  N={n:>6} {name:<12}: {c:>6} {'OK' if good else 'MISMATCH'}")
        print(flush=True)

        if a.big and a.big > 0:
            n = a.big
            print(f"shardc alone, N={n}:", flush=True)
            s = run_shardc(a.shardc, workdir, n, a.repeat)
            good = s[2] == n
            ok &= good
            print(f"  {s[0]:.3f} s, {s[1]:.1f} MiB peak, {s[0] / n * 1e6:.1f} us/block, "
                  f"all_reduce {s[2]} {'OK' if good else 'MISMATCH'}")
    except ToolError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    if not ok:
        print("error: all_reduce count mismatch", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
