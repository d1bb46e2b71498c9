module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>, %arg1: tensor<2x2xf32>) -> (tensor<8x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<3x4xf32>) -> tensor<6x2xf32>
    %1 = stablehlo.concatenate %0, %arg1, dim = 0 : (tensor<6x2xf32>, tensor<2x2xf32>) -> tensor<8x2xf32>
    return %1 : tensor<8x2xf32>
  }
}
