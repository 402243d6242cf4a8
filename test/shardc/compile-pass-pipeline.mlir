// `shardc compile --pass-pipeline` runs the pipeline on the model's module,
// written as MLIR prints it, `builtin.module(...)`, or without that anchor.
// The anchored form used to be parsed as a pipeline for modules nested in
// the model's module, and ran nothing with exit code 0.
// RUN: shardc compile %s --pass-pipeline='builtin.module(func.func(shardc-cleanup))' | FileCheck %s --check-prefix=CLEANUP
// RUN: shardc compile %s --pass-pipeline='func.func(shardc-cleanup)' | FileCheck %s --check-prefix=CLEANUP
// CLEANUP-LABEL: func.func @main
// CLEANUP-NOT: shardc.all_gather
// CLEANUP-NOT: shardc.all_slice
// CLEANUP: return %arg0

// The examples of `shardc compile --help` and docs/cli.md.
// RUN: shardc compile %s --pass-pipeline='builtin.module(canonicalize)' -o %t.json
// RUN: shardc compile %examples/megatron_mlp.json --pass-pipeline='builtin.module(shardc-propagate,shardc-partition)' | FileCheck %s --check-prefix=PARTITION
// PARTITION: shardc.spmd
// PARTITION: shardc.all_reduce

// What cannot run is an error, not an empty success.
// RUN: not shardc compile %s --pass-pipeline='builtin.module(builtin.module(func.func(shardc-cleanup)))' 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: shardc: error: bad --pass-pipeline: a model is one module, with no modules inside it
// RUN: not shardc compile %s --pass-pipeline='builtin.module(shardc-cleanup)' 2>&1 | FileCheck %s --check-prefix=UNNESTED
// UNNESTED: shardc: error: bad --pass-pipeline: Can't add pass 'ShardcCleanup' restricted to 'func.func' on a PassManager intended to run on 'builtin.module', did you intend to nest?
// RUN: not shardc compile %s --pass-pipeline='builtin.module(bogus)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: shardc: error: bad --pass-pipeline: {{.*}}'bogus' does not refer to a registered pass or pass pipeline

shardc.mesh @mesh ["x"=2]
func.func @main(%a: tensor<4x32xf32>) -> tensor<4x32xf32> attributes {shardc.spmd} {
  %g = shardc.all_gather %a on @mesh axes = ["x"] dim = 1 : tensor<4x32xf32> -> tensor<4x64xf32>
  %s = shardc.all_slice %g on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
  return %s : tensor<4x32xf32>
}
