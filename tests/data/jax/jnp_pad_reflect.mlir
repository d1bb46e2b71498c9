module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf32>) -> (tensor<9xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<6xf32>, tensor<i32>) -> tensor<9xf32>
    return %0 : tensor<9xf32>
  }
  func.func private @_pad(%arg0: tensor<6xf32>, %arg1: tensor<i32>) -> tensor<9xf32> {
    %0 = stablehlo.slice %arg0 [0:1] : (tensor<6xf32>) -> tensor<1xf32>
    %1 = stablehlo.slice %arg0 [1:3] : (tensor<6xf32>) -> tensor<2xf32>
    %2 = call @_flip(%1) : (tensor<2xf32>) -> tensor<2xf32>
    %3 = stablehlo.concatenate %2, %arg0, dim = 0 : (tensor<2xf32>, tensor<6xf32>) -> tensor<8xf32>
    %4 = stablehlo.slice %3 [7:8] : (tensor<8xf32>) -> tensor<1xf32>
    %5 = stablehlo.slice %3 [6:7] : (tensor<8xf32>) -> tensor<1xf32>
    %6 = call @_flip_0(%5) : (tensor<1xf32>) -> tensor<1xf32>
    %7 = stablehlo.concatenate %3, %6, dim = 0 : (tensor<8xf32>, tensor<1xf32>) -> tensor<9xf32>
    return %7 : tensor<9xf32>
  }
  func.func private @_flip(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
  func.func private @_flip_0(%arg0: tensor<1xf32>) -> tensor<1xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<1xf32>
    return %0 : tensor<1xf32>
  }
}
