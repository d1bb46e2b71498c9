"""Checks that run where they stand: in a region (``scf.if``, ``stablehlo.while``,
``tosa.cond_if``, a loop body) or in a callee.

The check dialect's semantics (StableHLO's interpreter, IREE's check module): each check
that executes compares its operands then; one on a path not taken compares nothing, one in
a loop body compares on every iteration. Such a check cannot be a result of the function,
so it becomes a call, where it stood, to a private function the module declares
(``@__mlir_snippets_check_<i>``, ``llvm.emit_c_interface``) with the two values; one-shot
bufferization gives the declaration memref arguments, and the ExecutionEngine resolves its
C interface (``_mlir_ciface_...``) to a Python callback (``register_runtime``) that copies
the two values of each execution. ``golden.checks.judge`` judges them all after the run.
"""

from __future__ import annotations

import ctypes
import dataclasses
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.checks import Check
from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.worker.core import Kept
from pytest_mlir_snippets.worker.lowering import jit, mlirtools

PREFIX = "__mlir_snippets_check_"


def call_instead(module: Any, ir: Any, op: Any, check: Check, values: list[Any]) -> Check:
    """Put a call to a declared ``@__mlir_snippets_check_<index>(values)`` before ``op``;
    ``check`` with that callee and the values' type."""
    callee = f"{PREFIX}{check.index}"
    mlirtools.declare_external(module, ir, callee, [v.type for v in values], [])
    with ir.InsertionPoint(op), op.location:
        ir.Operation.create("func.call", operands=values, attributes={"callee": ir.Attribute.parse(f"@{callee}")})
    kind = values[0].type
    if str(kind).startswith("tensor<"):
        shaped = ir.RankedTensorType(kind)
        spec = TypeSpec("tensor", str(shaped.element_type),
                        tuple(None if shaped.is_dynamic_dim(i) else d for i, d in enumerate(shaped.shape)))
    else:
        spec = TypeSpec("scalar", str(kind))
    return dataclasses.replace(check, callee=callee, spec=spec)


class Recorder:
    """The values each called check passed, as ``(check index, actual, expected)`` in the
    order they ran; ``recording`` off (a benchmark's calls): nothing kept."""

    def __init__(self, checks: list[Check]) -> None:
        self.checks = [c for c in checks if c.callee and c.spec is not None]
        self.executions: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.recording = True
        self._callbacks: list[Any] = []  # they must outlive the engine's code

    def attach(self, engine: Any) -> None:
        for check in self.checks:
            spec = check.spec
            assert spec is not None
            if spec.kind == "scalar":
                slot = jit.scalar_ctype(spec)
            else:
                slot = ctypes.POINTER(jit.descriptor_type(spec))

            def record(actual: Any, expected: Any, index: int = check.index, spec: TypeSpec = spec) -> None:
                if self.recording:
                    self.executions.append((index, _read(actual, spec), _read(expected, spec)))

            callback = ctypes.CFUNCTYPE(None, slot, slot)(record)
            self._callbacks.append(callback)
            engine.register_runtime(check.callee, callback)


def _read(value: Any, spec: TypeSpec) -> np.ndarray:
    if spec.kind == "scalar":
        return jit.read_scalar(value, spec)
    return jit.read_memref(value.contents, spec)


def attach(engine: Any, kept: Kept) -> None:
    """Callbacks for the called checks of ``kept.checks``, before the engine's first lookup."""
    checks = [c for c in kept.checks if c.callee]
    if checks and kept.check_calls is None:
        recorder = Recorder(checks)
        recorder.attach(engine)
        kept.check_calls = recorder


def executions(kept: Kept) -> list[tuple[int, np.ndarray, np.ndarray]]:
    recorder: Recorder | None = kept.check_calls
    return recorder.executions if recorder is not None else []


def start(kept: Kept, recording: bool = True) -> None:
    """Before a run: forget the previous run's executions; ``recording``: keep this run's."""
    recorder: Recorder | None = kept.check_calls
    if recorder is not None:
        recorder.executions.clear()
        recorder.recording = recording
