"""Ops of the ai.onnx.preview.training and ai.onnx.ml domains, which torch-mlir does not
convert, in default-domain ops, as ONNX's operator specification writes them.

- Adagrad, Momentum (standard and nesterov) and Adam: one optimizer step for each of the
  n tensors (inputs ``R, T, X1..Xn, G1..Gn[, V1..Vn][, H1..Hn]``), the learning rate ``R``
  and the step count ``T`` scalars; ``T`` is cast to the tensors' type.
- Binarizer: 1 where ``x > threshold``, else 0, in ``x``'s type.
- ArrayFeatureExtractor: the items of the last axis at the given indices (a Gather).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.arith import Arith
from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, Tensor

Update = Callable[[Arith, Tensor, Tensor, list[Tensor]], list[Tensor]]


def _optimizer(op: OnnxOp, e: Emitter, groups: int, update: Update) -> list[Any] | None:
    """``update(arith, R, T, [X, G, ...])`` per tensor (``groups`` inputs each: ``X1..Xn,
    G1..Gn, ...``), ``T`` cast to the tensors' type; its outputs grouped as ONNX lists them
    (every tensor's first output, then every tensor's second...)."""
    r, t = op.inputs[0], op.input(1)
    if r is None or t is None or (len(op.inputs) - 2) % groups:
        return None
    n = (len(op.inputs) - 2) // groups
    tensors = [x for x in op.inputs[2:] if x is not None]
    if len(tensors) != n * groups or any(x.dtype != r.dtype for x in tensors) or not r.dtype.startswith("f"):
        return None
    a = Arith(e, r.dtype)
    steps = [update(a, r, a.cast(t, r.dtype), tensors[i::n]) for i in range(n)]
    return [step[k].value for k in range(len(steps[0])) for step in steps]


def _regularized(a: Arith, op: OnnxOp, x: Tensor, g: Tensor) -> Tensor:
    return a.add(a.mul(x, float(op.attrs.get("norm_coefficient", 0.0))), g)


def adagrad(op: OnnxOp, e: Emitter) -> list[Any] | None:
    decay, epsilon = float(op.attrs.get("decay_factor", 0.0)), float(op.attrs.get("epsilon", 0.0))

    def update(a: Arith, r: Tensor, t: Tensor, xgh: list[Tensor]) -> list[Tensor]:
        x, g, h = xgh
        rate = a.div(r, a.add(a.mul(t, decay), 1.0))
        reg = _regularized(a, op, x, g)
        h2 = a.add(h, a.mul(reg, reg))
        return [a.sub(x, a.div(a.mul(rate, reg), a.add(a.unary("Sqrt", h2), epsilon))), h2]

    return _optimizer(op, e, 3, update)


def momentum(op: OnnxOp, e: Emitter) -> list[Any] | None:
    alpha, beta = float(op.attrs.get("alpha", 0.0)), float(op.attrs.get("beta", 0.0))
    nesterov = op.attrs.get("mode", "standard") == "nesterov"

    def update(a: Arith, r: Tensor, t: Tensor, xgv: list[Tensor]) -> list[Tensor]:
        x, g, v = xgv
        beta_t = a.where(a.gt(t, 0.0), beta, 1.0)  # the first step (T = 0) takes the gradient whole
        reg = _regularized(a, op, x, g)
        v2 = a.add(a.mul(v, alpha), a.mul(reg, beta_t))
        direction = a.add(reg, a.mul(v2, alpha)) if nesterov else v2
        return [a.sub(x, a.mul(r, direction)), v2]

    return _optimizer(op, e, 3, update)


def adam(op: OnnxOp, e: Emitter) -> list[Any] | None:
    alpha, beta = float(op.attrs.get("alpha", 0.9)), float(op.attrs.get("beta", 0.999))
    epsilon, post = float(op.attrs.get("epsilon", 0.0)), float(op.attrs.get("norm_coefficient_post", 0.0))

    def update(a: Arith, r: Tensor, t: Tensor, xgvh: list[Tensor]) -> list[Tensor]:
        x, g, v, h = xgvh
        # the bias-corrected rate R * sqrt(1 - beta^T) / (1 - alpha^T), R itself at T = 0
        corrected = a.div(a.mul(r, a.unary("Sqrt", a.sub(1.0, a("Pow", [a.lit(beta), t])))),
                          a.sub(1.0, a("Pow", [a.lit(alpha), t])))
        rate = a.where(a.gt(t, 0.0), corrected, r)
        reg = _regularized(a, op, x, g)
        v2 = a.add(a.mul(v, alpha), a.mul(reg, 1.0 - alpha))
        h2 = a.add(a.mul(h, beta), a.mul(a.mul(reg, reg), 1.0 - beta))
        stepped = a.sub(x, a.div(a.mul(rate, v2), a.add(a.unary("Sqrt", h2), epsilon)))
        return [a.mul(stepped, 1.0 - post), v2, h2]

    return _optimizer(op, e, 4, update)


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
