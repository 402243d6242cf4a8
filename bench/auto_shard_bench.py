#!/usr/bin/env python3
"""Auto-sharding benchmark (docs/auto-sharding.md): solve time and plan quality.

For MLP training steps (SGD) of several depths on a 1-D and a 2-D mesh, and
for the forward program of a GPT (examples/gpt/gpt_graph.py at gpt_tiny's
width, --gpt-layers) on data=2 x model=2, times
`shardc compile [--train-step=sgd] --auto-shard --propagate` (wall and CPU
seconds, the solve included) and compares the auto plan's `est_time_s`
(`shardc simulate`) with the best hand-written layout of the same model (data parallel, FSDP,
Megatron, and 2-D on the 2-D mesh; for the GPT its own Megatron x data
annotations, and data parallel) under the same cost model.

  python3 bench/auto_shard_bench.py --build build   # MLP 4, 24, 96; GPT 2, 24, 96
  python3 bench/auto_shard_bench.py --build build --layers 4 --gpt-layers
  python3 bench/auto_shard_bench.py --write-gpt 24 > gpt24.json  # the graph only

--whole-plan instead times the whole-plan search (`shardc estimate
--auto-shard`, docs/whole-plan.md) on GPT-3 175B
(96 layers, hidden 12288, 96 heads, seq 2048, vocab 51200), bf16-mixed
Adam, 1,024 DGX A100s, global batch 1536: wall and CPU seconds, maximum
resident set, the chosen plan, and its estimate against Megatron-LM's
published configuration for this model size (t=8, p=8, here d=16, micro-batch
1, full recompute; Narayanan et al. 2021, Table 1) under the same model;
then the same search on the model with every annotation stripped, where
the tensor auto-sharder chooses every tensor sharding too (its command,
CPU seconds, max RSS, meshes and solves, and plan; --every-mesh also
with --solve-every-mesh):

  python3 bench/auto_shard_bench.py --build build --whole-plan [--every-mesh]

At scale (--scale): the Adam training steps of the Llama-like decoder
(bench/llama_graph.py, d 64) of 1, 2, 4 and 8 layers on data=2 x model=2,
and of the GPT-3-shaped model (--write-gpt3) of 2, 8 and 96 layers on
data=16 x model=8 under --memory-budget 80G (and 96 layers under 150G, which
its plans can meet): the solve's wall and CPU seconds and the
solving process's max RSS, and for the Llama steps the auto plan's
est_time_s over the best hand-written layout's (`explain --auto-shard`'s
simulated totals: replicated, data parallel, FSDP, Megatron, 2-D). The
GPT-3-shaped steps are too large to simulate (gigabytes of weights per
device): their quality column is empty.

  python3 bench/auto_shard_bench.py --build build --scale
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# explain --auto-shard's totals are read as the suite reads them.
sys.path.insert(0, os.path.join(HERE, "..", "test", "shardc", "Inputs",
                                "auto-shard"))
import explain_totals  # noqa: E402
GRAPH = os.path.join(HERE, "..", "examples", "auto_shard", "mlp_graph.py")


def write_graph(path, layers, batch, hidden, mesh, layout):
    with open(path, "w") as f:
        subprocess.run([sys.executable, GRAPH, "--layers", str(layers),
                        "--batch", str(batch), "--hidden", str(hidden),
                        "--mesh", mesh, "--layout", layout], stdout=f,
                       check=True)


def gpt_graph_of(layers, layout):
    """examples/gpt/gpt_graph.py's model at gpt_tiny's width: "megatron" is
    its own annotations (Megatron over "model", tokens over "data"), "dp"
    only the tokens and targets split over "data", "none" nothing."""
    sys.path.insert(0, os.path.join(HERE, "..", "examples", "gpt"))
    import gpt_graph
    g = gpt_graph.graph(gpt_graph.Config(vocab=256, d_model=64, heads=4,
                                         seq=16, batch=4, layers=layers))
    for t in g["inputs"] + g["ops"] + g["outputs"]:
        if layout == "none" or (layout == "dp" and
                                t.get("name") not in ("tokens", "targets")):
            t.pop("sharding", None)
    return g


def gpt3_graph_of(layers):
    """The GPT-3-shaped model of issue #28 (d 12288, 96 heads, seq 2048,
    vocab 51200; batch 16, one sequence per data device) on data=16 x
    model=8, without annotations."""
    sys.path.insert(0, os.path.join(HERE, "..", "examples", "gpt"))
    import gpt_graph
    g = gpt_graph.graph(gpt_graph.Config(vocab=51200, d_model=12288,
                                         heads=96, seq=2048, batch=16,
                                         layers=layers, data=16, model=8))
    for t in g["inputs"] + g["ops"] + g["outputs"]:
        t.pop("sharding", None)
    return g


def write_gpt(path, layers, layout):
    with open(path, "w") as f:
        json.dump(gpt_graph_of(layers, layout), f)


def simulate(shardc, path, extra, report):
    p = subprocess.run([shardc, "simulate", path, "--seed", "0", "--quiet",
                        "--report-json", report] + extra,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        return None
    with open(report) as f:
        return json.load(f)["est_time_s"]


def measure(shardc, tmp, model, layers, mesh, write, layouts, step,
            time_limit):
    """One row: `write(path, layout)` writes the graph; `step` the flags
    making it a training step (or none, the forward program)."""
    auto = os.path.join(tmp, "auto.json")
    write(auto, "none")
    limit = (["--auto-shard-time-limit", str(time_limit)] if time_limit > 0
             else [])
    start = time.monotonic()
    cpu = os.times()
    c = subprocess.run([shardc, "compile", auto] + step +
                       ["--auto-shard", "--propagate", "-o", os.devnull] +
                       limit, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    solve = time.monotonic() - start
    after = os.times()
    solve_cpu = (after.children_user + after.children_system -
                 cpu.children_user - cpu.children_system)
    if c.returncode != 0:
        print("| %s | %d | %s | failed: %s | | | | |" %
              (model, layers, mesh, c.stdout.strip().splitlines()[0]))
        return
    t_auto = simulate(shardc, auto, step + ["--auto-shard"] + limit,
                      os.path.join(tmp, "auto.report"))
    best = None
    for layout in layouts:
        hand = os.path.join(tmp, layout + ".json")
        write(hand, layout)
        t = simulate(shardc, hand, step, os.path.join(tmp, layout + ".report"))
        if t is not None and (best is None or t < best[0]):
            best = (t, layout)
    ratio = t_auto / best[0] if t_auto and best else float("nan")
    print("| %s | %d | %s | %.2f | %.2f | %.4g | %.4g (%s) | %.3f |" %
          (model, layers, mesh, solve, solve_cpu, t_auto or float("nan"),
           best[0] if best else float("nan"), best[1] if best else "-",
           ratio))
    sys.stdout.flush()


def whole_plan(shardc, every_mesh=False):
    """The GPT-3 175B whole-plan search, and Megatron-LM's plan priced by
    the same estimate."""
    sys.path.insert(0, os.path.join(HERE, "..", "examples", "gpt"))
    import gpt_graph
    machine = os.path.join(HERE, "..", "machines", "dgx-a100-80gb.json")
    shape = dict(vocab=51200, d_model=12288, heads=96, seq=2048, layers=96)
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "gpt3.json")
        c = gpt_graph.Config(batch=1, data=1, model=1, **shape)
        with open(model, "w") as f:
            json.dump(gpt_graph.scaled_graph(c), f)
        report = os.path.join(tmp, "search.json")
        start = time.monotonic()
        child = subprocess.Popen(
            [shardc, "estimate", model, "--machine", machine,
             "--auto-shard", "--devices", "1024", "--global-batch", "1536",
             "--train-step=adam", "--precision=bf16-mixed",
             "--report-json", report], stdout=subprocess.PIPE, text=True)
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - start
        if status != 0:
            sys.exit("the search failed:\n" + out)
        print(out, end="")
        print("whole-plan search: %.2f s wall, %.2f s CPU, max RSS %.0f MB" %
              (wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
        # Megatron-LM's plan: the graph's batch is one micro-batch on each
        # of the 16 data ranks, 1536 / 16 = 96 micro-batches.
        megatron = os.path.join(tmp, "megatron.json")
        c = gpt_graph.Config(batch=16, data=16, model=8, **shape)
        with open(megatron, "w") as f:
            json.dump(gpt_graph.scaled_graph(c, pipe=8), f)
        ref = os.path.join(tmp, "megatron.report.json")
        subprocess.run([shardc, "estimate", megatron, "--machine", machine,
                        "--train-step=adam", "--precision=bf16-mixed",
                        "--recompute=full", "--pipeline-axis", "pipe",
                        "--microbatches", "96", "--report-json", ref],
                       check=True, stdout=subprocess.DEVNULL)
        got, want = json.load(open(report)), json.load(open(ref))
        print("chosen: %.4g s per step, %.1f TFLOP/s per device; Megatron-LM "
              "(t=8 p=8 d=16, micro-batch 1, full recompute): %.4g s, %.1f "
              "TFLOP/s; chosen is %.1f %% faster" %
              (got["step_time_s"], got["tflops_per_device"],
               want["step_time_s"], want["tflops_per_device"],
               100 * (want["step_time_s"] / got["step_time_s"] - 1)))
        # The same model without annotations: the tensor auto-sharder
        # chooses every tensor sharding too (--tensor-shardings auto).
        with open(model) as f:
            bare = json.load(f)
        for i in bare["inputs"]:
            i.pop("sharding", None)
        bare_model = os.path.join(tmp, "gpt3-bare.json")
        with open(bare_model, "w") as f:
            json.dump(bare, f)
        runs = [("unannotated", [])]
        if every_mesh:
            runs.append(("unannotated, --solve-every-mesh",
                         ["--solve-every-mesh"]))
        for name, extra in runs:
            bare_report = os.path.join(tmp, "bare.report.json")
            cmd = [shardc, "estimate", bare_model, "--machine", machine,
                   "--auto-shard", "--devices", "1024", "--global-batch",
                   "1536", "--train-step=adam", "--precision=bf16-mixed",
                   "--report-json", bare_report] + extra
            print("\n$ " + " ".join(os.path.basename(c) if c == shardc
                                     else c for c in cmd))
            code, out, wall, cpu, rss = timed(cmd)
            if code != 0:
                sys.exit("the unannotated search failed:\n" + out)
            print("\n".join(l for l in out.splitlines()
                            if l.startswith(("plan:", "step:", "tensor "))
                            or "warning" in l))
            b = json.load(open(bare_report))
            t = b["plan"]["tensor_shardings"]
            print("%s search: %.2f s wall, %.2f s CPU, max RSS %.0f MB, %d "
                  "meshes in %d solves; %.4g s per step, %.1f TFLOP/s "
                  "(annotated: %.4g s; Megatron-LM: %.4g s); load average "
                  "%.2f" %
                  (name, wall, cpu, rss, t["solved_meshes"], t["solves"],
                   b["step_time_s"], b["tflops_per_device"],
                   got["step_time_s"], want["step_time_s"],
                   os.getloadavg()[0]))

def timed(cmd):
    """Runs `cmd`: (exit code, output, wall s, CPU s, max RSS in MiB), the
    CPU and RSS the child's own (os.wait4), whatever else the machine runs."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    return (p.returncode, out, wall, usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024)


def explain_ratio(shardc, path, step):
    """The auto plan's simulated est_time_s over the best hand-written
    layout's, from `explain --auto-shard`'s totals."""
    r = subprocess.run([shardc, "explain", path, "--auto-shard"] + step,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    auto, totals = explain_totals.read_totals(r.stdout.splitlines())
    if auto is None or not totals:
        return "", "", ""
    name, best = min(totals.items(), key=lambda kv: kv[1])
    return "%.4g" % auto, "%.4g (%s)" % (best, name), "%.3f" % (auto / best)


def scale_rows(shardc, tmp, time_limit):
    """--scale: the training steps of issue #28's solver targets."""
    limit = (["--auto-shard-time-limit", str(time_limit)] if time_limit > 0
             else [])
    print("| model | layers | mesh | budget | solve+compile wall s | cpu s | "
          "max RSS MiB | auto est_time_s | best hand-written est_time_s | "
          "ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = [("Llama step (adam)", n, "data=2,model=2", None)
            for n in (1, 2, 4, 8)]
    rows += [("GPT-3-shaped step (adam)", n, "data=16,model=8", "80G")
             for n in (2, 8, 96)]
    # 96 layers of fp32 Adam need more than 80G a device without
    # recompute (the row above fails, naming the least peak found); a
    # budget above its least peak and below its unbudgeted plan's peak
    # makes the byte-price probes run.
    rows += [("GPT-3-shaped step (adam)", 96, "data=16,model=8", "150G")]
    for model, layers, mesh, budget in rows:
        path = os.path.join(tmp, "scale.json")
        with open(path, "w") as f:
            if budget is None:
                subprocess.run([sys.executable,
                                os.path.join(HERE, "llama_graph.py"),
                                "--layers", str(layers)], stdout=f,
                               check=True)
            else:
                json.dump(gpt3_graph_of(layers), f)
        step = ["--train-step=adam"]
        extra = ["--memory-budget", budget] if budget else []
        code, out, wall, cpu, rss = timed(
            [shardc, "compile", path] + step + ["--auto-shard", "--propagate",
                                                "-o", os.devnull] + extra +
            limit)
        if code != 0:
            print("| %s | %d | %s | %s | failed: %s | | | | | |" %
                  (model, layers, mesh, budget or "-",
                   out.strip().splitlines()[0] if out.strip() else code))
            continue
        auto = best = ratio = ""
        if budget is None:
            auto, best, ratio = explain_ratio(shardc, path, step + limit)
        print("| %s | %d | %s | %s | %.2f | %.2f | %.0f | %s | %s | %s |" %
              (model, layers, mesh, budget or "-", wall, cpu, rss, auto,
               best, ratio))
        sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", default="build")
    p.add_argument("--layers", type=int, nargs="+", default=[4, 24, 96])
    p.add_argument("--gpt-layers", type=int, nargs="*", default=[2, 24, 96])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--time-limit", type=float, default=0,
                   help="--auto-shard-time-limit (default: none)")
    p.add_argument("--write-gpt", type=int, metavar="LAYERS",
                   help="print the GPT forward graph of LAYERS layers, "
                   "without annotations, and exit (tests plan it)")
    p.add_argument("--write-gpt3", type=int, metavar="LAYERS",
                   help="print the GPT-3-shaped graph of LAYERS layers on "
                   "data=16 x model=8, without annotations, and exit")
    p.add_argument("--whole-plan", action="store_true",
                   help="time the GPT-3 175B whole-plan search instead")
    p.add_argument("--every-mesh", action="store_true",
                   help="with --whole-plan: also time the unannotated "
                   "search with --solve-every-mesh")
    p.add_argument("--scale", action="store_true",
                   help="the Llama 1/2/4/8-layer and GPT-3-shaped "
                   "2/8/96-layer (80G budget) Adam steps instead: solve "
                   "seconds, max "
                   "RSS, quality")
    args = p.parse_args()
    if args.whole_plan:
        whole_plan(os.path.join(args.build, "bin", "shardc"), args.every_mesh)
        return
    if args.scale:
        with tempfile.TemporaryDirectory() as tmp:
            scale_rows(os.path.join(args.build, "bin", "shardc"), tmp,
                       args.time_limit)
        return
    if args.write_gpt3 is not None:
        json.dump(gpt3_graph_of(args.write_gpt3), sys.stdout, indent=1)
        return
    if args.write_gpt is not None:
        json.dump(gpt_graph_of(args.write_gpt, "none"), sys.stdout, indent=1)
        return
    shardc = os.path.join(args.build, "bin", "shardc")
    meshes = [("model=4", ["dp", "fsdp", "megatron"]),
              ("data=4,model=2", ["dp", "fsdp", "megatron", "2d"])]
    print("| model | layers | mesh | solve+compile wall s | cpu s | "
          "auto est_time_s | best hand-written est_time_s | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for layers in args.layers:
            for mesh, layouts in meshes:
                measure(shardc, tmp, "MLP step", layers, mesh,
                        lambda path, layout: write_graph(
                            path, layers, args.batch, args.hidden, mesh,
                            layout),
                        layouts, ["--train-step=sgd"], args.time_limit)
        for layers in args.gpt_layers:
            measure(shardc, tmp, "GPT forward", layers, "data=2,model=2",
                    lambda path, layout: write_gpt(path, layers, layout),
                    ["dp", "megatron"], [], args.time_limit)


if __name__ == "__main__":
    main()
