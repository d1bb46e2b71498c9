"""ConvTranspose with groups and Compress, as ops torch-mlir lowers correctly: the index
work done here with numpy (shapes are static, Compress's condition a constant), the data
moved by ``Gather`` with literal indices.

torch-mlir's grouped ConvTranspose builds a ``tensor.collapse_shape`` that fails to verify,
and its Compress (``aten.nonzero`` feeding ``index_select``) a ``tensor.cast`` that does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


def conv_transpose(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """Grouped ConvTranspose as one ungrouped ConvTranspose per group, concatenated along the
    channels: group g takes input channels [g*C/G, (g+1)*C/G), the same rows of W (C x M/G x
    kernel) and outputs M/G channels with biases [g*M/G, (g+1)*M/G). Group 1 stays with torch-mlir."""
    group = int(op.attrs.get("group", 1))
    x, w, bias = op.input(0), op.input(1), op.input(2)
    shape, dtype = op.results[0]
    if group <= 1 or x is None or w is None or x.rank < 3 or len(shape) != x.rank:
        return None
    channels, per_out = x.shape[1], w.shape[1]
    if channels % group or w.shape[0] != channels or shape[1] != per_out * group:
        return None
    per_in = channels // group
    attrs = {k: v for k, v in op.attrs.items() if k != "group"}
    out_shape = [shape[0], per_out, *shape[2:]]
    parts = []
    for g in range(group):
        rows = e.const(np.arange(g * per_in, (g + 1) * per_in), "si64")
        x_g = e.op1("Gather", [x, rows], [x.shape[0], per_in, *x.shape[2:]], x.dtype, axis=1)
        w_g = e.op1("Gather", [w, rows], [per_in, *w.shape[1:]], w.dtype, axis=0)
        inputs = [x_g, w_g]
        if bias is not None:
            outs = e.const(np.arange(g * per_out, (g + 1) * per_out), "si64")
            inputs.append(e.op1("Gather", [bias, outs], [per_out], bias.dtype, axis=0))
        parts.append(e.op1("ConvTranspose", inputs, out_shape, dtype, **attrs))
    return [e.op1("Concat", parts, shape, dtype, axis=1)]


def compress(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """Compress with a constant condition: a Gather of the indices where it is true (the
    condition may be shorter than the axis: the rest is dropped, as numpy.compress does);
    without ``axis`` the input is flattened first."""
    x, condition = op.input(0), op.input(1)
    if x is None or condition is None or condition.const is None:
        return None
    keep = np.asarray(condition.const).reshape(-1).astype(bool)
    dtype = op.results[0][1]
    if "axis" in op.attrs:
        axis = int(op.attrs["axis"])
        axis = axis + x.rank if axis < 0 else axis
        if not 0 <= axis < x.rank:
            return None
        data, data_shape = x.value, x.shape
    else:
        axis, data_shape = 0, [int(np.prod(x.shape))]
        data = e.op1("Reshape", [x, e.const(data_shape, "si64")], data_shape, x.dtype)
    length = data_shape[axis]
    if keep[length:].any():
        return None  # a true entry past the axis: invalid (numpy.compress raises)
    index = np.nonzero(keep[:length])[0]
    shape = [*data_shape[:axis], len(index), *data_shape[axis + 1:]]
    return [e.op1("Gather", [data, e.const(index, "si64")], shape, dtype, axis=axis)]
