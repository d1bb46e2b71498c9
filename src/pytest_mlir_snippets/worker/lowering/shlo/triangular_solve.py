"""``stablehlo.triangular_solve`` as substitution written in StableHLO ops (slices, one
``dot_general`` per row, ``concatenate``), which ``stablehlo-legalize-to-linalg`` lowers
and the reference interpreter, which has no support for the op, evaluates.

Every form is brought to a lower triangular matrix on the left: ``transpose_a``
transposes ``a`` (``ADJOINT`` conjugates it too), which swaps lower and upper; a solve
on the right (``x op(a) = b``) is the transposed one on the left; an upper triangular
matrix is a lower one with its rows and columns reversed (and ``b``'s rows, and the
result's). Then row ``i`` of the result is ``(b[i] - a[i, :i] x[:i]) / a[i, i]``
(no division with ``unit_diagonal``); only the triangle the op names is read. bf16 and
f16 are solved in f32, as XLA's CPU backend does.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.shlo.build import replace, static_ops
from pytest_mlir_snippets.worker.lowering.shlo.hlo import Hlo, computed_in


def lower_all(module: Any, tir: Any) -> int:
    """Every ``triangular_solve`` with static shapes, expanded; how many."""
    found = static_ops(module, tir, "stablehlo.triangular_solve")
    for op in found:
        with tir.InsertionPoint(op):
            result = _expand(op, tir)
        replace(op, [result])
    return len(found)


def _flag(op: Any, name: str, tir: Any) -> bool:
    return bool(tir.BoolAttr(op.attributes[name]).value)


def _expand(op: Any, tir: Any) -> Any:
    h = Hlo(tir, op.location)
    a, b = op.operands
    element = h.element(b)
    a, b = h.convert(a, computed_in(element)), h.convert(b, computed_in(element))
    rank = len(h.shape(a))
    swap = [*range(rank - 2), rank - 1, rank - 2]
    lower, left = _flag(op, "lower", tir), _flag(op, "left_side", tir)
    transpose = str(op.attributes["transpose_a"])
    if "NO_TRANSPOSE" not in transpose:
        a, lower = h.transpose(a, swap), not lower
        if "ADJOINT" in transpose and h.element(a).startswith("complex"):
            a = h.conjugate(a)
    if not left:  # x a = b: a^T x^T = b^T
        a, b, lower = h.transpose(a, swap), h.transpose(b, swap), not lower
    if not lower:  # reversed rows and columns: lower triangular
        a, b = h.reverse(a, [rank - 2, rank - 1]), h.reverse(b, [rank - 2])
    x = _forward(h, a, b, _flag(op, "unit_diagonal", tir))
    if not lower:
        x = h.reverse(x, [rank - 2])
    if not left:
        x = h.transpose(x, swap)
    return h.convert(x, element)


def _forward(h: Hlo, a: Any, b: Any, unit: bool) -> Any:
    """Forward substitution: ``a`` lower triangular ``[..., m, m]``, ``b`` ``[..., m, n]``."""
    shape = h.shape(b)
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    zeros = [0] * len(batch)
    rows: list[Any] = []
    for i in range(m):
        row = h.slice(b, [*zeros, i, 0], [*batch, i + 1, n])
        if i:
            known = h.concatenate(rows, len(batch))  # x[:i]
            coefficients = h.slice(a, [*zeros, i, 0], [*batch, i + 1, i])  # a[i, :i]
            row = h.ew("subtract", row, h.dot(coefficients, known, len(batch), len(batch) + 1, len(batch)))
        if not unit:
            diagonal = h.slice(a, [*zeros, i, i], [*batch, i + 1, i + 1])
            row = h.ew("divide", row, h.broadcast(diagonal, [*batch, 1, n], range(len(batch) + 2)))
        rows.append(row)
    return h.concatenate(rows, len(batch))
