"""The PyTorch reference of an optimization run (``reference.py``, as written by
``mlir-snippets import-torch``), compiled by ``torch.compile`` in ``pytorch[compile]`` and
timed eager and compiled in ``pytorch[benchmark]``.

The worker keeps what it compiled (per reference file and its modification time), so the
benchmark reuses that one compiled function and compiles nothing when the compile item
ran in the same worker (it compiles first otherwise, before timing). Both run with one
thread, like the code the ExecutionEngine compiles, so that the speedups compare like
with like.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import time
from typing import Any

from pytest_mlir_snippets.protocol import Kind, Options, PytorchFacts, Response
from pytest_mlir_snippets.worker import benchstats
from pytest_mlir_snippets.worker.core import SnippetFailure


@dataclasses.dataclass
class Prepared:
    model: Any
    inputs: Any
    compiled: Any  # torch.compile's function, called once (compiled), or None
    compile_error: str  # why there is none
    compile_seconds: float


_prepared: dict[tuple[str, float], Prepared] = {}


def compile_reference(path: str, options: Options) -> Response:
    prepared, _ = _prepare(path)
    return Response(Kind.PASS, metrics={"compile_s": prepared.compile_seconds},
                    pytorch=PytorchFacts(compile_error=prepared.compile_error))


def benchmark_reference(path: str, options: Options) -> Response:
    import torch

    prepared, reused = _prepare(path)
    model, inputs, compiled = prepared.model, prepared.inputs, prepared.compiled
    metrics: dict[str, float] = {}
    facts = PytorchFacts(torch_compile="reused" if reused else "compiled before timing")
    with torch.no_grad():
        eager = benchstats.measure(lambda: model(*inputs), options)
        metrics |= {f"eager_{k}": v for k, v in eager.items()}
        if compiled is not None:
            timed = benchstats.measure(lambda: compiled(*inputs), options)
            metrics |= {f"compile_{k}": v for k, v in timed.items()}
        else:  # no C++ compiler, an unsupported op: eager still counts
            facts.compile_error = prepared.compile_error
    return Response(Kind.PASS, metrics=metrics, pytorch=facts)


def _prepare(path: str) -> tuple[Prepared, bool]:
    """The reference loaded and compiled, once per file version in this worker; whether it
    was so already."""
    try:
        import torch
    except ImportError as error:
        raise SnippetFailure(Kind.UNSUPPORTED, f"PyTorch is not installed ({error})") from None
    key = (path, os.stat(path).st_mtime)
    if key in _prepared:
        return _prepared[key], True
    spec = importlib.util.spec_from_file_location("mlir_snippets_reference", path)
    if spec is None or spec.loader is None:
        raise SnippetFailure(Kind.EXECUTE_ERROR, f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        model, inputs = module.load()
    except Exception as error:
        raise SnippetFailure(Kind.EXECUTE_ERROR, f"{path}: load() failed: {type(error).__name__}: {error}") from None
    torch.set_num_threads(1)
    compiled: Any = None
    compile_error, start = "", time.perf_counter()
    with torch.no_grad():
        try:
            compiled = torch.compile(model)
            compiled(*inputs)  # compiles
        except Exception as error:
            compiled = None
            compile_error = f"torch.compile failed: {type(error).__name__}: {str(error).splitlines()[0]}"
    _prepared[key] = Prepared(model, inputs, compiled, compile_error, time.perf_counter() - start)
    return _prepared[key], False
