module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf32>) -> (tensor<6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<6xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<6xf32>
    return %1 : tensor<6xf32>
  }
}
