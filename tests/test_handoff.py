"""From torch-mlir's MLIR to upstream's: boolean tensors printed in hex (a byte per
element there, packed bits here) are spelled out first; plain torch-dialect snippets
(no ONNX import) go through without the ONNX passes."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_mlir_snippets.worker.lowering.mlirtools import spell_out_booleans

tir = pytest.importorskip("torch_mlir.ir")


def test_a_large_boolean_constant_reads_the_same_upstream() -> None:
    import mlir.ir as uir

    values = (np.arange(300) % 3 == 0).reshape(3, 10, 10)
    body = str(values.tolist()).replace("True", "true").replace("False", "false")
    source = (f"func.func @f() -> tensor<3x10x10xi1> {{ %c = arith.constant dense<{body}> : tensor<3x10x10xi1>"
              " return %c : tensor<3x10x10xi1> }")
    with tir.Context():
        printed = tir.Module.parse(source).operation.get_asm()
    assert 'dense<"0x' in printed  # torch-mlir's hex, which upstream's parser rejects
    with uir.Context():
        with pytest.raises(uir.MLIRError, match="hex data size is invalid"):
            uir.Module.parse(printed)
        module = uir.Module.parse(spell_out_booleans(printed))
        constant = module.body.operations[0].regions[0].blocks[0].operations[0]
        assert (np.array(uir.DenseElementsAttr(constant.attributes["value"])) == values).all()
    assert spell_out_booleans('dense<"0x0102"> : tensor<2xi8>') == 'dense<"0x0102"> : tensor<2xi8>'


def test_a_plain_torch_snippet_needs_no_onnx_opset(pytester: pytest.Pytester, run_items) -> None:
    """torch-dialect ops that are no ONNX import (no ``torch.onnx_meta.opset_version``)
    skip the ONNX passes, which would reject the function for the missing attribute."""
    pytester.makefile(".mlir", plain="""
func.func @scaled(%x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %x, %x, %int1
      : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
""")
    np.savez(pytester.path / "plain.scaled.npz", input_0=np.arange(4, dtype=np.float32),
             output_0=2 * np.arange(4, dtype=np.float32))
    result, props = run_items()
    assert props["plain.mlir::scaled[compile]"]["outcome"] == "passed", result.stdout.str()
    assert props["plain.mlir::scaled[execute]"]["mlir_golden"] == "recorded", result.stdout.str()
