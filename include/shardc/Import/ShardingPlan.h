//===- ShardingPlan.h - shardings given by name patterns --------*- C++ -*-===//
//
// How users say where tensors go without editing the model: a mesh and an
// ordered list of rules from name patterns to PartitionSpecs, as DTensor's
// parallelize_module plans and MaxText's logical-axis rules do
// (docs/plans.md):
//
//   {"mesh": {"name": "mesh", "axes": [["data", 2], ["model", 2]]},
//    "rules": [["blocks.*.fc.weight", ["model", null]],
//              ["idx", ["data", null]]]}
//
// A pattern is a glob over value names: `*` matches within one dotted
// component, `**` across components. Each named value (an input, or an op
// result the model names) takes the PartitionSpec of the first rule its
// name matches. The plan applies before propagation, to any model (.onnx,
// .json, .mlir), replacing its mesh.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_IMPORT_SHARDINGPLAN_H
#define SHARDC_IMPORT_SHARDINGPLAN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardc {

struct ShardingPlan {
  struct Rule {
    std::string pattern;
    /// The mesh axes splitting each dim, major to minor (empty: not split).
    std::vector<llvm::SmallVector<std::string>> dims;
  };
  /// Empty: keep the model's mesh name.
  std::string meshName;
  std::vector<std::pair<std::string, int64_t>> axes;
  std::vector<Rule> rules;
  /// How the plan runs, when it says (a plan `estimate --auto-shard`
  /// saved): read by `estimate`, which takes each as the default of its
  /// option; the other commands run the shardings and ignore them.
  struct Execution {
    std::optional<std::string> pipelineAxis, schedule, recompute;
    std::optional<int64_t> microBatchSize, microbatches, globalBatch;
    /// pipeline.virtual_stages: the interleaved schedule's chunks per
    /// device.
    std::optional<int64_t> virtualStages;
    std::vector<std::string> zeroAxes;
    bool sequenceParallel = false;
  } execution;
};

/// Parses a plan; the error message says where in the plan the problem is
/// (`rules[2][1]: ...`).
llvm::Expected<ShardingPlan> parseShardingPlan(llvm::StringRef text);

/// Reads and parses plan file `path` (errors name the file).
llvm::Expected<ShardingPlan> readShardingPlan(llvm::StringRef path);

/// True if `name` matches glob `pattern` (`*` within a dotted component,
/// `**` across them; every other character stands for itself).
bool matchesPlanPattern(llvm::StringRef pattern, llvm::StringRef name);

/// Gives the model the plan's mesh and every named value of its entry
/// function the sharding of the first rule matching its name. A rule that
/// matches no value, or whose PartitionSpec does not fit a value it matches
/// (rank, unknown axes, sizes the axes do not divide) is an error naming
/// the rule; so is an existing annotation the new mesh cannot hold.
/// `planName` names the plan in messages.
llvm::Error applyShardingPlan(mlir::ModuleOp module, const ShardingPlan &plan,
                              llvm::StringRef planName);

} // namespace shardc

#endif // SHARDC_IMPORT_SHARDINGPLAN_H
