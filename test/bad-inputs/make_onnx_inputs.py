#!/usr/bin/env python3
"""Writes the hostile .onnx files of this directory (run it with a python3
that has the onnx package: Debian's python3-onnx).

usage: make_onnx_inputs.py DIR

Each file is a small model broken in one way; expected.txt says what
shardc must answer to it.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def value(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def relu_model(**kwargs):
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [value("x", [2, 4])], [value("y", [2, 4])], **kwargs)


def nested_graph(depth):
    """A node whose attribute holds a graph whose node holds a graph ...:
    protobuf's parser must refuse it before its recursion overflows."""
    leaf = inner = helper.make_graph([], "leaf", [], [])
    for _ in range(depth):
        node = helper.make_node("If", ["c"], ["o"], then_branch=inner,
                                else_branch=leaf)
        inner = helper.make_graph([node], "g", [], [])
    return model(inner.node, [value("c", [], TensorProto.BOOL)], [value("o", [1])])


def files():
    good = relu_model().SerializeToString()
    yield "onnx-truncated.onnx", good[: len(good) // 2]
    yield "onnx-garbage.onnx", bytes(np.random.default_rng(0).integers(
        0, 256, 300, dtype=np.uint8))
    yield "onnx-empty.onnx", b""
    yield "onnx-opset-11.onnx", relu_model(opset=11).SerializeToString()
    yield "onnx-unsupported-op.onnx", model(
        [helper.make_node("MaxPool", ["x"], ["y"], name="pool1",
                          kernel_shape=[2, 2], strides=[2, 2])],
        [value("x", [1, 1, 4, 4])],
        [value("y", [1, 1, 2, 2])]).SerializeToString()
    yield "onnx-trilu-huge.onnx", model(
        [helper.make_node("Trilu", ["x"], ["y"], name="mask")],
        [value("x", [100000, 100000])], [value("y", [100000, 100000])]
    ).SerializeToString()
    yield "onnx-dynamic-shape.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"])], [value("x", ["batch", 4])],
        [value("y", ["batch", 4])]).SerializeToString()
    yield "onnx-cycle.onnx", model(
        [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
         helper.make_node("Relu", ["a"], ["b"], name="second")],
        [value("x", [2])], [value("b", [2])]).SerializeToString()
    yield "onnx-undefined-value.onnx", model(
        [helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")],
        [value("x", [2])], [value("y", [2])]).SerializeToString()
    yield "onnx-huge-dims.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [value("x", [1 << 40, 1 << 40])], [value("y", [1 << 40, 1 << 40])]
    ).SerializeToString()
    short = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    short.raw_data = short.raw_data[:20]
    yield "onnx-initializer-too-short.onnx", model(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], [value("x", [2, 4])],
        [value("y", [2, 4])], [short]).SerializeToString()
    yield "onnx-wrong-type.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu_ints")],
        [value("x", [2, 4], I64)], [value("y", [2, 4], I64)]).SerializeToString()
    yield "onnx-double-input.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [value("x", [2, 4], TensorProto.DOUBLE)],
        [value("y", [2, 4], TensorProto.DOUBLE)]).SerializeToString()
    external = TensorProto(name="w", data_type=F, dims=[4, 4])
    external.data_location = TensorProto.EXTERNAL
    external.external_data.add(key="location", value="weights.bin")
    yield "onnx-external-data.onnx", model(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], [value("x", [2, 4])],
        [value("y", [2, 4])], [external]).SerializeToString()
    yield "onnx-reshape-dynamic.onnx", model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
        [value("x", [2, 4]), value("shape", [2], I64)],
        [value("y", [4, 2])]).SerializeToString()
    yield "onnx-constant-of-shape-huge.onnx", model(
        [helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(
            np.array([1 << 20, 1 << 20], np.int64))),
         helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill")],
        [], [value("y", [1 << 20, 1 << 20])]).SerializeToString()
    yield "onnx-matmul-mismatch.onnx", model(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        [value("x", [2, 4]), value("w", [3, 5])],
        [value("y", [2, 5])]).SerializeToString()
    yield "onnx-nested-graphs.onnx", nested_graph(150).SerializeToString()
    yield "onnx-defined-twice.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"], name="one"),
         helper.make_node("Relu", ["x"], ["y"], name="two")],
        [value("x", [2])], [value("y", [2])]).SerializeToString()
    yield "onnx-gather-out-of-range.onnx", model(
        [helper.make_node("Constant", [], ["i"], value=numpy_helper.from_array(
            np.array([7], np.int64))),
         helper.make_node("Gather", ["x", "i"], ["y"], name="take")],
        [value("x", [4, 2])], [value("y", [1, 2])]).SerializeToString()

    yield from refused_nodes()


def const(name, array):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.array(array)))


def refused_nodes():
    """One model per refusal of a node's converter: an attribute or
    operand shardc does not take."""
    def one(name, nodes, inputs, outputs, initializers=()):
        return name, model(nodes, inputs, outputs,
                           initializers).SerializeToString()
    labels = value("t", [2], I64)
    yield one("onnx-cross-entropy-sum.onnx",
              [helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y"],
                                name="loss", reduction="sum")],
              [value("x", [2, 3]), labels], [value("y", [])])
    yield one("onnx-cross-entropy-weights.onnx",
              [helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"],
                                ["y"], name="loss")],
              [value("x", [2, 3]), labels, value("w", [3])], [value("y", [])])
    yield one("onnx-slice-negative-step.onnx",
              [const("s", [3]), const("e", [0]), const("a", [1]),
               const("st", [-1]),
               helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"],
                                name="reverse")],
              [value("x", [2, 4])], [value("y", [2, 3])])
    yield one("onnx-split-sizes.onnx",
              [const("sizes", [1, 1]),
               helper.make_node("Split", ["x", "sizes"], ["a", "b"],
                                name="split", axis=1)],
              [value("x", [2, 4])], [value("a", [2, 1]), value("b", [2, 1])])
    yield one("onnx-cast-double.onnx",
              [helper.make_node("Cast", ["x"], ["y"], name="widen",
                                to=TensorProto.DOUBLE)],
              [value("x", [2])], [value("y", [2], TensorProto.DOUBLE)])
    yield one("onnx-squeeze-wide-dim.onnx",
              [const("axes", [0]),
               helper.make_node("Squeeze", ["x", "axes"], ["y"],
                                name="squeeze")],
              [value("x", [2, 4])], [value("y", [4])])
    yield one("onnx-concat-mismatch.onnx",
              [helper.make_node("Concat", ["x", "z"], ["y"], name="cat",
                                axis=0)],
              [value("x", [2, 3]), value("z", [4, 5])], [value("y", [6, 3])])
    yield one("onnx-add-no-broadcast.onnx",
              [helper.make_node("Add", ["x", "z"], ["y"], name="add")],
              [value("x", [2, 3]), value("z", [4])], [value("y", [2, 3])])
    yield one("onnx-where-no-broadcast.onnx",
              [helper.make_node("Where", ["c", "x", "z"], ["y"], name="pick")],
              [value("c", [2], TensorProto.BOOL), value("x", [3]),
               value("z", [4])], [value("y", [4])])
    yield one("onnx-unknown-attribute.onnx",
              [helper.make_node("Relu", ["x"], ["y"], name="relu", alpha=0.1)],
              [value("x", [2])], [value("y", [2])])
    yield one("onnx-other-domain.onnx",
              [helper.make_node("Relu", ["x"], ["y"], name="relu",
                                domain="com.microsoft")],
              [value("x", [2])], [value("y", [2])])
    yield one("onnx-shape-divide-by-zero.onnx",
              [const("a", [4]), const("b", [0]),
               helper.make_node("Div", ["a", "b"], ["q"], name="div"),
               helper.make_node("Reshape", ["x", "q"], ["y"])],
              [value("x", [4])], [value("y", [4])])
    yield one("onnx-reshape-two-unknown.onnx",
              [const("shape", [-1, -1]),
               helper.make_node("Reshape", ["x", "shape"], ["y"],
                                name="reshape")],
              [value("x", [2, 4])], [value("y", [4, 2])])
    yield one("onnx-gemm-not-matrix.onnx",
              [helper.make_node("Gemm", ["x", "w"], ["y"], name="gemm")],
              [value("x", [2, 3, 4]), value("w", [4, 5])],
              [value("y", [2, 3, 5])])
    yield one("onnx-expand-mismatch.onnx",
              [const("shape", [2]),
               helper.make_node("Expand", ["x", "shape"], ["y"],
                                name="expand")],
              [value("x", [3])], [value("y", [2])])
    yield one("onnx-constant-two-values.onnx",
              [helper.make_node("Constant", [], ["y"], name="c",
                                value_float=1.0, value_int=1)],
              [], [value("y", [])])
    yield one("onnx-output-undefined.onnx",
              [helper.make_node("Relu", ["x"], ["y"])],
              [value("x", [2])], [value("z", [2])])


def main():
    out = sys.argv[1]
    for name, data in files():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
