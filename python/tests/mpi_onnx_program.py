"""Run by test_onnx.py under `mpirun -n 4`: an exported ONNX model sharded
by a plan on the mpi backend, each rank checking its forward output and
parameter gradients against PyTorch's (argv: model.onnx plan.json
expected.npz, the latter holding x, cotangent, out and grad:<name>)."""
import sys

import numpy as np

import shardc

model, plan, expected = sys.argv[1:4]
want = np.load(expected)
engine = shardc.compile(model, plan=plan, backend="mpi", mpi_timeout=60)
engine.load_checkpoint(shardc.read_checkpoint(model))
out = engine.forward(want["x"])
assert shardc.max_rel_err(out, want["out"]) <= 1e-5
grads = engine.backward(want["cotangent"])
torch_grads = {k[len("grad:"):]: want[k] for k in want.files
               if k.startswith("grad:")}
assert set(grads) == set(torch_grads), (sorted(grads), sorted(torch_grads))
scale = max(float(np.abs(g).max()) for g in torch_grads.values())
for name, g in grads.items():
    err = shardc.max_rel_err(g, torch_grads[name], scale)
    assert err <= 1e-5, f"gradient of {name}: max_rel_err={err}"
print(f"rank {engine.local_devices[0]}: OK", flush=True)
