"""Pooling windows as index tables: with static shapes numpy lists, for every output
position and kernel offset, the input element it reads (or that it reads padding), so
one Gather of the flattened input collects every window and a reduction finishes the op.

Two geometries, as ONNX's reference implementation has them:
- MaxPool (``op_max_pool``): window ``o`` starts at ``o*stride - pad_begin``;
- AveragePool and LpPool (``op_pool_common``): where ``ceil_mode`` needs more input than
  the pads give, the missing rows are padding too, half of them (rounded down) added
  before the input, so the windows start that much earlier.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


@dataclasses.dataclass
class Geometry:
    """The spatial dims of a pooling op's input, its attributes (defaults filled in), and
    the output's spatial shape and the begin/end pads the output's shape was made with."""

    spatial: list[int]
    kernel: list[int]
    strides: list[int]
    dilations: list[int]
    out: list[int]
    begin: list[int]
    end: list[int]
    auto: bool  # the pads come from auto_pad SAME_*/VALID (the windows then fit, no ceil_mode)

    def extent(self, i: int) -> int:
        return (self.kernel[i] - 1) * self.dilations[i] + 1


def geometry(op: OnnxOp, spatial: list[int]) -> Geometry | None:
    """The op's windows over ``spatial``; None where its attributes do not fit the input."""
    kernel = [int(k) for k in op.attrs.get("kernel_shape") or []]
    n = len(spatial)
    if len(kernel) != n or n == 0:
        return None
    strides = [int(s) for s in op.attrs.get("strides") or [1] * n]
    dilations = [int(d) for d in op.attrs.get("dilations") or [1] * n]
    pads = [int(p) for p in op.attrs.get("pads") or [0] * (2 * n)]
    auto_pad = str(op.attrs.get("auto_pad", "NOTSET"))
    ceil_mode = bool(op.attrs.get("ceil_mode", 0))
    if len(strides) != n or len(dilations) != n or len(pads) != 2 * n:
        return None
    g = Geometry(spatial, kernel, strides, dilations, [], pads[:n], pads[n:], auto_pad != "NOTSET")
    for i, size in enumerate(spatial):
        s, ext = strides[i], g.extent(i)
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            # output ceil(L / s); the padding that needs, its odd row at the end (UPPER) or the beginning
            out = -(-size // s)
            total = max(0, (out - 1) * s + ext - size)
            small = total // 2
            g.begin[i], g.end[i] = (small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small)
        elif auto_pad == "VALID":
            out = -(-(size - ext + 1) // s)
            g.begin[i] = g.end[i] = 0
        else:
            span = (size + g.begin[i] + g.end[i] - ext) / s + 1
            out = math.ceil(span) if ceil_mode else math.floor(span)
            if ceil_mode and (out - 1) * s >= size + g.begin[i]:
                out -= 1  # the last window must start in the input or its begin padding
        if out <= 0:
            return None
        g.out.append(out)
    return g


@dataclasses.dataclass
class Table:
    """``flat[P, K]``: the row-major index into the flattened spatial input of output
    position ``P`` and kernel offset ``K`` (0 where that is padding); ``valid``: it is an
    input element, not padding."""

    flat: np.ndarray
    valid: np.ndarray
    column: np.ndarray  # the same positions' column-major index (MaxPool's storage_order 1)


def table(g: Geometry, shifted: bool) -> Table:
    """The windows' positions; ``shifted``: the AveragePool/LpPool geometry (see the module)."""
    n = len(g.spatial)
    coords = []
    for i, size in enumerate(g.spatial):
        start = np.arange(g.out[i])[:, None] * g.strides[i]
        offset = np.arange(g.kernel[i])[None, :] * g.dilations[i]
        padded = start + offset  # position in the padded input
        extra = (g.out[i] - 1) * g.strides[i] + g.extent(i) - size - g.begin[i] - g.end[i]
        begin = g.begin[i] + (extra // 2 if shifted and extra > 0 and not g.auto else 0)
        shape = [1] * (2 * n)
        shape[i], shape[n + i] = g.out[i], g.kernel[i]
        coords.append((padded - begin).reshape(shape))
    full = [*g.out, *g.kernel]
    valid = np.ones(full, dtype=bool)
    flat = np.zeros(full, dtype=np.int64)
    column = np.zeros(full, dtype=np.int64)
    row_stride = [int(np.prod(g.spatial[i + 1:])) for i in range(n)]
    col_stride = [int(np.prod(g.spatial[:i])) for i in range(n)]
    for i, size in enumerate(g.spatial):
        c = coords[i]
        valid = valid & (c >= 0) & (c < size)
        clipped = np.clip(c, 0, size - 1)
        flat = flat + clipped * row_stride[i]
        column = column + clipped * col_stride[i]
    p, k = int(np.prod(g.out)), int(np.prod(g.kernel))
    valid = valid.reshape(p, k)
    return Table(np.where(valid, flat.reshape(p, k), 0), valid, np.where(valid, column.reshape(p, k), 0))


def gather(e: Emitter, x: Any, shape: list[int], dtype: str, slots: np.ndarray, zero_column: bool) -> Any:
    """``x`` [N, C, *spatial] flattened to [N*C, S] and gathered by ``slots`` [P, K] into
    [N*C, P, K]; ``zero_column``: a column of zeros is appended first (slot S reads it)."""
    rows, size = shape[0] * shape[1], int(np.prod(shape[2:]))
    flat = e.op1("Reshape", [x, e.const([rows, size], "si64")], [rows, size], dtype)
    if zero_column:
        flat = e.op1("Concat", [flat, e.const(np.zeros((rows, 1)), dtype)], [rows, size + 1], dtype, axis=1)
    return e.op1("Gather", [flat, e.const(slots, "si64")], [rows, *slots.shape], dtype, axis=1)


def reduce(e: Emitter, name: str, x: Any, shape: list[int], dtype: str, axis: int) -> Any:
    """``Reduce<name>`` over ``axis`` (dropped)."""
    out = [d for i, d in enumerate(shape) if i != axis]
    return e.op1(f"Reduce{name}", [x, e.const([axis], "si64")], out, dtype, keepdims=0)
