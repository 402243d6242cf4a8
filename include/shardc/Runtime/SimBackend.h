//===- SimBackend.h - the simulated mesh as a MeshBackend -------*- C++ -*-===//
//
// Every device in this process, run in lockstep by simulateOnMesh: the
// deterministic, instrumented backend. Each run() keeps its report (bytes
// per collective, peak memory per device, estimated time) for the caller.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_SIMBACKEND_H
#define SHARDC_RUNTIME_SIMBACKEND_H

#include "shardc/Runtime/MeshBackend.h"
#include "shardc/Runtime/SimulatedMesh.h"

namespace shardc {

class SimBackend : public MeshBackend {
public:
  /// Fails (diagnostic at the mesh) for a mesh its verifier would reject.
  static mlir::FailureOr<std::unique_ptr<SimBackend>>
  create(MeshOp mesh, const SimulationOptions &options = {});

  BackendKind kind() const override { return BackendKind::Sim; }
  int64_t numDevices() const override {
    return static_cast<int64_t>(devices.size());
  }
  llvm::ArrayRef<int64_t> localDevices() const override { return devices; }
  mlir::FailureOr<DeviceTensors> run(mlir::func::FuncOp spmd,
                                     const DeviceTensors &args) override;
  mlir::FailureOr<std::vector<Tensor>>
  gatherBlocks(std::vector<Tensor> localBlocks) override;

  /// The report of the last successful run().
  const SimulationReport &lastReport() const { return report; }
  std::vector<TraceSpan> lastTrace() const override {
    return tracing ? report.trace : std::vector<TraceSpan>();
  }

private:
  SimBackend(MeshOp mesh, const SimulationOptions &options, int64_t numDevices);

  MeshOp mesh;
  SimulationOptions options;
  std::vector<int64_t> devices;
  SimulationReport report;
};

} // namespace shardc

#endif // SHARDC_RUNTIME_SIMBACKEND_H
