"""Models from PyTorch: exported by torch.onnx.export (torch's defaults and
do_constant_folding=False), imported by shardc, sharded by a plan on a
2x2 mesh, run on sim and threads, and compared with PyTorch's forward
and autograd by shardc's numeric check (max_rel_err <= 1e-5)."""
import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

import shardc  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLANS = os.path.join(ROOT, "examples", "plans")
sys.path.insert(0, os.path.join(ROOT, "examples", "pytorch"))
import buffers as decoder  # noqa: E402
import encoder  # noqa: E402
import gpt  # noqa: E402
import moe  # noqa: E402

TOLERANCE = 1e-5
BACKENDS = ["sim", "threads"]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 64), nn.Linear(64, 16)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


MLP_PLAN = {"mesh": {"name": "mesh", "axes": [["data", 2], ["model", 2]]},
            "rules": [["x", ["data", None]],
                      ["fc1.weight", ["model", None]],
                      ["fc1.bias", ["model"]],
                      ["fc2.weight", [None, "model"]]]}



def export(model, args, path, names, fold):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gpt.export(model, args, str(path), names, fold)


def write_plan(tmp_path, plan):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return str(path)


def check_against_torch(tmp_path, model, args, names, plan, fold, backend):
    """Forward outputs and (without folding, where parameters keep their
    state_dict names) parameter gradients equal PyTorch's."""
    path = tmp_path / "model.onnx"
    model.eval()
    export(model, args, path, names, fold)
    engine = shardc.compile(str(path), plan=plan, backend=backend)
    assert engine.num_devices == 4
    engine.load_checkpoint(shardc.read_checkpoint(path))

    params = dict(model.named_parameters())
    for p in params.values():
        p.grad = None
    want = model(*args)
    got = engine.forward(*[a.numpy() for a in args])
    assert shardc.max_rel_err(got, want.detach().numpy()) <= TOLERANCE

    cotangent = np.random.default_rng(1).standard_normal(
        tuple(want.shape)).astype(np.float32)
    want.backward(torch.from_numpy(cotangent))
    grads = engine.backward(cotangent)
    assert grads and set(grads) == set(engine.parameter_names)
    if fold:
        return
    # Every parameter of the module is one of the model's, copies of equal
    # initial values included (docs/onnx.md).
    assert set(grads) == set(params)
    torch_grads = {name: params[name].grad for name in grads}
    scale = max(float(np.abs(g.numpy()).max()) for g in torch_grads.values())
    for name, g in grads.items():
        # In torch's shapes, the stacked in_proj_weight [3E, E] included.
        assert g.shape == tuple(torch_grads[name].shape), name
        err = shardc.max_rel_err(g, torch_grads[name].numpy(), scale)
        assert err <= TOLERANCE, f"gradient of {name}: max_rel_err={err}"
    for name, p in engine.parameters().items():
        assert p.shape == tuple(params[name].shape), name


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fold", [True, False])
def test_mlp(tmp_path, backend, fold):
    torch.manual_seed(0)
    check_against_torch(tmp_path, MLP(), (torch.randn(8, 16),), ["x"],
                        write_plan(tmp_path, MLP_PLAN), fold, backend)


def encoder_plan(fold):
    return os.path.join(PLANS, "encoder_megatron_folded.json" if fold
                        else "encoder_megatron.json")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fold", [True, False])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer(tmp_path, backend, fold, norm_first):
    """Megatron's layout, the fused q/k/v projection split by heads
    (examples/plans/encoder_megatron*.json); gradients of the fused
    weight come back in torch's [3E, E]."""
    torch.manual_seed(0)
    check_against_torch(tmp_path, encoder.layer(norm_first),
                        (encoder.example_input(),), ["x"], encoder_plan(fold),
                        fold, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_transformer_encoder_with_causal_mask(tmp_path, backend):
    """Two layers (nn.TransformerEncoder) and an attention mask input: the
    heads stay split around the mask's addition."""
    torch.manual_seed(0)
    model = encoder.Masked(nn.TransformerEncoder(
        encoder.layer(False), 2, enable_nested_tensor=False))
    check_against_torch(tmp_path, model,
                        (encoder.example_input(), encoder.causal_mask()),
                        ["x", "mask"], encoder_plan(False), False, backend)


class FusedAttention(nn.Module):
    """nanoGPT's attention: one Linear for q, k and v, cut by split (ONNX
    Split), the heads in their own dim."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.heads = heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = [t.view(B, T, self.heads, C // self.heads).transpose(1, 2)
                   for t in self.c_attn(x).split(C, dim=2)]
        att = F.softmax(q @ k.transpose(-2, -1) / (C // self.heads) ** 0.5,
                        dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).reshape(B, T, C))


@pytest.mark.parametrize("backend", BACKENDS)
def test_fused_projection_cut_by_split(tmp_path, backend):
    """c_attn.weight [3E, E] is imported stacked [3, E, E] and split by
    heads as nn.MultiheadAttention's in_proj_weight is."""
    torch.manual_seed(0)
    plan = {"mesh": {"name": "mesh", "axes": [["data", 2], ["model", 2]]},
            "rules": [["x", ["data", None, None]],
                      ["c_attn.weight", [None, "model", None]],
                      ["c_attn.bias", [None, "model"]],
                      ["c_proj.weight", [None, "model"]]]}
    check_against_torch(tmp_path, FusedAttention(), (torch.randn(4, 8, 16),),
                        ["x"], write_plan(tmp_path, plan), False, backend)


class TimmAttention(nn.Module):
    """timm's attention: one Linear for q, k and v, reshaped to
    [B, N, 3, H, d], permuted and unbound."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.heads = heads

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads
                                      ).permute(2, 0, 3, 1, 4).unbind(0)
        att = F.softmax(q @ k.transpose(-2, -1) / (C // self.heads) ** 0.5,
                        dim=-1)
        return self.proj((att @ v).transpose(1, 2).reshape(B, N, C))


@pytest.mark.parametrize("backend", BACKENDS)
def test_timm_fused_qkv_split_by_heads(tmp_path, backend):
    """timm's qkv.weight [3E, E] is imported stacked [3, E, E] as
    nanoGPT's c_attn is, and split by heads; its gradient comes back in
    torch's shape."""
    torch.manual_seed(0)
    plan = {"mesh": {"name": "mesh", "axes": [["data", 2], ["model", 2]]},
            "rules": [["x", ["data", None, None]],
                      ["qkv.weight", [None, "model", None]],
                      ["qkv.bias", [None, "model"]],
                      ["proj.weight", [None, "model"]]]}
    check_against_torch(tmp_path, TimmAttention(), (torch.randn(4, 8, 16),),
                        ["x"], write_plan(tmp_path, plan), False, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fold", [True, False])
def test_moe_expert_parallel(tmp_path, backend, fold):
    """examples/pytorch/moe.py's top-2 MoE by its expert-parallel plan:
    the loss and every gradient as torch's."""
    check_against_torch(tmp_path, moe.model(), moe.batch(),
                        ["tokens", "targets"],
                        os.path.join(PLANS, "moe_expert_parallel.json"), fold,
                        backend)


class Classifier(nn.Module):
    def __init__(self, ignore_index):
        super().__init__()
        self.fc = nn.Linear(16, 10)
        self.ignore_index = ignore_index

    def forward(self, x, targets):
        if self.ignore_index is None:  # F.cross_entropy's default, -100
            return F.cross_entropy(self.fc(x), targets)
        return F.cross_entropy(self.fc(x), targets,
                               ignore_index=self.ignore_index)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ignore_index", [None, 3])
def test_cross_entropy_ignores_labels_as_torch_does(tmp_path, backend,
                                                    ignore_index):
    """Rows labelled ignore_index add nothing and the mean is over the
    others, with the classes split over "model" (vocab-parallel)."""
    torch.manual_seed(0)
    targets = torch.randint(0, 10, (8,))
    targets[[1, 4, 5]] = -100 if ignore_index is None else ignore_index
    plan = {"mesh": {"name": "mesh", "axes": [["data", 2], ["model", 2]]},
            "rules": [["x", ["data", None]], ["targets", ["data"]],
                      ["fc.weight", ["model", None]], ["fc.bias", ["model"]]]}
    check_against_torch(tmp_path, Classifier(ignore_index),
                        (torch.randn(8, 16), targets), ["x", "targets"],
                        write_plan(tmp_path, plan), False, backend)


def test_transformer_encoder_layer_on_mpi(tmp_path):
    """The Python API on four MPI ranks: the exported layer, its plan and
    checkpoint, forward and gradients against PyTorch's."""
    from test_mpi import MPIRUN
    torch.manual_seed(0)
    layer = encoder.layer(False)
    x = encoder.example_input()
    path = tmp_path / "encoder.onnx"
    export(layer, (x,), path, ["x"], False)
    want = layer(x)
    cotangent = np.random.default_rng(1).standard_normal(
        tuple(want.shape)).astype(np.float32)
    want.backward(torch.from_numpy(cotangent))
    expected = {"x": x.numpy(), "cotangent": cotangent,
                "out": want.detach().numpy()}
    for name, p in layer.named_parameters():
        expected["grad:" + name] = p.grad.numpy()
    np.savez(tmp_path / "expected.npz", **expected)
    program = os.path.join(os.path.dirname(__file__), "mpi_onnx_program.py")
    p = subprocess.run(
        [MPIRUN, "-n", "4", sys.executable, program, str(path),
         encoder_plan(False), str(tmp_path / "expected.npz")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(re.findall(r"rank (\d+): OK", p.stdout)) == \
        ["0", "1", "2", "3"], p.stdout


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fold", [True, False])
def test_gpt_megatron(tmp_path, backend, fold):
    torch.manual_seed(0)
    plan = "gpt_megatron_folded.json" if fold else "gpt_megatron.json"
    check_against_torch(tmp_path, gpt.GPT(), gpt.example_batch(),
                        ["idx", "targets"], os.path.join(PLANS, plan), fold,
                        backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gpt_trains_as_torch_does(tmp_path, backend):
    """20 SGD steps from the exported weights, sharded by the Megatron
    plan: the loss of every step is PyTorch's."""
    torch.manual_seed(0)
    model = gpt.GPT()
    idx, targets = gpt.example_batch()
    path = tmp_path / "gpt.onnx"
    export(model, (idx, targets), path, ["idx", "targets"], False)
    engine = shardc.compile(str(path), plan=os.path.join(PLANS, "gpt_megatron.json"),
                            backend=backend)
    engine.load_checkpoint(shardc.read_checkpoint(path))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    got, want = [], []
    for _ in range(20):
        got.append(float(engine.train_step(idx.numpy(), targets.numpy(),
                                           optimizer="sgd", lr=0.5)))
        optimizer.zero_grad()
        loss = model(idx, targets)
        loss.backward()
        optimizer.step()
        want.append(loss.item())
    assert want[-1] < want[0] - 0.5, want
    err = shardc.max_rel_err(np.array(got, np.float32), np.array(want, np.float32))
    assert err <= TOLERANCE, (got, want)
    params = engine.parameters()
    for name, p in model.named_parameters():
        err = shardc.max_rel_err(params[name], p.detach().numpy())
        assert err <= TOLERANCE, f"{name} after 20 steps: max_rel_err={err}"


def test_plan_names_the_rule_that_matches_nothing(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "mlp.onnx"
    export(MLP(), (torch.randn(8, 16),), path, ["x"], True)
    plan = dict(MLP_PLAN, rules=MLP_PLAN["rules"] + [["fc3.weight", [None, None]]])
    with pytest.raises(shardc.ShardcError,
                       match=r'rule 4 \("fc3.weight"\) matches no value'):
        shardc.compile(str(path), plan=write_plan(tmp_path, plan))


def test_simulate_with_checkpoint_matches_torch(tmp_path):
    """The command line: shardc simulate model.onnx --plan --checkpoint
    --inputs, its reassembled output against PyTorch's."""
    torch.manual_seed(0)
    model = gpt.GPT()
    idx, targets = gpt.example_batch()
    path = tmp_path / "gpt.onnx"
    export(model, (idx, targets), path, ["idx", "targets"], False)
    np.save(tmp_path / "idx.npy", idx.numpy())
    np.save(tmp_path / "targets.npy", targets.numpy())
    out = tmp_path / "out"
    from shardc._tool import SHARDC_TOOL
    # Without a preloaded sanitizer runtime: the tool links its own.
    from shardc._compile import _tool_environment
    p = subprocess.run(
        [SHARDC_TOOL, "simulate", str(path), "--plan",
         os.path.join(PLANS, "gpt_megatron.json"), "--checkpoint", str(path),
         "--inputs", f"idx={tmp_path / 'idx.npy'}",
         f"targets={tmp_path / 'targets.npy'}", "--out-dir", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=_tool_environment())
    assert p.returncode == 0, p.stderr
    assert "collectives=10" in p.stdout
    (written,) = os.listdir(out)
    with torch.no_grad():
        want = model(idx, targets).numpy()
    assert shardc.max_rel_err(np.load(out / written), want) <= TOLERANCE


DECODER_PLAN = {"mesh": {"name": "mesh", "axes": [["data", 2], ["model", 2]]},
                "rules": [["idx", ["data", None]],
                          ["targets", ["data", None]],
                          ["head.weight", ["model", None]],
                          ["head.bias", ["model"]]]}


def train_decoder(tmp_path, backend, buffers, steps=5, lr=0.5):
    """`steps` SGD steps of examples/pytorch/buffers.py's Decoder in shardc
    (from torch's state_dict, buffers and all) and in torch: the engine,
    both losses, and the model torch trained."""
    torch.manual_seed(0)
    model = decoder.Decoder()
    path = tmp_path / "decoder.onnx"
    decoder.export(model, str(path))
    engine = shardc.compile(str(path), plan=write_plan(tmp_path, DECODER_PLAN),
                            backend=backend,
                            buffers=model if buffers else None)
    engine.load_checkpoint(
        {k: v.numpy() for k, v in model.state_dict().items()} if buffers
        else shardc.read_checkpoint(path))
    idx, targets = decoder.example_batch()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    got, want = [], []
    for _ in range(steps):
        got.append(float(engine.train_step(idx.numpy(), targets.numpy(),
                                           optimizer="sgd", lr=lr)))
        optimizer.zero_grad()
        loss = model(idx, targets)
        loss.backward()
        optimizer.step()
        want.append(loss.item())
    return engine, np.array(got, np.float32), np.array(want, np.float32), model


@pytest.mark.parametrize("backend", BACKENDS)
def test_buffers_are_not_trained(tmp_path, backend):
    """An additive float causal mask and a sinusoidal positional encoding,
    named by passing the torch module (buffers=model), and nanoGPT's float
    tril mask, found by shardc: constants, so training equals torch's, which
    never updates buffers."""
    engine, got, want, model = train_decoder(tmp_path, backend, True)
    # Every buffer the model records: those named and "tril", found.
    assert engine.buffers == ["causal", "tril", "pe"]
    params = dict(model.named_parameters())
    assert set(engine.parameter_names) == set(params)
    assert want[-1] < want[0] - 0.5, want
    err = shardc.max_rel_err(got, want)
    assert err <= TOLERANCE, (got, want)
    trained = engine.parameters()
    assert set(trained) == set(params)
    for name, p in params.items():
        err = shardc.max_rel_err(trained[name], p.detach().numpy())
        assert err <= TOLERANCE, f"{name}: max_rel_err={err}"
    # The tool, run on the same model, is given the same buffers.
    assert engine.simulate(seed=0)["devices"] == 4


def test_state_dict_loads_without_naming_found_buffers(tmp_path):
    """Named by a list (not the torch module), the buffers shardc found
    ("tril") need no naming for torch's state_dict to load: the model
    records them and the engine skips their entries; an entry that is
    neither a parameter nor a buffer still fails."""
    torch.manual_seed(0)
    model = decoder.Decoder()
    path = tmp_path / "decoder.onnx"
    decoder.export(model, str(path))
    engine = shardc.compile(str(path), plan=write_plan(tmp_path, DECODER_PLAN),
                            buffers=["causal", "pe"])
    assert engine.buffers == ["causal", "tril", "pe"]
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    assert "tril" in state
    engine.load_checkpoint(state)
    idx, targets = decoder.example_batch()
    with torch.no_grad():
        want = model(idx, targets).numpy()
    got = engine.forward(idx.numpy(), targets.numpy())
    assert shardc.max_rel_err(got, want) <= TOLERANCE
    state["pe2"] = state["pe"]
    with pytest.raises(shardc.ShardcError,
                       match="checkpoint entry 'pe2' is not a parameter"):
        engine.load_checkpoint(state)


def test_gpt_state_dict_with_a_bool_mask_loads(tmp_path):
    """examples/pytorch/gpt.py's state_dict holds each block's bool "mask"
    buffer, an integer constant of the model that no loader records: a
    non-float entry naming no input is a buffer, skipped; so is a tied
    weight's second name (the same elements as a parameter's)."""
    torch.manual_seed(0)
    model = gpt.GPT()
    idx, targets = gpt.example_batch()
    path = tmp_path / "gpt.onnx"
    export(model, (idx, targets), path, ["idx", "targets"], False)
    engine = shardc.compile(str(path))
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    assert state["blocks.0.mask"].dtype == np.bool_
    state["lm_head.weight"] = state["tok.weight"].copy()  # tied, as GPT-2's
    engine.load_checkpoint(state)
    with torch.no_grad():
        want = model(idx, targets).numpy()
    got = engine.forward(idx.numpy(), targets.numpy())
    assert shardc.max_rel_err(got, want) <= TOLERANCE


def test_undeclared_buffers_are_trained(tmp_path):
    """Without buffers=, the mask and the table added into the result are
    parameters (nothing in the file says otherwise): shardc trains them and
    its losses leave torch's (docs/onnx.md#buffers). The tril mask, used
    only as a condition, is a constant either way."""
    engine, got, want, model = train_decoder(tmp_path, "sim", False)
    assert {"causal", "pe"} <= set(engine.parameter_names)
    assert "tril" not in engine.parameter_names
    assert shardc.max_rel_err(got[:1], want[:1]) <= TOLERANCE
    assert shardc.max_rel_err(got, want) > 1e-3, (got, want)
    pe = engine.parameters()["pe"]
    assert np.abs(pe - model.pe.numpy()).max() > 1e-3


def test_buffer_names_of_a_folded_export(tmp_path):
    """Constant folding renames a sliced buffer (onnx::Add_N): its name is
    gone, buffer_names says so and finds none."""
    torch.manual_seed(0)
    model = decoder.Decoder()
    path = tmp_path / "folded.onnx"
    decoder.export(model, str(path), fold=True)
    with pytest.warns(UserWarning, match="do_constant_folding=False"):
        assert shardc.buffer_names(model, path) == []


def test_buffers_that_are_no_initializer(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "decoder.onnx"
    decoder.export(decoder.Decoder(), str(path))
    with pytest.raises(shardc.ShardcError,
                       match='buffer "mask" names no initializer of the model'
                             r' \(its float initializers: "causal"'):
        shardc.compile(str(path), buffers=["mask"])
    with pytest.raises(shardc.ShardcError,
                       match='buffer "idx" is a graph input, not an '
                             'initializer'):
        shardc.compile(str(path), buffers=["idx"])
    with pytest.raises(ValueError, match="buffers= names float initializers"):
        shardc.compile(os.path.join(ROOT, "examples", "mlp_train.json"),
                       buffers=["w0"])
