//===- UnevenCollectives.h - collectives on uneven pieces -------*- C++ -*-===//
//
// A partitioned program written by hand in JSON whose collectives cut and
// concatenate a dim of 7 that the group does not divide (docs/json-format.md,
// "Collectives"; docs/sharding.md#uneven-dims), and what every device must
// end with, computed here element by element from the global values, not by
// any collective. The sim, threads and mpi tests run the same program and
// check each device against it, so the three backends are held to one
// independent answer.
//
// Mesh a=A x b=B; the collectives act over "b" (group size B, blocks of
// ceil(7 / B), the last member holding the padding):
//   g = all_gather(x, dim 1, size 7)    x: device's block of G_a [3, 7]
//   r = reduce_scatter(g, dim 1)        B * block of G_a
//   s = all_slice(y, dim 1)             y: the device's own Y_d [2, 7]
//   u = all_gather(s, dim 1, size 7)    column block k from member k's Y
//   t = all_to_all(y, split 1, concat 0, size 2B - 1)
//                                       member j: block j of every member's
//                                       Y, stacked, the last row dropped
// Padding is compared nowhere: it holds no particular value. x's padding
// is filled with 1e6, so a gather that kept it would show.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_UNITTESTS_RUNTIME_UNEVENCOLLECTIVES_H
#define SHARDC_UNITTESTS_RUNTIME_UNEVENCOLLECTIVES_H

#include "shardc/Support/MeshTopology.h"
#include "shardc/Support/Tensor.h"

#include <cmath>
#include <string>
#include <vector>

namespace shardc::testing {

inline constexpr int64_t kUnevenCols = 7;

inline int64_t unevenBlock(int64_t groupSize) {
  return (kUnevenCols + groupSize - 1) / groupSize;
}

/// The program on mesh a=`a` x b=`b`, as JSON.
inline std::string unevenCollectivesProgram(int64_t a, int64_t b) {
  std::string len = std::to_string(unevenBlock(b));
  std::string rows = std::to_string(2 * b - 1);
  return R"({"spmd": true,
  "mesh": {"name": "mesh", "axes": [["a", )" +
         std::to_string(a) + R"(], ["b", )" + std::to_string(b) + R"(]]},
  "inputs": [{"name": "x", "shape": [3, )" +
         len + R"(]}, {"name": "y", "shape": [2, 7]}],
  "ops": [
    {"op": "all_gather", "inputs": ["x"], "output": "g", "axes": ["b"], "dim": 1, "size": 7},
    {"op": "reduce_scatter", "inputs": ["g"], "output": "r", "axes": ["b"], "dim": 1},
    {"op": "all_slice", "inputs": ["y"], "output": "s", "axes": ["b"], "dim": 1},
    {"op": "all_gather", "inputs": ["s"], "output": "u", "axes": ["b"], "dim": 1, "size": 7},
    {"op": "all_to_all", "inputs": ["y"], "output": "t", "axes": ["b"], "split_dim": 1, "concat_dim": 0, "size": )" +
         rows + R"(}],
  "outputs": [{"name": "g"}, {"name": "r"}, {"name": "s"}, {"name": "u"}, {"name": "t"}]})";
}

/// G_a[i][j]: the global tensor the devices at coordinate a hold blocks of.
inline float unevenG(int64_t a, int64_t i, int64_t j) {
  return float(100 * a + 10 * i + j + 1);
}
/// Y_d[i][j]: device d's own tensor.
inline float unevenY(int64_t d, int64_t i, int64_t j) {
  return float(-1000 * (d + 1) - 10 * i - j);
}

/// Device `device`'s arguments x and y.
inline std::vector<Tensor> unevenCollectivesArgs(const MeshTopology &mesh,
                                                 int64_t device) {
  int64_t a = mesh.coordinates(device)[0];
  int64_t b = mesh.groupIndex(device, {"b"});
  int64_t len = unevenBlock(mesh.axisSizes()[1]);
  std::vector<float> x, y;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = b * len; j < (b + 1) * len; ++j)
      x.push_back(j < kUnevenCols ? unevenG(a, i, j) : 1e6f);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < kUnevenCols; ++j)
      y.push_back(unevenY(device, i, j));
  std::vector<Tensor> args;
  args.push_back(llvm::cantFail(Tensor::fromValues({3, len}, x)));
  args.push_back(llvm::cantFail(Tensor::fromValues({2, kUnevenCols}, y)));
  return args;
}

/// "" if device `device`'s results (g, r, s, u, t) are right, else what is
/// wrong.
inline std::string checkUnevenCollectives(const MeshTopology &mesh,
                                          int64_t device,
                                          const std::vector<Tensor> &results) {
  int64_t n = mesh.axisSizes()[1], len = unevenBlock(n);
  int64_t a = mesh.coordinates(device)[0];
  int64_t member = mesh.groupIndex(device, {"b"});
  llvm::SmallVector<int64_t> group = mesh.groupOf(device, {"b"});
  std::string where = "device " + std::to_string(device) + ": ";
  if (results.size() != 5)
    return where + std::to_string(results.size()) + " results, not 5";
  const char *names[] = {"g", "r", "s", "u", "t"};
  llvm::SmallVector<int64_t> shapes[] = {
      {3, kUnevenCols}, {3, len}, {2, len}, {2, kUnevenCols}, {2 * n - 1, len}};
  for (int k = 0; k < 5; ++k)
    if (results[k].shape() != llvm::ArrayRef<int64_t>(shapes[k]))
      return where + names[k] + " is " + results[k].describe();
  // Element (i, j) of result k must be `want` (real elements only).
  std::string wrong;
  auto expect = [&](int k, int64_t i, int64_t j, float want) {
    float got = results[k].at({i, j});
    if (wrong.empty() && got != want)
      wrong = where + names[k] + "[" + std::to_string(i) + "][" +
              std::to_string(j) + "] is " + std::to_string(got) + ", not " +
              std::to_string(want);
  };
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < kUnevenCols; ++j) {
      expect(0, i, j, unevenG(a, i, j));
      if (j / len == member)
        expect(1, i, j - member * len, float(n) * unevenG(a, i, j));
    }
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < kUnevenCols; ++j) {
      expect(3, i, j, unevenY(group[j / len], i, j));
      if (j / len == member)
        expect(2, i, j - member * len, unevenY(device, i, j));
    }
  // t: rows 2i and 2i+1 come from member i; the last row is dropped.
  for (int64_t row = 0; row < 2 * n - 1; ++row)
    for (int64_t j = member * len; j < std::min((member + 1) * len, kUnevenCols);
         ++j)
      expect(4, row, j - member * len, unevenY(group[row / 2], row % 2, j));
  return wrong;
}

} // namespace shardc::testing

#endif // SHARDC_UNITTESTS_RUNTIME_UNEVENCOLLECTIVES_H
