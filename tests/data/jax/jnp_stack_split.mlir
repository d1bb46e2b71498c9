module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x9xf32>) -> (tensor<3x2x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:2, 0:3] : (tensor<2x9xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.slice %arg0 [0:2, 3:6] : (tensor<2x9xf32>) -> tensor<2x3xf32>
    %2 = stablehlo.slice %arg0 [0:2, 6:9] : (tensor<2x9xf32>) -> tensor<2x3xf32>
    %3 = stablehlo.broadcast_in_dim %0, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
    %4 = stablehlo.broadcast_in_dim %1, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
    %5 = stablehlo.broadcast_in_dim %2, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
    %6 = stablehlo.concatenate %3, %4, %5, dim = 0 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<3x2x3xf32>
    return %6 : tensor<3x2x3xf32>
  }
}
