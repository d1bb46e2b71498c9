"""Edge cases ONNX defines and torch-mlir's conversions leave undefined, in ops it converts.

- BitShift by a negative amount or by the element width or more (onnx 1.23 defines them,
  ``onnx.reference``'s BitShift): the result is 0, or for a right shift of a negative
  signed value -1; arith's shifts give poison there. The shift runs on the amounts in
  range (the others replaced by 0), then a Where picks the defined result.
- LpNormalization where a slice's norm is 0: the result is 0 there (the reference's
  ``where(norm == 0, 0, x / norm)``), not 0/0's NaN. The norm is a ReduceL1 or ReduceL2
  kept along the axis.
- Range of f16 or bf16 (opset 27 allows them; torch-mlir's conversion does not take them):
  computed in f32 and cast back, as the reference computes wider (numpy's ``arange``
  of Python floats, or the ``stash_type``) and casts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, Tensor

WIDTH = {"si8": 8, "ui8": 8, "si16": 16, "ui16": 16, "si32": 32, "ui32": 32, "si64": 64, "ui64": 64}


def bit_shift(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x, amount = op.inputs[0], op.input(1)
    if x is None or amount is None or x.dtype not in WIDTH or amount.dtype != x.dtype or len(op.results) != 1:
        return None
    shape, dtype = op.results[0]
    a = Arith(e, x.dtype)
    in_range = a.where(a.lt(amount, 0), False, a.lt(amount, WIDTH[x.dtype]))
    safe = a.where(in_range, amount, 0)
    direction = str(op.attrs.get("direction", "LEFT"))
    shifted = Tensor(e.op1("BitShift", [x, safe], list(shape), dtype, direction=direction), list(shape), dtype)
    outside: Tensor | int = 0
    if direction == "RIGHT" and dtype.startswith("si"):
        outside = a.where(a.lt(x, 0), -1, 0)
    return [a.where(in_range, shifted, outside).value]


def lp_normalization(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    p = int(op.attrs.get("p", 2))
    if x is None or x.rank == 0 or p not in (1, 2) or not x.dtype.startswith(("f", "bf")):
        return None
    axis = int(op.attrs.get("axis", -1)) % x.rank
    a = Arith(e, x.dtype)
    kept = [1 if i == axis else d for i, d in enumerate(x.shape)]
    norm = a("ReduceL1" if p == 1 else "ReduceL2", [x, a.lit(np.array([axis]), "si64")], kept, keepdims=1)
    return [a.where(a.eq(norm, 0.0), 0.0, a.div(x, norm)).value]


def range_(op: OnnxOp, e: Emitter) -> list[Any] | None:
    bounds = op.inputs[:3]
    if len(bounds) != 3 or len(op.results) != 1 or op.results[0][1] not in ("f16", "bf16"):
        return None
    shape, dtype = op.results[0]
    a = Arith(e, "f32")
    wide = [a.cast(x, "f32") for x in bounds if x is not None and x.dtype == dtype]
    if len(wide) != 3:
        return None
    return [a.cast(a("Range", wide, list(shape), "f32"), dtype).value]
