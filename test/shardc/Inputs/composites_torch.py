"""The PyTorch oracle of composites-lm.json.

usage: composites_torch.py make DIR    writes the inputs (and loss.grad = 1)
       composites_torch.py check DIR   compares DIR/out/*.npy with torch

The same model in torch.nn.functional (layer_norm, a hand-written rms_norm:
torch 1.13 has none, softmax, log_softmax, cross_entropy with integer
targets, mean), its loss, softmax output and the gradients of every
parameter, at float32.
"""
import sys

import numpy as np
import torch
import torch.nn.functional as F

PARAMS = {"ln_g": (8,), "ln_b": (8,), "rms_g": (8,), "w": (8, 16), "bias": (16,)}


def make(d):
    r = np.random.default_rng(11)
    np.save(f"{d}/x.npy", (2 * r.standard_normal((12, 8))).astype(np.float32))
    for name, shape in PARAMS.items():
        scale = 1.0 if name != "rms_g" else 0.5
        v = 1.0 + scale * r.standard_normal(shape) if name.endswith("_g") else r.standard_normal(shape)
        np.save(f"{d}/{name}.npy", v.astype(np.float32))
    np.save(f"{d}/labels.npy", r.integers(0, 16, (2, 6)).astype(np.int32))
    np.save(f"{d}/loss.grad.npy", np.array(1.0, dtype=np.float32))
    np.save(f"{d}/p.grad.npy", np.zeros((2, 6, 16), dtype=np.float32))


def check(d):
    x = torch.from_numpy(np.load(f"{d}/x.npy"))
    p = {n: torch.from_numpy(np.load(f"{d}/{n}.npy")).requires_grad_() for n in PARAMS}
    labels = torch.from_numpy(np.load(f"{d}/labels.npy")).long()
    ln = F.layer_norm(x, (8,), p["ln_g"], p["ln_b"], 1e-5)
    rn = ln * torch.rsqrt((ln * ln).mean(-1, keepdim=True) + 1e-6) * p["rms_g"]
    logits = (rn @ p["w"] + p["bias"]).reshape(2, 6, 16)
    ce = F.cross_entropy(logits.reshape(-1, 16), labels.reshape(-1))
    prob = F.softmax(logits, dim=-1)
    loss = ce + (prob * F.log_softmax(logits, dim=2)).mean()
    loss.backward()
    want = {"loss": loss.detach().numpy(), "p": prob.detach().numpy()}
    want.update({n + ".grad": t.grad.numpy() for n, t in p.items()})
    worst = 0.0
    for name, ref in want.items():
        got = np.load(f"{d}/out/{name}.npy")
        assert got.shape == ref.shape, (name, got.shape, ref.shape)
        err = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))
        assert err < 1e-4, (name, err)
        worst = max(worst, err)
    print(f"torch match: {len(want)} tensors, loss {float(loss):.6f}, max_rel_err {worst:.1e} < 1e-4")


if __name__ == "__main__":
    {"make": make, "check": check}[sys.argv[1]](sys.argv[2])
