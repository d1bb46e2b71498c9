"""Dynamic StableHLO programs refined to static shapes before lowering.

A program exported with symbolic shapes (JAX's shape polymorphism) has arguments
with dynamic dimensions (``tensor<?x4xf32>``) and, first, a 0-d integer argument for
each dimension variable: its size (``@main(%arg0: tensor<i64>, %arg1: tensor<?x4xf32>)``,
``%arg0`` the size of ``?``). XLA refines such a program for the shapes it is called
with; so does this module, as the convention of the inputs has it (golden/inputs.py):

- the dimension arguments: the leading 0-d integer arguments of a function whose
  arguments or results have a dynamic dimension; each is replaced by a constant
  (the argument stays, unused), which ``dimension_arguments`` and the caller agree on:
  every dynamic dimension and every dimension argument take the same size;
- then ``stablehlo-refine-arguments`` with the static argument types,
  ``stablehlo-refine-shapes`` (types propagated, shape computations folded) and
  ``stablehlo-canonicalize-dynamism`` (``dynamic_broadcast_in_dim``,
  ``dynamic_reshape``, ``dynamic_iota``, ``real_dynamic_slice``, ``dynamic_pad``,
  ``dynamic_conv``, ... with constant shapes become their static ops).

The compile refines to the recorded inputs' shapes (and dimension arguments' values) where
a request has recorded inputs that fit the entry (``RECORDED``, set by the worker per
compile), else with ``--mlir-dynamic-dim`` (``DYNAMIC_DIM``, set by the worker per
request): two symbolic dimensions recorded at different sizes keep them; the StableHLO
interpreter refines with the values and shapes it is given,
which are the same (it aborts the process on dynamic result types).

Runs on torch-mlir's bindings (``tir``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pytest_mlir_snippets.worker.lowering import mlirtools
from pytest_mlir_snippets.worker.lowering.shlo import dynamic_window, jaxops

# the size of every dynamic dimension the compile refines to: the request's --mlir-dynamic-dim
DYNAMIC_DIM: ContextVar[int] = ContextVar("DYNAMIC_DIM", default=4)
# the recorded inputs of the request compiled (arrays), whose shapes the compile refines to
RECORDED: ContextVar[Sequence[Any]] = ContextVar("RECORDED", default=())
# ops whose shapes are operands (stablehlo.dynamic_slice's sizes are static: not one of them)
DYNAMISM = frozenset({"stablehlo.get_dimension_size", "stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_reshape",
                      "stablehlo.dynamic_iota", "stablehlo.real_dynamic_slice", "stablehlo.dynamic_pad",
                      "stablehlo.dynamic_conv", "stablehlo.dynamic_gather"})
_INTEGER = re.compile(r"^u?i(?:[2-9]|\d\d+)$")  # i1 is a predicate, never a size
REFINE = ("builtin.module(stablehlo-refine-arguments{{types={types}}}, stablehlo-refine-shapes,"
          " func.func(stablehlo-canonicalize-dynamism))")


@contextmanager
def dynamic_dim(size: int) -> Iterator[None]:
    """Refine to ``size`` while inside."""
    token = DYNAMIC_DIM.set(size)
    try:
        yield
    finally:
        DYNAMIC_DIM.reset(token)


@contextmanager
def recorded(inputs: Sequence[Any]) -> Iterator[None]:
    """Refine to the shapes of ``inputs`` (arrays) while inside, where they fit the entry."""
    token = RECORDED.set(inputs)
    try:
        yield
    finally:
        RECORDED.reset(token)


def _has_dynamic(types: Sequence[Any], tir: Any) -> bool:
    return any(str(t).startswith("tensor<") and (str(t).startswith("tensor<*") or
                                                 not tir.RankedTensorType(t).has_static_shape) for t in types)


def is_dynamic(func: Any, tir: Any) -> bool:
    """Whether a ``func.func``'s arguments or results have a dynamic dimension."""
    return _has_dynamic(list(func.type.inputs) + list(func.type.results), tir)


def needs_refinement(module: Any, func: Any, tir: Any) -> bool:
    """Whether ``func`` is dynamic, or ``module`` computes shapes (``DYNAMISM``) or has an op with a
    dynamic result (a static program may build its shapes from constants)."""
    if is_dynamic(func, tir):
        return True
    return bool(mlirtools.ops_where(module, tir, lambda op: op.name in DYNAMISM or
                                    _has_dynamic([r.type for r in op.results], tir)))


def _is_size(t: Any, tir: Any) -> bool:
    if not str(t).startswith("tensor<"):
        return False
    shaped = tir.RankedTensorType(t)
    return shaped.rank == 0 and _INTEGER.match(str(shaped.element_type)) is not None


def dimension_arguments(func: Any, tir: Any) -> list[int]:
    """The positions of a dynamic function's dimension arguments (its leading 0-d integer
    arguments); none for a function without dynamic dimensions."""
    if not is_dynamic(func, tir):
        return []
    found = []
    for i, t in enumerate(func.type.inputs):
        if not _is_size(t, tir):
            break
        found.append(i)
    return found


def concrete_shapes(func: Any, tir: Any, size: int) -> list[list[int]]:
    """Each argument's shape: the recorded input's (``RECORDED``) where the recorded inputs fit
    the arguments, else every dynamic dimension ``size`` ([] for a scalar)."""
    shapes = []
    for t in func.type.inputs:
        shaped = tir.RankedTensorType(t) if str(t).startswith("tensor<") else None
        shapes.append([] if shaped is None else
                      [size if shaped.is_dynamic_dim(i) else shaped.get_dim_size(i) for i in range(shaped.rank)])
    given = _recorded_fit(shapes, func, tir)
    return [list(value.shape) for value in given] if given else shapes


def dimension_sizes(func: Any, tir: Any, size: int) -> dict[int, int]:
    """The value of each dimension argument (``dimension_arguments``): the recorded input's
    where the recorded inputs fit the arguments, else ``size``."""
    positions = dimension_arguments(func, tir)
    given = _recorded_fit(concrete_shapes(func, tir, size), func, tir) if positions else []
    return {i: int(given[i]) if given else size for i in positions}


def _recorded_fit(shapes: Sequence[Sequence[int]], func: Any, tir: Any) -> list[Any]:
    """The recorded inputs when there is one per argument, each of its argument's rank and
    static sizes; [] otherwise."""
    given = list(RECORDED.get())
    if len(given) != len(shapes):
        return []
    for value, t in zip(given, func.type.inputs):
        shape = getattr(value, "shape", None)
        if shape is None or not str(t).startswith("tensor<"):
            return []
        shaped = tir.RankedTensorType(t)
        if len(shape) != shaped.rank or any(not shaped.is_dynamic_dim(i) and shaped.get_dim_size(i) != shape[i]
                                            for i in range(shaped.rank)):
            return []
    return given


def static_type(t: Any, shape: Sequence[int], tir: Any) -> str:
    """``t`` with ``shape`` (a tensor type's encoding, if any, kept)."""
    shaped = tir.RankedTensorType(t)
    return str(tir.RankedTensorType.get(list(shape), shaped.element_type, shaped.encoding))


def refine(module: Any, tir: Any, function: str, sizes: Mapping[int, int], shapes: Sequence[Sequence[int]],
           pass_manager: Callable[[str], Any], diags: mlirtools.Collector) -> list[Any]:
    """Refine ``function`` of ``module`` in place: dimension argument ``i`` replaced by the
    constant ``sizes[i]``, argument ``j`` given shape ``shapes[j]`` (``pass_manager``:
    torch-mlir's ``PassManager.parse``; a failed pass raises SnippetFailure, an entry that
    cannot be refined ValueError). Returns the ops whose results are still dynamic."""
    func = mlirtools.find_function(module, function)
    jaxops.shape_assertions(func, tir, shapes)  # JAX's checks of the shapes, judged before they are used
    dynamic_window.lower_all(module, func, tir, shapes)
    block = func.regions[0].blocks[0]
    for index, size in sorted(sizes.items()):
        argument = block.arguments[index]
        shaped = tir.RankedTensorType(argument.type)
        value = tir.DenseElementsAttr.get_splat(shaped, tir.IntegerAttr.get(shaped.element_type, size))
        with tir.InsertionPoint.at_block_begin(block), argument.location:
            constant = tir.Operation.create("stablehlo.constant", results=[shaped], attributes={"value": value})
        argument.replace_all_uses_with(constant.results[0])
    types = [static_type(t, shape, tir) if str(t).startswith("tensor<") else str(t)
             for t, shape in zip(func.type.inputs, shapes)]
    with _as_main(module, func, function, tir):
        mlirtools.run_passes(module, REFINE.format(types=",".join(types)), pass_manager, diags, "shape refinement")
    func = mlirtools.find_function(module, function)
    return mlirtools.ops_where(func, tir, lambda op: _has_dynamic([r.type for r in op.results], tir))


@contextmanager
def _as_main(module: Any, func: Any, function: str, tir: Any) -> Iterator[None]:
    """The refinement passes work on ``main``, or on the module's only function: the entry
    is named so for the while."""
    functions = [op for op in module.body.operations if op.operation.name == "func.func"]
    if function == "main" or len(functions) == 1:
        yield
        return
    if any(op.attributes["sym_name"].value == "main" for op in functions):
        raise ValueError(f"@{function} cannot be refined: the module has another function named main")
    func.attributes["sym_name"] = tir.StringAttr.get("main")
    try:
        yield
    finally:
        mlirtools.find_function(module, "main").attributes["sym_name"] = tir.StringAttr.get(function)
