// RUN: shardc-opt --shardc-propagate %s | FileCheck %s
// Plans on a 2D mesh.

shardc.mesh @mesh ["y"=4, "x"=2]
shardc.mesh @dp ["data"=4]

// 2D MLP: x and w0 are both split over ("y", "x"). In h = x @ w0, i takes
// "y" (from x) and j takes "x" (from w0); the contracting factor k is claimed
// as "x" by x and as "y" by w0, and loses both axes to the parallel factors.
// CHECK-LABEL: func.func @mlp_2d
func.func @mlp_2d(%x: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>},
                  %w0: tensor<64x128xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>},
                  %w1: tensor<128x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {"y"}]>})
    -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}) {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}
  %h = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
  // CHECK: shardc.relu {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}
  %u = shardc.relu %h : tensor<16x128xf32>
  // The second matmul's result is returned: the output sharding is the
  // value's (like JAX's out_shardings), so it is [{"y"}, {"x"}] however the
  // factors would otherwise merge; the partitioner then computes it partial
  // over "x" and reduce-scatters it.
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"}]>}
  %o = shardc.matmul %u, %w1 : (tensor<16x128xf32>, tensor<128x64xf32>) -> tensor<16x64xf32>
  return %o : tensor<16x64xf32>
}

// Data parallel, on a mesh of its own: batch over "data", weights
// replicated: every activation is [{"data"}, {}], but the returned value is
// replicated as the output annotation says.
// CHECK-LABEL: func.func @data_parallel
// CHECK-SAME: %{{.*}}: tensor<64xf32> {shardc.sharding = #shardc.sharding<@dp, [{}]>}
func.func @data_parallel(%x: tensor<32x64xf32> {shardc.sharding = #shardc.sharding<@dp, [{"data"}, {}]>},
                         %w0: tensor<64x128xf32> {shardc.sharding = #shardc.sharding<@dp, [{}, {}]>},
                         %w1: tensor<128x64xf32> {shardc.sharding = #shardc.sharding<@dp, [{}, {}]>},
                         %b: tensor<64xf32>)
    -> (tensor<32x64xf32> {shardc.sharding = #shardc.sharding<@dp, [{}, {}]>}) {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@dp, [{"data"}, {}]>}
  %h = shardc.matmul %x, %w0 : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
  // CHECK: shardc.tanh {{.*}} {shardc.sharding = #shardc.sharding<@dp, [{"data"}, {}]>}
  %t = shardc.tanh %h : tensor<32x128xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@dp, [{"data"}, {}]>}
  %o = shardc.matmul %t, %w1 : (tensor<32x128xf32>, tensor<128x64xf32>) -> tensor<32x64xf32>
  // CHECK: shardc.broadcast_in_dim {{.*}} {shardc.sharding = #shardc.sharding<@dp, [{"data"}, {}]>}
  %bb = shardc.broadcast_in_dim %b dims = [1] : (tensor<64xf32>) -> tensor<32x64xf32>
  // CHECK: shardc.sub {{.*}} {shardc.sharding = #shardc.sharding<@dp, [{"data"}, {}]>}
  %s = shardc.sub %o, %bb : tensor<32x64xf32>
  // A per-example loss: reduce over the features keeps the batch split.
  // CHECK: shardc.reduce_sum {{.*}} {shardc.sharding = #shardc.sharding<@dp, [{"data"}]>}
  %l = shardc.reduce_sum %s dims = [1] : (tensor<32x64xf32>) -> tensor<32xf32>
  // CHECK: shardc.broadcast_in_dim {{.*}} {shardc.sharding = #shardc.sharding<@dp, [{"data"}, {}]>}
  %lb = shardc.broadcast_in_dim %l dims = [0] : (tensor<32xf32>) -> tensor<32x64xf32>
  // The returned value takes the output's sharding (replicated).
  // CHECK: shardc.mul {{.*}} {shardc.sharding = #shardc.sharding<@dp, [{}, {}]>}
  %m = shardc.mul %s, %lb : tensor<32x64xf32>
  return %m : tensor<32x64xf32>
}

// Attention: Q/K/V projections split by columns over "x" (heads), so the
// per-head scores and outputs are split over "x" by head; the output
// projection's weight follows by rows.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: %{{.*}}: tensor<64x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>}
func.func @attention(%x: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>},
                     %wq: tensor<64x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>},
                     %wk: tensor<64x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>},
                     %wv: tensor<64x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>},
                     %wo: tensor<64x64xf32>)
    -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}) {
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>}
  %q = shardc.matmul %x, %wq : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>}
  %k = shardc.matmul %x, %wk : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>}
  %v = shardc.matmul %x, %wv : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  // [seq, heads * head_dim] -> [seq, heads, head_dim]: "x" goes to heads.
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}, {}]>}
  %q3 = shardc.reshape %q : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}, {}]>}
  %k3 = shardc.reshape %k : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}, {}]>}
  %v3 = shardc.reshape %v : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  // CHECK: shardc.transpose {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {}]>}
  %qh = shardc.transpose %q3 permutation = [1, 0, 2] : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  // CHECK: shardc.transpose {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {}]>}
  %kh = shardc.transpose %k3 permutation = [1, 0, 2] : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  // CHECK: shardc.transpose {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {}]>}
  %vh = shardc.transpose %v3 permutation = [1, 0, 2] : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  // scores[h, q, k] = sum_d qh[h, q, d] kh[h, k, d]
  // CHECK: shardc.dot_general {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {}]>}
  %s = shardc.dot_general %qh, %kh batch = [0] x [0], contract = [2] x [2] : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  // softmax over k
  // CHECK: shardc.reduce_max {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>}
  %mx = shardc.reduce_max %s dims = [2] : (tensor<4x16x16xf32>) -> tensor<4x16xf32>
  // CHECK: shardc.broadcast_in_dim {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {}]>}
  %mxb = shardc.broadcast_in_dim %mx dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x16xf32>
  // CHECK: shardc.sub {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {}]>}
  %sh = shardc.sub %s, %mxb : tensor<4x16x16xf32>
  // CHECK: shardc.exp {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {}]>}
  %e = shardc.exp %sh : tensor<4x16x16xf32>
  // CHECK: shardc.reduce_sum {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}]>}
  %den = shardc.reduce_sum %e dims = [2] : (tensor<4x16x16xf32>) -> tensor<4x16xf32>
  // CHECK: shardc.broadcast_in_dim {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {}]>}
  %denb = shardc.broadcast_in_dim %den dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x16xf32>
  // CHECK: shardc.div {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {}]>}
  %p = shardc.div %e, %denb : tensor<4x16x16xf32>
  // heads[h, q, d] = sum_k p[h, q, k] vh[h, k, d]
  // CHECK: shardc.dot_general {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {}, {}]>}
  %o = shardc.dot_general %p, %vh batch = [0] x [0], contract = [2] x [1] : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  // CHECK: shardc.transpose {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}, {}]>}
  %ot = shardc.transpose %o permutation = [1, 0, 2] : (tensor<4x16x16xf32>) -> tensor<16x4x16xf32>
  // [seq, heads, head_dim] -> [seq, heads * head_dim]: a major-axis split of
  // the merged dim is kept.
  // CHECK: shardc.reshape {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {"x"}]>}
  %o2 = shardc.reshape %ot : (tensor<16x4x16xf32>) -> tensor<16x64xf32>
  // CHECK: shardc.matmul {{.*}} {shardc.sharding = #shardc.sharding<@mesh, [{}, {}]>}
  %y = shardc.matmul %o2, %wo : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
