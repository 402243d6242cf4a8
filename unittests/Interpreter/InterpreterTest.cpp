//===- InterpreterTest.cpp - running whole functions ----------------------===//

#include "TestHelpers.h"

#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {

class InterpreterTest : public InterpreterTestBase {
protected:
  FailureOr<SmallVector<Tensor>> run(ModuleOp module, ArrayRef<Tensor> args,
                                     const InterpreterOptions &options = {}) {
    return interpretFunction(getFunc(module, "main"), args, options);
  }
};

/// Plays every device of a group at once by pretending they all hold this
/// device's operand, and records the groups it was asked about.
class FakeCommunicator : public Communicator {
public:
  explicit FakeCommunicator(int64_t id) : id(id) {}
  int64_t deviceId() const override { return id; }
  int64_t numDevices() const override { return 8; }
  LogicalResult barrier() override { return success(); }
  LogicalResult send(int64_t, const Tensor &) override { return failure(); }
  FailureOr<Tensor> receive(int64_t) override { return failure(); }

  FailureOr<Tensor> allGather(const Tensor &local, ArrayRef<int64_t> group,
                              int64_t dim) override {
    record("all_gather", group);
    SmallVector<const Tensor *> parts(group.size(), &local);
    return llvm::cantFail(tryConcatenate(parts, dim));
  }
  FailureOr<Tensor> allReduce(const Tensor &local, ArrayRef<int64_t> group,
                              Reduction kind) override {
    record("all_reduce", group);
    Tensor out = local.clone();
    if (kind == Reduction::Sum)
      for (float &v : out.values())
        v *= group.size();
    return out;
  }
  FailureOr<Tensor> reduceScatter(const Tensor &local, ArrayRef<int64_t> group,
                                  int64_t dim, Reduction kind) override {
    record("reduce_scatter", group);
    Tensor reduced = *allReduce(local, group, kind);
    groups.pop_back();
    return llvm::cantFail(trySliceBlock(reduced, dim, group.size(),
                                        llvm::find(group, id) - group.begin()));
  }
  FailureOr<Tensor> allToAll(const Tensor &local, ArrayRef<int64_t> group,
                             int64_t splitDim, int64_t concatDim) override {
    record("all_to_all", group);
    int64_t me = llvm::find(group, id) - group.begin();
    Tensor block =
        llvm::cantFail(trySliceBlock(local, splitDim, group.size(), me));
    SmallVector<const Tensor *> parts(group.size(), &block);
    return llvm::cantFail(tryConcatenate(parts, concatDim));
  }
  FailureOr<Tensor>
  collectivePermute(const Tensor &local, ArrayRef<int64_t> group,
                    ArrayRef<std::pair<int64_t, int64_t>> pairs) override {
    record("collective_permute", group);
    if (wrongShape)
      return llvm::cantFail(Tensor::allocate({1}));
    return local.clone();
  }

  int64_t id;
  bool wrongShape = false;
  SmallVector<std::pair<std::string, SmallVector<int64_t>>> groups;

private:
  void record(const char *what, ArrayRef<int64_t> group) {
    groups.push_back({what, SmallVector<int64_t>(group)});
  }
};

constexpr const char *kMlp = R"(
  func.func @main(%x: tensor<8x16xf32> {shardc.name = "x"},
                  %w0: tensor<16x32xf32> {shardc.name = "w0"},
                  %w1: tensor<32x4xf32> {shardc.name = "w1"}) -> tensor<8x4xf32> {
    %h = shardc.matmul %x, %w0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32> loc("h")
    %r = shardc.relu %h : tensor<8x32xf32>
    %y = shardc.matmul %r, %w1 : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  })";

TEST_F(InterpreterTest, TwoLayerMlpMatchesANaiveComputation) {
  OwningOpRef<ModuleOp> m = parse(kMlp);
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({8, 16}, 0, "x"));
  args.push_back(randomTensor({16, 32}, 0, "w0"));
  args.push_back(randomTensor({32, 4}, 0, "w1"));
  FailureOr<SmallVector<Tensor>> out = run(*m, args);
  ASSERT_TRUE(succeeded(out)) << diagnostics;
  ASSERT_EQ(out->size(), 1u);

  Tensor expected = llvm::cantFail(Tensor::allocate({8, 4}));
  for (int64_t i = 0; i < 8; ++i) {
    double hidden[32];
    for (int64_t j = 0; j < 32; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 16; ++k)
        acc += double(args[0].at({i, k})) * args[1].at({k, j});
      hidden[j] = acc > 0 ? acc : 0;
    }
    for (int64_t j = 0; j < 4; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 32; ++k)
        acc += hidden[k] * args[2].at({k, j});
      expected.at({i, j}) = static_cast<float>(acc);
    }
  }
  expectClose((*out)[0], expected, 1e-4f, 1e-5f);
}

TEST_F(InterpreterTest, InputsAreCheckedAgainstTheSignature) {
  OwningOpRef<ModuleOp> m = parse(kMlp);
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({8, 15}, 0, "x"));
  args.push_back(randomTensor({16, 32}, 0, "w0"));
  args.push_back(randomTensor({32, 4}, 0, "w1"));
  EXPECT_TRUE(failed(run(*m, args)));
  EXPECT_NE(diagnostics.find("input \"x\" of @main expects "
                             "'tensor<8x16xf32>' but was given "
                             "tensor<8x15xf32>"),
            std::string::npos)
      << diagnostics;
  diagnostics.clear();
  args.pop_back();
  EXPECT_TRUE(failed(run(*m, args)));
  EXPECT_NE(diagnostics.find("takes 3 inputs but 2 were given"),
            std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, ValuesOverTheBudgetAreRefusedBeforeRunning) {
  OwningOpRef<ModuleOp> m = parse(kMlp);
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({8, 16}, 0, "x"));
  args.push_back(randomTensor({16, 32}, 0, "w0"));
  args.push_back(randomTensor({32, 4}, 0, "w1"));
  InterpreterOptions options;
  options.maxTensorBytes = 512; // %h needs 8*32*4 = 1024 bytes
  EXPECT_TRUE(failed(run(*m, args, options)));
  EXPECT_NE(diagnostics.find("value \"h\": tensor of shape [8, 32] needs "
                             "1024 bytes, more than the limit of 512 bytes"),
            std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, AFunctionChangedInPlaceIsCheckedAndPlannedAgain) {
  // The checks and plans of a function are kept across calls
  // (lib/Interpreter/FunctionPlan.h); an edit of the same function must
  // not run the old plan, nor skip the checks of the new IR.
  OwningOpRef<ModuleOp> m = parse(R"(
    func.func @main(%x: tensor<4xf32>, %w: tensor<2xf32>) -> tensor<4xf32> {
      %y = shardc.add %x, %x : tensor<4xf32>
      %z = shardc.mul %y, %y : tensor<4xf32>
      return %z : tensor<4xf32>
    })");
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(llvm::cantFail(Tensor::fromValues({4}, {1, 2, 3, 4})));
  args.push_back(llvm::cantFail(Tensor::fromValues({2}, {5, 6})));
  for (int call = 0; call < 2; ++call) {
    FailureOr<SmallVector<Tensor>> out = run(*m, args);
    ASSERT_TRUE(succeeded(out)) << diagnostics;
    EXPECT_EQ((*out)[0].at({3}), 64.0f); // (4 + 4)^2
  }
  func::FuncOp func = getFunc(*m, "main");
  Block &body = func.getBody().front();
  Operation &mul = *std::next(body.begin());
  mul.setOperand(1, body.getArgument(0)); // %z = %y * %x
  FailureOr<SmallVector<Tensor>> changed = run(*m, args);
  ASSERT_TRUE(succeeded(changed)) << diagnostics;
  EXPECT_EQ((*changed)[0].at({3}), 32.0f); // (4 + 4) * 4
  // A budget the kept plan was not checked against is checked.
  InterpreterOptions small;
  small.maxTensorBytes = 8;
  EXPECT_TRUE(failed(run(*m, args, small)));
  EXPECT_NE(diagnostics.find("more than the limit of 8 bytes"),
            std::string::npos)
      << diagnostics;
  diagnostics.clear();
  // An edit the verifier rejects fails, however often the function ran.
  mul.setOperand(1, body.getArgument(1)); // tensor<2xf32>
  EXPECT_TRUE(failed(run(*m, args)));
  EXPECT_FALSE(diagnostics.empty());
}

TEST_F(InterpreterTest, TracesNonFiniteValuesToWhereTheyFirstAppear) {
  // %l is NaN where %x < 0 and %big overflows to +inf where %y > 1: each
  // result names the first value, in program order, whose NaN or inf it
  // carries, and a finite result names none.
  OwningOpRef<ModuleOp> m = parse(R"(
    func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>)
        -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %l = shardc.log %x : tensor<4xf32> loc("l")
      %e = shardc.exp %y : tensor<4xf32> loc("e")
      %big = shardc.mul %e, %e : tensor<4xf32> loc("big")
      %both = shardc.add %big, %l : tensor<4xf32> loc("both")
      %fromZ = shardc.add %z, %x : tensor<4xf32> loc("fromZ")
      %fine = shardc.add %y, %y : tensor<4xf32> loc("fine")
      return %both, %big, %fromZ, %fine
          : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    })");
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(llvm::cantFail(Tensor::fromValues({4}, {1, -1, 2, 3})));
  args.push_back(llvm::cantFail(Tensor::fromValues({4}, {0, 0, 50, 0})));
  args.push_back(llvm::cantFail(Tensor::fromValues(
      {4}, {0, std::numeric_limits<float>::quiet_NaN(), 0, 0})));
  SmallVector<Value> sources;
  InterpreterOptions options;
  options.nonFiniteSources = &sources;
  FailureOr<SmallVector<Tensor>> out = run(*m, args, options);
  ASSERT_TRUE(succeeded(out)) << diagnostics;
  ASSERT_EQ(sources.size(), 4u);
  auto nameOf = [](Value v) -> std::string {
    if (!v)
      return "(finite)";
    if (auto arg = dyn_cast<BlockArgument>(v))
      return "arg" + std::to_string(arg.getArgNumber());
    return getNameFromLoc(v.getLoc()).str();
  };
  // %both holds %l's NaN and %big's inf; %l comes first.
  EXPECT_EQ(nameOf(sources[0]), "l");
  EXPECT_EQ(nameOf(sources[1]), "big");
  // An input holding NaN comes before every op.
  EXPECT_EQ(nameOf(sources[2]), "arg2");
  EXPECT_EQ(nameOf(sources[3]), "(finite)");

  // Without the option nothing is traced, and the results are the same.
  FailureOr<SmallVector<Tensor>> again = run(*m, args);
  ASSERT_TRUE(succeeded(again));
  EXPECT_EQ(maxAbsDifference((*out)[0], (*again)[0]), 0.0f);
}

TEST_F(InterpreterTest, OverflowingTypesAreRefused) {
  // The verifier rejects such types; the interpreter must not rely on it.
  OwningOpRef<ModuleOp> m = parseUnverified(R"(
    func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
      %b = shardc.broadcast_in_dim %x dims = [1] : (tensor<4xf32>) -> tensor<4611686018427387904x4xf32> loc("big")
      %s = shardc.reduce_sum %b dims = [0, 1] : (tensor<4611686018427387904x4xf32>) -> tensor<f32>
      return %s : tensor<f32>
    })");
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({4}, 0, "x"));
  EXPECT_TRUE(failed(run(*m, args)));
  EXPECT_NE(diagnostics.find("value \"big\": tensor of shape "
                             "[4611686018427387904, 4] is too large"),
            std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, UnverifiedIrIsReportedNotExecuted) {
  OwningOpRef<ModuleOp> m = parseUnverified(R"(
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %r = "shardc.relu"() : () -> tensor<4xf32>
      %s = "shardc.add"(%x, %r) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %s : tensor<4xf32>
    })");
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({4}, 0, "x"));
  EXPECT_TRUE(failed(run(*m, args)));
  EXPECT_NE(
      diagnostics.find("error: 'shardc.relu' op requires a single operand"),
      std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, ReturnsInputsAndRepeatedValues) {
  OwningOpRef<ModuleOp> m = parse(R"(
    func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<6xf32>) {
      %e = shardc.exp %x : tensor<2x3xf32>
      %t = shardc.reshape %e : (tensor<2x3xf32>) -> tensor<3x2xf32>
      %n = shardc.neg %x : tensor<2x3xf32>
      %f = shardc.reshape %n : (tensor<2x3xf32>) -> tensor<6xf32>
      %unused = shardc.sqrt %x : tensor<2x3xf32>
      return %x, %t, %t, %f : tensor<2x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<6xf32>
    })");
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({2, 3}, 0, "x"));
  FailureOr<SmallVector<Tensor>> out = run(*m, args);
  ASSERT_TRUE(succeeded(out)) << diagnostics;
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[0].values(), args[0].values());
  EXPECT_NE((*out)[0].data(), args[0].data()); // a copy, not an alias
  EXPECT_EQ((*out)[1].shape(), ArrayRef<int64_t>({3, 2}));
  EXPECT_EQ((*out)[1].values(), (*out)[2].values());
  EXPECT_NE((*out)[1].data(), (*out)[2].data());
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ((*out)[1].data()[i], std::exp(args[0].data()[i]));
    EXPECT_EQ((*out)[3].data()[i], -args[0].data()[i]);
  }
}

TEST_F(InterpreterTest, UnsupportedOpsAreRefused) {
  OwningOpRef<ModuleOp> m = parse(R"(
    func.func private @g(tensor<4xf32>) -> tensor<4xf32>
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %y : tensor<4xf32>
    })");
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({4}, 0, "x"));
  EXPECT_TRUE(failed(run(*m, args)));
  EXPECT_NE(diagnostics.find("'func.call' cannot be executed"),
            std::string::npos)
      << diagnostics;
  diagnostics.clear();
  EXPECT_TRUE(failed(interpretFunction(getFunc(*m, "g"), args)));
  EXPECT_NE(diagnostics.find("has no body"), std::string::npos) << diagnostics;
}

constexpr const char *kCollectives = R"(
  shardc.mesh @mesh ["y"=2, "x"=2]
  func.func @main(%v: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<1x8xf32>, tensor<4x8xf32>) attributes {shardc.spmd} {
    %s = shardc.all_slice %v on @mesh axes = ["y"] dim = 0 : tensor<4x8xf32> -> tensor<2x8xf32>
    %s2 = shardc.all_slice %v on @mesh axes = ["y", "x"] dim = 0 : tensor<4x8xf32> -> tensor<1x8xf32>
    %g = shardc.all_gather %s on @mesh axes = ["x"] dim = 0 : tensor<2x8xf32> -> tensor<4x8xf32>
    %a = shardc.all_reduce %g on @mesh axes = ["y", "x"] : tensor<4x8xf32>
    %r = shardc.reduce_scatter %a on @mesh axes = ["y"] dim = 1 : tensor<4x8xf32> -> tensor<4x4xf32>
    %t = shardc.all_to_all %r on @mesh axes = ["x"] split_dim = 0 concat_dim = 1 : tensor<4x4xf32> -> tensor<2x8xf32>
    %p = shardc.collective_permute %t on @mesh axes = ["x"] pairs = [[0, 1], [1, 0]] : tensor<2x8xf32>
    %out = shardc.all_gather %p on @mesh axes = ["y"] dim = 0 : tensor<2x8xf32> -> tensor<4x8xf32>
    return %s, %s2, %out : tensor<2x8xf32>, tensor<1x8xf32>, tensor<4x8xf32>
  })";

TEST_F(InterpreterTest, AllSliceKeepsThisDevicesBlock) {
  OwningOpRef<ModuleOp> m = parse(kCollectives);
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({4, 8}, 0, "v"));
  for (int64_t device = 0; device < 4; ++device) {
    FakeCommunicator comm(device);
    InterpreterOptions options;
    options.communicator = &comm;
    FailureOr<SmallVector<Tensor>> out = run(*m, args, options);
    ASSERT_TRUE(succeeded(out)) << diagnostics;
    // Device (y, x) = (device / 2, device % 2): over "y" it keeps rows
    // 2y..2y+1; over ["y", "x"] it keeps row `device`.
    int64_t y = device / 2;
    for (int64_t c = 0; c < 8; ++c) {
      EXPECT_EQ((*out)[0].at({0, c}), args[0].at({2 * y, c}));
      EXPECT_EQ((*out)[0].at({1, c}), args[0].at({2 * y + 1, c}));
      EXPECT_EQ((*out)[1].at({0, c}), args[0].at({device, c}));
    }
  }
}

TEST_F(InterpreterTest, CollectivesReceiveTheirGroups) {
  OwningOpRef<ModuleOp> m = parse(kCollectives);
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({4, 8}, 0, "v"));
  FakeCommunicator comm(1); // (y, x) = (0, 1)
  InterpreterOptions options;
  options.communicator = &comm;
  FailureOr<SmallVector<Tensor>> out = run(*m, args, options);
  ASSERT_TRUE(succeeded(out)) << diagnostics;
  using Group = std::pair<std::string, SmallVector<int64_t>>;
  SmallVector<Group> expected = {
      {"all_gather", {0, 1}},         {"all_reduce", {0, 1, 2, 3}},
      {"reduce_scatter", {1, 3}},     {"all_to_all", {0, 1}},
      {"collective_permute", {0, 1}}, {"all_gather", {1, 3}}};
  EXPECT_EQ(comm.groups, expected);
  EXPECT_EQ((*out)[2].shape(), ArrayRef<int64_t>({4, 8}));
}

/// A gradient is final where the backward pass computes it; the program
/// reduces it later, next to the optimizer's update. The reduction starts
/// where its operand is computed (here before the all_gather between them),
/// unless something else still reads the operand.
TEST_F(InterpreterTest, ReductionsStartWhereTheirOperandIsComputed) {
  SmallVector<Tensor> args;
  args.push_back(randomTensor({4, 8}, 0, "v"));
  using Group = std::pair<std::string, SmallVector<int64_t>>;
  for (bool operandReadLater : {false, true}) {
    std::string text = R"(
      shardc.mesh @mesh ["x"=2]
      func.func @main(%v: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>) {
        %g = shardc.mul %v, %v : tensor<4x8xf32>
        %a = shardc.all_gather %v on @mesh axes = ["x"] dim = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
        %r = shardc.all_reduce %g on @mesh axes = ["x"] : tensor<4x8xf32>
        %s = shardc.add OPERAND, %v : tensor<4x8xf32>
        return %r, %a, %s : tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>
      })";
    text.replace(text.find("OPERAND"), 7, operandReadLater ? "%g" : "%v");
    OwningOpRef<ModuleOp> m = parse(text);
    ASSERT_TRUE(m);
    FakeCommunicator comm(0);
    InterpreterOptions options;
    options.communicator = &comm;
    FailureOr<SmallVector<Tensor>> out = run(*m, args, options);
    ASSERT_TRUE(succeeded(out)) << diagnostics;
    SmallVector<Group> expected = {{"all_reduce", {0, 1}},
                                   {"all_gather", {0, 1}}};
    if (operandReadLater)
      std::swap(expected[0], expected[1]);
    EXPECT_EQ(comm.groups, expected)
        << "operand read later: " << operandReadLater;
    for (int64_t i = 0; i < 32; ++i)
      EXPECT_EQ((*out)[0].values()[i],
                2 * args[0].values()[i] * args[0].values()[i]);
  }
}

TEST_F(InterpreterTest, CollectivesNeedACommunicator) {
  OwningOpRef<ModuleOp> m = parse(kCollectives);
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({4, 8}, 0, "v"));
  EXPECT_TRUE(failed(run(*m, args)));
  EXPECT_NE(diagnostics.find("collective 'shardc.all_slice' needs a device "
                             "mesh; run it with `shardc simulate`"),
            std::string::npos)
      << diagnostics;
  diagnostics.clear();
  OwningOpRef<ModuleOp> g = parse(R"(
    shardc.mesh @mesh ["x"=2]
    func.func @main(%v: tensor<4x8xf32>) -> tensor<8x8xf32> {
      %g = shardc.all_gather %v on @mesh axes = ["x"] dim = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
      return %g : tensor<8x8xf32>
    })");
  ASSERT_TRUE(g);
  EXPECT_TRUE(failed(run(*g, args)));
  EXPECT_NE(diagnostics.find("collective 'shardc.all_gather' needs a device "
                             "mesh; run it with `shardc simulate`"),
            std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, CommunicatorAnswersAreChecked) {
  OwningOpRef<ModuleOp> m = parse(kCollectives);
  ASSERT_TRUE(m);
  SmallVector<Tensor> args;
  args.push_back(randomTensor({4, 8}, 0, "v"));
  FakeCommunicator comm(2);
  comm.wrongShape = true;
  InterpreterOptions options;
  options.communicator = &comm;
  EXPECT_TRUE(failed(run(*m, args, options)));
  EXPECT_NE(diagnostics.find("'shardc.collective_permute' produced "
                             "tensor<1xf32> on device 2 but its result type "
                             "is 'tensor<2x8xf32>'"),
            std::string::npos)
      << diagnostics;
  diagnostics.clear();
  FakeCommunicator outside(7);
  options.communicator = &outside;
  EXPECT_TRUE(failed(run(*m, args, options)));
  EXPECT_NE(diagnostics.find("device id 7 is outside mesh @mesh of 4 devices"),
            std::string::npos)
      << diagnostics;
}

TEST(MeshTopologyFromOpTest, MatchesTheMeshOp) {
  MLIRContext context;
  context.loadDialect<ShardcDialect, func::FuncDialect>();
  shardc::registerKernelModels(context);
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(
      "shardc.mesh @mesh [\"y\"=4, \"x\"=2]", &context);
  ASSERT_TRUE(m);
  MeshOp mesh = *m->getOps<MeshOp>().begin();
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  ASSERT_TRUE(succeeded(topology));
  EXPECT_EQ(topology->numDevices(), mesh.getNumDevices());
  EXPECT_EQ(topology->axisNames()[1], "x");
  EXPECT_EQ(topology->groupOf(5, {"y"}), (SmallVector<int64_t>{1, 3, 5, 7}));
}

} // namespace
