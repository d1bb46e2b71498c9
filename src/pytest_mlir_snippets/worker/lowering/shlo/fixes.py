"""StableHLO rewritten before ``stablehlo-legalize-to-linalg`` where its lowering
disagrees with the specification (and the reference interpreter).

- ``stablehlo.add`` of booleans is a logical or; the lowering's ``arith.addi`` on i1
  is an exclusive or (true + true gave false).

Runs on torch-mlir's bindings (``tir``).
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering import mlirtools


def _boolean(value: Any, tir: Any) -> bool:
    text = str(value.type)
    return text.startswith("tensor<") and str(tir.ShapedType(value.type).element_type) == "i1"


def boolean_add_as_or(module: Any, tir: Any) -> int:
    """Every ``stablehlo.add`` of i1 as ``stablehlo.or``; how many."""
    found = mlirtools.ops_where(module, tir, lambda op: op.name == "stablehlo.add" and _boolean(op.results[0], tir))
    for op in found:
        with tir.InsertionPoint(op), op.location:
            new = tir.Operation.create("stablehlo.or", results=[op.results[0].type], operands=list(op.operands))
        op.results[0].replace_all_uses_with(new.result)
        op.erase()
    return len(found)


def apply(module: Any, tir: Any) -> None:
    """Every rewrite of this module."""
    boolean_add_as_or(module, tir)
