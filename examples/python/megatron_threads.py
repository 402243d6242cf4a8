"""The seed's ShardedEngine, subclassed by hand: a Megatron MLP on 4
thread-devices, checked against the unsharded relu(x w0) w1."""
import numpy as np
import shardc


def relu(x):
    return x * (x > 0)


class Megatron(shardc.ShardedEngine):
    """w0 split by columns and w1 by rows: one all_reduce per forward."""

    def __init__(self):
        self.activations = []

    def load_checkpoint(self, params):
        d, n = self.device_id, self.num_devices
        self.w0 = np.split(params['layer_0/weights'], n, axis=1)[d]
        self.w1 = np.split(params['layer_1/weights'], n, axis=0)[d]

    def forward(self, x):
        z = x @ self.w0
        self.activations += [x, z]
        return self.all_reduce(relu(z) @ self.w1)

    def backward(self, grads):
        x, z = self.activations[-2:]
        del self.activations[-2:]
        dz = (grads @ self.w1.T) * (z > 0)
        return {'layer_0/weights': self.all_gather(x.T @ dz, axis=1),
                'layer_1/weights': self.all_gather(relu(z).T @ grads, axis=0)}


rng = np.random.default_rng(0)
params = {'layer_0/weights': rng.standard_normal((64, 256), np.float32),
          'layer_1/weights': rng.standard_normal((256, 64), np.float32)}
x = rng.standard_normal((16, 64), np.float32)


def device():
    engine = Megatron()
    engine.load_checkpoint(params)
    return engine.forward(x)


outs = shardc.launch(device, num_devices=4, backend="threads")
want = relu(x @ params['layer_0/weights']) @ params['layer_1/weights']
print("4 devices match:", all(np.allclose(o, want, rtol=1e-4, atol=1e-3)
                              for o in outs))
