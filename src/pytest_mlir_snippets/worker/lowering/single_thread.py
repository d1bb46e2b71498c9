"""Snippets without a parallel loop on the cuda target: their work as one kernel of one
thread.

The cuda pipeline maps parallel loops (``scf.parallel`` from linalg) to blocks and
threads. A snippet that has none (``scf.for`` loops only, a reduction to a 0-d result,
scalar arithmetic on 0-d tensors) would keep all its work in host code, and no
``gpu.binary`` would be made. Here, after parallel loops were mapped, such a function's
work is moved into a ``gpu.launch`` of one block of one thread, which kernel outlining
then turns into a kernel like any other: every snippet that compiles on cpu compiles
(and would run) on the GPU. The same holds for work left between a function's launches
(a sequential loop after a parallel copy): each such run becomes its own launch, in
order.

Allocations, constants' host copies (``HOST_COPY``), globals and ``memref.dim`` stay
before the launch, frees and the return after it. A function whose work gives a value
that host code uses afterwards (a scalar result) is left as it is.
"""

from __future__ import annotations

from typing import Any

# ops that stay in host code around the launch: allocation, globals, constants, sizes
_BEFORE = frozenset({"memref.alloc", "memref.alloca", "memref.get_global", "arith.constant", "memref.dim"})
_AFTER = frozenset({"memref.dealloc", "func.return"})


def single_thread_launches(module: Any, host_copy: str) -> list[str]:
    """Wrap each run of work the mapping left in a host function (consecutive ops between
    its launches: ``scf.for`` loops, loads and stores, ...) in a 1x1x1 ``gpu.launch``;
    return the names of the functions so changed. ``host_copy``: the attribute of copies
    the host makes (a constant into a buffer kernels can read), which stay in host code."""
    changed = []
    for func in module.body.operations:
        if func.operation.name != "func.func" or len(func.regions[0].blocks) != 1:
            continue  # a declaration, or control flow between blocks: left as it is
        block = func.regions[0].blocks[0]
        wrapped = False
        for run in _runs_of_work(list(block.operations), host_copy):
            kept = _without_host_arithmetic(run)
            if any(_worth_a_kernel(op) for op in kept) and _self_contained(kept):
                _launch_around(run, kept, host_copy)
                wrapped = True
        if wrapped:
            from mlir import ir

            changed.append(ir.StringAttr(func.attributes["sym_name"]).value)
    return changed


def _runs_of_work(ops: list[Any], host_copy: str) -> list[list[Any]]:
    """Maximal runs of ops that are neither launches nor ops that stay in host code;
    allocations and constants inside a run do not end it (they are hoisted)."""
    runs: list[list[Any]] = [[]]
    for op in ops:
        name = op.operation.name
        if name == "gpu.launch" or name in _AFTER:
            runs.append([])
        elif not _stays(op, host_copy):
            runs[-1].append(op)
    return [run for run in runs if run]


def _worth_a_kernel(op: Any) -> bool:
    """Loops, control flow and memory accesses; not index or scalar arithmetic alone."""
    return not op.operation.name.startswith(("arith.", "index.", "math.", "affine.apply"))


def _without_host_arithmetic(run: list[Any]) -> list[Any]:
    """The run less the arithmetic that host code needs too (a later launch's sizes):
    such ops stay on the host, before the launch, and the kernel takes their values."""
    kept = list(run)
    while True:
        inside = {op.operation for op in kept}
        outside = [op for op in kept if not _worth_a_kernel(op) and _used_outside(op, inside)]
        if not outside:
            return kept
        kept = [op for op in kept if op not in outside]


def _launch_around(run: list[Any], kept: list[Any], host_copy: str) -> None:
    from mlir import ir
    from mlir.dialects import gpu

    first = run[0].operation
    ops = list(first.block.operations)
    start, end = ops.index(run[0]), ops.index(run[-1])
    staying = {op.operation for op in run} - {op.operation for op in kept}
    for op in ops[start:end + 1]:  # allocations, constants, host arithmetic: before the launch
        if op.operation.name in _BEFORE or host_copy in op.operation.attributes or op.operation in staying:
            op.operation.move_before(first)
    first = kept[0].operation
    with ir.InsertionPoint(first), first.location:
        launch = gpu.LaunchOp((1, 1, 1), (1, 1, 1))
        with ir.InsertionPoint(launch.regions[0].blocks[0]):
            terminator = gpu.TerminatorOp()
    for op in kept:
        op.operation.move_before(terminator.operation)


def _stays(op: Any, host_copy: str) -> bool:
    name = op.operation.name
    return name in _BEFORE or name in _AFTER or host_copy in op.operation.attributes


def _self_contained(work: list[Any]) -> bool:
    """Whether every result of the work is used only by the work (or inside it)."""
    moved = {op.operation for op in work}
    return not any(_used_outside(op, moved) for op in work)


def _used_outside(op: Any, inside: set[Any]) -> bool:
    """Whether a result of ``op`` is used by an op that is not in ``inside`` (nor nested in one)."""
    for result in op.operation.results:
        for use in result.uses:
            owner = use.owner.operation  # climb to the op directly in the function's body
            while owner.parent is not None and owner.parent.operation.name != "func.func":
                owner = owner.parent.operation
            if owner not in inside:
                return True
    return False
