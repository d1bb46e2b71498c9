"""Pad with mode "wrap" (Pad-19): a Gather per padded axis with the wrapped source
index of every output position, ``(o - pad_begin) mod n``, as numpy's ``wrap`` (ONNX's
reference) has it, pads longer than the axis included."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


def pad(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or op.attrs.get("mode", "constant") != "wrap" or not (op.known(1) and op.known(3)):
        return None
    pads = op.ints(1) or []
    axes = [a + x.rank if a < 0 else a for a in (op.ints(3) or list(range(x.rank)))]
    if len(pads) != 2 * len(axes) or min(pads, default=0) < 0:
        return None
    value, shape = x.value, list(x.shape)
    for i, axis in enumerate(axes):
        begin, end = pads[i], pads[len(axes) + i]
        if begin == end == 0:
            continue
        n = shape[axis]
        if n == 0:
            return None
        shape[axis] = n + begin + end
        index = e.const((np.arange(shape[axis]) - begin) % n, "si64")
        value = e.op1("Gather", [value, index], list(shape), x.dtype, axis=axis)
    return [value]
