import ml_dtypes
import numpy as np
import pytest

import pytest_mlir_snippets as mlir

ADD = """func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
MUL_BF16 = """func.func @mul(%a: tensor<2x3xbf16>, %b: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  %0 = arith.mulf %a, %b : tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}
"""
ONES = np.ones(4, np.float32)


def test_bf16_in_and_out(mlir_device):
    a = (np.arange(6).reshape(2, 3) / 4).astype(ml_dtypes.bfloat16)
    (out,) = mlir_device.run(mlir_device.compile(MUL_BF16), a, a)
    assert out.dtype == ml_dtypes.bfloat16 and out.shape == (2, 3)
    mlir.assert_close(out, a * a)


def test_a_module_built_with_the_bindings(mlir_device):
    from mlir import ir
    from mlir.dialects import arith, func

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        t = ir.RankedTensorType.get([4], ir.F32Type.get())
        with ir.InsertionPoint(module.body):
            @func.FuncOp.from_py_func(t, t)
            def sub(a, b):
                return arith.subf(a, b)
    compiled = mlir_device.compile(module)
    assert compiled.function == "sub" and "llvm.func @sub" in compiled.artifacts["compiled.mlir"]
    mlir.assert_close(mlir_device.run(compiled, 3 * ONES, ONES), [2 * ONES])


def test_wrong_inputs_are_an_execute_error(mlir_device):
    compiled = mlir_device.compile(ADD)
    with pytest.raises(mlir.ExecuteError, match="given input #1 is float64, the function's is tensor<4xf32>"):
        mlir_device.run(compiled, ONES, ONES.astype(np.float64))
    with pytest.raises(mlir.ExecuteError, match="1 given input"):
        mlir_device.run(compiled, ONES)


@pytest.mark.mlir_target("iree-cpu")
def test_iree_cpu(mlir_device, mlir_target):
    assert mlir_target == mlir_device.target == "iree-cpu"
    compiled = mlir_device.compile(ADD)
    assert len(compiled.artifacts["model.vmfb"]) > 1000
    mlir.assert_close(mlir_device.run(compiled, ONES, ONES), [2 * ONES])


@pytest.mark.mlir_target("cuda")
def test_cuda_compiles_without_a_gpu_and_run_skips(mlir_device):
    compiled = mlir_device.compile(ADD)
    mlir_device.run(compiled, ONES, ONES)


@pytest.mark.mlir_target("ttnn")
def test_tt_skips_naming_why(mlir_device):
    mlir_device.compile(ADD)
