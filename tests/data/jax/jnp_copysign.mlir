module @jit_copysign attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>, %arg1: tensor<4x6xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %0 = call @copysign(%arg0, %arg1) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
  func.func private @copysign(%arg0: tensor<4x6xf32>, %arg1: tensor<4x6xf32>) -> tensor<4x6xf32> {
    %0 = call @signbit(%arg1) : (tensor<4x6xf32>) -> tensor<4x6xi1>
    %1 = stablehlo.abs %arg0 : tensor<4x6xf32>
    %2 = stablehlo.negate %1 : tensor<4x6xf32>
    %3 = stablehlo.abs %arg0 : tensor<4x6xf32>
    %4 = call @_where(%0, %2, %3) : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    return %4 : tensor<4x6xf32>
  }
  func.func private @signbit(%arg0: tensor<4x6xf32>) -> tensor<4x6xi1> {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<4x6xf32>) -> tensor<4x6xi32>
    %c = stablehlo.constant dense<31> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x6xi32>
    %2 = stablehlo.shift_right_arithmetic %0, %1 : tensor<4x6xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4x6xi32>
    %4 = stablehlo.compare NE, %2, %3, SIGNED : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %5 = stablehlo.convert %4 : tensor<4x6xi1>
    return %5 : tensor<4x6xi1>
  }
  func.func private @_where(%arg0: tensor<4x6xi1>, %arg1: tensor<4x6xf32>, %arg2: tensor<4x6xf32>) -> tensor<4x6xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x6xi1>, tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
}
