//===- TrainingData.h - mini-batches for shardc train --data ----*- C++ -*-===//
//
// `shardc train --data FILE.npz`: each array of the file feeds the model
// input of its name, one mini-batch per step. The model's input fixes the
// batch size B (its leading dim); the file holds N >= B examples along
// the same dim. Every epoch visits the examples in an order shuffled with
// --seed, B at a time; the few left over at an epoch's end wait for the
// next one.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_TRAININGDATA_H
#define SHARDC_DRIVER_TRAININGDATA_H

#include "shardc/Support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace shardc {

class TrainingData {
public:
  /// Reads `path` and checks each array against the input of `func` it
  /// names (not a parameter; the input's dims after the first; at least as
  /// many examples as the batch has rows; the element type).
  static llvm::Expected<TrainingData>
  load(llvm::StringRef path, mlir::func::FuncOp func, uint64_t seed);

  /// The inputs the data feeds.
  std::vector<std::string> names() const;
  bool feeds(llvm::StringRef name) const { return arrays.count(name.str()); }
  /// The batch of input `name` at step `step` (0-based).
  Tensor batch(llvm::StringRef name, unsigned step) const;
  int64_t examples() const { return count; }
  int64_t batchSize() const { return rows; }

private:
  /// The example indices of step `step`'s batch.
  std::vector<int64_t> indices(unsigned step) const;

  std::map<std::string, Tensor> arrays;
  int64_t count = 0, rows = 0;
  uint64_t seed = 0;
};

} // namespace shardc

#endif // SHARDC_DRIVER_TRAININGDATA_H
