"""``interpreter.run_parallel`` at run time (``worker/lowering/parallel.py`` rewrote it): the
worker's side of the calls the JIT resolves to it.

``@__mlir_snippets_parallel_<j>`` gets the programs' operands (replica-major, each program's
in order), calls each instance's compiled function in a thread of its own with its replica
and partition, and hands back their results in the same order. Each collective the
instances reach (``@__mlir_snippets_collective_<k>``) waits until every instance has given
its operand, then computes the instance's result from its process group's operands as the
StableHLO specification defines the op (``cross_replica``, ``cross_partition``,
``cross_replica_and_partition``, ``flattened_ids`` process groups, from ``channel_id`` and
``use_global_device_ids``). Instances that do not all reach the same collectives, or a
group this does not compute, fail the run with a message (``failure``), not a hang.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.worker.core import Kept
from pytest_mlir_snippets.worker.lowering import jit
from pytest_mlir_snippets.worker.lowering.parallel import Collective, Parallel, numpy_reduction

WAIT_S = 60.0  # how long an instance waits at a collective for the others
_LIBC = ctypes.CDLL(None)
_LIBC.malloc.restype, _LIBC.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]


def _fill(desc: Any, value: np.ndarray) -> None:
    """A result descriptor the JIT's code reads: ``value`` in a buffer of its own (malloc's:
    the code's deallocation may free it)."""
    data = np.array(value, order="C")  # ascontiguousarray would make a 0-d value 1-d
    pointer = _LIBC.malloc(max(1, data.nbytes))
    ctypes.memmove(pointer, data.ctypes.data, data.nbytes)
    desc.allocated = pointer
    desc.aligned = ctypes.cast(pointer, type(desc.aligned)) if not isinstance(desc.aligned, int) else pointer
    desc.offset = 0
    strides = [int(s) // max(1, data.itemsize) for s in data.strides]
    for i, (size, stride) in enumerate(zip(data.shape, strides)):
        desc.shape[i], desc.strides[i] = size, stride


def _zeros(spec: TypeSpec) -> np.ndarray:
    return np.zeros(tuple(d or 0 for d in spec.shape), spec.dtype)


def _results_type(specs: list[TypeSpec]) -> Any:
    fields = [(f"r{i}", jit.descriptor_type(s)) for i, s in enumerate(specs)]
    return type("Results", (ctypes.Structure,), {"_fields_": fields})


def _members(col: Collective, ids: tuple[int, int], replicas: int, partitions: int) -> list[tuple[int, int]]:
    """The process group of the instance ``ids`` (replica, partition), in group order."""
    groups, (replica, partition) = col.groups, ids
    cross_partition = col.kind == "all_to_all" and col.channel > 0
    if cross_partition:
        found = [[(replica, p) for p in g] for g in groups]
    elif col.channel <= 0:  # cross_replica
        found = [[(r, partition) for r in g] for g in groups]
    elif not col.global_ids:  # cross_replica_and_partition
        found = [[(r, p) for p in range(partitions) for r in g] for g in groups]
    else:  # flattened_ids
        found = [[(i // partitions, i % partitions) for i in g] for g in groups]
    group = next((g for g in found if ids in g), None)
    if group is None:
        raise ValueError(f"instance {ids} is in no process group of {col.groups}")
    return group


def compute(col: Collective, ids: tuple[int, int], given: dict[tuple[int, int], list[np.ndarray]],
            replicas: int, partitions: int) -> list[np.ndarray]:
    """What ``col`` gives the instance ``ids`` from the operands every instance gave."""
    if col.kind in ("replica_id", "partition_id"):
        return [np.array(ids[0] if col.kind == "replica_id" else ids[1], dtype=col.results[0].dtype)]
    return [_one(col, i, ids, {k: v[i] for k, v in given.items()}, replicas, partitions).astype(spec.dtype)
            for i, spec in enumerate(col.results)]


def _one(col: Collective, i: int, ids: tuple[int, int], given: dict[tuple[int, int], np.ndarray],
         replicas: int, partitions: int) -> np.ndarray:
    """Result ``i`` of ``col`` at the instance ``ids``, from operand ``i`` of every instance."""
    if col.kind == "collective_permute":
        pairs = [((s, ids[1]), (t, ids[1])) if col.channel <= 0 else ((ids[0], s), (ids[0], t))
                 for s, t in col.groups]
        source = next((s for s, t in pairs if t == ids), None)
        return given[source] if source is not None else _zeros(col.results[i])
    members = _members(col, ids, replicas, partitions)
    values = [given[m] for m in members]
    if col.kind == "all_gather":
        return np.concatenate(values, axis=col.dims["all_gather_dim"])
    if col.kind == "all_to_all":
        split, at = col.dims["split_dimension"], members.index(ids)
        parts = [np.split(v, col.dims["split_count"], axis=split)[at] for v in values]
        return np.concatenate(parts, axis=col.dims["concat_dimension"])
    reduced = functools.reduce(numpy_reduction(col.reduction), values)
    if col.kind == "all_reduce":
        return np.asarray(reduced)
    return np.split(reduced, len(members), axis=col.dims["scatter_dimension"])[members.index(ids)]


class Runner:
    """The callbacks of one compiled module's ``run_parallel`` calls and collectives."""

    def __init__(self, plans: list[Parallel]) -> None:
        self.plans = plans
        self.failure = ""
        self.local = threading.local()
        self.lock = threading.Lock()
        self.given: dict[tuple[str, int], dict[tuple[int, int], list[np.ndarray]]] = {}
        self.barrier = threading.Barrier(1)
        self.grid = (1, 1)
        self._keep: list[Any] = []

    def attach(self, engine: Any) -> None:
        self.engine = engine
        for plan in self.plans:
            names = [name for row in plan.programs for name in row]
            ins = [s for n in names for s in plan.signatures[n][0]]
            outs = [s for n in names for s in plan.signatures[n][1]]
            self._register(plan.callee, ins, outs, functools.partial(self._parallel, plan, ins, outs))
        for key, col in self.plans[0].collectives.items() if self.plans else ():
            self._register(key, col.operands, col.results, functools.partial(self._collective, key, col))

    def _register(self, name: str, ins: list[TypeSpec], outs: list[TypeSpec], body: Any) -> None:
        result = ctypes.POINTER(jit.descriptor_type(outs[0]) if len(outs) == 1 else _results_type(outs))
        params = ([result] if outs else []) + [ctypes.POINTER(jit.descriptor_type(s)) for s in ins]
        callback = ctypes.CFUNCTYPE(None, *params)(body)
        self._keep.append(callback)
        self.engine.register_runtime(name, callback)

    def _parallel(self, plan: Parallel, ins: list[TypeSpec], outs: list[TypeSpec], *pointers: Any) -> None:
        result, args = (pointers[0], pointers[1:]) if outs else (None, pointers)
        values = iter([jit.read_memref(p.contents, s) for p, s in zip(args, ins)])
        calls = []
        for r, row in enumerate(plan.programs):
            for p, name in enumerate(row):
                specs, results = plan.signatures[name]
                calls.append(((r, p), jit.Call(self.engine, name, specs, results, [next(values) for _ in specs])))
        self.grid = (len(plan.programs), len(plan.programs[0]))
        self.barrier = threading.Barrier(len(calls), timeout=WAIT_S)
        threads = [threading.Thread(target=self._instance, args=(ids, call)) for ids, call in calls]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        produced = [v for _, call in calls for v in call.outputs()] if not self.failure else \
            [_zeros(s) for s in outs]
        if result is None:
            return
        _fill_all(result, produced)

    def _instance(self, ids: tuple[int, int], call: jit.Call) -> None:
        self.local.ids, self.local.count = ids, {}
        try:
            call.run()
        except Exception as error:  # the instance's own failure, said after the run
            self.failure = self.failure or f"instance {ids}: {error}"

    def _collective(self, key: str, col: Collective, *pointers: Any) -> None:
        result, args = pointers[0], pointers[1:]
        ids = self.local.ids
        round_ = self.local.count[key] = self.local.count.get(key, 0) + 1
        with self.lock:
            given = self.given.setdefault((key, round_), {})
            given[ids] = [jit.read_memref(a.contents, s) for a, s in zip(args, col.operands)]
        value = [_zeros(s) for s in col.results]
        try:
            if col.kind not in ("replica_id", "partition_id"):
                self.barrier.wait()
            value = compute(col, ids, given, *self.grid)
        except threading.BrokenBarrierError:
            self.failure = self.failure or f"stablehlo.{col.kind}: the instances did not all reach it"
        except (ValueError, KeyError, IndexError) as error:
            self.failure = self.failure or f"stablehlo.{col.kind} at instance {ids}: {error}"
            self.barrier.abort()
        _fill_all(result, value)


def _fill_all(result: Any, values: list[np.ndarray]) -> None:
    """The results of a call the JIT made: one descriptor, or a struct of them."""
    slots = [result.contents] if len(values) == 1 else [getattr(result.contents, f"r{i}") for i in range(len(values))]
    for slot, value in zip(slots, values):
        _fill(slot, value)


def attach(engine: Any, kept: Kept) -> None:
    """Callbacks for ``kept.parallel`` (``parallel.rewrite``'s plans), before the first lookup."""
    if kept.parallel and kept.parallel_runs is None:
        runner = Runner(kept.parallel)
        runner.attach(engine)
        kept.parallel_runs = runner


def failure(kept: Kept) -> str:
    """What went wrong in the last run's instances, and forget it; "" when nothing did."""
    runner: Runner | None = kept.parallel_runs
    if runner is None:
        return ""
    said, runner.failure = runner.failure, ""
    runner.given.clear()
    return str(said)
