"""Resize, one axis at a time, as ``onnx.reference`` computes it (op_resize.py).

Every Resize with static shapes is taken, not only what torch-mlir leaves: its own
conversion takes ``(in - 1) / (out - 1)`` for align_corners where ONNX divides by
``scale * in - 1``, so one semantics serves all. Scales, sizes and roi are function
arguments in ONNX's tests, so the source coordinate of each output index is computed at
run time in f64 (the reference's precision) from the output index, the axis's scale and
roi; the output sizes come from the result type. Per axis, each output index takes W
taps: nearest one index (a Gather, exact with inf/NaN), linear 2, cubic 4, antialias a
window wide enough for the smallest scale the static sizes allow (taps past the filter's
support weigh 0). The taps are gathered, weighted and summed, like the reference.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import NUMPY, Emitter, OnnxOp, Tensor

ROI_SINCE = 11  # Resize-10 has (X, scales) and Upsample's semantics


def resize(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    out_shape, out_dtype = op.results[0]
    if x is None or x.dtype not in NUMPY or len(out_shape) != x.rank or 0 in x.shape or 0 in out_shape:
        return None
    a = op.attrs
    if op.opset < ROI_SINCE:  # Upsample's nearest repeats each element (floor of y / scale)
        mode, ctm, nearest = str(a.get("mode", "nearest")), "asymmetric", "floor"
        roi, scales, sizes = None, op.input(1), None
    else:
        mode = str(a.get("mode", "nearest"))
        ctm = str(a.get("coordinate_transformation_mode", "half_pixel"))
        nearest = str(a.get("nearest_mode", "round_prefer_floor"))
        roi, scales, sizes = op.input(1), op.input(2), op.input(3)
    if scales is not None and math.prod(scales.shape) == 0:  # opsets 11, 12: an empty scales with sizes
        scales = None
    rank = x.rank
    axes = [d % rank for d in a.get("axes", list(range(rank)))]
    given = scales if scales is not None else sizes
    if given is None or given.shape != [len(axes)] or mode not in ("nearest", "linear", "cubic"):
        return None
    if ctm == "tf_crop_and_resize" and (roi is None or roi.shape != [2 * len(axes)]):
        return None
    m = Arith(e)
    factors = _scales(m, op, x, axes, scales, sizes)
    work = x.dtype if mode == "nearest" else ("f32" if x.dtype == "f32" else "f64")
    data = m.cast(x, work)
    for i, d in enumerate(axes):
        n, size, scale = x.shape[d], out_shape[d], factors[i]
        if ctm != "tf_crop_and_resize" and size == n and isinstance(scale, float) and math.isclose(scale, 1.0):
            continue  # the reference skips an identity axis
        s = scale if isinstance(scale, Tensor) else m.lit([scale])
        axis_roi = (_item(m, roi, i), _item(m, roi, len(axes) + i)) if ctm == "tf_crop_and_resize" and roi else None
        coord = _source(m, ctm, s, n, size, axis_roi)
        if mode == "nearest":
            taps, weights = _nearest(m, coord, nearest), None
        else:
            taps, weights = _kernel(m, op, coord, s, n, size, mode, scales is not None)
        data = _apply(m, data, d, taps, weights, n)
        if weights is None and a.get("exclude_outside", 0):  # a nearest pixel outside the input weighs 0
            outside = m.or_(m.lt(taps, 0.0), m.gt(taps, float(n - 1)))
            data = m.where(m.reshape(outside, [size] + [1] * (rank - d - 1)), m.lit(0, work), data)
        if axis_roi is not None:  # tf_crop_and_resize: a source outside the input reads extrapolation_value
            outside = m.or_(m.lt(coord, 0.0), m.gt(coord, float(n - 1)))
            fill = _saturated(float(a.get("extrapolation_value", 0.0)), work)
            data = m.where(m.reshape(outside, [size] + [1] * (rank - d - 1)), m.lit(fill, work), data)
    return [_to(m, data, out_dtype).value]


def _scales(m: Arith, op: OnnxOp, x: Tensor, axes: list[int], scales: Tensor | None,
            sizes: Tensor | None) -> list[float | Tensor]:
    """Each resized axis's scale: a number where known here, else a [1] f64 tensor."""
    if scales is not None:
        if scales.const is not None:
            return [float(v) for v in np.asarray(scales.const).reshape(-1)]
        s64 = m.cast(scales, "f64")
        return [m.take(s64, i) for i in range(len(axes))]
    assert sizes is not None
    policy = str(op.attrs.get("keep_aspect_ratio_policy", "stretch"))
    if sizes.const is not None:
        ratios = [int(v) / x.shape[d] for v, d in zip(np.asarray(sizes.const).reshape(-1), axes, strict=True)]
        if policy == "stretch":
            return list(ratios)
        return [min(ratios) if policy == "not_larger" else max(ratios)] * len(axes)
    per_axis = m.div(m.cast(sizes, "f64"), np.array([x.shape[d] for d in axes], np.float64))
    items = [m.take(per_axis, i) for i in range(len(axes))]
    if policy == "stretch":
        return list(items)
    pick = m.min if policy == "not_larger" else m.max
    one = items[0]
    for t in items[1:]:
        one = pick(one, t)
    return [one] * len(axes)


def _item(m: Arith, roi: Tensor, index: int) -> Tensor:
    return m.take(roi, index)  # kept in roi's type: the reference mixes its f32 items in before f64


def _source(m: Arith, ctm: str, s: Tensor, n: int, size: int, roi: tuple[Tensor, Tensor] | None) -> Tensor:
    """x_ori of output indices 0..size-1 (``_compute_x_ori``), shape [size], f64."""
    y = m.lit(np.arange(size, dtype=np.float64))
    width = m.mul(s, float(n))  # the float output width, scale * input width
    is_one = m.eq(width, 1.0)
    if ctm == "align_corners":
        return m.where(is_one, 0.0, m.div(m.mul(y, float(n - 1)), m.sub(width, 1.0)))
    if ctm == "asymmetric":
        return m.div(y, s)
    half = m.sub(m.div(m.add(y, 0.5), s), 0.5)
    if ctm == "half_pixel":
        return half
    if ctm == "pytorch_half_pixel":
        return m.where(is_one, -0.5, half)
    if ctm == "half_pixel_symmetric":
        offset = m.mul(float(n) / 2, m.sub(1.0, m.div(float(size), width)))
        return m.add(offset, half)
    if ctm == "tf_crop_and_resize" and roi is not None:
        start, end = roi
        span = m.cast(m.sub(end, start), "f64")
        lo = m.cast(m.mul(start, m.lit(float(n - 1), start.dtype)), "f64")
        single = m.cast(m.div(m.mul(m.sub(end, start), m.lit(float(n - 1), start.dtype)),
                              m.lit(2.0, start.dtype)), "f64")
        spread = m.div(m.mul(m.mul(y, span), float(n - 1)), m.sub(width, 1.0))
        return m.add(m.where(is_one, single, spread), lo)
    raise ValueError(f"Resize: coordinate_transformation_mode {ctm!r}")


def _nearest(m: Arith, x: Tensor, mode: str) -> Tensor:
    """The one source index (f64, unclamped) of each output index."""
    low = m.floor(x)
    frac = m.sub(x, low)
    if mode == "round_prefer_floor":
        return m.where(m.gt(frac, 0.5), m.add(low, 1.0), low)
    if mode == "round_prefer_ceil":
        return m.where(m.lt(frac, 0.5), low, m.add(low, 1.0))
    if mode == "floor":
        return low
    if mode == "ceil":
        return m.ceil(x)
    raise ValueError(f"Resize: nearest_mode {mode!r}")


def _kernel(m: Arith, op: OnnxOp, x: Tensor, s: Tensor, n: int, size: int, mode: str,
            by_scales: bool) -> tuple[Tensor, Tensor]:
    """Linear or cubic taps [size, W] (f64, unclamped) and their weights [size, W]."""
    low = m.floor(x)
    # the reference's ratio lies in (0, 1]: an integer source takes the pixel on its left as base
    base = m.reshape(m.where(m.eq(x, low), m.sub(x, 1.0), low), [size, 1])
    ratio = m.sub(m.reshape(x, [size, 1]), base)
    a = float(op.attrs.get("cubic_coeff_a", -0.75))
    if op.attrs.get("antialias", 0):
        # support 1 (linear) or 2 (cubic) input pixels stretched by 1/scale when downsampling; the
        # scale is at least (size - 1/2) / n (sizes round half up, scales floor), a pixel's slack kept
        reach = 1.0 if mode == "linear" else 2.0
        least = (size - (0.0 if by_scales else 0.5)) / n
        half = math.ceil(reach / min(least, 1.0)) + 1
        offsets = np.arange(1 - half, half + 1, dtype=np.float64)[None, :]
        arg = m.mul(m.sub(offsets, ratio), m.min(s, 1.0))
        dist = m.unary("Abs", arg)
        if mode == "linear":
            w = m.max(m.min(m.sub(1.0, dist), 1.0), 0.0)
        else:
            d2 = m.mul(dist, dist)
            d3 = m.mul(dist, d2)
            near = m.add(m.sub(m.mul(a + 2, d3), m.mul(a + 3, d2)), 1.0)
            far = m.sub(m.add(m.sub(m.mul(a, d3), m.mul(5 * a, d2)), m.mul(8 * a, dist)), 4 * a)
            w = m.where(m.lt(dist, 2.0), m.where(m.gt(dist, 1.0), far, near), 0.0)
        w = m.div(w, _row_sum(m, w))
    elif mode == "linear":
        offsets = np.array([[0.0, 1.0]])
        w = m.columns([m.sub(1.0, ratio), ratio])
    else:
        offsets = np.array([[-1.0, 0.0, 1.0, 2.0]])
        r1, r0 = m.add(ratio, 1.0), m.sub(1.0, ratio)
        r2 = m.add(r0, 1.0)
        w = m.columns([
            m.sub(m.mul(m.add(m.mul(m.sub(m.mul(a, r1), 5 * a), r1), 8 * a), r1), 4 * a),
            m.add(m.mul(m.mul(m.sub(m.mul(a + 2, ratio), a + 3), ratio), ratio), 1.0),
            m.add(m.mul(m.mul(m.sub(m.mul(a + 2, r0), a + 3), r0), r0), 1.0),
            m.sub(m.mul(m.add(m.mul(m.sub(m.mul(a, r2), 5 * a), r2), 8 * a), r2), 4 * a),
        ])
    taps = m.add(base, offsets)
    if op.attrs.get("exclude_outside", 0):  # taps outside the input weigh 0, the rest renormalized
        outside = m.or_(m.lt(taps, 0.0), m.gt(taps, float(n - 1)))
        w = m.where(outside, 0.0, w)
        total = _row_sum(m, w)
        w = m.div(w, m.where(m.eq(total, 0.0), 1.0, total))
    return taps, w


def _row_sum(m: Arith, w: Tensor) -> Tensor:
    return m.matmul(w, m.lit(np.ones((w.shape[1], 1))))


def _apply(m: Arith, data: Tensor, d: int, taps: Tensor, weights: Tensor | None, n: int) -> Tensor:
    """Gather the taps along axis ``d`` (edge padding: indices clamped), weight and sum them."""
    index = m.cast(m.max(m.min(taps, float(n - 1)), 0.0), "si64")
    gathered = m.gather(data, index, d)
    if weights is None:
        return gathered
    rest = data.rank - d - 1
    weighted = m.mul(gathered, m.cast(m.reshape(weights, [*weights.shape, *[1] * rest]), data.dtype))
    shape = [*data.shape[:d], taps.shape[0], *data.shape[d + 1:]]
    total = m.e.op1("ReduceSum", [weighted, m.lit([d + 1], "si64")], shape, data.dtype, keepdims=0)
    return Tensor(total, shape, data.dtype)


def _saturated(value: float, dtype: str) -> float:
    bounds = _int_bounds(dtype)
    return float(np.clip(np.round(value), *bounds)) if bounds else value


def _int_bounds(dtype: str) -> tuple[float, float] | None:
    kind = np.dtype(NUMPY[dtype])
    if kind.kind not in "iu":
        return None
    info = np.iinfo(kind.type)  # type: ignore[type-var]
    return float(info.min), float(info.max)


def _to(m: Arith, data: Tensor, dtype: str) -> Tensor:
    """The result's type: integers rounded half to even and saturated, as ``saturate_cast``."""
    if data.dtype == dtype:
        return data
    bounds = _int_bounds(dtype)
    if bounds:
        data = m.max(m.min(m.round(data), m.lit(bounds[1], data.dtype)), m.lit(bounds[0], data.dtype))
    return m.cast(data, dtype)
