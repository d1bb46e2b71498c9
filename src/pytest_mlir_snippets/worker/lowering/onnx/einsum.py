"""Einsum of rank-0 operands only (``"->"``, ``",->"``), whose torch-mlir lowering runs the
compiler out of memory: the product of the operands (the one operand itself), as
``numpy.einsum`` gives it."""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


def einsum(op: OnnxOp, e: Emitter) -> list[Any] | None:
    operands = [x for x in op.inputs if x is not None]
    shape, dtype = op.results[0]
    equation = str(op.attrs.get("equation", "")).replace(" ", "")
    if not operands or shape or any(x.rank or x.dtype != dtype for x in operands):
        return None
    if equation != ",".join([""] * len(operands)) + "->":
        return None
    if len(operands) == 1:
        return [e.op1("Identity", [operands[0]], [], dtype)]
    product = operands[0]
    for x in operands[1:]:
        product = e.op1("Mul", [product, x], [], dtype)
    return [product]
