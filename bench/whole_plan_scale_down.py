#!/usr/bin/env python3
"""Scale-down check of the whole-plan search (docs/whole-plan.md): on this machine's preset, is the plan it picks the fastest
measured one?

The model of bench/transformer_bench.py (examples/gpt/gpt_graph.py at
d_model 768, 12 heads, seq 256, 2 layers, vocab 8192; 27M parameters),
Adam, f32, a step of 4 sequences on 2 devices. `shardc estimate
--auto-shard --machine machines/this-cpu.json --devices 2 --global-batch 4`
chooses among every plan; `shardc train` runs a plan's mesh and shardings
but neither its pipeline nor its micro-batches, so the plans measured are
those of one micro-batch and no pipeline: data=2 and model=2, the two
hand-written layouts (the model's Megatron annotations on the mesh given).
Each is timed on the threads backend as the difference between a run of
--steps N+1 and one of 1 step (compilation, start-up and the first step
cancel), and estimated with `estimate --plan`.

    python3 bench/whole_plan_scale_down.py --build build [--steps 3]
        [--unannotated]

With --unannotated the search reads the model with its annotations
stripped, so the tensor auto-sharder chooses each mesh's tensor shardings
(docs/whole-plan.md, "Tensor shardings per mesh"); the chosen plan
(its mesh and solved shardings, at one micro-batch) is timed beside the
two hand-written layouts.

Prints the search's choice, each layout's estimated and measured seconds
per step, and which is fastest by each.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples", "gpt"))
import gpt_graph  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "bench"))
from openblas_core import add_openblas_core_option, choose_openblas_core  # noqa: E402,E501

MACHINE = os.path.join(ROOT, "machines", "this-cpu.json")
BATCH = 4


def timed(cmd):
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--unannotated", action="store_true",
                   help="search the model without its annotations")
    add_openblas_core_option(p)
    args = p.parse_args()
    shardc = os.path.join(args.build, "bin", "shardc")
    print(choose_openblas_core(shardc, args.openblas_core == "as-is"))
    c = gpt_graph.Config(vocab=8192, d_model=768, heads=12, seq=256,
                         batch=BATCH, layers=2, data=1, model=1)
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.json")
        g = gpt_graph.graph(c)
        if args.unannotated:
            for value in g["inputs"] + g["ops"] + g.get("outputs", []):
                value.pop("sharding", None)
        with open(model, "w") as f:
            json.dump(g, f)
        report = os.path.join(tmp, "search.json")
        out = subprocess.run(
            [shardc, "estimate", model, "--machine", MACHINE, "--auto-shard",
             "--devices", "2", "--global-batch", str(BATCH),
             "--report-json", report, "--save-plan",
             os.path.join(tmp, "chosen.plan.json")], check=True,
            capture_output=True,
            text=True).stdout
        print(out, end="")
        chosen = json.load(open(report))["plan"]
        axes = dict(chosen["mesh"]["axes"])
        rows = []
        layouts = [("data=2", 2, 1), ("model=2", 1, 2)]
        # A chosen plan the hand-written layouts do not cover (sequence
        # parallelism) is timed as saved.
        if chosen["sequence_parallel"] and axes.get("pipe", 1) == 1:
            layouts.append(("chosen plan (sequence parallel)", None, None))
        elif "tensor_shardings" in chosen and axes.get("pipe", 1) == 1:
            layouts.append(("chosen plan (solved shardings)", None, None))
        for name, data, tensor in layouts:
            plan = os.path.join(tmp, f"{name}.plan.json")
            if data is None:
                # The chosen plan's mesh and rules at one micro-batch of
                # the whole batch, as train runs it (its run fields, which
                # name the search's micro-batches, left out).
                saved = json.load(open(os.path.join(tmp, "chosen.plan.json")))
                plan = os.path.join(tmp, "chosen-one.plan.json")
                with open(plan, "w") as f:
                    json.dump({"mesh": saved["mesh"],
                               "rules": saved["rules"]}, f)
            rules = [[i["name"], i["sharding"]]
                     for i in gpt_graph.graph(c)["inputs"] if "sharding" in i]
            if data is not None:
                with open(plan, "w") as f:
                    json.dump({"mesh": {"name": "mesh", "axes": [
                        ["data", data], ["model", tensor]]}, "rules": rules},
                        f)
            est = os.path.join(tmp, f"{name}.report.json")
            subprocess.run([shardc, "estimate", model, "--plan", plan,
                            "--machine", MACHINE, "--report-json", est],
                           check=True, stdout=subprocess.DEVNULL)
            train = [shardc, "train", model, "--plan", plan, "--backend",
                     "threads", "--seed", "0", "--check=false"]
            one = timed(train + ["--steps", "1"])
            many = timed(train + ["--steps", str(args.steps + 1)])
            # The chosen mesh (its micro-batches aside, which train does
            # not run).
            is_chosen = data is None or (
                axes.get("pipe", 1) == 1 and axes["data"] == data
                and axes["model"] == tensor
                and not chosen["sequence_parallel"]
                and "tensor_shardings" not in chosen)
            rows.append((name, json.load(open(est))["step_time_s"],
                         (many - one) / args.steps, is_chosen))
        print("| layout | estimated s/step | measured s/step (threads) | "
              "the chosen mesh |")
        print("|---|---|---|---|")
        for name, est, measured, is_chosen in rows:
            print(f"| {name} | {est:.4g} | {measured:.4g} | "
                  f"{'yes' if is_chosen else ''} |")
        fastest = min(rows, key=lambda r: r[2])
        print(f"fastest measured: {fastest[0]}; fastest estimated: "
              f"{min(rows, key=lambda r: r[1])[0]}; the search chose mesh "
              f"{chosen['mesh']['axes']}, micro-batch "
              f"{chosen['micro_batch_size']} x {chosen['microbatches']}"
              + ("" if chosen["microbatches"] == 1 else
                 " (train runs one micro-batch per step: measured at one)")
              + ("" if any(r[3] for r in rows) else
                 " (a pipeline, which train does not run)"))


if __name__ == "__main__":
    main()
