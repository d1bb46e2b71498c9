// tensor dialect: slices, concatenation, padding, reshapes, 0-d tensors.
func.func @slice_0(%x: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %0 = tensor.extract_slice %x[2, 4] [4, 8] [1, 1] : tensor<8x16xf32> to tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

func.func @concat_0(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<6x3xf32> {
  %0 = tensor.concat dim(0) %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

func.func @pad_0(%x: tensor<3x3xf32>) -> tensor<5x7xf32> {
  %cst = arith.constant 1.5 : f32
  %0 = tensor.pad %x low[1, 2] high[1, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<3x3xf32> to tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}

func.func @reshape_0(%x: tensor<2x3x4xi64>) -> tensor<6x4xi64> {
  %0 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xi64> into tensor<6x4xi64>
  return %0 : tensor<6x4xi64>
}

func.func @extract_scalar_0d(%x: tensor<f64>, %y: tensor<3xf64>) -> tensor<3xf64> {
  %v = tensor.extract %x[] : tensor<f64>
  %s = tensor.splat %v : tensor<3xf64>
  %0 = arith.mulf %s, %y : tensor<3xf64>
  return %0 : tensor<3xf64>
}
