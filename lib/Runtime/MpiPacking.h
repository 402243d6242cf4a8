//===- MpiPacking.h - laying tensors out for MPI's contiguous buffers -----===//
//
// MPI moves contiguous buffers of one datatype. This is the part of the MPI
// communicator that does not talk to MPI: which MPI datatype carries a
// dtype, how a collective along a dim other than 0 makes its blocks
// contiguous (and interleaves received ones back), and the in-order fold
// that keeps deterministic reductions bit-identical to the simulator. Every
// buffer is bytes plus the element width, so it serves every dtype.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_RUNTIME_MPIPACKING_H
#define SHARDC_LIB_RUNTIME_MPIPACKING_H

#include "MpiSupport.h"

#include "shardc/Interpreter/Communicator.h"
#include "shardc/Support/Tensor.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace shardc::detail {

/// The MPI datatype of one element of `dtype` (f32: MPI_FLOAT, i1:
/// MPI_UINT8_T, i32: MPI_INT32_T, i64: MPI_INT64_T). MPI_MAX over the 0/1
/// bytes of i1 is `or`, as in reduceElements.
MPI_Datatype mpiDatatype(DType dtype);

/// MPI_SUM or MPI_MAX.
MPI_Op mpiOp(Reduction kind);

/// A tensor seen as [outer, parts, inner]: `dim` split into `parts` blocks,
/// everything before it in `outer`, the block's rest in `inner` (elements).
struct BlockLayout {
  int64_t outer = 1, parts = 1, inner = 1;
};

BlockLayout layoutOf(llvm::ArrayRef<int64_t> shape, int64_t dim,
                     int64_t parts);

/// [outer, parts, inner] -> [parts, outer, inner]: block j contiguous.
/// Elements are `width` bytes.
void packBlocks(const unsigned char *in, BlockLayout l, unsigned width,
                unsigned char *out);

/// [parts, outer, inner] -> [outer, parts, inner]: the inverse of packBlocks.
void unpackBlocks(const unsigned char *in, BlockLayout l, unsigned width,
                  unsigned char *out);

/// Folds `numParts` contiguous arrays of `count` elements of `dtype` into
/// `out` in order, with reduceElements' arithmetic (acc = x0; acc = acc op
/// x1; ...), so results match the simulator bit for bit.
void foldInOrder(const unsigned char *parts, int64_t numParts, int64_t count,
                 DType dtype, Reduction kind, unsigned char *out);
/// foldInOrder of arrays that are not contiguous: `parts[i]` is part i.
void foldInOrder(llvm::ArrayRef<const unsigned char *> parts, int64_t count,
                 DType dtype, Reduction kind, unsigned char *out);

} // namespace shardc::detail

#endif // SHARDC_LIB_RUNTIME_MPIPACKING_H
