// RUN: shardc-opt %s | FileCheck %s
// RUN: shardc-opt %s | shardc-opt | FileCheck %s
// #shardc.sharding builds its text itself, except for a mesh name MLIR must
// quote: both print back to what they parsed from.

// CHECK: shardc.mesh @"my mesh" ["x"=2, "y.z"=2]
shardc.mesh @"my mesh" ["x"=2, "y.z"=2]
// CHECK: shardc.mesh @m_1.b$ ["x"=2]
shardc.mesh @m_1.b$ ["x"=2]

// CHECK-LABEL: func.func @quoted
// CHECK-SAME: {shardc.sharding = #shardc.sharding<@"my mesh", [{"x", "y.z"}, {}]>}
func.func @quoted(%a: tensor<4x4xf32> {shardc.sharding = #shardc.sharding<@"my mesh", [{"x", "y.z"}, {}], partial = {}>}) -> tensor<4x4xf32> {
  // CHECK: {shardc.sharding = #shardc.sharding<@"my mesh", [{}, {}], partial = {"x"}>}
  %0 = shardc.relu %a {shardc.sharding = #shardc.sharding<@"my mesh", [{}, {}], partial = {"x"}>} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @bare
// CHECK-SAME: {shardc.sharding = #shardc.sharding<@m_1.b$, [{"x"}]>}
func.func @bare(%a: tensor<4xf32> {shardc.sharding = #shardc.sharding<@m_1.b$, [{"x"}]>}) -> tensor<4xf32> {
  // CHECK: {shardc.sharding = #shardc.sharding<@m_1.b$, [], partial = {"x"}>}
  %s = shardc.reduce_sum %a dims = [0] {shardc.sharding = #shardc.sharding<@m_1.b$, [], partial = {"x"}>} : (tensor<4xf32>) -> tensor<f32>
  return %a : tensor<4xf32>
}
