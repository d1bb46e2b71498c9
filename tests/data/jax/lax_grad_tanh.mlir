module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<7xf32>) -> (tensor<7xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.tanh %arg0 : tensor<7xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %2 = stablehlo.subtract %1, %0 : tensor<7xf32>
    %3 = stablehlo.multiply %0, %0 : tensor<7xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %5 = stablehlo.multiply %4, %0 : tensor<7xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%3 init: %cst_1) applies stablehlo.add across dimensions = [0] : (tensor<7xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %8 = stablehlo.multiply %7, %5 : tensor<7xf32>
    %9 = stablehlo.multiply %8, %2 : tensor<7xf32>
    %10 = stablehlo.multiply %9, %0 : tensor<7xf32>
    %11 = stablehlo.add %9, %10 : tensor<7xf32>
    return %11 : tensor<7xf32>
  }
}
