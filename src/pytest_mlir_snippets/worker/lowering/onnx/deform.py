"""DeformConv as ONNX's reference computes it (op_deform_conv.py): bilinear samples, then a
grouped matrix product with the weights.

torch-mlir turns DeformConv into ``torch.torchvision.deform_conv2d``, which has no lowering
to linalg. Here each kernel tap's sampling position is its place on the kernel grid (a
numpy table from the static shapes: output index * stride - pad begin + kernel index *
dilation) plus the offset input; the reference samples X there with GridSample (linear,
zeros padding, align_corners, i.e. at the pixel coordinates themselves), so each of the
2^n corners around a position (Floor, Floor + 1 per spatial axis) weighs the product of
its axes' linear weights, a corner outside the input weighs 0, and the corners are read
with one Gather from the flattened input at computed indices. The samples times the
mask, summed over the corners, are the columns of an im2col; one batched MatMul with the
weights per group and the bias make the output. Any number of spatial axes is taken (the
specification allows N-D; the reference implements 2-D, of which this is the N-D form).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, Tensor

FLOATS = ("f16", "bf16", "f32", "f64")


def kernel_grid(kernel: list[int], out: list[int], strides: list[int], dilations: list[int],
                pads: list[int]) -> np.ndarray:
    """Each tap's position before its offset: [prod(kernel), spatial axes, prod(out)], the
    layout of the offset input (kernel taps, then the axis, then the output positions)."""
    nd = len(kernel)
    taps = np.indices(kernel).reshape(nd, -1)  # [axis, tap]
    outs = np.indices(out).reshape(nd, -1)  # [axis, output position]
    start = outs[None, :, :] * np.array(strides)[None, :, None] - np.array(pads[:nd])[None, :, None]
    grid: np.ndarray = (start + (taps.T * np.array(dilations)[None, :])[:, :, None]).astype(np.float64)
    return grid


def corner_bits(nd: int) -> np.ndarray:
    """[2^nd, nd]: corner c's step (0: Floor, 1: Floor + 1) along each spatial axis."""
    return np.array([[(c >> (nd - 1 - d)) & 1 for d in range(nd)] for c in range(2 ** nd)], np.float64)


def deform_conv(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x, w, off = op.input(0), op.input(1), op.input(2)
    b, mask = op.input(3), op.input(4)
    out_shape, out_dtype = op.results[0]
    if x is None or w is None or off is None or x.dtype not in FLOATS or x.rank < 3:
        return None
    nd = x.rank - 2
    n, c, space = x.shape[0], x.shape[1], x.shape[2:]
    oc = w.shape[0] if w.rank == nd + 2 else 0
    a = op.attrs
    kernel = [int(k) for k in a.get("kernel_shape", w.shape[2:])]
    strides = [int(s) for s in a.get("strides", [1] * nd)]
    dilations = [int(d) for d in a.get("dilations", [1] * nd)]
    pads = [int(p) for p in a.get("pads", [0] * (2 * nd))]
    group, offset_group = int(a.get("group", 1)), int(a.get("offset_group", 1))
    out = off.shape[2:]
    taps, positions, corners = math.prod(kernel), math.prod(out), 2 ** nd
    if (len(out_shape) != x.rank or out_shape != [n, oc, *out] or w.shape != [oc, c // group, *kernel]
            or oc % group or c % group or c % offset_group or 0 in x.shape or 0 in out_shape
            or off.shape[:2] != [n, offset_group * taps * nd]
            or (mask is not None and mask.shape != [n, offset_group * taps, *out])
            or (b is not None and b.shape != [oc])):
        return None
    work = "f32" if x.dtype in ("f16", "bf16") else x.dtype  # positions need more than f16's 11 bits
    m = Arith(e, work)
    per_offset_group = c // offset_group
    # sampling positions [N, OG, 1, taps, axis, out]: the kernel grid plus the offsets
    grid = kernel_grid(kernel, out, strides, dilations, pads)
    shifts = m.reshape(m.cast(off, work), [n, offset_group, 1, taps, nd, positions])
    pos = m.add(shifts, grid)
    low = m.floor(pos)
    frac = m.sub(pos, low)
    bits = corner_bits(nd)[:, None, :, None]  # [corner, 1, axis, 1]
    index = m.add(low, bits)  # [N, OG, corner, taps, axis, out]
    # a corner's weight along an axis: 1 - frac at Floor, frac at Floor + 1; 0 outside the input
    weight = m.add(m.mul(frac, 2 * bits - 1), 1 - bits)
    upper = np.array(space, np.float64)[:, None] - 1
    outside = m.or_(m.lt(index, 0.0), m.gt(index, upper))
    weight = m.where(outside, 0.0, weight)
    weight = _reduce(m, "ReduceProd", weight, 4)  # [N, OG, corner, taps, out]
    if mask is not None:
        weight = m.mul(weight, m.reshape(m.cast(mask, work), [n, offset_group, 1, taps, positions]))
    # the corner's index in the flattened input: clamped in bounds (its weight is 0 where it was not)
    clamped = m.cast(m.max(m.min(index, upper), 0.0), "si64")
    strides_in = np.array([math.prod(space[d + 1:]) for d in range(nd)], np.int64)[:, None]
    flat = _reduce(m, "ReduceSum", m.mul(clamped, m.lit(strides_in, "si64")), 4)
    plane = math.prod(space)
    channels = np.arange(n * c, dtype=np.int64).reshape(n, offset_group, per_offset_group, 1, 1, 1) * plane
    flat = m.add(m.reshape(flat, [n, offset_group, 1, corners, taps, positions]), m.lit(channels, "si64"))
    data = m.reshape(m.cast(x, work), [n * c * plane])
    samples = m.gather(data, flat, 0)  # [N, OG, C / OG, corner, taps, out]
    weighted = m.mul(samples, m.reshape(weight, [n, offset_group, 1, corners, taps, positions]))
    columns = _reduce(m, "ReduceSum", weighted, 3)  # [N, OG, C / OG, taps, out]
    # grouped im2col product: [G, OC / G, C / G * taps] @ [N, G, C / G * taps, out]
    inner = c // group * taps
    cols = m.reshape(columns, [n, group, inner, positions])
    weights = m.reshape(m.cast(w, work), [group, oc // group, inner])
    result = m.reshape(m.matmul(weights, cols), [n, oc, *out])
    if b is not None:
        result = m.add(result, m.reshape(m.cast(b, work), [oc, *[1] * nd]))
    return [m.cast(result, out_dtype).value]


def _reduce(m: Arith, name: str, a: Tensor, axis: int) -> Tensor:
    shape = a.shape[:axis] + a.shape[axis + 1:]
    return Tensor(m.e.op1(name, [a, m.lit([axis], "si64")], shape, a.dtype, keepdims=0), shape, a.dtype)
