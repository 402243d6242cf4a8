"""Run by test_mpi.py under `mpirun -n 4`: the hand-written Megatron on
shardc.launch(backend="mpi") and the compiled seed MLP on the mpi backend,
each rank checking against the unsharded MLP. argv[1] picks a failure to
inject instead ("raise": device 2 raises)."""
import sys

import numpy as np

import shardc
from test_seed_engines import Megatron, MODEL, HIDDEN, PARAMS, X, DY, reference
from test_compiled import SEED_MLP

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"


def device():
    engine = Megatron(MODEL, HIDDEN)
    if mode == "raise" and engine.device_id == 2:
        raise RuntimeError("injected failure")
    engine.load_checkpoint(PARAMS)
    out = engine.forward(X)
    return engine.device_id, out, engine.backward(DY)


results = shardc.launch(device, num_devices=4, backend="mpi", timeout=60)
want_out, want_grads = reference()
assert [r[0] for r in results] == [0, 1, 2, 3]
for _, out, grads in results:
    assert np.allclose(out, want_out, rtol=1e-4, atol=1e-3)
    for name in PARAMS:
        assert np.allclose(grads[name], want_grads[name], rtol=1e-4, atol=1e-3)

compiled = shardc.compile(SEED_MLP, backend="mpi", mpi_timeout=60)
assert len(compiled.local_devices) == 1
compiled.load_checkpoint(PARAMS)
out = compiled.forward(X)
grads = compiled.backward(DY)
assert np.allclose(out, want_out, rtol=1e-4, atol=1e-3)
for name in PARAMS:
    assert np.allclose(grads[name], want_grads[name], rtol=1e-4, atol=1e-3)
print(f"rank {compiled.local_devices[0]}: OK", flush=True)
