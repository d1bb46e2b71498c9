"""What JAX's StableHLO holds beyond the ops the legalization takes, rewritten before it.

- ``stablehlo.optimization_barrier`` (``jax.checkpoint``, ``lax.optimization_barrier``):
  its operands, unchanged; it only keeps XLA from moving code across it.
- ``stablehlo.reduce`` over no dimension (``jnp.unique``): each result element is the
  body applied to the init value and the operand's element, the body's one op applied
  elementwise to the init value broadcast and the operand;
- Shardy's annotations (``sdy.mesh``, ``sdy.sharding_constraint``, ``sdy.sharding``
  attributes), which typed PRNG keys bring: sharding on a single device is no sharding,
  so they are dropped (``drop_sharding``, before unregistered ops are rejected);
- JAX's ``@shape_assertion`` custom calls (``jax.export`` with symbolic shapes): the
  program refined to the shapes it runs with, each assertion's predicate is a constant;
  a true one is dropped, a false one fails as JAX's run time fails, with its message
  (dimension values in its ``{0}``..).

Runs on torch-mlir's bindings (``tir``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_mlir_snippets.protocol import Diagnostic, Kind
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.lowering import mlirtools


def barriers_as_operands(module: Any, tir: Any) -> int:
    """Every ``optimization_barrier`` replaced by its operands; how many."""
    found = mlirtools.ops_where(module, tir, lambda op: op.name == "stablehlo.optimization_barrier")
    for op in found:
        for result, operand in zip(op.results, op.operands):
            result.replace_all_uses_with(operand)
        op.erase()
    return len(found)


def _single_op_body(op: Any) -> Any:
    """The one binary op of ``op``'s body applied to its two arguments, else None."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 2 or len(ops[0].operands) != 2 or len(ops[0].results) != 1:
        return None
    arguments = list(block.arguments)
    if list(ops[1].operands) != [ops[0].results[0]] or not all(v in arguments for v in ops[0].operands):
        return None
    return ops[0]


def reduces_over_nothing(module: Any, tir: Any) -> int:
    """Every one-operand ``stablehlo.reduce`` over no dimension whose body is one op, as that
    op of the init value broadcast and the operand; how many."""
    def fits(op: Any) -> bool:
        return (op.name == "stablehlo.reduce" and len(op.operands) == 2
                and not list(op.attributes["dimensions"]) and _single_op_body(op) is not None)

    found = mlirtools.ops_where(module, tir, fits)
    for op in found:
        body = _single_op_body(op)
        operand, init = op.operands
        kind = op.results[0].type
        args = list(op.regions[0].blocks[0].arguments)
        swap = list(body.operands) != args
        with tir.InsertionPoint(op), op.location:
            wide = tir.Operation.create("stablehlo.broadcast_in_dim", results=[kind], operands=[init],
                                        attributes={"broadcast_dimensions": tir.DenseI64ArrayAttr.get([])}).result
            pair = [operand, wide] if swap else [wide, operand]
            new = tir.Operation.create(body.name, results=[kind], operands=pair,
                                       attributes=_named(body.attributes))
        op.results[0].replace_all_uses_with(new.result)
        op.erase()
    return len(found)


_CONSTRAINT = re.compile(r"(%[\w#]+) = sdy\.sharding_constraint (%[\w#]+) <@[^>]*> : ([^\n]+?)(\s+loc\(.*)?$",
                         re.MULTILINE)
_MESH = re.compile(r"^\s*sdy\.mesh @[^\n]*$", re.MULTILINE)


def sharding_in_generic_form(text: str) -> str:
    """Shardy's ops, whose syntax only its dialect parses, in the generic form: meshes
    dropped, a constraint an unregistered op (``drop_sharding`` then removes it)."""
    if "sdy." not in text:
        return text
    text = _MESH.sub("", text)
    return _CONSTRAINT.sub(lambda m: f'{m[1]} = "sdy.sharding_constraint"({m[2]}) : ({m[3]}) -> {m[3]}{m[4] or ""}',
                           text)


def drop_sharding(module: Any, tir: Any) -> int:
    """Shardy's ops and attributes removed (a constraint is its operand); how many ops."""
    found = mlirtools.ops_where(module, tir, lambda op: op.name.startswith("sdy."))
    for op in found:
        for result, operand in zip(op.results, op.operands):
            result.replace_all_uses_with(operand)
    for op in reversed(found):
        op.erase()
    for func in mlirtools.ops_where(module, tir, lambda op: op.name == "func.func"):
        for key in ("arg_attrs", "res_attrs"):
            if key in func.attributes:
                kept = [tir.DictAttr.get({k: v for k, v in _named(tir.DictAttr(d)).items() if not k.startswith("sdy.")})
                        for d in tir.ArrayAttr(func.attributes[key])]
                func.attributes[key] = tir.ArrayAttr.get(kept)
    return len(found)


def _named(attributes: Any) -> dict[str, Any]:
    """An op's attributes or a dictionary attribute as a dict."""
    return {attributes[i].name: attributes[i].attr for i in range(len(attributes))}


def _is_assertion(op: Any, tir: Any) -> bool:
    return op.name == "stablehlo.custom_call" and str(op.attributes["call_target_name"]) == '"shape_assertion"'


_BINARY: dict[str, Callable[..., Any]] = {
    "stablehlo.add": np.add, "stablehlo.subtract": np.subtract, "stablehlo.multiply": np.multiply,
    "stablehlo.maximum": np.maximum, "stablehlo.minimum": np.minimum, "stablehlo.and": np.logical_and,
    "stablehlo.or": np.logical_or, "stablehlo.remainder": np.fmod,
    "stablehlo.divide": lambda a, b: np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))}
_COMPARE: dict[str, Callable[..., Any]] = {
    "EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater, "LE": np.less_equal,
    "LT": np.less}
_UNARY: dict[str, Callable[..., Any]] = {
    "stablehlo.not": np.logical_not, "stablehlo.sign": np.sign, "stablehlo.abs": np.abs,
    "stablehlo.negate": np.negative}


class Unknown(Exception):
    """A value the shapes alone do not give."""


def value_of(value: Any, tir: Any, shapes: Any) -> np.ndarray:
    """``value`` computed from constants and the arguments' ``shapes`` (None: after refinement,
    constants only)."""
    owner = value.owner
    name = getattr(owner, "name", "")
    if name == "stablehlo.constant":
        attr = tir.DenseElementsAttr(owner.attributes["value"])
        shape = tuple(tir.RankedTensorType(value.type).shape)
        if attr.is_splat:
            return np.full(shape, tir.IntegerAttr(attr.get_splat_value()).value)
        return np.array([tir.IntegerAttr(attr[i]).value for i in range(len(attr))]).reshape(shape)
    if shapes is None or name == "":
        raise Unknown
    operands = [value_of(v, tir, shapes) for v in owner.operands] if name != "stablehlo.get_dimension_size" else []
    if name == "stablehlo.get_dimension_size":
        source = owner.operands[0]
        if not isinstance(source.owner, tir.Block):
            raise Unknown
        return np.array(shapes[tir.BlockArgument(source).arg_number][tir.IntegerAttr(owner.attributes["dimension"])
                                                                       .value])
    if name in _BINARY:
        return np.asarray(_BINARY[name](*operands))
    if name == "stablehlo.compare":
        direction = str(owner.attributes["comparison_direction"]).split()[-1].rstrip(">")
        return np.asarray(_COMPARE[direction](*operands))
    if name in _UNARY:
        return np.asarray(_UNARY[name](operands[0]))
    if name == "stablehlo.select":
        return np.where(*operands)
    if name == "stablehlo.convert":
        return operands[0]
    if name == "stablehlo.broadcast_in_dim" and operands[0].size == 1:
        return np.full(tuple(tir.RankedTensorType(owner.results[0].type).shape), operands[0].reshape(()))
    if name == "stablehlo.reshape":
        return operands[0].reshape(tuple(tir.RankedTensorType(owner.results[0].type).shape))
    if name == "stablehlo.concatenate":
        return np.concatenate(operands, axis=tir.IntegerAttr(owner.attributes["dimension"]).value)
    raise Unknown


def shape_assertions(module: Any, tir: Any, shapes: Any = None) -> int:
    """Every ``@shape_assertion`` whose predicate the constants (and, before refinement, the
    entry's argument ``shapes``) give, judged: a true one dropped, a false one an
    execute-error with JAX's message; how many dropped."""
    found = mlirtools.ops_where(module, tir, lambda op: _is_assertion(op, tir))
    dropped = 0
    for op in found:
        try:
            values = [value_of(v, tir, shapes) for v in op.operands]
        except Unknown:
            continue  # left for later, or for the legalization, which names the call
        if not bool(np.all(values[0])):
            message = str(tir.StringAttr(op.attributes["error_message"]).value)
            try:
                message = message.format(*(int(v) for v in values[1:]))
            except (IndexError, KeyError, ValueError, TypeError):
                pass
            line, column = mlirtools.location_of(str(op.location))
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"JAX's shape assertion failed: {message}",
                                 [Diagnostic("error", message, line, column)])
        op.erase()
        dropped += 1
    return dropped
