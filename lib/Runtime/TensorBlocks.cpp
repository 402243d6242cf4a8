//===- TensorBlocks.cpp - cutting tensors into blocks and back ------------===//

#include "shardc/Runtime/TensorBlocks.h"

#include "shardc/Analysis/ReshardPlanner.h"
#include "shardc/Support/HalfFloat.h"

#include <cmath>
#include <cstring>
#include <type_traits>

using namespace mlir;
using namespace shardc;

namespace {
/// Allocation of a shape that a verified program already bounded.
Tensor make(ArrayRef<int64_t> shape, DType dtype) {
  auto t = Tensor::allocate(shape, dtype, ~uint64_t(0));
  if (!t) {
    llvm::consumeError(t.takeError());
    return Tensor();
  }
  return std::move(*t);
}
} // namespace

void shardc::accumulateInto(Tensor &acc, const Tensor &x, Reduction kind) {
  // Callers pass members of one collective (same type by construction);
  // anything else would read past x's storage.
  if (acc.dtype() != x.dtype() || acc.numElements() != x.numElements())
    return;
  if (isHalfDType(acc.dtype()))
    return reduceHalfElements(reinterpret_cast<uint16_t *>(acc.rawData()),
                              reinterpret_cast<const uint16_t *>(x.rawData()),
                              acc.numElements(), acc.dtype(),
                              kind == Reduction::Max);
  withComputedType(acc.dtype(), [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    reduceElements(acc.dataAs<T>(), x.dataAs<T>(), acc.numElements(), kind);
  });
}

Tensor shardc::reduceTensors(ArrayRef<const Tensor *> tensors,
                             Reduction kind) {
  Tensor out = tensors.front()->clone();
  for (const Tensor *t : tensors.drop_front())
    accumulateInto(out, *t, kind);
  return out;
}

/// Block index and block count of each dim for `device`.
static SmallVector<std::pair<int64_t, int64_t>>
blockCoords(ShardingAttr sharding, MeshOp mesh, const MeshTopology &topology,
            int64_t device) {
  SmallVector<int64_t> coords = topology.coordinates(device);
  SmallVector<std::pair<int64_t, int64_t>> out;
  for (size_t d = 0; d < sharding.getRank(); ++d) {
    int64_t index = 0, count = 1;
    for (StringRef a : sharding.getDimAxes(d)) {
      int64_t size = mesh.getAxisSize(a);
      index = index * size + coords[topology.axisIndex(a)];
      count *= size;
    }
    out.push_back({index, count});
  }
  return out;
}

llvm::Expected<Tensor> shardc::extractDeviceBlock(const Tensor &global,
                                                  ShardingAttr sharding,
                                                  MeshOp mesh,
                                                  const MeshTopology &topology,
                                                  int64_t device) {
  Tensor block = global.clone();
  SmallVector<int64_t> coords = topology.coordinates(device);
  bool summandIsZero = llvm::any_of(sharding.getPartialAxes(), [&](StringRef a) {
    return coords[topology.axisIndex(a)] != 0;
  });
  if (summandIsZero)
    std::memset(block.rawData(), 0, block.byteSize());
  for (auto [d, bc] :
       llvm::enumerate(blockCoords(sharding, mesh, topology, device))) {
    if (bc.second == 1)
      continue;
    // An uneven dim's last blocks are padded with zeros
    // (docs/sharding.md#uneven-dims).
    llvm::Expected<Tensor> next =
        trySlicePaddedBlock(block, d, bc.second, bc.first);
    if (!next)
      return next.takeError();
    block = std::move(*next);
  }
  return block;
}

/// Copies `block` into `dst` at the block position `coords`.
static void placeBlock(Tensor &dst, const Tensor &block,
                       ArrayRef<std::pair<int64_t, int64_t>> coords) {
  int64_t rank = dst.rank();
  SmallVector<int64_t> dstStrides = dst.strides();
  SmallVector<int64_t> offsets;
  for (int64_t d = 0; d < rank; ++d)
    offsets.push_back(coords[d].first * block.dim(d));
  // Copy rows of the innermost dim, as bytes.
  int64_t width = block.elementByteWidth();
  int64_t rowLen = rank ? block.dim(rank - 1) : 1;
  int64_t rows = rowLen ? block.numElements() / rowLen : 0;
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rem = r, off = 0;
    for (int64_t d = rank - 2; d >= 0; --d) {
      idx[d] = rem % block.dim(d);
      rem /= block.dim(d);
    }
    for (int64_t d = 0; d < rank - 1; ++d)
      off += (idx[d] + offsets[d]) * dstStrides[d];
    if (rank)
      off += offsets[rank - 1];
    std::memcpy(dst.rawData() + off * width,
                block.rawData() + r * rowLen * width, width * rowLen);
  }
}

FailureOr<Tensor> shardc::assembleGlobal(ArrayRef<const Tensor *> blocks,
                                         ShardingAttr sharding, MeshOp mesh,
                                         const MeshTopology &topology,
                                         ArrayRef<int64_t> globalShape,
                                         std::string &why) {
  SmallVector<StringRef> partial = sharding.getPartialAxes();
  SmallVector<int64_t> partialIdx;
  for (StringRef a : partial)
    partialIdx.push_back(topology.axisIndex(a));
  SmallVector<bool> splitAxis(topology.numAxes(), false);
  for (size_t d = 0; d < sharding.getRank(); ++d)
    for (StringRef a : sharding.getDimAxes(d))
      splitAxis[topology.axisIndex(a)] = true;

  // The device holding a block with coordinate 0 on every replicated
  // (neither split nor partial) axis provides the reference copy.
  auto isReference = [&](int64_t dev) {
    SmallVector<int64_t> coords = topology.coordinates(dev);
    for (int64_t a = 0; a < topology.numAxes(); ++a)
      if (!splitAxis[a] && !llvm::is_contained(partialIdx, a) && coords[a] != 0)
        return false;
    return true;
  };
  DType dtype = blocks.front()->dtype();
  // Blocks are placed into the global shape padded to whole blocks (the
  // padding of uneven dims, docs/sharding.md#uneven-dims), which is then
  // cut back to the global shape.
  SmallVector<int64_t, 4> local = getLocalShape(sharding, mesh, globalShape);
  for (int64_t dev = 0; dev < topology.numDevices(); ++dev)
    if (blocks[dev]->shape() != ArrayRef<int64_t>(local)) {
      why = "device " + std::to_string(dev) + " holds a block of shape " +
            blocks[dev]->describe() + ", expected " + formatShape(local);
      return failure();
    }
  SmallVector<std::pair<int64_t, int64_t>> counts =
      blockCoords(sharding, mesh, topology, 0);
  SmallVector<int64_t> paddedShape(globalShape);
  for (size_t d = 0; d < paddedShape.size(); ++d)
    paddedShape[d] = counts[d].second * local[d];
  auto unpad = [&](Tensor t) -> FailureOr<Tensor> {
    for (size_t d = 0; d < paddedShape.size(); ++d) {
      if (paddedShape[d] == globalShape[d])
        continue;
      llvm::Expected<Tensor> cut = tryResizeDim(t, d, globalShape[d]);
      if (!cut) {
        why = llvm::toString(cut.takeError());
        return failure();
      }
      t = std::move(*cut);
    }
    return t;
  };
  Tensor global = make(paddedShape, dtype);
  if (!partial.empty()) {
    // The value is the sum of the blocks over the partial axes; add them in
    // device order.
    for (int64_t dev = 0; dev < topology.numDevices(); ++dev) {
      if (!isReference(dev))
        continue;
      Tensor tmp = make(paddedShape, dtype);
      placeBlock(tmp, *blocks[dev], blockCoords(sharding, mesh, topology, dev));
      accumulateInto(global, tmp, Reduction::Sum);
    }
    return unpad(std::move(global));
  }
  for (int64_t dev = 0; dev < topology.numDevices(); ++dev)
    if (isReference(dev))
      placeBlock(global, *blocks[dev],
                 blockCoords(sharding, mesh, topology, dev));
  FailureOr<Tensor> result = unpad(std::move(global));
  if (failed(result))
    return failure();
  // Every replica must hold exactly the reference copy's data (padding
  // excepted: what it holds is unspecified).
  for (int64_t dev = 0; dev < topology.numDevices(); ++dev) {
    llvm::Expected<Tensor> block =
        extractDeviceBlock(*result, sharding, mesh, topology, dev);
    if (!block) {
      why = llvm::toString(block.takeError());
      return failure();
    }
    const Tensor &expected = *block;
    const Tensor &got = *blocks[dev];
    if (expected.shape() != got.shape()) {
      why = "device " + std::to_string(dev) + " holds a block of shape " +
            got.describe() + ", expected " + expected.describe();
      return failure();
    }
    if (expected.dtype() != got.dtype()) {
      why = "device " + std::to_string(dev) + " holds " + got.describe() +
            ", expected " + expected.describe();
      return failure();
    }
    SmallVector<std::pair<int64_t, int64_t>> coords =
        blockCoords(sharding, mesh, topology, dev);
    auto isPadding = [&](int64_t i) {
      for (int64_t d = got.rank() - 1; d >= 0; --d) {
        int64_t idx = i % got.dim(d);
        i /= got.dim(d);
        if (coords[d].first * got.dim(d) + idx >= globalShape[d])
          return true;
      }
      return false;
    };
    for (int64_t i = 0; i < got.numElements(); ++i)
      if (!isPadding(i) &&
          (got.dtype() == DType::F32
               ? !(expected.data()[i] == got.data()[i]) &&
                     !(std::isnan(expected.data()[i]) &&
                       std::isnan(got.data()[i]))
               : expected.elementAsDouble(i) != got.elementAsDouble(i) &&
                     !(std::isnan(expected.elementAsDouble(i)) &&
                       std::isnan(got.elementAsDouble(i))))) {
        why = "replicas disagree: device " + std::to_string(dev) +
              " differs from its replica at element " + std::to_string(i);
        return failure();
      }
  }
  return result;
}
