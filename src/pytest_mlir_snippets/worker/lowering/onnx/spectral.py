"""DFT as one matrix product: the signal axis and the (real, imaginary) pair flattened
into rows, the transform's cosines and sines, computed here in float64, as the matrix.
The inverse one-sided form (onnx 1.23's irfft, ``numpy.fft.irfft``) takes the first
``length // 2 + 1`` frequencies of a Hermitian spectrum and gives a real signal of
``length`` samples (last axis 1); its default length is ``2 * (n - 1)``."""

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


def irfft_matrix(n_in: int, parts: int, length: int) -> np.ndarray:
    """Rows: frequency k and part; columns: sample t (one real part). Frequencies past
    ``length // 2`` are dropped; the others but 0 and ``length / 2`` count twice (their
    conjugates), and the imaginary part of those two is ignored, as numpy's irfft does."""
    kept = min(n_in, length // 2 + 1)
    k = np.arange(n_in)[:, None]
    t = np.arange(length)[None, :]
    theta = 2 * np.pi * ((k * t) % length) / length
    weight = np.where((k == 0) | (2 * k == length), 1.0, 2.0) / length
    weight[kept:] = 0
    w = np.zeros((n_in, parts, length))
    w[:, 0, :] = weight * np.cos(theta)
    if parts == 2:
        w[:, 1, :] = np.where((k == 0) | (2 * k == length), 0.0, -weight * np.sin(theta))
    return w.reshape(n_in * parts, length)


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
    onesided, inverse = bool(op.attrs.get("onesided", 0)), bool(op.attrs.get("inverse", 0))
    length = (op.ints(1) or [2 * (n_in - 1) if inverse and onesided else n_in])[0]
    parts = x.shape[-1]
    if n_in * parts * length * 2 > MAX_MATRIX or length < 1:
        return None  # a matrix this large swamps the compile: left to torch-mlir
    if inverse and onesided:
        w, m, out_parts = irfft_matrix(n_in, parts, length), length, 1
    else:
        w = dft_matrix(n_in, parts, length, onesided, inverse)
        m, out_parts = w.shape[1] // 2, 2
    # move the signal axis next to the parts, flatten (t, part), multiply, unflatten (k, part)
    perm = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
    moved_shape = [x.shape[d] for d in perm]
    moved = e.op1("Transpose", [x], moved_shape, x.dtype, perm=perm)
    rows = e.op1("Reshape", [moved, e.const([*moved_shape[:-2], n_in * parts], "si64")],
                 [*moved_shape[:-2], n_in * parts], x.dtype)
    product = e.op1("MatMul", [rows, e.const(w, x.dtype)], [*moved_shape[:-2], m * out_parts], x.dtype)
    out_moved = [*moved_shape[:-2], m, out_parts]
    pairs = e.op1("Reshape", [product, e.const(out_moved, "si64")], out_moved, x.dtype)
    back = [perm.index(d) for d in range(rank)]
    shape = [out_moved[p] for p in back]
    return [e.op1("Transpose", [pairs], shape, x.dtype, perm=back)]
