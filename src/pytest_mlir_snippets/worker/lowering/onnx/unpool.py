"""MaxUnpool: zeros but where the indices (into the flattened output, as MaxPool's Indices
give them) put the input's values: one ScatterElements on the flattened output of the
shape kernel, strides and pads give; an ``output_shape`` larger than that pads it with
zeros at the end of each axis, as ONNX's reference does."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


def max_unpool(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x, indices = op.inputs[0], op.input(1)
    shape, dtype = op.results[0]
    kernel = op.attrs.get("kernel_shape")
    if x is None or indices is None or not shape or dtype != x.dtype or not kernel:
        return None
    spatial = len(kernel)
    strides = op.attrs.get("strides") or [1] * spatial
    pads = op.attrs.get("pads") or [0] * (2 * spatial)
    inferred = x.shape[:2] + [(x.shape[d + 2] - 1) * strides[d] - (pads[d] + pads[spatial + d]) + kernel[d]
                              for d in range(spatial)]
    extra = [want - have for want, have in zip(shape, inferred, strict=True)]
    if min(extra) < 0:
        return None
    size, count = int(np.prod(inferred)), int(np.prod(x.shape))
    flat_x = e.op1("Reshape", [x, e.const([count], "si64")], [count], x.dtype)
    flat_i = e.op1("Reshape", [indices, e.const([count], "si64")], [count], indices.dtype)
    scattered = e.op1("ScatterElements", [e.const(np.zeros(size), x.dtype), flat_i, flat_x], [size], x.dtype,
                      axis=0)
    y = e.op1("Reshape", [scattered, e.const(inferred, "si64")], inferred, x.dtype)
    if any(extra):
        y = e.op1("Pad", [y, e.const([0] * len(shape) + extra, "si64")], shape, x.dtype)
    return [y]
