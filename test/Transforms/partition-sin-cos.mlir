// RUN: shardc-opt --shardc-partition-pipeline %s | FileCheck %s
// sin and cos are elementwise: angles split by rows (RoPE's positions) are
// computed where they are, each device on its rows, with no collective.

shardc.mesh @mesh ["x"=2]

// CHECK-LABEL: func.func @main
// CHECK-NOT: shardc.all_
// CHECK: shardc.sin %arg0 {{.*}}: tensor<4x16xf32>
// CHECK-NOT: shardc.all_
// CHECK: shardc.cos %arg0 {{.*}}: tensor<4x16xf32>
// CHECK-NOT: shardc.all_
// CHECK: return
func.func @main(%a: tensor<8x16xf32> {shardc.name = "angles", shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %s = shardc.sin %a : tensor<8x16xf32>
  %c = shardc.cos %a : tensor<8x16xf32>
  return %s, %c : tensor<8x16xf32>, tensor<8x16xf32>
}
