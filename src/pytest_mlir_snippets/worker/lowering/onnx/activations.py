"""Newer ONNX ops torch-mlir leaves, in ops it converts.

- Swish (opset 24): ``x * Sigmoid(alpha * x)``; the function bodies of SwiGLU (opset 28)
  call it.
- BitCast (opset 26): a tensor's bits as another type of the same width.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


def swish(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or not x.dtype.startswith(("f", "bf")):
        return None
    alpha = e.const(np.array(float(op.attrs.get("alpha", 1.0))), x.dtype)
    scaled = e.op1("Mul", [x, alpha], x.shape, x.dtype)
    return [e.op1("Mul", [x, e.op1("Sigmoid", [scaled], x.shape, x.dtype)], x.shape, x.dtype)]


WIDTHS = {"i1": 8, "bf16": 16}  # i1: one byte a boolean, as ONNX stores it


def _width(dtype: str) -> int | None:
    digits = dtype.lstrip("sufbi")
    return WIDTHS.get(dtype) or (int(digits) if digits.isdigit() else None)


def bitcast(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """A bool as its byte (a Cast: 0 or 1), an integer as another integer of its width
    (``Emitter.reinterpret``), to or from a float ``Emitter.bitcast``."""
    x = op.inputs[0]
    if x is None or len(op.results) != 1:
        return None
    shape, to = op.results[0]
    if _width(x.dtype) is None or _width(x.dtype) != _width(to) or list(shape) != list(x.shape):
        return None
    if x.dtype == "i1":
        return [e.op1("Cast", [x], shape, to, to=2)] if to == "ui8" else None
    if x.dtype[0] in "su" and to[0] in "su":
        return [e.reinterpret(x.value, shape, x.dtype, to)]
    return [e.bitcast(x.value, shape, x.dtype, to)]
