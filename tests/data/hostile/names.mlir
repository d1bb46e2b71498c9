// Hostile names: a quoted symbol that looks like a path, the same name twice, nested modules.
module {
  func.func @"../../outside/..\2F..\2Fescape"(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = math.absf %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func @twice(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
  func.func @twice(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
  module @first {
    func.func @same(%a: tensor<2xi32>) -> tensor<2xi32> {
      %0 = arith.addi %a, %a : tensor<2xi32>
      return %0 : tensor<2xi32>
    }
  }
  module @second {
    func.func @same(%a: tensor<2xi32>) -> tensor<2xi32> {
      %0 = arith.muli %a, %a : tensor<2xi32>
      return %0 : tensor<2xi32>
    }
  }
}
