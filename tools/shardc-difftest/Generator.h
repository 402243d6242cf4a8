//===- Generator.h - random shardc programs for difftest --------*- C++ -*-===//
//
// Builds small random, well-typed shardc modules (one mesh, one @main) with
// random partial sharding annotations, deterministically from a seed, so a
// failing case can be regenerated from (seed, case number) alone.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_DIFFTEST_GENERATOR_H
#define SHARDC_TOOLS_DIFFTEST_GENERATOR_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>

namespace shardc {

/// A deterministic random source (SplitMix64). We avoid <random>'s
/// distributions because their output differs between standard libraries,
/// and a reproducer must mean the same program everywhere.
class DiffRng {
public:
  explicit DiffRng(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, n); n > 0.
  int64_t uniform(int64_t n) { return static_cast<int64_t>(next() % n); }
  /// True with probability p.
  bool chance(double p) { return (next() >> 11) * 0x1.0p-53 < p; }
  template <typename T> const T &pick(llvm::ArrayRef<T> xs) {
    return xs[uniform(xs.size())];
  }

private:
  uint64_t state;
};

/// Generates one random module into `ctx`. `numOps` receives the number of
/// tensor ops built (for the verbose log).
mlir::OwningOpRef<mlir::ModuleOp> generateModule(mlir::MLIRContext &ctx,
                                                 DiffRng &rng, int &numOps);

} // namespace shardc

#endif // SHARDC_TOOLS_DIFFTEST_GENERATOR_H
