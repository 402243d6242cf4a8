"""Compares a checkpoint shardc wrote (--save, .npz) with the float
initializers of the .onnx file it came from, named as torch names them
(Identity copies included): `same` wants every array equal in name, shape
and value; `moved` the same names and shapes, some values changed (a
training step)."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model, saved, mode = sys.argv[1:4]
graph = onnx.load(model).graph
want = {t.name: numpy_helper.to_array(t) for t in graph.initializer
        if t.data_type == onnx.TensorProto.FLOAT}
for node in graph.node:
    if node.op_type == "Identity" and node.input[0] in want:
        want[node.output[0]] = want[node.input[0]]
got = np.load(saved)
assert sorted(got.files) == sorted(want), (sorted(got.files), sorted(want))
for name, w in want.items():
    assert got[name].shape == w.shape, (name, got[name].shape, w.shape)
same = all(np.array_equal(got[name], w) for name, w in want.items())
assert same == (mode == "same"), mode
print(f"{len(want)} parameters {mode}")
