module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x3xf32>) -> (tensor<5x3xf32> {jax.result_info = "result"}) {
    %0 = call @diff(%arg0) : (tensor<6x3xf32>) -> tensor<5x3xf32>
    return %0 : tensor<5x3xf32>
  }
  func.func private @diff(%arg0: tensor<6x3xf32>) -> tensor<5x3xf32> {
    %0 = stablehlo.slice %arg0 [1:6, 0:3] : (tensor<6x3xf32>) -> tensor<5x3xf32>
    %1 = stablehlo.slice %arg0 [0:5, 0:3] : (tensor<6x3xf32>) -> tensor<5x3xf32>
    %2 = stablehlo.subtract %0, %1 : tensor<5x3xf32>
    return %2 : tensor<5x3xf32>
  }
}
