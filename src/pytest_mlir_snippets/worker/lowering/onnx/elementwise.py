"""Elementwise forms whose torch-mlir lowering fails:

- Einsum of rank-0 operands only (``"->"``, ``",->"``), whose lowering runs the compiler
  out of memory: the product of the operands (the one operand itself), as
  ``numpy.einsum`` gives it;
- Reciprocal of a float, which torch-mlir lowers with a ``cf.assert`` that each element
  is ordered and not zero ("unimplemented: tensor with zero element"): a zero (-0.0 too)
  or NaN aborts the compiled code. ONNX defines it as ``1 / x`` (inf for a zero, NaN for
  NaN), which ``Div`` computes;
- Gelu with ``approximate`` "tanh", whose lowering is off by up to 5e-5 in f32 (more
  than a case's rtol 1e-3 near zero): the specification's formula
  ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` in ONNX ops;
- Celu in bf16, whose lowering rounds each step to bf16 (an ulp off the reference, which
  rounds once; an ulp of bf16 is over a case's rtol 1e-3): computed in f32, rounded once."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import ONNX_TYPE, Emitter, OnnxOp

FLOATS = {"f16", "f32", "f64"}  # the float types a literal can be built in (build.NUMPY)


def einsum(op: OnnxOp, e: Emitter) -> list[Any] | None:
    operands = [x for x in op.inputs if x is not None]
    shape, dtype = op.results[0]
    equation = str(op.attrs.get("equation", "")).replace(" ", "")
    if not operands or shape or any(x.rank or x.dtype != dtype for x in operands):
        return None
    if equation != ",".join([""] * len(operands)) + "->":
        return None
    if len(operands) == 1:
        return [e.op1("Identity", [operands[0]], [], dtype)]
    product = operands[0]
    for x in operands[1:]:
        product = e.op1("Mul", [product, x], [], dtype)
    return [product]


def reciprocal(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or x.dtype not in FLOATS:
        return None
    return [e.op1("Div", [e.const(np.array(1.0), x.dtype), x], list(x.shape), x.dtype)]


def gelu_tanh(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or x.dtype not in FLOATS or op.attrs.get("approximate", "none") != "tanh":
        return None
    shape, dt = list(x.shape), x.dtype

    def const(value: float) -> Any:
        return e.const(np.array(value), dt)

    cube = e.op1("Mul", [e.op1("Mul", [x, x], shape, dt), x], shape, dt)
    inner = e.op1("Add", [x, e.op1("Mul", [cube, const(0.044715)], shape, dt)], shape, dt)
    tanh = e.op1("Tanh", [e.op1("Mul", [inner, const(np.sqrt(2 / np.pi))], shape, dt)], shape, dt)
    half = e.op1("Mul", [x, const(0.5)], shape, dt)
    return [e.op1("Mul", [half, e.op1("Add", [tanh, const(1.0)], shape, dt)], shape, dt)]


def celu_bf16(op: OnnxOp, e: Emitter) -> list[Any] | None:
    x = op.inputs[0]
    if x is None or x.dtype != "bf16":
        return None
    shape = list(x.shape)
    wide = e.op1("Cast", [x], shape, "f32", to=ONNX_TYPE["f32"])
    y = e.op1("Celu", [wide], shape, "f32", alpha=float(op.attrs.get("alpha", 1.0)))
    return [e.op1("Cast", [y], shape, "bf16", to=ONNX_TYPE["bf16"])]
