"""CumProd (opset 26), which torch-mlir leaves: each output element the product of the
elements a numpy mask selects along the axis (``j <= i``; ``exclusive``: ``j < i``;
``reverse``: the other side), the others replaced by one, then ReduceProd over ``j``.
The axis must be a constant (it always is in practice: a literal or ``onnx.Constant``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp


def cum_prod(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    given = op.ints(1)
    if x is None or not x.rank or not given or len(given) != 1:
        return None
    axis = given[0] % x.rank
    n = x.shape[axis]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    exclusive, reverse = bool(op.attrs.get("exclusive", 0)), bool(op.attrs.get("reverse", 0))
    if reverse:
        mask = j > i if exclusive else j >= i
    else:
        mask = j < i if exclusive else j <= i
    mask = mask.reshape([n, n] + [1] * (x.rank - axis - 1))
    spread = [*x.shape[:axis], 1, *x.shape[axis:]]  # x_j along axis + 1
    wide = [*x.shape[:axis], n, *x.shape[axis:]]
    xs = e.op1("Unsqueeze", [x, e.const(np.array([axis]), "si64")], spread, x.dtype)
    filled = e.op1("Where", [e.const(mask, "i1"), xs, e.const(np.array(1), x.dtype)], wide, x.dtype)
    return [e.op1("ReduceProd", [filled, e.const(np.array([axis + 1]), "si64")], list(x.shape), x.dtype,
                  keepdims=0)]
