"""RoiAlign as elementwise ONNX ops, one Gather and a reduction, after ONNX's reference.

Each region's sample points (sampling_ratio per bin and axis, or, for 0, ceil(region / bin
count) known only where the regions are constants) are computed from the regions at run
time per axis: the reference's bilinear pre-calculation (samples past [-1, size] weigh
nothing, coordinates clamped at 0 and at the last pixel) gives each sample its two
neighbours and weights on each axis. The four corners of every sample are read with one
Gather from the input as rows of channels; avg sums the weighted corners over the bin's
samples and divides by their count, max takes the largest weighted corner (the reference's
max of w * pixel, not of the interpolated value) over corners and samples.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import NUMPY, ONNX_TYPE, Emitter, OnnxOp, Tensor

MAX_SAMPLES = 1 << 24  # corner samples gathered (regions x bins x grid x 4 x channels)
HALF_PIXEL_SINCE = 16  # RoiAlign-16: coordinate_transformation_mode, default half_pixel (10: output_half_pixel)


def roi_align(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x, rois, batch_index = op.input(0), op.input(1), op.input(2)
    if x is None or rois is None or batch_index is None or x.rank != 4 or rois.rank != 2 or batch_index.rank != 1:
        return None
    mode = str(op.attrs.get("mode", "avg")).lower()
    default = "half_pixel" if op.opset >= HALF_PIXEL_SINCE else "output_half_pixel"
    half_pixel = str(op.attrs.get("coordinate_transformation_mode", default)).lower() == "half_pixel"
    pooled = [int(op.attrs.get("output_height", 1)), int(op.attrs.get("output_width", 1))]
    ratio, scale = int(op.attrs.get("sampling_ratio", 0)), float(op.attrs.get("spatial_scale", 1.0))
    if mode not in ("avg", "max") or x.dtype not in ("f16", "f32", "f64") or rois.dtype != x.dtype:
        return None
    if rois.shape[1] != 4 or 0 in x.shape or 0 in rois.shape or min(pooled) < 1:
        return None
    n, c, h, w = x.shape
    count = rois.shape[0]
    offset = 0.5 if half_pixel else 0.0
    if ratio > 0:
        grids = [np.full(count, ratio), np.full(count, ratio)]
    elif rois.const is not None:  # adaptive: ceil(region / bins) samples per bin, each region its own
        r = np.asarray(rois.const, NUMPY[x.dtype]) * NUMPY[x.dtype](scale) - NUMPY[x.dtype](offset)
        sizes = [r[:, 3] - r[:, 1], r[:, 2] - r[:, 0]]
        if not half_pixel:
            sizes = [np.maximum(s, 1.0) for s in sizes]
        grids = [np.maximum(np.ceil(s / p), 0).astype(np.int64) for s, p in zip(sizes, pooled, strict=True)]
    else:
        return None
    o = Arith(e)
    kind = x.dtype
    if batch_index.dtype != "si64":
        batch_index = o("Cast", [batch_index], dtype="si64", to=ONNX_TYPE["si64"])
    most = [max(int(g.max()) if g.size else 1, 1) for g in grids]  # the largest sampling grid per axis
    if count * pooled[0] * most[0] * pooled[1] * most[1] * 4 * x.shape[1] > MAX_SAMPLES:
        return None  # a gather this large swamps the compile: left to torch-mlir
    ys = _axis(o, rois, 1, pooled[0], h, grids[0], scale, offset, half_pixel)
    xs = _axis(o, rois, 0, pooled[1], w, grids[1], scale, offset, half_pixel)
    gh, gw = ys[0].shape[2], xs[0].shape[2]
    # [R, PH, GH, 2, PW, GW, 2]: every sample's four corners
    at_y, at_x = [count, pooled[0], gh, 2, 1, 1, 1], [count, 1, 1, 1, pooled[1], gw, 2]
    batch = o.reshape(o("Mul", [batch_index, o.const(np.array(h * w), "si64")]), [count] + [1] * 6)
    flat = o("Add", [o("Add", [batch, o.reshape(o("Mul", [ys[0], o.const(np.array(w), "si64")]), at_y)]),
                     o.reshape(xs[0], at_x)])
    weight = o("Mul", [o.reshape(ys[1], at_y), o.reshape(xs[1], at_x)])
    inside = o("And", [o.reshape(ys[2], [count, pooled[0], gh, 1, 1, 1, 1]),
                       o.reshape(xs[2], [count, 1, 1, 1, pooled[1], gw, 1])], dtype="i1")
    weight = o("Where", [inside, weight, o.const(0.0, kind)], dtype=kind)
    rows = o.reshape(o("Transpose", [x], [n, h, w, c], perm=[0, 2, 3, 1]), [n * h * w, c])
    values = o("Mul", [o("Gather", [rows, flat], [*flat.shape, c], axis=0), o.reshape(weight, [*weight.shape, 1])])
    # [R, GH, GW]: the samples within each region's grid (all of them unless sampling_ratio is 0)
    taken = ((np.arange(gh)[None, :, None] < grids[0][:, None, None])
             & (np.arange(gw)[None, None, :] < grids[1][:, None, None]))
    if mode == "avg":
        if not taken.all():
            mask = taken.reshape(count, 1, gh, 1, 1, gw, 1, 1)
            values = o("Where", [o.const(mask, "i1"), values, o.const(0.0, kind)], dtype=kind)
        pooled_values = _reduce(o, "ReduceSum", values, [2, 3, 5, 6])
        samples = np.maximum(grids[0] * grids[1], 1).reshape(count, 1, 1, 1)
        pooled_values = o("Div", [pooled_values, o.const(samples, kind)])
    else:
        best = _reduce(o, "ReduceMax", values, [3, 6])  # [R, PH, GH, PW, GW, C]
        if not taken.all():  # samples past a region's grid never win; a region without samples gives 0
            mask = taken.reshape(count, 1, gh, 1, gw, 1)
            best = o("Where", [o.const(mask, "i1"), best, o.const(-np.inf, kind)], dtype=kind)
        pooled_values = _reduce(o, "ReduceMax", best, [2, 4])
        if not taken.any(axis=(1, 2)).all():
            some = taken.any(axis=(1, 2)).reshape(count, 1, 1, 1)
            pooled_values = o("Where", [o.const(some, "i1"), pooled_values, o.const(0.0, kind)], dtype=kind)
    return [o("Transpose", [pooled_values], [count, c, *pooled], perm=[0, 3, 1, 2]).value]


def _reduce(o: Arith, name: str, x: Tensor, axes: list[int]) -> Tensor:
    shape = [d for i, d in enumerate(x.shape) if i not in axes]
    return o(name, [x, o.const(np.array(axes, np.int64), "si64")], shape, keepdims=0)


def _axis(o: Arith, rois: Tensor, column: int, bins: int, size: int, grid: np.ndarray, scale: float, offset: float,
          half_pixel: bool) -> tuple[Tensor, Tensor, Tensor]:
    """One axis of every region's samples: the two neighbours' indices (si64) and weights, [R, bins, G, 2],
    and whether each sample is inside [-1, size], [R, bins, G]; G the largest grid of a region."""
    kind = rois.dtype
    count, most = rois.shape[0], max(int(grid.max()), 1)

    def column_of(k: int) -> Tensor:  # the region's coordinate k, scaled and shifted
        picked = o("Gather", [rois, o.const(np.array(k, np.int64), "si64")], [count], axis=1)
        scaled = o("Mul", [picked, o.const(scale, kind)])
        return o.reshape(o("Sub", [scaled, o.const(offset, kind)]), [count, 1, 1])

    start, end = column_of(column), column_of(column + 2)
    length = o("Sub", [end, start])
    if not half_pixel:  # malformed regions forced to 1 x 1
        length = o("Max", [length, o.const(1.0, kind)])
    bin_size = o("Div", [length, o.const(float(bins), kind)])
    # start + p * bin + (i + 0.5) * bin / grid, in the reference's order
    at_bin = o("Mul", [bin_size, o.const(np.arange(bins).reshape(1, bins, 1), kind)])
    within = o("Div", [o("Mul", [bin_size, o.const(np.arange(most).reshape(1, 1, most) + 0.5, kind)]),
                       o.const(np.maximum(grid, 1).reshape(count, 1, 1), kind)])
    coord = o("Add", [o("Add", [start, at_bin]), within])  # [R, bins, G]
    outside = o("Or", [o("Less", [coord, o.const(-1.0, kind)], dtype="i1"),
                       o("Greater", [coord, o.const(float(size), kind)], dtype="i1")], dtype="i1")
    inside = o("Not", [outside], dtype="i1")
    clamped = o("Max", [coord, o.const(0.0, kind)])
    low = o("Floor", [clamped])
    last = o.const(float(size - 1), kind)
    edge = o("Not", [o("Less", [low, last], dtype="i1")], dtype="i1")  # at the last pixel: both neighbours it
    low = o("Where", [edge, last, low], dtype=kind)
    high = o("Where", [edge, last, o("Add", [low, o.const(1.0, kind)])], dtype=kind)
    clamped = o("Where", [edge, low, clamped], dtype=kind)
    frac = o("Sub", [clamped, low])
    pair = [count, bins, most, 1]
    index = o("Concat", [o.reshape(low, pair), o.reshape(high, pair)], [count, bins, most, 2], axis=3)
    index = o("Cast", [index], dtype="si64", to=ONNX_TYPE["si64"])
    near = o("Sub", [o.const(1.0, kind), frac])
    weight = o("Concat", [o.reshape(near, pair), o.reshape(frac, pair)], [count, bins, most, 2], axis=3)
    return index, weight, inside

