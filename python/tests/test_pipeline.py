"""Pipelined training from Python (shardc.compile(..., pipeline_axis=)):
the same workflow as `shardc pipeline`, so the same check on the same model
and inputs prints the same max_rel_err; the whole parameters it returns are
those of the unsharded engine's training steps; and on mpi (one rank per
device, under mpirun) every rank gets the parameters the simulator trains."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import shardc
from shardc._compile import _tool_environment
from shardc._tool import SHARDC_TOOL
from conftest import ROOT

MLP = os.path.join(ROOT, "examples", "mlp8_pipeline_3d.json")
MPIRUN = (os.environ.get("SHARDC_MPIRUN")
          or os.path.join(ROOT, "scripts", "mpirun-local.sh"))
MPI_PROGRAM = os.path.join(os.path.dirname(__file__), "mpi_pipeline_program.py")


def shardc_pipeline(*args):
    """`shardc pipeline`'s max_rel_err as it prints it (%.3g)."""
    p = subprocess.run([SHARDC_TOOL, "pipeline", *args], text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300, env=_tool_environment())
    assert p.returncode == 0, p.stdout + p.stderr
    return re.search(r"max_rel_err=(\S+) OK", p.stdout).group(1)


def mlp_inputs():
    rng = np.random.default_rng(7)
    inputs = {n: rng.uniform(-1, 1, (32, 32)).astype(np.float32)
              for n in ("x", "y")}
    for i in range(8):
        inputs[f"w{i}"] = (rng.standard_normal((32, 32)) / np.sqrt(32)
                           ).astype(np.float32)
    return inputs


def test_threads_train_as_shardc_pipeline_does(tmp_path):
    inputs = mlp_inputs()
    files = []
    for name, array in inputs.items():
        np.save(tmp_path / f"{name}.npy", array)
        files.append(f"{name}={tmp_path / f'{name}.npy'}")
    model = shardc.compile(MLP, backend="threads", microbatches=4,
                           schedule="gpipe")
    got = model.train(inputs, steps=2)
    assert got.ok, got.mismatches
    cli = shardc_pipeline(MLP, "--backend", "threads", "--microbatches", "4",
                          "--schedule", "gpipe", "--steps", "2", "--inputs",
                          *files)
    assert f"{got.max_rel_err:.3g}" == cli
    assert got.report["pipeline"]["stages"] == 2
    assert got.report["backend"] == "threads"

    # The unsharded engine's two SGD steps from the same values.
    engine = shardc.compile(MLP, backend="sim")
    engine.load_checkpoint({n: a for n, a in inputs.items() if n[0] == "w"})
    engine.train_step(inputs["x"], inputs["y"], lr=0.01)
    loss = engine.train_step(inputs["x"], inputs["y"], lr=0.01)
    want = engine.parameters()
    scale = max(float(np.abs(a).max()) for a in want.values())
    for name, array in want.items():
        assert shardc.max_rel_err(got.parameters[name], array, scale) <= 1e-4
    assert abs(got.loss - loss) <= 1e-4 * abs(loss)


def test_a_seed_draws_what_shardc_pipeline_draws():
    model = shardc.compile(MLP, backend="sim", microbatches=2)
    got = model.train(seed=3, optimizer="adam")
    assert got.ok, got.mismatches
    cli = shardc_pipeline(MLP, "--microbatches", "2", "--optimizer", "adam",
                          "--seed", "3")
    assert f"{got.max_rel_err:.3g}" == cli
    assert got.report["pipeline"]["step_time_s"] > 0


def test_mpi_ranks_get_the_simulators_parameters():
    p = subprocess.run([MPIRUN, "-n", "4", sys.executable, MPI_PROGRAM],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    # mpirun forwards each rank's output as it comes: one rank's line may
    # end only after another's, so a report is matched by its own shape.
    reports = re.findall(r"rank (\d+): OK max_rel_err=([0-9.]+(?:e[+-]\d+)?)",
                         p.stdout)
    assert sorted(r for r, _ in reports) == ["0", "1", "2", "3"], p.stdout
    # Every rank reports the job's check, which shardc pipeline prints.
    mlp4 = os.path.join(ROOT, "examples", "mlp8_pipeline.json")
    cli = subprocess.run([MPIRUN, "-n", "4", SHARDC_TOOL, "pipeline", mlp4,
                          "--backend", "mpi", "--microbatches", "4",
                          "--seed", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, timeout=300,
                         env=_tool_environment())
    assert cli.returncode == 0, cli.stdout + cli.stderr
    printed = re.search(r"max_rel_err=(\S+) OK", cli.stdout).group(1)
    assert {e for _, e in reports} == {printed}


def test_options_and_inputs_are_checked():
    with pytest.raises(ValueError, match="unknown schedule 'zigzag'"):
        shardc.compile(MLP, schedule="zigzag")
    with pytest.raises(ValueError, match="unknown recompute 'most'"):
        shardc.compile(MLP, microbatches=2, recompute="most")
    with pytest.raises(ValueError, match="precision= does not combine"):
        shardc.compile(MLP, microbatches=2, precision="bf16-mixed")
    with pytest.raises(ValueError, match="do not combine with pipeline_axis"):
        shardc.compile(MLP, auto_shard=True, microbatches=2)
    model = shardc.compile(MLP, microbatches=2)
    with pytest.raises(shardc.ShardcError, match="input 'x' has no value"):
        model.train()
    with pytest.raises(shardc.ShardcError, match="not an axis|pipeline axis"):
        shardc.compile(MLP, pipeline_axis="stage").train(seed=0)


def gpt_on_two_stages():
    """examples/gpt_tiny.json on pipe=2, its block layout dropped."""
    with open(os.path.join(ROOT, "examples", "gpt_tiny.json")) as f:
        graph = json.load(f)
    graph["mesh"]["axes"] = [["pipe", 2]]
    for value in graph["inputs"] + graph["outputs"]:
        value.pop("sharding", None)
    return graph


@pytest.mark.parametrize("backend", ["sim", "threads"])
def test_recompute_trains_the_same_bits(backend):
    # compile(recompute=) is `shardc pipeline --recompute`: the copies are
    # the forward ops themselves, so the parameters are the same bits.
    trained = {}
    for recompute in ("none", "selective", "full"):
        model = shardc.compile(gpt_on_two_stages(), backend=backend,
                               microbatches=2, recompute=recompute)
        got = model.train(seed=0, steps=2, optimizer="adam")
        assert got.ok, got.mismatches
        trained[recompute] = got.parameters
    for recompute in ("selective", "full"):
        for name, array in trained["none"].items():
            assert np.array_equal(trained[recompute][name], array), name
