module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf32>) -> (tensor<6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<6xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<6xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %4:2 = stablehlo.optimization_barrier %arg0, %3 : tensor<6xf32>, tensor<6xf32>
    %5 = stablehlo.sine %4#0 : tensor<6xf32>
    %6 = stablehlo.cosine %4#0 : tensor<6xf32>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %8 = stablehlo.multiply %7, %5 : tensor<6xf32>
    %9 = stablehlo.multiply %4#1, %8 : tensor<6xf32>
    %10 = stablehlo.multiply %9, %6 : tensor<6xf32>
    return %10 : tensor<6xf32>
  }
}
