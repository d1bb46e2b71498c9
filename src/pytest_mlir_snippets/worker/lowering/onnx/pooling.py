"""AveragePool, LpPool and MaxPool's Indices as one Gather of the windows (index tables
from windows.py) and a reduction over each window, following ONNX's reference."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, Tensor
from pytest_mlir_snippets.worker.lowering.onnx.windows import Geometry, Table, gather, geometry, reduce, table

FLOATS = ("f16", "f32", "f64")


def _pooled(op: OnnxOp) -> tuple[Tensor, Geometry] | None:
    """The input and its windows, where the input is [N, C, *spatial] with static dims
    and the op's first result has the shape the windows give."""
    x = op.inputs[0] if op.inputs else None
    if x is None or x.rank < 3 or any(d < 0 for d in x.shape):
        return None
    g = geometry(op, x.shape[2:])
    if g is None or op.results[0][0] != [*x.shape[:2], *g.out]:
        return None
    return x, g


def _window_sum(e: Emitter, op: OnnxOp, x: Tensor, source: Any, t: Table) -> tuple[Any, list[int]]:
    """The sum over each window of ``source`` (``x``'s shape) over its input elements
    (padding adds zero), as [N*C, P], and that shape."""
    size = int(np.prod(x.shape[2:]))
    slots = np.where(t.valid, t.flat, size)  # padding reads the appended zero
    windows = gather(e, source, x.shape, x.dtype, slots, zero_column=True)
    rows = x.shape[0] * x.shape[1]
    return reduce(e, "Sum", windows, [rows, *slots.shape], x.dtype, 2), [rows, slots.shape[0]]


def average_pool(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """AveragePool with ceil_mode or dilations (torch-mlir converts the others as ONNX
    does): the mean over each window of its input elements, with count_include_pad of
    the whole window, padding and the rows ceil_mode adds past the pads alike (ONNX 1.17's
    reference, which IREE's ONNX tests were made with; ONNX 1.18 counts only the padding
    given by the pads, as torch-mlir's conversion does)."""
    dilated = any(int(d) != 1 for d in op.attrs.get("dilations") or [])
    if not (int(op.attrs.get("ceil_mode", 0)) or dilated):
        return None
    found = _pooled(op)
    if found is None or found[0].dtype not in FLOATS:
        return None
    x, g = found
    t = table(g, shifted=True)
    include = bool(op.attrs.get("count_include_pad", 0))
    counts = np.full(t.valid.shape[0], t.valid.shape[1]) if include else t.valid.sum(axis=1)
    with np.errstate(divide="ignore"):
        scale = np.where(counts > 0, 1.0 / np.maximum(counts, 1), np.nan)  # NaN: no element, as np.average
    total, shape = _window_sum(e, op, x, x.value, t)
    mean = e.op1("Mul", [total, e.const(scale, x.dtype)], shape, x.dtype)
    out = op.results[0][0]
    return [e.op1("Reshape", [mean, e.const(out, "si64")], out, x.dtype)]


def lp_pool(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """LpPool: (sum |x|^p)^(1/p) over each window's input elements (padding adds zero);
    windows that ceil_mode runs past the pads are not rescaled (ONNX 1.17's reference,
    the specification's p-norm; ONNX 1.18's reference scales them by kernel size over
    positions within the pads)."""
    found = _pooled(op)
    if found is None or found[0].dtype not in FLOATS:
        return None
    x, g = found
    p = float(op.attrs.get("p", 2))
    source = e.op1("Abs", [x], x.shape, x.dtype)
    if p == 2:
        source = e.op1("Mul", [source, source], x.shape, x.dtype)
    elif p != 1:
        source = e.op1("Pow", [source, e.const(p, x.dtype)], x.shape, x.dtype)
    total, shape = _window_sum(e, op, x, source, table(g, shifted=True))
    if p == 2:
        total = e.op1("Sqrt", [total], shape, x.dtype)
    elif p != 1:
        total = e.op1("Pow", [total, e.const(1.0 / p, x.dtype)], shape, x.dtype)
    out = op.results[0][0]
    return [e.op1("Reshape", [total, e.const(out, "si64")], out, x.dtype)]


def max_pool(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """MaxPool with Indices (without, torch-mlir converts it): each window's maximum and
    the flat index into the input of its first occurrence (row-major, or column-major in
    the spatial dims with storage_order 1), N and C included; a window with no input
    element gives 0 and -1."""
    if len(op.results) < 2:
        return None
    found = _pooled(op)
    if found is None:
        return None
    x, g = found
    t = table(g, shifted=False)
    labels_all = t.column if int(op.attrs.get("storage_order", 0)) else t.flat
    # a padding slot reads its window's first input element again: the maximum and its
    # first occurrence are the same as over the input elements alone, for any dtype
    first = np.argmax(t.valid, axis=1)
    windows_at = np.arange(t.flat.shape[0])
    slots = np.where(t.valid, t.flat, t.flat[windows_at, first][:, None])
    labels = np.where(t.valid, labels_all, labels_all[windows_at, first][:, None])
    rows, (p, k) = x.shape[0] * x.shape[1], slots.shape
    windows = gather(e, x.value, x.shape, x.dtype, slots, zero_column=False)
    # the first maximum's place in its window, and the maximum read there by a Gather of
    # the flattened windows
    arg = e.op1("ArgMax", [windows], [rows, p, 1], "si64", axis=2, keepdims=1)
    every = e.op1("Reshape", [windows, e.const([rows * p * k], "si64")], [rows * p * k], x.dtype)
    read = e.op1("Add", [arg, e.const(np.arange(rows * p).reshape(rows, p, 1) * k, "si64")], [rows, p, 1], "si64")
    values = e.op1("Gather", [every, read], [rows, p, 1], x.dtype, axis=0)
    at = e.op1("Add", [arg, e.const(windows_at[:, None] * k, "si64")], [rows, p, 1], "si64")
    index = e.op1("Gather", [e.const(labels.reshape(-1), "si64"), at], [rows, p, 1], "si64", axis=0)
    size = int(np.prod(x.shape[2:]))
    index = e.op1("Add", [index, e.const(np.arange(rows)[:, None, None] * size, "si64")], [rows, p, 1], "si64")
    empty: np.ndarray = ~np.any(t.valid, axis=1)
    if empty.any():
        keep = e.const(~empty[:, None], "i1")
        values = e.op1("Where", [keep, values, e.const(np.zeros(1), x.dtype)], [rows, p, 1], x.dtype)
        index = e.op1("Where", [keep, index, e.const(np.full(1, -1), "si64")], [rows, p, 1], "si64")
    (out, dtype), (index_out, index_dtype) = op.results[0], op.results[1]
    return [e.op1("Reshape", [values, e.const(out, "si64")], out, dtype),
            e.op1("Reshape", [index, e.const(index_out, "si64")], index_out, index_dtype)]
