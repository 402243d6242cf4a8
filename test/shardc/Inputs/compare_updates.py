"""Compares a mixed-precision training run with the f32 one it stands for.

Usage: compare_updates.py INIT MIXED F32 UNITS BITS NAME...

INIT, MIXED and F32 are directories of final parameters (<name>.npy) of
the same training from the same start: INIT after zero steps' worth of
movement (learning rate 0), MIXED with --precision=*-mixed, F32 without.
The training moves each parameter by F32 - INIT; the mixed run must move
it the same way up to UNITS units of the working type's roundoff 2^-BITS
(bf16: 8 bits of precision), relative to the size of that movement:
||MIXED - F32|| / ||F32 - INIT||. Prints each ratio; exits 1 if one is
beyond the bound.
"""
import sys

import numpy as np

init, mixed, f32 = sys.argv[1:4]
units, bits = float(sys.argv[4]), int(sys.argv[5])
bound = units * 2.0 ** -bits
ok = True
for name in sys.argv[6:]:
    p0 = np.load(f"{init}/{name}.npy").astype(np.float64)
    pm = np.load(f"{mixed}/{name}.npy").astype(np.float64)
    pf = np.load(f"{f32}/{name}.npy").astype(np.float64)
    moved = np.linalg.norm(pf - p0)
    ratio = np.linalg.norm(pm - pf) / moved
    within = ratio <= bound
    ok &= within
    print(f"{name}: update off by {ratio:.3g} of its size "
          f"({'within' if within else 'beyond'} {units:g} x 2^-{bits} = {bound:.4g})")
sys.exit(0 if ok else 1)
