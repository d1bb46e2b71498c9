module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf16>, %arg1: tensor<16xf16>) -> (tensor<16xf16> {jax.result_info = "result"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<16xf16>
    %1 = stablehlo.multiply %0, %arg1 : tensor<16xf16>
    return %1 : tensor<16xf16>
  }
}
