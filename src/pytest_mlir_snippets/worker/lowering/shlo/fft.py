"""``stablehlo.fft`` as discrete Fourier transforms by matrix products (one ``dot_general``
per transformed dimension with a constant matrix, computed in float64 and rounded to the
element type), which ``stablehlo-legalize-to-linalg`` lowers and the reference interpreter,
which has no support for the op, evaluates. O(n^2) per dimension, not a fast transform.

Over the last ``len(fft_length)`` dimensions, as numpy's ``fftn``/``ifftn``/``rfftn``/
``irfftn`` define them:

- ``FFT``: ``X[k] = sum_n x[n] exp(-2 pi i k n / N)``; ``IFFT``: ``exp(+...)``, divided by N;
- ``RFFT``: real input, the last dimension first (its ``N/2 + 1`` non-negative
  frequencies, real and imaginary parts from two real products), then ``FFT`` over the others;
- ``IRFFT``: ``IFFT`` over all but the last dimension, then the last one back to ``N`` reals
  from its ``N/2 + 1`` frequencies (the others are their conjugates; the imaginary parts
  of frequency 0 and, for even N, N/2 do not count).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.shlo.build import replace, static_ops
from pytest_mlir_snippets.worker.lowering.shlo.hlo import Hlo

_PART = {"complex<f32>": "f32", "complex<f64>": "f64"}


def lower_all(module: Any, tir: Any) -> int:
    """Every ``fft`` with static shapes, expanded; how many."""
    found = static_ops(module, tir, "stablehlo.fft")
    for op in found:
        with tir.InsertionPoint(op):
            result = _expand(op, tir)
        replace(op, [result])
    return len(found)


def _expand(op: Any, tir: Any) -> Any:
    h = Hlo(tir, op.location)
    x = op.operands[0]
    kind = str(op.attributes["fft_type"]).rsplit(" ", 1)[-1].rstrip(">")
    lengths = [int(n) for n in tir.DenseI64ArrayAttr(op.attributes["fft_length"])]
    rank = len(h.shape(x))
    dims = list(range(rank - len(lengths), rank))
    if kind in ("FFT", "IFFT"):
        for d, n in zip(dims, lengths):
            x = _along(h, x, d, _dft(n, n, inverse=kind == "IFFT"), h.element(x))
        return x
    if kind == "RFFT":
        n, real = lengths[-1], h.element(x)
        matrix = _dft(n, n // 2 + 1, inverse=False)
        x = h.complex(_along(h, x, rank - 1, matrix.real, real), _along(h, x, rank - 1, matrix.imag, real))
        for d, n in zip(dims[:-1], lengths[:-1]):
            x = _along(h, x, d, _dft(n, n, inverse=False), h.element(x))
        return x
    for d, n in zip(dims[:-1], lengths[:-1]):  # IRFFT
        x = _along(h, x, d, _dft(n, n, inverse=True), h.element(x))
    n, part = lengths[-1], _PART[h.element(x)]
    frequencies = h.shape(x)[-1]
    k, t = np.arange(frequencies)[:, None], np.arange(n)[None, :]
    weight = np.where((k == 0) | (2 * k == n), 1.0, 2.0) / n  # each other frequency stands for its conjugate too
    angle = 2 * np.pi * ((k * t) % n) / n
    from_real = _along(h, h.real(x), rank - 1, weight * np.cos(angle), part)
    from_imag = _along(h, h.imag(x), rank - 1, -weight * np.sin(angle), part)
    return h.ew("add", from_real, from_imag)


def _dft(n_in: int, n_out: int, inverse: bool) -> np.ndarray:
    """The matrix ``[n_in, n_out]`` taking ``n_in`` samples to the first ``n_out`` frequencies
    (or back: ``inverse``, divided by ``n_in``), in float64 (angles reduced exactly)."""
    k, t = np.arange(n_in)[:, None], np.arange(n_out)[None, :]
    angle = 2 * np.pi * ((k * t) % n_in) / n_in
    matrix = np.exp(1j * angle) / n_in if inverse else np.exp(-1j * angle)
    return np.asarray(matrix)


def _along(h: Hlo, x: Any, dim: int, matrix: np.ndarray, element: str) -> Any:
    """``x`` times ``matrix`` along dimension ``dim`` (its size ``matrix``'s rows; then ``matrix``'s
    columns)."""
    rank = len(h.shape(x))
    order = [d for d in range(rank) if d != dim] + [dim]
    moved = x if dim == rank - 1 else h.transpose(x, order)
    product = h.dot(moved, h.constant(matrix, element), 0, rank - 1, 0)
    if dim == rank - 1:
        return product
    back = [order.index(d) for d in range(rank)]
    return h.transpose(product, back)
