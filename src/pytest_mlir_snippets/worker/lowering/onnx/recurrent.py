"""RNN, GRU and LSTM in reverse and bidirectional form and with ``layout`` 1, which
torch-mlir does not convert, in the forward form of ``layout`` 0, which it does.

As ONNX's specification defines the directions: the reverse direction runs over the
sequence from its end, so it is the forward op on the sequence reversed along its axis,
its ``Y`` reversed back (``Y_h``, ``Y_c``: the state after the last step it took, as
they are); a bidirectional op is the forward direction (the weights', biases' and initial
states' direction 0, the first half of ``activations``/``activation_alpha``/
``activation_beta``) and the reverse one (direction 1, the second half), their ``Y``
concatenated along the direction axis, their states along theirs. ``layout`` 1 (batch
first) is transposed to ``layout`` 0 and back. Only without ``sequence_lens`` (every
batch item the whole sequence).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, Tensor

STATES = {"RNN": 1, "GRU": 1, "LSTM": 2}  # Y_h (and Y_c)
PER_DIRECTION = ("activations", "activation_alpha", "activation_beta")
INITIAL = {"RNN": (5,), "GRU": (5,), "LSTM": (5, 6)}  # initial_h (and initial_c)


def _direction(a: Arith, x: Tensor | None, d: int) -> Tensor | None:
    """Direction ``d`` of a per-direction input (its leading axis kept, as size 1)."""
    if x is None:
        return None
    return a.gather(x, a.lit(np.array([d]), "si64"), 0)


def _reversed(a: Arith, x: Tensor) -> Tensor:
    return a.gather(x, a.lit(np.arange(x.shape[0] - 1, -1, -1), "si64"), 0)


def _one(op: OnnxOp, a: Arith, x: Tensor, d: int, reverse: bool, states: list[Tensor | None],
         hidden: int, count: int) -> list[Tensor]:
    """One direction of the op (layout 0): [Y, Y_h(, Y_c)], each with its direction axis of 1."""
    inputs: list[Tensor | None] = [_reversed(a, x) if reverse else x]
    inputs += [_direction(a, op.input(i), d) for i in range(1, len(op.inputs))]
    for i, state in zip(INITIAL[op.name], states, strict=True):
        if i < len(inputs):
            inputs[i] = state
    attrs = {k: v for k, v in op.attrs.items() if k not in ("direction", "layout", *PER_DIRECTION)}
    for name in PER_DIRECTION:
        values = op.attrs.get(name)
        if values:
            half = len(values) // count
            attrs[name] = values[d * half:(d + 1) * half]
    seq, batch = x.shape[0], x.shape[1]
    shapes = [[seq, 1, batch, hidden]] + [[1, batch, hidden]] * STATES[op.name]
    dtype = x.dtype
    results = a.e.op(op.name, inputs, [(s, dtype) for s in shapes], direction="forward", **attrs)
    out = [Tensor(v, s, dtype) for v, s in zip(results, shapes, strict=True)]
    if reverse:
        out[0] = _reversed(a, out[0])
    return out


def recurrent(op: OnnxOp, e: Emitter) -> list[Any] | None:
    direction, layout = str(op.attrs.get("direction", "forward")), int(op.attrs.get("layout", 0))
    x = op.inputs[0]
    if (op.name not in STATES or x is None or x.rank != 3 or (direction == "forward" and layout == 0)
            or op.input(4) is not None or "hidden_size" not in op.attrs):
        return None
    a = Arith(e, x.dtype)
    hidden = int(op.attrs["hidden_size"])
    swap = [1, 0, 2]
    if layout == 1:
        x = a.transpose(x, swap)
    initial = [op.input(i) for i in INITIAL[op.name]]
    if layout == 1:
        initial = [None if s is None else a.transpose(s, swap) for s in initial]
    plan = {"forward": [(0, False)], "reverse": [(0, True)], "bidirectional": [(0, False), (1, True)]}[direction]
    runs = [_one(op, a, x, d, reverse, [_direction(a, s, d) if len(plan) > 1 else s for s in initial],
                 hidden, len(plan)) for d, reverse in plan]
    joined = []
    for k in range(1 + STATES[op.name]):
        parts = [run[k] for run in runs]
        axis = 1 if k == 0 else 0
        shape = list(parts[0].shape)
        shape[axis] = len(parts)
        joined.append(parts[0] if len(parts) == 1 else a("Concat", parts, shape, axis=axis))
    if layout == 1:
        joined = [a.transpose(joined[0], [2, 0, 1, 3])] + [a.transpose(s, swap) for s in joined[1:]]
    # an output left out is a none result
    return [e.none() if dtype == "!torch.none" else t.value
            for t, (_, dtype) in zip(joined, op.results, strict=False)]
