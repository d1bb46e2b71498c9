module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1xi32>, %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<1xi32>) -> tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<2> : tensor<i32>
    %1 = stablehlo.clamp %c, %0, %c_0 : tensor<i32>
    %2 = "stablehlo.case"(%1) ({
      %3 = stablehlo.sine %arg1 : tensor<4xf32>
      stablehlo.return %3 : tensor<4xf32>
    }, {
      %3 = stablehlo.cosine %arg1 : tensor<4xf32>
      stablehlo.return %3 : tensor<4xf32>
    }, {
      %3 = stablehlo.tanh %arg1 : tensor<4xf32>
      stablehlo.return %3 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}
