// StableHLO, as JAX exports it; checked against the StableHLO reference interpreter.
module @jit_example attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @add_0(%arg0: tensor<32x32xf32>, %arg1: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }
  func.func public @dot_general_0(%arg0: tensor<2x8x16xf32>, %arg1: tensor<2x16x4xf32>) -> tensor<2x8x4xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1]
      : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
    return %0 : tensor<2x8x4xf32>
  }
  func.func public @softmax_denominator_0(%arg0: tensor<4x16xf32>) -> tensor<4xf32> {
    %init = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %e = stablehlo.exponential %arg0 : tensor<4x16xf32>
    %0 = stablehlo.reduce(%e init: %init) applies stablehlo.add across dimensions = [1]
      : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func public @compare_select_0(%arg0: tensor<16xi32>, %arg1: tensor<16xi32>) -> tensor<16xi32> {
    %p = stablehlo.compare GT, %arg0, %arg1 : (tensor<16xi32>, tensor<16xi32>) -> tensor<16xi1>
    %0 = stablehlo.select %p, %arg0, %arg1 : tensor<16xi1>, tensor<16xi32>
    return %0 : tensor<16xi32>
  }
}
