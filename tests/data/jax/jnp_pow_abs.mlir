module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>, %arg1: tensor<4x6xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.abs %arg0 : tensor<4x6xf32>
    %1 = stablehlo.power %0, %arg1 : tensor<4x6xf32>
    return %1 : tensor<4x6xf32>
  }
}
