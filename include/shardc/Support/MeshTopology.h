//===- MeshTopology.h - device ids, coordinates and groups ------*- C++ -*-===//
//
// The arithmetic of a device mesh, independent of MLIR, so that runtimes and
// tests can compute collective groups without an IR at hand.
//
// Devices are numbered by the row-major linearization of their coordinates
// (the first axis is the most major). The *group* of a device over `axes` is
// the set of devices that share every coordinate except those of `axes`;
// within it, a device's *group index* is the row-major linearization of its
// coordinates along `axes`, in the order `axes` lists them.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_SUPPORT_MESHTOPOLOGY_H
#define SHARDC_SUPPORT_MESHTOPOLOGY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace shardc {

class MeshTopology {
public:
  /// Largest mesh accepted (the dialect's own limit).
  static constexpr int64_t kMaxDevices = int64_t(1) << 20;

  /// Builds a topology; fails on no axes, an empty or repeated name, a size
  /// below 1, or more than kMaxDevices devices.
  static llvm::Expected<MeshTopology>
  create(llvm::ArrayRef<llvm::StringRef> axisNames,
         llvm::ArrayRef<int64_t> axisSizes);

  int64_t numAxes() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numDevices() const { return deviceCount; }
  llvm::ArrayRef<std::string> axisNames() const { return names; }
  llvm::ArrayRef<int64_t> axisSizes() const { return sizes; }
  /// Index of axis `name`, or -1.
  int64_t axisIndex(llvm::StringRef name) const;

  /// Coordinates of `deviceId` (one per axis); empty if out of range.
  llvm::SmallVector<int64_t> coordinates(int64_t deviceId) const;
  /// Device id at `coords`, or -1 if they do not address a device.
  int64_t deviceId(llvm::ArrayRef<int64_t> coords) const;

  /// Succeeds if `axes` is non-empty, names known axes, each once. The
  /// functions below return an empty/-1 answer where this would fail.
  llvm::Error checkAxes(llvm::ArrayRef<llvm::StringRef> axes) const;

  /// Product of the sizes of `axes`, or -1.
  int64_t groupSize(llvm::ArrayRef<llvm::StringRef> axes) const;
  /// Device ids of the group of `deviceId` over `axes`, ordered by group
  /// index (so element g is the device of group index g).
  llvm::SmallVector<int64_t>
  groupOf(int64_t deviceId, llvm::ArrayRef<llvm::StringRef> axes) const;
  /// Group index of `deviceId` over `axes`, or -1.
  int64_t groupIndex(int64_t deviceId,
                     llvm::ArrayRef<llvm::StringRef> axes) const;

private:
  MeshTopology() = default;
  /// Axis indices of `axes`, or nullopt if checkAxes would fail.
  std::optional<llvm::SmallVector<int64_t>>
  resolve(llvm::ArrayRef<llvm::StringRef> axes) const;

  llvm::SmallVector<std::string> names;
  llvm::SmallVector<int64_t> sizes;
  int64_t deviceCount = 1;
};

} // namespace shardc

#endif // SHARDC_SUPPORT_MESHTOPOLOGY_H
