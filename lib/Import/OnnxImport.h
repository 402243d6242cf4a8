//===- OnnxImport.h - shared state of the ONNX importer ---------*- C++ -*-===//
//
// The ONNX importer walks the graph's nodes in order and gives every ONNX
// value one of two forms: an IR value, or a tensor known at import
// (`HostTensor`: an integer initializer, a Constant node, or what a shape
// subgraph computes from them). Shape arithmetic (Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape) runs on host tensors and disappears; a
// host tensor that a computing op uses becomes a `shardc.constant` there.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_IMPORT_ONNXIMPORT_H
#define SHARDC_LIB_IMPORT_ONNXIMPORT_H

#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <optional>

namespace shardc::onnximport {

/// The opsets of the default ONNX domain the importer reads: those
/// torch.onnx.export (torch 1.13) writes.
inline constexpr int64_t kMinOpset = 13, kMaxOpset = 17;

/// The largest tensor folded at import (elements): shape arithmetic is
/// tiny; a ConstantOfShape of a huge shape is refused, not allocated.
inline constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

/// A tensor known at import. Integer and boolean elements are kept in
/// `ints`, float elements in `floats`.
struct HostTensor {
  llvm::SmallVector<int64_t> shape;
  /// f32, i1, i32 or i64.
  mlir::Type elementType;
  llvm::SmallVector<int64_t> ints;
  llvm::SmallVector<double> floats;

  bool isFloat() const { return mlir::isa<mlir::FloatType>(elementType); }
  int64_t numElements() const;
  double floatAt(int64_t i) const { return isFloat() ? floats[i] : ints[i]; }
  int64_t intAt(int64_t i) const;
  /// A tensor of `shape` and `elementType`, its elements zero.
  static HostTensor zeros(llvm::ArrayRef<int64_t> shape, mlir::Type type);
  /// The `shardc.constant` value of this tensor.
  mlir::DenseElementsAttr toAttr() const;
  /// The tensor `attr` holds (f32, i1, i32 or i64), or nullopt.
  static std::optional<HostTensor> fromAttr(mlir::DenseElementsAttr attr);
};

/// The IR element type of ONNX element type `dataType` (f32, bool, i32,
/// i64), or null.
mlir::Type elementTypeOf(mlir::MLIRContext *ctx, int32_t dataType);
/// "FLOAT", "INT64", ... for messages.
std::string dataTypeName(int32_t dataType);

/// Decodes a TensorProto into a host tensor (an error message on failure:
/// an unsupported type, external data, a size that disagrees with the
/// shape, too many elements).
llvm::Expected<HostTensor> decodeTensor(mlir::MLIRContext *ctx,
                                        const onnx::TensorProto &tensor);
/// Checks a TensorProto's shape and data size without decoding it.
llvm::Error checkTensorData(const onnx::TensorProto &tensor);
/// `dims` checked: each at least 0, and their product fits in int64.
llvm::Expected<llvm::SmallVector<int64_t>>
checkedShape(llvm::ArrayRef<int64_t> dims);

/// "[2, 3]" for messages.
std::string shapeText(llvm::ArrayRef<int64_t> shape);
/// The number of elements of `shape`.
int64_t product(llvm::ArrayRef<int64_t> shape);

/// NumPy broadcasting of two shapes, or nullopt if they do not broadcast.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);
/// `t` broadcast to `shape` (which broadcastShapes allowed).
HostTensor broadcastHost(const HostTensor &t, llvm::ArrayRef<int64_t> shape);

/// One ONNX value: an IR value, a host tensor, or both (a host tensor once
/// it has been materialized).
struct OnnxValue {
  mlir::RankedTensorType type;
  mlir::Value value;
  std::optional<HostTensor> constant;
};

class OnnxImporter;

/// What a converter of one node sees: its inputs, attributes and where its
/// outputs go, and how to report an error about it.
class NodeContext {
public:
  NodeContext(OnnxImporter &importer, const onnx::NodeProto &node,
              size_t index);

  const onnx::NodeProto &node;
  OnnxImporter &importer;
  mlir::MLIRContext *ctx;
  mlir::OpBuilder &builder;

  /// An error about this node: `node 12 "/fc/Gemm" (Gemm): ...`.
  mlir::InFlightDiagnostic error();
  /// Where its ops go: the name of output `i` around the node's location.
  mlir::Location loc(size_t output = 0, llvm::StringRef suffix = "");

  /// Input `i` is given (ONNX skips optional inputs with "").
  bool hasInput(size_t i) const;
  /// Fails unless the node has between `min` and `max` inputs and exactly
  /// `outputs` outputs.
  mlir::LogicalResult checkArity(size_t min, size_t max, size_t outputs = 1);
  const OnnxValue &input(size_t i);
  mlir::RankedTensorType inputType(size_t i) { return input(i).type; }
  /// Input `i` as an IR value (a host tensor is materialized).
  mlir::Value value(size_t i);
  /// Input `i` if it is known at import, else null.
  const HostTensor *constant(size_t i);
  /// Input `i` as a list of integers known at import; `what` names it in
  /// the error when it is computed at run time.
  mlir::FailureOr<llvm::SmallVector<int64_t>> intList(size_t i,
                                                      llvm::StringRef what);

  /// Attributes; `std::nullopt` when absent. A present attribute of the
  /// wrong kind is an error.
  mlir::FailureOr<std::optional<int64_t>> intAttr(llvm::StringRef name);
  mlir::FailureOr<std::optional<float>> floatAttr(llvm::StringRef name);
  mlir::FailureOr<std::optional<std::string>> stringAttr(llvm::StringRef name);
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  intsAttr(llvm::StringRef name);
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  /// Fails naming the first attribute not in `known`.
  mlir::LogicalResult checkAttrs(llvm::ArrayRef<llvm::StringRef> known);

  /// `axis` in [-rank, rank) made non-negative; fails naming `what`.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         llvm::StringRef what);

  /// Builds op `name` (e.g. "shardc.matmul") on `operands` with `attrs`,
  /// inferring its result type when it can, else taking `resultType`, and
  /// verifies it; a failure is a diagnostic at this node.
  mlir::FailureOr<mlir::Value>
  build(llvm::StringRef name, mlir::ValueRange operands,
        llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
        mlir::Type resultType = {}, std::optional<mlir::Location> at = {});
  /// Op `name` on the host tensors `operands` (one shape), computed by the
  /// op's own `fold` (an elementwise op's: its kernel) with result element
  /// type `elementType`; nullopt where the op does not fold them.
  std::optional<HostTensor> fold(llvm::StringRef name,
                                 llvm::ArrayRef<HostTensor> operands,
                                 mlir::Type elementType);
  /// `v` broadcast (NumPy rules) to `shape`.
  mlir::FailureOr<mlir::Value> broadcastTo(mlir::Value v,
                                           llvm::ArrayRef<int64_t> shape,
                                           llvm::StringRef suffix);
  /// Input `i` broadcast to `shape`; a host tensor becomes a constant of
  /// that shape directly.
  mlir::FailureOr<mlir::Value> inputAs(size_t i, llvm::ArrayRef<int64_t> shape,
                                       llvm::StringRef suffix);
  /// The host tensor `t` as a constant broadcast to `shape`: a splat is
  /// built at that shape directly.
  mlir::FailureOr<mlir::Value> constantAs(const HostTensor &t,
                                          llvm::ArrayRef<int64_t> shape,
                                          llvm::StringRef suffix);
  /// `v` reshaped to `shape` (nothing if it has it).
  mlir::FailureOr<mlir::Value> reshape(mlir::Value v,
                                       llvm::ArrayRef<int64_t> shape,
                                       std::optional<mlir::Location> at = {});

  /// Output `i` is `v` / the host tensor `t`.
  void setOutput(size_t i, mlir::Value v);
  void setOutput(size_t i, HostTensor t);
  /// Output `i` is the same ONNX value as input `j`.
  void alias(size_t i, size_t j);

  size_t index;
  int64_t opset;
};

/// The float initializers (and parameter copies, by the names `copies`
/// maps to what they copy) that are buffers, constants of the model rather
/// than parameters (OnnxBuffers.cpp): those reaching the outputs only where
/// no gradient flows, and those `declared`. A declared name that is a
/// graph input, or no initializer at all, is the error; an integer or
/// boolean initializer declared is a constant already.
llvm::Expected<llvm::StringSet<>>
findBuffers(const onnx::GraphProto &graph,
            const llvm::StringMap<std::string> &copies,
            llvm::ArrayRef<std::string> declared);

/// Converts one node; fails after a diagnostic.
using Converter = mlir::LogicalResult (*)(NodeContext &);

/// The converter of every supported op type (OnnxOps.cpp), gathered from
/// the files that implement them by concept.
const llvm::StringMap<Converter> &converters();
void addElementwiseConverters(llvm::StringMap<Converter> &table);
void addNeuralNetConverters(llvm::StringMap<Converter> &table);
void addLayoutConverters(llvm::StringMap<Converter> &table);
/// ONNX ops read as compositions of shardc ops (OnnxComposedOps.cpp, which
/// adds those of OnnxSelectionOps.cpp, OnnxScatterGatherOps.cpp,
/// OnnxConvOps.cpp and OnnxEinsum.cpp).
void addComposedConverters(llvm::StringMap<Converter> &table);

/// Rewrites what torch.onnx.export writes for nn.MultiheadAttention into
/// the layouts a plan shards (OnnxIdioms.cpp): a fused q/k/v projection is
/// stacked, a linear layer on flattened rows unflattened.
void rewriteExportIdioms(mlir::func::FuncOp func);

/// Helpers the converters share.
mlir::NamedAttribute named(NodeContext &nc, llvm::StringRef name,
                           mlir::Attribute a);
/// A DenseI64ArrayAttr named `name`.
mlir::NamedAttribute dimsAttr(NodeContext &nc, llvm::StringRef name,
                              llvm::ArrayRef<int64_t> dims);
/// Output `output` is `v`, unless building it failed.
mlir::LogicalResult done(NodeContext &nc, mlir::FailureOr<mlir::Value> v,
                         size_t output = 0);
/// `axes` made non-negative against `rank`, each once.
mlir::FailureOr<llvm::SmallVector<int64_t>>
normalizeAxes(NodeContext &nc, llvm::ArrayRef<int64_t> axes, int64_t rank);

class OnnxImporter {
public:
  OnnxImporter(mlir::MLIRContext *ctx, llvm::StringRef filename,
               mlir::OpBuilder &builder)
      : ctx(ctx), filename(filename.str()), builder(builder) {}

  /// The location of the file, for errors about the model as a whole.
  mlir::Location fileLoc();
  /// A host tensor as an IR constant (once; later uses share it).
  mlir::Value materialize(OnnxValue &v, mlir::Location loc);

  mlir::MLIRContext *ctx;
  std::string filename;
  mlir::OpBuilder &builder;
  llvm::StringMap<OnnxValue> values;
  int64_t opset = 0;
};

} // namespace shardc::onnximport

#endif // SHARDC_LIB_IMPORT_ONNXIMPORT_H
