// torch-mlir's CastLike conversion to ui16 asks for a scalar type it does not have:
// "LLVM ERROR: Unhandled type in getScalarTypeForType: ui16", and the compiler aborts
func.func @castlike_ui16(%arg0: !torch.vtensor<[12],f32>, %arg1: !torch.vtensor<[1],ui16>) -> !torch.vtensor<[12],ui16> attributes {torch.onnx_meta.opset_version = 21 : si64} {
  %0 = torch.operator "onnx.CastLike"(%arg0, %arg1) : (!torch.vtensor<[12],f32>, !torch.vtensor<[1],ui16>) -> !torch.vtensor<[12],ui16>
  return %0 : !torch.vtensor<[12],ui16>
}
