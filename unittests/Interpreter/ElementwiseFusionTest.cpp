//===- ElementwiseFusionTest.cpp - fused passes give op-by-op bits --------===//
//
// The interpreter runs chains of elementwise ops as one blocked pass
// (lib/Interpreter/ElementwiseFusion.h). Its promise is the same bits as
// running the ops one by one, so each program below runs both ways and the
// results are compared byte for byte, on sizes that end mid-block and views
// whose rows straddle block boundaries.
//
//===----------------------------------------------------------------------===//

#include "TestHelpers.h"

// The plan is private to lib/Interpreter; the test reads its counts.
#include "ElementwiseFusion.h"

#include "shardc/Interpreter/Interpreter.h"

#include <cstring>

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {

class ElementwiseFusionTest : public InterpreterTestBase {
protected:
  /// @main's results computed op by op with evaluateTensorOp (no fusion).
  FailureOr<SmallVector<Tensor>> runOpByOp(func::FuncOp main,
                                           ArrayRef<Tensor> args) {
    llvm::DenseMap<Value, Tensor> values;
    for (auto [arg, tensor] : llvm::zip(main.getArguments(), args))
      values[arg] = tensor.clone();
    for (Operation &op : main.getBody().front()) {
      SmallVector<const Tensor *> operands;
      for (Value operand : op.getOperands())
        operands.push_back(&values[operand]);
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        SmallVector<Tensor> results;
        for (const Tensor *t : operands)
          results.push_back(t->clone());
        return results;
      }
      FailureOr<Tensor> result = evaluateTensorOp(&op, operands);
      if (failed(result))
        return failure();
      values[op.getResult(0)] = std::move(*result);
    }
    return failure();
  }

  /// Runs @main of `text` on `args` with the interpreter (fused) and op by
  /// op; expects the same bytes in every result and returns how many ops
  /// the plan fuses.
  size_t expectSameBits(llvm::StringRef text, ArrayRef<Tensor> args) {
    auto module = parse(text);
    if (!module)
      return 0;
    func::FuncOp main = getFunc(*module, "main");
    FailureOr<SmallVector<Tensor>> a = interpretFunction(main, args);
    FailureOr<SmallVector<Tensor>> b = runOpByOp(main, args);
    EXPECT_TRUE(succeeded(a) && succeeded(b)) << diagnostics;
    if (failed(a) || failed(b))
      return 0;
    EXPECT_EQ(a->size(), b->size());
    for (size_t i = 0; i < a->size() && i < b->size(); ++i) {
      const Tensor &x = (*a)[i], &y = (*b)[i];
      EXPECT_EQ(x.shape(), y.shape()) << "result " << i;
      EXPECT_EQ(x.dtype(), y.dtype()) << "result " << i;
      if (x.shape() != y.shape() || x.dtype() != y.dtype())
        continue;
      EXPECT_EQ(std::memcmp(x.rawData(), y.rawData(), x.byteSize()), 0)
          << "result " << i << " differs; max |difference| "
          << maxAbsDifference(x, y);
    }
    return shardc::detail::FusionPlan(main.getBody().front()).numFusedOps();
  }
};

/// A layer norm's and a masked softmax's decomposition, on 3*5*1000
/// elements (7 full blocks and a partial one; rows of 1000 cross the
/// 2048-element blocks): broadcasts of both kinds (repeated inner dim,
/// contiguous rows), splat constants, a value read twice, a result that is
/// also read by a later op, exp of -1e9.
TEST_F(ElementwiseFusionTest, NormAndSoftmaxChainsGiveTheSameBits) {
  const char *text = R"mlir(
func.func @main(%x: tensor<3x5x1000xf32>, %mean: tensor<3x5xf32>,
                %gamma: tensor<1000xf32>, %mask: tensor<5x1000xi1>)
    -> (tensor<3x5x1000xf32>, tensor<3x5xf32>, tensor<3x5x1000xf32>) {
  %m = shardc.broadcast_in_dim %mean dims = [0, 1] : (tensor<3x5xf32>) -> tensor<3x5x1000xf32>
  %c = shardc.sub %x, %m : tensor<3x5x1000xf32>
  %sq = shardc.mul %c, %c : tensor<3x5x1000xf32>
  %eps = shardc.constant dense<1.0e-5> : tensor<3x5x1000xf32>
  %v = shardc.add %sq, %eps : tensor<3x5x1000xf32>
  %r = shardc.rsqrt %v : tensor<3x5x1000xf32>
  %n = shardc.mul %c, %r : tensor<3x5x1000xf32>
  %g = shardc.broadcast_in_dim %gamma dims = [2] : (tensor<1000xf32>) -> tensor<3x5x1000xf32>
  %y = shardc.mul %n, %g : tensor<3x5x1000xf32>
  %mb = shardc.broadcast_in_dim %mask dims = [1, 2] : (tensor<5x1000xi1>) -> tensor<3x5x1000xi1>
  %big = shardc.constant dense<-1.0e9> : tensor<3x5x1000xf32>
  %masked = shardc.select %mb, %y, %big : (tensor<3x5x1000xi1>, tensor<3x5x1000xf32>, tensor<3x5x1000xf32>) -> tensor<3x5x1000xf32>
  %e = shardc.exp %masked : tensor<3x5x1000xf32>
  %s = shardc.reduce_sum %e dims = [2] : (tensor<3x5x1000xf32>) -> tensor<3x5xf32>
  %sb = shardc.broadcast_in_dim %s dims = [0, 1] : (tensor<3x5xf32>) -> tensor<3x5x1000xf32>
  %p = shardc.div %e, %sb : tensor<3x5x1000xf32>
  %t = shardc.tanh %p : tensor<3x5x1000xf32>
  return %p, %s, %t : tensor<3x5x1000xf32>, tensor<3x5xf32>, tensor<3x5x1000xf32>
}
)mlir";
  SmallVector<Tensor> args;
  args.push_back(randomIn({3, 5, 1000}, "x", -3, 3));
  args.push_back(randomIn({3, 5}, "mean"));
  args.push_back(randomIn({1000}, "gamma", 0.5f, 1.5f));
  SmallVector<uint8_t> mask(5 * 1000);
  for (int64_t q = 0; q < 5; ++q)
    for (int64_t k = 0; k < 1000; ++k)
      mask[q * 1000 + k] = k <= q * 200;
  args.push_back(llvm::cantFail(
      Tensor::fromValuesAs<uint8_t>({5, 1000}, llvm::ArrayRef(mask))));
  // %c is read twice by one mul and once more, so it is materialized (its
  // sub fuses %m). Fused into exp: %sq, %eps, %v, %r, %n, %g, %y, %mb,
  // %big, %masked; into div: %sb. %e is read by a reduction; %p, returned
  // and read by tanh alone, is stored from tanh's pass.
  EXPECT_EQ(expectSameBits(text, args), 13u);
}

/// The cross-entropy one-hot over integers: iota, a broadcast of i32
/// labels, i32 add (wrapping), compare to i1, convert to f32 and select.
TEST_F(ElementwiseFusionTest, IntegerMaskChainsGiveTheSameBits) {
  const char *text = R"mlir(
func.func @main(%logits: tensor<4x3x700xf32>, %labels: tensor<4x3xi32>,
                %offset: tensor<i32>) -> (tensor<4x3x700xf32>, tensor<4x3xf32>) {
  %ids = shardc.iota dimension = 2 : tensor<4x3x700xi32>
  %ob = shardc.broadcast_in_dim %offset dims = [] : (tensor<i32>) -> tensor<4x3x700xi32>
  %cls = shardc.add %ids, %ob : tensor<4x3x700xi32>
  %lb = shardc.broadcast_in_dim %labels dims = [0, 1] : (tensor<4x3xi32>) -> tensor<4x3x700xi32>
  %hot = shardc.compare %cls, %lb direction = "EQ" : (tensor<4x3x700xi32>, tensor<4x3x700xi32>) -> tensor<4x3x700xi1>
  %zero = shardc.constant dense<0.0> : tensor<4x3x700xf32>
  %picked = shardc.select %hot, %logits, %zero : (tensor<4x3x700xi1>, tensor<4x3x700xf32>, tensor<4x3x700xf32>) -> tensor<4x3x700xf32>
  %sum = shardc.reduce_sum %picked dims = [2] : (tensor<4x3x700xf32>) -> tensor<4x3xf32>
  %f = shardc.convert %hot dtype = f32 : (tensor<4x3x700xi1>) -> tensor<4x3x700xf32>
  %w = shardc.mul %f, %logits : tensor<4x3x700xf32>
  return %w, %sum : tensor<4x3x700xf32>, tensor<4x3xf32>
}
)mlir";
  SmallVector<Tensor> args;
  args.push_back(randomIn({4, 3, 700}, "logits"));
  SmallVector<int32_t> labels;
  for (int32_t i = 0; i < 12; ++i)
    labels.push_back((i * 337 + 11) % 900);
  args.push_back(llvm::cantFail(
      Tensor::fromValuesAs<int32_t>({4, 3}, llvm::ArrayRef(labels))));
  SmallVector<int32_t> offset{-100};
  args.push_back(llvm::cantFail(
      Tensor::fromValuesAs<int32_t>({}, llvm::ArrayRef(offset))));
  // %hot has two users (select, convert), so it is materialized. Fused:
  // %ids, %ob, %cls, %lb (into compare); %zero (into select); %f (into
  // mul).
  EXPECT_EQ(expectSameBits(text, args), 6u);
}

/// An Adam step: the new moments are returned and read by the parameter's
/// update alone, so all three are written by one pass.
TEST_F(ElementwiseFusionTest, AdamStepIsOnePassWithThreeOutputs) {
  const char *text = R"mlir(
func.func @main(%p: tensor<3000xf32>, %g: tensor<3000xf32>,
                %m: tensor<3000xf32>, %v: tensor<3000xf32>)
    -> (tensor<3000xf32>, tensor<3000xf32>, tensor<3000xf32>) {
  %b1 = shardc.constant dense<0.9> : tensor<3000xf32>
  %c1 = shardc.constant dense<0.1> : tensor<3000xf32>
  %b2 = shardc.constant dense<0.999> : tensor<3000xf32>
  %c2 = shardc.constant dense<0.001> : tensor<3000xf32>
  %eps = shardc.constant dense<1.0e-8> : tensor<3000xf32>
  %lr = shardc.constant dense<0.01> : tensor<3000xf32>
  %m0 = shardc.mul %b1, %m : tensor<3000xf32>
  %m1 = shardc.mul %c1, %g : tensor<3000xf32>
  %mn = shardc.add %m0, %m1 : tensor<3000xf32>
  %v0 = shardc.mul %b2, %v : tensor<3000xf32>
  %gg = shardc.mul %g, %g : tensor<3000xf32>
  %v1 = shardc.mul %c2, %gg : tensor<3000xf32>
  %vn = shardc.add %v0, %v1 : tensor<3000xf32>
  %s = shardc.sqrt %vn : tensor<3000xf32>
  %d = shardc.add %s, %eps : tensor<3000xf32>
  %u = shardc.div %mn, %d : tensor<3000xf32>
  %lu = shardc.mul %lr, %u : tensor<3000xf32>
  %pn = shardc.sub %p, %lu : tensor<3000xf32>
  return %pn, %mn, %vn : tensor<3000xf32>, tensor<3000xf32>, tensor<3000xf32>
}
)mlir";
  SmallVector<Tensor> args;
  args.push_back(randomIn({3000}, "p"));
  args.push_back(randomIn({3000}, "g"));
  args.push_back(randomIn({3000}, "m"));
  args.push_back(randomIn({3000}, "v", 0.0f, 1.0f));
  // Every op but the root %pn: the constants, %m0, %m1, %v0, %gg, %v1, %s,
  // %d, %u, %lu fused, %mn and %vn stored.
  EXPECT_EQ(expectSameBits(text, args), 17u);
}

} // namespace

/// Values whose elements are all equal (splat constants, a broadcast
/// scalar and ops on them alone) are computed for the first block only and
/// reused by the next full blocks; the short last block computes them
/// again. On 5 full blocks and a 13-element tail, with a uniform exp below
/// -87.3 (where the vectorized exp is fixed up by the scalar one) and a
/// uniform tanh, the bits are those of the ops run one by one.
TEST_F(ElementwiseFusionTest, UniformValuesAreComputedOncePerPass) {
  const char *text = R"mlir(
func.func @main(%x: tensor<10253xf32>, %s: tensor<f32>) -> tensor<10253xf32> {
  %sb = shardc.broadcast_in_dim %s dims = [] : (tensor<f32>) -> tensor<10253xf32>
  %c = shardc.constant dense<-61.5> : tensor<10253xf32>
  %cs = shardc.mul %c, %sb : tensor<10253xf32>
  %e = shardc.exp %cs : tensor<10253xf32>
  %t = shardc.tanh %sb : tensor<10253xf32>
  %u = shardc.add %e, %t : tensor<10253xf32>
  %y = shardc.mul %x, %u : tensor<10253xf32>
  return %y : tensor<10253xf32>
}
)mlir";
  SmallVector<Tensor> args;
  args.push_back(randomIn({10253}, "x"));
  SmallVector<float> scalar{1.5f};
  args.push_back(
      llvm::cantFail(Tensor::fromValues({}, llvm::ArrayRef(scalar))));
  EXPECT_EQ(expectSameBits(text, args), 6u);

  auto module = parse(text);
  ASSERT_TRUE(module);
  Block &body = getFunc(*module, "main").getBody().front();
  shardc::detail::FusionPlan plan(body);
  const shardc::detail::FusedGroup *group =
      plan.groupRootedAt(body.getTerminator()->getPrevNode());
  ASSERT_TRUE(group);
  size_t uniform = llvm::count_if(
      group->nodes,
      [](const shardc::detail::FusedGroup::Node &n) { return n.uniform; });
  // %c, %cs, %e, %t, %u; not the root %y, which reads %x.
  EXPECT_EQ(uniform, 5u);
  ASSERT_EQ(group->leaves.size(), 2u);
  EXPECT_EQ(llvm::count_if(group->leaves,
                           [](const shardc::detail::FusedGroup::Leaf &l) {
                             return l.uniform;
                           }),
            1);
}

/// Nodes share scratch blocks once their last reader ran, but a uniform
/// node keeps a block of its own: %c, computed in the first block and
/// reused by the next ones, comes after %a's last reader (the pass
/// computes %a, %b, %c, %y in that order), and %a is computed again in
/// every block. On 3 full blocks and a 5-element tail.
TEST_F(ElementwiseFusionTest, UniformValuesKeepTheirBlocksWhenBlocksAreShared) {
  const char *text = R"mlir(
func.func @main(%x: tensor<6149xf32>) -> tensor<6149xf32> {
  %a = shardc.mul %x, %x : tensor<6149xf32>
  %b = shardc.add %a, %x : tensor<6149xf32>
  %c = shardc.constant dense<1.5> : tensor<6149xf32>
  %y = shardc.mul %b, %c : tensor<6149xf32>
  return %y : tensor<6149xf32>
}
)mlir";
  SmallVector<Tensor> args;
  args.push_back(randomIn({6149}, "x"));
  // %a, %b, %c fused into %y's pass.
  EXPECT_EQ(expectSameBits(text, args), 3u);
}

/// Results of 4 MiB or more are computed in a block and copied out with
/// streaming stores: an Adam-like chain with a stored value over 1100003
/// elements (a tail that is no whole vector) keeps the op-by-op bits.
TEST_F(ElementwiseFusionTest, LargeResultsAreStreamedOutWithTheSameBits) {
  const char *text = R"mlir(
func.func @main(%p: tensor<1100003xf32>, %g: tensor<1100003xf32>,
                %m: tensor<1100003xf32>)
    -> (tensor<1100003xf32>, tensor<1100003xf32>) {
  %b1 = shardc.constant dense<0.9> : tensor<1100003xf32>
  %m0 = shardc.mul %b1, %m : tensor<1100003xf32>
  %mn = shardc.add %m0, %g : tensor<1100003xf32>
  %s = shardc.sqrt %mn : tensor<1100003xf32>
  %pn = shardc.sub %p, %s : tensor<1100003xf32>
  return %pn, %mn : tensor<1100003xf32>, tensor<1100003xf32>
}
)mlir";
  SmallVector<Tensor> args;
  args.push_back(randomIn({1100003}, "p"));
  args.push_back(randomIn({1100003}, "g", 0.0f, 1.0f));
  args.push_back(randomIn({1100003}, "m", 0.0f, 1.0f));
  // %b1, %m0, %s fused; %mn stored.
  EXPECT_EQ(expectSameBits(text, args), 4u);
}
