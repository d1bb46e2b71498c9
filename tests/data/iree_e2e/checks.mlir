// IREE's tests/e2e conventions (util and check ops) in several input dialects; the
// plugin's tests copy this file and change its expected values (tests/test_iree_e2e.py).
func.func @tosa_abs() {
  %0 = util.unfoldable_constant dense<[-1.0, -0.5, 0.0, 1.0]> : tensor<4xf32>
  %result = tosa.abs %0 : (tensor<4xf32>) -> tensor<4xf32>
  check.expect_almost_eq_const(%result, dense<[1.0, 0.5, 0.0, 1.0]> : tensor<4xf32>) : tensor<4xf32>
  return
}

func.func @linalg_barrier() {
  %a = util.unfoldable_constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %b = util.optimization_barrier %a : tensor<2x2xi32>
  %sum = arith.addi %a, %b : tensor<2x2xi32>
  %expected = arith.constant dense<[[2, 4], [6, 8]]> : tensor<2x2xi32>
  check.expect_eq(
    %sum,
    %expected
  ) : tensor<2x2xi32>
  return
}

func.func @stablehlo_divide() {
  %0 = util.unfoldable_constant dense<[5.0, 6.0, 7.0, 8.0]> : tensor<4xf32>
  %1 = util.unfoldable_constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %result = "stablehlo.divide"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  check.expect_almost_eq_const(%result, dense<[5.0, 3.0, 2.333333, 2.0]> : tensor<4xf32>) : tensor<4xf32>
  return
}

func.func @truths() {
  %x = util.unfoldable_constant 7 : i32
  %c7 = arith.constant 7 : i32
  %same = arith.cmpi eq, %x, %c7 : i32
  %one = arith.extui %same : i1 to i32
  check.expect_true(%one) : i32
  %other = arith.subi %one, %one : i32
  check.expect_false(%other) : i32
  %t = util.unfoldable_constant dense<[1, 2, 3]> : tensor<3xi32>
  check.expect_all_true(%t) : tensor<3xi32>
  return
}

func.func @tolerance() {
  %0 = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = arith.constant dense<[1.05, 2.05]> : tensor<2xf32>
  check.expect_almost_eq(%0, %1, atol 1.0e-01) : tensor<2xf32>
  return
}
