//===- OnnxLayoutOps.cpp - reshapes, transposes, slices -------------------===//
//
// Reshape, Unsqueeze, Squeeze, Transpose, Slice, Split, Concat and Gather:
// folded on the host when their data is known at import (shape
// arithmetic), else the shardc layout op.
//
//===----------------------------------------------------------------------===//

#include "OnnxImport.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace shardc::onnximport;
using llvm::SmallVector;
using llvm::StringRef;

/// A host tensor with the same elements in a new shape.
static HostTensor reshaped(const HostTensor &t, ArrayRef<int64_t> shape) {
  HostTensor out = t;
  out.shape.assign(shape.begin(), shape.end());
  return out;
}

/// Output 0 is input 0 in `shape` (folded when it is known).
static LogicalResult reshapeTo(NodeContext &nc, ArrayRef<int64_t> shape) {
  RankedTensorType x = nc.inputType(0);
  if (product(shape) != product(x.getShape()))
    return nc.error() << "cannot reshape " << shapeText(x.getShape()) << " to "
                      << shapeText(shape);
  if (const HostTensor *t = nc.constant(0)) {
    nc.setOutput(0, reshaped(*t, shape));
    return success();
  }
  return done(nc, nc.reshape(nc.value(0), shape, nc.loc()));
}

static LogicalResult reshape(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({"allowzero"})))
    return failure();
  FailureOr<SmallVector<int64_t>> target = nc.intList(1, "the target shape");
  FailureOr<std::optional<int64_t>> allowZero = nc.intAttr("allowzero");
  if (failed(target) || failed(allowZero))
    return failure();
  RankedTensorType x = nc.inputType(0);
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !allowZero->value_or(0)) {
      if (static_cast<int64_t>(i) >= x.getRank())
        return nc.error() << "target dim " << i
                          << " is 0 (copy the input's), but the input has rank "
                          << x.getRank();
      d = x.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        return nc.error() << "the target shape " << shapeText(*target)
                          << " has more than one -1";
      inferred = i;
      shape.push_back(1);
      continue;
    }
    if (d < 0)
      return nc.error() << "the target shape " << shapeText(*target)
                        << " has a negative dim";
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d)
      return nc.error() << "the target shape " << shapeText(*target)
                        << " has more elements than fit in int64";
    known *= d;
    shape.push_back(d);
  }
  if (inferred >= 0) {
    int64_t total = product(x.getShape());
    if (known == 0 || total % known != 0)
      return nc.error() << "cannot reshape " << shapeText(x.getShape())
                        << " to " << shapeText(*target);
    shape[inferred] = total / known;
  }
  return reshapeTo(nc, shape);
}

static LogicalResult unsqueeze(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({})))
    return failure();
  FailureOr<SmallVector<int64_t>> axes = nc.intList(1, "axes");
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> in = nc.inputType(0).getShape();
  int64_t rank = in.size() + axes->size();
  FailureOr<SmallVector<int64_t>> dims = normalizeAxes(nc, *axes, rank);
  if (failed(dims))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0, next = 0; d < rank; ++d)
    shape.push_back(llvm::is_contained(*dims, d) ? 1 : in[next++]);
  return reshapeTo(nc, shape);
}

static LogicalResult squeeze(NodeContext &nc) {
  if (failed(nc.checkArity(1, 2)) || failed(nc.checkAttrs({})))
    return failure();
  ArrayRef<int64_t> in = nc.inputType(0).getShape();
  SmallVector<int64_t> dims;
  if (nc.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> axes = nc.intList(1, "axes");
    if (failed(axes))
      return failure();
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(nc, *axes, in.size());
    if (failed(normalized))
      return failure();
    dims = *normalized;
    for (int64_t d : dims)
      if (in[d] != 1)
        return nc.error() << "squeezes dim " << d << " of size " << in[d];
  } else {
    for (auto [d, size] : llvm::enumerate(in))
      if (size == 1)
        dims.push_back(d);
  }
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(in))
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      shape.push_back(size);
  return reshapeTo(nc, shape);
}

static LogicalResult transpose(NodeContext &nc) {
  if (failed(nc.checkArity(1, 1)) || failed(nc.checkAttrs({"perm"})))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> perm = nc.intsAttr("perm");
  if (failed(perm))
    return failure();
  int64_t rank = nc.inputType(0).getRank();
  SmallVector<int64_t> p;
  if (*perm)
    p = **perm;
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      p.push_back(d);
  return done(nc, nc.build("shardc.transpose", {nc.value(0)},
                           {dimsAttr(nc, "permutation", p)}));
}

/// The elements of host tensor `t` in the window start/limit/stride.
static HostTensor sliceHost(const HostTensor &t, ArrayRef<int64_t> start,
                            ArrayRef<int64_t> limit, ArrayRef<int64_t> stride) {
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < t.shape.size(); ++d)
    shape.push_back((limit[d] - start[d] + stride[d] - 1) / stride[d]);
  HostTensor out = HostTensor::zeros(shape, t.elementType);
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0, n = out.numElements(); linear < n; ++linear) {
    int64_t src = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      src = src * t.shape[d] + start[d] + index[d] * stride[d];
    if (out.isFloat())
      out.floats[linear] = t.floats[src];
    else
      out.ints[linear] = t.ints[src];
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// Output `output` is the window of input 0 (folded when it is known).
static LogicalResult sliceTo(NodeContext &nc, size_t output,
                             ArrayRef<int64_t> start, ArrayRef<int64_t> limit,
                             ArrayRef<int64_t> stride) {
  if (const HostTensor *t = nc.constant(0)) {
    nc.setOutput(output, sliceHost(*t, start, limit, stride));
    return success();
  }
  return done(
      nc,
      nc.build("shardc.slice", {nc.value(0)},
               {dimsAttr(nc, "start", start), dimsAttr(nc, "limit", limit),
                dimsAttr(nc, "stride", stride)},
               {}, nc.loc(output)),
      output);
}

static LogicalResult slice(NodeContext &nc) {
  if (failed(nc.checkArity(3, 5)) || failed(nc.checkAttrs({})))
    return failure();
  ArrayRef<int64_t> in = nc.inputType(0).getShape();
  FailureOr<SmallVector<int64_t>> starts = nc.intList(1, "starts"),
                                  ends = nc.intList(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  for (size_t i = 0; i < starts->size(); ++i)
    axes.push_back(i);
  if (nc.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> list = nc.intList(3, "axes");
    if (failed(list))
      return failure();
    axes = *list;
  }
  if (nc.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> list = nc.intList(4, "steps");
    if (failed(list))
      return failure();
    steps = *list;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return nc.error() << "starts, ends, axes and steps have different lengths";
  FailureOr<SmallVector<int64_t>> dims = normalizeAxes(nc, axes, in.size());
  if (failed(dims))
    return failure();
  SmallVector<int64_t> start(in.size(), 0), limit(in), stride(in.size(), 1);
  for (size_t i = 0; i < dims->size(); ++i) {
    int64_t d = (*dims)[i];
    if (steps[i] <= 0)
      return nc.error() << "has step " << steps[i] << " on axis " << d
                        << "; shardc slices with positive steps";
    // ONNX clamps starts and ends into [0, size] after counting negative
    // ones from the end.
    int64_t size = in[d];
    auto clampIndex = [size](int64_t v) {
      if (v < 0)
        v = v < -size ? 0 : v + size;
      return std::min(v, size);
    };
    start[d] = clampIndex((*starts)[i]);
    limit[d] = std::max(start[d], clampIndex((*ends)[i]));
    stride[d] = steps[i];
  }
  return sliceTo(nc, 0, start, limit, stride);
}

static LogicalResult split(NodeContext &nc) {
  size_t outputs = nc.node.output_size();
  if (failed(nc.checkArity(1, 2, outputs)) || failed(nc.checkAttrs({"axis"})))
    return failure();
  FailureOr<std::optional<int64_t>> axisAttr = nc.intAttr("axis");
  if (failed(axisAttr))
    return failure();
  ArrayRef<int64_t> in = nc.inputType(0).getShape();
  FailureOr<int64_t> axis =
      nc.normalizeAxis(axisAttr->value_or(0), in.size(), "axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> sizes;
  if (nc.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> list = nc.intList(1, "split");
    if (failed(list))
      return failure();
    sizes = *list;
  } else {
    if (in[*axis] % static_cast<int64_t>(outputs) != 0)
      return nc.error() << "splits dim " << *axis << " of size " << in[*axis]
                        << " into " << outputs << " equal parts";
    sizes.assign(outputs, in[*axis] / outputs);
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > in[*axis])
      return nc.error() << "has a split of size " << s;
    total += s;
  }
  if (sizes.size() != outputs || total != in[*axis])
    return nc.error() << "splits " << shapeText(sizes) << " do not make the "
                      << outputs << " outputs of dim " << *axis << " (size "
                      << in[*axis] << ")";
  int64_t offset = 0;
  for (size_t i = 0; i < outputs; ++i) {
    SmallVector<int64_t> start(in.size(), 0), limit(in), stride(in.size(), 1);
    start[*axis] = offset;
    limit[*axis] = offset + sizes[i];
    offset += sizes[i];
    if (nc.node.output(i).empty())
      continue;
    if (failed(sliceTo(nc, i, start, limit, stride)))
      return failure();
  }
  return success();
}

static LogicalResult concat(NodeContext &nc) {
  if (failed(nc.checkArity(1, std::numeric_limits<size_t>::max())) ||
      failed(nc.checkAttrs({"axis"})))
    return failure();
  FailureOr<std::optional<int64_t>> axisAttr = nc.intAttr("axis");
  if (failed(axisAttr))
    return failure();
  if (!*axisAttr)
    return nc.error() << "has no attribute \"axis\"";
  size_t n = nc.node.input_size();
  RankedTensorType first = nc.inputType(0);
  FailureOr<int64_t> axis =
      nc.normalizeAxis(**axisAttr, first.getRank(), "axis");
  if (failed(axis))
    return failure();
  bool known = true;
  for (size_t i = 0; i < n; ++i) {
    RankedTensorType t = nc.inputType(i);
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return nc.error() << "operands differ in rank or element type";
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != *axis && t.getDimSize(d) != first.getDimSize(d))
        return nc.error() << "operands of shapes "
                          << shapeText(first.getShape()) << " and "
                          << shapeText(t.getShape()) << " differ outside dim "
                          << *axis;
    known &= nc.constant(i) != nullptr;
  }
  if (known) {
    // Concatenation along `axis`: blocks of `inner` elements per outer index.
    SmallVector<int64_t> shape(first.getShape());
    shape[*axis] = 0;
    for (size_t i = 0; i < n; ++i)
      shape[*axis] += nc.inputType(i).getDimSize(*axis);
    if (product(shape) <= kMaxFoldedElements) {
      HostTensor out;
      out.shape = shape;
      out.elementType = first.getElementType();
      int64_t outer = product(ArrayRef<int64_t>(shape).take_front(*axis));
      for (int64_t o = 0; o < outer; ++o)
        for (size_t i = 0; i < n; ++i) {
          const HostTensor &t = *nc.constant(i);
          int64_t block = product(ArrayRef<int64_t>(t.shape).drop_front(*axis));
          for (int64_t k = o * block; k < (o + 1) * block; ++k) {
            if (out.isFloat())
              out.floats.push_back(t.floats[k]);
            else
              out.ints.push_back(t.ints[k]);
          }
        }
      nc.setOutput(0, std::move(out));
      return success();
    }
  }
  SmallVector<Value> operands;
  for (size_t i = 0; i < n; ++i)
    operands.push_back(nc.value(i));
  return done(nc, nc.build("shardc.concatenate", operands,
                           {named(nc, "dimension",
                                  nc.builder.getI64IntegerAttr(*axis))}));
}

static LogicalResult gather(NodeContext &nc) {
  if (failed(nc.checkArity(2, 2)) || failed(nc.checkAttrs({"axis"})))
    return failure();
  FailureOr<std::optional<int64_t>> axisAttr = nc.intAttr("axis");
  if (failed(axisAttr))
    return failure();
  RankedTensorType table = nc.inputType(0), ids = nc.inputType(1);
  if (!ids.getElementType().isInteger(64) &&
      !ids.getElementType().isInteger(32))
    return nc.error() << "indices must be INT64 or INT32";
  FailureOr<int64_t> axis =
      nc.normalizeAxis(axisAttr->value_or(0), table.getRank(), "axis");
  if (failed(axis))
    return failure();
  int64_t size = table.getDimSize(*axis);
  const HostTensor *knownIds = nc.constant(1);
  // Known ids: negative ones count from the end, as ONNX says.
  std::optional<HostTensor> normalized;
  if (knownIds) {
    normalized = *knownIds;
    for (int64_t &id : normalized->ints) {
      if (id < -size || id >= size)
        return nc.error() << "index " << id << " is out of range for dim "
                          << *axis << " of size " << size;
      if (id < 0)
        id += size;
    }
  }
  SmallVector<int64_t> shape(table.getShape().take_front(*axis));
  shape.append(ids.getShape().begin(), ids.getShape().end());
  shape.append(table.getShape().drop_front(*axis + 1).begin(),
               table.getShape().end());
  if (const HostTensor *t = nc.constant(0);
      t && knownIds && product(shape) <= kMaxFoldedElements) {
    HostTensor out = HostTensor::zeros(shape, t->elementType);
    int64_t outer = product(table.getShape().take_front(*axis));
    int64_t inner = product(table.getShape().drop_front(*axis + 1));
    int64_t count = normalized->numElements(), linear = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < count; ++k)
        for (int64_t j = 0; j < inner; ++j, ++linear) {
          int64_t src = (o * size + normalized->ints[k]) * inner + j;
          if (out.isFloat())
            out.floats[linear] = t->floats[src];
          else
            out.ints[linear] = t->ints[src];
        }
    nc.setOutput(0, std::move(out));
    return success();
  }
  FailureOr<Value> idsValue =
      normalized ? nc.constantAs(*normalized, normalized->shape, ".indices")
                 : FailureOr<Value>(nc.value(1));
  if (failed(idsValue))
    return failure();
  return done(
      nc, nc.build("shardc.gather", {nc.value(0), *idsValue},
                   {named(nc, "axis", nc.builder.getI64IntegerAttr(*axis))}));
}

void shardc::onnximport::addLayoutConverters(
    llvm::StringMap<Converter> &table) {
  table.insert({"Concat", concat});
  table.insert({"Gather", gather});
  table.insert({"Reshape", reshape});
  table.insert({"Slice", slice});
  table.insert({"Split", split});
  table.insert({"Squeeze", squeeze});
  table.insert({"Transpose", transpose});
  table.insert({"Unsqueeze", unsqueeze});
}
