"""StableHLO's control flow (``while``, ``if``, ``case``) as ``scf`` ops on tensors,
its regions moved over as they are: ``stablehlo-legalize-to-linalg`` then lowers the
ops inside.

- ``while``: ``scf.while``; the condition's ``tensor<i1>`` read as the i1 of
  ``scf.condition``.
- ``if``: ``scf.if`` on the predicate's element.
- ``case``: ``scf.index_switch`` on the index, the last branch the default (the
  specification runs it for an index out of range).

Ops carrying tokens or tuples are left alone.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.shlo.build import Builder, inline, ops_named, replace

OPS = ("stablehlo.while", "stablehlo.if", "stablehlo.case")


def lower_all(module: Any, tir: Any) -> int:
    """Every ``while``, ``if`` and ``case`` over tensors as scf, innermost first; how many."""
    found = [op for op in ops_named(module, tir, *OPS) if _tensors_only(op, tir)]
    for op in found:
        {"stablehlo.while": _while, "stablehlo.if": _if, "stablehlo.case": _case}[op.name](op, tir)
    return len(found)


def _tensors_only(op: Any, tir: Any) -> bool:
    return all(isinstance(v.type, tir.RankedTensorType) for v in [*op.operands, *op.results])


def _while(op: Any, tir: Any) -> None:
    types = [r.type for r in op.results]
    with tir.InsertionPoint(op):
        b = Builder(tir, op.location)
        loop = b.scf.WhileOp(types, list(op.operands), loc=op.location)
        before = loop.before.blocks.append(*types)
        after = loop.after.blocks.append(*types)
    with tir.InsertionPoint(before):
        (verdict,) = inline(tir, op.regions[0].blocks[0], list(before.arguments))
        b.scf.ConditionOp(b.extract(verdict, []), list(before.arguments), loc=op.location)
    with tir.InsertionPoint(after):
        b.scf.YieldOp(inline(tir, op.regions[1].blocks[0], list(after.arguments)), loc=op.location)
    replace(op, list(loop.results))


def _if(op: Any, tir: Any) -> None:
    with tir.InsertionPoint(op):
        b = Builder(tir, op.location)
        values = b.if_else(b.extract(op.operands[0], []), [r.type for r in op.results],
                           lambda: inline(tir, op.regions[0].blocks[0], []),
                           lambda: inline(tir, op.regions[1].blocks[0], []))
    replace(op, values)


def _case(op: Any, tir: Any) -> None:
    branches = len(op.regions)
    with tir.InsertionPoint(op):
        b = Builder(tir, op.location)
        index = b.to_index(b.extract(b.convert(op.operands[0], "i32"), []))
        switch = b.scf.IndexSwitchOp([r.type for r in op.results], index, list(range(branches - 1)),
                                     loc=op.location)  # its blocks made, the default one first
    for block, source in zip([*switch.case_blocks, switch.default_block], op.regions):
        with tir.InsertionPoint(block):
            b.scf.YieldOp(inline(tir, source.blocks[0], []), loc=op.location)
    replace(op, list(switch.results))
