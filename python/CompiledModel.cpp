//===- CompiledModel.cpp - shardc.compile's result ------------------------===//

#include "CompiledModel.h"
#include "Arrays.h"
#include "Errors.h"
#include "MpiJob.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardcAttrs.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Engine/Setup.h"
#include "shardc/Engine/ShardedEngine.h"
#include "shardc/Import/JsonImporter.h"
#include "shardc/Import/ModelLoader.h"
#include "shardc/Import/ShardingPlan.h"
#include "shardc/Transforms/AutoShard.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace shardc;
using namespace shardc::python;

namespace {

/// What CompiledModel::run returns for a call returning `R`: nothing for a
/// LogicalResult, the value of a FailureOr.
template <typename R> struct RunResultOf {
  using type = typename R::value_type;
};
template <> struct RunResultOf<mlir::LogicalResult> { using type = void; };
template <typename R> using RunResult = typename RunResultOf<R>::type;

/// How compile() was asked to build the engine.
struct CompileRequest {
  std::string backend = "sim";
  std::optional<std::vector<std::string>> parameters;
  bool training = true;
  double mpiTimeout = MpiCommunicatorOptions::kDefaultTimeoutSeconds;
  /// compile(auto_shard=True): the memory budget ("" for none) and the
  /// solver's time limit (the pass's default when not given).
  std::optional<std::pair<std::string, std::optional<double>>> autoShard;
  /// The name of the model's text when the module serialized it itself
  /// (DiagnosticCapture); empty for a model file read as it is.
  std::string serializedSource;
};

/// EngineOptions::autoShard for compile(auto_shard=True, memory_budget=,
/// auto_shard_time_limit=), with `shardc train --auto-shard`'s checks.
ShardcAutoShardOptions
autoShardOptions(const std::pair<std::string, std::optional<double>> &asked) {
  ShardcAutoShardOptions options;
  const auto &[budget, timeLimit] = asked;
  if (!isMemoryBudgetSpelling(budget))
    throw py::value_error("compile: memory_budget: expected a byte count "
                          "with an optional K, M or G suffix, or 'none', "
                          "got '" +
                          budget + "'");
  options.memoryBudget = budget;
  if (timeLimit) {
    if (!(*timeLimit > 0))
      throw py::value_error(
          "compile: auto_shard_time_limit must be positive seconds");
    options.timeLimit = *timeLimit;
  }
  return options;
}

/// A sharding as compile(plan=) takes it (the JSON format's "sharding"):
/// per dim None (replicated), an axis, or a list of axes.
py::list partitionSpec(ShardingAttr sharding) {
  py::list dims;
  for (size_t d = 0; d < sharding.getRank(); ++d) {
    llvm::SmallVector<llvm::StringRef> axes = sharding.getDimAxes(d);
    if (axes.empty())
      dims.append(py::none());
    else if (axes.size() == 1)
      dims.append(py::str(axes.front().str()));
    else {
      py::list several;
      for (llvm::StringRef axis : axes)
        several.append(py::str(axis.str()));
      dims.append(several);
    }
  }
  return dims;
}

class CompiledModel {
public:
  /// Reads the model with `load` (null after a diagnostic) and compiles it.
  static std::unique_ptr<CompiledModel> create(
      const CompileRequest &request,
      llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>(mlir::MLIRContext &,
                                                           llvm::SourceMgr &)>
          load) {
    std::optional<BackendKind> kind = parseBackendKind(request.backend);
    if (!kind)
      throw py::value_error("compile: unknown backend '" + request.backend +
                            "' (expected 'sim', 'threads' or 'mpi')");
    if (request.mpiTimeout < 0)
      throw py::value_error("compile: mpi_timeout must be >= 0 seconds");
    EngineOptions options;
    options.backend = *kind;
    options.training = request.training;
    options.mpi.timeoutSeconds = request.mpiTimeout;
    if (request.parameters)
      options.parameters = *request.parameters;
    if (request.autoShard)
      options.autoShard = autoShardOptions(*request.autoShard);
    if (*kind == BackendKind::Mpi)
      joinMpiJob();

    auto model = std::unique_ptr<CompiledModel>(new CompiledModel());
    model->serializedSource = request.serializedSource;
    DiagnosticCapture capture(*model->context, model->sourceMgr,
                              model->serializedSource);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        load(*model->context, model->sourceMgr);
    if (!module)
      capture.raise("compile: cannot read the model");
    mlir::FailureOr<std::unique_ptr<ShardedEngine>> engine;
    {
      py::gil_scoped_release release;
      engine = ShardedEngine::compile(std::move(module), options);
    }
    if (mlir::failed(engine))
      capture.raise("compile: cannot compile the model");
    model->engine = std::move(*engine);
    model->backendName = request.backend;
    return model;
  }

  void loadCheckpoint(const py::dict &params) {
    std::map<std::string, Tensor> tensors;
    for (auto [name, array] : params) {
      std::string key = py::str(name).cast<std::string>();
      tensors[key] = toTensor(array, "load_checkpoint: '" + key + "'");
    }
    run("load_checkpoint", [&] { return engine->loadCheckpoint(tensors); });
  }

  py::object forward(const py::args &arrays) {
    std::vector<Tensor> inputs = tensorsOf(arrays, "forward");
    std::vector<Tensor> outputs =
        run("forward", [&] { return engine->forward(inputs); });
    if (outputs.size() == 1)
      return toArray(std::move(outputs.front()));
    py::tuple tuple(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i)
      tuple[i] = toArray(std::move(outputs[i]));
    return std::move(tuple);
  }

  py::dict backward(const py::args &cotangents) {
    std::vector<Tensor> grads = tensorsOf(cotangents, "backward");
    return toDict(run("backward", [&] { return engine->backward(grads); }));
  }

  float trainStep(const py::args &arrays, const std::string &optimizer,
                  float lr, float beta1, float beta2, float epsilon,
                  const std::vector<std::string> &zeroAxes,
                  const std::string &precision, const std::string &recompute) {
    OptimizerOptions options;
    if (optimizer == "sgd")
      options.kind = OptimizerOptions::Kind::Sgd;
    else if (optimizer == "adam")
      options.kind = OptimizerOptions::Kind::Adam;
    else
      throw py::value_error("train_step: unknown optimizer '" + optimizer +
                            "' (expected 'sgd' or 'adam')");
    options.learningRate = lr;
    options.beta1 = beta1;
    options.beta2 = beta2;
    options.epsilon = epsilon;
    options.zeroAxes = zeroAxes;
    if (precision != "f32" && precision != "bf16-mixed" &&
        precision != "f16-mixed")
      throw py::value_error("train_step: unknown precision '" + precision +
                            "' (expected 'f32', 'bf16-mixed' or 'f16-mixed')");
    options.precision = precision;
    if (recompute != "none" && recompute != "selective" && recompute != "full")
      throw py::value_error("train_step: unknown recompute '" + recompute +
                            "' (expected 'none', 'selective' or 'full')");
    options.recompute = recompute;
    std::vector<Tensor> inputs = tensorsOf(arrays, "train_step");
    return run("train_step",
               [&] { return engine->trainStep(inputs, options); });
  }

  py::dict parameters() {
    return toDict(run("parameters", [&] { return engine->parameters(); }));
  }

  std::string spmdProgram() {
    std::string text;
    llvm::raw_string_ostream os(text);
    engine->program().print(os);
    return text;
  }

  py::list memory() {
    py::list list;
    llvm::ArrayRef<int64_t> devices = engine->localDevices();
    std::vector<DeviceMemory> memory = engine->memoryPerDevice();
    for (size_t i = 0; i < memory.size(); ++i) {
      py::dict d;
      d["device"] = devices[i];
      d["parameters"] = memory[i].parameters;
      d["gradients"] = memory[i].gradients;
      d["optimizer_state"] = memory[i].optimizerState;
      d["activations"] = memory[i].activations;
      d["total"] = memory[i].total();
      list.append(d);
    }
    return list;
  }

  /// {name: per-dim sharding} of every input, parameter and output, as
  /// the engine lays them out (a plan's choice under auto_shard).
  py::dict shardings() {
    mlir::func::FuncOp func = getEntryFunction(engine->program());
    llvm::StringRef key = ShardcDialect::getShardingAttrName();
    py::dict out;
    if (!func)
      return out;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto s = func.getArgAttrOfType<ShardingAttr>(i, key))
        out[py::str(getArgumentName(func, i))] = partitionSpec(s);
    const std::vector<std::string> &names = engine->outputNames();
    for (unsigned i = 0; i < func.getNumResults() && i < names.size(); ++i)
      if (auto s = func.getResultAttrOfType<ShardingAttr>(i, key))
        out[py::str(names[i])] = partitionSpec(s);
    return out;
  }

  /// The mesh as the JSON format and plans write it: {"name", "axes":
  /// [[axis, size], ...]}.
  py::dict mesh() {
    py::dict out;
    MeshOp mesh = getOnlyMesh(engine->program());
    if (!mesh)
      return out;
    py::list axes;
    for (auto [name, size] :
         llvm::zip(mesh.getAxisNames(), mesh.getAxisSizes()))
      axes.append(py::make_tuple(
          py::str(mlir::cast<mlir::StringAttr>(name).str()), size));
    out["name"] = py::str(mesh.getSymName().str());
    out["axes"] = axes;
    return out;
  }

  /// The checkpoint entries load_checkpoint skips: the model's buffers.
  std::vector<std::string> bufferNames() {
    return getModelBufferNames(engine->program());
  }

  ShardedEngine &getEngine() { return *engine; }
  const std::string &getBackend() const { return backendName; }

private:
  CompiledModel() : context(std::make_unique<mlir::MLIRContext>()) {
    setUpContext(*context);
  }

  std::vector<Tensor> tensorsOf(const py::args &arrays, const char *what) {
    std::vector<Tensor> tensors;
    for (size_t i = 0; i < arrays.size(); ++i)
      tensors.push_back(toTensor(arrays[i], std::string(what) + ": argument " +
                                                std::to_string(i)));
    return tensors;
  }

  /// Runs `fn` without the GIL; raises with the diagnostics if it fails.
  template <typename Fn>
  auto run(const char *what, Fn &&fn) -> RunResult<std::invoke_result_t<Fn>> {
    DiagnosticCapture capture(*context, sourceMgr, serializedSource);
    decltype(fn()) result = mlir::failure();
    {
      py::gil_scoped_release release;
      result = fn();
    }
    if (mlir::failed(result))
      capture.raise(std::string(what) + " failed");
    if constexpr (std::is_same_v<decltype(result), mlir::LogicalResult>)
      return;
    else
      return std::move(*result);
  }

  std::unique_ptr<mlir::MLIRContext> context;
  llvm::SourceMgr sourceMgr;
  std::string serializedSource;
  std::unique_ptr<ShardedEngine> engine;
  std::string backendName;
};

using AutoShardRequest =
    std::optional<std::pair<std::string, std::optional<double>>>;

CompileRequest request(const std::string &backend,
                       std::optional<std::vector<std::string>> parameters,
                       bool training, double mpiTimeout,
                       AutoShardRequest autoShard) {
  CompileRequest r;
  r.autoShard = std::move(autoShard);
  r.backend = backend;
  r.parameters = std::move(parameters);
  r.training = training;
  r.mpiTimeout = mpiTimeout;
  return r;
}

} // namespace

namespace {

/// The CompiledModel class: the engine's lifecycle and its properties.
void bindCompiledModelClass(py::module_ &m) {
  py::class_<CompiledModel>(m, "CompiledModel")
      .def("load_checkpoint", &CompiledModel::loadCheckpoint, py::arg("params"))
      .def("forward", &CompiledModel::forward)
      .def("backward", &CompiledModel::backward)
      .def("train_step", &CompiledModel::trainStep, py::arg("optimizer"),
           py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
           py::arg("epsilon"), py::arg("zero_axes"),
           py::arg("precision") = "f32", py::arg("recompute") = "none")
      .def("parameters", &CompiledModel::parameters)
      .def("spmd_program", &CompiledModel::spmdProgram)
      .def("memory", &CompiledModel::memory)
      .def("shardings", &CompiledModel::shardings)
      .def_property_readonly("mesh", &CompiledModel::mesh)
      .def_property_readonly("recorded_buffers", &CompiledModel::bufferNames)
      .def_property_readonly("backend", &CompiledModel::getBackend)
      .def_property_readonly(
          "num_devices",
          [](CompiledModel &m) { return m.getEngine().numDevices(); })
      .def_property_readonly("local_devices",
                             [](CompiledModel &m) {
                               llvm::ArrayRef<int64_t> d =
                                   m.getEngine().localDevices();
                               return std::vector<int64_t>(d.begin(), d.end());
                             })
      .def_property_readonly(
          "parameter_names",
          [](CompiledModel &m) { return m.getEngine().parameterNames(); })
      .def_property_readonly(
          "input_names",
          [](CompiledModel &m) { return m.getEngine().inputNames(); })
      .def_property_readonly("output_names", [](CompiledModel &m) {
        return m.getEngine().outputNames();
      });
}

/// compile_file: the model at `path`, with the plan file `planPath` (when
/// not empty) applied, compiled for `backend`.
std::unique_ptr<CompiledModel>
compileFile(const std::string &path, const std::string &backend,
            std::optional<std::vector<std::string>> parameters, bool training,
            double mpiTimeout, const std::string &planPath,
            std::vector<std::string> buffers, AutoShardRequest autoShard) {
  auto format = resolveModelFormat(path, "");
  if (!format)
    raiseError("compile: " + llvm::toString(format.takeError()));
  std::optional<ShardingPlan> plan;
  if (!planPath.empty()) {
    llvm::Expected<ShardingPlan> read = readShardingPlan(planPath);
    if (!read)
      raiseError("compile: " + llvm::toString(read.takeError()));
    plan = std::move(*read);
  }
  return CompiledModel::create(
      request(backend, std::move(parameters), training, mpiTimeout,
              std::move(autoShard)),
      [&](mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr) {
        mlir::OwningOpRef<mlir::ModuleOp> module =
            loadModel(path, *format, sourceMgr, &context,
                      OnnxImportOptions{std::move(buffers)});
        if (module && plan)
          if (llvm::Error e = applyShardingPlan(*module, *plan, planPath)) {
            mlir::emitError(mlir::UnknownLoc::get(&context))
                << llvm::toString(std::move(e));
            return mlir::OwningOpRef<mlir::ModuleOp>();
          }
        return module;
      });
}

} // namespace

void shardc::python::bindCompiledModel(py::module_ &m) {
  bindCompiledModelClass(m);
  m.def("compile_file", &compileFile, py::arg("path"), py::arg("backend"),
        py::arg("parameters"), py::arg("training"), py::arg("mpi_timeout"),
        py::arg("plan") = "", py::arg("buffers") = std::vector<std::string>(),
        py::arg("auto_shard") = py::none());
  m.def(
      "compile_json",
      [](const std::string &text, const std::string &name,
         const std::string &backend,
         std::optional<std::vector<std::string>> parameters, bool training,
         double mpiTimeout, AutoShardRequest autoShard) {
        // The text is json.dumps's, not the user's: its diagnostics quote
        // no line of it (DiagnosticCapture).
        CompileRequest r = request(backend, std::move(parameters), training,
                                   mpiTimeout, std::move(autoShard));
        r.serializedSource = name;
        return CompiledModel::create(
            r, [&](mlir::MLIRContext &context, llvm::SourceMgr &) {
              return importJsonGraph(text, name, &context);
            });
      },
      py::arg("text"), py::arg("name"), py::arg("backend"),
      py::arg("parameters"), py::arg("training"), py::arg("mpi_timeout"),
      py::arg("auto_shard") = py::none());
}
