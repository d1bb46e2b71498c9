"""ReduceMin and ReduceMax before opset 18 (axes an attribute) without ``axes``: every axis
reduced. torch-mlir's conversion of those opsets needs the attribute (ONNX's
DynamicQuantizeLinear function body, of opset 11, has neither); here as the same op at
the expansions' opset, with every axis given as its ``axes`` input."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp

AXES_INPUT_SINCE = 18  # ReduceMin and ReduceMax take axes as an input from opset 18


def all_axes(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or op.opset >= AXES_INPUT_SINCE or "axes" in op.attrs or not x.rank or not op.results:
        return None
    shape, dtype = op.results[0]
    keepdims = int(op.attrs.get("keepdims", 1))
    if len(shape) != (x.rank if keepdims else 0):
        return None
    return [e.op1(op.name, [x, e.const(np.arange(x.rank), "si64")], shape, dtype, keepdims=keepdims)]
