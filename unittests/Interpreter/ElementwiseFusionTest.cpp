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

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <cstring>
#include <limits>
#include <string>

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

  /// Whether the group rooted at @main's last op runs as a chain loop
  /// (FusedChains.h).
  bool runsAsChainLoop(llvm::StringRef text) {
    auto module = parse(text);
    if (!module)
      return false;
    Block &body = getFunc(*module, "main").getBody().front();
    shardc::detail::FusionPlan plan(body);
    const shardc::detail::FusedGroup *group =
        plan.groupRootedAt(body.getTerminator()->getPrevNode());
    return group && group->chain != nullptr;
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

/// The Adam update as lib/Transforms/TrainingStep.cpp builds it, on `n`
/// elements; `variant` changes it so no chain loop is written for it:
/// "swapped" subtracts the parameter from the step, "unstored" returns
/// the new moment m' no more (so it is fused, not stored).
std::string adamUpdateText(int64_t n, llvm::StringRef variant = "") {
  std::string text = R"mlir(
func.func @main(%p: tensor<Nxf32>, %g: tensor<Nxf32>, %m: tensor<Nxf32>,
                %v: tensor<Nxf32>, %step_size: tensor<f32>,
                %root_correction: tensor<f32>)
    -> (tensor<Nxf32>, tensor<Nxf32>, tensor<Nxf32>) {
  %b1 = shardc.constant dense<0.9> : tensor<Nxf32>
  %c1 = shardc.constant dense<0.1> : tensor<Nxf32>
  %b2 = shardc.constant dense<0.999> : tensor<Nxf32>
  %c2 = shardc.constant dense<0.001> : tensor<Nxf32>
  %eps = shardc.constant dense<1.0e-8> : tensor<Nxf32>
  %m0 = shardc.mul %b1, %m : tensor<Nxf32>
  %m1 = shardc.mul %c1, %g : tensor<Nxf32>
  %mn = shardc.add %m0, %m1 : tensor<Nxf32>
  %v0 = shardc.mul %b2, %v : tensor<Nxf32>
  %gg = shardc.mul %g, %g : tensor<Nxf32>
  %v1 = shardc.mul %c2, %gg : tensor<Nxf32>
  %vn = shardc.add %v0, %v1 : tensor<Nxf32>
  %s = shardc.sqrt %vn : tensor<Nxf32>
  %rc = shardc.broadcast_in_dim %root_correction dims = [] : (tensor<f32>) -> tensor<Nxf32>
  %sc = shardc.div %s, %rc : tensor<Nxf32>
  %d = shardc.add %sc, %eps : tensor<Nxf32>
  %u = shardc.div %mn, %d : tensor<Nxf32>
  %lr = shardc.broadcast_in_dim %step_size dims = [] : (tensor<f32>) -> tensor<Nxf32>
  %lu = shardc.mul %lr, %u : tensor<Nxf32>
  %pn = shardc.sub %p, %lu : tensor<Nxf32>
  return %pn, %mn, %vn : tensor<Nxf32>, tensor<Nxf32>, tensor<Nxf32>
}
)mlir";
  auto replace = [&](llvm::StringRef from, llvm::StringRef to) {
    size_t at = text.find(from.str());
    ASSERT_NE(at, std::string::npos) << from.str();
    text.replace(at, from.size(), to.str());
  };
  if (variant == "swapped")
    replace("shardc.sub %p, %lu", "shardc.sub %lu, %p");
  if (variant == "unstored")
    replace("return %pn, %mn, %vn", "return %pn, %vn, %vn");
  for (size_t at; (at = text.find("Nx")) != std::string::npos;)
    text.replace(at, 2, std::to_string(n) + "x");
  return text;
}

/// The Adam update's arguments on `n` elements, with values that take
/// every rule of IEEE arithmetic into the chain: a negative second moment
/// (sqrt gives NaN), an infinite gradient (inf / inf), zeros of both
/// signs, subnormal moments, a NaN parameter (only one NaN meets each op,
/// since which of two NaNs an op returns is the compiler's choice of
/// operand order, op by op as fused).
SmallVector<Tensor> adamUpdateArgs(int64_t n) {
  SmallVector<Tensor> args;
  args.push_back(randomIn({n}, "p"));
  args.push_back(randomIn({n}, "g"));
  args.push_back(randomIn({n}, "m"));
  args.push_back(randomIn({n}, "v", 0.0f, 1.0f));
  llvm::MutableArrayRef<float> p = args[0].values(), g = args[1].values(),
                               m = args[2].values(), v = args[3].values();
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i + 16 <= n; i += 997) {
    v[i] = -0.25f;
    g[i + 1] = inf;
    g[i + 2] = -inf;
    m[i + 2] = inf;
    m[i + 3] = 0.0f;
    g[i + 3] = -0.0f;
    v[i + 3] = 0.0f;
    m[i + 4] = 1e-40f;
    g[i + 4] = 0.0f;
    v[i + 5] = 1e-42f;
    p[i + 6] = std::numeric_limits<float>::quiet_NaN();
    g[i + 7] = 3e38f;
  }
  SmallVector<float> stepSize{0.0123f}, rootCorrection{0.0316f};
  args.push_back(
      llvm::cantFail(Tensor::fromValues({}, llvm::ArrayRef(stepSize))));
  args.push_back(
      llvm::cantFail(Tensor::fromValues({}, llvm::ArrayRef(rootCorrection))));
  return args;
}

/// The Adam update is one loop with every intermediate in registers
/// (FusedChains.h), a vector of 8 at a time and the rest one by one, with
/// ordinary stores (3001 elements: a 1-element tail) and streamed ones
/// (1100003 elements, 4.4 MB results: a 3-element tail). The bits are the
/// ops' own, run one by one.
TEST_F(ElementwiseFusionTest, AdamUpdateRunsAsOneLoopWithTheSameBits) {
  for (int64_t n : {3001, 1100003}) {
    SCOPED_TRACE(n);
    std::string text = adamUpdateText(n);
    // Every op but the root: 5 constants, 2 broadcasts, 10 computed ops
    // fused, %mn and %vn stored.
    EXPECT_EQ(expectSameBits(text, adamUpdateArgs(n)), 19u);
    EXPECT_TRUE(runsAsChainLoop(text));
  }
}

/// A group that differs from a chain in an operand's order or in which
/// values it writes out runs node by node, with the same bits.
TEST_F(ElementwiseFusionTest, ChainLoopsTakeOnlyTheirExactChain) {
  for (llvm::StringRef variant : {"swapped", "unstored"}) {
    SCOPED_TRACE(variant.str());
    std::string text = adamUpdateText(3001, variant);
    expectSameBits(text, adamUpdateArgs(3001));
    EXPECT_FALSE(runsAsChainLoop(text));
  }
}

/// Gelu's gradient as its ODS rule builds it (the other chain loop), on
/// 3003 elements (a 3-element tail), with an infinite and a NaN cotangent.
TEST_F(ElementwiseFusionTest, GeluGradientRunsAsOneLoopWithTheSameBits) {
  const char *text = R"mlir(
func.func @main(%g: tensor<3003xf32>, %t: tensor<3003xf32>,
                %x: tensor<3003xf32>, %x2: tensor<3003xf32>)
    -> tensor<3003xf32> {
  %half = shardc.constant dense<0.5> : tensor<3003xf32>
  %one = shardc.constant dense<1.0> : tensor<3003xf32>
  %onet = shardc.add %one, %t : tensor<3003xf32>
  %left = shardc.mul %half, %onet : tensor<3003xf32>
  %hx = shardc.mul %half, %x : tensor<3003xf32>
  %tt = shardc.mul %t, %t : tensor<3003xf32>
  %sech2 = shardc.sub %one, %tt : tensor<3003xf32>
  %c = shardc.constant dense<0.797884583> : tensor<3003xf32>
  %ac3 = shardc.constant dense<0.107032225> : tensor<3003xf32>
  %ax2 = shardc.mul %ac3, %x2 : tensor<3003xf32>
  %poly = shardc.add %c, %ax2 : tensor<3003xf32>
  %sp = shardc.mul %sech2, %poly : tensor<3003xf32>
  %right = shardc.mul %hx, %sp : tensor<3003xf32>
  %sum = shardc.add %left, %right : tensor<3003xf32>
  %dx = shardc.mul %g, %sum : tensor<3003xf32>
  return %dx : tensor<3003xf32>
}
)mlir";
  SmallVector<Tensor> args;
  args.push_back(randomIn({3003}, "g"));
  args.push_back(randomIn({3003}, "t"));
  args.push_back(randomIn({3003}, "x", -3.0f, 3.0f));
  args.push_back(randomIn({3003}, "x2", 0.0f, 9.0f));
  args[0].values()[17] = std::numeric_limits<float>::infinity();
  args[0].values()[3001] = std::numeric_limits<float>::quiet_NaN();
  // Every op but the root.
  EXPECT_EQ(expectSameBits(text, args), 14u);
  EXPECT_TRUE(runsAsChainLoop(text));
}

/// The chain loops are written for the ops the compiler builds: the Adam
/// update of lib/Transforms/TrainingStep.cpp and gelu's gradient rule. A
/// step built by the pass runs every parameter's update and the gradient
/// of gelu as chain loops (were the two to drift apart, the groups would
/// run node by node, twice as slow, with no test failing otherwise).
TEST_F(ElementwiseFusionTest,
       TheTrainingStepsAdamAndGeluGroupsRunAsChainLoops) {
  auto module = parse(R"mlir(
func.func @main(%x: tensor<16x8xf32> {shardc.name = "x"},
                %w: tensor<8x4xf32> {shardc.name = "w", shardc.param},
                %b: tensor<4xf32> {shardc.name = "b", shardc.param},
                %w2: tensor<4x2xf32> {shardc.name = "w2", shardc.param})
    -> tensor<f32> {
  %y = shardc.matmul %x, %w : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %bb = shardc.broadcast_in_dim %b dims = [1] : (tensor<4xf32>) -> tensor<16x4xf32>
  %z = shardc.add %y, %bb : tensor<16x4xf32>
  %a = shardc.gelu %z : tensor<16x4xf32>
  %o = shardc.matmul %a, %w2 : (tensor<16x4xf32>, tensor<4x2xf32>) -> tensor<16x2xf32>
  %l = shardc.reduce_sum %o dims = [0, 1] : (tensor<16x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir");
  ASSERT_TRUE(module);
  PassManager pm(&context);
  ShardcTrainingStepOptions options;
  options.optimizer = "adam";
  pm.addPass(createShardcTrainingStep(options));
  ASSERT_TRUE(succeeded(pm.run(*module))) << diagnostics;
  Block &body = getEntryFunction(*module).getBody().front();
  shardc::detail::FusionPlan plan(body);
  int chainLoops = 0;
  for (Operation &op : body)
    if (const shardc::detail::FusedGroup *group = plan.groupRootedAt(&op))
      chainLoops += group->chain != nullptr;
  // The updates of w, b and w2, and gelu's gradient.
  EXPECT_EQ(chainLoops, 4);
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
