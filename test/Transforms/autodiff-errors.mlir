// Programs the pass refuses, each with a diagnostic at the culprit.
// RUN: shardc-opt --shardc-autodiff --split-input-file --verify-diagnostics %s
// RUN: not shardc-opt --shardc-autodiff='wrt=w,nope,bad' --split-input-file %s 2>&1 | FileCheck %s --check-prefix=WRT

// WRT: error: autodiff: @good has no input named 'nope', 'bad' (wrt); its inputs are: w, arg1

shardc.mesh @mesh ["x"=2]
// expected-error @+1 {{cannot differentiate @partitioned: it is already partitioned (shardc.spmd)}}
func.func @partitioned(%a: tensor<4xf32> {shardc.name = "a"}) -> tensor<4xf32> attributes {shardc.spmd} {
  return %a : tensor<4xf32>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @collective(%a: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{cannot differentiate a partitioned program: 'shardc.all_gather' is a collective}}
  %g = shardc.all_gather %a on @mesh axes = ["x"] dim = 0 : tensor<4xf32> -> tensor<8xf32>
  return %g : tensor<8xf32>
}

// -----

func.func private @opaque(tensor<4xf32>) -> tensor<4xf32>
func.func @call(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'func.call' has no gradient rule (DifferentiableOpInterface), so @call cannot be differentiated}}
  %r = func.call @opaque(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Differentiable: only the WRT run, with unknown names, fails on it.
func.func @good(%w: tensor<4xf32> {shardc.name = "w"}, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = shardc.add %w, %b : tensor<4xf32>
  return %r : tensor<4xf32>
}
