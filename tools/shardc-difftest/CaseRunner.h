//===- CaseRunner.h - checking one generated case ---------------*- C++ -*-===//
//
// Runs a case the way the tools would: turns it into the program of its kind
// (the VJP or the optimizer step, after propagation), runs the unsharded
// program on the reference interpreter, shards it with the pipeline `shardc
// simulate` uses, runs the result on the simulated mesh and, for some cases,
// on the threads backend through the MeshBackend interface `shardc exec`
// uses, and compares. A global program holding a collective must instead be
// rejected, with a diagnostic at the collective, by both.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_DIFFTEST_CASERUNNER_H
#define SHARDC_TOOLS_DIFFTEST_CASERUNNER_H

#include "Generator.h"

#include "mlir/IR/Location.h"

namespace shardc {

/// What the diagnostic handler saw during a case.
struct DiagnosticLog {
  std::string text;
  /// Locations of the errors, in order.
  std::vector<mlir::Location> errorLocs;
  void clear() {
    text.clear();
    errorLocs.clear();
  }
};

struct CaseResult {
  bool failed = false;
  std::string reason;
  int64_t collectives = 0;
  /// all_reduce ops of kind max after a reduce_max whose reduced dim was
  /// split, and elementwise ops computed on pending sums (kept pending):
  /// how often the run met these partitioner paths.
  int64_t maxReductions = 0;
  int64_t linearOnSummands = 0;
  double worstRel = 0;
  bool ranThreads = false;
};

/// Checks `c` on inputs seeded by `inputSeed`. Errors emitted while a step
/// is expected to succeed fail the case even if the step claims success.
/// A non-zero `perturb` makes the sharded result deliberately wrong: its
/// first element of every output moves by `perturb` times the scale the
/// output is judged on (for the test that the check still sees errors).
CaseResult runCase(const GeneratedCase &c, uint64_t inputSeed,
                   double tolerance, DiagnosticLog &log, double perturb = 0);

} // namespace shardc

#endif // SHARDC_TOOLS_DIFFTEST_CASERUNNER_H
