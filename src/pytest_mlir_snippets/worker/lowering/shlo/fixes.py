"""StableHLO rewritten before ``stablehlo-legalize-to-linalg`` where its lowering
disagrees with the specification (and the reference interpreter).

- ``stablehlo.add`` of booleans is a logical or; the lowering's ``arith.addi`` on i1
  is an exclusive or (true + true gave false).
- ``stablehlo.slice`` empty along a dimension starts at 0 there: its lowering's
  ``tensor.extract_slice`` keeps the start, and the verifier rejects a start equal to the
  dimension's size (``x[1:1]`` of a dimension of 1: 'offset 0 is out-of-bounds'), though
  the slice is valid and empty (a refined dynamic program gives these);
- ``stablehlo.pad`` of an empty operand is its padding value broadcast: the lowering
  inserts the empty operand at the low padding, which the verifier rejects the same way;
- ``stablehlo.dot_general``'s ``algorithm`` (the least precision the product must keep) is
  dropped: the lowering refuses the op with it, and computing in the operands' own types,
  as the reference interpreter does, keeps at least that precision.

Runs on torch-mlir's bindings (``tir``).
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering import mlirtools


def _boolean(value: Any, tir: Any) -> bool:
    text = str(value.type)
    return text.startswith("tensor<") and str(tir.ShapedType(value.type).element_type) == "i1"


def boolean_add_as_or(module: Any, tir: Any) -> int:
    """Every ``stablehlo.add`` of i1 as ``stablehlo.or``; how many."""
    found = mlirtools.ops_where(module, tir, lambda op: op.name == "stablehlo.add" and _boolean(op.results[0], tir))
    for op in found:
        with tir.InsertionPoint(op), op.location:
            new = tir.Operation.create("stablehlo.or", results=[op.results[0].type], operands=list(op.operands))
        op.results[0].replace_all_uses_with(new.result)
        op.erase()
    return len(found)


def empty_slices_at_zero(module: Any, tir: Any) -> int:
    """Every dimension a ``stablehlo.slice`` takes nothing of, sliced as [0:0]; how many slices."""
    found = mlirtools.ops_where(module, tir, lambda op: op.name == "stablehlo.slice")
    changed = 0
    for op in found:
        start, limit = list(op.attributes["start_indices"]), list(op.attributes["limit_indices"])
        empty = [i for i, (a, b) in enumerate(zip(start, limit)) if a == b and a]
        if not empty:
            continue
        for i in empty:
            start[i] = limit[i] = 0
        op.attributes["start_indices"] = tir.DenseI64ArrayAttr.get(start)
        op.attributes["limit_indices"] = tir.DenseI64ArrayAttr.get(limit)
        changed += 1
    return changed


def _empty(value: Any, tir: Any) -> bool:
    shaped = tir.RankedTensorType(value.type)
    return shaped.has_static_shape and 0 in shaped.shape


def pads_of_nothing(module: Any, tir: Any) -> int:
    """Every ``stablehlo.pad`` of an empty operand as its padding value broadcast; how many."""
    found = mlirtools.ops_where(module, tir, lambda op: op.name == "stablehlo.pad" and _empty(op.operands[0], tir))
    for op in found:
        with tir.InsertionPoint(op), op.location:
            new = tir.Operation.create("stablehlo.broadcast_in_dim", results=[op.results[0].type],
                                       operands=[op.operands[1]],
                                       attributes={"broadcast_dimensions": tir.DenseI64ArrayAttr.get([])})
        op.results[0].replace_all_uses_with(new.result)
        op.erase()
    return len(found)


def dot_algorithms_dropped(module: Any, tir: Any) -> int:
    """Every ``stablehlo.dot_general`` without its ``algorithm``; how many."""
    found = mlirtools.ops_where(module, tir, lambda op: op.name == "stablehlo.dot_general"
                                and "algorithm" in op.attributes)
    for op in found:
        del op.attributes["algorithm"]
    return len(found)


def apply(module: Any, tir: Any) -> None:
    """Every rewrite of this module."""
    dot_algorithms_dropped(module, tir)
    boolean_add_as_or(module, tir)
    empty_slices_at_zero(module, tir)
    pads_of_nothing(module, tir)
