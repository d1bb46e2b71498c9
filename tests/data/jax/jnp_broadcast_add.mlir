module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x1x3xf32>, %arg1: tensor<5x1xf32>) -> (tensor<4x5x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<5x1xf32>) -> tensor<1x5x1xf32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1, 2] : (tensor<4x1x3xf32>) -> tensor<4x5x3xf32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1, 2] : (tensor<1x5x1xf32>) -> tensor<4x5x3xf32>
    %3 = stablehlo.add %1, %2 : tensor<4x5x3xf32>
    return %3 : tensor<4x5x3xf32>
  }
}
