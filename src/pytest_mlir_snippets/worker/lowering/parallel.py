"""``interpreter.run_parallel`` as calls the worker schedules: the StableHLO interpreter's
programs on a grid of replicas x partitions, each instance a call of its program's compiled
function in a thread of its own, their collectives exchanging values through the worker.

Before legalization (torch-mlir's bindings): ``run_parallel`` becomes a call of a declared
``@__mlir_snippets_parallel_<j>`` with its operands and results, each collective
(``all_gather``, ``all_reduce``, ``reduce_scatter``, ``all_to_all``, ``collective_permute``)
and ``replica_id``/``partition_id`` in a program a call of a declared
``@__mlir_snippets_collective_<k>``; the JIT resolves both to the worker
(``worker/lowering/parallelrun.py``), which runs the instances and computes each collective
from the operands of its process group as the specification defines it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.lowering import mlirtools
from pytest_mlir_snippets.worker.lowering.fedvalues import value_of

PARALLEL, COLLECTIVE = "__mlir_snippets_parallel_", "__mlir_snippets_collective_"
COLLECTIVES = ("all_gather", "all_reduce", "reduce_scatter", "all_to_all", "collective_permute",
               "replica_id", "partition_id")
REDUCTIONS = ("add", "multiply", "maximum", "minimum", "and", "or", "xor")
_HANDLE = re.compile(r"handle\s*=\s*(-?\d+)")


@dataclass
class Collective:
    """One collective op of a program, as the worker computes it."""

    kind: str  # all_gather, ..., replica_id, partition_id
    operands: list[TypeSpec]  # all_gather, all_reduce and all_to_all take several, one result each
    results: list[TypeSpec]
    groups: list[list[int]] = field(default_factory=list)  # replica_groups, or source_target_pairs
    channel: int = 0
    global_ids: bool = False
    dims: dict[str, int] = field(default_factory=dict)  # all_gather_dim, scatter_dimension, ...
    reduction: str = ""  # the computation's one op: add, maximum, ...


@dataclass
class Parallel:
    """One ``run_parallel``: its programs (replica-major), their signatures, its collectives."""

    callee: str
    programs: list[list[str]]
    signatures: dict[str, tuple[list[TypeSpec], list[TypeSpec]]]
    collectives: dict[str, Collective]


def _spec(value_type: Any, ir: Any) -> TypeSpec:
    return mlirtools.type_spec(ir.ShapedType(value_type))


def _call_instead(module: Any, ir: Any, op: Any, name: str) -> None:
    """``op`` replaced by a call of a declared ``@name`` with its operands and results."""
    operands, results = list(op.operands), [r.type for r in op.results]
    mlirtools.declare_external(module, ir, name, [v.type for v in operands], results)
    with ir.InsertionPoint(op), op.location:
        call = ir.Operation.create("func.call", results=results, operands=operands,
                                   attributes={"callee": ir.Attribute.parse(f"@{name}")})
    for old, new in zip(op.results, call.results):
        old.replace_all_uses_with(new)
    op.erase()


def _collective(op: Any, ir: Any) -> Collective:
    kind = op.name.split(".", 1)[1]
    where = f"stablehlo.{kind} (line {mlirtools.location_of(str(op.location))[0]})"
    if len(op.results) != max(1, len(op.operands)):
        raise SnippetFailure(Kind.UNSUPPORTED, f"{where} with {len(op.operands)} operand(s) and "
                             f"{len(op.results)} result(s)")
    attrs = op.attributes
    found = Collective(kind, [_spec(v.type, ir) for v in op.operands], [_spec(v.type, ir) for v in op.results])
    for name in ("replica_groups", "source_target_pairs"):
        if name in attrs:
            found.groups = [[int(i) for i in row if i >= 0] for row in value_of(attrs[name], ir).tolist()]
    if "channel_handle" in attrs:
        found.channel = int(_HANDLE.search(str(attrs["channel_handle"])).group(1))  # type: ignore[union-attr]
    found.global_ids = "use_global_device_ids" in attrs
    for name in ("all_gather_dim", "scatter_dimension", "split_dimension", "concat_dimension", "split_count"):
        if name in attrs:
            found.dims[name] = int(ir.IntegerAttr(attrs[name]).value)
    if kind in ("all_reduce", "reduce_scatter"):
        body = [o.name for o in op.regions[0].blocks[0].operations]
        if len(body) != 2 or body[0].split(".", 1)[1] not in REDUCTIONS:
            raise SnippetFailure(Kind.UNSUPPORTED, f"{where}: a computation other than one of "
                                 f"{', '.join(REDUCTIONS)} ({', '.join(body)})")
        found.reduction = body[0].split(".", 1)[1]
    return found


def rewrite(module: Any, ir: Any) -> list[Parallel]:
    """Every ``run_parallel`` and the collectives of its programs as calls (the module's
    docstring); what the worker needs to run them. Nothing to do: []."""
    runs = mlirtools.ops_where(module, ir, lambda op: op.name == "interpreter.run_parallel")
    plans: list[Parallel] = []
    collectives: dict[str, Collective] = {}
    done: set[str] = set()
    for j, op in enumerate(runs):
        rows = ir.ArrayAttr(op.attributes["programs"])
        grid = [[ir.FlatSymbolRefAttr(p).value for p in ir.ArrayAttr(row)] for row in rows]
        signatures = {}
        for name in {p for row in grid for p in row}:
            func = mlirtools.find_function(module, name)
            func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            signatures[name] = mlirtools.signature(func, ir.ShapedType)
            if name in done:
                continue
            done.add(name)
            for inner in mlirtools.ops_where(func, ir, lambda o: o.name in {f"stablehlo.{c}" for c in COLLECTIVES}):
                key = f"{COLLECTIVE}{len(collectives)}"
                collectives[key] = _collective(inner, ir)
                _call_instead(module, ir, inner, key)
        plans.append(Parallel(f"{PARALLEL}{j}", grid, signatures, {}))
        _call_instead(module, ir, op, f"{PARALLEL}{j}")
    for plan in plans:
        plan.collectives = collectives
    return plans


def numpy_reduction(name: str) -> Any:
    """The elementwise numpy function of a reduction's one op."""
    return {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
            "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[name]
