"""shardc.compile(..., pipeline_axis=): a model trained pipelined, as
`shardc pipeline` trains it (docs/pipeline.md), through the same workflow
library (shardc/Driver/PipelinedModel.h)."""
import json
import os
import tempfile

from . import _shardc

_BACKENDS = ("sim", "threads", "mpi")
_SCHEDULES = ("gpipe", "1f1b")


class PipelineTraining:
    """What PipelinedModel.train returns: the loss of the last step and
    every parameter after it (whole arrays, on every rank under mpi); the
    check against as many unsharded full-batch steps (max_rel_err, ok,
    mismatches); and `shardc pipeline --report-json`'s report."""

    def __init__(self, result):
        self.loss = float(result["loss"])
        self.parameters = result["parameters"]
        self.max_rel_err = result["max_rel_err"]
        self.ok = result["ok"]
        self.mismatches = result["mismatches"]
        self.report = json.loads(result["report"])

    def __repr__(self):
        return (f"PipelineTraining(loss={self.loss:.6g}, "
                f"max_rel_err={self.max_rel_err:.3g}, ok={self.ok})")


class PipelinedModel:
    """A loss model split into stages over `pipeline_axis` of its mesh;
    train() runs pipelined training steps on the backend."""

    def __init__(self, path, graph_text, backend, pipeline_axis,
                 microbatches, schedule, recompute="none"):
        if backend not in _BACKENDS:
            raise ValueError(f"compile: unknown backend '{backend}' "
                             "(expected 'sim', 'threads' or 'mpi')")
        if schedule not in _SCHEDULES:
            raise ValueError(f"compile: unknown schedule '{schedule}' "
                             "(expected 'gpipe' or '1f1b')")
        if microbatches < 0:
            raise ValueError("compile: microbatches must be at least 1 "
                             "(0: one per stage)")
        self._path, self._graph_text = path, graph_text
        if recompute not in ("none", "selective", "full"):
            raise ValueError(f"compile: unknown recompute '{recompute}' "
                             "(expected 'none', 'selective' or 'full')")
        self._args = {"backend": backend, "pipeline_axis": pipeline_axis,
                      "microbatches": int(microbatches),
                      "schedule": schedule, "recompute": recompute}

    @property
    def backend(self):
        return self._args["backend"]

    def train(self, inputs=None, seed=None, steps=1, optimizer="sgd",
              lr=0.01, tolerance=1e-4):
        """`steps` pipelined training steps with `optimizer` ('sgd' or
        'adam'), each fed the parameters (and optimizer state) the last
        returned; inputs: {name: array}, the others drawn from `seed` as
        `shardc pipeline --seed` draws them. Checked against as many
        unsharded full-batch steps with `tolerance`."""
        if optimizer not in ("sgd", "adam"):
            raise ValueError(f"train: unknown optimizer '{optimizer}' "
                             "(expected 'sgd' or 'adam')")
        if steps < 1:
            raise ValueError("train: steps must be at least 1")
        args = dict(self._args, optimizer=optimizer, lr=float(lr),
                    steps=int(steps), tolerance=float(tolerance))
        inputs = dict(inputs or {})
        if self._path is not None:
            return PipelineTraining(_shardc.train_pipelined(
                self._path, args, inputs, seed))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "graph.json")
            with open(path, "w") as f:
                f.write(self._graph_text)
            return PipelineTraining(_shardc.train_pipelined(
                path, args, inputs, seed))
