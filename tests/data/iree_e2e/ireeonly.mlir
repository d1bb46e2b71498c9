func.func @uses_flow() {
  %0 = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = flow.tensor.clone %0 : tensor<2xf32>
  %2 = "iree_linalg_ext.thing"(%1) : (tensor<2xf32>) -> tensor<2xf32>
  check.expect_almost_eq(%2, %0) : tensor<2xf32>
  return
}
