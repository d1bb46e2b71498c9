"""An ONNX backend (``onnx.backend.base.Backend``) on the plugin's targets, as
``onnxruntime.backend`` is one: ``prepare``, ``run_model``, ``run_node``, ``supports_device``.

    from pytest_mlir_snippets import onnx_backend
    rep = onnx_backend.prepare(model, "CPU", target="cpu")
    outputs = rep.run([x])  # numpy arrays, in the model's output order

The model is imported by torch-mlir's ONNX importer (``importer.py``), then compiled and
run in a sandbox worker of the target, with the ONNX expansions the plugin has
(``worker/lowering/onnx/``): a compiler crash or hang is a ``BackendError`` of that model
alone, and the next model gets a fresh worker. Small integer inputs (axes, shapes, pads)
are baked in as constants where the model does not compile with them as arguments, as
for recorded data (``golden/recorded.specializable``). No pytest here.

A run whose outputs the compiler computed at compile time (no output depends on an input
given at run time: ``Shape``, ``Constant``, a reduction over an empty set) is no test of
the code: ``run`` raises ``unittest.SkipTest``, the harness's skip, with the reason. Each
run's count of output elements is kept in ``compared`` (``node_tests`` says when it is 0).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import os
import unittest
from collections.abc import Sequence
from typing import Any

import numpy as np
from onnx.backend.base import Backend, BackendRep

from pytest_mlir_snippets.client import Sandbox
from pytest_mlir_snippets.onnx_backend.importer import Imported, ImportFailure, import_model
from pytest_mlir_snippets.onnx_backend.smalltypes import carried_inputs, declared_outputs
from pytest_mlir_snippets.protocol import Computed, Kind, Options, Response
from pytest_mlir_snippets.registry import TARGETS

# the target of a prepare without one (the ``onnx-tests`` command sets it for its pytest run), and what
# ``node_tests`` runs: the cases a regular expression finds (``-k``), the unmatchable ones too ("1": ``--all``)
TARGET_VARIABLE = "MLIR_SNIPPETS_ONNX_TARGET"
INCLUDE_VARIABLE, ALL_VARIABLE = "MLIR_SNIPPETS_ONNX_INCLUDE", "MLIR_SNIPPETS_ONNX_ALL"
TIMEOUT = 60.0  # seconds per compile-and-run, as a snippet item's --mlir-timeout
_sandboxes: dict[str, Sandbox] = {}  # target: its worker, which opens its device after every start
FOLDED = ("computed at compile time: no output depends on the inputs given at run time (the constant folder "
          "was checked, not code generation)")
compared: list[int] = []  # the output elements of each run since a caller emptied it (``node_tests``)


class BackendError(RuntimeError):
    """The model did not import, compile or run; the message says which and why, in its first line."""


def default_target() -> str:
    return os.environ.get(TARGET_VARIABLE, "cpu")


def device_of(target: str) -> str:
    """The ONNX device ``target`` runs on, as it declares it (``registry.py``); CPU for a name
    the registry does not know."""
    return TARGETS[target].onnx_device if target in TARGETS else "CPU"


def _sandbox(target: str) -> Sandbox:
    """The target's worker (it opens its device before a run, again after a restart)."""
    if target not in _sandboxes:
        _sandboxes[target] = Sandbox(target)
    return _sandboxes[target]


def close() -> None:
    """Stop the workers this process started."""
    for sandbox in _sandboxes.values():
        sandbox.close()
    _sandboxes.clear()


def _read_back(value: Any, dtype: np.dtype | None) -> np.ndarray:
    """A result in the model's declared type: signless integers read with the model's
    signedness, as ``golden.compare`` reads them."""
    array = np.asarray(value)
    if dtype is None or array.dtype == dtype:
        return array
    if array.dtype.itemsize == dtype.itemsize and {array.dtype.kind, dtype.kind} <= {"i", "u", "b"}:
        return array.view(dtype)
    return array.astype(dtype)


class OnnxBackendRep(BackendRep):
    """A prepared model: ``run(inputs)`` compiles it (once per worker) and runs it."""

    def __init__(self, imported: Imported, target: str, timeout: float) -> None:
        self.imported, self.target, self.timeout = imported, target, timeout

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        given = list(inputs.values()) if isinstance(inputs, dict) else [inputs] if isinstance(inputs, np.ndarray) \
            else list(inputs)
        for index, value in enumerate(given):
            if value is None or isinstance(value, list | tuple):  # a sequence or an optional's value
                raise BackendError(f"input {index} is a {type(value).__name__} (a sequence or optional): the "
                                   f"{self.target} target takes tensors only")
        values = [np.asarray(v) for v in given]
        values = carried_inputs(values, self.imported.small_inputs)
        answer = _sandbox(self.target).run(self.imported.text, self.imported.function, Options(target=self.target),
                                           values, specialize=True, timeout=self.timeout)
        if not answer.ok:
            raise BackendError(failure_line(answer))
        if answer.verdict is not None and answer.verdict.computed is Computed.COMPILE_TIME:
            raise unittest.SkipTest(FOLDED)
        results = answer.values or []
        types = self.imported.outputs + [None] * (len(results) - len(self.imported.outputs))
        read = [_read_back(v, t) for v, t in zip(results, types, strict=False)]
        compared.append(sum(int(np.asarray(v).size) for v in read))
        return tuple(declared_outputs(read, self.imported.small_outputs))


def failure_line(answer: Response) -> str:
    """The worker's verdict in one line: its kind, its message's first line, and for a crash
    the last line it wrote."""
    message = (answer.message or "").strip().splitlines()
    line = f"{answer.kind.value}: {message[0] if message else '(no message)'}"
    if answer.kind in (Kind.CRASH, Kind.TIMEOUT):
        tail = [s for s in (answer.stderr or "").strip().splitlines() if s.strip()]
        line += f" ({tail[-1].strip()[:200]})" if tail else ""
    return line


class OnnxBackend(Backend):
    """ONNX models on a plugin target (``target``: cpu, iree-cpu, cuda where a GPU is present)."""

    @classmethod
    def is_compatible(cls, model: Any, device: str = "CPU", **kwargs: Any) -> bool:
        return True

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", target: str | None = None,
                timeout: float = TIMEOUT, **kwargs: Any) -> OnnxBackendRep:
        target = target or default_target()
        if device_of(target) != device.split(":")[0].upper():
            raise BackendError(f"target {target} runs on {device_of(target)}, not on device {device}")
        try:
            imported = import_model(model)
        except ImportFailure as error:
            raise BackendError(str(error)) from None
        return OnnxBackendRep(imported, target, timeout)

    @classmethod
    def run_model(cls, model: Any, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: Any, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[Any, Any]] | None = None, **kwargs: Any) -> tuple[Any, ...]:
        """One node on ``inputs`` (a list, or a dict by input name): a one-node model, its
        output types from ``outputs_info`` ((numpy type, shape) per output) or ONNX's inference."""
        from onnx import helper, shape_inference

        arrays = [np.asarray(v) for v in (inputs.values() if isinstance(inputs, dict) else inputs)]
        names = [n for n in node.input if n]
        graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                        for n, a in zip(names, arrays, strict=False)]
        if outputs_info:
            graph_outputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(t)), s)
                             for n, (t, s) in zip(node.output, outputs_info, strict=False)]
        else:
            graph_outputs = [helper.make_empty_tensor_value_info(n) for n in node.output]
        graph = helper.make_graph([node], "run_node", graph_inputs, graph_outputs)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", kwargs.pop("opset", 21))])
        if not outputs_info:
            model = shape_inference.infer_shapes(model, strict_mode=True)
            del model.graph.output[:]
            model.graph.output.extend(v for v in model.graph.value_info if v.name in node.output)
        return cls.prepare(model, device, **kwargs).run(arrays)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device_of(default_target()) == device.split(":")[0].upper()


prepare = OnnxBackend.prepare
run_model = OnnxBackend.run_model
run_node = OnnxBackend.run_node
supports_device = OnnxBackend.supports_device
