"""What IREE's ``util`` ops stand for, on a parsed module (upstream's or torch-mlir's bindings).

``mlirtext.ireeops`` turns them into generic, unregistered ops; here they get their meaning:

- ``util.optimization_barrier``: opaque to the optimizer, as IREE makes it: a constant it
  bars becomes a new argument of the entry, fed with its value at run time (a value
  computed from others passes through: what it stands on is fed already, or kept);
- ``util.unfoldable_constant`` in the entry's own body: a new argument of the entry,
  fed at run time with the constant's value, so that codegen, not the constant
  folder, is what the checks see (IREE's intent). Elsewhere (a callee, a region), or
  when ``feed`` is off or its value cannot be read, it becomes a plain constant.

openxla's StableHLO testdata builds its inputs in a private ``@inputs()`` function
whose results the entry gets by a call: ``feed_inputs_call`` feeds those as arguments too.
The check ops are captured afterwards, as StableHLO's are (``worker/lowering/checks.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_mlir_snippets.mlirtext.ireeops import iree_only_dialects
from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.lowering import mlirtools
from pytest_mlir_snippets.worker.lowering.fedvalues import constant_value, new_argument

UNFOLDABLE = "util.unfoldable_constant"
BARRIER = "util.optimization_barrier"


@dataclass
class Fed:
    """Constants of the snippet turned into run-time arguments of the entry."""

    values: list[np.ndarray] = field(default_factory=list)  # in argument order, after the entry's own
    sources: list[str] = field(default_factory=list)  # where each came from, for the record
    kept: list[str] = field(default_factory=list)  # constants that stayed constants, and why
    own: list[str] = field(default_factory=list)  # of ``sources``, a self-checking function's own constants
    widened: list[str] = field(default_factory=list)  # the entry's arguments and results fed in a wide type
    parallel: list[Any] = field(default_factory=list)  # run_parallel plans (lowering/parallel.py), for the run

    def extend(self, other: Fed) -> None:
        self.values += other.values
        self.sources += other.sources
        self.kept += other.kept
        self.own += other.own


def reject_iree_only(text: str, target: str) -> None:
    """A function that uses a dialect only IREE's compiler has is ``unsupported`` here."""
    found = iree_only_dialects(text)
    if found:
        names = ", ".join(f"'{d}'" for d in found)
        what = f"dialects {names} are" if len(found) > 1 else f"dialect {names} is"
        raise SnippetFailure(Kind.UNSUPPORTED, f"{what} IREE's own, not available for target {target}: "
                             "run it with --mlir-target iree-cpu (or iree-cuda)")


def give_meaning(module: Any, ir: Any, function: str, constant_op: str, feed: bool = True) -> Fed:
    """Constants behind barriers and unfoldable constants of ``function``'s body as new
    arguments (``feed``), other barriers as identities, and unfoldable constants not fed as
    ``constant_op`` (``arith.constant``, ``stablehlo.constant``)."""
    found = mlirtools.ops_by_name(module, ir, frozenset({UNFOLDABLE, BARRIER}))
    dialect = constant_op.split(".")[0]
    fed = Fed()
    func = mlirtools.find_function(module, function)
    block = func.regions[0].blocks[0]
    for number, op in enumerate(found.get(BARRIER, []), 1):
        for result, operand in zip(op.results, op.operands):
            value = _barred_constant(operand, ir) if feed and _in_body(op, func) else None
            if value is None:  # a value computed from others: what it stands on is fed or kept
                result.replace_all_uses_with(operand)
                continue
            result.replace_all_uses_with(new_argument(block, result.type, op.location, ir, dialect))
            fed.values.append(value)
            fed.sources.append(f"{BARRIER} #{number}")
        op.erase()
    for number, op in enumerate(found.get(UNFOLDABLE, []), 1):
        where = f"{UNFOLDABLE} #{number}"  # in the order of the text (lines are the split module's here)
        value, why = None, "feeding is off (the lowering needs it constant)"
        if feed and _in_body(op, func):
            try:
                value = constant_value(op, ir)
            except (ValueError, TypeError) as error:
                why = f"its value cannot be fed ({error})"
        elif feed:
            why = "not in the entry's own body"
        if value is None:
            with ir.InsertionPoint(op), op.location:
                new = ir.Operation.create(constant_op, results=[op.results[0].type],
                                          attributes={"value": op.attributes["value"]})
            op.results[0].replace_all_uses_with(new.results[0])
            fed.kept.append(f"{where}: kept as a constant, {why}")
        else:
            op.results[0].replace_all_uses_with(new_argument(block, op.results[0].type, op.location, ir, dialect))
            fed.values.append(value)
            fed.sources.append(where)
        op.erase()
    if fed.values:
        _retype(func, block, ir)
    return fed


def feed_inputs_call(module: Any, ir: Any, function: str, callee: str = "inputs") -> Fed:
    """openxla's testdata: the entry's ``call @inputs()``, whose callee returns constants,
    replaced by new arguments of the entry holding those constants' values."""
    func = mlirtools.find_function(module, function)
    try:
        source = mlirtools.find_function(module, callee)
    except SnippetFailure:
        return Fed()
    block = func.regions[0].blocks[0]
    calls = [op for op in block.operations if op.operation.name == "func.call"
             and str(op.attributes["callee"]).lstrip("@").strip('"') == callee]
    ret = list(source.regions[0].blocks[0].operations)[-1]
    values: list[np.ndarray] = []
    for operand in ret.operands:
        owner = operand.owner
        if not hasattr(owner, "name") or not owner.name.endswith(".constant"):
            return Fed()
        try:
            values.append(constant_value(owner, ir))
        except (ValueError, TypeError):
            return Fed()
    if len(calls) != 1 or not values:
        return Fed()
    call = calls[0].operation
    arguments = [new_argument(block, result.type, call.location, ir, "stablehlo") for result in call.results]
    for result, argument in zip(call.results, arguments):
        result.replace_all_uses_with(argument)
    call.erase()
    _retype(func, block, ir)
    return Fed(values, [f"result #{i} of @{callee}()" for i in range(len(values))])


# operands that give a result's shape: their lowering to linalg needs them constant
SHAPE_OPERANDS = {"stablehlo.dynamic_reshape": (1,), "stablehlo.dynamic_broadcast_in_dim": (1,),
                  "stablehlo.dynamic_gather": (2,), "stablehlo.dynamic_iota": (0,), "stablehlo.dynamic_pad": (2, 3, 4),
                  "stablehlo.real_dynamic_slice": (1, 2, 3), "stablehlo.dynamic_conv": (2,)}


def feed_constants(module: Any, ir: Any, function: str, constant_op: str, is_check: Any) -> Fed:
    """A self-checking function's own constants (the StableHLO specification's tests write
    their inputs inline): each ``constant_op`` of the entry's body that an op other than a
    check uses becomes a new argument holding its value, so that the op under test runs on
    values given at run time. ``is_check(op)``: whether a user is a check; a constant that
    checks use only as their expected side (operand 1) stays constant, one a check reads as
    its actual side (operand 0: ``check.expect_eq_const %c, dense<...>``, a test of the
    constant itself) is fed, so that the check reads a value that went through the code.
    A value that cannot be read stays constant, said in ``kept``."""
    func = mlirtools.find_function(module, function)
    block = func.regions[0].blocks[0]
    fed = Fed()
    for number, op in enumerate([op for op in block.operations if op.operation.name == constant_op], 1):
        result = op.results[0]
        if not str(result.type).startswith("tensor<") or all(is_check(use.owner) and use.operand_number > 0
                                                              for use in result.uses):
            continue
        where = f"{constant_op} #{number} (line {mlirtools.location_of(str(op.location))[0]})"
        shape_of = next((use.owner.name for use in result.uses
                         if use.operand_number in SHAPE_OPERANDS.get(use.owner.name, ())), None)
        if shape_of is not None:
            fed.kept.append(f"{where}: kept as a constant, {shape_of} reads it as a shape (its lowering needs "
                            "it constant)")
            continue
        try:
            value = constant_value(op, ir)
        except (ValueError, TypeError) as error:
            fed.kept.append(f"{where}: kept as a constant, its value cannot be fed ({error})")
            continue
        result.replace_all_uses_with(new_argument(block, result.type, op.location, ir, "stablehlo"))
        op.operation.erase()
        fed.values.append(value)
        fed.sources.append(where)
        fed.own.append(where)
    if fed.values:
        _retype(func, block, ir)
    return fed


def _barred_constant(operand: Any, ir: Any) -> np.ndarray | None:
    """The value behind a barrier's operand when a constant op defines it (the barrier keeps
    it from the folder, so it is fed at run time); None otherwise."""
    owner = operand.owner
    name = getattr(owner, "name", "")
    if not (name.endswith(".constant") or name == "tosa.const") or not str(operand.type).startswith("tensor<"):
        return None
    try:
        return constant_value(owner, ir)
    except (ValueError, TypeError):
        return None


def _in_body(op: Any, func: Any) -> bool:
    parent = op.operation.parent
    return bool(parent is not None and parent.name == "func.func" and parent == func.operation)


def _retype(func: Any, block: Any, ir: Any) -> None:
    """The entry's function type after arguments were added to its block."""
    results = list(ir.FunctionType(func.attributes["function_type"].value).results)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments],
                                                                           results))
    if "arg_attrs" in func.attributes:
        del func.attributes["arg_attrs"]
