// The gradient of gelu as its ODS gradient rule builds it
// (include/shardc/Dialect/ElementwiseOps.td), on the MLP activations of
// bench/mpi_bench.py's GPT on one data=2 rank (2 x 256 x 3072 elements):
// %t = tanh(c (x + a x^3)), %x and %x2 = x^2 come from the forward pass.
// An input of shardc-fused-pass-bench (bench/README.md).
func.func @main(%g: tensor<1572864xf32>, %t: tensor<1572864xf32>,
                %x: tensor<1572864xf32>, %x2: tensor<1572864xf32>)
    -> tensor<1572864xf32> {
  %half = shardc.constant dense<0.5> : tensor<1572864xf32>
  %one = shardc.constant dense<1.0> : tensor<1572864xf32>
  %onet = shardc.add %one, %t : tensor<1572864xf32>
  %left = shardc.mul %half, %onet : tensor<1572864xf32>
  %hx = shardc.mul %half, %x : tensor<1572864xf32>
  %tt = shardc.mul %t, %t : tensor<1572864xf32>
  %sech2 = shardc.sub %one, %tt : tensor<1572864xf32>
  %c = shardc.constant dense<0.797884583> : tensor<1572864xf32>
  %ac3 = shardc.constant dense<0.107032225> : tensor<1572864xf32>
  %ax2 = shardc.mul %ac3, %x2 : tensor<1572864xf32>
  %poly = shardc.add %c, %ax2 : tensor<1572864xf32>
  %sp = shardc.mul %sech2, %poly : tensor<1572864xf32>
  %right = shardc.mul %hx, %sp : tensor<1572864xf32>
  %sum = shardc.add %left, %right : tensor<1572864xf32>
  %dx = shardc.mul %g, %sum : tensor<1572864xf32>
  return %dx : tensor<1572864xf32>
}
