//===- AutoShardRelaxation.cpp - the ILP's relaxation, by Clp -------------===//
//
// The auto-sharding program with its integers relaxed, solved by Clp's
// dual simplex and stopped at a deadline. On the programs auto-sharding
// makes the relaxation is mostly integral already, and then it is the plan
// (AutoShardSolver.cpp). CBC's own first LP is neither fast (primal
// simplex, four times slower here) nor bounded by its time limit, and
// Clp's time limit is checked too rarely (a 20 s limit ran 42 s on
// gpt_tiny's step); an event handler checks the clock every iteration.
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

using namespace shardc::detail;

namespace {
class StopAtDeadline : public ClpEventHandler {
public:
  explicit StopAtDeadline(SolveClock::time_point deadline)
      : deadline(deadline) {}
  int event(Event event) override {
    // 0 stops the solve (status 5); -1 carries on.
    return event == endOfIteration && SolveClock::now() >= deadline ? 0 : -1;
  }
  ClpEventHandler *clone() const override {
    return new StopAtDeadline(*this);
  }

private:
  SolveClock::time_point deadline;
};
} // namespace

Relaxation shardc::detail::solveRelaxation(const LinearProgram &program,
                                           SolveClock::time_point deadline,
                                           std::vector<double> &solution) {
  ClpSimplex lp;
  lp.setLogLevel(0);
  lp.loadProblem(program.numColumns, program.numRows, program.starts,
                 program.rows, program.values, program.columnLower,
                 program.columnUpper, program.objective, program.rowLower,
                 program.rowUpper);
  StopAtDeadline stop(deadline);
  lp.passInEventHandler(&stop);
  double left = std::chrono::duration<double>(deadline - SolveClock::now())
                    .count();
  lp.setMaximumSeconds(std::max(left, 0.001));
  ClpSolve options;
  options.setSolveType(ClpSolve::useDual);
  lp.initialSolve(options);
  if (lp.isProvenOptimal()) {
    const double *values = lp.primalColumnSolution();
    solution.assign(values, values + program.numColumns);
    return Relaxation::Solved;
  }
  if (lp.isProvenPrimalInfeasible())
    return Relaxation::Infeasible;
  return Relaxation::TimedOut;
}
