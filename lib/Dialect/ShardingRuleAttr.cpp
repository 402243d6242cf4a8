//===- ShardingRuleAttr.cpp - #shardc.sharding_rule -----------------------===//
//
// A ShardingRule as an attribute. The rule is stored flattened (the nested
// SmallVectors of ShardingRule cannot live in attribute storage, whose
// destructors never run) and printed by ShardingRule::print, so that the
// attribute, the diagnostics quoting a rule and the docs share one syntax.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace shardc;

namespace {
/// The attribute's parameters for a rule.
struct FlatRule {
  SmallVector<int64_t> sizes;
  SmallVector<FactorKind> kinds;
  SmallVector<int64_t> ranks, lengths, dimFactors;

  explicit FlatRule(const ShardingRule &rule) {
    for (const Factor &f : rule.getFactors()) {
      sizes.push_back(f.size);
      kinds.push_back(f.kind);
    }
    for (unsigned t = 0; t < rule.getNumTensors(); ++t) {
      ranks.push_back(rule.getTensor(t).size());
      for (const DimFactors &dim : rule.getTensor(t)) {
        lengths.push_back(dim.size());
        llvm::append_range(dimFactors, dim);
      }
    }
  }
};
} // namespace

ShardingRuleAttr ShardingRuleAttr::get(MLIRContext *ctx,
                                       const ShardingRule &rule) {
  FlatRule flat(rule);
  return get(ctx, ArrayRef<int64_t>(flat.sizes),
                   ArrayRef<FactorKind>(flat.kinds), rule.getNumOperands(),
                   ArrayRef<int64_t>(flat.ranks),
                   ArrayRef<int64_t>(flat.lengths),
                   ArrayRef<int64_t>(flat.dimFactors));
}

ShardingRule ShardingRuleAttr::getRule() const {
  ShardingRule rule;
  for (auto [size, kind] : llvm::zip(getFactorSizes(), getFactorKinds()))
    rule.addFactor(size, kind);
  ArrayRef<int64_t> lengths = getDimLengths(), factors = getDimFactors();
  for (auto [t, rank] : llvm::enumerate(getTensorRanks())) {
    TensorFactors dims;
    for (int64_t d = 0; d < rank; ++d) {
      dims.emplace_back(factors.take_front(lengths.front()));
      factors = factors.drop_front(lengths.front());
      lengths = lengths.drop_front();
    }
    if (t < getNumOperands())
      rule.addOperand(std::move(dims));
    else
      rule.addResult(std::move(dims));
  }
  return rule;
}

LogicalResult
ShardingRuleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<int64_t> factorSizes,
                         ArrayRef<FactorKind> factorKinds, unsigned numOperands,
                         ArrayRef<int64_t> tensorRanks,
                         ArrayRef<int64_t> dimLengths,
                         ArrayRef<int64_t> dimFactors) {
  // The storage invariants first (only a C++ caller can break them), so
  // that getRule() never reads past an array.
  if (factorSizes.size() != factorKinds.size())
    return emitError() << "sharding rule has " << factorSizes.size()
                       << " factor sizes but " << factorKinds.size()
                       << " factor kinds";
  if (numOperands > tensorRanks.size())
    return emitError() << "sharding rule has " << numOperands
                       << " operands but " << tensorRanks.size() << " tensors";
  int64_t numDims = 0, numDimFactors = 0;
  for (int64_t rank : tensorRanks) {
    if (rank < 0)
      return emitError() << "sharding rule has a tensor of rank " << rank;
    numDims += rank;
  }
  for (int64_t length : dimLengths) {
    if (length < 0)
      return emitError() << "sharding rule has a dim of " << length
                         << " factors";
    numDimFactors += length;
  }
  if (numDims != static_cast<int64_t>(dimLengths.size()) ||
      numDimFactors != static_cast<int64_t>(dimFactors.size()))
    return emitError() << "sharding rule's dims do not match its tensors";

  for (auto [f, size] : llvm::enumerate(factorSizes))
    if (size < 0)
      return emitError() << "factor f" << f << " of the sharding rule has "
                         << "negative size " << size;
  int64_t numFactors = factorSizes.size();
  for (auto [t, rank] : llvm::enumerate(tensorRanks)) {
    llvm::SmallBitVector seen(numFactors);
    for (int64_t d = 0; d < rank; ++d) {
      for (int64_t f : dimFactors.take_front(dimLengths.front())) {
        if (f < 0 || f >= numFactors)
          return emitError() << "tensor #" << t << " dim " << d
                             << " of the sharding rule names factor f" << f
                             << ", but the rule has " << numFactors
                             << " factors";
        if (seen.test(f))
          return emitError() << "factor f" << f << " appears twice in tensor #"
                             << t << " of the sharding rule";
        seen.set(f);
      }
      dimFactors = dimFactors.drop_front(dimLengths.front());
      dimLengths = dimLengths.drop_front();
    }
  }
  return success();
}

void ShardingRuleAttr::print(AsmPrinter &printer) const {
  printer << "<";
  getRule().print(printer.getStream());
  printer << ">";
}

/// Parses a factor name `fN` into N.
static ParseResult parseFactorName(AsmParser &parser, int64_t &factor) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseKeyword(&name))
    return failure();
  StringRef number = name;
  if (!number.consume_front("f") || number.getAsInteger(10, factor))
    return parser.emitError(loc, "expected a factor name f<N>, got '")
           << name << "'";
  return success();
}

/// Parses `([...], ...)`: a parenthesized list of tensors, each a bracketed
/// list of dims, each a factor `fN` or a parenthesized factor list.
static ParseResult parseTensors(AsmParser &parser,
                                SmallVectorImpl<TensorFactors> &tensors) {
  auto parseDim = [&](DimFactors &dim) -> ParseResult {
    if (succeeded(parser.parseOptionalLParen())) {
      while (failed(parser.parseOptionalRParen())) {
        int64_t f;
        if (parseFactorName(parser, f))
          return failure();
        dim.push_back(f);
      }
      return success();
    }
    int64_t f;
    if (parseFactorName(parser, f))
      return failure();
    dim.push_back(f);
    return success();
  };
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Paren, [&]() -> ParseResult {
        TensorFactors &tensor = tensors.emplace_back();
        return parser.parseCommaSeparatedList(
            AsmParser::Delimiter::Square,
            [&]() { return parseDim(tensor.emplace_back()); });
      });
}

Attribute ShardingRuleAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<TensorFactors> operands, results;
  if (parser.parseLess() || parseTensors(parser, operands) ||
      parser.parseArrow() || parseTensors(parser, results))
    return {};

  ShardingRule rule;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Braces, [&]() -> ParseResult {
            SMLoc factorLoc = parser.getCurrentLocation();
            int64_t f, size;
            if (parseFactorName(parser, f))
              return failure();
            if (f != rule.getNumFactors())
              return parser.emitError(factorLoc, "expected factor f")
                     << rule.getNumFactors() << " next, got f" << f;
            if (parser.parseEqual() || parser.parseInteger(size))
              return failure();
            FactorKind kind = FactorKind::Parallel;
            if (succeeded(parser.parseOptionalKeyword("reduction")))
              kind = FactorKind::Reduction;
            else if (succeeded(parser.parseOptionalKeyword("max_reduction")))
              kind = FactorKind::MaxReduction;
            else if (succeeded(parser.parseOptionalKeyword("need_replication")))
              kind = FactorKind::NeedReplication;
            rule.addFactor(size, kind);
            return success();
          }) ||
      parser.parseGreater())
    return {};
  for (TensorFactors &dims : operands)
    rule.addOperand(std::move(dims));
  for (TensorFactors &dims : results)
    rule.addResult(std::move(dims));

  // Through the verifier, which reports at the attribute.
  FlatRule flat(rule);
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), ArrayRef<int64_t>(flat.sizes),
                    ArrayRef<FactorKind>(flat.kinds), rule.getNumOperands(),
                    ArrayRef<int64_t>(flat.ranks),
                    ArrayRef<int64_t>(flat.lengths),
                    ArrayRef<int64_t>(flat.dimFactors));
}
