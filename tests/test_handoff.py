"""The text torch-mlir's MLIR prints, read by upstream's: boolean tensors written in hex
(a byte per element there, packed bits here) are spelled out first."""

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
