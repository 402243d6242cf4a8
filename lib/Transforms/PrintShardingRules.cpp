//===- PrintShardingRules.cpp - each op's rule as an attribute ------------===//
//
// A test pass: every op's rule (ShardingRuleOpInterface) becomes visible in
// the IR, so test/Dialect/sharding-rules.mlir pins every one of them.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardingRule.h"
#include "shardc/Transforms/Passes.h"

namespace shardc {
#define GEN_PASS_DEF_SHARDCPRINTSHARDINGRULES
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;

namespace {
struct PrintShardingRulesPass
    : shardc::impl::ShardcPrintShardingRulesBase<PrintShardingRulesPass> {
  void runOnOperation() override {
    WalkResult walk = getOperation()->walk([](Operation *op) {
      auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
      if (!ruled)
        return WalkResult::advance();
      ShardingRule rule = ruled.getShardingRule();
      std::string why;
      if (!rule.matchesOp(op, why)) {
        op->emitError("internal error: the sharding rule ")
            << rule.str() << " does not fit the op: " << why;
        return WalkResult::interrupt();
      }
      op->setAttr("sharding_rule",
                  ShardingRuleAttr::get(op->getContext(), rule));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
