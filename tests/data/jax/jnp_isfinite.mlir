module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf32>) -> (tensor<6xi1> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:1] : (tensor<6xf32>) -> tensor<1xf32>
    %1 = stablehlo.reshape %0 : (tensor<1xf32>) -> tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %3 = stablehlo.subtract %arg0, %2 : tensor<6xf32>
    %4 = stablehlo.divide %arg0, %3 : tensor<6xf32>
    %5 = stablehlo.is_finite %4 : (tensor<6xf32>) -> tensor<6xi1>
    return %5 : tensor<6xi1>
  }
}
