module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf16>) -> (tensor<4x8xf16> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.700200e+00> : tensor<f16>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f16>) -> tensor<4x8xf16>
    %1 = stablehlo.multiply %arg0, %0 : tensor<4x8xf16>
    %cst_0 = stablehlo.constant dense<3.000490e-01> : tensor<f16>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f16>) -> tensor<4x8xf16>
    %3 = stablehlo.add %1, %2 : tensor<4x8xf16>
    %4 = stablehlo.tanh %3 : tensor<4x8xf16>
    %5 = stablehlo.multiply %4, %arg0 : tensor<4x8xf16>
    %cst_1 = stablehlo.constant dense<3.000000e+00> : tensor<f16>
    %6 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f16>) -> tensor<4x8xf16>
    %7 = stablehlo.divide %arg0, %6 : tensor<4x8xf16>
    %8 = stablehlo.subtract %5, %7 : tensor<4x8xf16>
    return %8 : tensor<4x8xf16>
  }
}
