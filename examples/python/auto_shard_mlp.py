"""Auto-sharding from Python: the small-batch MLP of
examples/auto_shard/mlp_graph.py, with no sharding annotated, planned for 4
devices by shardc.compile(auto_shard=True), shows the layout the plan chose
(Megatron's) and trains 3 SGD steps that PyTorch repeats."""
import json
import os
import subprocess
import sys

import numpy as np
import torch

import shardc

HERE = os.path.dirname(os.path.abspath(__file__))
graph = json.loads(subprocess.run(
    [sys.executable, os.path.join(HERE, "..", "auto_shard", "mlp_graph.py"),
     "--batch", "8", "--hidden", "256", "--mesh", "model=4"],
    check=True, stdout=subprocess.PIPE, text=True).stdout)
backend = sys.argv[1] if len(sys.argv) > 1 else "sim"

engine = shardc.compile(graph, auto_shard=True, backend=backend)
for name, sharding in engine.shardings().items():
    print(f"{name}: {sharding}")

rng = np.random.default_rng(0)
params = {name: rng.standard_normal((256, 256), np.float32) / 16
          for name in engine.parameter_names}
x, y = (rng.standard_normal((8, 256), np.float32) for _ in range(2))
engine.load_checkpoint(params)
losses = [engine.train_step(x, y, optimizer="sgd", lr=0.1)
          for _ in range(3)]

# The same steps in PyTorch, unsharded.
w = [torch.tensor(params[f"w{i}"], requires_grad=True) for i in range(4)]
want = []
for _ in range(3):
    h = torch.tensor(x)
    for i, wi in enumerate(w):
        h = h @ wi if i == 3 else torch.relu(h @ wi)
    loss = ((h - torch.tensor(y)) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for wi in w:
            wi -= 0.1 * wi.grad
            wi.grad = None
    want.append(loss.item())
trained = engine.parameters()
errs = [shardc.max_rel_err(np.array(losses, np.float32),
                          np.array(want, np.float32))]
errs += [shardc.max_rel_err(trained[f"w{i}"], w[i].detach().numpy())
         for i in range(4)]
err = max(errs)
assert err <= 1e-5, err
print(f"3 steps on {engine.num_devices} devices ({backend}): losses and "
      f"parameters equal PyTorch's (max_rel_err {err:.1g} <= 1e-5)")
