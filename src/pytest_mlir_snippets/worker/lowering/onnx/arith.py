"""Elementwise ONNX arithmetic on small tensors, for expansions whose constants depend on
runtime inputs (Resize's scales and roi arrive as function arguments in ONNX's tests).

Each value is a ``Tensor`` whose static shape follows numpy broadcasting; Python numbers
and numpy arrays become literals of the value's element type. The ops are those of
``build.OPSET``, the opset every expansion is built in.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx.build import ONNX_TYPE, Emitter, Tensor

Operand = Tensor | float | int | np.ndarray


class Arith:
    def __init__(self, e: Emitter, dtype: str = "f64") -> None:
        self.e = e
        self.dtype = dtype  # the element type literals take

    def __call__(self, name: str, inputs: list[Tensor], shape: list[int] | None = None, dtype: str | None = None,
                 **attrs: Any) -> Tensor:
        """``onnx.<name>`` of ``inputs``: its shape by numpy broadcasting unless given, its
        element type the first input's unless given."""
        if shape is None:
            shape = list(np.broadcast_shapes(*(tuple(t.shape) for t in inputs)))
        dtype = dtype or inputs[0].dtype
        return Tensor(self.e.op1(name, inputs, shape, dtype, **attrs), shape, dtype)

    def lit(self, value: Any, dtype: str | None = None) -> Tensor:
        array = np.asarray(value)
        dtype = dtype or self.dtype
        return Tensor(self.e.const(array, dtype), list(array.shape), dtype)

    def const(self, value: Any, dtype: str) -> Tensor:
        return self.lit(value, dtype)

    def _t(self, x: Operand, like: Operand | None = None) -> Tensor:
        """``x``, a number or array as a literal of ``like``'s element type (the default where none)."""
        if isinstance(x, Tensor):
            return x
        return self.lit(x, like.dtype if isinstance(like, Tensor) else None)

    def _binary(self, name: str, a: Operand, b: Operand, dtype: str | None = None) -> Tensor:
        ta, tb = self._t(a, b), self._t(b, a)
        shape = list(np.broadcast_shapes(tuple(ta.shape), tuple(tb.shape)))
        out = dtype or ta.dtype
        return Tensor(self.e.op1(name, [ta, tb], shape, out), shape, out)

    def add(self, a: Operand, b: Operand) -> Tensor:
        return self._binary("Add", a, b)

    def sub(self, a: Operand, b: Operand) -> Tensor:
        return self._binary("Sub", a, b)

    def mul(self, a: Operand, b: Operand) -> Tensor:
        return self._binary("Mul", a, b)

    def div(self, a: Operand, b: Operand) -> Tensor:
        return self._binary("Div", a, b)

    def min(self, a: Operand, b: Operand) -> Tensor:
        return self._binary("Min", a, b)

    def max(self, a: Operand, b: Operand) -> Tensor:
        return self._binary("Max", a, b)

    def eq(self, a: Operand, b: Operand) -> Tensor:
        return self._binary("Equal", a, b, "i1")

    def lt(self, a: Operand, b: Operand) -> Tensor:
        return self._binary("Less", a, b, "i1")

    def gt(self, a: Operand, b: Operand) -> Tensor:
        return self._binary("Greater", a, b, "i1")

    def or_(self, a: Tensor, b: Tensor) -> Tensor:
        return self._binary("Or", a, b, "i1")

    def unary(self, name: str, a: Tensor) -> Tensor:
        return Tensor(self.e.op1(name, [a], a.shape, a.dtype), a.shape, a.dtype)

    def floor(self, a: Tensor) -> Tensor:
        return self.unary("Floor", a)

    def ceil(self, a: Tensor) -> Tensor:
        return self.unary("Ceil", a)

    def round(self, a: Tensor) -> Tensor:
        """Half to even, as ONNX Round and numpy."""
        return self.unary("Round", a)

    def where(self, cond: Tensor, a: Operand, b: Operand) -> Tensor:
        ta, tb = self._t(a, b), self._t(b, a)
        shape = list(np.broadcast_shapes(tuple(cond.shape), tuple(ta.shape), tuple(tb.shape)))
        return Tensor(self.e.op1("Where", [cond, ta, tb], shape, ta.dtype), shape, ta.dtype)

    def cast(self, a: Tensor, dtype: str) -> Tensor:
        if a.dtype == dtype:
            return a
        return Tensor(self.e.op1("Cast", [a], a.shape, dtype, to=ONNX_TYPE[dtype]), a.shape, dtype)

    def reshape(self, a: Tensor, shape: list[int]) -> Tensor:
        if a.shape == shape:
            return a
        return Tensor(self.e.op1("Reshape", [a, self.lit(shape, "si64")], shape, a.dtype), shape, a.dtype)

    def take(self, a: Tensor, index: int) -> Tensor:
        """Item ``index`` of a 1-D tensor, as shape [1]."""
        idx = self.lit([index], "si64")
        return Tensor(self.e.op1("Gather", [a, idx], [1], a.dtype, axis=0), [1], a.dtype)

    def gather(self, a: Tensor, indices: Tensor, axis: int) -> Tensor:
        shape = [*a.shape[:axis], *indices.shape, *a.shape[axis + 1:]]
        return Tensor(self.e.op1("Gather", [a, indices], shape, a.dtype, axis=axis), shape, a.dtype)

    def matmul(self, a: Tensor, b: Tensor) -> Tensor:
        shape = [*np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])), a.shape[-2], b.shape[-1]]
        return Tensor(self.e.op1("MatMul", [a, b], shape, a.dtype), shape, a.dtype)

    def columns(self, parts: list[Tensor]) -> Tensor:
        """[rows, 1] columns side by side: [rows, len(parts)]."""
        shape = [parts[0].shape[0], sum(p.shape[1] for p in parts)]
        return Tensor(self.e.op1("Concat", parts, shape, parts[0].dtype, axis=1), shape, parts[0].dtype)

    def transpose_last(self, a: Tensor) -> Tensor:
        """The last two axes exchanged."""
        perm = [*range(a.rank - 2), a.rank - 1, a.rank - 2]
        return self.transpose(a, perm)

    def transpose(self, a: Tensor, perm: list[int]) -> Tensor:
        shape = [a.shape[p] for p in perm]
        return Tensor(self.e.op1("Transpose", [a], shape, a.dtype, perm=perm), shape, a.dtype)
