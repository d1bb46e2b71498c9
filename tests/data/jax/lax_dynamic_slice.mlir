module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x5xf32>, %arg1: tensor<1xi32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reshape %arg1 : (tensor<1xi32>) -> tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare LT, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<6> : tensor<i32>
    %2 = stablehlo.add %0, %c_0 : tensor<i32>
    %3 = stablehlo.select %1, %2, %0 : tensor<i1>, tensor<i32>
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %4 = stablehlo.dynamic_slice %arg0, %3, %c_1, sizes = [2, 3] : (tensor<6x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    return %4 : tensor<2x3xf32>
  }
}
