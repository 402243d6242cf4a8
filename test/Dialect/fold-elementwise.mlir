// RUN: shardc-opt --canonicalize %s | FileCheck %s
// An elementwise op whose operands are constants folds to a constant,
// computed by its own kernel (shardc/Dialect/ElementwiseKernel.h, which the
// interpreter runs too): f32, and i32 and i64 for the ops declared with
// `integers`. Other element types are left to the run.

// CHECK-LABEL: func.func @add_f32
// CHECK-NEXT: %[[C:.*]] = shardc.constant dense<[4.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: return %[[C]]
func.func @add_f32() -> tensor<2xf32> {
  %a = shardc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = shardc.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %c = shardc.add %a, %b : tensor<2xf32>
  return %c : tensor<2xf32>
}

// A splat with a dense operand is computed element by element; splats
// alone give a splat.
// CHECK-LABEL: func.func @splats
// CHECK-DAG: shardc.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-DAG: shardc.constant dense<1.000000e+00> : tensor<1000x1000xf32>
// CHECK-NOT: shardc.mul
// CHECK-NOT: shardc.exp
func.func @splats() -> (tensor<2xf32>, tensor<1000x1000xf32>) {
  %one = shardc.constant dense<1.0> : tensor<2xf32>
  %v = shardc.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %m = shardc.mul %one, %v : tensor<2xf32>
  %z = shardc.constant dense<0.0> : tensor<1000x1000xf32>
  %e = shardc.exp %z : tensor<1000x1000xf32>
  return %m, %e : tensor<2xf32>, tensor<1000x1000xf32>
}

// Integer division truncates; x / 0 is -1 and the most negative value
// divided by -1 is itself. max and min are signed.
// CHECK-LABEL: func.func @integer_div_max_min
// CHECK-DAG: shardc.constant dense<[3, -3, -1, -9223372036854775808, 0]> : tensor<5xi64>
// CHECK-DAG: shardc.constant dense<[7, 2, 7, -1, 5]> : tensor<5xi64>
// CHECK-DAG: shardc.constant dense<[2, -7, 0, -9223372036854775808, -3]> : tensor<5xi64>
// CHECK-NOT: shardc.div
func.func @integer_div_max_min() -> (tensor<5xi64>, tensor<5xi64>, tensor<5xi64>) {
  %a = shardc.constant dense<[7, -7, 7, -9223372036854775808, -3]> : tensor<5xi64>
  %b = shardc.constant dense<[2, 2, 0, -1, 5]> : tensor<5xi64>
  %d = shardc.div %a, %b : tensor<5xi64>
  %x = shardc.max %a, %b : tensor<5xi64>
  %n = shardc.min %a, %b : tensor<5xi64>
  return %d, %x, %n : tensor<5xi64>, tensor<5xi64>, tensor<5xi64>
}

// i32 index arithmetic wraps around.
// CHECK-LABEL: func.func @add_i32_wraps
// CHECK-NEXT: shardc.constant dense<-2147483648> : tensor<i32>
func.func @add_i32_wraps() -> tensor<i32> {
  %a = shardc.constant dense<2147483647> : tensor<i32>
  %b = shardc.constant dense<1> : tensor<i32>
  %c = shardc.add %a, %b : tensor<i32>
  return %c : tensor<i32>
}

// The kernel computes f32 only: an f64 op stays, as does one whose operand
// is not a constant.
// CHECK-LABEL: func.func @not_folded
// CHECK: shardc.add {{.*}} : tensor<2xf64>
// CHECK: shardc.neg %arg0 : tensor<2xf32>
func.func @not_folded(%x: tensor<2xf32>) -> (tensor<2xf64>, tensor<2xf32>) {
  %a = shardc.constant dense<[1.0, 2.0]> : tensor<2xf64>
  %c = shardc.add %a, %a : tensor<2xf64>
  %n = shardc.neg %x : tensor<2xf32>
  return %c, %n : tensor<2xf64>, tensor<2xf32>
}
