"""Indexing forms torch-mlir's conversions get wrong: Slice with a negative step (its lowering
builds a negative offset), ScatterElements reducing with max or min (not converted), and Det
(torch-mlir's aborts at run time where elimination needs a row exchange).

- Slice: with constant starts, ends, axes and steps, each sliced axis is a Gather of the
  indices numpy's slicing gives (ONNX's reference slices with numpy);
- ScatterElements max/min: each update's flat target position (static strides, the index
  from the data), a [updates, positions] match mask, the updates' max (min) per position
  where any lands, combined with the data there (the reference applies them in turn, the
  same extremum);
- Det: LU with partial pivoting, unrolled (torch-mlir's elimination does not pivot and
  aborts where it would need to).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import NUMPY, ONNX_TYPE, Emitter, OnnxOp, Tensor

MAX_MASK = 1 << 22  # elements of the match mask: larger scatters are left to torch-mlir
MAX_DET = 64  # Det's unrolled elimination grows as n^4: larger matrices are left to torch-mlir


def slice_(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or not all(op.known(i) for i in range(1, 5)) or op.input(1) is None or op.input(2) is None:
        return None
    starts, ends = op.ints(1) or [], op.ints(2) or []
    axes = op.ints(3) or list(range(len(starts)))
    steps = op.ints(4) or [1] * len(starts)
    if min(steps, default=1) > 0 or not len(starts) == len(ends) == len(axes) == len(steps):
        return None  # forward slices: torch-mlir's
    shape, value = list(x.shape), x.value
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        axis = axis + x.rank if axis < 0 else axis
        picked = np.arange(shape[axis])[slice(start, end, step)]
        shape[axis] = len(picked)
        value = e.op1("Gather", [value, e.const(picked, "si64")], list(shape), x.dtype, axis=axis)
    return [value] if shape == op.results[0][0] else None


def scatter_elements(op: OnnxOp, e: Emitter) -> list[Any] | None:
    data, indices, updates = op.input(0), op.input(1), op.input(2)
    reduction = op.attrs.get("reduction", "none")
    if data is None or indices is None or updates is None or reduction not in ("max", "min"):
        return None
    if data.dtype not in NUMPY or data.dtype == "i1" or indices.shape != updates.shape:
        return None
    count, positions = math.prod(updates.shape), math.prod(data.shape)
    if count * positions > MAX_MASK or count == 0:
        return None
    axis = int(op.attrs.get("axis", 0))
    axis = axis + data.rank if axis < 0 else axis
    strides = [math.prod(data.shape[d + 1:]) for d in range(data.rank)]
    coords = np.indices(updates.shape).reshape(updates.rank, -1)
    base = sum(coords[d] * strides[d] for d in range(data.rank) if d != axis)  # the target without the index
    index = e.op1("Reshape", [indices, e.const([count], "si64")], [count], indices.dtype)
    index = e.op1("Cast", [index], [count], "si64", to=ONNX_TYPE["si64"])
    wrapped = e.op1("Add", [index, e.const(data.shape[axis], "si64")], [count], "si64")
    negative = e.op1("Less", [index, e.const(0, "si64")], [count], "i1")
    index = e.op1("Where", [negative, wrapped, index], [count], "si64")
    target = e.op1("Add", [e.op1("Mul", [index, e.const(strides[axis], "si64")], [count], "si64"),
                           e.const(base, "si64")], [count], "si64")
    column = e.op1("Reshape", [target, e.const([count, 1], "si64")], [count, 1], "si64")
    match = e.op1("Equal", [column, e.const(np.arange(positions)[None, :], "si64")], [count, positions], "i1")
    kind = np.dtype(NUMPY[data.dtype])
    if kind.kind == "f":  # what every update beats: -inf for max, +inf for min (the type's bound for integers)
        fill: Any = -np.inf if reduction == "max" else np.inf
    else:
        bounds = np.iinfo(kind)  # type: ignore[type-var]
        fill = bounds.min if reduction == "max" else bounds.max
    flat_updates = e.op1("Reshape", [updates, e.const([count, 1], "si64")], [count, 1], data.dtype)
    candidates = e.op1("Where", [match, flat_updates, e.const(fill, data.dtype)], [count, positions], data.dtype)
    name = "ReduceMax" if reduction == "max" else "ReduceMin"
    best = e.op1(name, [candidates, e.const([0], "si64")], [positions], data.dtype, keepdims=0)
    hits = e.op1("ReduceMax", [e.op1("Cast", [match], [count, positions], "si32", to=ONNX_TYPE["si32"]),
                               e.const([0], "si64")], [positions], "si32", keepdims=0)
    landed = e.op1("Greater", [hits, e.const(0, "si32")], [positions], "i1")
    flat = e.op1("Reshape", [data, e.const([positions], "si64")], [positions], data.dtype)
    combined = e.op1("Max" if reduction == "max" else "Min", [flat, best], [positions], data.dtype)
    result = e.op1("Where", [landed, combined, flat], [positions], data.dtype)
    return [e.op1("Reshape", [result, e.const(data.shape, "si64")], list(data.shape), data.dtype)]


def det(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """Gaussian elimination with partial pivoting, unrolled over the columns (LAPACK's LU,
    as numpy's det): at step k the row of the largest remaining |A[i, k]| is swapped to k
    by a permutation matrix (the sign flips when it moves), then the rows below lose their
    multiple of row k; the determinant is the sign times the diagonal's product."""
    x = op.inputs[0]
    if x is None or x.rank < 2 or x.shape[-1] != x.shape[-2] or not x.dtype.startswith("f") \
            or x.shape[-1] > MAX_DET:
        return None
    n, batch, dtype = x.shape[-1], x.shape[:-2], x.dtype
    o = Arith(e, dtype)
    a = Tensor(x.value, list(x.shape), dtype)
    sign = o.lit(np.ones(batch))
    eye = np.eye(n)
    for k in range(n):
        column = o("Gather", [a, o.lit([k], "si64")], [*batch, n, 1], axis=-1)  # A[..., :, k]
        below = o.where(o.lit((np.arange(n) >= k)[:, None], "i1"), o.unary("Abs", column), -1.0)
        pivot = o("ArgMax", [below], [*batch, 1, 1], "si64", axis=-2, keepdims=1)  # the row to bring to k
        moved = o.cast(o("Equal", [pivot, o.lit(k, "si64")], dtype="i1"), dtype)
        sign = o.mul(sign, o.sub(o.mul(o.reshape(moved, list(batch)), 2.0), 1.0))  # +1 kept, -1 swapped
        rows = o.lit(np.arange(n)[:, None], "si64")
        at_k = o.cast(o("Equal", [rows, o.lit(k, "si64")], dtype="i1"), dtype)  # [n, 1]
        at_p = o.cast(o("Equal", [rows, pivot], dtype="i1"), dtype)  # [..., n, 1]
        k_row, p_row = o.transpose_last(at_k), o.transpose_last(at_p)
        swap = o.add(o.sub(o.sub(o.lit(eye), o.mul(at_k, k_row)), o.mul(at_p, p_row)),
                     o.add(o.mul(at_k, p_row), o.mul(at_p, k_row)))  # I - kk - pp + kp + pk
        a = o.matmul(swap, a)  # rows k and p exchanged (the identity where p = k)
        row = o("Gather", [a, o.lit([k], "si64")], [*batch, 1, n], axis=-2)  # A[..., k, :]
        column = o("Gather", [a, o.lit([k], "si64")], [*batch, n, 1], axis=-1)
        pivot_value = o("Gather", [row, o.lit([k], "si64")], [*batch, 1, 1], axis=-1)
        lower = o.lit((np.arange(n) > k)[:, None].astype(float))
        factor = o.mul(o.div(column, pivot_value), lower)
        factor = o.where(o("Equal", [pivot_value, o.lit(0.0)], dtype="i1"), 0.0, factor)  # singular: det 0 below
        a = o.sub(a, o.mul(factor, row))
    diagonal = o.mul(a, o.lit(eye))
    entries = o("ReduceSum", [diagonal, o.lit([-1], "si64")], [*batch, n], keepdims=0)
    product = o("ReduceProd", [entries, o.lit([-1], "si64")], list(batch), keepdims=0)
    return [o.mul(product, sign).value]
