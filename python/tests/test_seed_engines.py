"""The reference ShardedEngine programs on shardc.launch: SingleDevice as
the reference writes it, a hand-written Megatron and the tutorial's 2D-mesh MLP on 4 thread-devices,
each checked against SingleDevice's forward and backward."""
import os
import subprocess
import sys

import numpy as np
import pytest

import shardc
from conftest import ROOT
from seed_single_device import SingleDevice, relu

MODEL, HIDDEN, BATCH = 64, 256, 16
RNG = np.random.default_rng(7)
PARAMS = {'layer_0/weights': RNG.standard_normal((MODEL, HIDDEN), np.float32),
          'layer_1/weights': RNG.standard_normal((HIDDEN, MODEL), np.float32)}
X = RNG.standard_normal((BATCH, MODEL), np.float32)
DY = RNG.standard_normal((BATCH, MODEL), np.float32)


def reference():
    """The reference SingleDevice, unchanged, outside any launch."""
    engine = SingleDevice(MODEL, HIDDEN)
    engine.load_checkpoint(PARAMS)
    out = engine.forward(X)
    return out, engine.backward(DY)


def close(a, b):
    return np.allclose(a, b, rtol=1e-4, atol=1e-3)


def test_single_device_is_device_0_of_1():
    engine = SingleDevice(MODEL, HIDDEN)
    assert (engine.device_id, engine.num_devices) == (0, 1)
    out, grads = reference()
    assert close(out, relu(X @ PARAMS['layer_0/weights']) @ PARAMS['layer_1/weights'])
    assert set(grads) == set(PARAMS)


def test_single_device_on_each_of_4_devices():
    """Each device runs its own SingleDevice: no communication, and every
    device computes the same thing."""
    def device():
        engine = SingleDevice(MODEL, HIDDEN)
        engine.load_checkpoint(PARAMS)
        return engine.device_id, engine.num_devices, engine.forward(X)

    want, _ = reference()
    results = shardc.launch(device, num_devices=4)
    assert [r[:2] for r in results] == [(d, 4) for d in range(4)]
    assert all(close(r[2], want) for r in results)


class Megatron(shardc.ShardedEngine):
    """w0 by columns, w1 by rows; forward all_reduces the partial sums,
    backward all_gathers the gradient blocks."""

    def __init__(self, model_dim, hidden_dim):
        self.hidden = hidden_dim // self.num_devices
        self.activations = []

    def load_checkpoint(self, params):
        d, n = self.device_id, self.num_devices
        self.w0 = np.split(params['layer_0/weights'], n, axis=1)[d]
        self.w1 = np.split(params['layer_1/weights'], n, axis=0)[d]
        assert self.w0.shape[1] == self.hidden

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


def test_megatron_by_hand_matches_single_device():
    def device():
        engine = Megatron(MODEL, HIDDEN)
        engine.load_checkpoint(PARAMS)
        out = engine.forward(X)
        return out, engine.backward(DY)

    want_out, want_grads = reference()
    results = shardc.launch(device, num_devices=4, backend="threads")
    assert len(results) == 4
    for out, grads in results:
        assert close(out, want_out)
        for name in PARAMS:
            assert close(grads[name], want_grads[name]), name


class Mesh2D(shardc.ShardedEngine):
    """The tutorial's 2D sharding on a mesh of y=2 rows by x=2 columns
    (device 2y + x): x [B/y, D/x], w0 [D/y, H/x], w1 [H/x, D/y], and the
    output [B/y, D/x] like the input."""

    def __init__(self):
        self.y, self.x = divmod(self.device_id, 2)
        self.along_x = [2 * self.y, 2 * self.y + 1]  # this row
        self.along_y = [self.x, self.x + 2]          # this column

    def load_checkpoint(self, params):
        def block(w, row, col):
            return np.split(np.split(w, 2, axis=0)[row], 2, axis=1)[col]
        self.w0 = block(params['layer_0/weights'], self.y, self.x)
        self.w1 = block(params['layer_1/weights'], self.x, self.y)

    def forward(self, x_block):
        x = self.all_gather(x_block, axis=1, group=self.along_x)
        w0 = self.all_gather(self.w0, axis=0, group=self.along_y)
        u = relu(x @ w0)
        w1 = self.all_gather(self.w1, axis=1, group=self.along_y)
        return self.reduce_scatter(u @ w1, axis=1, group=self.along_x)

    def backward(self, grads):
        raise NotImplementedError("the tutorial shards the forward pass only")


def test_2d_mesh_by_hand_matches_single_device():
    def device():
        engine = Mesh2D()
        engine.load_checkpoint(PARAMS)
        x_block = np.split(np.split(X, 2, axis=0)[engine.y], 2, axis=1)[engine.x]
        return engine.forward(x_block)

    blocks = shardc.launch(device, num_devices=4)
    assert all(b.shape == (BATCH // 2, MODEL // 2) for b in blocks)
    out = np.block([[blocks[0], blocks[1]], [blocks[2], blocks[3]]])
    want, _ = reference()
    assert close(out, want)


def test_point_to_point_ring_and_send_async():
    """Each device passes its id round a ring with send/receive, then with
    send_async into a buffer the receiver names."""
    def device():
        e = SingleDevice(4, 4)
        n, d = e.num_devices, e.device_id
        e.send((d + 1) % n, np.full((2,), d, np.int64))
        got = e.receive((d - 1) % n)
        buffer = np.zeros((3,), np.float32)
        future = e.send_async(np.full((3,), d, np.float32), buffer, (d + 1) % n)
        e.receive((d - 1) % n, out=buffer)
        future.result()
        e.barrier()
        return int(got[0]), float(buffer[0]), future.done()

    results = shardc.launch(device, num_devices=3)
    assert results == [(2, 2.0, True), (0, 0.0, True), (1, 1.0, True)]


def test_collectives_follow_the_seed():
    def device():
        e = SingleDevice(4, 4)
        d = e.device_id
        a = np.arange(4, dtype=np.float32).reshape(2, 2) + 10 * d
        return (e.all_gather(a, axis=0), e.all_gather(a, axis=-1),
                e.all_reduce(a), e.all_reduce(a, op='max'),
                e.reduce_scatter(np.ones((4, 2), np.int32)),
                e.all_to_all(np.arange(4, dtype=np.int64) + 10 * d),
                e.all_reduce(np.array([d == 1]), op='max'))

    results = shardc.launch(device, num_devices=2)
    a0 = np.arange(4, dtype=np.float32).reshape(2, 2)
    for d, (ag0, ag1, ar, amax, rs, a2a, anyb) in enumerate(results):
        assert np.array_equal(ag0, np.concatenate([a0, a0 + 10], axis=0))
        assert np.array_equal(ag1, np.concatenate([a0, a0 + 10], axis=1))
        assert np.array_equal(ar, 2 * a0 + 10)
        assert np.array_equal(amax, a0 + 10)
        assert rs.dtype == np.int32 and np.array_equal(rs, np.full((2, 2), 2))
        assert np.array_equal(a2a, [2 * d, 2 * d + 1, 10 + 2 * d, 11 + 2 * d])
        assert anyb.dtype == np.bool_ and anyb.tolist() == [True]


def test_results_are_numpy_arrays_that_own_their_data():
    def device():
        e = SingleDevice(4, 4)
        return e.all_reduce(np.ones((3, 5), np.float32))

    out = shardc.launch(device, num_devices=2)[0]
    assert isinstance(out, np.ndarray) and out.flags.c_contiguous
    out[0, 0] = 5  # writable, and alive after the launch
    assert out.sum() == 2 * 15 + 3


def test_the_readme_example_runs():
    p = subprocess.run([sys.executable,
                        os.path.join(ROOT, "examples", "python", "megatron_threads.py")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout
    assert p.stdout.strip() == "4 devices match: True"
