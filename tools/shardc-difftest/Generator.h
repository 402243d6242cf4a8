//===- Generator.h - random shardc programs for difftest --------*- C++ -*-===//
//
// Builds small random, well-typed shardc programs (one mesh, one @main) with
// random sharding annotations, deterministically from a seed, so a failing
// case can be regenerated from (seed, case number) alone. A case is a
// program plus what the runner needs to check it: which kind of program it
// is (forward, backward pass, training step, or a global program holding a
// collective, which must be rejected), the value domain of each input, and
// the backends to run it on.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_DIFFTEST_GENERATOR_H
#define SHARDC_TOOLS_DIFFTEST_GENERATOR_H

#include "shardc/Support/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardc {

/// A deterministic random source (SplitMix64). We avoid <random>'s
/// distributions because their output differs between standard libraries,
/// and a reproducer must mean the same program everywhere.
class DiffRng {
public:
  explicit DiffRng(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, n); n > 0.
  int64_t uniform(int64_t n) {
    return static_cast<int64_t>(next() % static_cast<uint64_t>(n));
  }
  /// True with probability p.
  bool chance(double p) { return (next() >> 11) * 0x1.0p-53 < p; }
  template <typename T> const T &pick(llvm::ArrayRef<T> xs) {
    return xs[uniform(xs.size())];
  }

private:
  uint64_t state;
};

/// What a program is, and so how the runner checks it.
enum class ProgramKind {
  /// The program itself, sharded against unsharded.
  Forward,
  /// Its vector-Jacobian product (--shardc-autodiff, after propagation).
  Autodiff,
  /// One optimizer step (--shardc-training-step, after propagation); the first
  /// result is a scalar loss.
  TrainStep,
  /// A global program holding a collective: not a valid input to the
  /// partitioner, nor to the reference interpreter. Both must reject it with
  /// a diagnostic at the collective.
  GlobalCollective,
};

llvm::StringRef stringifyProgramKind(ProgramKind kind);

/// The values an input is filled with (see fillInput).
enum class InputDomain {
  Uniform,   ///< [-1, 1)
  Positive,  ///< [0.25, 2): log, sqrt, rsqrt and div apply directly
  Huge,      ///< [-1e30, 1e30)
  Tiny,      ///< [-1e-30, 1e-30)
  NonFinite, ///< [-1, 1) with NaN, +Inf and -Inf sprinkled in
};

llvm::StringRef stringifyInputDomain(InputDomain domain);

struct GeneratorOptions {
  /// Draw NaN/Inf inputs (needs a comparison that takes identical
  /// non-finite values as equal).
  bool nonFinite = false;
  /// Fraction of cases also run on the threads backend.
  double threadsFraction = 0.1;
  /// Fraction of cases drawing uneven dims: sizes the mesh axes do not
  /// divide (primes, sizes below an axis size) and shardings that split
  /// them (docs/sharding.md#uneven-dims).
  double unevenFraction = 0.3;
};

/// The optimizer step of a TrainStep case.
struct TrainStepSpec {
  bool adam = false;
  std::vector<std::string> zeroAxes;
  float learningRate = 0.05f;
};

struct GeneratedCase {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ProgramKind kind = ProgramKind::Forward;
  /// One per argument of the generated function, by argument number.
  std::vector<InputDomain> domains;
  /// Autodiff: the names to differentiate (empty: shardc.param, else all).
  std::vector<std::string> wrt;
  TrainStepSpec train;
  /// GlobalCollective: the name of the collective's result, which its
  /// location carries and the diagnostic must point at.
  std::string collectiveName;
  /// Run on the threads backend too.
  bool threads = false;
  /// Tensor ops built (for the verbose log).
  int numOps = 0;
  /// Sharding annotations drawn that split a dim unevenly.
  int unevenShardings = 0;
  /// Forward: per result, the generator's bound on its magnitude
  /// (ValueInfo::scale, the sum of its terms' bounds for a sum). The check
  /// judges a result on at least kFamilyScaleFloor of it, so a sum whose
  /// terms cancel is measured against the size of its terms, not of what
  /// is left. Empty for the other kinds: gradients carry no bounds.
  std::vector<double> outputBounds;
};

/// Generates one random case into `ctx`.
GeneratedCase generateCase(mlir::MLIRContext &ctx, DiffRng &rng,
                           const GeneratorOptions &options);

/// The values of an input of `shape` in `domain`, reproducible from
/// (`seed`, `name`): shardc's seeded inputs (RandomTensor.h), mapped into
/// the domain.
llvm::Expected<Tensor> fillInput(llvm::ArrayRef<int64_t> shape,
                                 InputDomain domain, uint64_t seed,
                                 llvm::StringRef name);

} // namespace shardc

#endif // SHARDC_TOOLS_DIFFTEST_GENERATOR_H
