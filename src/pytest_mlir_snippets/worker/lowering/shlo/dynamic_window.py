"""``stablehlo.custom_call @stablehlo.dynamic_reduce_window`` (what ``jax.export`` writes for
a window whose sizes depend on a symbolic dimension: ``jnp.cumsum`` of a ``b``-long
array) as ``stablehlo.reduce_window``, before shape refinement, which leaves the custom
call dynamic.

Its operands are the input, the init value, then the window dimensions, strides, base
and window dilations and the padding as tensors; computed from the entry's argument
shapes (``jaxops.value_of``), they become the op's attributes. The body is the called
computation's, copied into the region. A call whose sizes the shapes do not give stays.

Runs on torch-mlir's bindings (``tir``).
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering import mlirtools
from pytest_mlir_snippets.worker.lowering.shlo.jaxops import Unknown, value_of

TARGET = '"stablehlo.dynamic_reduce_window"'
_ATTRIBUTES = ("window_dimensions", "window_strides", "base_dilations", "window_dilations")


def lower_all(module: Any, func: Any, tir: Any, shapes: Any) -> int:
    """Every dynamic reduce window of ``func`` whose sizes ``shapes`` give, as a
    ``reduce_window``; how many."""
    found = mlirtools.ops_where(func, tir, lambda op: op.name == "stablehlo.custom_call"
                                and str(op.attributes["call_target_name"]) == TARGET and len(op.operands) == 7)
    done = 0
    for op in found:
        try:
            sizes = [value_of(v, tir, shapes) for v in list(op.operands)[2:]]
        except Unknown:
            continue
        callee = str(tir.ArrayAttr(op.attributes["called_computations"])[0]).lstrip("@").strip('"')
        body = mlirtools.find_function(module, callee)
        attributes = {name: tir.DenseI64ArrayAttr.get([int(v) for v in values.reshape(-1)])
                      for name, values in zip(_ATTRIBUTES, sizes)}
        padding = sizes[4].astype("int64")
        attributes["padding"] = tir.DenseElementsAttr.get(padding, type=tir.RankedTensorType.get(
            list(padding.shape), tir.IntegerType.get_signless(64)))
        with tir.InsertionPoint(op), op.location:
            new = tir.Operation.create("stablehlo.reduce_window", results=[op.results[0].type],
                                       operands=list(op.operands)[:2], attributes=attributes, regions=1)
        _copy_body(body, new.regions[0], tir)
        op.results[0].replace_all_uses_with(new.results[0])
        op.erase()
        done += 1
    return done


def _copy_body(func: Any, region: Any, tir: Any) -> None:
    """``func``'s single block into ``region``, its ``func.return`` a ``stablehlo.return``."""
    source = func.regions[0].blocks[0]
    block = region.blocks.append(*[a.type for a in source.arguments])
    mapped = {source.arguments[i]: block.arguments[i] for i in range(len(source.arguments))}
    with tir.InsertionPoint(block):
        for op in source.operations:
            if op.name == "func.return":
                tir.Operation.create("stablehlo.return", operands=[mapped[v] for v in op.operands], loc=op.location)
                continue
            copy = op.clone()
            for i, operand in enumerate(op.operands):
                copy.operands[i] = mapped[operand]
            for old, new in zip(op.results, copy.results):
                mapped[old] = new
