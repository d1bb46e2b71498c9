"""Activations newer than torch-mlir's conversions, in the ONNX ops they are defined by.

- Swish (opset 24): ``x * Sigmoid(alpha * x)``; torch-mlir leaves it, and the function
  bodies of SwiGLU (opset 28) call it.
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
