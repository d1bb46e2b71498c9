"""SpaceToDepth with ``mode`` "CRD" (opset 28), which torch-mlir converts as the default
"DCR" order: as the reference computes it, the input reshaped to
``[b, c, h/bs, bs, w/bs, bs]``, transposed to ``[b, c, bs, bs, h/bs, w/bs]`` (channel
major, then the block's row and column) and reshaped to ``[b, c*bs*bs, h/bs, w/bs]``."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


def space_to_depth(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    bs = int(op.attrs.get("blocksize", 0))
    if x is None or op.attrs.get("mode", "DCR") != "CRD" or x.rank != 4 or bs < 1:
        return None
    b, c, h, w = x.shape
    if h % bs or w % bs:
        return None
    blocks = [b, c, h // bs, bs, w // bs, bs]
    v = e.op1("Reshape", [x, e.const(np.array(blocks), "si64")], blocks, x.dtype)
    perm = [0, 1, 3, 5, 2, 4]
    v = e.op1("Transpose", [v], [blocks[p] for p in perm], x.dtype, perm=perm)
    out = [b, c * bs * bs, h // bs, w // bs]
    return [e.op1("Reshape", [v, e.const(np.array(out), "si64")], out, x.dtype)]
