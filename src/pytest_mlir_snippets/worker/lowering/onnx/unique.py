"""Unique as static tensor algebra: torch-mlir's conversion fails on every form (an
illegal ``torch.constant.bool`` without an axis, a malformed ``aten.scatter.src`` with
one, or a crash), while an ONNX import declares the number of unique slices U in the
result types, so the whole op is built here with static shapes.

The input becomes n rows of width w (the axis moved first and the rest flattened; no
axis: every element a row of width 1). Rows are compared pairwise ([n, n, w] per column,
reduced over the row); each row's first occurrence is the lowest index equal to it; a
first occurrence's rank among the first occurrences is the count of those before it
(lexicographic row order when sorted, index order otherwise); every row takes its first
occurrence's rank as its inverse index; indices, counts and Y are then gathered with
computed indices (Gather keeps the data exact, NaN and infinities included).

Equality and order are numpy's, as ``onnx.reference`` calls ``numpy.unique``: without an
axis (or on a 1-D input) NaNs are equal to each other and sort last; along an axis of a
higher-rank input rows are compared as numpy compares structured records, NaN unequal to
everything but sorting last, rows tied in that order kept in index order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, Tensor

# element types compared as they are; other integers and booleans are widened to si64
# (exact; ONNX Less takes no booleans), f16 to f32 (exact); ui16-ui64 and bf16 are left
_COMPARED = {"f32": "f32", "f64": "f64", "f16": "f32", "si64": "si64", "si32": "si64", "si16": "si64",
             "si8": "si64", "ui8": "si64", "i1": "si64"}
SI64, I1 = "si64", "i1"
MAX_PAIRS = 1 << 26  # [n, n, w] comparison elements past which the expansion is not attempted


def _rows(x: Tensor, axis: int | None, a: Arith) -> Tensor:
    """[n, w]: the slices along ``axis`` as rows (every element a row without an axis)."""
    if axis is None:
        return a.reshape(x, [int(np.prod(x.shape)), 1])
    moved = a.transpose(x, [axis, *(d for d in range(x.rank) if d != axis)]) if axis else x
    return a.reshape(moved, [x.shape[axis], int(np.prod(x.shape)) // x.shape[axis]])


def _reduce(a: Arith, name: str, x: Tensor, axis: int) -> Tensor:
    """``name`` (ReduceMin, ReduceMax, ReduceSum) over ``axis``, which is dropped."""
    shape = [d for i, d in enumerate(x.shape) if i != axis]
    out = a.e.op1(name, [x, a.lit([axis], SI64)], shape, x.dtype, keepdims=0)
    return Tensor(out, shape, x.dtype)


def _all(a: Arith, x: Tensor, axis: int) -> Tensor:
    return a.cast(_reduce(a, "ReduceMin", a.cast(x, SI64), axis), I1)


def _any(a: Arith, x: Tensor, axis: int) -> Tensor:
    return a.cast(_reduce(a, "ReduceMax", a.cast(x, SI64), axis), I1)


def _and(a: Arith, x: Tensor, y: Tensor) -> Tensor:
    shape = list(np.broadcast_shapes(tuple(x.shape), tuple(y.shape)))
    return Tensor(a.e.op1("And", [x, y], shape, I1), shape, I1)


def _not(a: Arith, x: Tensor) -> Tensor:
    return a.unary("Not", x)


def _compare(rows: Tensor, nan_equal: bool, a: Arith) -> tuple[Tensor, Tensor, Tensor]:
    """[n, n] booleans indexed [j, i]: row j equals row i, row j sorts before row i, and
    the two are tied in sort order (equal there, NaN tied with NaN)."""
    n, w = rows.shape
    rj, ri = a.reshape(rows, [n, 1, w]), a.reshape(rows, [1, n, w])
    equal = a.eq(rj, ri)  # [j, i, column]
    less = a.lt(rj, ri)
    tie = equal
    if rows.dtype.startswith("f"):
        # NaN sorts after every number and ties with NaN; torch-mlir lowers Equal and Less to
        # unordered predicates (true where either side is NaN), so NaN is masked out first
        nan_j, nan_i = (Tensor(a.e.op1("IsNaN", [r], r.shape, I1), r.shape, I1) for r in (rj, ri))
        numbers = _not(a, a.or_(nan_j, nan_i))
        equal, less = _and(a, equal, numbers), _and(a, less, numbers)
        tie = a.or_(equal, _and(a, nan_j, nan_i))
        less = a.or_(less, _and(a, nan_i, _not(a, nan_j)))
    # a column decides the order where every column before it ties: no untied column before it
    untied = a.cast(_not(a, tie), SI64)
    before = Tensor(a.e.op1("CumSum", [untied, a.lit(2, SI64)], [n, n, w], SI64, exclusive=1), [n, n, w], SI64)
    lexless = _any(a, _and(a, less, a.eq(before, 0)), 2)
    lextie = _all(a, tie, 2)
    same = lextie if nan_equal or not rows.dtype.startswith("f") else _all(a, equal, 2)
    return same, lexless, lextie


def _empty(op: OnnxOp, n: int, u: int, e: Emitter) -> list[Any] | None:
    """An input without elements, as numpy: no slices, no unique ones; n > 0 slices without
    elements (another dimension is 0), all equal: one unique, first at 0, counted n times.
    Every output is then a constant (Y has no elements either way)."""
    if u != min(n, 1):
        return None
    values = [np.zeros(op.results[0][0]), np.zeros(u), np.zeros(n), np.full(u, n)]
    return [e.const(v, dtype) for v, (_, dtype) in zip(values, op.results, strict=False)]


def unique(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.input(0)
    if x is None or x.dtype not in _COMPARED or any(not shape for shape, _ in op.results):
        return None  # an element type not compared here, or a result without a static shape
    a = Arith(e)
    axis: int | None = None
    if "axis" in op.attrs:
        axis = int(op.attrs["axis"])
        axis = axis + x.rank if axis < 0 else axis
        if not 0 <= axis < x.rank:
            return None
    y_shape, y_dtype = op.results[0]
    u = y_shape[0 if axis is None else axis] if len(y_shape) == (1 if axis is None else x.rank) else -1
    n = int(np.prod(x.shape)) if axis is None else x.shape[axis]
    if u < 0 or u > n:
        return None  # no static count of unique slices
    if int(np.prod(x.shape)) == 0:
        return _empty(op, n, u, e)
    if n * n * (int(np.prod(x.shape)) // n) > MAX_PAIRS:
        return None  # the pairwise comparison would not fit in memory
    rows = a.cast(_rows(x, axis, a), _COMPARED[x.dtype])
    # numpy compares scalars (no axis, or a 1-D input) with NaNs equal, rows with NaN unequal
    same, lexless, lextie = _compare(rows, axis is None or x.rank == 1, a)
    # index comparisons from integer literals (large i1 literals do not parse back)
    j_index, i_index = a.lit(np.arange(n)[:, None], SI64), a.lit(np.arange(n)[None, :], SI64)
    j_before_i = a.lt(j_index, i_index)
    same = a.or_(same, a.eq(j_index, i_index))  # a row is its own first occurrence at least
    first_of = _reduce(a, "ReduceMin", a.where(same, j_index, n), 0)  # [i]
    is_first = a.eq(a.reshape(first_of, [n, 1]), j_index)  # [j, 1]
    if int(op.attrs.get("sorted", 1)):
        order = a.or_(lexless, _and(a, lextie, j_before_i))  # ties (rows with NaN) in index order
    else:
        order = j_before_i
    rank = _reduce(a, "ReduceSum", a.cast(_and(a, order, is_first), SI64), 0)  # [i]: right for first rows
    inverse = a.gather(rank, first_of, 0)
    hits = a.eq(a.reshape(inverse, [1, n]), a.lit(np.arange(u)[:, None], SI64))  # [u, i]
    indices = _reduce(a, "ReduceMin", a.where(hits, i_index, n), 1)
    counts = _reduce(a, "ReduceSum", a.cast(hits, SI64), 1)
    data = a.reshape(x, [n]) if axis is None else x
    y = e.op1("Gather", [data, indices], y_shape, y_dtype, axis=axis or 0)
    outputs = [y]
    for value, (shape, dtype) in zip((indices, inverse, counts), op.results[1:], strict=False):
        if shape != value.shape:
            return None
        outputs.append(a.cast(value, dtype).value)
    return outputs
