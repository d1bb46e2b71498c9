"""16-bit floats computed as the StableHLO specification (and JAX on CPU) says.

- Every arithmetic op on bf16 rounds its result to bf16: it is written as the op in f32
  between ``stablehlo.convert``s. The cpu pipeline emulates bf16 arithmetic in f32
  (``arith-emulate-unsupported-floats``), which keeps a chain of ops in f32 and rounds
  once at its end; the explicit conversions round after each op. (f16 arithmetic is
  native and already rounds after each op.) Reduction bodies are left as they are.
- ``dot_general`` and ``convolution`` of f16 or bf16 accumulate in f32 and round once, as
  XLA's CPU backend does: the operands converted to f32, the op in f32, its result
  converted back. Accumulating in the 16-bit type loses about half the bits of a long
  sum.

Runs on torch-mlir's bindings (``tir``), before ``stablehlo-legalize-to-linalg``.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering import mlirtools

ROUNDING = frozenset(f"stablehlo.{name}" for name in (
    "add", "subtract", "multiply", "divide", "remainder", "power", "atan2", "sqrt", "rsqrt", "cbrt", "exponential",
    "exponential_minus_one", "log", "log_plus_one", "logistic", "tanh", "sine", "cosine", "tan"))
ACCUMULATING = frozenset({"stablehlo.dot_general", "stablehlo.convolution"})
_REDUCING = ("stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.scatter", "stablehlo.select_and_scatter",
             "stablehlo.sort", "stablehlo.all_reduce", "stablehlo.reduce_scatter")


def _element(value: Any, tir: Any) -> str:
    text = str(value.type)
    return str(tir.RankedTensorType(value.type).element_type) if text.startswith("tensor<") else ""


def _in_reduction(op: Any) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name in _REDUCING:
            return True
        parent = parent.parent
    return False


def _fits(op: Any, tir: Any) -> bool:
    if len(op.results) != 1 or not op.operands:
        return False
    element = _element(op.results[0], tir)
    if op.name in ACCUMULATING:
        return element in ("bf16", "f16") and all(_element(v, tir) == element for v in op.operands)
    return (op.name in ROUNDING and element == "bf16" and all(_element(v, tir) == "bf16" for v in op.operands)
            and not _in_reduction(op))


def _convert(value: Any, element: Any, tir: Any) -> Any:
    shaped = tir.RankedTensorType(value.type)
    kind = tir.RankedTensorType.get(list(shaped.shape), element)
    return tir.Operation.create("stablehlo.convert", results=[kind], operands=[value]).result


def in_f32(module: Any, tir: Any) -> int:
    """Every op of ``ROUNDING`` on bf16 and of ``ACCUMULATING`` on f16 or bf16 computed in
    f32 between conversions; how many."""
    found = mlirtools.ops_where(module, tir, lambda op: _fits(op, tir))
    f32 = tir.F32Type.get()
    for op in found:
        result = op.results[0]
        element = tir.RankedTensorType(result.type).element_type
        attributes = {op.attributes[i].name: op.attributes[i].attr for i in range(len(op.attributes))}
        with tir.InsertionPoint(op), op.location:
            operands = [_convert(v, f32, tir) for v in op.operands]
            wide = tir.RankedTensorType.get(list(tir.RankedTensorType(result.type).shape), f32)
            new = tir.Operation.create(op.name, results=[wide], operands=operands, attributes=attributes)
            narrow = _convert(new.result, element, tir)
        result.replace_all_uses_with(narrow)
        op.erase()
    return len(found)
