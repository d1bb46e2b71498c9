"""Dropout in training mode, which torch-mlir leaves backend-illegal: ``mask = u >= ratio``,
``y = mask * x / (1 - ratio)`` as ONNX's reference computes it, with ``u`` uniform draws
made here with numpy (seeded by the op's ``seed``): fixed for the compiled function, as
a random mask may be. A zero ratio keeps everything and is exact; a training mode
given at run time selects between that and the identity (mask all true). A Dropout of
an opset before 12 (no training input: inference) is the identity."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp

DEFAULT_RATIO = 0.5
CONVERTED_SINCE = 12  # torch-mlir converts Dropout of this opset on; an older one in inference is the identity


def dropout(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x, ratio, training = op.inputs[0], op.input(1), op.input(2)
    if x is not None and training is None and op.opset < CONVERTED_SINCE:  # inference: the identity
        return [e.op1("Identity", [x], x.shape, x.dtype), e.const(np.ones(x.shape, bool), "i1")][: len(op.results)]
    if x is None or training is None or not x.dtype.startswith(("f", "bf")):
        return None
    if training.const is not None and not bool(np.asarray(training.const)):
        return None  # inference: torch-mlir's identity
    shape, dtype = x.shape, x.dtype
    draws = np.random.default_rng(int(op.attrs.get("seed", 0))).random(shape)
    r = ratio if ratio is not None else e.const(np.array(DEFAULT_RATIO), dtype)
    r_dtype = ratio.dtype if ratio is not None else dtype
    mask = e.op1("Not", [e.op1("Less", [e.const(draws, r_dtype), r], shape, "i1")], shape, "i1")
    keep = e.op1("Sub", [e.const(np.array(1), r_dtype), r], [], r_dtype)
    scale = e.op1("Div", [e.const(np.array(1), r_dtype), keep], [], r_dtype)
    scaled = e.op1("Mul", [x, e.op1("CastLike", [scale, x], [], dtype)], shape, dtype)
    y = e.op1("Where", [mask, scaled, e.const(np.zeros(shape), dtype)], shape, dtype)
    if training.const is None:  # chosen at run time
        y = e.op1("Where", [training, y, x], shape, dtype)
        mask = e.op1("Or", [mask, e.op1("Not", [training], [], "i1")], shape, "i1")
    return [y, mask][: len(op.results)]
