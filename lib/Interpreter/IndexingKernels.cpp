//===- IndexingKernels.cpp - gather and scatter_add -----------------------===//
//
// Kernels written once over the table's element type `T` and the ids'
// type `I`. Both ops see the table as [outer, rows, inner] (the dims before
// `axis`, the gathered one, the dims after) and the ids as a flat list, so
// gather copies `inner` contiguous elements per (outer, id) and scatter_add
// adds them back. An id outside [0, rows) is a diagnostic naming it under
// mode "error", and is skipped (zeros; no update) under "skip"; it is never
// read or written out of bounds.
//
//===----------------------------------------------------------------------===//

#include "KernelImpl.h"

#include "shardc/Dialect/IndexingShapes.h"

#include <algorithm>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
using llvm::ArrayRef;

namespace {

/// The table seen as [outer, rows, inner] around `axis`.
struct TableBlocks {
  int64_t outer = 1, rows = 0, inner = 1;
};

TableBlocks blocksOf(ArrayRef<int64_t> table, int64_t axis) {
  TableBlocks b;
  for (int64_t d = 0; d < axis; ++d)
    b.outer *= table[d];
  b.rows = table[axis];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(table.size()); ++d)
    b.inner *= table[d];
  return b;
}

/// The position of the first id outside [0, rows), or -1.
template <typename I>
int64_t firstOutOfRange(const I *ids, int64_t n, int64_t rows) {
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] < 0 || static_cast<int64_t>(ids[i]) >= rows)
      return i;
  return -1;
}

/// out[o, n, :] = table[o, ids[n], :], or zeros when ids[n] is skipped.
template <typename T, typename I>
void gatherKernel(const T *table, TableBlocks b, const I *ids, int64_t n,
                  T *out) {
  for (int64_t o = 0; o < b.outer; ++o)
    for (int64_t i = 0; i < n; ++i) {
      int64_t id = static_cast<int64_t>(ids[i]);
      T *dst = out + (o * n + i) * b.inner;
      if (id < 0 || id >= b.rows)
        std::fill_n(dst, b.inner, T(0));
      else
        std::copy_n(table + (o * b.rows + id) * b.inner, b.inner, dst);
    }
}

/// out = table, then out[o, ids[n], :] += updates[o, n, :] in id order (a
/// fixed order, so the sums are the same on every run and backend). `out`
/// may be `table` itself (the interpreter hands a dying table over).
template <typename T, typename I>
void scatterAddKernel(const T *table, TableBlocks b, const I *ids, int64_t n,
                      const T *updates, T *out) {
  if (out != table)
    std::copy_n(table, b.outer * b.rows * b.inner, out);
  for (int64_t o = 0; o < b.outer; ++o)
    for (int64_t i = 0; i < n; ++i) {
      int64_t id = static_cast<int64_t>(ids[i]);
      if (id < 0 || id >= b.rows)
        continue;
      T *dst = out + (o * b.rows + id) * b.inner;
      const T *src = updates + (o * n + i) * b.inner;
      for (int64_t k = 0; k < b.inner; ++k)
        dst[k] += src[k];
    }
}

/// Checks what both ops share: `axis` indexes the table, the ids are
/// integers, and under mode "error" every id is in range.
LogicalResult checkIndexing(Operation *op, const Tensor &table,
                            const Tensor &ids, int64_t axis, StringRef mode) {
  if (axis < 0 || axis >= table.rank())
    return op->emitError() << "'" << op->getName() << "' axis " << axis
                           << " is out of range for table "
                           << table.describe();
  if (ids.dtype() != DType::I32 && ids.dtype() != DType::I64)
    return op->emitError() << "'" << op->getName()
                           << "' ids must be i32 or i64, not "
                           << ids.describe();
  if (mode == "skip")
    return success();
  int64_t rows = table.dim(axis), bad = -1, value = 0;
  auto find = [&](auto *ids, int64_t n) {
    bad = firstOutOfRange(ids, n, rows);
    if (bad >= 0)
      value = static_cast<int64_t>(ids[bad]);
  };
  if (ids.dtype() == DType::I32)
    find(ids.dataAs<int32_t>(), ids.numElements());
  else
    find(ids.dataAs<int64_t>(), ids.numElements());
  if (bad >= 0)
    return op->emitError() << "'" << op->getName() << "' id " << value
                           << " (element " << bad
                           << " of the ids) is out of range [0, " << rows
                           << ") for dim " << axis << " of table "
                           << table.describe();
  return success();
}

LogicalResult shapeError(Operation *op, StringRef what, const Tensor &t,
                         ArrayRef<int64_t> expected) {
  return op->emitError() << "'" << op->getName() << "' " << what << " "
                         << t.describe() << " should have shape "
                         << formatShape(expected);
}

/// Calls `f(tableTag, idTag)` with the table's and the ids' element types.
template <typename Fn>
void withIndexingTypes(const Tensor &table, const Tensor &ids, Fn &&f) {
  withComputedType(table.dtype(), [&](auto *tableTag) {
    if (ids.dtype() == DType::I32)
      f(tableTag, static_cast<int32_t *>(nullptr));
    else
      f(tableTag, static_cast<int64_t *>(nullptr));
  });
}

LogicalResult evalGather(GatherOp op, const Tensor &table, const Tensor &ids,
                         Tensor &result) {
  int64_t axis = op.getAxis();
  if (failed(checkIndexing(op, table, ids, axis, op.getMode())))
    return failure();
  llvm::SmallVector<int64_t> expected =
      takeShape(table.shape(), ids.shape(), axis);
  if (result.shape() != ArrayRef<int64_t>(expected) ||
      result.dtype() != table.dtype())
    return shapeError(op, "result", result, expected);
  withIndexingTypes(table, ids, [&](auto *tableTag, auto *idTag) {
    using T = std::remove_pointer_t<decltype(tableTag)>;
    using I = std::remove_pointer_t<decltype(idTag)>;
    gatherKernel(table.dataAs<T>(), blocksOf(table.shape(), axis),
                 ids.dataAs<I>(), ids.numElements(), result.dataAs<T>());
  });
  return success();
}

LogicalResult evalScatterAdd(ScatterAddOp op, const Tensor &table,
                             const Tensor &ids, const Tensor &updates,
                             Tensor &result) {
  int64_t axis = op.getAxis();
  if (failed(checkIndexing(op, table, ids, axis, op.getMode())))
    return failure();
  llvm::SmallVector<int64_t> expected =
      takeShape(table.shape(), ids.shape(), axis);
  if (updates.shape() != ArrayRef<int64_t>(expected) ||
      updates.dtype() != table.dtype())
    return shapeError(op, "updates", updates, expected);
  if (result.shape() != table.shape() || result.dtype() != table.dtype())
    return shapeError(op, "result", result, table.shape());
  withIndexingTypes(table, ids, [&](auto *tableTag, auto *idTag) {
    using T = std::remove_pointer_t<decltype(tableTag)>;
    using I = std::remove_pointer_t<decltype(idTag)>;
    if constexpr (std::is_same_v<T, uint8_t>) {
      // The verifier allows floats only; booleans do not add.
      return;
    } else {
      scatterAddKernel(table.dataAs<T>(), blocksOf(table.shape(), axis),
                       ids.dataAs<I>(), ids.numElements(), updates.dataAs<T>(),
                       result.dataAs<T>());
    }
  });
  if (table.dtype() == DType::I1)
    return op.emitError("'shardc.scatter_add' cannot add booleans");
  return success();
}

struct GatherKernel : KernelModel<GatherKernel, GatherOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalGather(cast<GatherOp>(op), *in[0], *in[1], result);
  }
};
struct ScatterAddKernel : KernelModel<ScatterAddKernel, ScatterAddOp> {
  LogicalResult evaluateKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Tensor &result, uint64_t) const {
    return evalScatterAdd(cast<ScatterAddOp>(op), *in[0], *in[1], *in[2],
                          result);
  }
  /// The table: an embedding's gradient starts as zeros of the whole
  /// table (25 MB for a GPT-2 vocabulary), which then need no copy.
  int64_t updatesOperandInPlace(Operation *) const { return 0; }
};

} // namespace

void shardc::detail::attachIndexingKernels(MLIRContext *ctx) {
  GatherOp::attachInterface<GatherKernel>(*ctx);
  ScatterAddOp::attachInterface<ScatterAddKernel>(*ctx);
}
