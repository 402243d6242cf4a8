//===- GraphVariant.h - a JSON graph at another batch and depth -*- C++ -*-===//
//
// The whole-plan search (PlanSearch.h) prices a model at many micro-batch
// sizes and data-parallel degrees, and prices it on a representative
// problem of one and two layers instead of all of them. Both are rewrites of
// the JSON graph (docs/json-format.md) before it is imported:
//
//  - the batch: dim 0 of the inputs the model splits over the data axis
//    (`"sharding": ["data", ...]`), and the leading dim of every `shape`
//    literal that equals it (a broadcast mask, a constant), become the new
//    batch;
//  - the depth: the layer inputs (the op outputs the layer-input pattern
//    names, as full recompute does: `x0`, then `h<l>_res2`) cut the forward
//    pass into layers; the variant keeps the first k and feeds what read the
//    last layer's output from the k-th, and drops the inputs nothing reads;
//  - the inputs' shardings: a variant may replace every input's annotation
//    with one chosen for the layer it belongs to (the tensor auto-sharder's
//    plan of the first layer, given to every layer alike).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_GRAPHVARIANT_H
#define SHARDC_DRIVER_GRAPHVARIANT_H

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <utility>
#include <vector>

namespace shardc {

class GraphVariant {
public:
  /// Reads the graph and finds its batch and layers; an error names what is
  /// missing (no input split over `dataAxis`, inputs that disagree on the
  /// batch, a layer-input pattern that does not compile).
  static llvm::Expected<GraphVariant> parse(llvm::StringRef text,
                                            llvm::StringRef dataAxis,
                                            llvm::StringRef layerInputs);

  /// The batch of the graph as written: dim 0 of its inputs split over the
  /// data axis, or, in a model splitting none, of its inputs not marked
  /// `param` (the data a step reads).

  int64_t batch() const { return graphBatch; }
  /// Layers between the first and the last layer input (0: none found).
  int64_t layers() const { return numLayers; }
  /// Elements of the inputs marked `param`, all layers.
  double parameters() const { return numParameters; }
  /// The inputs' annotations, for a plan's rules: (name, spec) where spec
  /// is the input's `sharding` entry.
  const std::vector<std::pair<std::string, llvm::json::Value>> &
  annotations() const {
    return inputAnnotations;
  }
  /// The residual stream: the layer inputs and the `add`s that carry one
  /// on to the next (a layer's `x + attention`, then `+ mlp`), by output
  /// name — what sequence parallelism splits along the sequence.
  const std::vector<std::string> &residualStream() const {
    return residualNames;
  }
  /// Every size a `modelAxis` annotation splits (a candidate size must
  /// divide them all).
  std::vector<int64_t> splitByModelAxis(llvm::StringRef modelAxis) const;
  /// The inputs' names, in order.
  std::vector<std::string> inputNames() const;
  /// Whether `input` carries the batch along dim 0 (batch() is its size).
  bool carriesBatch(llvm::StringRef input) const {
    return llvm::is_contained(batchInputs, input);
  }
  /// The input of the first layer an input of a later layer stands for: the
  /// one the first layer reads in the same turn (the k-th input a layer's
  /// ops read first) with the same shape; the input itself otherwise (one
  /// read before the layers, after them, or by the first layer).
  llvm::StringRef firstLayerPeer(llvm::StringRef input) const;

  /// Input shardings by name (a PartitionSpec as docs/json-format.md writes
  /// it); what a variant gives every input instead of its annotation.
  using InputShardings = llvm::StringMap<llvm::json::Value>;

  /// The graph with batch `batch`, `keptLayers` layers (all when at least
  /// layers()), and the mesh `axes` (major to minor) — as JSON text. With
  /// `shardings`, every input takes the sharding given for it or for its
  /// first-layer peer (none when neither is given), and the ops and
  /// outputs lose theirs (a `sharding_constraint`, which is the program,
  /// keeps its own).
  std::string variant(int64_t batch, int64_t keptLayers,
                      const std::vector<std::pair<std::string, int64_t>> &axes,
                      const InputShardings *shardings = nullptr) const;

private:
  llvm::json::Object root;
  int64_t graphBatch = 0;
  int64_t numLayers = 0;
  double numParameters = 0;
  /// Indices into "ops" of the ops making each layer input, in order.
  std::vector<size_t> layerInputOps;
  std::vector<std::pair<std::string, llvm::json::Value>> inputAnnotations;
  std::vector<std::string> residualNames;
  /// The inputs that carry the batch along dim 0.
  std::vector<std::string> batchInputs;
  /// firstLayerPeer's answers, for the inputs of layers after the first.
  llvm::StringMap<std::string> peers;
};

} // namespace shardc

#endif // SHARDC_DRIVER_GRAPHVARIANT_H
