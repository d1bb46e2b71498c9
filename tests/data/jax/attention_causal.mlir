module @jit__causal_attention attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x4xf32>, %arg1: tensor<5x4xf32>, %arg2: tensor<5x4xf32>) -> (tensor<5x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<5x4xf32>) -> tensor<4x5xf32>
    %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x4xf32>, tensor<4x5xf32>) -> tensor<5x5xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %2 = stablehlo.sqrt %cst : tensor<f32>
    %3 = stablehlo.convert %2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<5x5xf32>
    %5 = stablehlo.divide %1, %4 : tensor<5x5xf32>
    %c = stablehlo.constant dense<true> : tensor<i1>
    %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i1>) -> tensor<5x5xi1>
    %7 = call @tril(%6) : (tensor<5x5xi1>) -> tensor<5x5xi1>
    %cst_0 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %8 = call @_where(%7, %5, %cst_0) : (tensor<5x5xi1>, tensor<5x5xf32>, tensor<f32>) -> tensor<5x5xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst_1) applies stablehlo.maximum across dimensions = [1] : (tensor<5x5xf32>, tensor<f32>) -> tensor<5xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %11 = stablehlo.maximum %10, %9 : tensor<5xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<5xf32>) -> tensor<5x1xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<5x1xf32>) -> tensor<5x5xf32>
    %14 = stablehlo.subtract %8, %13 : tensor<5x5xf32>
    %15 = stablehlo.exponential %14 : tensor<5x5xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.reduce(%15 init: %cst_3) applies stablehlo.add across dimensions = [1] : (tensor<5x5xf32>, tensor<f32>) -> tensor<5xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0] : (tensor<5xf32>) -> tensor<5x1xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1] : (tensor<5x1xf32>) -> tensor<5x5xf32>
    %19 = stablehlo.divide %15, %18 : tensor<5x5xf32>
    %20 = stablehlo.dot_general %19, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x5xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
    return %20 : tensor<5x4xf32>
  }
  func.func private @tril(%arg0: tensor<5x5xi1>) -> tensor<5x5xi1> {
    %0 = stablehlo.iota dim = 0 : tensor<5x5xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5x5xi32>
    %2 = stablehlo.add %0, %1 : tensor<5x5xi32>
    %3 = stablehlo.iota dim = 1 : tensor<5x5xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<5x5xi32>, tensor<5x5xi32>) -> tensor<5x5xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<5x5xi1>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<5x5xi1>, tensor<5x5xi1>
    return %6 : tensor<5x5xi1>
  }
  func.func private @_where(%arg0: tensor<5x5xi1>, %arg1: tensor<5x5xf32>, %arg2: tensor<f32>) -> tensor<5x5xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<5x5xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<5x5xi1>, tensor<5x5xf32>
    return %2 : tensor<5x5xf32>
  }
}
