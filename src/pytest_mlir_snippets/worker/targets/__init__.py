"""Targets. Each module defines one ``Backend``; ``TARGETS`` names them.

Backends are imported only inside the sandbox worker, so the pytest process
never loads MLIR, torch-mlir or a device runtime.
"""

from __future__ import annotations

import importlib

from pytest_mlir_snippets.registry import TARGETS as REGISTRY
from pytest_mlir_snippets.worker.targets.base import Backend, Compiled, SnippetFailure

# target name -> "module:Class" relative to this package, from the registry (registry.py)
TARGETS: dict[str, str] = {name: target.backend for name, target in REGISTRY.items()}


def load_backend(target: str) -> Backend:
    """Instantiate the backend of ``target`` (in the worker)."""
    module_name, class_name = TARGETS[target].split(":")
    module = importlib.import_module(f"{__name__}.{module_name}")
    backend: Backend = getattr(module, class_name)()
    return backend


__all__ = ["TARGETS", "Backend", "Compiled", "SnippetFailure", "load_backend"]
