module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xi1>, %arg1: tensor<6xf32>) -> (tensor<6xi32> {jax.result_info = "result"}) {
    %0 = stablehlo.negate %arg1 : tensor<6xf32>
    %1 = call @_where(%arg0, %arg1, %0) : (tensor<6xi1>, tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %2 = stablehlo.convert %1 : (tensor<6xf32>) -> tensor<6xi32>
    return %2 : tensor<6xi32>
  }
  func.func private @_where(%arg0: tensor<6xi1>, %arg1: tensor<6xf32>, %arg2: tensor<6xf32>) -> tensor<6xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<6xi1>, tensor<6xf32>
    return %0 : tensor<6xf32>
  }
}
