//===- SharedMemoryCommunicatorTest.cpp - every primitive on threads ------===//
//
// Every Communicator primitive of the threads backend, run through
// runOnThreads on 1, 2, 4 and 8 devices (and on the groups of one axis of a
// 2x4 mesh), against values computed here element by element. Device d's
// tensor holds d*1000 + r*10 + c at (r, c), so every element says where it
// came from and sums stay exact in f32.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "shardc/Runtime/ThreadsBackend.h"
#include "shardc/Support/RandomTensor.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <type_traits>

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;

namespace {

constexpr int64_t kRows = 8, kCols = 3;

float valueOf(int64_t device, int64_t r, int64_t c) {
  return static_cast<float>(device * 1000 + r * 10 + c);
}

Tensor deviceTensor(int64_t device, int64_t rows = kRows,
                    int64_t cols = kCols) {
  std::vector<float> v;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      v.push_back(valueOf(device, r, c));
  return llvm::cantFail(Tensor::fromValues({rows, cols}, v));
}

/// A tensor of `shape` whose (r, c) element is f(r, c).
Tensor expectedTensor(int64_t rows, int64_t cols,
                      llvm::function_ref<float(int64_t, int64_t)> f) {
  std::vector<float> v;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      v.push_back(f(r, c));
  return llvm::cantFail(Tensor::fromValues({rows, cols}, v));
}

/// How the devices are grouped for one test: the whole mesh, or the groups
/// along one axis of a row-major mesh [rows x cols] of devices.
struct Grouping {
  int64_t numDevices;
  int64_t meshRows = 1; // > 1: groups along the mesh axis `alongRows`
  bool alongRows = false;

  std::vector<int64_t> groupOf(int64_t d) const {
    std::vector<int64_t> g;
    if (meshRows == 1) {
      for (int64_t i = 0; i < numDevices; ++i)
        g.push_back(i);
      return g;
    }
    int64_t meshCols = numDevices / meshRows;
    int64_t row = d / meshCols, col = d % meshCols;
    if (alongRows)
      for (int64_t r = 0; r < meshRows; ++r)
        g.push_back(r * meshCols + col);
    else
      for (int64_t c = 0; c < meshCols; ++c)
        g.push_back(row * meshCols + c);
    return g;
  }
  std::string name() const {
    if (meshRows == 1)
      return std::to_string(numDevices) + " devices";
    return "axis " + std::string(alongRows ? "0" : "1") + " of a " +
           std::to_string(meshRows) + "x" +
           std::to_string(numDevices / meshRows) + " mesh";
  }
};

std::vector<Grouping> groupings() {
  return {{1}, {2}, {4}, {8}, {8, 2, false}, {8, 2, true}, {4, 2, true}};
}

class SharedMemoryCommunicatorTest : public RuntimeTestBase {
protected:
  /// Runs `body` on every device of `grouping`, with the per-device results
  /// checked against `expected(device, group, groupIndex)`.
  void checkCollective(
      const Grouping &grouping,
      llvm::function_ref<FailureOr<Tensor>(Communicator &,
                                           llvm::ArrayRef<int64_t>)>
          body,
      llvm::function_ref<Tensor(int64_t, llvm::ArrayRef<int64_t>, int64_t)>
          expected) {
    std::vector<Tensor> got(grouping.numDevices);
    ASSERT_TRUE(succeeded(runOnThreads(
        context, grouping.numDevices,
        [&](Communicator &comm) -> LogicalResult {
          std::vector<int64_t> group = grouping.groupOf(comm.deviceId());
          FailureOr<Tensor> r = body(comm, group);
          if (failed(r))
            return failure();
          got[comm.deviceId()] = std::move(*r);
          return success();
        },
        testOptions())))
        << grouping.name() << ":\n"
        << diagnostics;
    for (int64_t d = 0; d < grouping.numDevices; ++d) {
      std::vector<int64_t> group = grouping.groupOf(d);
      int64_t index = llvm::find(group, d) - group.begin();
      Tensor want = expected(d, group, index);
      EXPECT_EQ(got[d].shape(), want.shape()) << grouping.name();
      EXPECT_EQ(maxAbsDifference(got[d], want), 0.0f)
          << grouping.name() << ", device " << d;
    }
  }
  /// Every device's tensor summed over its group.
  void checkSumAllReduce(const Grouping &grouping) {
    checkCollective(
        grouping,
        [&](Communicator &comm, llvm::ArrayRef<int64_t> group) {
          return comm.allReduce(deviceTensor(comm.deviceId()), group,
                                Reduction::Sum);
        },
        [&](int64_t, llvm::ArrayRef<int64_t> group, int64_t) {
          return expectedTensor(kRows, kCols, [&](auto r, auto c) {
            float sum = 0;
            for (int64_t m : group)
              sum += valueOf(m, r, c);
            return sum;
          });
        });
  }
};

TEST_F(SharedMemoryCommunicatorTest, Identity) {
  for (int64_t n : {1, 2, 4, 8}) {
    std::vector<int64_t> ids(n, -1), counts(n, -1);
    ASSERT_TRUE(succeeded(runOnThreads(
        context, n,
        [&](Communicator &comm) {
          ids[comm.deviceId()] = comm.deviceId();
          counts[comm.deviceId()] = comm.numDevices();
          return success();
        },
        testOptions())));
    for (int64_t d = 0; d < n; ++d) {
      EXPECT_EQ(ids[d], d);
      EXPECT_EQ(counts[d], n);
    }
  }
}

TEST_F(SharedMemoryCommunicatorTest, BarrierSeparatesRounds) {
  for (int64_t n : {1, 2, 4, 8}) {
    std::atomic<int64_t> arrived{0};
    std::atomic<bool> early{false};
    ASSERT_TRUE(succeeded(runOnThreads(
        context, n,
        [&](Communicator &comm) -> LogicalResult {
          for (int64_t round = 1; round <= 5; ++round) {
            ++arrived;
            if (failed(comm.barrier()))
              return failure();
            // Everybody has arrived for this round, nobody for the next.
            if (arrived.load() < round * n)
              early = true;
            if (failed(comm.barrier()))
              return failure();
          }
          return success();
        },
        testOptions())))
        << diagnostics;
    EXPECT_FALSE(early.load()) << n << " devices";
    EXPECT_EQ(arrived.load(), 5 * n);
  }
}

TEST_F(SharedMemoryCommunicatorTest, SendReceiveIsFifoPerPair) {
  for (int64_t n : {1, 2, 4, 8}) {
    std::vector<std::vector<float>> received(n);
    ASSERT_TRUE(succeeded(runOnThreads(
        context, n,
        [&](Communicator &comm) -> LogicalResult {
          int64_t d = comm.deviceId();
          int64_t next = (d + 1) % n, prev = (d + n - 1) % n;
          // Three messages to the next device, the last one asynchronously.
          for (int k = 0; k < 2; ++k)
            if (failed(comm.send(next, Tensor::scalar(d * 10 + k))))
              return failure();
          std::future<LogicalResult> pending =
              comm.sendAsync(next, Tensor::scalar(d * 10 + 2));
          for (int k = 0; k < 3; ++k) {
            FailureOr<Tensor> t = comm.receive(prev);
            if (failed(t))
              return failure();
            received[d].push_back(t->data()[0]);
          }
          return pending.get();
        },
        testOptions())))
        << diagnostics;
    for (int64_t d = 0; d < n; ++d) {
      int64_t prev = (d + n - 1) % n;
      EXPECT_EQ(received[d],
                (std::vector<float>{float(prev * 10), float(prev * 10 + 1),
                                    float(prev * 10 + 2)}))
          << n << " devices, device " << d;
    }
  }
}

TEST_F(SharedMemoryCommunicatorTest, AllGather) {
  for (const Grouping &g : groupings()) {
    for (int64_t dim : {0, 1}) {
      checkCollective(
          g,
          [&](Communicator &comm, llvm::ArrayRef<int64_t> group) {
            return comm.allGather(deviceTensor(comm.deviceId()), group, dim);
          },
          [&](int64_t, llvm::ArrayRef<int64_t> group, int64_t) {
            int64_t n = group.size();
            if (dim == 0)
              return expectedTensor(kRows * n, kCols, [&](auto r, auto c) {
                return valueOf(group[r / kRows], r % kRows, c);
              });
            return expectedTensor(kRows, kCols * n, [&](auto r, auto c) {
              return valueOf(group[c / kCols], r, c % kCols);
            });
          });
    }
  }
}

TEST_F(SharedMemoryCommunicatorTest, AllReduce) {
  for (const Grouping &g : groupings()) {
    checkSumAllReduce(g);
    checkCollective(
        g,
        [&](Communicator &comm, llvm::ArrayRef<int64_t> group) {
          return comm.allReduce(deviceTensor(comm.deviceId()), group,
                                Reduction::Max);
        },
        [&](int64_t, llvm::ArrayRef<int64_t> group, int64_t) {
          int64_t top = *std::max_element(group.begin(), group.end());
          return expectedTensor(
              kRows, kCols, [&](auto r, auto c) { return valueOf(top, r, c); });
        });
  }
}

TEST_F(SharedMemoryCommunicatorTest, ReduceScatter) {
  for (const Grouping &g : groupings()) {
    checkCollective(
        g,
        [&](Communicator &comm, llvm::ArrayRef<int64_t> group) {
          return comm.reduceScatter(deviceTensor(comm.deviceId()), group, 0,
                                    Reduction::Sum);
        },
        [&](int64_t, llvm::ArrayRef<int64_t> group, int64_t index) {
          int64_t rows = kRows / group.size();
          return expectedTensor(rows, kCols, [&](auto r, auto c) {
            float sum = 0;
            for (int64_t m : group)
              sum += valueOf(m, index * rows + r, c);
            return sum;
          });
        });
  }
}

TEST_F(SharedMemoryCommunicatorTest, AllToAll) {
  for (const Grouping &g : groupings()) {
    // split rows, concatenate columns
    checkCollective(
        g,
        [&](Communicator &comm, llvm::ArrayRef<int64_t> group) {
          return comm.allToAll(deviceTensor(comm.deviceId()), group, 0, 1);
        },
        [&](int64_t, llvm::ArrayRef<int64_t> group, int64_t index) {
          int64_t n = group.size(), rows = kRows / n;
          return expectedTensor(rows, kCols * n, [&](auto r, auto c) {
            return valueOf(group[c / kCols], index * rows + r, c % kCols);
          });
        });
  }
}

TEST_F(SharedMemoryCommunicatorTest, WholeMeshAllToAllSplitsAndConcatsOneDim) {
  // MPI_Alltoall: block j of device i becomes block i of device j.
  for (int64_t n : {1, 2, 4, 8}) {
    checkCollective(
        Grouping{n},
        [&](Communicator &comm, llvm::ArrayRef<int64_t>) {
          return comm.allToAll(deviceTensor(comm.deviceId()), 0);
        },
        [&](int64_t d, llvm::ArrayRef<int64_t>, int64_t) {
          int64_t rows = kRows / n;
          return expectedTensor(kRows, kCols, [&](auto r, auto c) {
            return valueOf(r / rows, d * rows + r % rows, c);
          });
        });
  }
}

TEST_F(SharedMemoryCommunicatorTest, WholeMeshOverloads) {
  for (int64_t n : {1, 2, 4, 8}) {
    checkCollective(
        Grouping{n},
        [&](Communicator &comm, llvm::ArrayRef<int64_t>) {
          return comm.allReduce(deviceTensor(comm.deviceId()));
        },
        [&](int64_t, llvm::ArrayRef<int64_t>, int64_t) {
          return expectedTensor(kRows, kCols, [&](auto r, auto c) {
            float sum = 0;
            for (int64_t m = 0; m < n; ++m)
              sum += valueOf(m, r, c);
            return sum;
          });
        });
    checkCollective(
        Grouping{n},
        [&](Communicator &comm, llvm::ArrayRef<int64_t>) {
          return comm.allGather(deviceTensor(comm.deviceId()));
        },
        [&](int64_t, llvm::ArrayRef<int64_t>, int64_t) {
          return expectedTensor(kRows * n, kCols, [&](auto r, auto c) {
            return valueOf(r / kRows, r % kRows, c);
          });
        });
    checkCollective(
        Grouping{n},
        [&](Communicator &comm, llvm::ArrayRef<int64_t>) {
          return comm.reduceScatter(deviceTensor(comm.deviceId()));
        },
        [&](int64_t d, llvm::ArrayRef<int64_t>, int64_t) {
          int64_t rows = kRows / n;
          return expectedTensor(rows, kCols, [&](auto r, auto c) {
            float sum = 0;
            for (int64_t m = 0; m < n; ++m)
              sum += valueOf(m, d * rows + r, c);
            return sum;
          });
        });
  }
}

TEST_F(SharedMemoryCommunicatorTest, CollectivePermute) {
  for (const Grouping &g : groupings()) {
    // A cyclic shift by one: member i receives from member i-1.
    checkCollective(
        g,
        [&](Communicator &comm, llvm::ArrayRef<int64_t> group) {
          std::vector<std::pair<int64_t, int64_t>> pairs;
          int64_t n = group.size();
          for (int64_t i = 0; i < n; ++i)
            pairs.push_back({i, (i + 1) % n});
          return comm.collectivePermute(deviceTensor(comm.deviceId()), group,
                                        pairs);
        },
        [&](int64_t, llvm::ArrayRef<int64_t> group, int64_t index) {
          int64_t n = group.size();
          int64_t source = group[(index + n - 1) % n];
          return expectedTensor(kRows, kCols, [&](auto r, auto c) {
            return valueOf(source, r, c);
          });
        });
    // Only member 0 sends (to the last member); the others get zeros.
    checkCollective(
        g,
        [&](Communicator &comm, llvm::ArrayRef<int64_t> group) {
          std::pair<int64_t, int64_t> pair{0, int64_t(group.size()) - 1};
          return comm.collectivePermute(deviceTensor(comm.deviceId()), group,
                                        {pair});
        },
        [&](int64_t, llvm::ArrayRef<int64_t> group, int64_t index) {
          bool target = index == int64_t(group.size()) - 1;
          return expectedTensor(kRows, kCols, [&](auto r, auto c) {
            return target ? valueOf(group[0], r, c) : 0.0f;
          });
        });
  }
}

TEST_F(SharedMemoryCommunicatorTest, OverlappingGroupsInterleave) {
  // Rows then columns of a 2x4 mesh, several times over: each device is in
  // two groups whose rendezvous must not mix.
  std::vector<Tensor> got(8);
  Grouping rows{8, 2, false}, cols{8, 2, true};
  ASSERT_TRUE(succeeded(runOnThreads(
      context, 8,
      [&](Communicator &comm) -> LogicalResult {
        int64_t d = comm.deviceId();
        Tensor t = deviceTensor(d);
        for (int round = 0; round < 3; ++round) {
          FailureOr<Tensor> a =
              comm.allReduce(t, rows.groupOf(d), Reduction::Sum);
          if (failed(a))
            return failure();
          FailureOr<Tensor> b =
              comm.allReduce(*a, cols.groupOf(d), Reduction::Max);
          if (failed(b))
            return failure();
          t = std::move(*b);
        }
        got[d] = std::move(t);
        return success();
      },
      testOptions())))
      << diagnostics;
  for (int64_t d = 1; d < 8; ++d)
    EXPECT_EQ(maxAbsDifference(got[d], got[0]), 0.0f) << "device " << d;
  // Round 1: row 1 sum = 4 * base + (4+5+6+7)*1000; rounds 2 and 3 multiply
  // by 4 (every member of the row then holds the same value).
  Tensor want = expectedTensor(kRows, kCols, [&](auto r, auto c) {
    float v = 4 * valueOf(0, r, c) + 22000.0f;
    return v * 16;
  });
  EXPECT_EQ(maxAbsDifference(got[0], want), 0.0f);
}

// More devices than this machine has cores: the devices time-share the
// cores, and the blocking collectives post copies of their tensors
// (SharedMemoryWorld::copiesCollectives) instead of waiting for every
// member to read them, so a member may be a collective ahead of another on
// the same group. One device never copies (the rendezvous tests above).
TEST_F(SharedMemoryCommunicatorTest, MoreDevicesThanCoresCopyTheirTensors) {
  int64_t n = static_cast<int64_t>(std::thread::hardware_concurrency()) + 1;
  Grouping all{n};
  for (int round = 0; round < 3; ++round) {
    checkSumAllReduce(all);
    checkCollective(
        all,
        [&](Communicator &comm, llvm::ArrayRef<int64_t> group) {
          return comm.allGather(deviceTensor(comm.deviceId()), group, 0);
        },
        [&](int64_t, llvm::ArrayRef<int64_t> group, int64_t) {
          int64_t members = static_cast<int64_t>(group.size());
          return expectedTensor(kRows * members, kCols, [&](auto r, auto c) {
            return valueOf(group[r / kRows], r % kRows, c);
          });
        });
  }
  // Back-to-back collectives on one group, each device's result feeding its
  // next call: a fast member's next copy must not mix with this one.
  std::vector<Tensor> got(n);
  std::vector<int64_t> group = all.groupOf(0);
  ASSERT_TRUE(succeeded(runOnThreads(
      context, n,
      [&](Communicator &comm) -> LogicalResult {
        Tensor t = deviceTensor(comm.deviceId());
        for (int i = 0; i < 20; ++i) {
          FailureOr<Tensor> r =
              comm.allReduce(t, group, i % 2 ? Reduction::Max : Reduction::Sum);
          if (failed(r))
            return failure();
          t = std::move(*r);
        }
        got[comm.deviceId()] = std::move(t);
        return success();
      },
      testOptions())))
      << diagnostics;
  for (int64_t d = 1; d < n; ++d)
    EXPECT_EQ(maxAbsDifference(got[d], got[0]), 0.0f) << "device " << d;
}

} // namespace

namespace {
/// Device d's i32/i64/i1 tensor of shape [8, 4]: ids in [0, 16) or bits.
Tensor typedDeviceTensor(int64_t device, DType dtype) {
  return llvm::cantFail(tryRandomTensor({8, 4}, /*seed=*/500 + device, "int",
                                        defaultMaxTensorBytes(), dtype));
}

/// `f(i)` for every element of a [rows, cols] tensor of `dtype`.
Tensor typedTensor(ArrayRef<int64_t> shape, DType dtype,
                   llvm::function_ref<int64_t(int64_t)> f) {
  Tensor out = llvm::cantFail(Tensor::allocate(shape, dtype));
  withComputedType(dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    for (int64_t i = 0; i < out.numElements(); ++i)
      out.dataAs<T>()[i] = static_cast<T>(f(i));
  });
  return out;
}

int64_t elementOf(const Tensor &t, int64_t i) {
  return static_cast<int64_t>(t.elementAsDouble(i));
}
} // namespace

// Integer and boolean tensors through the collectives the partitioner
// emits, against values computed here element by element (i1 reduces with
// max, which is `or`).
TEST_F(SharedMemoryCommunicatorTest, IntegerAndBooleanCollectives) {
  for (DType dtype : {DType::I32, DType::I64, DType::I1}) {
    for (const Grouping &grouping :
         std::vector<Grouping>{{4}, {8, 2, true}, {8, 2, false}}) {
      SCOPED_TRACE(dtypeName(dtype).str());
      checkCollective(
          grouping,
          [&](Communicator &comm, ArrayRef<int64_t> group) {
            return comm.allGather(typedDeviceTensor(comm.deviceId(), dtype),
                                  group, 1);
          },
          [&](int64_t, ArrayRef<int64_t> group, int64_t) {
            int64_t n = group.size();
            return typedTensor({8, 4 * n}, dtype, [&](int64_t i) {
              int64_t r = i / (4 * n), c = i % (4 * n);
              return elementOf(typedDeviceTensor(group[c / 4], dtype),
                               r * 4 + c % 4);
            });
          });
      for (Reduction kind : {Reduction::Sum, Reduction::Max}) {
        if (dtype == DType::I1 && kind == Reduction::Sum)
          continue;
        auto reduced = [&](ArrayRef<int64_t> group, int64_t i) {
          int64_t acc = elementOf(typedDeviceTensor(group[0], dtype), i);
          for (int64_t d : group.drop_front()) {
            int64_t x = elementOf(typedDeviceTensor(d, dtype), i);
            acc = kind == Reduction::Sum ? acc + x : std::max(acc, x);
          }
          return acc;
        };
        checkCollective(
            grouping,
            [&](Communicator &comm, ArrayRef<int64_t> group) {
              return comm.allReduce(typedDeviceTensor(comm.deviceId(), dtype),
                                    group, kind);
            },
            [&](int64_t, ArrayRef<int64_t> group, int64_t) {
              return typedTensor({8, 4}, dtype,
                                 [&](int64_t i) { return reduced(group, i); });
            });
        checkCollective(
            grouping,
            [&](Communicator &comm, ArrayRef<int64_t> group) {
              return comm.reduceScatter(
                  typedDeviceTensor(comm.deviceId(), dtype), group, 0, kind);
            },
            [&](int64_t, ArrayRef<int64_t> group, int64_t index) {
              int64_t rows = 8 / group.size();
              return typedTensor({rows, 4}, dtype, [&](int64_t i) {
                return reduced(group, index * rows * 4 + i);
              });
            });
      }
    }
  }
}
