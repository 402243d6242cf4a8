//===- PipelineTraining.cpp - pipelined training, for Python --------------===//

#include "PipelineTraining.h"

#include "Arrays.h"
#include "Errors.h"
#include "MpiJob.h"

#include "shardc/Driver/PipelinedModel.h"
#include "shardc/Engine/Setup.h"
#include "shardc/Import/ModelLoader.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FormatVariadic.h"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace shardc;
using namespace shardc::python;

namespace {

/// What shardc pipeline's flags say, from train_pipelined's arguments.
PipelineTrainingOptions trainingOptions(const py::dict &args) {
  PipelineTrainingOptions options;
  auto backend = parseBackendKind(args["backend"].cast<std::string>());
  auto schedule = parsePipelineSchedule(args["schedule"].cast<std::string>());
  if (!backend)
    throw py::value_error("compile: unknown backend (expected 'sim', "
                          "'threads' or 'mpi')");
  if (!schedule)
    throw py::value_error("compile: unknown schedule (expected 'gpipe' or "
                          "'1f1b')");
  options.backend = *backend;
  options.pipeline.schedule = *schedule;
  options.pipeline.axis = args["pipeline_axis"].cast<std::string>();
  options.pipeline.microbatches = args["microbatches"].cast<int64_t>();
  options.pipeline.optimizer.optimizer = args["optimizer"].cast<std::string>();
  options.pipeline.optimizer.recompute = args["recompute"].cast<std::string>();
  options.learningRate = args["lr"].cast<double>();
  options.steps = args["steps"].cast<int64_t>();
  options.tolerance = args["tolerance"].cast<double>();
  return options;
}

/// The result as train() returns it: the whole loss and parameters, the
/// check against the unsharded steps and the report.
py::dict toResult(PipelinedModelTraining &t,
                  const PipelineTrainingOptions &options) {
  py::dict result;
  result["loss"] = toArray(std::move(t.values.loss));
  result["parameters"] = toDict(std::move(t.values.parameters));
  result["max_rel_err"] = t.training.check.worstRelativeError;
  result["ok"] = t.training.check.ok;
  result["mismatches"] = t.training.check.verdicts;
  result["report"] =
      llvm::formatv("{0}", llvm::json::Value(pipelineReportToJson(
                               t.plan, t.training, options)))
          .str();
  return result;
}

py::dict trainModelFile(const std::string &path, const py::dict &args,
                        const py::dict &inputs, std::optional<uint64_t> seed) {
  PipelineTrainingOptions options = trainingOptions(args);
  std::map<std::string, Tensor> given;
  for (auto [key, array] : inputs) {
    std::string name = key.cast<std::string>();
    given[name] = toTensor(array, "train: input '" + name + "'");
  }
  llvm::Expected<ModelFormat> format = resolveModelFormat(path, "");
  if (!format)
    raiseError("compile: " + llvm::toString(format.takeError()));
  if (options.backend == BackendKind::Mpi)
    joinMpiJob();
  mlir::MLIRContext context;
  setUpContext(context);
  llvm::SourceMgr sourceMgr;
  DiagnosticCapture capture(context, sourceMgr);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      loadModel(path, *format, sourceMgr, &context);
  if (!module)
    capture.raise("compile: cannot read the model");
  mlir::FailureOr<PipelinedModelTraining> training;
  {
    py::gil_scoped_release release;
    training = trainModelPipelined(*module, given, seed, options);
  }
  if (mlir::failed(training))
    capture.raise("train: the pipelined training failed");
  return toResult(*training, options);
}

} // namespace

void shardc::python::bindPipelineTraining(py::module_ &m) {
  m.def("train_pipelined", &trainModelFile, py::arg("path"), py::arg("args"),
        py::arg("inputs"), py::arg("seed"));
}
