"""Shape-only ops (Reshape, Flatten, Squeeze, Unsqueeze) whose result has no elements, as an empty literal.

torch-mlir converts them to ``aten.view`` (or ``aten.flatten``/``squeeze``/``unsqueeze``),
and its ``convert-torch-to-linalg`` lowering of a view divides by the sizes of the
dimensions it regroups: a zero-sized one (``[0,3,4] -> [3,4,0]``, Reshape's
``allowzero``) kills the compiler with SIGFPE. A result without elements carries
nothing but its shape, which the op's static result type already says, so it is
replaced by a literal of that shape.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import NUMPY, Emitter, OnnxOp


def empty_view(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.input(0)
    shape, dtype = op.results[0]
    if x is None or dtype not in NUMPY or math.prod(x.shape) != 0 or math.prod(shape) != 0:
        return None  # data to move (or an unknown type): torch-mlir's view
    if op.name == "Reshape" and op.known(1):
        target = op.ints(1, []) or []
        if len(target) != len(shape):
            return None  # the declared type disagrees with the constant shape: leave it as imported
    return [e.const(np.zeros(shape, dtype=NUMPY[dtype]), dtype)]
