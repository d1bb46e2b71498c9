module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xui8>) -> (tensor<10xui8> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<2> : tensor<ui8>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui8>) -> tensor<10xui8>
    %1 = stablehlo.shift_right_logical %arg0, %0 : tensor<10xui8>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    %2 = call @floor_divide(%arg0, %c_0) : (tensor<10xui8>, tensor<i32>) -> tensor<10xui8>
    %3 = stablehlo.maximum %1, %2 : tensor<10xui8>
    return %3 : tensor<10xui8>
  }
  func.func private @floor_divide(%arg0: tensor<10xui8>, %arg1: tensor<i32>) -> tensor<10xui8> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<ui8>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<ui8>) -> tensor<10xui8>
    %2 = stablehlo.divide %arg0, %1 : tensor<10xui8>
    return %2 : tensor<10xui8>
  }
}
