module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<1xf32>) -> tensor<f32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.compare GT, %0, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %2 = stablehlo.convert %1 : (tensor<i1>) -> tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %4 = stablehlo.cosine %arg1 : tensor<4xf32>
      stablehlo.return %4 : tensor<4xf32>
    }, {
      %4 = stablehlo.sine %arg1 : tensor<4xf32>
      stablehlo.return %4 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}
