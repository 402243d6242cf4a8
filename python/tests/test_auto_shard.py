"""shardc.compile(auto_shard=True): the small-batch MLP of
examples/auto_shard/mlp_graph.py, unannotated, planned for 4 devices as
`shardc train --auto-shard` plans it, gets Megatron's layout and trains
as PyTorch and the unsharded program do; budgets and bad arguments."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import shardc
from conftest import ROOT

EXAMPLE = os.path.join(ROOT, "examples", "python", "auto_shard_mlp.py")
MPIRUN = (os.environ.get("SHARDC_MPIRUN")
          or os.path.join(ROOT, "scripts", "mpirun-local.sh"))
HIDDEN, BATCH, LR, STEPS = 256, 8, 0.1, 3
MEGATRON = {"x": [None, None], "y": [None, None],
            "w0": [None, "model"], "w1": ["model", None],
            "w2": [None, "model"], "w3": ["model", None], "loss": []}


def mlp_graph():
    out = subprocess.run(
        [sys.executable,
         os.path.join(ROOT, "examples", "auto_shard", "mlp_graph.py"),
         "--batch", str(BATCH), "--hidden", str(HIDDEN), "--mesh", "model=4"],
        check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def data():
    rng = np.random.default_rng(1)
    params = {f"w{i}": rng.standard_normal((HIDDEN, HIDDEN), np.float32) / 16
              for i in range(4)}
    x, y = (rng.standard_normal((BATCH, HIDDEN), np.float32)
            for _ in range(2))
    return params, x, y


def train(engine, params, x, y):
    engine.load_checkpoint(params)
    losses = [engine.train_step(x, y, optimizer="sgd", lr=LR)
              for _ in range(STEPS)]
    return np.array(losses, np.float32), engine.parameters()


def torch_train(params, x, y):
    w = [torch.tensor(params[f"w{i}"], requires_grad=True) for i in range(4)]
    losses = []
    for _ in range(STEPS):
        h = torch.tensor(x)
        for i, wi in enumerate(w):
            h = h @ wi if i == 3 else torch.relu(h @ wi)
        loss = ((h - torch.tensor(y)) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for wi in w:
                wi -= LR * wi.grad
                wi.grad = None
        losses.append(loss.item())
    return (np.array(losses, np.float32),
            {f"w{i}": wi.detach().numpy() for i, wi in enumerate(w)})


@pytest.mark.parametrize("backend", ["sim", "threads"])
def test_unannotated_mlp_gets_megatron_and_trains_as_torch(backend):
    graph = mlp_graph()
    assert not any("sharding" in t for t in graph["inputs"])
    engine = shardc.compile(graph, auto_shard=True, backend=backend)
    assert engine.shardings() == MEGATRON
    params, x, y = data()
    got_losses, got = train(engine, params, x, y)
    # Each weight split 4 ways: a quarter of the 4 x 256 KiB per device.
    assert engine.memory()[0]["parameters"] == 4 * HIDDEN * HIDDEN * 4 // 4

    want_losses, want = torch_train(params, x, y)
    assert want_losses[-1] < want_losses[0]
    assert shardc.max_rel_err(got_losses, want_losses) <= 1e-5
    # The unsharded program (the graph as written: everything replicated)
    # takes the same steps.
    plain = shardc.compile(graph, backend=backend)
    assert plain.shardings()["w0"] == [None, None]
    plain_losses, plain_params = train(plain, params, x, y)
    assert shardc.max_rel_err(got_losses, plain_losses) <= 1e-5
    for name in params:
        assert shardc.max_rel_err(got[name], want[name]) <= 1e-5, name
        assert shardc.max_rel_err(got[name], plain_params[name]) <= 1e-5


def test_a_model_file_and_the_reports_follow_the_plan(tmp_path):
    """A model given by path is planned the same; explain() and simulate()
    run the tool on the engine's layouts (as a plan), not on the
    unannotated model."""
    path = tmp_path / "mlp.json"
    path.write_text(json.dumps(mlp_graph()))
    engine = shardc.compile(str(path), auto_shard=True)
    assert engine.shardings() == MEGATRON
    assert engine.mesh == {"name": "mesh", "axes": [("model", 4)]}
    report = engine.explain()
    assert ('input "w1" is #shardc.sharding<@mesh, [{"model"}, {}]>'
            in report), report
    simulated = engine.simulate(seed=0)
    assert simulated["devices"] == 4
    assert [c["kind"] for c in simulated["collectives"]] == ["all_reduce"] * 2


def test_the_docs_example_runs():
    p = subprocess.run([sys.executable, EXAMPLE], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "w0: [None, 'model']\nw1: ['model', None]\n" in p.stdout
    assert "equal PyTorch's" in p.stdout


def test_on_mpi_every_rank_plans_the_same():
    p = subprocess.run([MPIRUN, "-n", "4", sys.executable, EXAMPLE, "mpi"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("w1: ['model', None]") == 4, p.stdout
    assert p.stdout.count("(mpi): losses and parameters equal PyTorch's") == 4


def test_a_budget_no_plan_fits_names_the_smallest_plan_found():
    graph = mlp_graph()
    # The same message on any machine: the solver's limits are counts of
    # work, not seconds (docs/auto-sharding.md, "Limits").
    with pytest.raises(shardc.ShardcError,
                       match=r"found no sharding plan within "
                             r"--memory-budget=1024 bytes per device; the "
                             r"smallest plan found needs \d+ bytes \(and "
                             r"none needs less than \d+\)") as e:
        shardc.compile(graph, auto_shard=True, memory_budget="1K")
    found = int(re.search(r"found needs (\d+) bytes", str(e.value)).group(1))
    bound = int(re.search(r"less than (\d+)\)", str(e.value)).group(1))
    assert 1024 < bound <= found
    # That smallest is a budget some plan fits, given as bytes.
    engine = shardc.compile(graph, auto_shard=True, memory_budget=found)
    assert engine.shardings()["w0"] != [None, None]
    # A budget every plan fits, with a suffix, leaves the choice as it was.
    assert shardc.compile(graph, auto_shard=True,
                          memory_budget="8M").shardings() == MEGATRON
    # "none" is no budget: the default machine gives no device memory, so
    # it is the plan of no memory_budget= at all.
    assert shardc.compile(graph, auto_shard=True,
                          memory_budget="none").shardings() == MEGATRON


@pytest.mark.parametrize("kwargs, error, message", [
    ({"auto_shard": "yes"}, TypeError, "auto_shard= is True or False"),
    ({"memory_budget": "8M"}, ValueError, "need auto_shard=True"),
    ({"auto_shard_time_limit": 5}, ValueError, "need auto_shard=True"),
    ({"auto_shard": True, "memory_budget": "8Q"}, ValueError,
     "memory_budget: expected a byte count with an optional K, M or G "
     "suffix, or 'none', got '8Q'"),
    ({"auto_shard": True, "memory_budget": 0}, ValueError,
     "memory_budget must be a positive number of bytes"),
    ({"auto_shard": True, "memory_budget": 1.5}, TypeError,
     "memory_budget= is bytes"),
    ({"auto_shard": True, "auto_shard_time_limit": 0}, ValueError,
     "auto_shard_time_limit must be positive"),
    ({"auto_shard": True, "auto_shard_time_limit": "1"}, TypeError,
     "auto_shard_time_limit= is seconds"),
])
def test_bad_arguments_raise(kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        shardc.compile(mlp_graph(), **kwargs)
