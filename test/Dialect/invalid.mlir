// RUN: shardc-opt %s --split-input-file --verify-diagnostics
// Every verifier error of the dialect, one per split, each with its message.

// expected-error @+1 {{axis "x" is declared twice}}
shardc.mesh @mesh ["x"=2, "x"=4]

// -----

// expected-error @+1 {{axis "x" has size 0; sizes must be at least 1}}
shardc.mesh @mesh ["x"=0]

// -----

// expected-error @+1 {{axis "x" has size -3; sizes must be at least 1}}
shardc.mesh @mesh ["x"=-3]

// -----

// expected-error @+1 {{needs at least one axis}}
shardc.mesh @mesh []

// -----

// expected-error @+1 {{mesh has more than 2^20 devices}}
shardc.mesh @mesh ["a"=1024, "b"=2048]

// -----

// expected-error @+1 {{expected integer value}}
shardc.mesh @mesh ["x"=2.5]

// -----

shardc.mesh @mesh ["x"=2]
// expected-error @+1 {{uses unknown mesh axis "z"}}
func.func @unknown_axis(%a: tensor<4x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"z"}, {}]>}) {
  return
}

// -----

shardc.mesh @mesh ["x"=2, "y"=2]
// expected-error @+1 {{mesh axis "x" is used twice in one sharding}}
func.func @axis_twice(%a: tensor<4x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"x"}, {"x"}]>}) {
  return
}

// -----

shardc.mesh @mesh ["x"=2, "y"=2]
// expected-error @+1 {{mesh axis "y" is used twice in one sharding}}
func.func @partial_and_split(%a: tensor<4x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {}], partial = {"y"}>}) {
  return
}

// -----

shardc.mesh @mesh ["x"=2]
// expected-error @+1 {{sharding of argument #0 has 1 dim entries but 'tensor<4x4xf32>' has rank 2}}
func.func @rank_mismatch(%a: tensor<4x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"x"}]>}) {
  return
}

// -----

shardc.mesh @mesh ["x"=4]
// expected-error @+1 {{sharding of input "w" names unknown mesh @nomesh}}
func.func @unknown_mesh(%a: tensor<8x4xf32> {shardc.name = "w", shardc.sharding = #shardc.sharding<@nomesh, [{"x"}, {}]>}) {
  return
}

// -----

shardc.mesh @mesh ["x"=4]
func.func @bad_attr_kind(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'shardc.sharding' must be a #shardc.sharding}}
  %0 = shardc.relu %a {shardc.sharding = 3 : i64} : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @unknown_attr(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{unknown shardc attribute 'shardc.shardings'}}
  %0 = shardc.relu %a {shardc.shardings = 1 : i64} : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @matmul_contracting(%a: tensor<8x4xf32>, %b: tensor<5x2xf32>) -> tensor<8x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{matmul contracting sizes differ: lhs dim 1 is 4, rhs dim 0 is 5}}
  %0 = shardc.matmul %a, %b : (tensor<8x4xf32>, tensor<5x2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x2xf32>) -> tensor<8x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{matmul operands must have the same rank >= 2, got 1 and 2}}
  %0 = shardc.matmul %a, %b : (tensor<8xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

func.func @matmul_wrong_result(%a: tensor<8x4xf32>, %b: tensor<4x2xf32>) -> tensor<8x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<8x2xf32>' are incompatible with return type(s) of operation 'tensor<8x3xf32>'}}
  %0 = shardc.matmul %a, %b : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x8x4xf32>, %b: tensor<3x4x2xf32>) -> tensor<2x8x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{matmul batch dimension 0 differs: 2 vs 3}}
  %0 = shardc.matmul %a, %b : (tensor<2x8x4xf32>, tensor<3x4x2xf32>) -> tensor<2x8x2xf32>
  return %0 : tensor<2x8x2xf32>
}

// -----

func.func @dot_general_pair(%a: tensor<2x8x4xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x8x5xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{dot_general paired dimensions lhs 2 and rhs 1 differ in size}}
  %0 = shardc.dot_general %a, %b batch = [0] x [0], contract = [2] x [1] : (tensor<2x8x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x5xf32>
  return %0 : tensor<2x8x5xf32>
}

// -----

func.func @dot_general_range(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{dot_general lhs dimension 5 is out of range for rank 2}}
  %0 = shardc.dot_general %a, %b batch = [] x [], contract = [5] x [1] : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dot_general_lengths(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{dot_general contracting dimension lists differ in length}}
  %0 = shardc.dot_general %a, %b batch = [] x [], contract = [1] x [] : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @reduce_twice(%a: tensor<2x8xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{reduce dimension 1 is listed twice}}
  %0 = shardc.reduce_sum %a dims = [1, 1] : (tensor<2x8xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @transpose_perm(%a: tensor<2x8xf32>) -> tensor<8x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{transpose permutation has 3 entries but rank is 2}}
  %0 = shardc.transpose %a permutation = [1, 0, 2] : (tensor<2x8xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

func.func @reshape_count(%a: tensor<2x8xf32>) -> tensor<15xf32> {
  // expected-error @+1 {{cannot reshape 'tensor<2x8xf32>' (16 elements) into 'tensor<15xf32>' (15 elements)}}
  %0 = shardc.reshape %a : (tensor<2x8xf32>) -> tensor<15xf32>
  return %0 : tensor<15xf32>
}

// -----

func.func @broadcast_size(%a: tensor<3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{operand dim 0 of size 3 cannot broadcast to result dim 1 of size 8}}
  %0 = shardc.broadcast_in_dim %a dims = [1] : (tensor<3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @broadcast_order(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{dims must be strictly increasing}}
  %0 = shardc.broadcast_in_dim %a dims = [1, 0] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @elementwise_types(%a: tensor<4x8xf32>, %b: tensor<4x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "shardc.add"(%a, %b) : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @integer_tensor(%a: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{'shardc.relu' op operand #0 must be statically shaped tensor of floating-point (f32, f16, bf16 or f64) values whose byte size fits in 63 bits, but got 'tensor<4x8xi32>'}}
  %0 = shardc.relu %a : tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

func.func @dynamic_shape(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{must be statically shaped tensor of floating-point (f32}}
  %0 = shardc.relu %a : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @constraint(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{uses unknown mesh axis "q"}}
  %0 = shardc.sharding_constraint %a <@mesh, [{"q"}, {}]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @gather_type(%a: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{result type 'tensor<4x8xf32>' does not match the expected 'tensor<4x16xf32>'}}
  %0 = shardc.all_gather %a on @mesh axes = ["x"] dim = 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @gather_axis(%a: tensor<4x8xf32>) -> tensor<4x16xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{uses unknown mesh axis "y"}}
  %0 = shardc.all_gather %a on @mesh axes = ["y"] dim = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @gather_mesh(%a: tensor<4x8xf32>) -> tensor<4x16xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{names unknown mesh @other}}
  %0 = shardc.all_gather %a on @other axes = ["x"] dim = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @gather_dim(%a: tensor<4x8xf32>) -> tensor<4x16xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = shardc.all_gather %a on @mesh axes = ["x"] dim = 2 : tensor<4x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @gather_twice(%a: tensor<4x8xf32>) -> tensor<4x32xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{lists mesh axis "x" twice}}
  %0 = shardc.all_gather %a on @mesh axes = ["x", "x"] dim = 1 : tensor<4x8xf32> -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

shardc.mesh @mesh ["x"=4]
// An uneven dim is cut into blocks of ceil(6 / 4) = 2, the last padded.
func.func @scatter_padded(%a: tensor<4x6xf32>) -> tensor<4x1xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{result type 'tensor<4x1xf32>' does not match the expected 'tensor<4x2xf32>'}}
  %0 = shardc.reduce_scatter %a on @mesh axes = ["x"] dim = 1 : tensor<4x6xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @all_to_all_dims(%a: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{split_dim and concat_dim must differ}}
  %0 = shardc.all_to_all %a on @mesh axes = ["x"] split_dim = 1 concat_dim = 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @permute_range(%a: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{pair [0, 2] is outside the group of size 2}}
  %0 = shardc.collective_permute %a on @mesh axes = ["x"] pairs = [[0, 2]] : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

shardc.mesh @mesh ["x"=4]
func.func @permute_dup(%a: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{target 1 appears twice}}
  %0 = shardc.collective_permute %a on @mesh axes = ["x"] pairs = [[0, 1], [2, 1]] : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

shardc.mesh @mesh ["x"=4]
func.func @permute_shape(%a: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{pairs must be a list of [source, target] integer pairs}}
  %0 = shardc.collective_permute %a on @mesh axes = ["x"] pairs = [[0, 1, 2]] : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

shardc.mesh @mesh ["x"=4]
func.func @allreduce_empty(%a: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{needs at least one mesh axis}}
  %0 = shardc.all_reduce %a on @mesh axes = [] : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{'shardc.buffers' is an array of strings (the names of buffers) on a module}}
module attributes {shardc.buffers = ["mask", 1 : i64]} {
}

// -----

func.func @buffers_on_a_function() attributes {shardc.buffers = ["mask"]} {
  // expected-error @-1 {{'shardc.buffers' is an array of strings}}
  return
}

// -----

// expected-error @+1 {{'shardc.spmd' is a unit attribute of func.func}}
func.func @spmd_value() attributes {shardc.spmd = 1 : i64} {
  return
}

// -----

// expected-error @+1 {{expected '<'}}
func.func @bad_sharding_syntax(%a: tensor<4xf32> {shardc.sharding = #shardc.sharding}) {
  return
}

// -----

// expected-error @+1 {{sharding axes must be non-empty strings}}
func.func @empty_axis(%a: tensor<4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{""}]>}) {
  return
}

// -----

func.func @huge(%a: tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x4xf32> {
  // expected-error @+1 {{whose byte size fits in 63 bits}}
  %0 = shardc.relu %a : tensor<4611686018427387904x4xf32>
  return %0 : tensor<4611686018427387904x4xf32>
}

// -----

func.func @bool_sum(%a: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{cannot sum i1 values; reduce booleans with #shardc.reduction<max> (or)}}
  %0 = shardc.all_reduce %a on @mesh axes = ["x"] : tensor<4xi1>
  return %0 : tensor<4xi1>
}
shardc.mesh @mesh ["x"=2]

// -----

func.func @compare_direction(%a: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+2 {{compare direction must be one of "EQ", "NE", "LT", "LE", "GT", "GE"}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = shardc.compare %a, %a direction = "LESS" : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @select_pred(%p: tensor<4xi32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of i1 values}}
  %0 = shardc.select %p, %a, %a : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @iota_dimension() -> tensor<4xi32> {
  // expected-error @+1 {{'shardc.iota' op dimension 1 is out of range for 'tensor<4xi32>'}}
  %0 = shardc.iota dimension = 1 : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @slice_out_of_range(%a: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{slice of dim 1 (size 8) from 6 to 10 is out of range (0 <= start <= limit <= size)}}
  %0 = shardc.slice %a start = [0, 6] limit = [4, 10] : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @slice_stride(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{slice stride of dim 0 is 0; it must be >= 1}}
  %0 = shardc.slice %a start = [0, 0] limit = [4, 8] stride = [0, 1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @slice_rank(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{slice limit has 1 entries but the operand has rank 2}}
  %0 = shardc.slice %a start = [0, 0] limit = [4] : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_result(%a: tensor<4x8xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<4x2xf32>' are incompatible with return type(s) of operation 'tensor<4x3xf32>'}}
  %0 = shardc.slice %a start = [0, 0] limit = [4, 4] stride = [1, 2] : (tensor<4x8xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concatenate_mismatch(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{concatenate operand #1 has size 3 in dim 0 but operand #0 has 4 (only dim 1 may differ)}}
  %0 = shardc.concatenate %a, %b dimension = 1 : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @concatenate_dim(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{concatenate dimension 2 is out of range for rank 2}}
  %0 = shardc.concatenate %a dimension = 2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @concatenate_none() -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{concatenate needs at least one operand}}
  %0 = shardc.concatenate dimension = 0 : () -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @pad_negative(%a: tensor<4x8xf32>, %z: tensor<f32>) -> tensor<3x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{pad amounts of dim 0 must be >= 0 (low -1, high 0, interior 0)}}
  %0 = shardc.pad %a, %z low = [-1, 0] high = [0, 0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

func.func @pad_value(%a: tensor<4x8xf32>, %z: tensor<1xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{pad padding_value must be a 0-d tensor of the operand's element type}}
  %0 = shardc.pad %a, %z low = [0, 0] high = [0, 0] : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @gather_float_ids(%t: tensor<16x8xf32>, %i: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of i32 or i64 indices}}
  %0 = shardc.gather %t, %i axis = 0 : (tensor<16x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @gather_axis_range(%t: tensor<16x8xf32>, %i: tensor<4xi32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{gather axis -1 is out of range for a table of rank 2}}
  %0 = shardc.gather %t, %i axis = -1 : (tensor<16x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @gather_result(%t: tensor<16x8xf32>, %i: tensor<4xi32>) -> tensor<8x4xf32> {
  // expected-error @+2 {{'shardc.gather' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<8x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = shardc.gather %t, %i axis = 0 : (tensor<16x8xf32>, tensor<4xi32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @scatter_add_element_type(%t: tensor<16x8xf32>, %i: tensor<4xi32>, %u: tensor<4x8xbf16>) -> tensor<16x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{scatter_add updates must have the table's element type}}
  %0 = shardc.scatter_add %t, %i, %u axis = 0 : (tensor<16x8xf32>, tensor<4xi32>, tensor<4x8xbf16>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @axis_index_axis() -> tensor<i64> attributes {shardc.spmd} {
  // expected-error @+1 {{uses unknown mesh axis "y"}}
  %0 = shardc.axis_index on @mesh axes = ["y"] : tensor<i64>
  return %0 : tensor<i64>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @axis_index_twice() -> tensor<i64> attributes {shardc.spmd} {
  // expected-error @+1 {{lists mesh axis "x" twice}}
  %0 = shardc.axis_index on @mesh axes = ["x", "x"] : tensor<i64>
  return %0 : tensor<i64>
}

// -----

shardc.mesh @mesh ["x"=2]
func.func @send_axis(%v: tensor<4xf32>) -> tensor<4xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{uses unknown mesh axis "pipe"}}
  %0 = shardc.send %v on @mesh axis = "pipe" to = 1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shardc.mesh @mesh ["pipe"=2]
func.func @recv_peer() -> tensor<4xf32> attributes {shardc.spmd} {
  // expected-error @+1 {{peer 2 is out of range for axis "pipe" of size 2}}
  %0 = shardc.recv on @mesh axis = "pipe" from = 2 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @stage_negative(%v: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'shardc.stage' is a non-negative integer}}
  %0 = shardc.relu %v {shardc.stage = -1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reshard_for_not_collective(%v: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'shardc.reshard_for' is a dictionary on a collective}}
  %0 = shardc.relu %v {shardc.reshard_for = {kind = "operand"}} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
