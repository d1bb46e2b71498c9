module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x5xi1>) -> (tensor<i32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<3x5xi1>) -> tensor<3x5xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.reduce(%0 init: %c) applies stablehlo.add across dimensions = [0, 1] : (tensor<3x5xi32>, tensor<i32>) -> tensor<i32>
    return %1 : tensor<i32>
  }
}
