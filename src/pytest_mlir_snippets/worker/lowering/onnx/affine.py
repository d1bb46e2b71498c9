"""AffineGrid as one matrix product: the base grid of normalized coordinates (x, y[, z], 1),
computed here in f64 with the reference's own aranges, times each theta transposed."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


def base_grid(spatial: list[int], align_corners: bool) -> np.ndarray:
    """[prod(spatial), k + 1]: each point's coordinates, fastest axis first (x, y[, z]), then 1."""
    axes = []
    for size in spatial:
        with np.errstate(divide="ignore"):  # align_corners on one pixel: step inf, the one point -1
            if align_corners:
                axes.append(np.arange(-1, 1 + 0.0001, 2.0 / (size - 1) if size > 1 else np.inf))
            else:
                step = 2.0 / size
                axes.append(np.arange(-1 + step / 2, 1, step))
    mesh = np.meshgrid(*axes, indexing="ij")
    points = [c.reshape(-1) for c in reversed(mesh)]
    return np.stack([*points, np.ones_like(points[0])], axis=1)


def affine_grid(op: OnnxOp, e: Emitter) -> list[Any] | None:
    theta = op.inputs[0]
    out_shape, out_dtype = op.results[0]
    if theta is None or theta.rank != 3 or len(out_shape) not in (4, 5) or 0 in out_shape:
        return None
    k = len(out_shape) - 2
    if theta.shape[1:] != [k, k + 1] or out_shape[-1] != k:
        return None
    spatial = out_shape[1:-1]
    grid = base_grid(spatial, bool(op.attrs.get("align_corners", 0)))
    if grid.shape[0] != int(np.prod(spatial)):
        return None  # float steps gave a point more or less than the size: not this grid
    m = Arith(e)
    # [N, k, k+1] -> [N, k+1, k]; [P, k+1] @ [N, k+1, k] -> [N, P, k], in f64 like the reference
    t = m.transpose(m.cast(theta, "f64"), [0, 2, 1])
    points = m.matmul(m.lit(grid), t)
    return [m.cast(m.reshape(points, list(out_shape)), out_dtype).value]
