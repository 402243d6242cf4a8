"""shardc from Python: the ShardedEngine interface over NumPy on real devices
(shardc.launch), and the sharding compiler (shardc.compile).

    import shardc

    class Megatron(shardc.ShardedEngine):
        ...                      # ShardedEngine's methods, with all_reduce etc.

    outs = shardc.launch(lambda: run(Megatron(...)), num_devices=4)

    engine = shardc.compile("examples/mlp_2d_mesh.json", backend="threads")

docs/python.md describes it all.
"""
import atexit

from . import _shardc
from ._compile import CompiledModel, buffer_names, compile
from ._engine import ShardedEngine, launch
from ._errors import DeviceError, ShardcError
from ._pipeline import PipelinedModel, PipelineTraining

Future = _shardc.Future


def read_checkpoint(path):
    """{name: array} of a checkpoint file (.onnx: the model's float
    initializers), as `shardc simulate --checkpoint` reads it."""
    return _shardc.read_checkpoint(str(path))


def max_rel_err(got, want, family_scale=0.0):
    """How far `got` is from the reference `want`, as shardc's checks
    measure it: max|got - want| / max(max|want|, 0.01 * family_scale)
    (docs/cli.md, "How results are checked")."""
    return _shardc.max_rel_err(got, want, family_scale)

__all__ = ["ShardedEngine", "launch", "compile", "CompiledModel",
           "buffer_names", "Future", "PipelinedModel", "PipelineTraining",
           "ShardcError", "DeviceError", "read_checkpoint", "max_rel_err"]

# MPI, if a launch or an engine joined a job, is finalized once at exit.
atexit.register(_shardc.finalize_mpi)
