"""RotaryEmbedding (opset 23), which torch-mlir converts into ``torch.onnx.rotary_embedding``,
an op nothing lowers, and whose ONNX function body (split sizes computed at run time)
imports without static types. Here as the reference computes it, on the static shapes:
the input as ``[batch, seq, heads, head]`` (a 4-D input transposed, a 3-D one split into
``num_heads``), the caches gathered at ``position_ids`` where given, the rotated part's
halves (or even and odd elements, ``interleaved``) taken with numpy index tables,
``real = cos x1 - sin x2``, ``imag = sin x1 + cos x2`` put back in place, the rest of
the head (past ``rotary_embedding_dim``) unchanged."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


def rotary_embedding(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x, cos, sin, positions = op.inputs[0], op.input(1), op.input(2), op.input(3)
    if x is None or cos is None or sin is None or x.rank not in (3, 4) or cos.dtype != x.dtype:
        return None
    dt = x.dtype
    if x.rank == 4:
        b, h, s, d = x.shape
        v = e.op1("Transpose", [x], [b, s, h, d], dt, perm=[0, 2, 1, 3])
    else:
        b, s, hidden = x.shape
        h = int(op.attrs.get("num_heads", 0))
        if not h or hidden % h:
            return None
        d = hidden // h
        v = e.op1("Reshape", [x, e.const(np.array([b, s, h, d]), "si64")], [b, s, h, d], dt)
    r = int(op.attrs.get("rotary_embedding_dim", 0)) or d
    half = r // 2
    caches = []
    for cache in (cos, sin):
        if positions is not None:
            cache = e.op1("Gather", [cache, positions], [*positions.shape, half], dt, axis=0)
        caches.append(e.op1("Unsqueeze", [cache, e.const(np.array([2]), "si64")], [b, s, 1, half], dt))
    c, sn = caches
    interleaved = bool(op.attrs.get("interleaved", 0))
    first, second = (np.arange(0, r, 2), np.arange(1, r, 2)) if interleaved else (np.arange(half), np.arange(half, r))
    part = [b, s, h, half]
    x1 = e.op1("Gather", [v, e.const(first, "si64")], part, dt, axis=3)
    x2 = e.op1("Gather", [v, e.const(second, "si64")], part, dt, axis=3)

    def mul(p: Any, q: Any) -> Any:
        return e.op1("Mul", [p, q], part, dt)

    real = e.op1("Sub", [mul(c, x1), mul(sn, x2)], part, dt)
    imag = e.op1("Add", [mul(sn, x1), mul(c, x2)], part, dt)
    rotated = e.op1("Concat", [real, imag], [b, s, h, r], dt, axis=3)
    if interleaved:  # [real0, imag0, real1, imag1, ...]
        order = np.stack([np.arange(half), np.arange(half) + half], axis=1).reshape(-1)
        rotated = e.op1("Gather", [rotated, e.const(order, "si64")], [b, s, h, r], dt, axis=3)
    if r < d:
        rest = e.op1("Gather", [v, e.const(np.arange(r, d), "si64")], [b, s, h, d - r], dt, axis=3)
        rotated = e.op1("Concat", [rotated, rest], [b, s, h, d], dt, axis=3)
    if x.rank == 4:
        return [e.op1("Transpose", [rotated], list(x.shape), dt, perm=[0, 2, 1, 3])]
    return [e.op1("Reshape", [rotated, e.const(np.array(x.shape), "si64")], list(x.shape), dt)]
