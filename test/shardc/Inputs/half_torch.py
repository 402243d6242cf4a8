"""PyTorch as the oracle of shardc's bf16 and f16 (docs/precision.md).

make DIR: writes x.npy (values around every rounding case: ties between
neighbouring bf16 and f16 values, the f16 overflow edge, f16 subnormals,
random normals) and w.npy.
check DIR: reads shardc's outputs from DIR/out and compares them with
torch's: the conversions bit for bit (torch rounds to nearest even too),
the bf16 matmul (f32 accumulation, one rounding) and tanh to one bf16 ulp.
"""
import sys

import numpy as np
import torch

d = sys.argv[2]
if sys.argv[1] == "make":
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    flat = x.reshape(-1)
    # Ties: 1 + k * 2^-8 lies halfway between bf16 neighbours for odd k.
    flat[:64] = 1 + np.arange(64, dtype=np.float32) * 2.0**-8
    flat[64:128] = 1 + np.arange(64, dtype=np.float32) * 2.0**-11
    flat[128:136] = [65504, 65519, 65520, 70000, 2.0**-24, 2.0**-25,
                     3 * 2.0**-26, -65520]
    np.save(f"{d}/x.npy", x)
    np.save(f"{d}/w.npy", rng.standard_normal((32, 16)).astype(np.float32))
    sys.exit(0)

x = torch.from_numpy(np.load(f"{d}/x.npy"))
w = torch.from_numpy(np.load(f"{d}/w.npy"))
out = {n: np.load(f"{d}/out/{n}.npy") for n in ("x_bf16", "x_f16", "y", "t")}
ok = True
want = x.to(torch.bfloat16).float().numpy()
same = np.array_equal(out["x_bf16"].view(np.uint32), want.view(np.uint32))
print("bf16 conversion bit for bit:", same)
ok &= same
want = x.to(torch.float16).numpy()
same = np.array_equal(out["x_f16"].view(np.uint16), want.view(np.uint16))
print("f16 conversion bit for bit:", same)
ok &= same
yt = (x.to(torch.bfloat16) @ w.to(torch.bfloat16)).float()
for name, want in (("y", yt), ("t", torch.tanh(yt.to(torch.bfloat16)).float())):
    got = torch.from_numpy(out[name])
    ulp = 2.0 ** (torch.floor(torch.log2(want.abs().clamp(min=1e-30))) - 7)
    within = bool(((got - want).abs() <= ulp).all())
    print(f"bf16 {name} within one bf16 ulp of torch:", within)
    ok &= within
sys.exit(0 if ok else 1)
