module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<7xf32>) -> (tensor<7xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[1.000000e+00, -2.000000e+00, 5.000000e-01]> : tensor<3xf32>
    %0 = call @polyval(%cst, %arg0) : (tensor<3xf32>, tensor<7xf32>) -> tensor<7xf32>
    return %0 : tensor<7xf32>
  }
  func.func private @polyval(%arg0: tensor<3xf32>, %arg1: tensor<7xf32>) -> tensor<7xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %1 = stablehlo.slice %arg0 [0:0] : (tensor<3xf32>) -> tensor<0xf32>
    %2 = stablehlo.slice %arg0 [0:3] : (tensor<3xf32>) -> tensor<3xf32>
    %3 = stablehlo.slice %2 [0:1] : (tensor<3xf32>) -> tensor<1xf32>
    %4 = stablehlo.reshape %3 : (tensor<1xf32>) -> tensor<f32>
    %5 = call @closed_call(%arg1, %0, %4) : (tensor<7xf32>, tensor<7xf32>, tensor<f32>) -> tensor<7xf32>
    %6 = stablehlo.slice %2 [1:2] : (tensor<3xf32>) -> tensor<1xf32>
    %7 = stablehlo.reshape %6 : (tensor<1xf32>) -> tensor<f32>
    %8 = call @closed_call(%arg1, %5, %7) : (tensor<7xf32>, tensor<7xf32>, tensor<f32>) -> tensor<7xf32>
    %9 = stablehlo.slice %2 [2:3] : (tensor<3xf32>) -> tensor<1xf32>
    %10 = stablehlo.reshape %9 : (tensor<1xf32>) -> tensor<f32>
    %11 = call @closed_call(%arg1, %8, %10) : (tensor<7xf32>, tensor<7xf32>, tensor<f32>) -> tensor<7xf32>
    return %11 : tensor<7xf32>
  }
  func.func private @closed_call(%arg0: tensor<7xf32>, %arg1: tensor<7xf32>, %arg2: tensor<f32>) -> tensor<7xf32> {
    %0 = stablehlo.multiply %arg1, %arg0 : tensor<7xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %2 = stablehlo.add %0, %1 : tensor<7xf32>
    return %2 : tensor<7xf32>
  }
}
