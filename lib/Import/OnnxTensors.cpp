//===- OnnxTensors.cpp - ONNX tensors known at import ---------------------===//
//
// Decoding TensorProtos (initializers, Constant nodes) and the small tensor
// arithmetic shape subgraphs are folded with. Every size read from the file
// is checked before it is used: the file may be hostile.
//
//===----------------------------------------------------------------------===//

#include "OnnxImport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace mlir;
using namespace shardc::onnximport;
using llvm::SmallVector;

int64_t shardc::onnximport::product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t HostTensor::numElements() const { return product(shape); }

int64_t HostTensor::intAt(int64_t i) const {
  if (!isFloat())
    return ints[i];
  double v = floats[i];
  // Saturates instead of overflowing (INT64_MAX in a Slice's ends is
  // common; a float constant beyond int64 is not a size).
  if (!(v > -9.2e18))
    return v != v ? 0 : std::numeric_limits<int64_t>::min();
  if (v > 9.2e18)
    return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(v);
}

HostTensor HostTensor::zeros(ArrayRef<int64_t> shape, Type type) {
  HostTensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.elementType = type;
  if (t.isFloat())
    t.floats.assign(t.numElements(), 0.0);
  else
    t.ints.assign(t.numElements(), 0);
  return t;
}

DenseElementsAttr HostTensor::toAttr() const {
  auto type = RankedTensorType::get(shape, elementType);
  if (isFloat()) {
    SmallVector<float> v(floats.begin(), floats.end());
    return DenseElementsAttr::get(type, ArrayRef<float>(v));
  }
  if (elementType.isInteger(1)) {
    SmallVector<bool> v;
    for (int64_t x : ints)
      v.push_back(x != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(v));
  }
  if (elementType.isInteger(32)) {
    SmallVector<int32_t> v(ints.begin(), ints.end());
    return DenseElementsAttr::get(type, ArrayRef<int32_t>(v));
  }
  return DenseElementsAttr::get(type, ArrayRef<int64_t>(ints));
}

std::optional<HostTensor> HostTensor::fromAttr(DenseElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  HostTensor t = zeros(type.getShape(), type.getElementType());
  if (t.isFloat()) {
    if (!type.getElementType().isF32())
      return std::nullopt;
    llvm::copy(attr.getValues<float>(), t.floats.begin());
    return t;
  }
  if (!isa<IntegerType>(type.getElementType()))
    return std::nullopt;
  bool isBool = type.getElementType().isInteger(1);
  llvm::transform(attr.getValues<APInt>(), t.ints.begin(), [&](APInt v) {
    return isBool ? int64_t(v.getBoolValue()) : v.getSExtValue();
  });
  return t;
}

Type shardc::onnximport::elementTypeOf(MLIRContext *ctx, int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return Float32Type::get(ctx);
  case onnx::TensorProto::BOOL:
    return IntegerType::get(ctx, 1);
  case onnx::TensorProto::INT32:
    return IntegerType::get(ctx, 32);
  case onnx::TensorProto::INT64:
    return IntegerType::get(ctx, 64);
  default:
    return nullptr;
  }
}

std::string shardc::onnximport::dataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  return "unknown type " + std::to_string(dataType);
}

llvm::Expected<SmallVector<int64_t>>
shardc::onnximport::checkedShape(ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return llvm::createStringError("has a negative dim " + std::to_string(d));
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      return llvm::createStringError(
          "has more elements than fit in int64 (a dim of " + std::to_string(d) +
          ")");
    count *= d;
    shape.push_back(d);
  }
  return shape;
}

std::string shardc::onnximport::shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// Bytes per element of the raw data of the types the importer reads.
static int64_t rawWidth(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
    return 4;
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::DOUBLE:
    return 8;
  case onnx::TensorProto::BOOL:
    return 1;
  default:
    return 0;
  }
}

/// How many elements the typed (non-raw) field of `t` holds.
static int64_t typedCount(const onnx::TensorProto &t) {
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    return t.float_data_size();
  case onnx::TensorProto::INT64:
    return t.int64_data_size();
  case onnx::TensorProto::DOUBLE:
    return t.double_data_size();
  default: // INT32 and BOOL are stored in int32_data.
    return t.int32_data_size();
  }
}

llvm::Error shardc::onnximport::checkTensorData(const onnx::TensorProto &t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return llvm::createStringError(
        "keeps its data in an external file, which shardc does not read "
        "(export with the weights inside the model)");
  int64_t width = rawWidth(t.data_type());
  if (width == 0)
    return llvm::createStringError(
        "has element type " + dataTypeName(t.data_type()) +
        " (shardc reads FLOAT, INT64, INT32 and BOOL tensors)");
  SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
  llvm::Expected<SmallVector<int64_t>> shape = checkedShape(dims);
  if (!shape)
    return shape.takeError();
  int64_t count = 1;
  for (int64_t d : *shape)
    count *= d;
  if (t.has_raw_data()) {
    uint64_t bytes = t.raw_data().size();
    if (count > std::numeric_limits<int64_t>::max() / width ||
        bytes != static_cast<uint64_t>(count * width))
      return llvm::createStringError(
          "has " + std::to_string(bytes) + " bytes of data, but its shape " +
          shapeText(*shape) + " of " + dataTypeName(t.data_type()) + " needs " +
          (count > std::numeric_limits<int64_t>::max() / width
               ? std::string("more than fit in int64")
               : std::to_string(count * width)));
    return llvm::Error::success();
  }
  if (typedCount(t) != count)
    return llvm::createStringError(
        "has " + std::to_string(typedCount(t)) + " elements, but its shape " +
        shapeText(*shape) + " holds " + std::to_string(count));
  return llvm::Error::success();
}

llvm::Expected<HostTensor>
shardc::onnximport::decodeTensor(MLIRContext *ctx, const onnx::TensorProto &t) {
  if (llvm::Error e = checkTensorData(t))
    return std::move(e);
  HostTensor h;
  h.shape.assign(t.dims().begin(), t.dims().end());
  // A DOUBLE constant (torch.clamp's bounds, a Python float) is cast to
  // FLOAT at import: shardc computes in f32.
  h.elementType = t.data_type() == onnx::TensorProto::DOUBLE
                      ? Float32Type::get(ctx)
                      : elementTypeOf(ctx, t.data_type());
  int64_t count = h.numElements();
  if (count > kMaxFoldedElements)
    return llvm::createStringError("has " + std::to_string(count) +
                                   " elements, more than the " +
                                   std::to_string(kMaxFoldedElements) +
                                   " a constant folded at import may have");
  const std::string &raw = t.raw_data();
  const char *p = raw.data();
  for (int64_t i = 0; i < count; ++i) {
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: {
      float v;
      if (t.has_raw_data()) {
        uint32_t bits = llvm::support::endian::read32le(p + 4 * i);
        std::memcpy(&v, &bits, 4);
      } else {
        v = t.float_data(i);
      }
      h.floats.push_back(v);
      break;
    }
    case onnx::TensorProto::DOUBLE: {
      double v;
      if (t.has_raw_data()) {
        uint64_t bits = llvm::support::endian::read64le(p + 8 * i);
        std::memcpy(&v, &bits, 8);
      } else {
        v = t.double_data(i);
      }
      h.floats.push_back(static_cast<float>(v));
      break;
    }
    case onnx::TensorProto::INT64:
      h.ints.push_back(
          t.has_raw_data()
              ? static_cast<int64_t>(llvm::support::endian::read64le(p + 8 * i))
              : t.int64_data(i));
      break;
    case onnx::TensorProto::INT32:
      h.ints.push_back(
          t.has_raw_data()
              ? static_cast<int32_t>(llvm::support::endian::read32le(p + 4 * i))
              : t.int32_data(i));
      break;
    default: // BOOL
      h.ints.push_back(t.has_raw_data() ? (p[i] != 0) : (t.int32_data(i) != 0));
      break;
    }
  }
  return h;
}

std::optional<SmallVector<int64_t>>
shardc::onnximport::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

HostTensor shardc::onnximport::broadcastHost(const HostTensor &t,
                                             ArrayRef<int64_t> shape) {
  HostTensor out = HostTensor::zeros(shape, t.elementType);
  int64_t n = out.numElements();
  size_t rank = shape.size(), offset = rank - t.shape.size();
  SmallVector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t src = 0;
    for (size_t d = offset; d < rank; ++d) {
      int64_t size = t.shape[d - offset];
      src = src * size + (size == 1 ? 0 : index[d]);
    }
    if (t.isFloat())
      out.floats[linear] = t.floats[src];
    else
      out.ints[linear] = t.ints[src];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}
