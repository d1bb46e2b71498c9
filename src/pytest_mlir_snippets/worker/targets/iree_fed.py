"""The constants a self-checking function computes from, kept from IREE's constant folder.

The cpu target feeds such constants as arguments at run time (``worker/lowering/ireeops.py``),
so that the code under test, not the folder, computes what the checks see. IREE's e2e tests
keep theirs from the folder with ``util.unfoldable_constant``; a test that writes a plain
``arith.constant`` (the ``_large`` unpack cases' sizes, a gather's table) is folded whole.
So in the module IREE compiles, a function with check ops gets ``util.optimization_barrier``
(IREE's own op for it: opaque to every optimization) around:

- each tensor constant of its own body that an op other than a check reads, or that a check
  reads as its actual side (operand 0), as ``ireeops.feed_constants`` feeds them on cpu;
- each scalar constant it passes to a call (the sizes of a generated input).

Constants an op reads as a shape (``ireeops.SHAPE_OPERANDS``) stay constant, and the caller
compiles the module as written when the barred one does not compile (an op whose lowering
needs a constant operand).
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.lowering import mlirtools
from pytest_mlir_snippets.worker.lowering.ireeops import BARRIER, SHAPE_OPERANDS

CONSTANTS = frozenset({"arith.constant", "stablehlo.constant", "tosa.const"})
_CALLS = frozenset({"func.call", "util.call"})


def bar_constants(module: Any, ir: Any, function: str) -> list[str]:
    """Barriers around the constants ``function`` computes from (see the module's doc), when
    it has check ops; what each stands behind, for the record (``fed_inputs``)."""
    try:
        func = mlirtools.find_function(module, function)
    except SnippetFailure:  # a util.func, or not there: nothing to bar
        return []
    block = func.regions[0].blocks[0]
    ops = list(block.operations)
    if not any(op.operation.name.startswith("check.") for op in ops):
        return []
    barred: list[str] = []
    constants = [(i, op) for i, op in enumerate(ops) if op.operation.name in CONSTANTS]
    for number, (at, op) in enumerate(constants, 1):
        result = op.results[0]
        uses = [(use.owner, use.operand_number) for use in result.uses]
        if not uses or any(n in SHAPE_OPERANDS.get(owner.name, ()) for owner, n in uses):
            continue
        if str(result.type).startswith("tensor<"):
            wanted = any(not owner.name.startswith("check.") or n == 0 for owner, n in uses)
        else:
            wanted = any(owner.name in _CALLS for owner, _ in uses)
        if not wanted:
            continue
        with ir.InsertionPoint(ops[at + 1]), op.location:  # a constant is never the block's last op
            barrier = ir.Operation.create(BARRIER, results=[result.type], operands=[result])
        for owner, n in uses:
            owner.operands[n] = barrier.result
        line = mlirtools.location_of(str(op.location))[0]
        barred.append(f"{op.operation.name} #{number}" + (f" (line {line})" if line else "") +
                      f": behind {BARRIER}")
    return barred
