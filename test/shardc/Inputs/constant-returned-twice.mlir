shardc.mesh @mesh ["a"=2, "b"=2]
func.func @main() -> (tensor<8x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"a"}, {"b"}]>}, tensor<8x4xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"b"}, {}]>}) {
  %c = shardc.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0], [17.0, 18.0, 19.0, 20.0], [21.0, 22.0, 23.0, 24.0], [25.0, 26.0, 27.0, 28.0], [29.0, 30.0, 31.0, 32.0]]> : tensor<8x4xf32>
  return %c, %c : tensor<8x4xf32>, tensor<8x4xf32>
}
