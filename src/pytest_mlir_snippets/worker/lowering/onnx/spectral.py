"""DFT as one matrix product: the signal axis and the (real, imaginary) pair flattened
into rows, the transform's cosines and sines, computed here in float64, as the matrix."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp

MAX_MATRIX = 1 << 24  # elements of the transform matrix
AXIS_INPUT_SINCE = 20  # DFT-20 takes the axis as an input (default -2), DFT-17 as an attribute (default 1)


def dft_matrix(n_in: int, parts: int, length: int, onesided: bool, inverse: bool) -> np.ndarray:
    """Rows: input sample t and part j (real, imaginary); columns: frequency k and part."""
    m = length // 2 + 1 if onesided else length
    t = np.arange(n_in)[:, None]
    k = np.arange(m)[None, :]
    theta = 2 * np.pi * ((t * k) % length) / length
    cos, sin = np.cos(theta), np.sin(theta)
    cos[n_in if n_in < length else length:, :] = 0  # samples past dft_length are dropped
    sin[n_in if n_in < length else length:, :] = 0
    sign, scale = (1.0, 1.0 / length) if inverse else (-1.0, 1.0)
    w = np.zeros((n_in, parts, m, 2))
    w[:, 0, :, 0] = cos * scale  # re(x) e^{±iθ}: re part cos, im part ±sin
    w[:, 0, :, 1] = sign * sin * scale
    if parts == 2:  # i im(x) e^{±iθ}: re part ∓sin, im part cos
        w[:, 1, :, 0] = -sign * sin * scale
        w[:, 1, :, 1] = cos * scale
    return w.reshape(n_in * parts, m * 2)


def dft(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or not x.shape or x.shape[-1] not in (1, 2):
        return None
    rank = x.rank
    if op.opset >= AXIS_INPUT_SINCE:
        if not op.known(2):
            return None
        axis = (op.ints(2) or [-2])[0]
    else:
        axis = int(op.attrs.get("axis", 1))
    axis = axis + rank if axis < 0 else axis
    if not op.known(1):
        return None
    n_in = x.shape[axis]
    length = (op.ints(1) or [n_in])[0]
    onesided, inverse = bool(op.attrs.get("onesided", 0)), bool(op.attrs.get("inverse", 0))
    parts = x.shape[-1]
    if n_in * parts * length * 2 > MAX_MATRIX:
        return None  # a matrix this large swamps the compile: left to torch-mlir
    w = dft_matrix(n_in, parts, length, onesided, inverse)
    m = w.shape[1] // 2
    # move the signal axis next to the parts, flatten (t, part), multiply, unflatten (k, part)
    perm = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
    moved_shape = [x.shape[d] for d in perm]
    moved = e.op1("Transpose", [x], moved_shape, x.dtype, perm=perm)
    rows = e.op1("Reshape", [moved, e.const([*moved_shape[:-2], n_in * parts], "si64")],
                 [*moved_shape[:-2], n_in * parts], x.dtype)
    product = e.op1("MatMul", [rows, e.const(w, x.dtype)], [*moved_shape[:-2], m * 2], x.dtype)
    out_moved = [*moved_shape[:-2], m, 2]
    pairs = e.op1("Reshape", [product, e.const(out_moved, "si64")], out_moved, x.dtype)
    back = [perm.index(d) for d in range(rank)]
    shape = [out_moved[p] for p in back]
    return [e.op1("Transpose", [pairs], shape, x.dtype, perm=back)]
