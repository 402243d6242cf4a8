// RUN: shardc-opt %s --split-input-file --verify-diagnostics
// Every verifier error of the composite ops, one per split.

func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for 'tensor<2x3xf32>'}}
  %y = shardc.softmax %x axis = 2 : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis -3 is out of range for 'tensor<2x3xf32>'}}
  %y = shardc.log_softmax %x axis = -3 : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{layer_norm axis 2 is out of range for rank 2}}
  %y = shardc.layer_norm %x, %g, %g axes = [2] epsilon = 1.0e-05 : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{layer_norm names dim 1 twice}}
  %y = shardc.layer_norm %x, %g, %g axes = [1, -1] epsilon = 1.0e-05 : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{layer_norm needs at least one axis}}
  %y = shardc.layer_norm %x, %g, %g axes = [] epsilon = 1.0e-05 : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{layer_norm beta must be tensor<3xf32> (the normalized dims of the operand), not tensor<2xf32>}}
  %y = shardc.layer_norm %x, %g, %b axes = [1] epsilon = 1.0e-05 : (tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{rms_norm epsilon must be >= 0}}
  %y = shardc.rms_norm %x, %g axes = [1] epsilon = -1.0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{mean axis 5 is out of range for rank 2}}
  %y = shardc.mean %x dims = [5] : (tensor<2x3xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>, %l: tensor<2xf32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{cross_entropy labels must be i32 or i64 class ids}}
  %y = shardc.cross_entropy %x, %l : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @f(%x: tensor<2x3xf32>, %l: tensor<3xi32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{cross_entropy labels must have the shape of the logits without the class dim: tensor<3xi32> does not fit logits tensor<2x3xf32>}}
  %y = shardc.cross_entropy %x, %l : (tensor<2x3xf32>, tensor<3xi32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @f(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{'shardc.softmax' op operand #0 must be statically shaped tensor of floating-point}}
  %y = shardc.softmax %x axis = 0 : tensor<2x3xi32>
  return %y : tensor<2x3xi32>
}
