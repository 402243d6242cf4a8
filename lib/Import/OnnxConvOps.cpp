//===- OnnxConvOps.cpp - ONNX Conv as im2col and a GEMM -------------------===//
//
// ONNX's Conv rewritten at import into shardc ops: im2col out of slices
// (or, for patches, a reshape) and a dot_general with groups as a batch
// dim. Its rule, gradient, kernel and cost are those of the ops it is made
// of.
//
//===----------------------------------------------------------------------===//

#include "OnnxComposedHelpers.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace shardc::onnximport;
using namespace shardc::onnximport::composed;
using llvm::SmallVector;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

/// Conv as im2col and a GEMM, out of slice, reshape, transpose and
/// dot_general. x [B, C, S...] (zero-padded by `pads` first) gives, for
/// each kernel position k, the strided slice of the windows' k-th
/// elements [B, C, O...]; stacked as [B, C, K..., O...] they contract
/// with the weight [M, C/G, K...] over (C, K...), groups as a batch dim.
/// Where the windows tile the input (stride = kernel, no dilation: a
/// ViT's patch embedding) the columns are x itself, reshaped
/// [B, C, O1, K1, ...] and transposed: no slices, and a spatial dim split
/// over devices stays split without halos.
/// More slices than this is no kernel of a model (7x7 is 49).
static constexpr int64_t kMaxConvPositions = 1024;

static LogicalResult conv(NodeContext &nc) {
  if (failed(nc.checkArity(2, 3)) ||
      failed(nc.checkAttrs({"auto_pad", "dilations", "group", "kernel_shape",
                            "pads", "strides"})))
    return failure();
  RankedTensorType xType = nc.inputType(0), wType = nc.inputType(1);
  int64_t rank = xType.getRank(), n = rank - 2;
  if (rank < 3 || wType.getRank() != rank || !xType.getElementType().isF32() ||
      !wType.getElementType().isF32())
    return nc.error() << "takes FLOAT x [B, C, spatial...] and a weight of "
                         "its rank, got "
                      << shapeText(xType.getShape()) << " and "
                      << shapeText(wType.getShape());
  FailureOr<std::optional<std::string>> autoPad = nc.stringAttr("auto_pad");
  FailureOr<int64_t> groupAttr = intAttrOr(nc, "group", 1);
  FailureOr<std::optional<SmallVector<int64_t>>> stridesAttr =
      nc.intsAttr("strides");
  FailureOr<std::optional<SmallVector<int64_t>>> dilationsAttr =
      nc.intsAttr("dilations");
  FailureOr<std::optional<SmallVector<int64_t>>> padsAttr = nc.intsAttr("pads");
  FailureOr<std::optional<SmallVector<int64_t>>> kernelAttr =
      nc.intsAttr("kernel_shape");
  if (failed(autoPad) || failed(groupAttr) || failed(stridesAttr) ||
      failed(dilationsAttr) || failed(padsAttr) || failed(kernelAttr))
    return failure();
  if (autoPad->value_or("NOTSET") != "NOTSET")
    return nc.error() << "has auto_pad \"" << **autoPad
                      << "\"; shardc reads explicit pads (torch writes them)";
  ArrayRef<int64_t> xs = xType.getShape(), ws = wType.getShape();
  int64_t batch = xs[0], channels = xs[1], outChannels = ws[0],
          groups = *groupAttr;
  SmallVector<int64_t> kernel(ws.drop_front(2));
  SmallVector<int64_t> strides =
      stridesAttr->value_or(SmallVector<int64_t>(n, 1));
  SmallVector<int64_t> dilations =
      dilationsAttr->value_or(SmallVector<int64_t>(n, 1));
  SmallVector<int64_t> pads =
      padsAttr->value_or(SmallVector<int64_t>(2 * n, 0));
  if (static_cast<int64_t>(strides.size()) != n ||
      static_cast<int64_t>(dilations.size()) != n ||
      static_cast<int64_t>(pads.size()) != 2 * n ||
      (*kernelAttr && ArrayRef<int64_t>(**kernelAttr) != ArrayRef(kernel)))
    return nc.error() << "its strides, dilations, pads or kernel_shape do not "
                         "fit "
                      << n << " spatial dims of kernel " << shapeText(kernel);
  if (groups < 1 || channels % groups || outChannels % groups ||
      ws[1] * groups != channels)
    return nc.error() << "groups " << groups << " do not divide " << channels
                      << " input channels into the weight's " << ws[1]
                      << " per group, or its " << outChannels
                      << " output channels";
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    if (strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 || pads[n + i] < 0)
      return nc.error() << "has a stride or dilation below 1 or a negative pad";
    int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    int64_t padded = xs[2 + i] + pads[i] + pads[n + i];
    if (padded < span)
      return nc.error() << "its kernel spans " << span << " of spatial dim "
                        << i << ", which has " << padded;
    out.push_back((padded - span) / strides[i] + 1);
  }
  Value x = nc.value(0);
  Type f32 = xType.getElementType();
  auto shapeOf = [](Value v) {
    return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
  };
  if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
    SmallVector<int64_t> low(2, 0), high(2, 0), shape(xs.take_front(2));
    for (int64_t i = 0; i < n; ++i) {
      low.push_back(pads[i]);
      high.push_back(pads[n + i]);
      shape.push_back(xs[2 + i] + pads[i] + pads[n + i]);
    }
    FailureOr<Value> zero = nc.constantAs(scalarOf(0, f32), {}, ".pad_value");
    if (failed(zero))
      return failure();
    FailureOr<Value> padded =
        make(nc, "shardc.pad", {x, *zero},
             {dimsAttr(nc, "low", low), dimsAttr(nc, "high", high)},
             RankedTensorType::get(shape, f32), "padded");
    if (failed(padded))
      return failure();
    x = *padded;
  }
  // The columns [B, C, K..., O...].
  SmallVector<int64_t> columnShape{batch, channels};
  llvm::append_range(columnShape, kernel);
  llvm::append_range(columnShape, out);
  if (llvm::Expected<SmallVector<int64_t>> ok = checkedShape(columnShape); !ok)
    return nc.error() << "its columns " << shapeText(columnShape) << " "
                      << llvm::toString(ok.takeError());
  Value columns;
  bool tiles = true;
  for (int64_t i = 0; i < n; ++i)
    tiles &= strides[i] == kernel[i] && dilations[i] == 1;
  if (tiles) {
    SmallVector<int64_t> used(shapeOf(x));
    for (int64_t i = 0; i < n; ++i)
      used[2 + i] = out[i] * kernel[i];
    if (used != shapeOf(x)) {
      FailureOr<Value> cut =
          make(nc, "shardc.slice", {x},
               {dimsAttr(nc, "start", SmallVector<int64_t>(rank, 0)),
                dimsAttr(nc, "limit", used)},
               RankedTensorType::get(used, f32), "tiled");
      if (failed(cut))
        return failure();
      x = *cut;
    }
    // [B, C, O1, K1, O2, K2, ...] -> [B, C, K1, K2, ..., O1, O2, ...]
    SmallVector<int64_t> split{batch, channels}, perm{0, 1};
    for (int64_t i = 0; i < n; ++i) {
      split.push_back(out[i]);
      split.push_back(kernel[i]);
    }
    for (int64_t i = 0; i < n; ++i)
      perm.push_back(3 + 2 * i);
    for (int64_t i = 0; i < n; ++i)
      perm.push_back(2 + 2 * i);
    FailureOr<Value> patches = nc.reshape(x, split, nc.loc(0, ".patches"));
    if (failed(patches))
      return failure();
    FailureOr<Value> moved =
        make(nc, "shardc.transpose", {*patches},
             {dimsAttr(nc, "permutation", perm)}, {}, "columns");
    if (failed(moved))
      return failure();
    columns = *moved;
  } else {
    int64_t positions = product(kernel);
    if (positions > kMaxConvPositions)
      return nc.error() << "has a kernel of " << positions
                        << " positions; shardc reads Conv as one slice per "
                           "position, at most "
                        << kMaxConvPositions;
    SmallVector<Value> slices;
    SmallVector<int64_t> one{batch, channels, 1};
    llvm::append_range(one, out);
    for (int64_t k = 0; k < positions; ++k) {
      SmallVector<int64_t> start(rank, 0), limit(shapeOf(x)), step(rank, 1);
      for (int64_t i = n - 1, rest = k; i >= 0; --i) {
        int64_t at = rest % kernel[i];
        rest /= kernel[i];
        start[2 + i] = at * dilations[i];
        limit[2 + i] = start[2 + i] + (out[i] - 1) * strides[i] + 1;
        step[2 + i] = strides[i];
      }
      SmallVector<int64_t> shape{batch, channels};
      llvm::append_range(shape, out);
      std::string tag = "position" + std::to_string(k);
      FailureOr<Value> cut =
          make(nc, "shardc.slice", {x},
               {dimsAttr(nc, "start", start), dimsAttr(nc, "limit", limit),
                dimsAttr(nc, "stride", step)},
               RankedTensorType::get(shape, f32), tag);
      if (failed(cut))
        return failure();
      FailureOr<Value> lifted =
          nc.reshape(*cut, one, nc.loc(0, "." + tag + ".lifted"));
      if (failed(lifted))
        return failure();
      slices.push_back(*lifted);
    }
    Value stacked = slices.front();
    if (slices.size() > 1) {
      FailureOr<Value> joined =
          make(nc, "shardc.concatenate", slices,
               {named(nc, "dimension", nc.builder.getI64IntegerAttr(2))}, {},
               "positions");
      if (failed(joined))
        return failure();
      stacked = *joined;
    }
    SmallVector<int64_t> shape{batch, channels};
    llvm::append_range(shape, kernel);
    llvm::append_range(shape, out);
    FailureOr<Value> cols = nc.reshape(stacked, shape, nc.loc(0, ".columns"));
    if (failed(cols))
      return failure();
    columns = *cols;
  }
  // Groups: [B, G, C/G, K..., O...] x [G, M/G, C/G, K...], batched over G,
  // gives [G, B, O..., M/G].
  int64_t cg = channels / groups, mg = outChannels / groups;
  SmallVector<int64_t> colShape{batch, groups, cg};
  llvm::append_range(colShape, kernel);
  llvm::append_range(colShape, out);
  SmallVector<int64_t> wShape{groups, mg, cg};
  llvm::append_range(wShape, kernel);
  FailureOr<Value> cols = nc.reshape(columns, colShape, nc.loc(0, ".grouped"));
  FailureOr<Value> w = nc.reshape(nc.value(1), wShape, nc.loc(0, ".weight"));
  if (failed(cols) || failed(w))
    return failure();
  SmallVector<int64_t> lc{2}, rc{2};
  for (int64_t i = 0; i < n; ++i) {
    lc.push_back(3 + i);
    rc.push_back(3 + i);
  }
  FailureOr<Value> gemm = make(nc, "shardc.dot_general", {*cols, *w},
                               {dimsAttr(nc, "lhs_batch_dims", {1}),
                                dimsAttr(nc, "rhs_batch_dims", {0}),
                                dimsAttr(nc, "lhs_contracting_dims", lc),
                                dimsAttr(nc, "rhs_contracting_dims", rc)},
                               {}, "product");
  if (failed(gemm))
    return failure();
  // [G, B, O..., M/G] -> [B, G, M/G, O...] -> [B, M, O...]
  SmallVector<int64_t> perm{1, 0, n + 2};
  for (int64_t i = 0; i < n; ++i)
    perm.push_back(2 + i);
  SmallVector<int64_t> shape{batch, outChannels};
  llvm::append_range(shape, out);
  FailureOr<Value> moved =
      make(nc, "shardc.transpose", {*gemm}, {dimsAttr(nc, "permutation", perm)},
           {}, "moved");
  if (failed(moved))
    return failure();
  bool bias = nc.hasInput(2);
  FailureOr<Value> y =
      nc.reshape(*moved, shape, bias ? nc.loc(0, ".unbiased") : nc.loc());
  if (failed(y) || !bias)
    return done(nc, y);
  if (nc.inputType(2).getShape() != ArrayRef<int64_t>{outChannels})
    return nc.error() << "its bias has shape "
                      << shapeText(nc.inputType(2).getShape()) << ", not ["
                      << outChannels << "]";
  FailureOr<Value> b = make(nc, "shardc.broadcast_in_dim", {nc.value(2)},
                            {dimsAttr(nc, "dims", {1})},
                            RankedTensorType::get(shape, f32), "bias");
  if (failed(b))
    return failure();
  return done(nc, make(nc, "shardc.add", {*y, *b}));
}

void shardc::onnximport::composed::addConvConverters(
    llvm::StringMap<Converter> &table) {
  table.insert({"Conv", conv});
}
