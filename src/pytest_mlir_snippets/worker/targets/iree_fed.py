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

from dataclasses import dataclass, field
from typing import Any

from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.lowering import mlirtools
from pytest_mlir_snippets.worker.lowering.checks import as_given
from pytest_mlir_snippets.worker.lowering.ireeops import BARRIER, SHAPE_OPERANDS

CONSTANTS = frozenset({"arith.constant", "stablehlo.constant", "tosa.const"})
_CALLS = frozenset({"func.call", "util.call"})


@dataclass
class Barred:
    """What ``bar_constants`` did to a module, and found in it."""

    fed: list[str] = field(default_factory=list)  # each constant behind a barrier, for the record (``fed_inputs``)
    vacuous: list[bool] = field(default_factory=list)  # per check op of the entry, in order: values as given


def bar_constants(module: Any, ir: Any, function: str, bar: bool = True) -> Barred:
    """Barriers around the constants ``function`` computes from (see the module's doc), when
    it has check ops and ``bar``; whether each check op compares values as given
    (``checks.as_given``: a vacuous check, which does not count), found before."""
    try:
        func = mlirtools.find_function(module, function)
    except SnippetFailure:  # a util.func, or not there: nothing to bar
        return Barred()
    block = func.regions[0].blocks[0]
    ops = list(block.operations)
    checks = [op for op in ops if op.operation.name.startswith("check.")]
    found = Barred(vacuous=[all(as_given(v, ir, module) for v in op.operands) for op in checks])
    if not checks or not bar:
        return found
    barred = found.fed
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
    return found
