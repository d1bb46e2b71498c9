"""Ops of the ai.onnx.preview.training and ai.onnx.ml domains, which torch-mlir does not
convert, in default-domain ops, as ONNX's operator specification writes them.

- Adagrad, Momentum (standard and nesterov) and Adam: one optimizer step for each of the
  n tensors (inputs ``R, T, X1..Xn, G1..Gn[, V1..Vn][, H1..Hn]``), the learning rate ``R``
  and the step count ``T`` scalars; ``T`` is cast to the tensors' type.
- Binarizer: 1 where ``x > threshold``, else 0, in ``x``'s type.
- ArrayFeatureExtractor: the items of the last axis at the given indices (a Gather).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, Tensor


def _step(op: OnnxOp, e: Emitter, groups: int) -> tuple[Arith, Tensor, Tensor, list[list[Tensor]]] | None:
    """(arith in the tensors' type, R, T as that type, per group its n tensors)."""
    r, t = op.inputs[0], op.input(1)
    if r is None or t is None or (len(op.inputs) - 2) % groups:
        return None
    n = (len(op.inputs) - 2) // groups
    tensors = op.inputs[2:]
    if any(x is None or x.dtype != r.dtype for x in tensors) or not r.dtype.startswith("f"):
        return None
    a = Arith(e, r.dtype)
    return a, r, a.cast(t, r.dtype), [[x for x in tensors[g * n:(g + 1) * n] if x is not None] for g in range(groups)]


def _regularized(a: Arith, op: OnnxOp, x: Tensor, g: Tensor) -> Tensor:
    return a.add(a.mul(x, float(op.attrs.get("norm_coefficient", 0.0))), g)


def adagrad(op: OnnxOp, e: Emitter) -> list[Any] | None:
    found = _step(op, e, 3)
    if found is None:
        return None
    a, r, t, (xs, gs, hs) = found
    rate = a.div(r, a.add(a.mul(t, float(op.attrs.get("decay_factor", 0.0))), 1.0))
    epsilon = float(op.attrs.get("epsilon", 0.0))
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs, strict=True):
        reg = _regularized(a, op, x, g)
        h2 = a.add(h, a.mul(reg, reg))
        new_x.append(a.sub(x, a.div(a.mul(rate, reg), a.add(a.unary("Sqrt", h2), epsilon))).value)
        new_h.append(h2.value)
    return new_x + new_h


def momentum(op: OnnxOp, e: Emitter) -> list[Any] | None:
    found = _step(op, e, 3)
    if found is None:
        return None
    a, r, t, (xs, gs, vs) = found
    alpha, beta = float(op.attrs.get("alpha", 0.0)), float(op.attrs.get("beta", 0.0))
    beta_t = a.where(a.gt(t, 0.0), beta, 1.0)  # the first step (T = 0) takes the gradient whole
    nesterov = op.attrs.get("mode", "standard") == "nesterov"
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs, strict=True):
        reg = _regularized(a, op, x, g)
        v2 = a.add(a.mul(v, alpha), a.mul(reg, beta_t))
        direction = a.add(reg, a.mul(v2, alpha)) if nesterov else v2
        new_x.append(a.sub(x, a.mul(r, direction)).value)
        new_v.append(v2.value)
    return new_x + new_v


def adam(op: OnnxOp, e: Emitter) -> list[Any] | None:
    found = _step(op, e, 4)
    if found is None:
        return None
    a, r, t, (xs, gs, vs, hs) = found
    alpha, beta = float(op.attrs.get("alpha", 0.9)), float(op.attrs.get("beta", 0.999))
    epsilon, post = float(op.attrs.get("epsilon", 0.0)), float(op.attrs.get("norm_coefficient_post", 0.0))
    # the bias-corrected rate R * sqrt(1 - beta^T) / (1 - alpha^T), R itself at T = 0
    corrected = a.div(a.mul(r, a.unary("Sqrt", a.sub(1.0, a("Pow", [a.lit(beta), t])))),
                      a.sub(1.0, a("Pow", [a.lit(alpha), t])))
    rate = a.where(a.gt(t, 0.0), corrected, r)
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs, strict=True):
        reg = _regularized(a, op, x, g)
        v2 = a.add(a.mul(v, alpha), a.mul(reg, 1.0 - alpha))
        h2 = a.add(a.mul(h, beta), a.mul(a.mul(reg, reg), 1.0 - beta))
        stepped = a.sub(x, a.div(a.mul(rate, v2), a.add(a.unary("Sqrt", h2), epsilon)))
        new_x.append(a.mul(stepped, 1.0 - post).value)
        new_v.append(v2.value)
        new_h.append(h2.value)
    return new_x + new_v + new_h


def binarizer(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or not x.dtype.startswith(("f", "s", "u")):
        return None
    a = Arith(e, x.dtype)
    return [a.where(a.gt(x, float(op.attrs.get("threshold", 0.0))), 1, 0).value]


def array_feature_extractor(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x, indices = op.inputs[0], op.input(1)
    if x is None or indices is None or x.rank == 0 or len(op.results) != 1:
        return None
    shape, dtype = op.results[0]
    flat = Arith(e).reshape(indices, [int(np.prod(indices.shape))])
    return [e.op1("Gather", [x, flat], list(shape), dtype, axis=x.rank - 1)]
