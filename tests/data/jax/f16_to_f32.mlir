module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf16>) -> (tensor<6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<6xf16>) -> tensor<6xf32>
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<6xf32>
    return %2 : tensor<6xf32>
  }
}
