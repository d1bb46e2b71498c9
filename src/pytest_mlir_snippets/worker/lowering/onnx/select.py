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

PADDING = ("pads", "auto_pad", "output_padding", "output_shape")


def conv_transpose(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """Grouped ConvTranspose as one ungrouped ConvTranspose per group, concatenated along the
    channels: group g takes input channels [g*C/G, (g+1)*C/G), the same rows of W (C x M/G x
    kernel) and outputs M/G channels with biases [g*M/G, (g+1)*M/G). Padding torch-mlir does
    not take (SAME auto_pad, pads that differ at the two ends) is the full, unpadded output
    cropped (and zero-extended by output_padding) to the result. Otherwise torch-mlir's."""
    group = int(op.attrs.get("group", 1))
    x, w, bias = op.input(0), op.input(1), op.input(2)
    shape, dtype = op.results[0]
    if x is None or w is None or x.rank < 3 or len(shape) != x.rank or 0 in shape:
        return None
    begins = _crop(op, x.shape, w.shape, shape)
    if group <= 1 and begins is None:
        return None
    channels, per_out = x.shape[1], w.shape[1]
    if channels % group or w.shape[0] != channels or shape[1] != per_out * group:
        return None
    attrs = {k: v for k, v in op.attrs.items() if k != "group" and (begins is None or k not in PADDING)}
    full = shape if begins is None else [*shape[:2], *_full(op, x.shape, w.shape)]
    per_in = channels // group
    out_shape = [full[0], per_out, *full[2:]]
    parts = []
    for g in range(group):
        x_g, w_g, b_g = x.value, w.value, None if bias is None else bias.value
        if group > 1:
            rows = e.const(np.arange(g * per_in, (g + 1) * per_in), "si64")
            x_g = e.op1("Gather", [x, rows], [x.shape[0], per_in, *x.shape[2:]], x.dtype, axis=1)
            w_g = e.op1("Gather", [w, rows], [per_in, *w.shape[1:]], w.dtype, axis=0)
            if bias is not None:
                outs = e.const(np.arange(g * per_out, (g + 1) * per_out), "si64")
                b_g = e.op1("Gather", [bias, outs], [per_out], bias.dtype, axis=0)
        parts.append(e.op1("ConvTranspose", [x_g, w_g] + ([b_g] if b_g is not None else []), out_shape, dtype,
                           **attrs))
    y = parts[0] if group == 1 else e.op1("Concat", parts, full, dtype, axis=1)
    if begins is None:
        return [y]
    spatial = range(2, len(shape))
    extra = [max(0, begins[i - 2] + shape[i] - full[i]) for i in spatial]
    if any(extra):  # output_padding: zeros past the full output
        full = [*full[:2], *(full[i] + extra[i - 2] for i in spatial)]
        y = e.op1("Pad", [y, e.const([0] * len(shape) + [0, 0, *extra], "si64")], full, dtype)
    starts = e.const(begins, "si64")
    ends = e.const([begins[i - 2] + shape[i] for i in spatial], "si64")
    return [e.op1("Slice", [y, starts, ends, e.const(list(spatial), "si64")], shape, dtype)]


def _full(op: OnnxOp, x_shape: list[int], w_shape: list[int]) -> list[int]:
    """The unpadded output's spatial sizes: stride * (in - 1) + dilated kernel."""
    n = len(x_shape) - 2
    strides = op.attrs.get("strides") or [1] * n
    dilations = op.attrs.get("dilations") or [1] * n
    kernel = op.attrs.get("kernel_shape") or w_shape[2:]
    return [strides[i] * (x_shape[i + 2] - 1) + (kernel[i] - 1) * dilations[i] + 1 for i in range(n)]


def _crop(op: OnnxOp, x_shape: list[int], w_shape: list[int], shape: list[int]) -> list[int] | None:
    """Where the result starts in the unpadded output, when the padding is one torch-mlir
    does not take (ONNX's reference splits a SAME total as below); None when it takes it."""
    n = len(x_shape) - 2
    auto = str(op.attrs.get("auto_pad", "NOTSET"))
    pads = op.attrs.get("pads")
    output_padding = op.attrs.get("output_padding") or [0] * n
    if auto in ("SAME_UPPER", "SAME_LOWER") and not pads:
        totals = [f + p - o for f, p, o in zip(_full(op, x_shape, w_shape), output_padding, shape[2:], strict=True)]
        if min(totals) < 0:  # the result longer than the full output: the reference's own arithmetic, left
            return None
        return [t // 2 if auto == "SAME_UPPER" else t - t // 2 for t in totals]
    if pads and auto in ("NOTSET", "") and "output_shape" not in op.attrs and pads[:n] != pads[n:]:
        return list(pads[:n])
    return None


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
