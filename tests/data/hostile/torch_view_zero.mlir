// torch-mlir's lowering of a view divides by the sizes of the dimensions it regroups:
// a zero-sized one kills the compiler with SIGFPE
func.func @view_zero(%arg0: !torch.vtensor<[0,3,4],f32>) -> !torch.vtensor<[3,4,0],f32> {
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int0 = torch.constant.int 0
  %shape = torch.prim.ListConstruct %int3, %int4, %int0 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %arg0, %shape : !torch.vtensor<[0,3,4],f32>, !torch.list<int> -> !torch.vtensor<[3,4,0],f32>
  return %0 : !torch.vtensor<[3,4,0],f32>
}
