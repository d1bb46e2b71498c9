"""Newer ONNX ops torch-mlir leaves, in ops it converts.

- Swish (opset 24): ``x * Sigmoid(alpha * x)``; the function bodies of SwiGLU (opset 28)
  call it.
- BitCast (opset 26): a tensor's bits as another type of the same width.
- MatMul of a 1-D operand with one of rank 3 or more, whose ``aten.matmul`` torch-mlir
  does not lower: the vector as a matrix (``[1, k]`` or ``[k, 1]``), then the unit axis
  dropped from the product, as numpy's matmul defines it.
- TensorScatter (opset 24): a KV cache's update written at each batch's write index along
  the sequence axis (``circular``: modulo its length), as a ScatterElements whose indices
  are ``write_indices[b] + s`` broadcast over the update.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


def swish(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or not x.dtype.startswith(("f", "bf")):
        return None
    alpha = e.const(np.array(float(op.attrs.get("alpha", 1.0))), x.dtype)
    scaled = e.op1("Mul", [x, alpha], x.shape, x.dtype)
    return [e.op1("Mul", [x, e.op1("Sigmoid", [scaled], x.shape, x.dtype)], x.shape, x.dtype)]


WIDTHS = {"i1": 8, "bf16": 16}  # i1: one byte a boolean, as ONNX stores it


def _width(dtype: str) -> int | None:
    digits = dtype.lstrip("sufbi")
    return WIDTHS.get(dtype) or (int(digits) if digits.isdigit() else None)


def bitcast(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """A bool as its byte (a Cast: 0 or 1), an integer as another integer of its width
    (``Emitter.reinterpret``), to or from a float ``Emitter.bitcast``."""
    x = op.inputs[0]
    if x is None or len(op.results) != 1:
        return None
    shape, to = op.results[0]
    if _width(x.dtype) is None or _width(x.dtype) != _width(to) or list(shape) != list(x.shape):
        return None
    if x.dtype == "i1":
        return [e.op1("Cast", [x], shape, to, to=2)] if to == "ui8" else None
    if x.dtype[0] in "su" and to[0] in "su":
        return [e.reinterpret(x.value, shape, x.dtype, to)]
    return [e.bitcast(x.value, shape, x.dtype, to)]


def tensor_scatter(op: OnnxOp, e: Emitter) -> list[Any] | None:
    past, update, where = op.inputs[0], op.input(1), op.input(2)
    if past is None or update is None or past.rank < 2 or update.rank != past.rank:
        return None
    rank = past.rank
    axis = int(op.attrs.get("axis", -2)) % rank
    if axis == 0:
        return None  # the batch axis carries the write indices
    batch, length, steps = past.shape[0], past.shape[axis], update.shape[axis]
    start = [batch] + [1] * (rank - 1)
    if where is None:
        offsets = e.const(np.zeros(start), "si64")
    else:
        offsets = e.op1("Reshape", [where, e.const(np.array(start), "si64")], start, where.dtype)
    spread = [1] * axis + [steps] + [1] * (rank - axis - 1)
    broadcast = [batch] + [1] * (axis - 1) + [steps] + [1] * (rank - axis - 1)
    index = e.op1("Add", [offsets, e.const(np.arange(steps).reshape(spread), "si64")], broadcast, "si64")
    if op.attrs.get("mode", "linear") == "circular":
        index = e.op1("Mod", [index, e.const(np.array(length), "si64")], broadcast, "si64")
    index = e.op1("Expand", [index, e.const(np.array(update.shape), "si64")], list(update.shape), "si64")
    return [e.op1("ScatterElements", [past, index, update], list(past.shape), past.dtype, axis=axis)]


def matmul(op: OnnxOp, e: Emitter) -> list[Any] | None:
    a, b = op.inputs[0], op.input(1)
    if a is None or b is None or sorted((a.rank, b.rank))[0] != 1 or max(a.rank, b.rank) < 3:
        return None
    shape, dtype = op.results[0]
    if a.rank == 1:
        matrix = e.op1("Reshape", [a, e.const(np.array([1, a.shape[0]]), "si64")], [1, a.shape[0]], a.dtype)
        product = e.op1("MatMul", [matrix, b], [*b.shape[:-2], 1, b.shape[-1]], dtype)
    else:
        matrix = e.op1("Reshape", [b, e.const(np.array([b.shape[0], 1]), "si64")], [b.shape[0], 1], b.dtype)
        product = e.op1("MatMul", [a, matrix], [*a.shape[:-1], 1], dtype)
    return [e.op1("Reshape", [product, e.const(np.array(shape), "si64")], list(shape), dtype)]
