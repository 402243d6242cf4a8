"""shardc.compile: a model (a JSON graph, a .json or .mlir file) compiled
into a sharded engine with ShardedEngine's lifecycle."""
import copy
import json
import os
import subprocess
import tempfile
import warnings

from . import _shardc
from ._errors import ShardcError
from ._pipeline import PipelinedModel


def _load_graph(model):
    """The JSON graph of `model` (a dict, or a .json path) as a new dict."""
    if isinstance(model, dict):
        return copy.deepcopy(model)
    with open(model, encoding="utf-8") as f:
        return json.load(f)


def _apply_mesh(graph, mesh):
    """mesh: {"name": ..., "axes": [[axis, size], ...]} as in the JSON
    format, or {axis: size, ...} (the graph's mesh name is kept)."""
    if "axes" in mesh:
        graph["mesh"] = copy.deepcopy(mesh)
        graph["mesh"].setdefault("name", graph.get("mesh", {}).get("name", "mesh"))
        return
    name = graph.get("mesh", {}).get("name", "mesh")
    graph["mesh"] = {"name": name,
                     "axes": [[axis, size] for axis, size in mesh.items()]}


def _apply_plan(graph, plan):
    """plan: {value name: sharding} (the JSON format's "sharding": one mesh
    axis, a list of axes or null per dim) for inputs, op results and
    outputs."""
    entries = {}
    for entry in graph.get("inputs", []) + graph.get("outputs", []):
        entries.setdefault(entry.get("name"), []).append(entry)
    for op in graph.get("ops", []):
        entries.setdefault(op.get("output"), []).append(op)
    for name, sharding in plan.items():
        if name not in entries:
            raise ValueError(f"compile: the plan names '{name}', which is no "
                             "input, op result or output of the model")
        for entry in entries[name]:
            entry["sharding"] = sharding


class CompiledModel:
    """A model compiled for a mesh: ShardedEngine's load_checkpoint, forward,
    backward and inference_loop, plus train_step, and what the compiler
    knows about it (explain, simulate, spmd_program)."""

    def __init__(self, engine, model_path, graph_text, plan_path=None,
                 buffers=(), skipped=(), auto_sharded=False,
                 precision="f32", recompute="none"):
        self._engine = engine
        self._precision = precision
        self._recompute = recompute
        self._auto_sharded = auto_sharded
        self._model_path = model_path
        self._graph_text = graph_text
        self._plan_path = plan_path
        self._buffers = list(buffers)
        self._skipped = set(skipped)

    # --- what the engine runs ---
    @property
    def backend(self):
        return self._engine.backend

    @property
    def num_devices(self):
        return self._engine.num_devices

    @property
    def local_devices(self):
        """The devices this process drives (all of them, except under mpi)."""
        return self._engine.local_devices

    @property
    def parameter_names(self):
        return self._engine.parameter_names

    @property
    def input_names(self):
        """forward's arguments, in order (the non-parameter inputs)."""
        return self._engine.input_names

    @property
    def output_names(self):
        return self._engine.output_names

    @property
    def buffers(self):
        """The float initializers of an .onnx model that are constants of
        the model: those named with buffers= at compile and those shardc
        found by itself (the model's record of them, docs/onnx.md)."""
        return self._engine.recorded_buffers

    @property
    def mesh(self):
        """The mesh the engine shards over, as the JSON format writes it:
        {"name": ..., "axes": [(axis, size), ...]}."""
        return self._engine.mesh

    def shardings(self):
        """{name: sharding} of every input, parameter and output as the
        engine lays it out: per dim None (replicated), a mesh axis, or a
        list of axes, the format plan= takes. With auto_shard=True, what
        the plan chose."""
        return self._engine.shardings()

    def load_checkpoint(self, params):
        """Shards every parameter ({name: full array}) onto its devices.
        Entries of the buffers (a torch state_dict has them) set nothing:
        the model holds them as constants."""
        self._engine.load_checkpoint(
            {k: v for k, v in params.items() if k not in self._skipped})

    def parameters(self):
        """The full parameters as the devices hold them now."""
        return self._engine.parameters()

    def forward(self, *arrays):
        """The full outputs for full inputs (one per input_names): an array,
        or a tuple of them for several outputs."""
        return self._engine.forward(*arrays)

    def backward(self, *cotangents):
        """{parameter: gradient} for one cotangent per output of the last
        forward()."""
        return self._engine.backward(*cotangents)

    def train_step(self, *inputs, optimizer="sgd", lr=0.01, beta1=0.9,
                   beta2=0.999, epsilon=1e-8, zero_axes=()):
        """One optimizer step ('sgd' or 'adam') of a model whose first
        output is a scalar loss; returns the loss before the update. The
        step has the precision and recompute given to compile()."""
        return self._engine.train_step(*inputs, optimizer=optimizer, lr=lr,
                                       beta1=beta1, beta2=beta2,
                                       epsilon=epsilon,
                                       zero_axes=list(zero_axes),
                                       precision=self._precision,
                                       recompute=self._recompute)

    def inference_loop(self, input_stream, output_stream):
        """forward() on every item of input_stream (an array, or a tuple of
        arrays for several inputs), each result written to output_stream."""
        for x in iter(input_stream):
            out = self.forward(*x) if isinstance(x, tuple) else self.forward(x)
            output_stream.write(out)

    def memory(self):
        """Per local device, the bytes it holds (ZeRO's accounting)."""
        return self._engine.memory()

    def spmd_program(self):
        """The compiled per-device programs, as MLIR text."""
        return self._engine.spmd_program()

    # --- what the compiler says about the model (the shardc tool's
    # explain and simulate, run on the same model) ---
    def explain(self, machine=None):
        """Each value's sharding, where it came from, and the reshards the
        partitioner inserts with their bytes (`shardc explain`); machine:
        a machine description file to price them on (docs/machines.md)."""
        return self._run_tool(["explain"] + _machine_args(machine))

    def simulate(self, seed=0, tolerance=None, machine=None):
        """Runs the sharded program on a simulated mesh against the
        unsharded one; returns the report of `shardc simulate
        --report-json` as a dict (raises if they disagree). machine: a
        machine description file the partitioner and the time model
        (est_time_s) price on (docs/machines.md)."""
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "report.json")
            args = ["simulate", "--seed", str(seed), "--quiet",
                    "--report-json", report] + _machine_args(machine)
            if tolerance is not None:
                args += ["--tolerance", str(tolerance)]
            self._run_tool(args)
            with open(report, encoding="utf-8") as f:
                return json.load(f)

    def _run_tool(self, args):
        from ._tool import SHARDC_TOOL
        with tempfile.TemporaryDirectory() as tmp:
            path = self._model_path
            if path is None:
                path = os.path.join(tmp, "model.json")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(self._graph_text)
            if self._auto_sharded:
                # The tool gets the engine's layouts as a plan (they hold
                # the user's annotations too), not a search of its own.
                chosen = os.path.join(tmp, "plan.json")
                with open(chosen, "w", encoding="utf-8") as f:
                    json.dump({"mesh": self._engine.mesh,
                               "rules": list(self.shardings().items())}, f)
                args = args + ["--plan", chosen]
            elif self._plan_path is not None:
                args = args + ["--plan", self._plan_path]
            if self._buffers:
                args = args + ["--buffers", ",".join(self._buffers)]
            p = subprocess.run([SHARDC_TOOL, args[0], path] + args[1:],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=_tool_environment())
        if p.returncode != 0:
            raise ShardcError(f"shardc {args[0]} failed:\n{p.stderr.rstrip()}")
        return p.stdout


def _tool_environment():
    """This process's environment without a preloaded sanitizer runtime: a
    sanitizer build's interpreter needs it (docs/python.md), but the tool
    links its own, and two ASan runtimes refuse to start."""
    env = dict(os.environ)
    kept = [p for p in env.get("LD_PRELOAD", "").split()
            if "clang_rt." not in os.path.basename(p)
            and not os.path.basename(p).startswith("libasan")]
    if kept:
        env["LD_PRELOAD"] = " ".join(kept)
    else:
        env.pop("LD_PRELOAD", None)
    return env


def buffer_names(module, path):
    """The names of torch `module`'s buffers (`named_buffers()`) that the
    .onnx file `path`, exported from it, would otherwise make parameters:
    `compile(path, buffers=buffer_names(module, path))`, which
    `compile(path, buffers=module)` does. Buffers the export dropped
    (unused ones) or that shardc finds by itself are left out. Warns when
    the file was exported with constant folding: a buffer folded into a new
    initializer (`onnx::Add_76`) has lost its name and is trained unless
    named."""
    stored = set(_shardc.read_checkpoint(os.fspath(path)))
    floats = [name for name, b in module.named_buffers()
              if b.is_floating_point()]
    if floats and any(name.startswith("onnx::") for name in stored):
        warnings.warn(
            f"{os.fspath(path)} was exported with constant folding: float "
            "buffers folded into onnx::* initializers are parameters to "
            "shardc; export with do_constant_folding=False "
            "(docs/onnx.md#buffers)", stacklevel=2)
    return [name for name in floats if name in stored]


def _buffer_lists(buffers, model, is_path):
    """compile's buffers=: the names the importer is given, and the names
    whose checkpoint entries load_checkpoint skips (a torch module's every
    buffer: its state_dict has them all)."""
    if buffers is None:
        return [], []
    if not (is_path and os.fspath(model).endswith(".onnx")):
        raise ValueError("compile: buffers= names float initializers of an "
                         ".onnx model; in a JSON or MLIR model an input not "
                         "marked \"param\" is not trained")
    if hasattr(buffers, "named_buffers"):  # a torch.nn.Module
        return (buffer_names(buffers, model),
                [name for name, _ in buffers.named_buffers()])
    if isinstance(buffers, str):
        raise TypeError("compile: buffers= is a list of names or a torch "
                        "module, not a string")
    names = [str(name) for name in buffers]
    return names, names


def _auto_shard_request(auto_shard, memory_budget, time_limit):
    """compile's auto_shard=, memory_budget= and auto_shard_time_limit= as
    the extension takes them: None, or (budget or "", limit or None)."""
    if not isinstance(auto_shard, bool):
        raise TypeError("compile: auto_shard= is True or False, not "
                        f"{type(auto_shard).__name__}")
    if not auto_shard:
        if memory_budget is not None or time_limit is not None:
            raise ValueError("compile: memory_budget= and "
                             "auto_shard_time_limit= need auto_shard=True")
        return None
    if memory_budget is None:
        budget = ""
    elif isinstance(memory_budget, int) and not isinstance(memory_budget,
                                                           bool):
        if memory_budget <= 0:
            raise ValueError("compile: memory_budget must be a positive "
                             f"number of bytes, not {memory_budget}")
        budget = str(memory_budget)
    elif isinstance(memory_budget, str):
        budget = memory_budget  # "8M": checked with the tool's parser
    else:
        raise TypeError("compile: memory_budget= is bytes (an int) or a "
                        "string such as \"8M\", not "
                        f"{type(memory_budget).__name__}")
    if time_limit is not None and (
            isinstance(time_limit, bool)
            or not isinstance(time_limit, (int, float))):
        raise TypeError("compile: auto_shard_time_limit= is seconds (a "
                        f"number), not {type(time_limit).__name__}")
    return (budget, None if time_limit is None else float(time_limit))


def _machine_args(machine):
    """--machine for a machine file given by path (None: the default)."""
    if machine is None:
        return []
    return ["--machine", os.path.abspath(os.fspath(machine))]


def _pipelined(model, plan, mesh, backend, auto_shard, parameters,
               pipeline_axis, microbatches, schedule, recompute):
    """compile's pipelined model: the stage programs are planned from the
    model's own shardings and "param" inputs."""
    if plan or auto_shard or parameters is not None:
        raise ValueError("compile: plan=, auto_shard= and parameters= do not "
                         "combine with pipeline_axis=, microbatches= or "
                         "schedule=: the stages are planned from the model's "
                         "shardings and its \"param\" inputs")
    is_path = isinstance(model, (str, os.PathLike))
    if is_path and mesh and not os.fspath(model).endswith(".json"):
        raise ValueError("compile: mesh= applies to JSON graphs")
    path, text = (os.fspath(model), None) if is_path and not mesh else (None, None)
    if path is None:
        graph = _load_graph(model)
        if mesh:
            _apply_mesh(graph, mesh)
        text = json.dumps(graph, indent=1)
    return PipelinedModel(path, text, backend, pipeline_axis or "pipe",
                          microbatches or 0, schedule or "1f1b", recompute)


def compile(model, plan=None, mesh=None, backend="sim", auto_shard=False,
            parameters=None, training=True, mpi_timeout=300.0, buffers=None,
            memory_budget=None, auto_shard_time_limit=None, precision="f32",
            recompute="none", pipeline_axis=None, microbatches=None,
            schedule=None):
    """Compiles `model` into a sharded engine on `backend` ('sim',
    'threads', or 'mpi' with one rank per device under mpirun).

    model: a JSON graph as a dict, or the path of a .json, .mlir or .onnx
    model. plan: the path of a sharding plan file (a mesh and name patterns,
    docs/plans.md), for a model given by path; or {value name: sharding}
    added to (or replacing) a JSON graph's annotations; mesh: the mesh to
    shard over, replacing the model's ({axis: size} or the JSON format's
    mesh object). parameters: the inputs
    load_checkpoint sets and backward differentiates (default: those marked
    "param"). training=False skips the backward program.

    auto_shard=True chooses every sharding the model (and plan=) leaves
    open by cost, as `shardc train --auto-shard` does: the whole SGD step
    is planned when training, the forward program otherwise
    (docs/auto-sharding.md); shardings() shows the choice. memory_budget:
    the peak live bytes per device the plan may reach (an int, or a string
    with a K, M or G suffix; none by default, "none" says so);
    auto_shard_time_limit: a wall-clock backstop
    on the solve, in seconds (none by default: the solver's work limits
    bound it). Failures raise shardc.ShardcError with the diagnostics.

    precision ('f32', 'bf16-mixed' or 'f16-mixed', docs/precision.md) and
    recompute ('none', 'selective' or 'full', docs/recompute.md) shape the
    training step train_step() runs, as `shardc train --precision
    --recompute` do.

    pipeline_axis=, microbatches= or schedule= ('gpipe' or '1f1b') split
    the loss model into stages over that mesh axis (default 'pipe') and its
    batch into micro-batches (default: one per stage): the result is a
    PipelinedModel whose train() runs pipelined training steps as
    `shardc pipeline` does (docs/pipeline.md), with recompute= as
    `shardc pipeline --recompute` (precision= stays f32 there).
    """
    step = _training_step(precision, recompute)
    if (pipeline_axis, microbatches, schedule) != (None, None, None):
        if step["precision"] != "f32":
            raise ValueError("compile: precision= does not combine with "
                             "pipeline_axis=, microbatches= or schedule= "
                             "(shardc pipeline trains in f32)")
        return _pipelined(model, plan, mesh, backend, auto_shard, parameters,
                          pipeline_axis, microbatches, schedule,
                          step["recompute"])
    auto = _auto_shard_request(auto_shard, memory_budget,
                               auto_shard_time_limit)
    params = None if parameters is None else list(parameters)
    return _sharded(model, plan, mesh, backend, auto, params, training,
                    mpi_timeout, buffers, step)


def _training_step(precision, recompute):
    """compile's precision= and recompute=, checked: the settings of the
    training step train_step() runs."""
    if precision not in ("f32", "bf16-mixed", "f16-mixed"):
        raise ValueError(f"compile: unknown precision '{precision}' "
                         "(expected 'f32', 'bf16-mixed' or 'f16-mixed')")
    if recompute not in ("none", "selective", "full"):
        raise ValueError(f"compile: unknown recompute '{recompute}' "
                         "(expected 'none', 'selective' or 'full')")
    return {"precision": precision, "recompute": recompute}


def _sharded(model, plan, mesh, backend, auto, params, training, mpi_timeout,
             buffers, step):
    """compile's engine for a model that is not pipelined: from the model's
    file (with a plan file), or from its JSON graph with mesh= and plan=
    applied."""
    is_path = isinstance(model, (str, os.PathLike))
    buffers, skipped = _buffer_lists(buffers, model, is_path)
    if isinstance(plan, (str, os.PathLike)):
        if not is_path or mesh:
            raise ValueError("compile: a plan file applies to a model given "
                             "by path, and brings its own mesh (no mesh=)")
        path, plan_path = os.fspath(model), os.path.abspath(os.fspath(plan))
        engine = _shardc.compile_file(path, backend, params, training,
                                      mpi_timeout, plan_path, buffers,
                                      auto_shard=auto)
        return CompiledModel(engine, path, None, plan_path, buffers, skipped,
                             auto is not None, **step)
    if is_path and (plan or mesh) and str(model).endswith(".mlir"):
        raise ValueError("compile: plan= and mesh= apply to JSON graphs; "
                         "write the shardings into the .mlir model instead")
    if is_path and not plan and not mesh:
        path = os.fspath(model)
        engine = _shardc.compile_file(path, backend, params, training,
                                      mpi_timeout, "", buffers,
                                      auto_shard=auto)
        return CompiledModel(engine, path, None, None, buffers, skipped,
                             auto is not None, **step)
    if not is_path and not isinstance(model, dict):
        raise TypeError("compile: model must be a JSON graph (dict) or the "
                        f"path of a .json or .mlir file, not {type(model).__name__}")
    graph = _load_graph(model)
    if mesh:
        _apply_mesh(graph, mesh)
    if plan:
        _apply_plan(graph, plan)
    text = json.dumps(graph, indent=1)
    name = os.fspath(model) if is_path else "<graph>"
    engine = _shardc.compile_json(text, name, backend, params, training,
                                  mpi_timeout, auto_shard=auto)
    return CompiledModel(engine, None, text, auto_sharded=auto is not None,
                         **step)
