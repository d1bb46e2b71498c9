"""Elementwise forms whose torch-mlir lowering fails:

- Einsum of rank-0 operands only (``"->"``, ``",->"``), whose lowering runs the compiler
  out of memory: the product of the operands (the one operand itself), as
  ``numpy.einsum`` gives it;
- Reciprocal of a float, which torch-mlir lowers with a ``cf.assert`` that each element
  is ordered and not zero ("unimplemented: tensor with zero element"): a zero (-0.0 too)
  or NaN aborts the compiled code. ONNX defines it as ``1 / x`` (inf for a zero, NaN for
  NaN), which ``Div`` computes."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp

FLOATS = {"f16", "f32", "f64"}  # the float types a literal can be built in (build.NUMPY)


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


def reciprocal(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or x.dtype not in FLOATS:
        return None
    return [e.op1("Div", [e.const(np.array(1.0), x.dtype), x], list(x.shape), x.dtype)]
