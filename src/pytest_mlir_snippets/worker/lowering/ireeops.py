"""What IREE's ``util`` ops stand for, on a parsed module (upstream's or torch-mlir's bindings).

``mlirtext.ireeops`` turns them into generic, unregistered ops; here they get their meaning:

- ``util.optimization_barrier``: an identity (its results are its operands);
- ``util.unfoldable_constant`` in the entry's own body: a new argument of the entry,
  fed at run time with the constant's value, so that codegen, not the constant
  folder, is what the checks see (IREE's intent). Elsewhere (a callee, a region), or
  when ``feed`` is off or its value cannot be read, it becomes a plain constant.

openxla's StableHLO testdata builds its inputs in a private ``@inputs()`` function
whose results the entry gets by a call: ``feed_inputs_call`` feeds those as arguments too.
The check ops are captured afterwards, as StableHLO's are (``worker/lowering/checks.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import DTYPES
from pytest_mlir_snippets.mlirtext.ireeops import iree_only_dialects
from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.lowering import mlirtools

UNFOLDABLE = "util.unfoldable_constant"
_HEX = re.compile(r'^dense<"0x([0-9A-Fa-f]+)">')
_NUMBER = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")
BARRIER = "util.optimization_barrier"


@dataclass
class Fed:
    """Constants of the snippet turned into run-time arguments of the entry."""

    values: list[np.ndarray] = field(default_factory=list)  # in argument order, after the entry's own
    sources: list[str] = field(default_factory=list)  # where each came from, for the record
    kept: list[str] = field(default_factory=list)  # constants that stayed constants, and why

    def extend(self, other: Fed) -> None:
        self.values += other.values
        self.sources += other.sources
        self.kept += other.kept


def reject_iree_only(text: str, target: str) -> None:
    """A function that uses a dialect only IREE's compiler has is ``unsupported`` here."""
    found = iree_only_dialects(text)
    if found:
        names = ", ".join(f"'{d}'" for d in found)
        what = f"dialects {names} are" if len(found) > 1 else f"dialect {names} is"
        raise SnippetFailure(Kind.UNSUPPORTED, f"{what} IREE's own, not available for target {target}: "
                             "run it with --mlir-target iree-cpu (or iree-cuda)")


def value_of(attr: Any, ir: Any) -> np.ndarray:
    """A dense or scalar attribute's value as numpy; ValueError when it cannot be read."""
    kind = str(attr.type)
    if kind.startswith("tensor<"):
        shaped = ir.ShapedType(attr.type)
        element = str(shaped.element_type)
        dtype = DTYPES.get(element)
        if dtype is None:
            raise ValueError(f"element type {element}")
        shape = tuple(shaped.shape)
        hexed = _HEX.match(str(attr))
        if hexed:  # raw little-endian bytes (openxla's testdata): read as they are, any element width
            raw = np.frombuffer(bytes.fromhex(hexed.group(1)), dtype=dtype)
            return np.array(np.broadcast_to(raw, shape) if raw.size == 1 else raw.reshape(shape))
        if (dtype.kind == "f" and dtype.itemsize < 4) or element == "bf16":  # no buffer view for these: the text
            return _from_text(str(attr), dtype, shape)
        if dtype.kind not in "biuf":
            raise ValueError(f"element type {element} written out")
        dense = ir.DenseElementsAttr(attr)
        typed = ir.DenseIntElementsAttr if dtype.kind in "biu" else ir.DenseFPElementsAttr
        if dense.is_splat:
            return np.full(shape, _scalar(dense.get_splat_value(), ir), dtype=dtype)
        if dtype.kind == "b" or dtype.itemsize < 4:
            values = typed(attr)
            return np.array([values[i] for i in range(len(values))], dtype=dtype).reshape(shape)
        return np.array(typed(attr), copy=True).astype(dtype).reshape(shape)
    dtype = DTYPES.get(kind)
    if dtype is None:
        raise ValueError(f"type {kind}")
    return np.array(_scalar(attr, ir), dtype=dtype)


def _from_text(text: str, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """A float attribute's values from its printed form: decimals, and hex bit patterns
    (how MLIR prints NaN and infinities of the element type)."""
    body = text[text.index("<") + 1: text.rindex(">", 0, text.rindex(":"))]
    bits = np.dtype(f"uint{dtype.itemsize * 8}")
    values = [np.array(int(t, 16), bits).view(dtype) if t.lower().startswith("0x") else np.array(float(t), dtype)
              for t in _NUMBER.findall(body)]
    flat = np.array(values, dtype=dtype)
    return np.array(np.broadcast_to(flat, shape) if flat.size == 1 else flat.reshape(shape))


def _scalar(attr: Any, ir: Any) -> Any:
    text = str(attr.type)
    if text.startswith(("f", "bf")):
        return ir.FloatAttr(attr).value
    value = ir.IntegerAttr(attr).value
    return bool(value) if text == "i1" else value


def give_meaning(module: Any, ir: Any, function: str, constant_op: str, feed: bool = True) -> Fed:
    """Barriers as identities; unfoldable constants of ``function``'s body as new
    arguments (``feed``) or as ``constant_op`` (``arith.constant``, ``stablehlo.constant``)."""
    found = mlirtools.ops_by_name(module, ir, frozenset({UNFOLDABLE, BARRIER}))
    for op in found.get(BARRIER, []):
        for result, operand in zip(op.results, op.operands):
            result.replace_all_uses_with(operand)
        op.erase()
    fed = Fed()
    func = mlirtools.find_function(module, function)
    block = func.regions[0].blocks[0]
    for number, op in enumerate(found.get(UNFOLDABLE, []), 1):
        attr = op.attributes["value"]
        where = f"{UNFOLDABLE} #{number}"  # in the order of the text (lines are the split module's here)
        value, why = None, "feeding is off (the lowering needs it constant)"
        if feed and _in_body(op, func):
            try:
                value = value_of(attr, ir)
            except (ValueError, TypeError) as error:
                why = f"its value cannot be fed ({error})"
        elif feed:
            why = "not in the entry's own body"
        if value is None:
            with ir.InsertionPoint(op), op.location:
                new = ir.Operation.create(constant_op, results=[op.results[0].type], attributes={"value": attr})
            op.results[0].replace_all_uses_with(new.results[0])
            fed.kept.append(f"{where}: kept as a constant, {why}")
        else:
            argument = block.add_argument(op.results[0].type, op.location)
            op.results[0].replace_all_uses_with(argument)
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
        if not hasattr(owner, "name") or not owner.name.endswith(".constant") or "value" not in owner.attributes:
            return Fed()
        try:
            values.append(value_of(owner.attributes["value"], ir))
        except (ValueError, TypeError):
            return Fed()
    if len(calls) != 1 or not values:
        return Fed()
    call = calls[0].operation
    arguments = [block.add_argument(result.type, call.location) for result in call.results]
    for result, argument in zip(call.results, arguments):
        result.replace_all_uses_with(argument)
    call.erase()
    _retype(func, block, ir)
    return Fed(values, [f"result #{i} of @{callee}()" for i in range(len(values))])


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
