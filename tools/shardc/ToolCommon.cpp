//===- ToolCommon.cpp - what the shardc subcommands share -----------------===//

#include "ToolCommon.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Transforms/Passes.h"

using namespace mlir;
