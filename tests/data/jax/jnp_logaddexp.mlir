module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x5xf32>) -> (tensor<3x5xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<3x5xf32>
    %2 = stablehlo.maximum %arg0, %1 : tensor<3x5xf32>
    %3 = stablehlo.subtract %arg0, %1 : tensor<3x5xf32>
    %4 = stablehlo.compare NE, %3, %3, FLOAT : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>
    %5 = stablehlo.add %arg0, %1 : tensor<3x5xf32>
    %6 = stablehlo.abs %3 : tensor<3x5xf32>
    %7 = stablehlo.negate %6 : tensor<3x5xf32>
    %8 = stablehlo.exponential %7 : tensor<3x5xf32>
    %9 = stablehlo.log_plus_one %8 : tensor<3x5xf32>
    %10 = stablehlo.add %2, %9 : tensor<3x5xf32>
    %11 = stablehlo.select %4, %5, %10 : tensor<3x5xi1>, tensor<3x5xf32>
    return %11 : tensor<3x5xf32>
  }
}
