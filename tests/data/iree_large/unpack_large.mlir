// IREE e2e convention (tests/e2e/linalg): inputs generated from sizes that are plain constants, checked
// against an equivalent computation; IREE folds the whole function unless the sizes are kept from it
func.func private @iota_4d(%a: index, %b: index, %c: index, %d: index) -> tensor<?x?x?x?xi32> {
  %empty = tensor.empty(%a, %b, %c, %d) : tensor<?x?x?x?xi32>
  %filled = linalg.generic {
      indexing_maps = [affine_map<(i, j, k, l) -> (i, j, k, l)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%empty : tensor<?x?x?x?xi32>) {
    ^bb0(%out : i32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %l = linalg.index 3 : index
      %ij = arith.addi %j, %i : index
      %ijk = arith.muli %ij, %c : index
      %ijk2 = arith.addi %ijk, %k : index
      %all = arith.muli %ijk2, %d : index
      %flat = arith.addi %all, %l : index
      %v = arith.index_cast %flat : index to i32
      linalg.yield %v : i32
  } -> tensor<?x?x?x?xi32>
  return %filled : tensor<?x?x?x?xi32>
}

func.func @unpack_large() {
  %n0 = arith.constant 2 : index
  %n1 = arith.constant 8 : index
  %n2 = arith.constant 16 : index
  %n3 = arith.constant 8 : index
  %g = call @iota_4d(%n0, %n1, %n2, %n3) : (index, index, index, index) -> tensor<?x?x?x?xi32>
  %src = tensor.cast %g : tensor<?x?x?x?xi32> to tensor<2x8x16x8xi32>
  %into = tensor.empty() : tensor<32x64xi32>
  %u = linalg.unpack %src inner_dims_pos = [0, 1] inner_tiles = [16, 8] into %into
      : tensor<2x8x16x8xi32> -> tensor<32x64xi32>
  %tinit = tensor.empty() : tensor<2x16x8x8xi32>
  %t = linalg.transpose ins(%src : tensor<2x8x16x8xi32>) outs(%tinit : tensor<2x16x8x8xi32>) permutation = [0, 2, 1, 3]
  %flat = tensor.collapse_shape %t [[0, 1], [2, 3]] : tensor<2x16x8x8xi32> into tensor<32x64xi32>
  check.expect_eq(%u, %flat) : tensor<32x64xi32>
  return
}

func.func @unpack_slice_large() {
  %n0 = arith.constant 2 : index
  %n1 = arith.constant 8 : index
  %n2 = arith.constant 16 : index
  %n3 = arith.constant 8 : index
  %g = call @iota_4d(%n0, %n1, %n2, %n3) : (index, index, index, index) -> tensor<?x?x?x?xi32>
  %src = tensor.cast %g : tensor<?x?x?x?xi32> to tensor<2x8x16x8xi32>
  %into = tensor.empty() : tensor<30x60xi32>
  %u = linalg.unpack %src inner_dims_pos = [0, 1] inner_tiles = [16, 8] into %into
      : tensor<2x8x16x8xi32> -> tensor<30x60xi32>
  %tinit = tensor.empty() : tensor<2x16x8x8xi32>
  %t = linalg.transpose ins(%src : tensor<2x8x16x8xi32>) outs(%tinit : tensor<2x16x8x8xi32>) permutation = [0, 2, 1, 3]
  %flat = tensor.collapse_shape %t [[0, 1], [2, 3]] : tensor<2x16x8x8xi32> into tensor<32x64xi32>
  %s = tensor.extract_slice %flat [0, 0] [30, 60] [1, 1] : tensor<32x64xi32> to tensor<30x60xi32>
  check.expect_eq(%u, %s) : tensor<30x60xi32>
  return
}

func.func @gather_table() {
  %table = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %idx = arith.constant dense<[2, 0]> : tensor<2xi32>
  %init = tensor.empty() : tensor<2x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<2xi32>) outs(%init : tensor<2x2xf32>) {
    ^bb0(%ix: i32, %o: f32):
      %row = arith.index_cast %ix : i32 to index
      %col = linalg.index 1 : index
      %v = tensor.extract %table[%row, %col] : tensor<3x2xf32>
      linalg.yield %v : f32
  } -> tensor<2x2xf32>
  check.expect_almost_eq_const(%r, dense<[[5.0, 6.0], [1.0, 2.0]]> : tensor<2x2xf32>) : tensor<2x2xf32>
  return
}
