//===- ReshardRecord.cpp - a reshard's record as an attribute -------------===//
//
// A dictionary, so that the record survives printing and parsing the SPMD
// program and any rewrite that keeps the op's discardable attributes.
//
//===----------------------------------------------------------------------===//

#include "shardc/Transforms/ReshardRecord.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace shardc;

namespace {

const char *kindName(ReshardRecord::Consumer kind) {
  switch (kind) {
  case ReshardRecord::Consumer::Operand:
    return "operand";
  case ReshardRecord::Consumer::Output:
    return "output";
  case ReshardRecord::Consumer::Constraint:
    return "constraint";
  case ReshardRecord::Consumer::OwnReduction:
    return "own_reduction";
  }
  return "operand";
}

/// A null sharding is left out of the dictionary.
void addSharding(SmallVectorImpl<NamedAttribute> &attrs, Builder &b,
                 StringRef name, ShardingAttr s) {
  if (s)
    attrs.push_back(b.getNamedAttr(name, s));
}

DictionaryAttr encodeMove(Builder &b, const ReshardMove &m) {
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("value", b.getStringAttr(m.value)),
      b.getNamedAttr("collectives", b.getStringAttr(m.collectives)),
      b.getNamedAttr("bytes", b.getI64IntegerAttr(m.bytes)),
      b.getNamedAttr("seconds", b.getF64FloatAttr(m.seconds))};
  addSharding(attrs, b, "from", m.from);
  addSharding(attrs, b, "to", m.to);
  return b.getDictionaryAttr(attrs);
}

DictionaryAttr encodeLayout(Builder &b, const PricedLayout &l) {
  SmallVector<Attribute> moves;
  for (const ReshardMove &m : l.moves)
    moves.push_back(encodeMove(b, m));
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("label", b.getStringAttr(l.label)),
      b.getNamedAttr("possible", b.getBoolAttr(l.possible)),
      b.getNamedAttr("bytes", b.getI64IntegerAttr(l.bytes)),
      b.getNamedAttr("seconds", b.getF64FloatAttr(l.seconds)),
      b.getNamedAttr("moves", b.getArrayAttr(moves))};
  addSharding(attrs, b, "operand", l.operand);
  return b.getDictionaryAttr(attrs);
}

std::string str(DictionaryAttr d, StringRef name) {
  auto s = d.getAs<StringAttr>(name);
  return s ? s.getValue().str() : std::string();
}
int64_t i64(DictionaryAttr d, StringRef name) {
  auto i = d.getAs<IntegerAttr>(name);
  return i ? i.getInt() : 0;
}
double f64(DictionaryAttr d, StringRef name) {
  auto f = d.getAs<FloatAttr>(name);
  return f ? f.getValueAsDouble() : 0.0;
}
} // namespace

DictionaryAttr shardc::encodeReshardRecord(MLIRContext *ctx,
                                           const ReshardRecord &r) {
  Builder b(ctx);
  SmallVector<Attribute> layouts;
  for (const PricedLayout &l : r.layouts)
    layouts.push_back(encodeLayout(b, l));
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("kind", b.getStringAttr(kindName(r.kind))),
      b.getNamedAttr("op", b.getStringAttr(r.op)),
      b.getNamedAttr("name", b.getStringAttr(r.name)),
      b.getNamedAttr("where", b.getStringAttr(r.where)),
      b.getNamedAttr("index", b.getI64IntegerAttr(r.index)),
      b.getNamedAttr("value", b.getStringAttr(r.value)),
      b.getNamedAttr("layouts", b.getArrayAttr(layouts))};
  addSharding(attrs, b, "from", r.from);
  addSharding(attrs, b, "to", r.to);
  return b.getDictionaryAttr(attrs);
}

std::optional<ReshardRecord> shardc::readReshardRecord(Operation *op) {
  auto d = op->getAttrOfType<DictionaryAttr>(ShardcDialect::getReshardForAttrName());
  if (!d)
    return std::nullopt;
  ReshardRecord r;
  std::string kind = str(d, "kind");
  for (auto k : {ReshardRecord::Consumer::Operand,
                 ReshardRecord::Consumer::Output,
                 ReshardRecord::Consumer::Constraint,
                 ReshardRecord::Consumer::OwnReduction})
    if (kind == kindName(k))
      r.kind = k;
  r.op = str(d, "op");
  r.name = str(d, "name");
  r.where = str(d, "where");
  r.index = i64(d, "index");
  r.value = str(d, "value");
  r.from = d.getAs<ShardingAttr>("from");
  r.to = d.getAs<ShardingAttr>("to");
  if (auto layouts = d.getAs<ArrayAttr>("layouts"))
    for (Attribute la : layouts) {
      auto ld = dyn_cast<DictionaryAttr>(la);
      if (!ld)
        continue;
      PricedLayout &l = r.layouts.emplace_back();
      l.label = str(ld, "label");
      auto possible = ld.getAs<BoolAttr>("possible");
      l.possible = !possible || possible.getValue();
      l.bytes = i64(ld, "bytes");
      l.seconds = f64(ld, "seconds");
      l.operand = ld.getAs<ShardingAttr>("operand");
      if (auto moves = ld.getAs<ArrayAttr>("moves"))
        for (Attribute ma : moves)
          if (auto md = dyn_cast<DictionaryAttr>(ma))
            l.moves.push_back({str(md, "value"), md.getAs<ShardingAttr>("from"),
                             md.getAs<ShardingAttr>("to"),
                             str(md, "collectives"), i64(md, "bytes"),
                             f64(md, "seconds")});
    }
  return r;
}
