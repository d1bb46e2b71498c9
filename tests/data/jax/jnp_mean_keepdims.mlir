module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6x3xf32>) -> (tensor<1x6x1xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 2] : (tensor<4x6x3xf32>, tensor<f32>) -> tensor<6xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [1] : (tensor<6xf32>) -> tensor<1x6x1xf32>
    %cst_0 = stablehlo.constant dense<1.200000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x6x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<1x6x1xf32>
    return %3 : tensor<1x6x1xf32>
  }
}
