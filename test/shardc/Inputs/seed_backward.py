"""The seed's SingleDevice MLP, ReLU(x W0) W1, with its hand-written NumPy
backward, re-typed from the seed document. Compares the gradients shardc
derived (`shardc run --autodiff --out-dir`) with it.

usage: seed_backward.py gen DIR            write x, w0, w1, z.grad .npy inputs
       seed_backward.py check DIR OUTDIR   compare OUTDIR's outputs
"""
import sys

import numpy as np


def relu(x):
    return x * (x > 0)


class SingleDevice:
    def __init__(self, model_dim, hidden_dim):
        self.w0 = np.zeros((model_dim, hidden_dim), dtype=np.float32)
        self.w1 = np.zeros((hidden_dim, model_dim), dtype=np.float32)
        self.activations = []

    def load_checkpoint(self, params):
        self.w0[...] = params['layer_0/weights'][...]
        self.w1[...] = params['layer_1/weights'][...]

    def forward(self, x):
        self.activations.append(x)
        z = np.einsum('bd,df->bf', x, self.w0)
        self.activations.append(z)
        x = relu(z)
        return np.einsum('bf,fd->bd', x, self.w1)

    def backward(self, grads):
        z = self.activations.pop()
        h_relu = relu(z)
        w1_grad = np.einsum('bf,bd->fd', h_relu, grads)
        grads = np.einsum('bd,fd->bf', grads, self.w1)
        grads = grads * (z > 0)
        x_input = self.activations.pop()
        w0_grad = np.einsum('bd,bf->df', x_input, grads)
        return {'layer_0/weights': w0_grad, 'layer_1/weights': w1_grad}


def rel_err(got, want):
    assert got.dtype == np.float32 and got.shape == want.shape, (got.dtype, got.shape)
    return float(np.abs(got - want).max() / np.abs(want).max())


def main():
    mode, d = sys.argv[1], sys.argv[2]
    shapes = {'x': (32, 64), 'w0': (64, 128), 'w1': (128, 64), 'z.grad': (32, 64)}
    if mode == 'gen':
        rng = np.random.default_rng(11)
        for name, shape in shapes.items():
            np.save(f'{d}/{name}.npy', rng.standard_normal(shape).astype(np.float32))
        return
    out = sys.argv[3]
    x, w0, w1, g = (np.load(f'{d}/{n}.npy') for n in shapes)
    engine = SingleDevice(64, 128)
    engine.load_checkpoint({'layer_0/weights': w0, 'layer_1/weights': w1})
    z = engine.forward(x)
    grads = engine.backward(g)
    errs = {
        'z': rel_err(np.load(f'{out}/z.npy'), z),
        'w0.grad': rel_err(np.load(f'{out}/w0.grad.npy'), grads['layer_0/weights']),
        'w1.grad': rel_err(np.load(f'{out}/w1.grad.npy'), grads['layer_1/weights']),
    }
    for name, e in errs.items():
        print(f'{name} max_rel_err={e:.2e} {"OK" if e < 1e-5 else "MISMATCH"}')


if __name__ == '__main__':
    main()
