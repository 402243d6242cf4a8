//===- CollectiveShapes.h - a collective's dims and pairs -------*- C++ -*-===//
//
// A collective's dims, its pairs and the result shape they give, in one
// place (lib/Dialect/CollectiveOps.cpp). The verifiers call these once the
// module and its mesh exist; the JSON importer calls them on the op it has
// just built, to give the result its type and report a bad field at the
// entry; the interpreter calls them before it hands a block to the
// communicator. Each caller says where a problem is in its own terms (an
// op, a JSON field), so a problem names the attribute at fault rather than
// being emitted here.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_COLLECTIVESHAPES_H
#define SHARDC_DIALECT_COLLECTIVESHAPES_H

#include "shardc/Dialect/CollectiveOpInterface.h"

#include <optional>
#include <string>

namespace shardc {

/// The kind whose op mnemonic is `mnemonic` ("all_gather", ...), the inverse
/// of stringifyCollectiveKind.
std::optional<CollectiveKind> symbolizeCollectiveKind(llvm::StringRef mnemonic);

/// True for the kinds that concatenate the group's blocks along a dim
/// (all_gather, all_to_all): only their result may drop the padding of an
/// uneven dim, so only they may be told the size they keep.
bool concatenatesBlocks(CollectiveKind kind);

/// The dim `op` cuts into its group's blocks (reduce_scatter's and
/// all_slice's `dim`, all_to_all's `split_dim`), or -1.
int64_t getCutDim(CollectiveOpInterface op);

/// The dim `op` concatenates its group's blocks along (all_gather's `dim`,
/// all_to_all's `concat_dim`), or -1.
int64_t getConcatenatedDim(CollectiveOpInterface op);

/// What is wrong with a collective's attributes.
struct CollectiveProblem {
  /// The attribute at fault, by its ODS name ("dim", "split_dim",
  /// "concat_dim", "pairs").
  std::string attribute;
  /// The entry of a list attribute at fault (a pair of `pairs`), or -1.
  int64_t index = -1;
  /// Why, as a sentence without the op's name ("dim 2 is out of range for
  /// rank 2").
  std::string message;
};

/// Checks `op`'s attributes against an operand of shape `input` and a group
/// of `groupSize` devices: its dims index the operand, all_to_all's two
/// differ, a concatenated dim's size fits in 64 bits, and
/// collective_permute's pairs are [source, target] group indices, no
/// source and no target twice. Mesh and axes are the caller's (they need
/// the mesh, which the interpreter and the importer hold in forms of
/// their own).
std::optional<CollectiveProblem> checkCollective(CollectiveOpInterface op,
                                                 llvm::ArrayRef<int64_t> input,
                                                 int64_t groupSize);

/// The sizes a dim concatenated from `groupSize` blocks of `block` elements
/// may have, `{lowest, highest}`: the whole blocks, or fewer elements where
/// the rest is the padding of an uneven dim (docs/sharding.md#uneven-dims),
/// as long as the size's padded blocks are still `block`.
std::pair<int64_t, int64_t> concatenatedSizes(int64_t block, int64_t groupSize);

/// The result shape of `op` (whose attributes checkCollective accepted) on
/// an operand of shape `input` over a group of `groupSize` devices: the cut
/// dim becomes ceil(size / groupSize), the concatenated dim
/// `concatenatedSize` when given (one of concatenatedSizes) or the whole
/// blocks end to end.
llvm::SmallVector<int64_t>
getCollectiveResultShape(CollectiveOpInterface op,
                         llvm::ArrayRef<int64_t> input, int64_t groupSize,
                         std::optional<int64_t> concatenatedSize = {});

} // namespace shardc

#endif // SHARDC_DIALECT_COLLECTIVESHAPES_H
