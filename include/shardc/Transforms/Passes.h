//===- Passes.h - shardc passes ---------------------------------*- C++ -*-===//
//
// The passes (declared in Passes.td) and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TRANSFORMS_PASSES_H
#define SHARDC_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace shardc {

#define GEN_PASS_DECL
#include "shardc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "shardc/Transforms/Passes.h.inc"

} // namespace shardc

#endif // SHARDC_TRANSFORMS_PASSES_H
