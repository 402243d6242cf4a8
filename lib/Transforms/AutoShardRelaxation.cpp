//===- AutoShardRelaxation.cpp - the ILP's relaxation, by Clp -------------===//
//
// The auto-sharding program with its integers relaxed, solved by Clp's
// dual simplex within a number of iterations (the deterministic bound: the
// outcome never depends on the machine's speed) and, as a backstop, a
// deadline. On the programs auto-sharding makes the relaxation is mostly
// integral already, and then it is the plan (AutoShardSolver.cpp). CBC's
// own first LP is neither fast (primal simplex, four times slower here)
// nor bounded by its time limit, and Clp's time limit is checked too
// rarely (a 20 s limit ran 42 s on gpt_tiny's step); an event handler
// checks the clock every iteration.
//
// Clp's C++ headers throw: this file alone is built with exceptions
// (CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"

#include "coin/ClpEventHandler.hpp"
#include "coin/ClpSimplex.hpp"
#include "coin/ClpSolve.hpp"

#include <algorithm>
#include <cmath>

using namespace shardc::detail;

namespace {
class StopAtDeadline : public ClpEventHandler {
public:
  /// `fired` says, after the solve, whether the deadline stopped it (Clp
  /// solves with a clone of the handler).
  StopAtDeadline(SolveClock::time_point deadline, bool *fired)
      : deadline(deadline), fired(fired) {}
  int event(Event event) override {
    if (event != endOfIteration || SolveClock::now() < deadline)
      return -1; // carries on
    *fired = true;
    return 0; // stops the solve
  }
  ClpEventHandler *clone() const override {
    return new StopAtDeadline(*this);
  }

private:
  SolveClock::time_point deadline;
  bool *fired;
};
} // namespace

/// Reduced costs and duals below this (the objective's units: the
/// solver's microseconds) are Clp's dual tolerance: zero.
static constexpr double kZeroReducedCost = 1e-7;

/// Among `lp`'s optima, the one least by `program.tieBreak`: every column
/// and row whose reduced cost or dual is not zero is fixed where it is
/// (moving it would cost), which leaves the optimal face, and the primal
/// simplex, from the optimal basis, minimizes the tie-break there. Kept
/// only if it ends optimal within the limits.
static void minimizeTieBreak(ClpSimplex &lp, const LinearProgram &program,
                             int maxIterations, std::vector<double> &solution) {
  const double *reduced = lp.dualColumnSolution();
  const double *values = lp.primalColumnSolution();
  for (int c = 0; c < program.numColumns; ++c)
    if (std::abs(reduced[c]) > kZeroReducedCost) {
      lp.setColumnLower(c, values[c]);
      lp.setColumnUpper(c, values[c]);
    }
  const double *duals = lp.dualRowSolution();
  const double *activity = lp.primalRowSolution();
  for (int r = 0; r < program.numRows; ++r)
    if (std::abs(duals[r]) > kZeroReducedCost) {
      lp.setRowLower(r, activity[r]);
      lp.setRowUpper(r, activity[r]);
    }
  lp.chgObjCoefficients(program.tieBreak);
  lp.setMaximumIterations(maxIterations);
  lp.primal();
  if (!lp.isProvenOptimal())
    return;
  const double *least = lp.primalColumnSolution();
  solution.assign(least, least + program.numColumns);
}

Relaxation shardc::detail::solveRelaxation(const LinearProgram &program,
                                           SolveClock::time_point deadline,
                                           int maxIterations,
                                           std::vector<double> &solution) {
  ClpSimplex lp;
  lp.setLogLevel(0);
  lp.loadProblem(program.numColumns, program.numRows, program.starts,
                 program.rows, program.values, program.columnLower,
                 program.columnUpper, program.objective, program.rowLower,
                 program.rowUpper);
  // Past the deadline already: nothing starts, whatever the machine.
  if (SolveClock::now() >= deadline)
    return Relaxation::TimedOut;
  bool pastDeadline = false;
  StopAtDeadline stop(deadline, &pastDeadline);
  lp.passInEventHandler(&stop);
  lp.setMaximumIterations(maxIterations);
  // A crashed starting basis and always-perturbed costs: the 4-layer
  // Llama step's compile (its clustered program's relaxation most of it)
  // took 2.3 CPU seconds rather than 5.0. The optimum it ends on may be
  // another of equally fast ones; the tie-break (minimizeTieBreak) chooses
  // among them, so the plan does not depend on which. Not for the
  // byte-priced probes (AutoShardProblem::slackBasis).
  ClpSolve options;
  options.setSolveType(ClpSolve::useDual);
  if (program.crash)
    options.setSpecialOption(0, 1);
  lp.setPerturbation(50);
  lp.initialSolve(options);
  if (lp.isProvenOptimal()) {
    const double *values = lp.primalColumnSolution();
    solution.assign(values, values + program.numColumns);
    if (program.tieBreak && !pastDeadline)
      minimizeTieBreak(lp, program, maxIterations, solution);
    return Relaxation::Solved;
  }
  if (lp.isProvenPrimalInfeasible())
    return Relaxation::Infeasible;
  return pastDeadline ? Relaxation::TimedOut : Relaxation::WorkLimit;
}
