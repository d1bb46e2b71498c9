"""Col2Im as one Gather and a sum: with static shapes numpy lists, for every image
element and block offset, the column whose block covers that element at that offset
(at most one), so the scatter-add of columns into the image reads as a gather."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp
from pytest_mlir_snippets.worker.lowering.onnx.windows import reduce


def slots(image: list[int], block: list[int], strides: list[int], dilations: list[int],
          pads: list[int]) -> tuple[np.ndarray, int] | None:
    """[S, K]: for image element S (row-major) and block offset K, the index ``K*L + column``
    into one channel's flattened input [K, L] (L columns, the blocks in row-major order),
    or ``K*L`` where no block reaches it; and L. None where the attributes give no block."""
    n = len(image)
    grid = [(image[i] + pads[i] + pads[n + i] - ((block[i] - 1) * dilations[i] + 1)) // strides[i] + 1
            for i in range(n)]
    if min(grid) < 1:
        return None
    full = [*image, *block]
    valid = np.ones(full, dtype=bool)
    column = np.zeros(full, dtype=np.int64)
    offset = np.zeros(full, dtype=np.int64)
    for i in range(n):
        shape = [1] * (2 * n)
        shape[i], shape[n + i] = image[i], block[i]
        # the block b with b*stride - pad + j*dilation = h
        start = np.arange(image[i])[:, None] + pads[i] - np.arange(block[i])[None, :] * dilations[i]
        b = start // strides[i]
        valid = valid & ((start % strides[i] == 0) & (b >= 0) & (b < grid[i])).reshape(shape)
        column = column + (np.clip(b, 0, grid[i] - 1) * int(np.prod(grid[i + 1:]))).reshape(shape)
        j = np.broadcast_to(np.arange(block[i])[None, :], (image[i], block[i]))
        offset = offset + (j * int(np.prod(block[i + 1:]))).reshape(shape)
    s, k, columns = int(np.prod(image)), int(np.prod(block)), int(np.prod(grid))
    return np.where(valid, offset * columns + column, k * columns).reshape(s, k), columns


def col2im(op: OnnxOp, e: Emitter) -> list[Any] | None:
    """Col2Im of input [N, C*K, L] (K: the block's size) into [N, C, *image_shape]: each
    image element the sum of the column entries that hold it."""
    x = op.inputs[0]
    if x is None or x.rank != 3 or not (op.known(1) and op.known(2)):
        return None  # image_shape and block_shape are constants on the retry
    image, block = op.ints(1) or [], op.ints(2) or []
    n = len(image)
    if n == 0 or len(block) != n:
        return None
    strides = [int(v) for v in op.attrs.get("strides") or [1] * n]
    dilations = [int(v) for v in op.attrs.get("dilations") or [1] * n]
    pads = [int(v) for v in op.attrs.get("pads") or [0] * (2 * n)]
    found = slots(image, block, strides, dilations, pads)
    batch, channels_k, length = x.shape
    k = int(np.prod(block))
    if found is None or found[1] != length or channels_k % k:
        return None  # the input's L is not the number of blocks, or its channels are no whole blocks
    table = found[0]
    channels = channels_k // k
    out = [batch, channels, *image]
    if op.results[0][0] != out:
        return None
    rows = batch * channels
    flat = e.op1("Reshape", [x, e.const([rows, k * length], "si64")], [rows, k * length], x.dtype)
    flat = e.op1("Concat", [flat, e.const(np.zeros((rows, 1)), x.dtype)], [rows, k * length + 1], x.dtype, axis=1)
    gathered = e.op1("Gather", [flat, e.const(table, "si64")], [rows, *table.shape], x.dtype, axis=1)
    total = reduce(e, "Sum", gathered, [rows, *table.shape], x.dtype, 2)
    return [e.op1("Reshape", [total, e.const(out, "si64")], out, x.dtype)]
