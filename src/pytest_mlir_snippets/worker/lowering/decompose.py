"""Linalg ops that bufferization or ``convert-linalg-to-loops`` have no model for,
lowered before bufferization by upstream's own transform ops: ``linalg.pack`` and
``linalg.unpack`` ("op was not bufferized"), and the ops that decompose into others
(``linalg.softmax``, the Winograd transforms: ``AggregatedOpInterface``, which the
loops' lowering does not take).

- static inner tiles: ``transform.structured.lower_pack`` (pad, expand_shape, transpose)
  and ``lower_unpack`` (transpose, collapse_shape, extract_slice);
- a pack with dynamic inner tiles: tiled by one along its outer dimensions
  (``tile_using_for``), each tile then decomposed
  (``transform.apply_patterns.linalg.decompose_pack_unpack``), as IREE's CPU backend does;
- an unpack with dynamic inner tiles stays, and bufferization says so;
- ``linalg.softmax`` and the Winograd transforms: ``transform.structured.decompose_interface``.

The schedule runs through the public transform interpreter
(``mlir.dialects.transform.interpreter``); the cpu target applies it in its default
pipeline only (a pipeline the user gives runs as given).
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.worker.lowering import mlirtools

PACKS = ("linalg.pack", "linalg.unpack")
AGGREGATES = ("linalg.softmax", "linalg.winograd_filter_transform", "linalg.winograd_input_transform",
              "linalg.winograd_output_transform")
_MARK = "snippets.lowered_pack"
_RESULTS = {
    "linalg.pack": '(!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, '
                   '!transform.op<"linalg.transpose">)',
    "linalg.unpack": '(!transform.op<"tensor.empty">, !transform.op<"linalg.transpose">, '
                     '!transform.op<"tensor.collapse_shape">, !transform.op<"tensor.extract_slice">)',
}


def needed(module: str) -> bool:
    """Whether ``module``'s text may hold an op lowered here (no walk of the parsed module)."""
    return any(name in module for name in (*PACKS, *AGGREGATES))


def _static_tiles(op: Any) -> bool:
    return all(size >= 0 for size in op.attributes["static_inner_tiles"])


def _schedule(ops: list[Any], ir: Any) -> str | None:
    """The transform script for ``ops`` (each marked with its index); None: nothing to do."""
    lines, decompose = [], False
    aggregates = sorted({op.name for op in ops if op.name in AGGREGATES})
    if aggregates:  # all of them at once: decompose_interface takes each op the handle holds
        lines.append(f"%aggregates = transform.structured.match ops{{{aggregates!r}}} in %root "
                     ": (!transform.any_op) -> !transform.any_op".replace("'", '"'))
        lines.append("%parts = transform.structured.decompose_interface %aggregates "
                     ": (!transform.any_op) -> !transform.any_op")
    for index, op in enumerate(ops):
        name = op.name
        if name in AGGREGATES:
            continue
        static = _static_tiles(op)
        if not static and name == "linalg.unpack":
            continue
        op.attributes[_MARK] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), index)
        handle = f'!transform.op<"{name}">'
        lines.append(f'%op{index} = transform.structured.match ops{{["{name}"]}} attributes{{{_MARK} = {index}}} '
                     f"in %root : (!transform.any_op) -> {handle}")
        if static:
            verb = "lower_pack" if name == "linalg.pack" else "lower_unpack"
            lines.append(f"transform.structured.{verb} %op{index} : ({handle}) -> {_RESULTS[name]}")
        else:
            rank = ir.ShapedType(op.operands[0].type).rank
            loops = ", ".join(["!transform.any_op"] * rank)
            lines.append(f"%tiled{index}, %loops{index}:{rank} = transform.structured.tile_using_for %op{index} "
                         f"tile_sizes [{', '.join(['1'] * rank)}] : ({handle}) -> (!transform.any_op, {loops})")
            decompose = True
    if not lines:
        return None
    if decompose:
        lines += ['%funcs = transform.structured.match ops{["func.func"]} in %root '
                  ": (!transform.any_op) -> !transform.any_op",
                  "transform.apply_patterns to %funcs { transform.apply_patterns.linalg.decompose_pack_unpack } "
                  ": !transform.any_op"]
    body = "\n    ".join([*lines, "transform.yield"])
    return ("module attributes {transform.with_named_sequence} {\n"
            "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n"
            f"    {body}\n  }}\n}}")


def lower(module: Any, diagnostics: mlirtools.Collector) -> None:
    """Lower the pack, unpack and aggregate ops of ``module`` (upstream's bindings) in place."""
    from mlir import ir
    from mlir.dialects.transform import interpreter

    ops = mlirtools.ops_where(module, ir, lambda op: op.name in PACKS or op.name in AGGREGATES)
    text = _schedule(ops, ir) if ops else None
    if text is None:
        return
    try:
        schedule = ir.Module.parse(text)
        interpreter.apply_named_sequence(module.operation, schedule.body.operations[0], schedule)
    except Exception as error:
        raise diagnostics.failure(Kind.COMPILE_ERROR, "plugin:decompose (linalg ops bufferization does not "
                                  "take, lowered by transform ops) failed", error) from None
    for op in mlirtools.ops_where(module, ir, lambda op: _MARK in op.attributes):
        del op.attributes[_MARK]
