module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<3x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 1 : tensor<3x4xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<3x4xf32>
    return %1 : tensor<3x4xf32>
  }
}
