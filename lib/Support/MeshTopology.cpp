//===- MeshTopology.cpp - device ids, coordinates and groups --------------===//

#include "shardc/Support/MeshTopology.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace shardc;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<MeshTopology> MeshTopology::create(ArrayRef<StringRef> axisNames,
                                                  ArrayRef<int64_t> axisSizes) {
  if (axisNames.empty())
    return makeError("a mesh needs at least one axis");
  if (axisNames.size() != axisSizes.size())
    return makeError("a mesh needs one size per axis name");
  MeshTopology mesh;
  llvm::StringSet<> seen;
  for (auto [name, size] : llvm::zip(axisNames, axisSizes)) {
    if (name.empty())
      return makeError("mesh axis names must be non-empty");
    if (!seen.insert(name).second)
      return makeError("mesh axis \"" + name + "\" appears twice");
    if (size < 1)
      return makeError("mesh axis \"" + name + "\" has size " +
                       llvm::Twine(size) + "; sizes must be at least 1");
    // Compare before multiplying so the product can never overflow.
    if (size > kMaxDevices / mesh.deviceCount)
      return makeError("mesh has more than " + llvm::Twine(kMaxDevices) +
                       " devices");
    mesh.deviceCount *= size;
    mesh.names.push_back(name.str());
    mesh.sizes.push_back(size);
  }
  return mesh;
}

int64_t MeshTopology::axisIndex(StringRef name) const {
  for (auto [i, n] : llvm::enumerate(names))
    if (n == name)
      return static_cast<int64_t>(i);
  return -1;
}

SmallVector<int64_t> MeshTopology::coordinates(int64_t deviceId) const {
  if (deviceId < 0 || deviceId >= deviceCount)
    return {};
  SmallVector<int64_t> coords(sizes.size());
  for (int64_t a = numAxes() - 1; a >= 0; --a) {
    coords[a] = deviceId % sizes[a];
    deviceId /= sizes[a];
  }
  return coords;
}

int64_t MeshTopology::deviceId(ArrayRef<int64_t> coords) const {
  if (coords.size() != sizes.size())
    return -1;
  int64_t id = 0;
  for (auto [c, s] : llvm::zip(coords, sizes)) {
    if (c < 0 || c >= s)
      return -1;
    id = id * s + c;
  }
  return id;
}

std::optional<SmallVector<int64_t>>
MeshTopology::resolve(ArrayRef<StringRef> axes) const {
  if (axes.empty())
    return std::nullopt;
  SmallVector<int64_t> indices;
  for (StringRef axis : axes) {
    int64_t i = axisIndex(axis);
    if (i < 0 || llvm::is_contained(indices, i))
      return std::nullopt;
    indices.push_back(i);
  }
  return indices;
}

llvm::Error MeshTopology::checkAxes(ArrayRef<StringRef> axes) const {
  if (axes.empty())
    return makeError("a device group needs at least one mesh axis");
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axisIndex(axis) < 0)
      return makeError("unknown mesh axis \"" + axis + "\"");
    if (llvm::is_contained(axes.take_front(i), axis))
      return makeError("mesh axis \"" + axis + "\" is listed twice");
  }
  return llvm::Error::success();
}

int64_t MeshTopology::groupSize(ArrayRef<StringRef> axes) const {
  std::optional<SmallVector<int64_t>> indices = resolve(axes);
  if (!indices)
    return -1;
  int64_t n = 1;
  for (int64_t i : *indices)
    n *= sizes[i];
  return n;
}

SmallVector<int64_t> MeshTopology::groupOf(int64_t deviceId,
                                           ArrayRef<StringRef> axes) const {
  std::optional<SmallVector<int64_t>> indices = resolve(axes);
  SmallVector<int64_t> coords = coordinates(deviceId);
  if (!indices || coords.empty())
    return {};
  int64_t n = groupSize(axes);
  SmallVector<int64_t> group;
  group.reserve(n);
  // Enumerate group indices in order: decompose g over the listed axes (the
  // last listed is the fastest) and overwrite those coordinates.
  for (int64_t g = 0; g < n; ++g) {
    int64_t rest = g;
    for (int64_t k = indices->size() - 1; k >= 0; --k) {
      int64_t axis = (*indices)[k];
      coords[axis] = rest % sizes[axis];
      rest /= sizes[axis];
    }
    group.push_back(this->deviceId(coords));
  }
  return group;
}

int64_t MeshTopology::groupIndex(int64_t deviceId,
                                 ArrayRef<StringRef> axes) const {
  std::optional<SmallVector<int64_t>> indices = resolve(axes);
  SmallVector<int64_t> coords = coordinates(deviceId);
  if (!indices || coords.empty())
    return -1;
  int64_t g = 0;
  for (int64_t axis : *indices)
    g = g * sizes[axis] + coords[axis];
  return g;
}
