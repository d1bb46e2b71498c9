// ONNX ops as torch-mlir imports them (torch.operator "onnx.*"), lowered by torch-mlir.
func.func @onnx_add_relu(%arg0: !torch.vtensor<[3,4],f32>, %arg1: !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[3,4],f32> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 17 : si64} {
  %0 = torch.operator "onnx.Add"(%arg0, %arg1) : (!torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[3,4],f32>
  %1 = torch.operator "onnx.Relu"(%0) : (!torch.vtensor<[3,4],f32>) -> !torch.vtensor<[3,4],f32>
  return %1 : !torch.vtensor<[3,4],f32>
}

func.func @onnx_matmul(%arg0: !torch.vtensor<[2,5],f32>, %arg1: !torch.vtensor<[5,3],f32>) -> !torch.vtensor<[2,3],f32> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 17 : si64} {
  %0 = torch.operator "onnx.MatMul"(%arg0, %arg1) : (!torch.vtensor<[2,5],f32>, !torch.vtensor<[5,3],f32>) -> !torch.vtensor<[2,3],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}
