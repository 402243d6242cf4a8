"""Compares `shardc estimate --report-json` reports with published figures.

usage: check_estimate_figures.py zero REPORT EXPECTED_GB
  Sums the model states (parameters + gradients + optimizer state) of the
  report and checks that, in GB (1e9 bytes) rounded to 0.1 as the paper
  prints them, they are EXPECTED_GB.
usage: check_estimate_figures.py megatron SHARDC MACHINE WORK_DIR [ROWS]
  Estimates every row of Megatron-LM's Table 1 (or the rows listed, from
  0) and checks tflops_per_device within 15 % of the measured figure.
usage: check_estimate_figures.py autoshard SHARDC MACHINE WORK_DIR [ROWS]
  For every row of Megatron-LM's Table 1 (or those listed), the plan
  `estimate --auto-shard` chooses for its devices and global batch is at
  least as fast, by the estimate, as the paper's (t, p, d) with full
  recompute and micro-batch 1.
usage: check_estimate_figures.py agree SIMULATE_REPORT ESTIMATE_REPORT
  The f32 estimate and the simulation of the same training step agree on
  the model states by role and on the FLOPs of device 0, exactly.
usage: check_estimate_figures.py activations SHARDC MACHINE WORK_DIR
  The activation bytes one GPT layer keeps for its backward pass, against
  Korthikanti et al. 2022, term by term.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GPT_GRAPH = os.path.join(HERE, "..", "..", "..", "examples", "gpt",
                         "gpt_graph.py")

# Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on
# GPU Clusters Using Megatron-LM" (arXiv 2104.04473), Table 1: GPT models
# with vocabulary 51,200 and sequence 2,048 on DGX A100 80GB (Selene),
# mixed precision, full activation recomputation. Columns: parameters
# (billions), heads, hidden, layers, tensor-parallel t, pipeline p, GPUs n,
# global batch B, measured TFLOP/s per GPU.
MEGATRON_TABLE_1 = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163),
]
# The micro-batch size: the table does not give it; 1 sequence.
MICRO_BATCH = 1


def zero(report_path, expected_gb):
    memory = json.load(open(report_path))["memory"]
    states = (memory["parameters"] + memory["gradients"]
              + memory["optimizer_state"])
    got = round(states / 1e9, 1)
    status = "OK" if got == float(expected_gb) else "MISMATCH"
    print(f"model states {states:.0f} B = {got} GB, paper {expected_gb} GB "
          f"{status}")
    return 0 if status == "OK" else 1


def megatron(shardc, machine, work, rows=None):
    os.makedirs(work, exist_ok=True)
    worst = 0.0
    for i, (P, a, h, l, t, p, n, B, measured) in enumerate(MEGATRON_TABLE_1):
        if rows is not None and i not in rows:
            continue
        d = n // (t * p)
        m = B // (MICRO_BATCH * d)
        model = os.path.join(work, f"row{i}.json")
        report = os.path.join(work, f"row{i}.report.json")
        subprocess.run([sys.executable, GPT_GRAPH, "scale", "--layers",
                        str(l), "--hidden", str(h), "--heads", str(a),
                        "--seq", "2048", "--vocab", "51200", "--micro-batch",
                        str(MICRO_BATCH), "-t", str(t), "-p", str(p), "-d",
                        str(d), "-o", model], check=True)
        cmd = [shardc, "estimate", model, "--machine", machine,
               "--precision=bf16-mixed", "--recompute=full",
               "--microbatches", str(m), "--report-json", report]
        if p > 1:
            cmd += ["--pipeline-axis", "pipe"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        r = json.load(open(report))
        got = r["tflops_per_device"]
        err = got / measured - 1
        worst = max(worst, abs(err))
        print(f"row {i}: {P}B t={t} p={p} d={d} m={m}: estimate "
              f"{got:.1f} TFLOP/s, measured {measured} ({100 * err:+.1f} %); "
              f"params {r['parameters'] / 1e9:.1f}B, bubble "
              f"{100 * r['bubble_fraction']:.1f} %, exposed comm "
              f"{r['exposed_communication_s'] / r['step_time_s'] * 100:.1f} %, "
              f"peak {r['peak_bytes_per_device'] / 1e9:.1f} GB")
    status = "OK" if worst <= 0.15 else "MISMATCH"
    print(f"largest deviation {100 * worst:.1f} % (limit 15 %) {status}")
    return 0 if status == "OK" else 1


def autoshard(shardc, machine, work, rows=None):
    os.makedirs(work, exist_ok=True)
    ok = True
    for i, (P, a, h, l, t, p, n, B, measured) in enumerate(MEGATRON_TABLE_1):
        if rows is not None and i not in rows:
            continue
        d = n // (t * p)
        paper = os.path.join(work, f"row{i}.paper.json")
        model = os.path.join(work, f"row{i}.model.json")
        shape = ["--layers", str(l), "--hidden", str(h), "--heads", str(a),
                 "--seq", "2048", "--vocab", "51200"]
        # The paper's plan: the graph's batch is one micro-batch on every
        # data rank (b*d), m = B/(b*d) micro-batches.
        subprocess.run([sys.executable, GPT_GRAPH, "scale", *shape,
                        "--micro-batch", str(MICRO_BATCH), "-t", str(t),
                        "-p", str(p), "-d", str(d), "-o", model], check=True)
        cmd = [shardc, "estimate", model, "--machine", machine,
               "--precision=bf16-mixed", "--recompute=full",
               "--microbatches", str(B // (MICRO_BATCH * d)),
               "--report-json", paper]
        if p > 1:
            cmd += ["--pipeline-axis", "pipe"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        # The search: the same model, no mesh given (the generator's mesh
        # is replaced by each candidate's).
        chosen = os.path.join(work, f"row{i}.chosen.json")
        out = subprocess.run([shardc, "estimate", model, "--machine", machine,
                              "--precision=bf16-mixed", "--auto-shard",
                              "--devices", str(n), "--global-batch", str(B),
                              "--report-json", chosen], check=True,
                             capture_output=True, text=True).stdout
        ref, got = json.load(open(paper)), json.load(open(chosen))
        plan = got["plan"]
        axes = dict(plan["mesh"]["axes"])
        # At least as fast: the same plan prices the same, so no slack.
        good = got["step_time_s"] <= ref["step_time_s"]
        ok &= good
        zero = ",".join(plan["zero_axes"]) or "none"
        print(f"row {i}: {P}B on {n}: paper t={t} p={p} d={d} b=1 full "
              f"{ref['step_time_s']:.4g} s ({ref['tflops_per_device']:.1f} "
              f"TFLOP/s); chosen t={axes.get('model', 1)} "
              f"p={axes.get('pipe', 1)} d={axes.get('data', 1)} "
              f"b={plan['micro_batch_size']} {plan['recompute']} "
              f"zero={zero} sp={plan['sequence_parallel']} "
              f"{plan['pipeline']['schedule']}"
              f"{plan['pipeline'].get('virtual_stages', '')} "
              f"{got['step_time_s']:.4g} s ({got['tflops_per_device']:.1f} "
              f"TFLOP/s, {100 * (ref['step_time_s'] / got['step_time_s'] - 1):+.1f} % "
              f"faster) {'OK' if good else 'SLOWER'}")
        for line in out.splitlines():
            if line.startswith("  "):
                print("   ", line.strip())
    return 0 if ok else 1


def activations(shardc, machine, work):
    """Per layer = saved activations of 2 layers minus those of 1 (the
    embedding and the head cancel), in units of s*b*h bytes."""
    os.makedirs(work, exist_ok=True)
    s, b, h, a = 128, 2, 256, 8
    ok = True
    for t in (1, 2, 4):
        per_layer = {}
        for recompute in ("none", "selective", "full"):
            saved = []
            for layers in (1, 2):
                model = os.path.join(work, f"t{t}l{layers}.json")
                report = os.path.join(work, f"t{t}l{layers}{recompute}.json")
                if not os.path.exists(model):
                    subprocess.run([sys.executable, GPT_GRAPH, "scale",
                                    "--layers", str(layers), "--hidden",
                                    str(h), "--heads", str(a), "--seq",
                                    str(s), "--vocab", "512", "--micro-batch",
                                    str(b), "-t", str(t), "-o", model],
                                   check=True)
                subprocess.run([shardc, "estimate", model, "--machine",
                                machine, "--precision=bf16-mixed",
                                f"--recompute={recompute}", "--report-json",
                                report], check=True, stdout=subprocess.DEVNULL)
                saved.append(json.load(open(report))
                             ["saved_activations_per_microbatch"])
            per_layer[recompute] = (saved[1] - saved[0]) / (s * b * h)
        core = a * s / (h * t)
        # Korthikanti et al. 2022, "Reducing Activation Recomputation in
        # Large Transformer Models" (arXiv 2205.05198), Table 2, 16-bit
        # activations, in units of sbh, as printed: (replicated, split by
        # t, attention core). The replicated 10 = LayerNorm inputs 4 +
        # their outputs 4 + two dropout masks 2; the core's 5 = softmax
        # output 2 + dropout mask 1 + dropout output 2.
        printed = {"none": (10, 24 / t, 5 * core),
                   "selective": (10, 24 / t, 0), "full": (2, 0, 0)}
        # The same terms without dropout, shardc's op set: the masks and
        # the dropout output go (the V contraction reads the softmax
        # output itself).
        paper = {"none": (8, 24 / t, 2 * core),
                 "selective": (8, 24 / t, 0), "full": (2, 0, 0)}
        # shardc: the same terms (softmax and LayerNorm are differentiated
        # as fused kernels are: the backward pass reads the softmax
        # output, each LayerNorm's input and gamma).
        ours = paper
        for recompute, got in per_layer.items():
            want = sum(ours[recompute])
            good = abs(got - want) < 1e-9
            p, q = paper[recompute], printed[recompute]
            # Term by term: within 10 % of the paper's without dropout.
            close = all(abs(x - y) <= 0.1 * y
                        for x, y in zip(ours[recompute], p))
            ok &= good and close
            print(f"t={t} {recompute}: {got:g} sbh per layer = "
                  f"{ours[recompute][0]:g} + {ours[recompute][1]:g} + "
                  f"{ours[recompute][2]:g}; paper without dropout "
                  f"{p[0]:g} + {p[1]:g} + {p[2]:g} = {sum(p):g} "
                  f"({100 * (got / sum(p) - 1):+.1f} %), as printed "
                  f"{q[0]:g} + {q[1]:g} + {q[2]:g} = {sum(q):g} "
                  f"{'OK' if good and close else 'MISMATCH'}")
    return 0 if ok else 1


def agree(simulate_path, estimate_path):
    sim = json.load(open(simulate_path))
    est = json.load(open(estimate_path))
    roles = sim["training_bytes_per_device"][0]
    pairs = [(role, roles[role], est["memory"][role])
             for role in ("parameters", "gradients", "optimizer_state")]
    pairs.append(("flops", sim["flops_per_device"][0],
                  est["flops_per_device"]))
    bad = [f"{k}: simulate {a}, estimate {b}" for k, a, b in pairs if a != b]
    print("; ".join(f"{k} {a:g}" for k, a, _ in pairs) +
          (" agree" if not bad else " DISAGREE: " + "; ".join(bad)))
    return 0 if not bad else 1


def recompute(sim_none, sim_sel, sim_full, est_none, est_sel, est_full):
    """Recompute lowers memory and adds FLOPs: simulate's peak (it runs the
    program, freeing each value after its last use) and the estimate's
    saved activations go down from none to selective to full, and the FLOPs
    simulate counts go up by the forward FLOPs the estimate says are
    recomputed (the ops marked shardc.recomputed)."""
    sims = [json.load(open(p)) for p in (sim_none, sim_sel, sim_full)]
    ests = [json.load(open(p)) for p in (est_none, est_sel, est_full)]
    ok = True
    peaks = [s["peak_bytes_per_device"][0] for s in sims]
    good = peaks[0] > peaks[1] > peaks[2]
    ok &= good
    print(f"simulate peak bytes/device: none {peaks[0]} > selective "
          f"{peaks[1]} > full {peaks[2]} {'OK' if good else 'MISMATCH'}")
    saved = [e["saved_activations_per_microbatch"] for e in ests]
    good = saved[0] > saved[1] > saved[2]
    ok &= good
    print(f"saved activations/micro-batch: none {saved[0]:.0f} > selective "
          f"{saved[1]:.0f} > full {saved[2]:.0f} {'OK' if good else 'MISMATCH'}")
    if ests[0]["recompute_flops_per_device"] != 0:
        ok = False
        print("none: recompute flops MISMATCH")
    for mode, s, e in (("selective", sims[1], ests[1]),
                       ("full", sims[2], ests[2])):
        added = s["flops_per_device"][0] - sims[0]["flops_per_device"][0]
        good = added > 0 and added == e["recompute_flops_per_device"] and \
            e["model_flops_per_device"] == ests[0]["model_flops_per_device"]
        ok &= good
        print(f"{mode}: simulate's flops + {added} = the estimate's recompute "
              f"flops {'OK' if good else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "agree":
        sys.exit(agree(sys.argv[2], sys.argv[3]))
    if sys.argv[1] == "activations":
        sys.exit(activations(sys.argv[2], sys.argv[3], sys.argv[4]))
    if sys.argv[1] == "autoshard":
        rows = ([int(x) for x in sys.argv[5].split(",")]
                if len(sys.argv) > 5 else None)
        sys.exit(autoshard(sys.argv[2], sys.argv[3], sys.argv[4], rows))
    if sys.argv[1] == "recompute":
        sys.exit(recompute(*sys.argv[2:8]))
    if sys.argv[1] == "zero":
        sys.exit(zero(sys.argv[2], sys.argv[3]))
    if sys.argv[1] == "megatron":
        rows = ([int(x) for x in sys.argv[5].split(",")]
                if len(sys.argv) > 5 else None)
        sys.exit(megatron(sys.argv[2], sys.argv[3], sys.argv[4], rows))
    sys.exit(f"unknown check {sys.argv[1]}")
