//===- SlicingDrawing.cpp - random slices, concatenations and pads --------===//
//
// Slices with any start, limit and stride per dim (whole dims too, which
// stay shardable); concatenations of a value with itself, with earlier
// values or with new inputs along any dim; pads with low, high and interior
// amounts around a constant. They only move elements, so a value keeps its
// bounds and its exactness (a pad adds its padding value to the bounds).
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "shardc/Support/RandomTensor.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::difftest;

namespace {

class SlicingDrawer {
public:
  explicit SlicingDrawer(ProgramBuilder &pb) : pb(pb), rng(pb.rng), b(pb.b) {}

  Value slice(Value x);
  Value concatenate(Value x);
  Value pad(Value x);

private:
  ProgramBuilder &pb;
  DiffRng &rng;
  OpBuilder &b;

  ArrayRef<int64_t> shapeOf(Value v) {
    return ProgramBuilder::tensorOf(v).getShape();
  }
};

Value SlicingDrawer::slice(Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<int64_t> start, limit, stride, res;
  bool strided = false;
  for (int64_t size : shape) {
    // About half the dims are kept whole; the others get a non-empty
    // window, sometimes strided.
    int64_t lo = 0, hi = size, st = 1;
    if (size > 1 && rng.chance(0.5)) {
      lo = rng.uniform(size);
      hi = lo + 1 + rng.uniform(size - lo);
      if (rng.chance(0.3))
        st = 1 + rng.uniform(3);
    }
    strided |= st != 1;
    start.push_back(lo);
    limit.push_back(hi);
    stride.push_back(st);
    res.push_back((hi - lo + st - 1) / st);
  }
  return pb.record(SliceOp::create(b, pb.freshLoc(), pb.makeType(res), x,
                                   start, limit,
                                   strided ? ArrayRef<int64_t>(stride)
                                           : ArrayRef<int64_t>()),
                   pb.info(x));
}

Value SlicingDrawer::concatenate(Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank == 0)
    return nullptr;
  int64_t dim = rng.uniform(rank);
  SmallVector<Value> operands{x};
  SmallVector<int64_t> res(shape);
  ValueInfo r = pb.info(x);
  for (int64_t more = 1 + rng.uniform(2); more > 0; --more) {
    // x again, an earlier value that fits, or a new input.
    Value y;
    int64_t choice = rng.uniform(3);
    if (choice == 0) {
      y = x;
    } else if (choice == 1) {
      SmallVector<Value> fitting;
      for (Value p : pb.pool) {
        ArrayRef<int64_t> ps = shapeOf(p);
        bool fits = static_cast<int64_t>(ps.size()) == rank;
        for (int64_t d = 0; fits && d < rank; ++d)
          fits = d == dim || ps[d] == shape[d];
        if (fits)
          fitting.push_back(p);
      }
      if (!fitting.empty())
        y = fitting[rng.uniform(fitting.size())];
    }
    if (!y) {
      if (!pb.canAddInput())
        y = x;
      else {
        SmallVector<int64_t> s(shape);
        s[dim] = pb.randomDim();
        if (numElements(s) > kMaxElements)
          return nullptr;
        y = pb.addInput(s);
      }
    }
    res[dim] += shapeOf(y)[dim];
    const ValueInfo &yi = pb.info(y);
    r.lo = std::min(r.lo, yi.lo);
    r.hi = std::max(r.hi, yi.hi);
    r.exact = r.exact && yi.exact;
    r.nonFinite = r.nonFinite || yi.nonFinite;
    operands.push_back(y);
  }
  if (numElements(res) > kMaxElements)
    return nullptr;
  if (rng.chance(0.5))
    std::swap(operands.front(), operands.back());
  return pb.record(ConcatenateOp::create(b, pb.freshLoc(), pb.makeType(res),
                                         operands, dim),
                   r);
}

Value SlicingDrawer::pad(Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<int64_t> low, high, interior, res;
  bool anyInterior = false;
  for (int64_t size : shape) {
    int64_t l = 0, h = 0, in = 0;
    if (rng.chance(0.5)) {
      l = rng.uniform(3);
      h = rng.uniform(3);
      if (rng.chance(0.3))
        in = rng.uniform(3);
    }
    anyInterior |= in != 0;
    low.push_back(l);
    high.push_back(h);
    interior.push_back(in);
    res.push_back(l + h + size + (size > 0 ? size - 1 : 0) * in);
  }
  if (numElements(res) > kMaxElements)
    return nullptr;
  float v = rng.chance(0.5) ? 0.0f : 0.5f * bitsToUniformFloat(rng.next());
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  auto attr = DenseElementsAttr::get(scalar, ArrayRef<float>(v));
  ValueInfo ci;
  ci.lo = ci.hi = v;
  Value c = pb.record(
      ConstantOp::create(b, pb.freshLoc(), cast<ElementsAttr>(attr)), ci);
  ValueInfo r = pb.info(x);
  r.lo = std::min<double>(r.lo, v);
  r.hi = std::max<double>(r.hi, v);
  return pb.record(PadOp::create(b, pb.freshLoc(), pb.makeType(res), x, c,
                                 low, high,
                                 anyInterior ? ArrayRef<int64_t>(interior)
                                             : ArrayRef<int64_t>()),
                   r);
}

} // namespace

Value ProgramBuilder::buildSlicingOp(Value x) {
  SlicingDrawer d(*this);
  switch (rng.uniform(3)) {
  case 0:
    return d.slice(x);
  case 1:
    return d.concatenate(x);
  default:
    return d.pad(x);
  }
}
