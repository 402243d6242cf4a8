//===- FuzzContext.h - the MLIR context the fuzz harnesses share -*- C++ -*-===//
//
// A context with the dialects `shardc` loads, diagnostics swallowed (a
// diagnostic is the right answer to a bad input, not a finding), and a fresh
// one every few hundred inputs, since a context never frees the attributes
// and types it uniques and a long fuzzing run would otherwise only grow.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_FUZZ_FUZZCONTEXT_H
#define SHARDC_FUZZ_FUZZCONTEXT_H

#include "mlir/IR/MLIRContext.h"

namespace shardc::fuzz {

/// The context for the next input; valid until the next call.
mlir::MLIRContext &nextFuzzContext();

} // namespace shardc::fuzz

#endif // SHARDC_FUZZ_FUZZCONTEXT_H
