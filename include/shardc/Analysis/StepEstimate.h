//===- StepEstimate.h - a training step's memory and time -------*- C++ -*-===//
//
// What one training step of a partitioned program costs each device on a
// machine — peak memory by role, step time split into compute, exposed
// communication and pipeline bubble, FLOPs — computed from the types of the
// SPMD program alone: no tensor is allocated, so a 175B-parameter model on
// a thousand devices estimates in seconds (docs/estimate.md).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_ANALYSIS_STEPESTIMATE_H
#define SHARDC_ANALYSIS_STEPESTIMATE_H

#include "shardc/Analysis/CostModel.h"
#include "shardc/Analysis/PipelineSchedule.h"
#include "shardc/Analysis/TrainingAccounting.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace shardc {

struct EstimateOptions {
  Precision precision = Precision::F32;
  /// The recompute mode the program was built with, for the report: the
  /// estimate reads recomputation from the program (--shardc-recompute's
  /// `shardc.recomputed` copies); estimateTraining runs that pass with it.
  Recompute recompute = Recompute::None;
  /// Full recompute's layer inputs (--shardc-recompute's `layer-inputs`).
  std::string layerInputs = kDefaultLayerInputs.str();
  /// 1: ZeRO-1's accounting, gradients kept whole on every device until
  /// the end of the step (the program reduce-scatters them as ZeRO-2
  /// does; the traffic is the same). Else the program's gradient blocks.
  int zeroStage = 0;
  /// A mesh axis the layers are pipelined over ("": none): each of its
  /// `pipelineStages` coordinates holds an equal share of the layers.
  std::string pipelineAxis;
  int64_t microbatches = 1;
  PipelineScheduleKind schedule = PipelineScheduleKind::OneFOneB;
  /// The interleaved schedule's model chunks per device (v, at least 2);
  /// 1 for the other schedules.
  int64_t virtualStages = 1;
  /// Parameters of the whole model (for the report).
  double globalParameters = 0;
};

/// Per device (device 0; the SPMD program is the same on every device).
struct StepEstimate {
  int64_t numDevices = 0;
  int64_t pipelineStages = 1;
  int64_t microbatches = 1;
  double globalParameters = 0;
  // Memory, bytes.
  double parameters = 0, gradients = 0, optimizerState = 0;
  double activations = 0, temporaries = 0;
  double peakBytes() const {
    return parameters + gradients + optimizerState + activations + temporaries;
  }
  /// The forward values one micro-batch keeps for its backward pass.
  double savedActivationsPerMicrobatch = 0;
  // Time, seconds, for the whole step.
  double computeSeconds = 0, exposedCommunicationSeconds = 0;
  double bubbleSeconds = 0;
  double stepSeconds() const {
    return computeSeconds + exposedCommunicationSeconds + bubbleSeconds;
  }
  double bubbleFraction() const {
    double t = stepSeconds();
    return t > 0 ? bubbleSeconds / t : 0;
  }
  /// Communication before overlap, by kind: on the critical path (tensor
  /// parallelism's reductions), parameter gathers that are prefetched,
  /// gradient reductions overlapping the backward pass.
  /// Of the exposed communication: the pipeline's activation sends and
  /// their gradients' returns between stages (2 per micro-batch per chunk).
  double pipelineSendSeconds = 0;
  double criticalCommunicationSeconds = 0, prefetchCommunicationSeconds = 0,
         gradientCommunicationSeconds = 0;
  // FLOPs per device for the step: executed (recompute included) and the
  // model's (without recompute).
  double flopsPerDevice = 0, modelFlopsPerDevice = 0;
  double recomputeFlopsPerDevice = 0;
  double peakFlopsPerSecond = 0;
  /// Kernels (ops that cost something) and collective calls per device
  /// for the step: what the machine's per-op overhead and per-collective
  /// rendezvous multiply (docs/machines.md).
  double kernelsPerDevice = 0, collectivesPerDevice = 0;
  double tflopsPerDevice() const {
    double t = stepSeconds();
    return t > 0 ? flopsPerDevice / t / 1e12 : 0;
  }
  /// Model FLOPs utilization: the model's FLOPs over the peak's.
  double mfu() const {
    double t = stepSeconds();
    return t > 0 ? modelFlopsPerDevice / (t * peakFlopsPerSecond) : 0;
  }
};

/// What one walk over a partitioned program gives its estimate: the
/// seconds, FLOPs, kernels and collectives of one micro-batch's forward and
/// backward and of the update, the pipeline's send, and the memory by role
/// before the pipeline divides it. The micro-batch count, the schedule and
/// its chunks per device only combine these (scheduleStep), so the
/// whole-plan search walks each program once for all of them.
struct StepProfile {
  /// The figures that do not depend on the schedule (devices, stages,
  /// parameters, peak FLOP/s, the memory by role of one micro-batch).
  StepEstimate shared;
  double cf = 0, cb = 0, cu = 0;         // compute seconds
  double ff = 0, fb = 0, fu = 0, fr = 0; // FLOPs (fr: recomputed)
  double kc = 0, kp = 0, kg = 0, ku = 0; // communication seconds
  /// Kernels and collective calls: per micro-batch (forward, backward and
  /// recompute) and in the update.
  double nk = 0, nku = 0, nc = 0, ncu = 0;
  /// One stage boundary's send of one micro-batch.
  double sendSeconds = 0;
  /// Whether communication can hide behind compute: not when the devices
  /// time-share the host's cores (MachineModel::timeSharing), where no core
  /// idles while one waits.
  bool communicationOverlaps = true;
};

/// The profile of the model `layers` deep from those of its first layer
/// (`one`) and first two (`two`): every additive figure (seconds, FLOPs,
/// kernels, collectives, parameters, memory by role) linearly,
/// P(L) = P(1) + (L - 1)(P(2) - P(1)), since each layer adds the same to
/// each; what a layer does not add (a stage boundary's send, the devices,
/// the stages) is `two`'s. Extrapolate profiles, not estimates: the
/// schedule's overlap (what communication shows beyond compute) is not
/// linear in depth, and scheduleStep applies it to the extrapolated sums.
StepProfile extrapolateInDepth(const StepProfile &one, const StepProfile &two,
                               int64_t layers);

/// The walk of estimateStep, under `options`' precision, ZeRO stage,
/// pipeline axis and layer inputs (its micro-batches and schedule
/// unused). Fails with a diagnostic on a pipeline axis the mesh lacks.
mlir::FailureOr<StepProfile> profileStep(mlir::func::FuncOp spmd, MeshOp mesh,
                                         const MachineModel &machine,
                                         const EstimateOptions &options);

/// The estimate of `profile` under `options`' micro-batches, schedule and
/// chunks per device (valid ones: estimateStep checks them).
StepEstimate scheduleStep(const StepProfile &profile,
                          const EstimateOptions &options);

/// Estimates one step of `spmd`, a partitioned training step (the
/// --train-step program: its first result the loss, its arguments marked
/// shardc.param and shardc.optimizer_state, its results shardc.gradient_of
/// and shardc.next) or any partitioned program, recomputation included
/// (the copies --shardc-recompute makes). Fails with a diagnostic on a
/// pipeline axis the mesh lacks.
mlir::FailureOr<StepEstimate> estimateStep(mlir::func::FuncOp spmd, MeshOp mesh,
                                           const MachineModel &machine,
                                           const EstimateOptions &options);

} // namespace shardc

#endif // SHARDC_ANALYSIS_STEPESTIMATE_H
