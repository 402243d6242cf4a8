//===- ProgramBuilder.h - state shared by the difftest drawers --*- C++ -*-===//
//
// The generator in parts, around one builder: MeshDrawing.cpp draws the
// mesh, shapes and shardings; OpDrawing.cpp draws tensor ops (with
// ElementwiseDrawing.cpp, SlicingDrawing.cpp, IndexingDrawing.cpp and
// CompositeDrawing.cpp for those families; ValueDomains.cpp fits operands
// to an op's declared domain); ProgramKinds.cpp assembles them into the
// kinds of programs Generator.h lists, and Collectives.cpp draws the
// collective a global program must be rejected for.
//
// Every value the generator makes carries a ValueInfo: bounds on its
// elements, and whether the sharded program computes it bit for bit as the
// unsharded one does. Ops are drawn only where these keep the comparison
// meaningful: operands lie in the domain the op declares
// (ValueDomainOpInterface: log, sqrt, rsqrt and a divisor see values bounded
// away from 0), nothing can overflow or underflow into a false mismatch,
// and ops with a discontinuity (step, and in a backward pass the masks of
// relu, max and reduce_max) only see exact values, where rounding cannot
// flip them.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_DIFFTEST_PROGRAMBUILDER_H
#define SHARDC_TOOLS_DIFFTEST_PROGRAMBUILDER_H

#include "Generator.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/ValueDomainOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>

namespace shardc::difftest {

/// What the generator knows of a value's elements.
struct ValueInfo {
  /// Every finite element lies in [lo, hi].
  double lo = -1, hi = 1;
  /// Computed bit for bit alike by the sharded and the unsharded program:
  /// inputs and constants, and what IEEE-exact elementwise ops (+ - * /,
  /// max, relu, neg, step, sqrt) and layout ops make of exact values.
  /// Contractions, sums and Eigen's approximated transcendental functions
  /// (whose vectorized and scalar paths differ in the last bit) are not.
  bool exact = true;
  /// May hold NaN or infinities (--non-finite inputs).
  bool nonFinite = false;
  /// May be a pending sum in the sharded program: a partial input, or what
  /// linear ops make of one (inexact values, from contractions and sums,
  /// may be pending too). Pending sums distribute over mul, as in GSPMD:
  /// exact up to rounding for finite values, but a device whose summand is
  /// 0 makes 0 * Inf = NaN where the whole sum times Inf is Inf. So such a
  /// value is never multiplied by a non-finite one.
  bool mayBeSummed = false;

  double scale() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};

/// The largest magnitude a value may reach: far enough below FLT_MAX that
/// a sum over a contraction or a gradient does not overflow either.
constexpr double kMaxScale = 1e34;
/// Products of magnitudes below this would be subnormal, where sharded and
/// unsharded sums in different orders differ by more than the tolerance.
constexpr double kMinProductScale = 1e-32;
/// Where an op declares positive operands (or a divisor bounded away from
/// 0), they are at least this far from 0.
constexpr double kMinPositive = 0.05;
/// Elements of any one tensor: keeps 16-device cases fast.
constexpr int64_t kMaxElements = 4096;
constexpr int64_t kMaxRank = 5;
constexpr int64_t kMaxArgs = 8;

//===--- ValueDomains.cpp ---------------------------------------------===//

/// The hull of four bounds (of a product's corners).
ValueInfo hull(double a, double b, double c, double d);
ValueInfo productInfo(const ValueInfo &x, const ValueInfo &y);
/// A product (summed over `terms`) neither overflows nor sinks into
/// subnormals.
bool productFits(const ValueInfo &x, const ValueInfo &y, double terms = 1);
bool fits(const ValueInfo &i);
/// Bounded away from 0 (by kMinPositive) on one side.
bool awayFromZero(const ValueInfo &i);

class ProgramBuilder {
public:
  ProgramBuilder(mlir::MLIRContext &ctx, DiffRng &rng,
                 const GeneratorOptions &options);

  //===--- MeshDrawing.cpp ------------------------------------------------===//

  /// Draws the mesh (1 to 4 axes, 1 to 16 devices, odd sizes included) and
  /// creates it in the module.
  void drawMesh();
  /// A dim size that the mesh's axes often divide.
  int64_t randomDim();
  /// A shape of rank in [minRank, maxRank] within kMaxElements.
  llvm::SmallVector<int64_t> randomShape(int64_t minRank, int64_t maxRank);
  /// A random permutation of [0, n).
  llvm::SmallVector<int64_t> randomPermutation(int64_t n);
  /// Each axis at most once: on a dim (one it divides evenly, unless the
  /// case draws uneven dims), in the partial set (if `allowPartial`), or
  /// unused.
  ShardingAttr randomSharding(llvm::ArrayRef<int64_t> shape, bool allowPartial);

  //===--- OpDrawing.cpp --------------------------------------------------===//

  /// Builds one random op (or a short fixed sequence) on `x`; null if the
  /// chosen kind does not apply, and the caller tries again.
  mlir::Value buildRandomOp(mlir::Value x);

  //===--- ElementwiseDrawing.cpp -----------------------------------------===//

  /// A registered elementwise op of `arity` (1 or 2) operands on `x`, its
  /// operands fitted to the op's declared domains; null if it does not
  /// apply.
  mlir::Value buildElementwiseOp(mlir::Value x, unsigned arity);

  //===--- ValueDomains.cpp -----------------------------------------------===//

  /// A constant of `type`, in [-0.5, 0.5) or, if `positive`, [0.25, 1).
  mlir::Value drawConstant(mlir::RankedTensorType type, bool positive);
  /// `x` mapped to values >= kMinPositive.
  mlir::Value positive(mlir::Value x);
  /// `x`, scaled into [-limit, limit] by a constant factor if its bounds
  /// exceed that. A function that saturates or underflows there loses the
  /// meaning of the comparison: the last-bit differences of Eigen's
  /// vectorized and scalar paths (the sharded program runs other lengths)
  /// become relative differences of order one in values near 0 (sigmoid or
  /// exp of very negative values, gelu's 1 + tanh) or in derivatives that
  /// are differences of nearly equal numbers (1 - tanh^2).
  mlir::Value unsaturated(mlir::Value x, double limit);
  /// Whether `x`'s bounds lie in `domain`.
  bool holdsDomain(mlir::Value x, const OperandDomain &domain);
  /// `x` mapped into `domain` (made positive, or scaled down); null if it
  /// cannot be.
  mlir::Value fitDomain(mlir::Value x, const OperandDomain &domain);

  //===--- SlicingDrawing.cpp ---------------------------------------------===//

  /// A random slice, concatenation or pad of `x`; null if it does not apply.
  mlir::Value buildSlicingOp(mlir::Value x);

  //===--- CompositeDrawing.cpp -------------------------------------------===//

  /// A random softmax, log_softmax, layer_norm, rms_norm, mean or
  /// cross_entropy of `x`; null if it does not apply.
  mlir::Value buildCompositeOp(mlir::Value x);

  //===--- IndexingDrawing.cpp --------------------------------------------===//

  /// A random gather of `x` or scatter_add into it, at random integer ids;
  /// null if it does not apply.
  mlir::Value buildIndexingOp(mlir::Value x);

  //===--- Collectives.cpp ------------------------------------------------===//

  /// A collective op valid on `x`'s global shape (for GlobalCollective).
  mlir::Value buildCollective(mlir::Value x);

  //===--- ProgramKinds.cpp -----------------------------------------------===//

  /// A scalar loss from `v`: the sum of its elements or of their squares.
  mlir::Value buildLoss(mlir::Value v);

  //===--- values ---------------------------------------------------------===//

  mlir::Value addInput(llvm::ArrayRef<int64_t> shape);
  mlir::Value addInput(llvm::ArrayRef<int64_t> shape, InputDomain domain);
  /// Records an op result with its info (and maybe a sharding annotation).
  mlir::Value record(mlir::Value v, const ValueInfo &info);
  const ValueInfo &info(mlir::Value v) { return infos[v]; }
  /// Mostly the newest value; sometimes an older one (a DAG).
  mlir::Value pickOperand();

  mlir::MLIRContext &ctx;
  DiffRng &rng;
  const GeneratorOptions &options;
  mlir::OpBuilder b;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Block *body = nullptr;
  mlir::FlatSymbolRefAttr meshRef;
  llvm::SmallVector<std::string> axisNames;
  llvm::SmallVector<int64_t> axisSizes;
  /// Every value ops may consume, oldest first.
  llvm::SmallVector<mlir::Value> pool;
  llvm::DenseMap<mlir::Value, ValueInfo> infos;
  llvm::SmallVector<mlir::DictionaryAttr> argAttrs;
  std::vector<InputDomain> domains;
  int numOps = 0;
  /// Draw inputs of extreme magnitude in this case.
  bool extremeMagnitudes = false;
  /// Draw sizes the axes do not divide, and shardings that split them.
  bool uneven = false;
  /// Annotations drawn that split a dim unevenly.
  int unevenShardings = 0;
  /// The program will be differentiated: discontinuous masks need exact
  /// operands.
  bool differentiated = false;

private:
  int nextName = 0;

public:
  mlir::Location freshLoc() {
    return mlir::NameLoc::get(
        mlir::StringAttr::get(&ctx, "v" + llvm::Twine(nextName++)));
  }
  static mlir::RankedTensorType tensorOf(mlir::Value v) {
    return llvm::cast<mlir::RankedTensorType>(v.getType());
  }
  mlir::RankedTensorType makeType(llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, b.getF32Type());
  }
  bool canAddInput() const {
    return static_cast<int64_t>(argAttrs.size()) < kMaxArgs;
  }
};

/// Number of elements of `shape`.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// The registered shardc op, among those `candidate` accepts, that wins
/// `draw` by rendezvous hashing (ElementwiseDrawing.cpp): adding an op
/// changes only the draws it wins.
std::optional<mlir::OperationName>
pickRegisteredOp(mlir::MLIRContext &ctx,
                 llvm::function_ref<bool(mlir::OperationName)> candidate,
                 uint64_t draw);

} // namespace shardc::difftest

#endif // SHARDC_TOOLS_DIFFTEST_PROGRAMBUILDER_H
