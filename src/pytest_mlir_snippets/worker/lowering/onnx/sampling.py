"""GridSample as elementwise ONNX ops, one Gather and one ReduceSum, after ONNX's reference.

GridSample-16 takes 4-D inputs and modes bilinear/nearest/bicubic, GridSample-20 N-D
inputs and modes linear/nearest/cubic. The sample coordinates come from the grid at run
time, so they are computed with ONNX ops: per spatial dimension (all dimensions at once,
the grid's last axis) the normalized coordinate is denormalized, rounded half to even for
nearest, moved into range by the padding mode; then each dimension's neighbours (taps)
get an index and a weight, the taps of all dimensions combine into flat indices into the
input (spatial positions flattened, batch offsets added), one Gather fetches the channels
of every tap and a ReduceSum adds the weighted taps. Every GridSample is taken here:
torch-mlir's own conversion takes 4-D inputs with modes linear and nearest and zeros
padding only, and of those, checked against onnx.reference, only linear with
align_corners and the grid inside [-1, 1] came out right (grids past the borders read
outside the input, nearest missed pixels).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import NUMPY, ONNX_TYPE, Emitter, OnnxOp, Tensor

ND_SINCE = 20  # GridSample-20: N-D inputs, modes linear/cubic (16: 4-D, bilinear/bicubic)
MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic", "nearest": "nearest"}
TAPS = {"nearest": [0.0], "linear": [0.0, 1.0], "cubic": [-1.0, 0.0, 1.0, 2.0]}  # offsets from floor(x)
CUBIC_ALPHA = -0.75  # Keys' cubic convolution, as PyTorch and the reference use it


def clamp(o: Arith, x: Tensor, lo: Any, hi: Any) -> Tensor:
    """max(min(x, hi), lo) with per-dimension bounds (Clip takes scalars only)."""
    return o("Max", [o("Min", [x, o.const(hi, x.dtype)]), o.const(lo, x.dtype)])


def reflect(o: Arith, x: Tensor, lo: np.ndarray, hi: np.ndarray) -> Tensor:
    """The reference's _gs_reflect: x outside [lo, hi] reflected by the near border (as
    often as it takes); the result clamped to [lo, hi] against rounding and for a zero
    span (a size-1 axis with align_corners, where the reference divides by zero)."""
    kind = x.dtype
    span = np.where(hi > lo, hi - lo, 1.0)
    below = o("Less", [x, o.const(lo, kind)], dtype="i1")
    above = o("Greater", [x, o.const(hi, kind)], dtype="i1")
    dx = o("Where", [below, o("Sub", [o.const(lo, kind), x]), o("Sub", [x, o.const(hi, kind)])], dtype=kind)
    n = o("Floor", [o("Div", [dx, o.const(span, kind)])])
    rem = o("Sub", [dx, o("Mul", [n, o.const(span, kind)])])
    half = o("Floor", [o("Mul", [n, o.const(0.5, kind)])])
    even = o("Equal", [n, o("Mul", [half, o.const(2.0, kind)])], dtype="i1")
    near, far = o("Add", [o.const(lo, kind), rem]), o("Sub", [o.const(hi, kind), rem])
    # below: an even count of reflections ends at lo + rem, an odd one at hi - rem; above the reverse
    moved = o("Where", [below, o("Where", [even, near, far], dtype=kind), o("Where", [even, far, near], dtype=kind)],
              dtype=kind)
    outside = o("Or", [below, above], dtype="i1")
    return clamp(o, o("Where", [outside, moved, x], dtype=kind), lo, hi)


def grid_sample(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x, grid = op.input(0), op.input(1)
    if x is None or grid is None or x.rank < 3 or grid.rank != x.rank or x.dtype not in NUMPY or x.dtype == "i1":
        return None
    rank = x.rank - 2
    mode = MODES.get(str(op.attrs.get("mode", "linear" if op.opset >= ND_SINCE else "bilinear")))
    padding = str(op.attrs.get("padding_mode", "zeros"))
    if mode is None or padding not in ("zeros", "border", "reflection") or grid.shape[-1] != rank:
        return None
    if grid.shape[0] != x.shape[0] or 0 in x.shape or 0 in grid.shape or grid.dtype not in ("f16", "f32", "f64"):
        return None
    align = bool(op.attrs.get("align_corners", 0))
    batch, channels, dims, out = x.shape[0], x.shape[1], x.shape[2:], grid.shape[1:-1]
    points, size = math.prod(out), math.prod(dims)
    o = Arith(e)
    # grid component j addresses spatial dimension rank-1-j (x is the last axis): constants per component
    length = np.array(dims[::-1], np.float32)
    lo = np.zeros(rank, np.float32) if align else np.full(rank, -0.5, np.float32)
    hi = length - 1 if align else length - 0.5
    # denormalized in the grid's type, then float32: the reference's coordinates are a float32 array
    g = o.reshape(Tensor(grid.value, grid.shape, grid.dtype), [batch, points, rank])
    one = o.const(1.0, g.dtype)
    if align:  # x = (n + 1) / 2 * (d - 1)
        coord = o("Mul", [o("Div", [o("Add", [g, one]), o.const(2.0, g.dtype)]), o.const(length - 1, g.dtype)])
    else:  # x = ((n + 1) * d - 1) / 2
        scaled = o("Mul", [o("Add", [g, one]), o.const(length, g.dtype)])
        coord = o("Div", [o("Sub", [scaled, one]), o.const(2.0, g.dtype)])
    if coord.dtype != "f32":
        coord = o("Cast", [coord], dtype="f32", to=ONNX_TYPE["f32"])
    if mode == "nearest":
        coord = o("Round", [coord])  # half to even, as PyTorch and the reference (np.rint)
    if padding == "border":  # outside [lo, hi]: clamped to [0, d - 1]
        outside = o("Or", [o("Less", [coord, o.const(lo, "f32")], dtype="i1"),
                           o("Greater", [coord, o.const(hi, "f32")], dtype="i1")], dtype="i1")
        coord = o("Where", [outside, clamp(o, coord, np.zeros(rank), length - 1), coord], dtype="f32")
    elif padding == "reflection":  # in float64 as the reference (its borders are a float64 array)
        wide = reflect(o, o("Cast", [coord], dtype="f64", to=ONNX_TYPE["f64"]), lo, hi)
        coord = o("Cast", [wide], dtype="f32", to=ONNX_TYPE["f32"])
    taps = np.array(TAPS[mode], np.float32)
    base = coord if mode == "nearest" else o("Floor", [coord])
    index = o("Add", [o.reshape(base, [batch, points, rank, 1]), o.const(taps, "f32")])  # [N, P, r, T]
    weight = None if mode == "nearest" else _weights(o, o("Sub", [coord, base]), mode, taps)
    # taps outside the input: zeros pads with zero, border and reflection read the pixel at the clamped or
    # reflected index (the reference's _pixel_at_array)
    valid = None
    if padding == "zeros":
        valid = o("And", [o("GreaterOrEqual", [index, o.const(0.0, "f32")], dtype="i1"),
                          o("LessOrEqual", [index, o.const((length - 1)[:, None], "f32")], dtype="i1")], dtype="i1")
    elif padding == "reflection":
        index = reflect(o, index, lo[:, None], hi[:, None])
    index = o("Cast", [clamp(o, index, np.zeros((rank, 1)), (length - 1)[:, None])], dtype="si64",
              to=ONNX_TYPE["si64"])
    flat = o.const(np.arange(batch).reshape([batch] + [1] * (rank + 1)) * size, "si64")  # batch offsets
    tap_weight: Tensor | None = None
    tap_valid: Tensor | None = None
    for j in range(rank):  # dimension i's taps on axis 2 + i: every combination of the taps of all dimensions
        i = rank - 1 - j
        layout = [batch, points] + [len(taps) if k == i else 1 for k in range(rank)]
        pick = o.const(np.array(j, np.int64), "si64")

        def part(t: Tensor, layout: list[int] = layout, pick: Tensor = pick) -> Tensor:
            return o.reshape(o("Gather", [t, pick], [batch, points, len(taps)], axis=2), layout)

        stride = o.const(np.array(math.prod(dims[i + 1:]), np.int64), "si64")
        flat = o("Add", [flat, o("Mul", [part(index), stride])])
        if weight is not None:
            w = part(weight)
            if x.dtype != "f32":  # the reference's coefficients are of the input's type (truncated for integers)
                w = o("Cast", [w], dtype=x.dtype, to=ONNX_TYPE[x.dtype])
            tap_weight = w if tap_weight is None else o("Mul", [tap_weight, w])
        if valid is not None:
            v = part(valid)
            tap_valid = v if tap_valid is None else o("And", [tap_valid, v])
    # the input as rows of channels, [N * S, C]; one Gather reads every tap of every point: [N, P, T.., C]
    rows = o.reshape(o("Transpose", [o.reshape(x, [batch, channels, size])], [batch, size, channels], perm=[0, 2, 1]),
                     [batch * size, channels])
    values = o("Gather", [rows, flat], [*flat.shape, channels], axis=0)
    if tap_valid is not None:
        values = o("Where", [o.reshape(tap_valid, [*tap_valid.shape, 1]), values, o.const(0, x.dtype)], dtype=x.dtype)
    if tap_weight is not None:
        values = o("Mul", [values, o.reshape(tap_weight, [*tap_weight.shape, 1])])
        summed = o("ReduceSum", [values, o.const(list(range(2, 2 + rank)), "si64")], [batch, points, channels],
                   keepdims=0)
    else:
        summed = o.reshape(values, [batch, points, channels])
    moved = o("Transpose", [summed], [batch, channels, points], perm=[0, 2, 1])
    return [o.reshape(moved, [batch, channels, *out]).value]


def _weights(o: Arith, frac: Tensor, mode: str, taps: np.ndarray) -> Tensor:
    """Each tap's weight, [N, P, r, T], from the fraction t = x - floor(x) per dimension."""
    batch, points, rank = frac.shape
    t = o.reshape(frac, [batch, points, rank, 1])
    if mode == "linear":  # 1 - t at floor(x), t at floor(x) + 1
        return o("Add", [o("Mul", [t, o.const(np.array([-1.0, 1.0]), "f32")]), o.const(np.array([1.0, 0.0]), "f32")])
    a = CUBIC_ALPHA
    d = o("Abs", [o("Sub", [t, o.const(taps, "f32")])])  # distances t + 1, t, 1 - t, 2 - t

    def c(v: float) -> Tensor:
        return o.const(v, "f32")

    # |d| <= 1: ((a + 2) d - (a + 3)) d^2 + 1; 1 < |d| < 2: ((a d - 5 a) d + 8 a) d - 4 a
    near = o("Add", [o("Mul", [o("Mul", [o("Sub", [o("Mul", [d, c(a + 2)]), c(a + 3)]), d]), d]), c(1.0)])
    far = o("Sub", [o("Mul", [o("Add", [o("Mul", [o("Sub", [o("Mul", [d, c(a)]), c(5 * a)]), d]), c(8 * a)]), d]),
                    c(4 * a)])
    inner = o.const(np.abs(taps - 0.5) < 1, "i1")  # the taps at floor(x) and floor(x) + 1
    return o("Where", [inner, near, far], dtype="f32")
