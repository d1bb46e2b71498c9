"""The PyTorch reference of an optimization run (``reference.py``, as written by
``mlir-snippets import-torch``), timed eager and through ``torch.compile``.

Both run with one thread, like the code the ExecutionEngine compiles, so that the
speedups compare like with like.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from pytest_mlir_snippets.protocol import Kind, Options, Response
from pytest_mlir_snippets.worker import benchstats


def benchmark_reference(path: str, options: Options) -> Response:
    try:
        import torch
    except ImportError as error:
        return Response(Kind.UNSUPPORTED, f"PyTorch is not installed ({error})")
    spec = importlib.util.spec_from_file_location("mlir_snippets_reference", path)
    if spec is None or spec.loader is None:
        return Response(Kind.EXECUTE_ERROR, f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        model, inputs = module.load()
    except Exception as error:
        return Response(Kind.EXECUTE_ERROR, f"{path}: load() failed: {type(error).__name__}: {error}")
    torch.set_num_threads(1)
    metrics: dict[str, float] = {}
    info: dict[str, Any] = {"threads": 1}
    with torch.no_grad():
        eager = benchstats.measure(lambda: model(*inputs), options)
        metrics |= {f"eager_{k}": v for k, v in eager.items()}
        try:
            compiled: Any = torch.compile(model)
            compiled(*inputs)  # compiles
            timed = benchstats.measure(lambda: compiled(*inputs), options)
            metrics |= {f"compile_{k}": v for k, v in timed.items()}
        except Exception as error:  # no C++ compiler, an unsupported op: eager still counts
            info["compile_error"] = f"torch.compile failed: {type(error).__name__}: {str(error).splitlines()[0]}"
    return Response(Kind.PASS, metrics=metrics, info=info)
