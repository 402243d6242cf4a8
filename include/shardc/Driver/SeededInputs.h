//===- SeededInputs.h - a model's inputs, given or seeded -------*- C++ -*-===//
//
// Every front end binds a model's arguments the same way: a value the user
// gave, the optimizer's initial state for an optimizer state, or a value
// drawn from a seed (data uniform, parameters scaled as real models
// initialise them, shardc/Analysis/SeededParameters.h). `shardc --seed N`
// and an embedder's seed draw the same tensors.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_SEEDEDINPUTS_H
#define SHARDC_DRIVER_SEEDEDINPUTS_H

#include "shardc/Support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>

namespace shardc {

/// The value argument `index` of `func` takes from `seed`: integer inputs
/// get ids in [0, 16), float ones uniform values scaled as the argument's
/// seeded scale says.
llvm::Expected<Tensor> drawSeededInput(mlir::func::FuncOp func, unsigned index,
                                       uint64_t seed);

/// Every argument of `func`: from `given` by name, the initial value of an
/// optimizer state, or drawn from `seed`. Fails after a diagnostic naming
/// the input (one without a value when there is no seed, or of the wrong
/// shape).
mlir::FailureOr<llvm::SmallVector<Tensor>>
bindInputs(mlir::func::FuncOp func, const std::map<std::string, Tensor> &given,
           std::optional<uint64_t> seed);

} // namespace shardc

#endif // SHARDC_DRIVER_SEEDEDINPUTS_H
