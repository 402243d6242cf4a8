//===- OnnxEinsum.cpp - ONNX Einsum as dot_generals -----------------------===//
//
// ONNX's Einsum rewritten at import into dot_general, left to right, each
// step contracting the labels no later operand and not the result has; a
// label of one operand only that is not kept, reduce_sum; the result's
// order, a transpose.
//
//===----------------------------------------------------------------------===//

#include "OnnxComposedHelpers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

#include <string>

using namespace mlir;
using namespace shardc::onnximport;
using namespace shardc::onnximport::composed;
using llvm::SmallVector;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

namespace {
/// An operand of an einsum as it is lowered: its value and one label per
/// dim.
struct Labeled {
  Value value;
  std::string labels;
};
} // namespace

/// Sums `x` over its labels not in `keep`.
static FailureOr<Labeled> sumOut(NodeContext &nc, Labeled x, StringRef keep,
                                 const std::string &tag) {
  SmallVector<int64_t> dims;
  std::string left;
  for (auto [d, c] : llvm::enumerate(x.labels)) {
    if (keep.contains(c))
      left.push_back(c);
    else
      dims.push_back(d);
  }
  if (dims.empty())
    return x;
  FailureOr<Value> r = make(nc, "shardc.reduce_sum", {x.value},
                            {dimsAttr(nc, "dims", dims)}, {}, tag + "summed");
  if (failed(r))
    return failure();
  return Labeled{*r, left};
}

/// `a` times `b`, keeping the labels in `keep`: shared ones kept are batch
/// dims, shared ones not kept are contracted.
static FailureOr<Labeled> contract(NodeContext &nc, Labeled a, Labeled b,
                                   StringRef keep, const std::string &tag) {
  // A label of one operand only that is not kept is summed out first.
  std::string keepA = keep.str() + b.labels, keepB = keep.str() + a.labels;
  FailureOr<Labeled> sa = sumOut(nc, a, keepA, tag + "lhs.");
  FailureOr<Labeled> sb = sumOut(nc, b, keepB, tag + "rhs.");
  if (failed(sa) || failed(sb))
    return failure();
  a = *sa;
  b = *sb;
  SmallVector<int64_t> lb, rb, lc, rc;
  std::string labels;
  for (auto [d, c] : llvm::enumerate(a.labels)) {
    size_t e = b.labels.find(c);
    if (e == std::string::npos)
      continue;
    if (keep.contains(c)) {
      lb.push_back(d);
      rb.push_back(e);
      labels.push_back(c);
    } else {
      lc.push_back(d);
      rc.push_back(e);
    }
  }
  for (char c : a.labels)
    if (b.labels.find(c) == std::string::npos)
      labels.push_back(c);
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos)
      labels.push_back(c);
  FailureOr<Value> r = make(nc, "shardc.dot_general", {a.value, b.value},
                            {dimsAttr(nc, "lhs_batch_dims", lb),
                             dimsAttr(nc, "rhs_batch_dims", rb),
                             dimsAttr(nc, "lhs_contracting_dims", lc),
                             dimsAttr(nc, "rhs_contracting_dims", rc)},
                            {}, tag + "product");
  if (failed(r))
    return failure();
  return Labeled{*r, labels};
}

static LogicalResult einsum(NodeContext &nc) {
  if (failed(nc.checkArity(1, 8)) || failed(nc.checkAttrs({"equation"})))
    return failure();
  FailureOr<std::optional<std::string>> eq = nc.stringAttr("equation");
  if (failed(eq))
    return failure();
  if (!*eq)
    return nc.error() << "has no attribute \"equation\"";
  std::string text;
  for (char c : **eq)
    if (c != ' ')
      text.push_back(c);
  StringRef lhs = text, out;
  bool explicitOut = StringRef(text).contains("->");
  if (explicitOut)
    std::tie(lhs, out) = StringRef(text).split("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  size_t n = nc.node.input_size();
  if (terms.size() != n)
    return nc.error() << "its equation \"" << **eq << "\" has " << terms.size()
                      << " operands, the node " << n;
  if (text.find("...") != std::string::npos)
    return nc.error() << "its equation \"" << **eq
                      << "\" has an ellipsis; shardc reads einsums whose every "
                         "dim has a letter";
  // Each label's size, checked across operands.
  llvm::DenseMap<char, int64_t> sizes;
  llvm::DenseMap<char, int> count;
  SmallVector<Labeled> operands;
  for (auto [i, term] : llvm::enumerate(terms)) {
    RankedTensorType type = nc.inputType(i);
    if (!type.getElementType().isF32())
      return nc.error() << "operand " << i << " must be FLOAT";
    if (static_cast<int64_t>(term.size()) != type.getRank())
      return nc.error() << "operand " << i << " has rank " << type.getRank()
                        << " but \"" << term << "\" names " << term.size()
                        << " dims";
    for (auto [d, c] : llvm::enumerate(term)) {
      if (!llvm::isAlpha(c))
        return nc.error() << "its equation \"" << **eq << "\" has '" << c
                          << "', not a letter";
      if (term.take_front(d).contains(c))
        return nc.error() << "operand " << i << " repeats label '" << c
                          << "' (a diagonal), which shardc does not read";
      auto [it, fresh] = sizes.try_emplace(c, type.getDimSize(d));
      if (!fresh && it->second != type.getDimSize(d))
        return nc.error() << "label '" << c << "' has sizes " << it->second
                          << " and " << type.getDimSize(d);
      ++count[c];
    }
    operands.push_back({nc.value(i), term.str()});
  }
  std::string result;
  if (explicitOut) {
    result = out.str();
    for (auto [d, c] : llvm::enumerate(result))
      if (!sizes.count(c) || StringRef(result).take_front(d).contains(c))
        return nc.error() << "its output \"" << out << "\" has label '" << c
                          << "', which no operand has or which it repeats";
  } else {
    // Implicit: the labels used once, in alphabetical order.
    for (auto &entry : count)
      if (entry.second == 1)
        result.push_back(entry.first);
    llvm::sort(result);
  }
  // Left to right, each step keeping the labels the result or a later
  // operand still needs.
  Labeled acc = operands.front();
  for (size_t i = 1; i < operands.size(); ++i) {
    std::string keep = result;
    for (size_t j = i + 1; j < operands.size(); ++j)
      keep += operands[j].labels;
    FailureOr<Labeled> next =
        contract(nc, acc, operands[i], keep, "step" + std::to_string(i) + ".");
    if (failed(next))
      return failure();
    acc = *next;
  }
  FailureOr<Labeled> summed = sumOut(nc, acc, result, "");
  if (failed(summed))
    return failure();
  acc = *summed;
  if (acc.labels == result) {
    nc.setOutput(0, acc.value);
    return success();
  }
  SmallVector<int64_t> perm;
  for (char c : result)
    perm.push_back(acc.labels.find(c));
  return done(nc, make(nc, "shardc.transpose", {acc.value},
                       {dimsAttr(nc, "permutation", perm)}));
}

void shardc::onnximport::composed::addEinsumConverters(
    llvm::StringMap<Converter> &table) {
  table.insert({"Einsum", einsum});
}
