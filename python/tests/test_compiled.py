"""shardc.compile: the reference MLP compiled for 4 devices on the sim and
threads backends, checked against the reference SingleDevice; training steps
checked against backward; the compiler's reports."""
import json
import os

import numpy as np
import pytest

import shardc
from seed_single_device import SingleDevice, relu

MODEL, HIDDEN, BATCH = 64, 256, 16
RNG = np.random.default_rng(3)
PARAMS = {'layer_0/weights': RNG.standard_normal((MODEL, HIDDEN), np.float32),
          'layer_1/weights': RNG.standard_normal((HIDDEN, MODEL), np.float32)}
X = RNG.standard_normal((BATCH, MODEL), np.float32)
DY = RNG.standard_normal((BATCH, MODEL), np.float32)

# The reference MLP with Megatron's two annotations; propagation does the rest.
SEED_MLP = {
    "mesh": {"name": "mesh", "axes": [["model", 4]]},
    "inputs": [
        {"name": "x", "shape": [BATCH, MODEL]},
        {"name": "layer_0/weights", "shape": [MODEL, HIDDEN], "param": True,
         "sharding": [None, "model"]},
        {"name": "layer_1/weights", "shape": [HIDDEN, MODEL], "param": True}],
    "ops": [{"op": "matmul", "inputs": ["x", "layer_0/weights"], "output": "h"},
            {"op": "relu", "inputs": ["h"], "output": "u"},
            {"op": "matmul", "inputs": ["u", "layer_1/weights"], "output": "z"}],
    "outputs": [{"name": "z", "sharding": [None, None]}]}


def close(a, b):
    return np.allclose(a, b, rtol=1e-4, atol=1e-3)


def seed_reference():
    engine = SingleDevice(MODEL, HIDDEN)
    engine.load_checkpoint(PARAMS)
    return engine.forward(X), engine.backward(DY)


@pytest.mark.parametrize("backend", ["sim", "threads"])
def test_compiled_seed_mlp_matches_single_device(backend):
    engine = shardc.compile(SEED_MLP, backend=backend)
    assert engine.num_devices == 4 and engine.backend == backend
    assert engine.parameter_names == ['layer_0/weights', 'layer_1/weights']
    assert engine.input_names == ['x'] and engine.output_names == ['z']
    engine.load_checkpoint(PARAMS)
    out = engine.forward(X)
    grads = engine.backward(DY)
    want_out, want_grads = seed_reference()
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    assert close(out, want_out)
    assert set(grads) == set(PARAMS)
    for name in PARAMS:
        assert close(grads[name], want_grads[name]), name
    held = engine.parameters()
    assert all(np.array_equal(held[n], PARAMS[n]) for n in PARAMS)
    # Each of the 4 devices holds a quarter of each weight.
    per_device = [m["parameters"] for m in engine.memory()]
    assert per_device == [2 * MODEL * HIDDEN * 4 // 4] * 4


def test_same_bits_on_sim_and_threads():
    outs = []
    for backend in ("sim", "threads"):
        engine = shardc.compile(SEED_MLP, backend=backend)
        engine.load_checkpoint(PARAMS)
        outs.append(engine.forward(X))
    assert np.array_equal(outs[0], outs[1])


def test_plan_and_mesh_reshard_the_same_model(examples):
    """mesh= and plan= turn the Megatron layout into the tutorial's 2D one
    on a 2x2 mesh; the result does not change, the program does."""
    engine = shardc.compile(
        SEED_MLP, mesh={"y": 2, "x": 2},
        plan={"x": ["y", "x"], "layer_0/weights": ["y", "x"],
              "layer_1/weights": ["x", "y"], "z": ["y", "x"]},
        backend="threads")
    engine.load_checkpoint(PARAMS)
    want_out, _ = seed_reference()
    assert close(engine.forward(X), want_out)
    program = engine.spmd_program()
    assert '"y"=2, "x"=2' in program and "reduce_scatter" in program


def test_file_models_and_inference_loop(examples):
    engine = shardc.compile(os.path.join(examples, "mlp_2d_mesh.json"),
                            backend="threads", training=False,
                            parameters=["w0", "w1"])
    assert engine.num_devices == 8
    w0 = RNG.standard_normal((64, 128), np.float32)
    w1 = RNG.standard_normal((128, 64), np.float32)
    engine.load_checkpoint({"w0": w0, "w1": w1})
    xs = [RNG.standard_normal((16, 64), np.float32) for _ in range(3)]

    class Collect:
        def __init__(self):
            self.items = []

        def write(self, item):
            self.items.append(item)

    sink = Collect()
    engine.inference_loop(xs, sink)
    assert len(sink.items) == 3
    for x, z in zip(xs, sink.items):
        assert close(z, relu(x @ w0) @ w1)


def test_train_step_is_sgd_on_the_gradient(examples):
    """train_step's update equals -lr times the gradient backward gives, and
    its loss is the model's loss."""
    path = os.path.join(examples, "mlp_train.json")
    rng = np.random.default_rng(5)
    params = {"w0": rng.standard_normal((16, 64), np.float32) * 0.25,
              "w1": rng.standard_normal((64, 16), np.float32) * 0.125}
    x = rng.standard_normal((32, 16), np.float32)
    y = rng.standard_normal((32, 16), np.float32)

    grad_engine = shardc.compile(path, backend="sim")
    grad_engine.load_checkpoint(params)
    loss = grad_engine.forward(x, y)
    grads = grad_engine.backward(np.ones((), np.float32))
    pred = relu(x @ params["w0"]) @ params["w1"]
    assert abs(float(loss) - ((pred - y) ** 2).sum() / 512) < 1e-4

    step_engine = shardc.compile(path, backend="threads")
    step_engine.load_checkpoint(params)
    step_loss = step_engine.train_step(x, y, optimizer="sgd", lr=0.5)
    assert abs(step_loss - float(loss)) < 1e-5
    after = step_engine.parameters()
    for name in params:
        assert close(after[name], params[name] - 0.5 * grads[name]), name
    losses = [step_engine.train_step(x, y, optimizer="sgd", lr=0.5)
              for _ in range(5)]
    assert losses[-1] < losses[0] < step_loss


def test_compiler_reports(examples):
    engine = shardc.compile(os.path.join(examples, "mlp_2d_mesh.json"),
                            parameters=["w0", "w1"], training=False)
    text = engine.explain()
    assert "reduce_scatter" in text and "w0" in text
    report = engine.simulate(seed=0)
    assert isinstance(report, dict)
    assert json.dumps(report)  # plain JSON data
    graph = json.load(open(os.path.join(examples, "mlp_2d_mesh.json")))
    from_dict = shardc.compile(graph, parameters=["w0", "w1"], training=False)
    assert from_dict.simulate(seed=0) == report
    # Priced on a machine whose "y" groups cross nodes: the same plan, a
    # slower estimate; the alpha-beta preset is the default's.
    machines = os.path.join(examples, "..", "machines")
    two_node = os.path.join(examples, "..", "test", "shardc", "Inputs",
                            "two-node-machine.json")
    assert engine.simulate(seed=0, machine=os.path.join(
        machines, "alpha-beta.json")) == report
    slower = engine.simulate(seed=0, machine=two_node)
    assert slower["est_time_s"] > report["est_time_s"]
    assert slower["comm_bytes_per_device"] == report["comm_bytes_per_device"]
    assert "1.01e-06s" in engine.explain(machine=two_node)


SEED_MLP_MLIR = '''shardc.mesh @mesh ["model"=4]
func.func @main(%x: tensor<16x64xf32> {shardc.name = "x"},
                %w0: tensor<64x256xf32> {shardc.name = "layer_0/weights",
                  shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"}]>},
                %w1: tensor<256x64xf32> {shardc.name = "layer_1/weights"})
    -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  %z = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
  %h = shardc.relu %z : tensor<16x256xf32>
  %out = shardc.matmul %h, %w1 : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
  return %out : tensor<16x64xf32>
}
'''


def test_mlir_models(tmp_path):
    path = tmp_path / "seed.mlir"
    path.write_text(SEED_MLP_MLIR)
    engine = shardc.compile(str(path), backend="threads",
                            parameters=list(PARAMS))
    engine.load_checkpoint(PARAMS)
    want_out, want_grads = seed_reference()
    assert close(engine.forward(X), want_out)
    grads = engine.backward(DY)
    for name in PARAMS:
        assert close(grads[name], want_grads[name]), name

    bad = tmp_path / "bad.mlir"
    bad.write_text(SEED_MLP_MLIR.replace("shardc.relu", "shardc.frobnicate"))
    with pytest.raises(shardc.ShardcError) as info:
        shardc.compile(str(bad))
    assert "bad.mlir:8:" in str(info.value)
    with pytest.raises(ValueError, match="apply to JSON graphs"):
        shardc.compile(str(path), mesh={"model": 2})


@pytest.mark.parametrize("backend", ["sim", "threads"])
def test_train_step_recompute_and_precision(examples, backend):
    """compile(recompute=...) recomputes activations in train_step's step
    without changing a bit of it (docs/recompute.md); precision= builds the
    mixed-precision step; bad names are ValueErrors."""
    path = os.path.join(examples, "gpt_tiny.json")
    rng = np.random.default_rng(7)
    tokens = rng.integers(0, 256, (4, 16)).astype(np.int32)
    targets = rng.integers(0, 256, (4, 16)).astype(np.int32)
    with open(path, encoding="utf-8") as f:
        graph = json.load(f)
    params = {i["name"]: (rng.standard_normal(i["shape"]) * 0.1)
              .astype(np.float32)
              for i in graph["inputs"] if i.get("param")}
    runs = {}
    for recompute in ("none", "selective", "full"):
        engine = shardc.compile(path, backend=backend, recompute=recompute)
        engine.load_checkpoint(params)
        losses = [engine.train_step(tokens, targets, optimizer="adam",
                                    lr=1e-3) for _ in range(3)]
        runs[recompute] = (losses, engine.parameters())
    losses, after = runs["none"]
    assert losses[-1] < losses[0]
    for recompute in ("selective", "full"):
        got_losses, got = runs[recompute]
        assert got_losses == losses, recompute
        assert all(np.array_equal(got[n], after[n]) for n in after), recompute

    half = shardc.compile(path, backend=backend, precision="bf16-mixed",
                          recompute="full")
    half.load_checkpoint(params)
    half_losses = [half.train_step(tokens, targets, optimizer="adam", lr=1e-3)
                   for _ in range(3)]
    assert half_losses[-1] < half_losses[0]
    assert abs(half_losses[0] - losses[0]) < 0.05 * abs(losses[0])

    with pytest.raises(ValueError, match="unknown recompute 'some'"):
        shardc.compile(path, recompute="some")
    with pytest.raises(ValueError, match="unknown precision 'f8'"):
        shardc.compile(path, precision="f8")
