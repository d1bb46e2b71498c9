"""ConvInteger with pads or a zero point per output channel, which torch-mlir's conversion
leaves (it takes neither): the operands widened to si32, their zero points subtracted (a
weight zero point per output channel broadcast over its kernel), then an si32 Conv with
the op's attributes, as the ONNX specification defines it (the result is si32)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import ONNX_TYPE, Emitter, OnnxOp

CONV_ATTRIBUTES = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def conv_integer(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x, w, x_zero, w_zero = op.input(0), op.input(1), op.input(2), op.input(3)
    shape, dtype = op.results[0]
    if x is None or w is None or dtype != "si32" or not shape:
        return None

    def widened(value: Any, zero: Any, zero_shape: list[int]) -> Any:
        wide = e.op1("Cast", [value], list(value.shape), "si32", to=ONNX_TYPE["si32"])
        if zero is None:
            return wide
        z = e.op1("Cast", [zero], list(zero.shape), "si32", to=ONNX_TYPE["si32"])
        if zero.shape != zero_shape:
            z = e.op1("Reshape", [z, e.const(np.array(zero_shape), "si64")], zero_shape, "si32")
        return e.op1("Sub", [wide, z], list(value.shape), "si32")

    w_zero_shape = [] if w_zero is None else list(w_zero.shape)
    if w_zero is not None and w_zero.rank == 1 and w_zero.shape[0] > 1:  # one per output channel
        w_zero_shape = [w.shape[0]] + [1] * (w.rank - 1)
    xs = widened(x, x_zero, [] if x_zero is None else list(x_zero.shape))
    ws = widened(w, w_zero, w_zero_shape)
    attrs = {k: v for k, v in op.attrs.items() if k in CONV_ATTRIBUTES}
    return [e.op1("Conv", [xs, ws], shape, "si32", **attrs)]
