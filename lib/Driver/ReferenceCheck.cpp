//===- ReferenceCheck.cpp - outputs against the unsharded program ---------===//

#include "shardc/Driver/ReferenceCheck.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Support/HalfFloat.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace shardc;

/// "[1, 2]": the position of row-major element `index` in `shape`.
static std::string elementPosition(ArrayRef<int64_t> shape, int64_t index) {
  SmallVector<int64_t> position(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    position[d] = shape[d] ? index % shape[d] : 0;
    index = shape[d] ? index / shape[d] : 0;
  }
  std::string out = "[";
  for (size_t d = 0; d < position.size(); ++d)
    out += (d ? ", " : "") + std::to_string(position[d]);
  return out + "]";
}

static std::string formatValue(float x) {
  if (std::isnan(x))
    return "NaN";
  if (std::isinf(x))
    return x > 0 ? "+inf" : "-inf";
  std::string out;
  llvm::raw_string_ostream(out) << llvm::format("%g", x);
  return out;
}

std::pair<double, double>
shardc::checkAgainstReference(const Tensor &got, const Tensor &want,
                              double familyScale, double tolerance,
                              StringRef what, StringRef reference, bool &ok) {
  NonFiniteMismatch mismatch;
  std::pair<double, double> errors =
      compareToReference(got, want, &mismatch, familyScale);
  double rel = errors.first;
  if (rel <= tolerance)
    return errors;
  ok = false;
  llvm::errs() << "shardc: error: " << what << " differs from " << reference
               << ": ";
  if (mismatch.count)
    llvm::errs() << mismatch.count << " element"
                 << (mismatch.count == 1 ? " is" : "s are")
                 << " NaN or infinite in one and not alike in the other, the "
                    "first at "
                 << elementPosition(want.shape(), mismatch.firstIndex) << ": "
                 << formatValue(mismatch.got) << " sharded, "
                 << formatValue(mismatch.want) << " unsharded\n";
  else
    llvm::errs() << "max_rel_err " << rel << " > tolerance " << tolerance
                 << "\n";
  return errors;
}

void shardc::printRoundingAmplified(raw_ostream &os, StringRef cause,
                                    StringRef reference, StringRef perturbed,
                                    ArrayRef<std::string> names,
                                    ArrayRef<double> errors,
                                    ArrayRef<double> tolerances,
                                    double tolerance, ArrayRef<Tensor> expected,
                                    std::optional<DType> working) {
  std::string raised;
  std::map<std::string, std::string> byHalfType;
  for (auto [i, name, error, raisedTo] :
       llvm::enumerate(names, errors, tolerances)) {
    if (!(raisedTo > tolerance && error > tolerance && error <= raisedTo))
      continue;
    std::string item =
        name +
        llvm::formatv(" within {0}", llvm::format("%.3g", raisedTo)).str();
    std::optional<DType> half =
        i < expected.size() ? judgedHalfType(expected[i].dtype(), working)
                            : std::nullopt;
    if (half && raisedTo <= halfTolerance(*half)) {
      std::string &list = byHalfType[dtypeName(*half).str()];
      list += (list.empty() ? "" : ", ") + item;
      continue;
    }
    raised += (raised.empty() ? "" : ", ") + item;
  }
  for (const auto &[type, list] : byHalfType)
    os << type << " rounding: " << list
       << llvm::format(" (%g units of 2^-%d)", kHalfRoundings,
                       type == "bf16" ? 8 : 11)
       << "\n";
  if (raised.empty())
    return;
  os << "rounding amplified by " << cause << ": " << raised
     << llvm::format(" (%gx how far ", kSensitivityMargin) << reference
     << " moves when " << perturbed << " change by one ulp)\n";
}

unsigned shardc::warnAboutNonFiniteOutputs(func::FuncOp func,
                                           ArrayRef<Tensor> inputs,
                                           ArrayRef<Tensor> outputs,
                                           ArrayRef<std::string> names) {
  if (llvm::none_of(outputs, [](const Tensor &t) { return countNonFinite(t); }))
    return 0;
  // Traced only now: a run without NaN pays nothing for it.
  SmallVector<Value> sources;
  InterpreterOptions options;
  options.nonFiniteSources = &sources;
  if (failed(interpretFunction(func, inputs, options)))
    sources.clear(); // already reported; warn without the source
  unsigned warned = 0;
  for (auto [i, output] : llvm::enumerate(outputs)) {
    int64_t count = countNonFinite(output);
    if (!count)
      continue;
    ++warned;
    // values() is float32 storage: a half tensor's NaNs are counted
    // element by element.
    int64_t nans = 0;
    for (int64_t e = 0, n = output.numElements(); e < n; ++e)
      nans += std::isnan(output.elementAsDouble(e));
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "output '" << names[i] << "' has " << count << " non-finite value"
       << (count == 1 ? "" : "s") << " (" << nans << " NaN, " << count - nans
       << " infinite)";
    Value source = i < sources.size() ? sources[i] : Value();
    if (!source) {
      emitWarning(func.getLoc()) << text;
      continue;
    }
    if (auto arg = dyn_cast<BlockArgument>(source)) {
      int64_t held = countNonFinite(inputs[arg.getArgNumber()]);
      emitWarning(arg.getLoc())
          << text << ", coming from input '"
          << getArgumentName(func, arg.getArgNumber()) << "', which holds "
          << held << " non-finite value" << (held == 1 ? "" : "s");
      continue;
    }
    Operation *op = source.getDefiningOp();
    emitWarning(op->getLoc())
        << text << ", first computed by '" << op->getName() << "' ("
        << describeValue(source) << ") from finite inputs";
  }
  return warned;
}
