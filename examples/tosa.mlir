// TOSA: lowered through tosa-to-linalg-named, tosa-to-linalg, tosa-to-arith, tosa-to-tensor.
func.func @add_0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tosa.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

func.func @add_bcast_0(%a: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = tosa.add %a, %b : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

func.func @tanh_0(%a: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %0 = tosa.tanh %a : (tensor<2x16xf32>) -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

func.func @reduce_max_0(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = tosa.reduce_max %a {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

func.func @matmul_0(%a: tensor<1x4x8xf32>, %b: tensor<1x8x2xf32>) -> tensor<1x4x2xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}
