"""StableHLO ops built with torch-mlir's bindings, their result types worked out: what
the expansions of ``triangular_solve`` and ``fft`` are written in (StableHLO that
``stablehlo-legalize-to-linalg`` lowers and the reference interpreter evaluates)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

_PART = {"complex<f32>": "f32", "complex<f64>": "f64"}
_WIDE = {"bf16": "f32", "f16": "f32"}  # computed in f32, as XLA's CPU backend does for these


class Hlo:
    """Creates StableHLO ops at the current insertion point (the caller's ``with``), at ``loc``."""

    def __init__(self, tir: Any, loc: Any) -> None:
        self.tir, self.loc = tir, loc

    # ---------------------------------------------------------------- types
    def shape(self, value: Any) -> list[int]:
        return list(self.tir.RankedTensorType(value.type).shape)

    def element(self, value: Any) -> str:
        return str(self.tir.RankedTensorType(value.type).element_type)

    def tensor(self, shape: Sequence[int], element: str) -> Any:
        return self.tir.RankedTensorType.get(list(shape), self.tir.Type.parse(element))

    def _op(self, name: str, result: Any, operands: Sequence[Any], **attributes: Any) -> Any:
        return self.tir.Operation.create(name, results=[result], operands=list(operands), attributes=attributes,
                                         loc=self.loc).result

    def _i64s(self, values: Sequence[int]) -> Any:
        return self.tir.DenseI64ArrayAttr.get([int(v) for v in values])

    # ---------------------------------------------------------------- values
    def constant(self, array: np.ndarray, element: str) -> Any:
        """``array`` as a constant of ``element``: f32, f64 or complex of them (from its parts)."""
        if element in _PART:
            real = self.constant(np.ascontiguousarray(array.real), _PART[element])
            return self.complex(real, self.constant(np.ascontiguousarray(array.imag), _PART[element]))
        data = np.ascontiguousarray(array, dtype={"f32": np.float32, "f64": np.float64}[element])
        attr = self.tir.DenseElementsAttr.get(data, shape=list(array.shape))
        return self._op("stablehlo.constant", self.tensor(array.shape, element), [], value=attr)

    def ew(self, name: str, *operands: Any) -> Any:
        """An elementwise op whose result has its first operand's type."""
        return self._op(f"stablehlo.{name}", operands[0].type, operands)

    def convert(self, value: Any, element: str) -> Any:
        if self.element(value) == element:
            return value
        return self._op("stablehlo.convert", self.tensor(self.shape(value), element), [value])

    def real(self, value: Any, name: str = "real") -> Any:
        return self._op(f"stablehlo.{name}", self.tensor(self.shape(value), _PART[self.element(value)]), [value])

    def imag(self, value: Any) -> Any:
        return self.real(value, "imag")

    def complex(self, real: Any, imag: Any) -> Any:
        return self._op("stablehlo.complex", self.tensor(self.shape(real), f"complex<{self.element(real)}>"),
                        [real, imag])

    def conjugate(self, value: Any) -> Any:
        return self.complex(self.real(value), self.ew("negate", self.imag(value)))

    # ---------------------------------------------------------------- shapes
    def slice(self, value: Any, start: Sequence[int], limit: Sequence[int]) -> Any:
        shape = [b - a for a, b in zip(start, limit)]
        return self._op("stablehlo.slice", self.tensor(shape, self.element(value)), [value],
                        start_indices=self._i64s(start), limit_indices=self._i64s(limit),
                        strides=self._i64s([1] * len(shape)))

    def concatenate(self, values: Sequence[Any], dim: int) -> Any:
        if len(values) == 1:
            return values[0]
        shape = self.shape(values[0])
        shape[dim] = sum(self.shape(v)[dim] for v in values)
        return self._op("stablehlo.concatenate", self.tensor(shape, self.element(values[0])), values,
                        dimension=self.tir.IntegerAttr.get(self.tir.IntegerType.get_signless(64), dim))

    def transpose(self, value: Any, permutation: Sequence[int]) -> Any:
        shape = self.shape(value)
        return self._op("stablehlo.transpose", self.tensor([shape[p] for p in permutation], self.element(value)),
                        [value], permutation=self._i64s(permutation))

    def reverse(self, value: Any, dims: Sequence[int]) -> Any:
        return self._op("stablehlo.reverse", value.type, [value], dimensions=self._i64s(dims))

    def broadcast(self, value: Any, shape: Sequence[int], dims: Sequence[int]) -> Any:
        return self._op("stablehlo.broadcast_in_dim", self.tensor(shape, self.element(value)), [value],
                        broadcast_dimensions=self._i64s(dims))

    def dot(self, lhs: Any, rhs: Any, batch: int, lhs_contract: int, rhs_contract: int) -> Any:
        """``dot_general`` over the first ``batch`` dimensions of both, contracting one dimension
        of each: the result is batch, then ``lhs``'s other dimensions, then ``rhs``'s."""
        ls, rs = self.shape(lhs), self.shape(rhs)
        shape = ls[:batch] + [d for i, d in enumerate(ls) if i >= batch and i != lhs_contract] + \
            [d for i, d in enumerate(rs) if i >= batch and i != rhs_contract]
        dims = list(range(batch))
        numbers = self.tir.Attribute.parse(
            f"#stablehlo.dot<lhs_batching_dimensions = {dims}, rhs_batching_dimensions = {dims},"
            f" lhs_contracting_dimensions = [{lhs_contract}], rhs_contracting_dimensions = [{rhs_contract}]>")
        return self._op("stablehlo.dot_general", self.tensor(shape, self.element(lhs)), [lhs, rhs],
                        dot_dimension_numbers=numbers)


def computed_in(element: str) -> str:
    """The element type an expansion computes in: f32 for bf16 and f16."""
    return _WIDE.get(element, element)
