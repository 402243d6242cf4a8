"""Failures raise Python exceptions that say what and where; a failing
device raises with its id; nothing hangs."""
import os

import numpy as np
import pytest

import shardc
from seed_single_device import SingleDevice

# Every launch here would hang without shardc's failure handling; the
# timeout turns a regression into a failure instead.
TIMEOUT = 60


def test_a_failing_device_raises_with_its_id():
    def device():
        e = SingleDevice(4, 4)
        if e.device_id == 2:
            raise KeyError("layer_7/weights")
        # The others wait for device 2 in a collective it never joins.
        return e.all_reduce(np.ones((2,), np.float32))

    with pytest.raises(shardc.DeviceError) as info:
        shardc.launch(device, num_devices=4, timeout=TIMEOUT)
    assert info.value.device_id == 2
    assert isinstance(info.value.__cause__, KeyError)
    message = str(info.value)
    assert message.startswith("device 2 failed: KeyError: 'layer_7/weights'")
    assert "raise KeyError" in message  # the device's traceback


def test_mismatched_collectives_fail_every_device():
    def device():
        e = SingleDevice(4, 4)
        if e.device_id == 0:
            return e.all_gather(np.ones((2, 2), np.float32), axis=1)
        return e.all_gather(np.ones((3, 2), np.float32), axis=1)

    with pytest.raises(shardc.DeviceError) as info:
        shardc.launch(device, num_devices=2, timeout=TIMEOUT)
    assert "all_gather" in str(info.value)


def test_a_deadlock_is_reported_not_hung():
    def device():
        e = SingleDevice(4, 4)
        return e.receive((e.device_id + 1) % e.num_devices)  # nobody sends

    with pytest.raises(shardc.DeviceError) as info:
        shardc.launch(device, num_devices=3)  # no timeout: detected
    assert "receive" in str(info.value)


def test_bad_arguments_are_python_errors():
    def device():
        e = SingleDevice(4, 4)
        errors = []
        for call in (lambda: e.all_reduce(np.ones(2), op="sum"),      # float64
                     lambda: e.all_reduce(np.ones(2, np.float32), op="prod"),
                     lambda: e.all_gather(np.ones(2, np.float32), axis=3),
                     lambda: e.send(5, np.ones(2, np.float32)),
                     lambda: e.receive(e.device_id),
                     lambda: e.all_gather(np.ones(2, np.float32), group=[7])):
            try:
                call()
            except (TypeError, ValueError) as error:
                errors.append(type(error).__name__ + ": " + str(error))
        return errors

    errors = shardc.launch(device, num_devices=2, timeout=TIMEOUT)[0]
    assert len(errors) == 6, errors
    assert errors[0].startswith("TypeError: all_reduce: arrays of dtype float64")
    assert "'prod' is not supported" in errors[1]
    assert "axis 3 is out of range" in errors[2]
    assert "device 5 does not exist" in errors[3]
    assert "is this device" in errors[4]
    assert "group [7]" in errors[5]


def test_an_engine_outlives_its_launch_only_as_an_error():
    engines = shardc.launch(lambda: SingleDevice(4, 4), num_devices=2)
    with pytest.raises(shardc.ShardcError, match="launch that has returned"):
        engines[0].barrier()


def test_unknown_backends():
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        shardc.launch(lambda: None, num_devices=2, backend="gpu")
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        shardc.compile({"mesh": {}}, backend="gpu")
    with pytest.raises(ValueError, match="num_devices must be at least 1"):
        shardc.launch(lambda: None, num_devices=0)


def test_model_errors_carry_the_diagnostic(tmp_path, examples):
    bad = tmp_path / "bad.json"
    bad.write_text('{"mesh": {"name": "mesh", "axes": [["x", 2]]},\n'
                   ' "inputs": [{"name": "a", "shape": [4, 4]}],\n'
                   ' "ops": [{"op": "frobnicate", "inputs": ["a"], "output": "b"}],\n'
                   ' "outputs": [{"name": "b"}]}\n')
    with pytest.raises(shardc.ShardcError) as info:
        shardc.compile(str(bad))
    message = str(info.value)
    assert "bad.json:3:" in message and "frobnicate" in message
    with pytest.raises(shardc.ShardcError, match="cannot tell the format"):
        shardc.compile(str(tmp_path / "model.pb"))
    with pytest.raises(shardc.ShardcError, match="cannot read .*missing.onnx"):
        shardc.compile(str(tmp_path / "missing.onnx"))
    with pytest.raises(ValueError, match="names 'nope'"):
        shardc.compile(os.path.join(examples, "mlp_2d_mesh.json"),
                       plan={"nope": [None]})
    with pytest.raises(ValueError, match="need auto_shard=True"):
        shardc.compile(os.path.join(examples, "mlp_2d_mesh.json"),
                       memory_budget="8M")


def test_engine_call_errors_carry_the_diagnostic(examples):
    engine = shardc.compile(os.path.join(examples, "mlp_2d_mesh.json"),
                            backend="threads", parameters=["w0", "w1"],
                            training=False)
    with pytest.raises(shardc.ShardcError, match="forward failed"):
        engine.forward(np.ones((16, 64), np.float32))  # no checkpoint yet
    with pytest.raises(shardc.ShardcError, match="w9"):
        engine.load_checkpoint({"w9": np.ones((2, 2), np.float32)})
    engine.load_checkpoint({"w0": np.ones((64, 128), np.float32),
                            "w1": np.ones((128, 64), np.float32)})
    with pytest.raises(shardc.ShardcError) as info:
        engine.forward(np.ones((16, 65), np.float32))
    assert "16, 65" in str(info.value) or "16x65" in str(info.value)
    with pytest.raises(TypeError, match="float64"):
        engine.forward(np.ones((16, 64)))


# A model given as a dict: the module serializes it to JSON itself, so
# positions in that text mean nothing to the user.
DICT_MODEL = {
    "mesh": {"name": "mesh", "axes": [["data", 4]]},
    "inputs": [{"name": "x", "shape": [8, 16], "sharding": ["data", None]},
               {"name": "w", "shape": [16, 4], "param": True}],
    "ops": [{"op": "matmul", "inputs": ["x", "w"], "output": "y"}],
    "outputs": [{"name": "y"}]}


def assert_no_serialized_text(message):
    """No position in, excerpt of or caret under text the module wrote, and
    no IR."""
    assert "<graph>" not in message, message
    assert "^" not in message and "\n{" not in message, message
    assert "see current operation" not in message, message
    assert "func.func" not in message, message


def test_errors_about_a_dict_model_name_the_field():
    with pytest.raises(shardc.ShardcError) as info:
        shardc.compile(DICT_MODEL, mesh={"dta": 4})
    message = str(info.value)
    assert_no_serialized_text(message)
    assert ('inputs[0] (name "x").sharding[0]: unknown mesh axis "data" '
            '(mesh "mesh" has axes ["dta"])') in message


def test_errors_about_a_re_serialized_file_name_the_file_only(examples):
    path = os.path.join(examples, "mlp_2d_mesh.json")
    with pytest.raises(shardc.ShardcError) as info:
        shardc.compile(path, mesh={"yy": 4, "x": 2})
    message = str(info.value)
    assert_no_serialized_text(message)
    # The user's path, without a line: the text read is not the file's.
    assert path + ": error: inputs[0]" in message
    assert path + ":" + "24" not in message


def test_checkpoint_errors_of_a_dict_model_name_the_parameter():
    engine = shardc.compile(DICT_MODEL, backend="threads")
    with pytest.raises(shardc.ShardcError) as info:
        engine.load_checkpoint({"w9": np.ones((16, 4), np.float32)})
    assert_no_serialized_text(str(info.value))
    assert "checkpoint entry 'w9' is not a parameter" in str(info.value)


def test_checkpoint_element_types_are_checked_at_load(examples):
    """An int32 array for an f32 parameter is refused by load_checkpoint,
    naming the parameter; it is never converted (docs/python.md)."""
    engine = shardc.compile(os.path.join(examples, "mlp_2d_mesh.json"),
                            backend="threads", parameters=["w0", "w1"],
                            training=False)
    with pytest.raises(shardc.ShardcError) as info:
        engine.load_checkpoint({"w0": np.ones((64, 128), np.float32),
                                "w1": np.ones((128, 64), np.int32)})
    message = str(info.value)
    assert message.startswith("load_checkpoint failed")
    assert ("parameter 'w1' holds f32 elements, got tensor<128x64xi32>"
            in message), message
    assert "see current operation" not in message
    with pytest.raises(shardc.ShardcError, match="must have shape"):
        engine.load_checkpoint({"w0": np.ones((64, 128), np.float32),
                                "w1": np.ones((64, 128), np.float32)})
    engine.load_checkpoint({"w0": np.ones((64, 128), np.float32),
                            "w1": np.ones((128, 64), np.float32)})
    with pytest.raises(shardc.ShardcError) as info:
        engine.forward(np.ones((16, 64), np.int32))
    assert "input 'x' holds f32 elements" in str(info.value)
    assert "func.func" not in str(info.value)
