#!/usr/bin/env python3
"""Auto-sharding benchmark (docs/auto-sharding.md): solve time and plan quality.

For MLP training steps (SGD) of several depths on a 1-D and a 2-D mesh, times
`shardc compile --train-step=sgd --auto-shard --propagate` (wall and CPU
seconds, the solve included) and compares the auto plan's `est_time_s` (`shardc simulate`)
with the best hand-written layout of the same model (data parallel, FSDP,
Megatron, and 2-D on the 2-D mesh) under the same cost model.

  python3 bench/auto_shard_bench.py --build build        # 4, 24, 96 layers
  python3 bench/auto_shard_bench.py --build build --layers 4 --time-limit 60
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH = os.path.join(HERE, "..", "examples", "auto_shard", "mlp_graph.py")


def write_graph(path, layers, batch, hidden, mesh, layout):
    with open(path, "w") as f:
        subprocess.run([sys.executable, GRAPH, "--layers", str(layers),
                        "--batch", str(batch), "--hidden", str(hidden),
                        "--mesh", mesh, "--layout", layout], stdout=f,
                       check=True)


def simulate(shardc, path, extra, report):
    p = subprocess.run([shardc, "simulate", path, "--train-step=sgd",
                        "--seed", "0", "--quiet", "--report-json", report] +
                       extra, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        return None
    with open(report) as f:
        return json.load(f)["est_time_s"]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", default="build")
    p.add_argument("--layers", type=int, nargs="+", default=[4, 24, 96])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--time-limit", type=float, default=60)
    args = p.parse_args()
    shardc = os.path.join(args.build, "bin", "shardc")
    meshes = [("model=4", ["dp", "fsdp", "megatron"]),
              ("data=4,model=2", ["dp", "fsdp", "megatron", "2d"])]
    print("| layers | mesh | solve+compile wall s | cpu s | auto est_time_s | "
          "best hand-written est_time_s | ratio |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for layers in args.layers:
            for mesh, layouts in meshes:
                auto = os.path.join(tmp, "auto.json")
                write_graph(auto, layers, args.batch, args.hidden, mesh, "none")
                start = time.monotonic()
                cpu = os.times()
                c = subprocess.run(
                    [shardc, "compile", auto, "--train-step=sgd",
                     "--auto-shard", "--propagate", "--auto-shard-time-limit",
                     str(args.time_limit), "-o", os.devnull],
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                solve = time.monotonic() - start
                after = os.times()
                solve_cpu = (after.children_user + after.children_system -
                             cpu.children_user - cpu.children_system)
                if c.returncode != 0:
                    print("| %d | %s | failed: %s | | | | |" %
                          (layers, mesh, c.stdout.strip().splitlines()[0]))
                    continue
                t_auto = simulate(shardc, auto, ["--auto-shard",
                                                 "--auto-shard-time-limit",
                                                 str(args.time_limit)],
                                  os.path.join(tmp, "auto.report"))
                best = None
                for layout in layouts:
                    hand = os.path.join(tmp, layout + ".json")
                    write_graph(hand, layers, args.batch, args.hidden, mesh,
                                layout)
                    t = simulate(shardc, hand, [],
                                 os.path.join(tmp, layout + ".report"))
                    if t is not None and (best is None or t < best[0]):
                        best = (t, layout)
                ratio = t_auto / best[0] if t_auto and best else float("nan")
                print("| %d | %s | %.2f | %.2f | %.4g | %.4g (%s) | %.3f |" %
                      (layers, mesh, solve, solve_cpu, t_auto or float("nan"),
                       best[0] if best else float("nan"),
                       best[1] if best else "-", ratio))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
