//===- OnnxScatterGatherOps.cpp - ONNX GatherElements, ScatterElements ----===//
//
// ONNX's element-indexed gather and scatter rewritten at import into
// shardc ops:
//
//   GatherElements the sum over a dim of x where indices == iota;
//   ScatterElements the same one-hot sum of the updates, in data's layout,
//                  added to data or selected where an update lands.
//
//===----------------------------------------------------------------------===//

#include "OnnxComposedHelpers.h"

#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace shardc::onnximport;
using namespace shardc::onnximport::composed;
using llvm::SmallVector;
using llvm::StringRef;

static LogicalResult gatherElements(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({"axis"})))
    return failure();
  RankedTensorType data = nc.inputType(0), idx = nc.inputType(1);
  FailureOr<int64_t> axisAttr = intAttrOr(nc, "axis", 0);
  if (failed(axisAttr))
    return failure();
  int64_t rank = data.getRank();
  FailureOr<int64_t> axis = nc.normalizeAxis(*axisAttr, rank, "axis");
  if (failed(axis))
    return failure();
  if (!data.getElementType().isF32())
    return nc.error() << "gathers from a tensor of " << data.getElementType()
                      << "; shardc gathers elements of FLOAT tensors";
  if (idx.getRank() != rank || !isa<IntegerType>(idx.getElementType()) ||
      idx.getElementType().isInteger(1))
    return nc.error() << "its indices must be integers of the data's rank";
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && idx.getDimSize(d) > data.getDimSize(d))
      return nc.error() << "indices " << shapeText(idx.getShape())
                        << " are larger than the data "
                        << shapeText(data.getShape()) << " in dim " << d;
  int64_t n = data.getDimSize(*axis);
  // out[p] = sum over q of data[p with axis = q] where indices[p] == q, on
  // [indices..., n].
  SmallVector<int64_t> wide(idx.getShape());
  wide.push_back(n);
  if (llvm::Expected<SmallVector<int64_t>> ok = checkedShape(wide); !ok)
    return nc.error() << "its one-hot " << shapeText(wide) << " "
                      << llvm::toString(ok.takeError());
  Value x = nc.value(0);
  SmallVector<int64_t> limit(data.getShape());
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      limit[d] = idx.getDimSize(d);
  if (ArrayRef<int64_t>(limit) != data.getShape()) {
    FailureOr<Value> cut =
        make(nc, "shardc.slice", {x},
             {dimsAttr(nc, "start", SmallVector<int64_t>(rank, 0)),
              dimsAttr(nc, "limit", limit)},
             RankedTensorType::get(limit, data.getElementType()), "data");
    if (failed(cut))
      return failure();
    x = *cut;
  }
  // data's dim `axis` becomes the last one, broadcast along indices' dim
  // `axis`.
  if (*axis != rank - 1) {
    SmallVector<int64_t> perm, shape;
    auto xType = cast<RankedTensorType>(x.getType());
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis)
        perm.push_back(d);
    perm.push_back(*axis);
    for (int64_t d : perm)
      shape.push_back(xType.getDimSize(d));
    FailureOr<Value> t =
        make(nc, "shardc.transpose", {x}, {dimsAttr(nc, "permutation", perm)},
             RankedTensorType::get(shape, data.getElementType()), "data.moved");
    if (failed(t))
      return failure();
    x = *t;
  }
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d <= rank; ++d)
    if (d != *axis)
      dims.push_back(d);
  FailureOr<Value> dataB =
      make(nc, "shardc.broadcast_in_dim", {x}, {dimsAttr(nc, "dims", dims)},
           RankedTensorType::get(wide, data.getElementType()), "data.b");
  FailureOr<Value> ids =
      make(nc, "shardc.broadcast_in_dim", {nc.value(1)},
           {dimsAttr(nc, "dims", llvm::to_vector(llvm::seq<int64_t>(0, rank)))},
           RankedTensorType::get(wide, idx.getElementType()), "indices.b");
  FailureOr<Value> pos =
      iotaOf(nc, wide, rank, idx.getElementType(), "positions");
  FailureOr<Value> zero =
      nc.constantAs(scalarOf(0, data.getElementType()), wide, ".zero");
  if (failed(dataB) || failed(ids) || failed(pos) || failed(zero))
    return failure();
  FailureOr<Value> hit = compareOf(nc, *ids, *pos, "EQ", "hit");
  if (failed(hit))
    return failure();
  FailureOr<Value> picked =
      make(nc, "shardc.select", {*hit, *dataB, *zero}, {}, {}, "picked");
  if (failed(picked))
    return failure();
  return done(nc, make(nc, "shardc.reduce_sum", {*picked},
                       {dimsAttr(nc, "dims", {rank})}));
}

/// ScatterElements: data with data[p with axis = indices[p]] set to (or,
/// `reduction="add"`, added) updates[p]. The updates land by the same
/// one-hot sum as GatherElements, transposed into data's layout and padded
/// to its shape; where none lands, data is kept.
static LogicalResult scatterElements(NodeContext &nc) {
  if (failed(nc.checkArity(3, 3)) ||
      failed(nc.checkAttrs({"axis", "reduction"})))
    return failure();
  RankedTensorType data = nc.inputType(0), idx = nc.inputType(1),
                   upd = nc.inputType(2);
  FailureOr<int64_t> axisAttr = intAttrOr(nc, "axis", 0);
  FailureOr<std::optional<std::string>> reduction = nc.stringAttr("reduction");
  if (failed(axisAttr) || failed(reduction))
    return failure();
  std::string mode = reduction->value_or("none");
  if (mode != "none" && mode != "add")
    return nc.error() << "has reduction \"" << mode
                      << "\"; shardc reads \"none\" and \"add\"";
  int64_t rank = data.getRank();
  FailureOr<int64_t> axis = nc.normalizeAxis(*axisAttr, rank, "axis");
  if (failed(axis))
    return failure();
  Type f32 = data.getElementType();
  if (!f32.isF32() || upd.getElementType() != f32)
    return nc.error() << "scatters into a tensor of " << f32
                      << "; shardc scatters FLOAT elements";
  if (idx.getRank() != rank || upd.getShape() != idx.getShape() ||
      !isa<IntegerType>(idx.getElementType()) ||
      idx.getElementType().isInteger(1))
    return nc.error() << "its indices must be integers of the data's rank, "
                         "of the updates' shape";
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && idx.getDimSize(d) > data.getDimSize(d))
      return nc.error() << "indices " << shapeText(idx.getShape())
                        << " are larger than the data "
                        << shapeText(data.getShape()) << " in dim " << d;
  int64_t n = data.getDimSize(*axis);
  SmallVector<int64_t> wide(idx.getShape());
  wide.push_back(n);
  if (llvm::Expected<SmallVector<int64_t>> ok = checkedShape(wide); !ok)
    return nc.error() << "its one-hot " << shapeText(wide) << " "
                      << llvm::toString(ok.takeError());
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  FailureOr<Value> ids = make(
      nc, "shardc.broadcast_in_dim", {nc.value(1)}, {dimsAttr(nc, "dims", all)},
      RankedTensorType::get(wide, idx.getElementType()), "indices.b");
  FailureOr<Value> upds = make(nc, "shardc.broadcast_in_dim", {nc.value(2)},
                               {dimsAttr(nc, "dims", all)},
                               RankedTensorType::get(wide, f32), "updates.b");
  FailureOr<Value> pos =
      iotaOf(nc, wide, rank, idx.getElementType(), "positions");
  FailureOr<Value> zero = nc.constantAs(scalarOf(0, f32), wide, ".zero");
  FailureOr<Value> one = nc.constantAs(scalarOf(1, f32), wide, ".one");
  if (failed(ids) || failed(upds) || failed(pos) || failed(zero) || failed(one))
    return failure();
  FailureOr<Value> hit = compareOf(nc, *ids, *pos, "EQ", "hit");
  if (failed(hit))
    return failure();
  // Summed over the indices' dim `axis`, the new last dim moved there and
  // the other dims padded to data's: data's layout.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d) {
    if (d == *axis)
      perm.push_back(rank - 1);
    perm.push_back(d);
  }
  if (*axis == rank - 1)
    perm.push_back(rank - 1);
  SmallVector<int64_t> high;
  for (int64_t d = 0; d < rank; ++d)
    high.push_back(d == *axis ? 0 : data.getDimSize(d) - idx.getDimSize(d));
  FailureOr<Value> padZero = nc.constantAs(scalarOf(0, f32), {}, ".pad");
  if (failed(padZero))
    return failure();
  auto land = [&](Value wideValue, StringRef tag) -> FailureOr<Value> {
    FailureOr<Value> picked =
        make(nc, "shardc.select", {*hit, wideValue, *zero}, {}, {},
             (tag + ".picked").str());
    if (failed(picked))
      return failure();
    FailureOr<Value> summed =
        make(nc, "shardc.reduce_sum", {*picked},
             {dimsAttr(nc, "dims", {*axis})}, {}, (tag + ".summed").str());
    if (failed(summed))
      return failure();
    Value v = *summed;
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, rank))) {
      FailureOr<Value> t =
          make(nc, "shardc.transpose", {v}, {dimsAttr(nc, "permutation", perm)},
               {}, (tag + ".moved").str());
      if (failed(t))
        return failure();
      v = *t;
    }
    if (llvm::any_of(high, [](int64_t h) { return h != 0; })) {
      FailureOr<Value> p = make(
          nc, "shardc.pad", {v, *padZero},
          {dimsAttr(nc, "low", SmallVector<int64_t>(rank, 0)),
           dimsAttr(nc, "high", high)},
          RankedTensorType::get(data.getShape(), f32), (tag + ".padded").str());
      if (failed(p))
        return failure();
      v = *p;
    }
    return v;
  };
  FailureOr<Value> scattered = land(*upds, "updates");
  if (failed(scattered))
    return failure();
  if (mode == "add")
    return done(nc, make(nc, "shardc.add", {nc.value(0), *scattered}));
  FailureOr<Value> count = land(*one, "count");
  FailureOr<Value> none =
      nc.constantAs(scalarOf(0, f32), data.getShape(), ".none");
  if (failed(count) || failed(none))
    return failure();
  FailureOr<Value> landed = compareOf(nc, *count, *none, "GT", "landed");
  if (failed(landed))
    return failure();
  return done(nc,
              make(nc, "shardc.select", {*landed, *scattered, nc.value(0)}));
}

void shardc::onnximport::composed::addScatterGatherConverters(
    llvm::StringMap<Converter> &table) {
  table.insert({"GatherElements", gatherElements});
  table.insert({"ScatterElements", scatterElements});
}
