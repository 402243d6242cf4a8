//===- TrainingData.cpp - mini-batches for shardc train --data ------------===//

#include "shardc/Driver/TrainingData.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Import/Checkpoint.h"
#include "shardc/Interpreter/Interpreter.h"

#include "llvm/Support/Path.h"

#include <cstring>
#include <random>

using namespace shardc;

static std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

llvm::Expected<TrainingData> TrainingData::load(llvm::StringRef path,
                                                mlir::func::FuncOp func,
                                                uint64_t seed) {
  auto fail = [&](const std::string &message) {
    return llvm::createStringError("--data " + path.str() + ": " + message);
  };
  if (llvm::sys::path::extension(path) != ".npz")
    return fail("expected a .npz file (np.savez)");
  llvm::Expected<std::map<std::string, Tensor>> read = readCheckpoint(path);
  if (!read)
    return read.takeError();
  TrainingData data;
  data.seed = seed;
  for (auto &[name, array] : *read) {
    int index = -1;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (getArgumentName(func, i) == name)
        index = i;
    if (index < 0)
      return fail("array '" + name + "' names no input of the model");
    if (func.getArgAttr(index, ShardcDialect::getParamAttrName()))
      return fail("array '" + name +
                  "' names a parameter; --data feeds the other inputs");
    auto type =
        mlir::cast<mlir::RankedTensorType>(func.getArgument(index).getType());
    llvm::ArrayRef<int64_t> want = type.getShape(), got = array.getShape();
    if (want.empty() || got.size() != want.size() ||
        got.drop_front() != want.drop_front() || got[0] < want[0])
      return fail("array '" + name + "' has shape " + shapeText(got) +
                  "; the input is " + shapeText(want) +
                  ", so it needs [N, ...] with N >= " +
                  (want.empty() ? std::string("1") : std::to_string(want[0])) +
                  " examples along the first dim");
    std::optional<DType> dtype = executableDType(type.getElementType());
    if (!dtype || *dtype != array.dtype())
      return fail(
          "array '" + name + "' holds " + dtypeName(array.dtype()).str() +
          " but the input holds " +
          (dtype ? dtypeName(*dtype).str() : std::string("another type")));
    if (data.count && got[0] != data.count)
      return fail("array '" + name + "' has " + std::to_string(got[0]) +
                  " examples, the others " + std::to_string(data.count));
    data.count = got[0];
    data.rows = want[0];
    data.arrays.emplace(name, std::move(array));
  }
  if (data.arrays.empty())
    return fail("the file holds no arrays");
  return data;
}

std::vector<std::string> TrainingData::names() const {
  std::vector<std::string> out;
  for (const auto &entry : arrays)
    out.push_back(entry.first);
  return out;
}

std::vector<int64_t> TrainingData::indices(unsigned step) const {
  int64_t perEpoch = count / rows;
  int64_t epoch = step / perEpoch, first = (step % perEpoch) * rows;
  // Fisher-Yates with a generator seeded per epoch, written out so that
  // every rank and every platform draws the same order (std::shuffle's
  // algorithm is the library's choice).
  std::vector<int64_t> order(count);
  for (int64_t i = 0; i < count; ++i)
    order[i] = i;
  std::mt19937_64 rng(seed * 1000003u + epoch);
  for (int64_t i = count - 1; i > 0; --i) {
    int64_t j = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return {order.begin() + first, order.begin() + first + rows};
}

Tensor TrainingData::batch(llvm::StringRef name, unsigned step) const {
  const Tensor &all = arrays.at(name.str());
  llvm::SmallVector<int64_t> shape(all.getShape());
  shape[0] = rows;
  Tensor out =
      llvm::cantFail(Tensor::allocateUninitialized(shape, all.dtype()));
  uint64_t exampleBytes = all.byteSize() / count;
  for (auto [row, example] : llvm::enumerate(indices(step)))
    std::memcpy(out.rawData() + row * exampleBytes,
                all.rawData() + example * exampleBytes, exampleBytes);
  return out;
}
