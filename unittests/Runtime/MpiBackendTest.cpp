//===- MpiBackendTest.cpp - the mpi backend under mpirun ------------------===//
//
// Runs as one process per rank (ctest launches it through
// scripts/mpirun-local.sh with 4 and 8 ranks). Every rank computes the
// expected value of each collective locally, from every rank's input (which
// it can regenerate: inputs are seeded by the device id), so each check is
// against an independent computation, not against what MPI returned
// elsewhere. With --fail-rank=R it instead runs an example in which rank R
// gets a malformed argument, for the test that the job then ends (exit 1,
// the rank named) instead of hanging.
//
//===----------------------------------------------------------------------===//

#include "UnevenCollectives.h"

#include "shardc/Runtime/MpiBackend.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Import/JsonImporter.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Runtime/TensorBlocks.h"
#include "shardc/Support/HalfFloat.h"
#include "shardc/Support/NumericCheck.h"
#include "shardc/Support/RandomTensor.h"
#include "shardc/Transforms/Passes.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <sys/resource.h>
#include <cstring>
#include <map>
#include <type_traits>

using namespace mlir;
using namespace shardc;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

namespace {

MpiEnvironment *environment;

int rank() { return environment->rank(); }
int worldSize() { return environment->size(); }

/// The mesh the sub-group tests use: 2x2 on 4 ranks, 2x4 on 8, 1xN else.
MeshTopology testMesh() {
  int n = worldSize();
  int64_t a = n % 2 == 0 ? 2 : 1;
  return llvm::cantFail(MeshTopology::create({"a", "b"}, {a, n / a}));
}

/// Device `device`'s input for a test: distinct, reproducible values with
/// many significant bits, so that a different summation order shows.
Tensor inputOf(int64_t device, ArrayRef<int64_t> shape, StringRef name = "in") {
  return randomTensor(shape, /*seed=*/1000 + device, name);
}

bool bitwiseEqual(const Tensor &a, const Tensor &b) {
  // An empty tensor has no storage (data() is null), and memcmp with a null
  // pointer is undefined even for zero bytes.
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         (a.byteSize() == 0 ||
          std::memcmp(a.data(), b.data(), a.byteSize()) == 0);
}

/// Every group the tests try: the world, and the group of this rank over
/// every axis subset of the test mesh, in mesh order and reversed.
std::vector<SmallVector<int64_t>> testGroups() {
  MeshTopology mesh = testMesh();
  std::vector<SmallVector<int64_t>> groups;
  SmallVector<SmallVector<StringRef, 2>> axisLists = {
      {"a"}, {"b"}, {"a", "b"}, {"b", "a"}};
  for (const auto &axes : axisLists)
    groups.push_back(mesh.groupOf(rank(), axes));
  return groups;
}

std::string describeGroup(ArrayRef<int64_t> group) {
  std::string s = "group [";
  for (int64_t d : group)
    s += std::to_string(d) + " ";
  return s + "] on rank " + std::to_string(rank());
}

/// A context whose diagnostics are collected, for the error tests.
class MpiTest : public ::testing::Test {
protected:
  MpiTest() {
    context.loadDialect<ShardcDialect, func::FuncDialect>();
    shardc::registerKernelModels(context);
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }
  /// A communicator over the world; `prepared` precomputes the test mesh's
  /// groups (MPI_Comm_split), otherwise groups are created on first use
  /// (MPI_Comm_create_group). Collective.
  std::unique_ptr<MpiCommunicator>
  makeCommunicator(bool prepared, MpiCommunicatorOptions options = {}) {
    auto comm = MpiCommunicator::create(&context, options);
    if (failed(comm))
      return nullptr;
    if (prepared && failed((*comm)->prepareGroups(testMesh())))
      return nullptr;
    return std::move(*comm);
  }

  MLIRContext context;
  std::string diagnostics;
};

TEST_F(MpiTest, IdentityIsTheWorldRank) {
  auto comm = makeCommunicator(false);
  ASSERT_TRUE(comm);
  EXPECT_EQ(comm->deviceId(), rank());
  EXPECT_EQ(comm->numDevices(), worldSize());
  EXPECT_TRUE(succeeded(comm->barrier()));
}

/// The collectives on every test group, both ways of creating groups.
class MpiCollectiveTest : public MpiTest,
                          public ::testing::WithParamInterface<bool> {};

TEST_P(MpiCollectiveTest, AllGatherConcatenatesInGroupOrder) {
  auto comm = makeCommunicator(GetParam());
  ASSERT_TRUE(comm);
  SmallVector<int64_t> shape = {2, 3, 4};
  for (const auto &group : testGroups()) {
    for (int64_t dim = 0; dim < 3; ++dim) {
      std::vector<Tensor> inputs;
      SmallVector<const Tensor *> refs;
      for (int64_t d : group)
        inputs.push_back(inputOf(d, shape));
      for (const Tensor &t : inputs)
        refs.push_back(&t);
      Tensor expected = llvm::cantFail(tryConcatenate(refs, dim));
      FailureOr<Tensor> got =
          comm->allGather(inputOf(rank(), shape), group, dim);
      ASSERT_TRUE(succeeded(got)) << diagnostics;
      EXPECT_TRUE(bitwiseEqual(*got, expected))
          << describeGroup(group) << " dim " << dim;
    }
  }
}

TEST_P(MpiCollectiveTest, ReductionsMatchTheSimulatorBitForBit) {
  auto comm = makeCommunicator(GetParam());
  ASSERT_TRUE(comm);
  // 37 elements: chunks of uneven size, some members get fewer.
  SmallVector<int64_t> shape = {37};
  SmallVector<int64_t> scatterShape = {4, 8, 3};
  for (const auto &group : testGroups()) {
    int64_t n = group.size();
    int64_t me = llvm::find(group, rank()) - group.begin();
    for (Reduction kind : {Reduction::Sum, Reduction::Max}) {
      std::vector<Tensor> inputs;
      SmallVector<const Tensor *> refs;
      for (int64_t d : group)
        inputs.push_back(inputOf(d, shape));
      for (const Tensor &t : inputs)
        refs.push_back(&t);
      FailureOr<Tensor> got =
          comm->allReduce(inputOf(rank(), shape), group, kind);
      ASSERT_TRUE(succeeded(got)) << diagnostics;
      EXPECT_TRUE(bitwiseEqual(*got, reduceTensors(refs, kind)))
          << describeGroup(group);

      for (int64_t dim = 0; dim < 3; ++dim) {
        if (scatterShape[dim] % n)
          continue;
        std::vector<Tensor> full;
        SmallVector<const Tensor *> fullRefs;
        for (int64_t d : group)
          full.push_back(inputOf(d, scatterShape, "scatter"));
        for (const Tensor &t : full)
          fullRefs.push_back(&t);
        Tensor expected = llvm::cantFail(
            trySliceBlock(reduceTensors(fullRefs, kind), dim, n, me));
        FailureOr<Tensor> block = comm->reduceScatter(
            inputOf(rank(), scatterShape, "scatter"), group, dim, kind);
        ASSERT_TRUE(succeeded(block)) << diagnostics;
        EXPECT_TRUE(bitwiseEqual(*block, expected))
            << describeGroup(group) << " dim " << dim;
      }
    }
  }
}

TEST_P(MpiCollectiveTest, AllToAllMovesBlockJToMemberJ) {
  auto comm = makeCommunicator(GetParam());
  ASSERT_TRUE(comm);
  SmallVector<int64_t> shape = {8, 4, 8};
  for (const auto &group : testGroups()) {
    int64_t n = group.size();
    int64_t me = llvm::find(group, rank()) - group.begin();
    for (auto [split, concat] :
         {std::pair<int64_t, int64_t>{0, 1}, {1, 0}, {2, 1}, {0, 2}, {2, 2}}) {
      if (shape[split] % n)
        continue;
      // As the simulator does it: member i's block `me`, concatenated.
      std::vector<Tensor> pieces;
      SmallVector<const Tensor *> refs;
      for (int64_t d : group)
        pieces.push_back(
            llvm::cantFail(trySliceBlock(inputOf(d, shape), split, n, me)));
      for (const Tensor &t : pieces)
        refs.push_back(&t);
      Tensor expected = llvm::cantFail(tryConcatenate(refs, concat));
      FailureOr<Tensor> got =
          comm->allToAll(inputOf(rank(), shape), group, split, concat);
      ASSERT_TRUE(succeeded(got)) << diagnostics;
      EXPECT_TRUE(bitwiseEqual(*got, expected))
          << describeGroup(group) << " split " << split << " concat " << concat;
    }
  }
}

TEST_P(MpiCollectiveTest, CollectivePermuteMovesPairsAndZeroesTheRest) {
  auto comm = makeCommunicator(GetParam());
  ASSERT_TRUE(comm);
  SmallVector<int64_t> shape = {3, 5};
  for (const auto &group : testGroups()) {
    int64_t n = group.size();
    int64_t me = llvm::find(group, rank()) - group.begin();
    SmallVector<std::pair<int64_t, int64_t>> shift, single = {{0, n - 1}},
                                                    self = {{0, 0}};
    for (int64_t i = 0; i < n; ++i)
      shift.push_back({i, (i + 1) % n});
    for (ArrayRef<std::pair<int64_t, int64_t>> pairs :
         {ArrayRef(shift), ArrayRef(single), ArrayRef(self)}) {
      Tensor expected = llvm::cantFail(Tensor::allocate(shape));
      for (auto [s, t] : pairs)
        if (t == me)
          expected = inputOf(group[s], shape);
      FailureOr<Tensor> got =
          comm->collectivePermute(inputOf(rank(), shape), group, pairs);
      ASSERT_TRUE(succeeded(got)) << diagnostics;
      EXPECT_TRUE(bitwiseEqual(*got, expected)) << describeGroup(group);
    }
  }
}

/// Above 256 KiB the collectives first meet (MPI_Ibarrier), then poll the
/// transfer without pause, and they stage packed blocks in buffers kept
/// between calls: a large call, then a smaller one reusing the larger
/// one's staging, then a large one again, must each give the simulator's
/// bits.
TEST_P(MpiCollectiveTest, LargeCollectivesMatchTheSimulatorBitForBit) {
  auto comm = makeCommunicator(GetParam());
  ASSERT_TRUE(comm);
  for (SmallVector<int64_t> shape :
       {SmallVector<int64_t>{8, 16, 1032}, SmallVector<int64_t>{8, 8, 24},
        SmallVector<int64_t>{16, 8, 1032}}) {
    for (const auto &group : testGroups()) {
      int64_t n = group.size();
      int64_t me = llvm::find(group, rank()) - group.begin();
      std::vector<Tensor> inputs;
      SmallVector<const Tensor *> refs;
      for (int64_t d : group)
        inputs.push_back(inputOf(d, shape, "large"));
      for (const Tensor &t : inputs)
        refs.push_back(&t);
      Tensor mine = inputOf(rank(), shape, "large");
      Tensor sum = reduceTensors(refs, Reduction::Sum);

      FailureOr<Tensor> reduced = comm->allReduce(mine, group, Reduction::Sum);
      ASSERT_TRUE(succeeded(reduced)) << diagnostics;
      EXPECT_TRUE(bitwiseEqual(*reduced, sum)) << describeGroup(group);

      FailureOr<Tensor> block =
          comm->reduceScatter(mine, group, /*dim=*/1, Reduction::Sum);
      ASSERT_TRUE(succeeded(block)) << diagnostics;
      EXPECT_TRUE(
          bitwiseEqual(*block, llvm::cantFail(trySliceBlock(sum, 1, n, me))))
          << describeGroup(group);

      FailureOr<Tensor> gathered = comm->allGather(mine, group, /*dim=*/1);
      ASSERT_TRUE(succeeded(gathered)) << diagnostics;
      EXPECT_TRUE(
          bitwiseEqual(*gathered, llvm::cantFail(tryConcatenate(refs, 1))))
          << describeGroup(group);

      std::vector<Tensor> pieces;
      SmallVector<const Tensor *> pieceRefs;
      for (const Tensor &t : inputs)
        pieces.push_back(llvm::cantFail(trySliceBlock(t, 2, n, me)));
      for (const Tensor &t : pieces)
        pieceRefs.push_back(&t);
      FailureOr<Tensor> moved = comm->allToAll(mine, group, 2, 1);
      ASSERT_TRUE(succeeded(moved)) << diagnostics;
      EXPECT_TRUE(
          bitwiseEqual(*moved, llvm::cantFail(tryConcatenate(pieceRefs, 1))))
          << describeGroup(group);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GroupCreation, MpiCollectiveTest, ::testing::Bool(),
                         [](const auto &info) {
                           return info.param ? "Prepared" : "OnFirstUse";
                         });

TEST_F(MpiTest, NativeReductionsAgreeOnEveryRankAndNearlyWithTheSimulator) {
  MpiCommunicatorOptions options;
  options.deterministicReductions = false;
  auto comm = makeCommunicator(true, options);
  ASSERT_TRUE(comm);
  SmallVector<int64_t> shape = {8, 16};
  for (const auto &group : testGroups()) {
    std::vector<Tensor> inputs;
    SmallVector<const Tensor *> refs;
    for (int64_t d : group)
      inputs.push_back(inputOf(d, shape));
    for (const Tensor &t : inputs)
      refs.push_back(&t);
    Tensor expected = reduceTensors(refs, Reduction::Sum);
    FailureOr<Tensor> got =
        comm->allReduce(inputOf(rank(), shape), group, Reduction::Sum);
    ASSERT_TRUE(succeeded(got)) << diagnostics;
    EXPECT_LE(compareToReference(*got, expected).first, 1e-6);
    // Every member holds the same bits (compared through the world).
    FailureOr<std::vector<Tensor>> all =
        comm->gatherFromEveryRank(got->clone());
    ASSERT_TRUE(succeeded(all));
    for (int64_t d : group)
      EXPECT_TRUE(bitwiseEqual((*all)[d], *got))
          << describeGroup(group) << " vs device " << d;
    FailureOr<Tensor> block = comm->reduceScatter(inputOf(rank(), shape), group,
                                                  0, Reduction::Max);
    ASSERT_TRUE(succeeded(block));
    int64_t me = llvm::find(group, rank()) - group.begin();
    EXPECT_TRUE(bitwiseEqual(
        *block,
        llvm::cantFail(trySliceBlock(reduceTensors(refs, Reduction::Max), 0,
                                     group.size(), me))));
  }
}

/// Device `device`'s integer or boolean input: ids in [0, 16) or bits.
Tensor typedInputOf(int64_t device, ArrayRef<int64_t> shape, DType dtype) {
  return llvm::cantFail(tryRandomTensor(shape, /*seed=*/2000 + device, "int",
                                        defaultMaxTensorBytes(), dtype));
}

/// The elementwise sum (or max) of `inputs`, computed here in int64 and
/// stored as `dtype`: the reference the integer collectives must equal.
Tensor integerReduction(ArrayRef<Tensor> inputs, Reduction kind, DType dtype) {
  Tensor out = llvm::cantFail(
      Tensor::allocate(inputs.front().shape(), dtype));
  for (int64_t i = 0; i < out.numElements(); ++i) {
    int64_t acc = static_cast<int64_t>(inputs.front().elementAsDouble(i));
    for (const Tensor &t : inputs.drop_front()) {
      auto x = static_cast<int64_t>(t.elementAsDouble(i));
      acc = kind == Reduction::Sum ? acc + x : std::max(acc, x);
    }
    withComputedType(dtype, [&](auto *tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      out.dataAs<T>()[i] = static_cast<T>(acc);
    });
  }
  return out;
}

// i32, i64 and i1 through every collective, with the deterministic and the
// native MPI reductions (i1 reduces with max only: the verifier rejects a
// sum of booleans).
TEST_F(MpiTest, IntegerAndBooleanCollectivesAreExact) {
  for (bool deterministic : {true, false}) {
    MpiCommunicatorOptions options;
    options.deterministicReductions = deterministic;
    auto comm = makeCommunicator(true, options);
    ASSERT_TRUE(comm);
    SmallVector<int64_t> shape = {4, 8, 3};
    for (DType dtype : {DType::I32, DType::I64, DType::I1}) {
      for (const auto &group : testGroups()) {
        int64_t n = group.size();
        int64_t me = llvm::find(group, rank()) - group.begin();
        std::vector<Tensor> inputs;
        SmallVector<const Tensor *> refs;
        for (int64_t d : group)
          inputs.push_back(typedInputOf(d, shape, dtype));
        for (const Tensor &t : inputs)
          refs.push_back(&t);
        std::string where = describeGroup(group) + " " +
                            dtypeName(dtype).str() +
                            (deterministic ? " deterministic" : " native");
        Tensor local = typedInputOf(rank(), shape, dtype);
        for (int64_t dim = 0; dim < 3; ++dim) {
          FailureOr<Tensor> gathered = comm->allGather(local, group, dim);
          ASSERT_TRUE(succeeded(gathered)) << diagnostics;
          EXPECT_TRUE(
              bitwiseEqual(*gathered, llvm::cantFail(tryConcatenate(refs, dim))))
              << where << " all_gather dim " << dim;
        }
        for (Reduction kind : {Reduction::Sum, Reduction::Max}) {
          if (dtype == DType::I1 && kind == Reduction::Sum)
            continue;
          Tensor expected = integerReduction(inputs, kind, dtype);
          FailureOr<Tensor> reduced = comm->allReduce(local, group, kind);
          ASSERT_TRUE(succeeded(reduced)) << diagnostics;
          EXPECT_TRUE(bitwiseEqual(*reduced, expected)) << where;
          for (int64_t dim = 0; dim < 3; ++dim) {
            if (shape[dim] % n)
              continue;
            FailureOr<Tensor> block =
                comm->reduceScatter(local, group, dim, kind);
            ASSERT_TRUE(succeeded(block)) << diagnostics;
            EXPECT_TRUE(bitwiseEqual(
                *block, llvm::cantFail(trySliceBlock(expected, dim, n, me))))
                << where << " reduce_scatter dim " << dim;
          }
        }
        if (shape[1] % n == 0) {
          // Block j of dim 1 of every member, concatenated along dim 2.
          std::vector<Tensor> pieces;
          SmallVector<const Tensor *> pieceRefs;
          for (const Tensor &t : inputs)
            pieces.push_back(llvm::cantFail(trySliceBlock(t, 1, n, me)));
          for (const Tensor &t : pieces)
            pieceRefs.push_back(&t);
          FailureOr<Tensor> moved = comm->allToAll(local, group, 1, 2);
          ASSERT_TRUE(succeeded(moved)) << diagnostics;
          EXPECT_TRUE(bitwiseEqual(
              *moved, llvm::cantFail(tryConcatenate(pieceRefs, 2))))
              << where << " all_to_all";
        }
        // A cyclic shift: member i receives member i-1's tensor.
        SmallVector<std::pair<int64_t, int64_t>> pairs;
        for (int64_t i = 0; i < n; ++i)
          pairs.push_back({i, (i + 1) % n});
        FailureOr<Tensor> shifted = comm->collectivePermute(local, group, pairs);
        ASSERT_TRUE(succeeded(shifted)) << diagnostics;
        EXPECT_TRUE(bitwiseEqual(*shifted, inputs[(me + n - 1) % n]))
            << where << " collective_permute";
      }
    }
  }
}

TEST_F(MpiTest, WholeMeshOverloadsUseEveryDevice) {
  auto comm = makeCommunicator(false);
  ASSERT_TRUE(comm);
  int n = worldSize();
  SmallVector<int64_t> shape = {n, 2 * n};
  std::vector<Tensor> inputs;
  SmallVector<const Tensor *> refs;
  for (int d = 0; d < n; ++d)
    inputs.push_back(inputOf(d, shape));
  for (const Tensor &t : inputs)
    refs.push_back(&t);
  Tensor local = inputOf(rank(), shape);

  FailureOr<Tensor> gathered = comm->allGather(local, 1);
  ASSERT_TRUE(succeeded(gathered));
  EXPECT_TRUE(bitwiseEqual(*gathered, llvm::cantFail(tryConcatenate(refs, 1))));
  FailureOr<Tensor> summed = comm->allReduce(local);
  ASSERT_TRUE(succeeded(summed));
  EXPECT_TRUE(bitwiseEqual(*summed, reduceTensors(refs, Reduction::Sum)));
  FailureOr<Tensor> scattered = comm->reduceScatter(local);
  ASSERT_TRUE(succeeded(scattered));
  EXPECT_TRUE(bitwiseEqual(
      *scattered, llvm::cantFail(trySliceBlock(
                      reduceTensors(refs, Reduction::Sum), 0, n, rank()))));
  // The seed's all_to_all: split and concatenate the same dim.
  FailureOr<Tensor> exchanged = comm->allToAll(local, 1);
  ASSERT_TRUE(succeeded(exchanged));
  std::vector<Tensor> pieces;
  SmallVector<const Tensor *> pieceRefs;
  for (const Tensor &t : inputs)
    pieces.push_back(llvm::cantFail(trySliceBlock(t, 1, n, rank())));
  for (const Tensor &t : pieces)
    pieceRefs.push_back(&t);
  EXPECT_TRUE(
      bitwiseEqual(*exchanged, llvm::cantFail(tryConcatenate(pieceRefs, 1))));
}

TEST_F(MpiTest, SendAndReceiveKeepOrderAndShapes) {
  auto comm = makeCommunicator(false);
  ASSERT_TRUE(comm);
  int n = worldSize();
  int next = (rank() + 1) % n, prev = (rank() + n - 1) % n;
  // Everyone sends before anyone receives: sends must not block.
  ASSERT_TRUE(succeeded(comm->send(next, inputOf(rank(), {rank() + 1, 3}))));
  std::future<LogicalResult> second =
      comm->sendAsync(next, inputOf(rank(), {2, rank() + 2}, "second"));
  ASSERT_TRUE(succeeded(comm->send(rank(), Tensor::scalar(rank()))));
  FailureOr<Tensor> first = comm->receive(prev);
  ASSERT_TRUE(succeeded(first)) << diagnostics;
  EXPECT_TRUE(bitwiseEqual(*first, inputOf(prev, {prev + 1, 3})));
  FailureOr<Tensor> then = comm->receive(prev);
  ASSERT_TRUE(succeeded(then)) << diagnostics;
  EXPECT_TRUE(bitwiseEqual(*then, inputOf(prev, {2, prev + 2}, "second")));
  FailureOr<Tensor> own = comm->receive(rank());
  ASSERT_TRUE(succeeded(own));
  EXPECT_EQ(own->rank(), 0);
  EXPECT_EQ(own->data()[0], float(rank()));
  EXPECT_TRUE(succeeded(second.get()));
  EXPECT_TRUE(succeeded(comm->barrier()));
}

// Hand-written collectives on uneven pieces (UnevenCollectives.h): this
// rank's results against the answer computed without any collective.
TEST_F(MpiTest, HandWrittenUnevenCollectivesGiveTheIndependentAnswer) {
  MeshTopology mesh = testMesh();
  int64_t a = mesh.axisSizes()[0], b = mesh.axisSizes()[1];
  OwningOpRef<ModuleOp> module = importJsonGraph(
      shardc::testing::unevenCollectivesProgram(a, b), "uneven.json", &context);
  ASSERT_TRUE(module) << diagnostics;
  FailureOr<std::unique_ptr<MpiBackend>> backend =
      createMpiBackend(*module->getOps<MeshOp>().begin());
  ASSERT_TRUE(succeeded(backend)) << diagnostics;
  DeviceTensors args;
  args.push_back(shardc::testing::unevenCollectivesArgs(mesh, rank()));
  FailureOr<DeviceTensors> results =
      (*backend)->run(*module->getOps<func::FuncOp>().begin(), args);
  ASSERT_TRUE(succeeded(results)) << diagnostics;
  EXPECT_EQ(shardc::testing::checkUnevenCollectives(mesh, rank(),
                                                    (*results)[0]),
            "");
}

/// Minor page faults of this process so far.
long minorFaults() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Once a backend exists, a step's large tensors come from the previous
// step's freed buffers (MpiCommunicatorOptions::retainFreedMemory): a
// 64 MiB tensor allocated again after being freed faults in none of its
// 16384 pages. (glibc would otherwise map it afresh each time, above its
// largest mmap threshold of 32 MiB.)
// AddressSanitizer's allocator quarantines freed memory instead of handing
// it back, so glibc's retention this test measures is not in play there.
#if defined(__SANITIZE_ADDRESS__)
#define SHARDC_ASAN_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHARDC_ASAN_ALLOCATOR 1
#endif
#endif

TEST_F(MpiTest, ABackendReusesFreedTensorMemory) {
#ifdef SHARDC_ASAN_ALLOCATOR
  GTEST_SKIP() << "AddressSanitizer's allocator quarantines freed memory";
#endif
  OwningOpRef<ModuleOp> module = importJsonGraph(
      shardc::testing::unevenCollectivesProgram(testMesh().axisSizes()[0],
                                                testMesh().axisSizes()[1]),
      "uneven.json", &context);
  ASSERT_TRUE(module) << diagnostics;
  ASSERT_TRUE(
      succeeded(createMpiBackend(*module->getOps<MeshOp>().begin())))
      << diagnostics;
  constexpr int64_t kElements = 16 << 20; // 64 MiB of f32
  {
    // Written, as a kernel writes its result (calloc leaves fresh pages
    // untouched).
    Tensor first = llvm::cantFail(Tensor::allocate({kElements}));
    std::fill_n(first.data(), kElements, 1.0f);
  }
  long before = minorFaults();
  {
    Tensor again = llvm::cantFail(Tensor::allocate({kElements}));
    EXPECT_EQ(again.data()[kElements - 1], 0.0f);
    std::fill_n(again.data(), kElements, 2.0f);
  }
  EXPECT_LT(minorFaults() - before, 1000);
}

TEST_F(MpiTest, GatherFromEveryRankTakesAnyShape) {
  auto comm = makeCommunicator(false);
  ASSERT_TRUE(comm);
  FailureOr<std::vector<Tensor>> all =
      comm->gatherFromEveryRank(inputOf(rank(), {rank() % 3, 2}));
  ASSERT_TRUE(succeeded(all));
  ASSERT_EQ(static_cast<int>(all->size()), worldSize());
  for (int d = 0; d < worldSize(); ++d)
    EXPECT_TRUE(bitwiseEqual((*all)[d], inputOf(d, {d % 3, 2})));
}

// Errors that every rank makes alike, so no rank waits for another; the
// abort policy is off to see the diagnostic.
TEST_F(MpiTest, BadArgumentsAreDiagnosticsNamingTheRank) {
  MpiCommunicatorOptions options;
  options.abortOnFailure = false;
  auto comm = makeCommunicator(false, options);
  ASSERT_TRUE(comm);
  // A group without this device: one the job cannot have (an id past the
  // last rank) is left for the next check, so use the next rank, or none.
  SmallVector<int64_t> others;
  if (worldSize() > 1)
    others.push_back((rank() + 1) % worldSize());
  Tensor t = inputOf(rank(), {4, 4});
  EXPECT_TRUE(failed(comm->allGather(t, others, 0)));
  EXPECT_NE(diagnostics.find("rank " + std::to_string(rank()) + " of"),
            std::string::npos)
      << diagnostics;
  EXPECT_NE(diagnostics.find(worldSize() > 1 ? "does not contain this device"
                                             : "it is empty"),
            std::string::npos);
  EXPECT_TRUE(failed(comm->allGather(t, {rank(), rank()}, 0)));
  EXPECT_NE(diagnostics.find("twice"), std::string::npos);
  EXPECT_TRUE(
      failed(comm->allReduce(t, {rank(), worldSize()}, Reduction::Sum)));
  EXPECT_NE(diagnostics.find("is not a rank of the job"), std::string::npos);
  EXPECT_TRUE(failed(comm->allGather(t, comm->everyDevice(), 2)));
  EXPECT_NE(diagnostics.find("dim 2 is out of range"), std::string::npos);
  if (3 % worldSize() != 0) {
    EXPECT_TRUE(failed(comm->reduceScatter(
        inputOf(rank(), {3}), comm->everyDevice(), 0, Reduction::Sum)));
    EXPECT_NE(diagnostics.find("not divisible"), std::string::npos);
  }
  EXPECT_TRUE(failed(comm->receive(-1)));
  EXPECT_TRUE(failed(comm->sendAsync(worldSize(), t.clone()).get()));
}

//===----------------------------------------------------------------------===//
// Examples on the backend
//===----------------------------------------------------------------------===//

std::vector<std::string> exampleFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(SHARDC_EXAMPLES_DIR, ec), end;
       it != end && !ec; it.increment(ec))
    if (StringRef(it->path()).ends_with(".json"))
      files.push_back(it->path());
  llvm::sort(files);
  return files;
}

/// An example, imported, with its global program cloned for reference and
/// the partitioned one in `module`.
struct LoadedExample {
  OwningOpRef<ModuleOp> global, module;
  MeshOp mesh;
  func::FuncOp globalFunc, spmdFunc;
};

func::FuncOp mainOf(ModuleOp module) {
  for (auto f : module.getOps<func::FuncOp>())
    return f;
  return nullptr;
}

std::optional<LoadedExample> loadExample(StringRef path, MLIRContext &ctx,
                                         bool partition) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return std::nullopt;
  LoadedExample ex;
  ex.module = importJsonGraph((*buffer)->getBuffer(), path, &ctx);
  if (!ex.module)
    return std::nullopt;
  // The reference runs the program the commands run: composites expanded.
  PassManager decompose(&ctx, ModuleOp::getOperationName());
  decompose.addPass(createShardcDecompose());
  if (failed(decompose.run(*ex.module)))
    return std::nullopt;
  ex.global = ex.module->clone();
  ex.globalFunc = mainOf(*ex.global);
  if (partition) {
    PassManager pm(&ctx, ModuleOp::getOperationName());
    buildPartitionPipeline(pm);
    if (failed(pm.run(*ex.module)))
      return std::nullopt;
  }
  ex.spmdFunc = mainOf(*ex.module);
  auto meshes = llvm::to_vector(ex.module->getOps<MeshOp>());
  if (meshes.size() != 1)
    return std::nullopt;
  ex.mesh = meshes.front();
  return ex;
}

int64_t deviceCount(MeshOp mesh) {
  int64_t n = 1;
  for (int64_t s : mesh.getAxisSizes())
    n *= s;
  return n;
}

std::string inputName(func::FuncOp func, unsigned i) {
  if (auto name = func.getArgAttrOfType<StringAttr>(
          i, ShardcDialect::getNameAttrName()))
    return name.getValue().str();
  return "arg" + std::to_string(i);
}

// The suite runs with 4 and 8 ranks; an example of another size would
// silently never run on the mpi backend.
TEST_F(MpiTest, EveryExampleHasAMeshTheSuiteRuns) {
  std::vector<std::string> files = exampleFiles();
  ASSERT_FALSE(files.empty());
  for (const std::string &file : files) {
    std::optional<LoadedExample> ex = loadExample(file, context, false);
    ASSERT_TRUE(ex) << file << ": " << diagnostics;
    int64_t n = deviceCount(ex->mesh);
    EXPECT_TRUE(n == 4 || n == 8)
        << file << " has " << n << " devices; add a ctest with that many "
        << "ranks in unittests/Runtime/CMakeLists.txt";
  }
}

class MpiExampleTest : public MpiTest,
                       public ::testing::WithParamInterface<std::string> {};

TEST_P(MpiExampleTest, MatchesTheReferenceAndTheSimulatorOnEveryRank) {
  std::string file = GetParam();
  std::optional<LoadedExample> ex = loadExample(file, context, true);
  ASSERT_TRUE(ex) << diagnostics;
  if (deviceCount(ex->mesh) != worldSize()) {
    // Every rank agrees on the error instead of hanging.
    EXPECT_TRUE(failed(createMpiBackend(ex->mesh)));
    EXPECT_NE(diagnostics.find("devices but the MPI job has " +
                               std::to_string(worldSize()) + " rank"),
              std::string::npos)
        << diagnostics;
    GTEST_SKIP() << file << " needs " << deviceCount(ex->mesh) << " ranks";
  }
  FailureOr<std::unique_ptr<MpiBackend>> backend = createMpiBackend(ex->mesh);
  ASSERT_TRUE(succeeded(backend)) << diagnostics;
  EXPECT_EQ((*backend)->numDevices(), worldSize());
  EXPECT_EQ((*backend)->localDevices(), ArrayRef<int64_t>{rank()});
  FailureOr<MeshTopology> topology = getMeshTopology(ex->mesh);
  ASSERT_TRUE(succeeded(topology));

  // Global inputs, and this rank's blocks of them.
  SmallVector<Tensor> inputs;
  DeviceTensors args(1);
  for (unsigned i = 0; i < ex->globalFunc.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(ex->globalFunc.getArgument(i).getType());
    inputs.push_back(
        cantFail(tryRandomTensor(
            type.getShape(), 0, inputName(ex->globalFunc, i),
            defaultMaxTensorBytes(),
            executableDType(type.getElementType()).value_or(DType::F32))));
    auto sharding = ex->spmdFunc.getArgAttrOfType<ShardingAttr>(
        i, ShardcDialect::getShardingAttrName());
    ASSERT_TRUE(sharding);
    args[0].push_back(llvm::cantFail(extractDeviceBlock(
        inputs.back(), sharding, ex->mesh, *topology, rank())));
  }
  FailureOr<SmallVector<Tensor>> reference =
      interpretFunction(ex->globalFunc, inputs);
  ASSERT_TRUE(succeeded(reference)) << diagnostics;
  FailureOr<ShardedRun> simulated =
      runOnSimulatedMesh(ex->spmdFunc, ex->mesh, inputs);
  ASSERT_TRUE(succeeded(simulated)) << diagnostics;

  FailureOr<DeviceTensors> results = (*backend)->run(ex->spmdFunc, args);
  ASSERT_TRUE(succeeded(results)) << diagnostics;
  ASSERT_EQ(results->size(), 1u);
  ASSERT_EQ((*results)[0].size(), ex->spmdFunc.getNumResults());
  for (unsigned i = 0; i < ex->spmdFunc.getNumResults(); ++i) {
    FailureOr<std::vector<Tensor>> blocks = (*backend)->gatherBlocks([&] {
      std::vector<Tensor> mine;
      mine.push_back(std::move((*results)[0][i]));
      return mine;
    }());
    ASSERT_TRUE(succeeded(blocks)) << diagnostics;
    ASSERT_EQ(static_cast<int>(blocks->size()), worldSize());
    SmallVector<const Tensor *> refs;
    for (const Tensor &b : *blocks)
      refs.push_back(&b);
    auto sharding = ex->spmdFunc.getResultAttrOfType<ShardingAttr>(
        i, ShardcDialect::getShardingAttrName());
    ASSERT_TRUE(sharding);
    std::string why;
    FailureOr<Tensor> global = assembleGlobal(
        refs, sharding, ex->mesh, *topology, (*reference)[i].shape(), why);
    ASSERT_TRUE(succeeded(global)) << why;
    auto [rel, abs] = compareToReference(*global, (*reference)[i]);
    // A bf16 example (megatron_mlp_bf16) rounds its partial sums.
    DType dtype = (*reference)[i].dtype();
    EXPECT_LE(rel, isHalfDType(dtype) ? halfTolerance(dtype) : 1e-5) << file << " result #" << i << " on rank " << rank()
                         << " (max abs error " << abs << ")";
    // Same kernels, same reduction order: the simulator's exact bits.
    EXPECT_TRUE(bitwiseEqual(*global, simulated->outputs[i]))
        << file << " result #" << i << " on rank " << rank()
        << " differs from the simulator's";
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, MpiExampleTest,
                         ::testing::ValuesIn(exampleFiles()),
                         [](const auto &info) {
                           std::string name =
                               llvm::sys::path::stem(info.param).str();
                           for (char &c : name)
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return name;
                         });

//===----------------------------------------------------------------------===//
// A failing rank
//===----------------------------------------------------------------------===//

/// Runs megatron_mlp.json with one argument of the wrong shape on rank
/// `failRank`: that rank's interpreter rejects it while the others wait in
/// the first all_reduce. The job must end (exit 1), naming the rank.
int runWithFailingRank(int failRank) {
  MLIRContext ctx;
  ctx.loadDialect<ShardcDialect, func::FuncDialect>();
  shardc::registerKernelModels(ctx);
  std::string path =
      (llvm::Twine(SHARDC_EXAMPLES_DIR) + "/megatron_mlp.json").str();
  std::optional<LoadedExample> ex = loadExample(path, ctx, true);
  if (!ex)
    return 2;
  FailureOr<std::unique_ptr<MpiBackend>> backend = createMpiBackend(ex->mesh);
  if (failed(backend))
    return 2;
  FailureOr<MeshTopology> topology = getMeshTopology(ex->mesh);
  DeviceTensors args(1);
  for (unsigned i = 0; i < ex->spmdFunc.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(ex->spmdFunc.getArgument(i).getType());
    SmallVector<int64_t> shape(type.getShape());
    if (rank() == failRank && i == 0)
      shape.back() += 1;
    args[0].push_back(randomTensor(shape, 0, "arg"));
  }
  (void)topology;
  FailureOr<DeviceTensors> results = (*backend)->run(ex->spmdFunc, args);
  // Not reached on any rank when the policy works: the failing rank aborts
  // the job and the others die waiting.
  llvm::errs() << "rank " << rank() << ": run() returned "
               << (succeeded(results) ? "success" : "failure") << "\n";
  return 3;
}

/// Only rank 0 prints gtest's full report; the others print their
/// failures, prefixed with their rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult &result) override {
    if (result.failed())
      llvm::errs() << "[rank " << rank() << "] " << result.file_name() << ":"
                   << result.line_number() << ": " << result.summary() << "\n";
  }
};

} // namespace

int main(int argc, char **argv) {
  llvm::Expected<MpiEnvironment> env = initializeMpi(argc, argv);
  if (!env) {
    llvm::errs() << "MpiBackendTest: " << llvm::toString(env.takeError())
                 << "\n";
    return 1;
  }
  environment = &*env;
  for (int i = 1; i < argc; ++i)
    if (StringRef(argv[i]).starts_with("--fail-rank="))
      return runWithFailingRank(std::atoi(argv[i] + strlen("--fail-rank=")));

  ::testing::InitGoogleTest(&argc, argv);
  if (rank() != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter);
  }
  int status = RUN_ALL_TESTS();
  // Report the job's outcome once: how many ranks saw a failure.
  auto comm = MpiCommunicator::create(nullptr);
  if (failed(comm))
    return 1;
  FailureOr<Tensor> failures =
      (*comm)->allReduce(Tensor::scalar(status != 0 ? 1.0f : 0.0f));
  int failedRanks = succeeded(failures) ? int(failures->data()[0]) : 1;
  comm->reset();
  if (rank() == 0)
    llvm::errs() << "MpiBackendTest: " << worldSize() << " ranks, "
                 << failedRanks << " with failures\n";
  return failedRanks ? 1 : 0;
}
