"""Whether lowered IR translates to LLVM IR, op by op, as the translation words its
failure, at the snippet's line of the first op it would reject.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.protocol import Diagnostic
from pytest_mlir_snippets.worker.lowering import mlirtools

# dialects whose ops translation to LLVM IR takes (the LLVM dialect and those of LLVM
# intrinsics); any other op left makes the translation fail
TRANSLATABLE = frozenset({"llvm", "omp", "nvvm", "rocdl", "x86vector", "amx", "arm_neon", "arm_sve", "arm_sme"})


def untranslatable(module: Any) -> list[Diagnostic]:
    """An error, as the translation words it, for the first op of ``module`` (outermost
    first) that translation to LLVM IR would reject (none: it translates)."""
    from mlir import ir

    found: list[Diagnostic] = []

    def visit(op: Any) -> Any:
        name = op.name
        dialect = name.split(".", 1)[0]
        if name == "builtin.module" or dialect in TRANSLATABLE:
            return ir.WalkResult.ADVANCE
        message = (f"LLVM Translation failed for operation: {name}" if dialect == "builtin" else
                   f"cannot be converted to LLVM IR: missing `LLVMTranslationDialectInterface` registration for "
                   f"dialect for op: {name}")
        found.append(Diagnostic("error", message, *nearest_location(op)))
        return ir.WalkResult.INTERRUPT

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def nearest_location(op: Any) -> tuple[int | None, int | None]:
    """Line and column of ``op`` in the snippet; for an op made without one (a Python step's,
    a pattern's ``UnknownLoc``), the nearest op before it in its block that has one, else
    its nearest enclosing op's: a translation failure points at the snippet's line it came from."""
    current = op.operation
    line, column = mlirtools.location_of(str(current.location))
    while line is None and current.block is not None:
        before = [other.operation for other in current.block.operations]
        for other in reversed(before[:next((i for i, o in enumerate(before) if o == current), 0)]):
            line, column = mlirtools.location_of(str(other.location))
            if line is not None:
                return line, column
        current = current.parent.operation
        if current.name == "builtin.module":
            return None, None
        line, column = mlirtools.location_of(str(current.location))
    return line, column
