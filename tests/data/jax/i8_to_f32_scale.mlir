module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xi8>) -> (tensor<10xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<10xi8>) -> tensor<10xf32>
    %cst = stablehlo.constant dense<2.500000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<10xf32>
    return %2 : tensor<10xf32>
  }
}
